//! Plain-text tables for the terminal: the `select` report.

use crate::runlog::RunLog;
use crate::select::Selection;

/// Format a number with a sensible number of digits for a table.
pub fn num(v: f64) -> String {
    if !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    if a >= 1e6 {
        format!("{v:.4e}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    }
}

/// A user-given setting (a target percentage) as typed: `1`, `0.5`, and `1e-300` rather than
/// three hundred zeros.
pub fn setting(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 || (1e-4..1e9).contains(&a) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

fn key_text(key: &[u32]) -> String {
    key.iter().map(u32::to_string).collect::<Vec<_>>().join("x")
}

/// The `select` table: SeqPoints, then projected against actual, then the target verdict.
/// What `--skip-bad` dropped: how many rows, the first few line numbers, the first reason.
/// `None` when nothing was skipped.
pub fn skipped_note(log: &RunLog) -> Option<String> {
    let skipped = &log.skipped;
    if skipped.count == 0 {
        return None;
    }
    let lines: Vec<String> = skipped.first_lines.iter().map(u64::to_string).collect();
    let more = if skipped.count > skipped.first_lines.len() as u64 {
        ", ..."
    } else {
        ""
    };
    let mut note = format!(
        "skipped {} bad row{} of {} (line{} {}{more})",
        skipped.count,
        if skipped.count == 1 { "" } else { "s" },
        log.source,
        if lines.len() == 1 { "" } else { "s" },
        lines.join(", "),
    );
    if let Some(reason) = &skipped.first_reason {
        note.push_str(&format!("; first: {reason}"));
    }
    Some(note)
}

pub fn selection_table(log: &RunLog, selection: &Selection) -> String {
    let names = log.metric_names();
    let total: u64 = selection.seqpoints.iter().map(|s| s.weight).sum();
    let mut out = String::new();
    let proxy = if selection.projection.proxy {
        " (proxy cost: errors are proxy errors)"
    } else {
        ""
    };
    out.push_str(&format!(
        "{}: {} iterations, {} SeqPoints, method {}, pick {}{proxy}\n",
        log.source,
        log.len(),
        selection.bins(),
        selection.method.name(),
        selection.pick.name()
    ));
    if let Some(note) = skipped_note(log) {
        out.push_str(&note);
        out.push('\n');
    }
    let strata = selection.seqpoints.iter().any(|s| s.stratum.is_some());
    out.push_str(&format!(
        "\n{:>4} {}{:>10} {:>12} {:>15} {:>8} {:>7}",
        "id",
        if strata {
            format!("{:>7} ", "stratum")
        } else {
            String::new()
        },
        "iteration",
        "key",
        "bin",
        "weight",
        "share%"
    ));
    for n in &names {
        out.push_str(&format!(" {n:>12}"));
    }
    out.push('\n');
    for sp in &selection.seqpoints {
        let bin = format!("{}-{}", key_text(&sp.bin_min), key_text(&sp.bin_max));
        out.push_str(&format!(
            "{:>4} {}{:>10} {:>12} {:>15} {:>8} {:>7.2}",
            sp.id,
            sp.stratum.map_or(String::new(), |s| format!("{s:>7} ")),
            sp.iteration,
            key_text(&sp.key),
            bin,
            sp.weight,
            100.0 * sp.weight as f64 / total as f64
        ));
        for v in &sp.values[0] {
            out.push_str(&format!(" {:>12}", num(*v)));
        }
        out.push('\n');
    }
    out.push_str(&format!(
        "\n{:<10} {:<14} {:>14} {:>14} {:>9} {:>31}\n",
        "config", "metric", "actual", "projected", "error%", "95% interval"
    ));
    for row in &selection.projection.totals {
        out.push_str(&format!(
            "{:<10} {:<14} {:>14} {:>14} {:>9} {:>31}\n",
            row.config.name(),
            row.metric,
            row.actual.map_or("-".into(), num),
            num(row.projected),
            row.error_pct.map_or("-".into(), |e| format!("{e:.3}")),
            format!("[{}, {}]", num(row.interval[0]), num(row.interval[1]))
        ));
    }
    for s in &selection.projection.speedups {
        out.push_str(&format!(
            "{:<10} {:<14} {:>14} {:>14} {:>9} {:>31}\n",
            "speedup",
            s.metric,
            s.actual.map_or("-".into(), |v| format!("{v:.4}")),
            format!("{:.4}", s.projected),
            s.error_pct.map_or("-".into(), |e| format!("{e:.3}")),
            format!("[{:.4}, {:.4}]", s.interval[0], s.interval[1])
        ));
    }
    out.push_str(&format!(
        "\nprofiling reduction: {:.1}x ({} iterations to profile instead of {})\n",
        selection.projection.profiling_reduction,
        selection.iterations_to_profile(),
        log.len()
    ));
    if let Some(target) = &selection.target {
        let rule = match target.rule {
            crate::select::TargetRule::Interval => "error and 95% interval",
            crate::select::TargetRule::Measured => "measured error",
        };
        if target.met {
            out.push_str(&format!(
                "target {}% met ({rule}) with K = {}\n",
                setting(target.target_pct),
                selection.bins()
            ));
        } else {
            out.push_str(&format!(
                "target {}% NOT met ({rule}): {}\n",
                setting(target.target_pct),
                target.advice.clone().unwrap_or_default()
            ));
        }
    }
    if selection.strata.len() > 1 {
        out.push_str("strata (the target applies to the whole run; each stratum's own figures):\n");
        for s in &selection.strata {
            out.push_str(&format!(
                "  {}: {} iterations, K = {}, error {:.3}%, 95% interval ±{:.3}%\n",
                s.name, s.iterations, s.k, s.worst_error_pct, s.worst_half_width_pct
            ));
        }
    }
    out
}
