//! Plain-text tables for the terminal, every one of them: the `select` report with its plan
//! and naive baselines, the `project` report, and the number formats they share.

use std::fmt;

use crate::doc::ProjectionReport;
use crate::groups::key_text;
use crate::options::{Surface, ALLOW_MISSING, BUDGET, MAX_BINS, SAMPLES};
use crate::project::Projection;
use crate::runlog::RunLog;
use crate::select::naive::Baseline;
use crate::select::plan::{PlanRule, ProfilePlan};
use crate::select::{Advice, MoreBins, Selection, TargetRule};
use crate::text::numbers::{as_typed, count};
use crate::text::shown::shown_path;

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

/// What must meet the error target, in the words every output uses.
pub fn rule_text(rule: TargetRule) -> &'static str {
    match rule {
        TargetRule::Interval => "error and 95% interval",
        TargetRule::Measured => "measured error",
    }
}

/// The advice for a missed target, in the words every output uses.
impl fmt::Display for Advice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let best = &self.best;
        write!(
            f,
            "no K up to {}{} meets {}%; best K = {} (error {:.2}%, 95% interval {})",
            self.max_bins,
            if self.per_stratum { " per stratum" } else { "" },
            as_typed(self.target_pct),
            best.k,
            best.worst_error_pct,
            plus_minus(best.worst_half_width_pct, 2)
        )?;
        if let Some(samples) = self.samples {
            write!(
                f,
                "; {samples} profiled iterations per SeqPoint meet it at K = {} ({})",
                best.k,
                SAMPLES.typed(Surface::CommandLine, &samples.to_string())
            )?;
        }
        match self.bins {
            MoreBins::Unneeded => Ok(()),
            MoreBins::NoneUpTo(k) => write!(f, "; no K up to {k} meets it either"),
            MoreBins::Allow(k) => write!(
                f,
                "{} K = {k} meets it ({})",
                if self.samples.is_some() { "; or" } else { ";" },
                MAX_BINS.typed(Surface::CommandLine, &k.to_string())
            ),
            MoreBins::CannotHelp(unique_keys) => {
                write!(
                f,
                ", every {} already has its own bin (K = {unique_keys}), so more bins cannot help",
                if unique_keys == 1 { "key" } else { "unique key" }
            )
            }
        }
    }
}

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
        shown_path(&log.source),
        if lines.len() == 1 { "" } else { "s" },
        lines.join(", "),
    );
    if let Some(reason) = &skipped.first_reason {
        note.push_str(&format!("; first: {reason}"));
    }
    Some(note)
}

/// When the log has no iteration column but one that looks like it (`global_step`): that
/// iterations are row numbers, and how to use the column instead. `None` otherwise.
pub fn iteration_note(log: &RunLog) -> Option<String> {
    let first = log.iteration_like.first()?;
    let names: Vec<String> = log
        .iteration_like
        .iter()
        .map(|n| format!("'{}'", shown_path(n)))
        .collect();
    Some(format!(
        "{}: no iteration column, so iterations are numbered by row (0, 1, 2, ...); {} {} \
         like one but is not read as it: rename it to 'iteration' (or 'step') to use it",
        shown_path(&log.source),
        names.join(", "),
        if names.len() == 1 { "looks" } else { "look" },
    ))
    .filter(|_| !first.is_empty())
}

/// The `select` table: SeqPoints, then projected against actual, then the target verdict.
pub fn selection_table(log: &RunLog, selection: &Selection) -> String {
    selection_table_planned(log, selection, None)
}

/// The one cost figure: "profile 64 of 450 iterations (7.0x fewer), 14% of the run's time",
/// of the iterations the selection stands for (the run less `--exclude`'s).
pub fn cost_line(
    log: &RunLog,
    selection: &Selection,
    projection: &Projection,
    iterations: u64,
) -> String {
    let run = selection.kept_iterations();
    let metric = log.metric_names().first().cloned().unwrap_or_default();
    let what = if projection.proxy {
        format!("the run's proxy cost ({metric})")
    } else if metric.to_ascii_lowercase().contains("time") {
        "the run's time".to_string()
    } else {
        format!("the run's {metric}")
    };
    // Counts grouped by thousands (`profile 51 of 1,000,000 iterations (19,607.8x fewer)`).
    let fewer = format!("{:.1}", run as f64 / iterations.max(1) as f64);
    let fewer = match fewer.split_once('.') {
        Some((whole, tenths)) => format!("{}.{tenths}", count(whole.parse().unwrap_or(0))),
        None => fewer,
    };
    format!(
        "profile {} of {} iterations ({fewer}x fewer), {}% of {what}",
        count(iterations),
        count(run),
        share_text(100.0 * projection.profiled_share())
    )
}

fn share_text(pct: f64) -> String {
    if pct > 0.0 && pct < 0.005 {
        // Never "0.00%" for a share that is not zero (one iteration of millions).
        "<0.01".into()
    } else if pct >= 10.0 {
        format!("{pct:.0}")
    } else if pct >= 1.0 {
        format!("{pct:.1}")
    } else {
        format!("{pct:.2}")
    }
}

/// `selection_table` with the plan that says what is to be profiled: its projection, its
/// cost, and (for a target) the verdict on it.
pub fn selection_table_planned(
    log: &RunLog,
    selection: &Selection,
    plan: Option<&ProfilePlan>,
) -> String {
    let names = log.metric_names();
    let total: u64 = selection.seqpoints.iter().map(|s| s.weight).sum();
    let mut out = String::new();
    let proxy = if selection.projection.proxy {
        " (proxy cost: errors are proxy errors)"
    } else {
        ""
    };
    // Uniform bins (and k-means) can leave requested bins empty: say so.
    let requested = match selection.options.bins {
        crate::select::BinCount::Fixed(k)
            if selection.strata.len() <= 1 && k != selection.bins() =>
        {
            format!(" ({k} requested, {} non-empty)", selection.bins())
        }
        _ => String::new(),
    };
    let gap = selection.binning_gap.map_or(String::new(), |g| {
        format!(
            " (too many distinct keys for the exact DP: bins within {:.2}% of the optimum)",
            100.0 * g
        )
    });
    // With --exclude, the iterations kept first, as the JSON's `input.iterations` counts them.
    let kept = selection.kept_iterations();
    let iterations = if kept == log.len() as u64 {
        format!("{kept} iterations")
    } else {
        format!(
            "{kept} of {} iterations ({} excluded)",
            log.len(),
            log.len() as u64 - kept
        )
    };
    out.push_str(&format!(
        "{}: {iterations}, {} SeqPoints{requested}, method {}{gap}, pick {}{proxy}\n",
        shown_path(&log.source),
        selection.bins(),
        selection.method.name(),
        selection.pick.name()
    ));
    if let Some(note) = skipped_note(log) {
        out.push_str(&note);
        out.push('\n');
    }
    let exclude = &selection.options.exclude;
    if !exclude.is_empty() {
        out.push_str(&format!(
            "excluded: iterations {} ({} iterations, in no total here and never picked; \
             `project` counts them at their lengths' bins)\n",
            exclude.texts().join(", "),
            exclude.excluded_rows(log)
        ));
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
    let (projection, iterations) = match plan {
        Some(plan) => (&plan.projection, plan.iterations()),
        None => (&selection.projection, selection.iterations_to_profile()),
    };
    out.push_str(&totals_rows(projection));
    out.push_str(&format!(
        "\n{}\n",
        cost_line(log, selection, projection, iterations)
    ));
    if let Some(verdict) = plan.and_then(|p| plan_verdict(log, selection, p)) {
        out.push_str(&verdict);
        if let (Some(true), Some(t)) = (plan.and_then(|p| p.met), judged_target(selection, plan)) {
            out.push_str(&target_scope(log, selection, plan, t));
        }
    }
    // A plan judged on the target speaks for it (`plan_verdict`).
    let judged_by_plan = judged_target(selection, plan).is_some();
    if let Some(target) = selection.target.as_ref().filter(|_| !judged_by_plan) {
        let rule = rule_text(target.rule);
        if log.len() < 2 {
            out.push_str(&format!(
                "target {}% NOT met: one iteration cannot give an interval (nothing to measure its noise against)\n",
                as_typed(target.target_pct)
            ));
        } else if target.met {
            out.push_str(&format!(
                "target {}% met ({rule}) with K = {}{}\n",
                as_typed(target.target_pct),
                selection.bins(),
                only_binning(selection)
            ));
            out.push_str(&luck_note(projection));
            out.push_str(&target_scope(log, selection, plan, target.target_pct));
        } else {
            out.push_str(&format!(
                "target {}% NOT met ({rule}): {}\n",
                as_typed(target.target_pct),
                target
                    .advice
                    .as_ref()
                    .map_or(String::new(), Advice::to_string)
            ));
        }
    }
    if selection.strata.len() > 1 {
        out.push_str("strata (the target applies to the whole run; each stratum's own figures):\n");
        for s in &selection.strata {
            out.push_str(&format!(
                "  {}: {} iterations, K = {}, error {:.3}%, 95% interval {}\n",
                s.name,
                s.iterations,
                s.k,
                s.worst_error_pct,
                plus_minus(s.worst_half_width_pct, 3)
            ));
        }
    }
    out
}

fn pct_of(interval: [f64; 2], value: f64) -> f64 {
    if value == 0.0 {
        return 0.0;
    }
    100.0 * (interval[1] - interval[0]) / 2.0 / value.abs()
}

fn range(interval: [f64; 2]) -> String {
    if !interval.iter().all(|v| v.is_finite()) {
        return CANNOT_BOUND_SHORT.into();
    }
    format!("[{}, {}]", num(interval[0]), num(interval[1]))
}

fn ratio_range(interval: [f64; 2]) -> String {
    if !interval.iter().all(|v| v.is_finite()) {
        return CANNOT_BOUND_SHORT.into();
    }
    format!("[{:.4}, {:.4}]", interval[0], interval[1])
}

/// An interval the data cannot bound, in a table's column (`estimate::CANNOT_BOUND` says why).
const CANNOT_BOUND_SHORT: &str = "cannot bound";

/// The `project` report.
pub fn projection_table(report: &ProjectionReport) -> String {
    let mut out = String::new();
    let first = &report.metrics[0];
    let total = first.measured_seqpoints as usize + first.missing_bins.len();
    // Several files (the first measurements, then each top-up) are all named.
    let new_files = if report.measured_files.is_empty() {
        shown_path(&report.measured)
    } else {
        let shown: Vec<String> = report.measured_files.iter().map(shown_path).collect();
        shown.join(", ")
    };
    let measured = match &report.baseline_measured {
        Some(baseline) => format!("{new_files} (new) + {} (baseline)", shown_path(baseline)),
        None => new_files,
    };
    out.push_str(&format!(
        "{} + {measured}: {} of {} SeqPoints measured ({} rows, matched by {})\n",
        shown_path(&report.seqpoints),
        first.measured_seqpoints,
        total,
        first.samples,
        report.identified_by
    ));
    if !report.excluded.is_empty() {
        out.push_str(&format!(
            "excluded: iterations {} (measured rows left out)\n",
            report.excluded.join(", ")
        ));
    }
    if report.scale == 1.0 {
        out.push_str(&format!(
            "run: {} iterations, as logged\n",
            report.logged_iterations
        ));
    } else {
        out.push_str(&format!(
            "run: {} iterations ({} logged, weights x{:.4})\n",
            num(report.run_iterations),
            report.logged_iterations,
            report.scale
        ));
    }
    if report.excluded_in_bins > 0 {
        out.push_str(&format!(
            "  of which {} excluded by select (--exclude): projected at their own lengths' \
             bins; the baseline total counts them at their keys' means over the kept iterations\n",
            report.excluded_in_bins
        ));
    }
    out.push_str(&format!(
        "\n{:<14} {:>24} {:>14} {:>31} {:>16} {:>19}\n",
        "metric", "baseline total", "projected", "95% interval", "speedup/saving", "95% interval"
    ));
    for m in &report.metrics {
        let baseline = match (m.baseline_total, &m.baseline_source) {
            (Some(v), Some(source)) if report.scale == 1.0 => format!("{} ({source})", num(v)),
            (Some(v), Some(source)) => format!("{} ({source} x{})", num(v), num(report.scale)),
            _ => "-".to_string(),
        };
        out.push_str(&format!(
            "{:<14} {:>24} {:>14} {:>31} {:>16} {:>19}\n",
            m.metric,
            baseline,
            num(m.projected_total),
            range(m.interval),
            m.speedup
                .map_or("-".into(), |s| format!("{s:.4} {}", m.ratio)),
            m.speedup_interval.map_or("-".into(), ratio_range)
        ));
    }
    out.push('\n');
    for m in &report.metrics {
        let samples = m.interval_samples.map_or_else(
            || "repeated samples: fewer than two for some SeqPoint".to_string(),
            |i| {
                format!(
                    "±{:.2}% from repeated samples",
                    pct_of(i, m.projected_total)
                )
            },
        );
        if m.estimate.as_deref() == Some("paired") {
            out.push_str(&format!(
                "{}: both configurations measured at the same {} iterations: the baseline total \
                 {} ±{:.2}%, the new total ±{:.2}% and the {} ±{:.2}% (95%), ratio estimates on \
                 the proxy cost the SeqPoints were chosen by (docs/project.md)\n",
                m.metric,
                m.samples,
                m.baseline_total.map_or("-".into(), num),
                m.baseline_interval
                    .zip(m.baseline_total)
                    .map_or(0.0, |(i, v)| pct_of(i, v)),
                pct_of(m.interval, m.projected_total),
                m.ratio,
                m.speedup_interval
                    .zip(m.speedup)
                    .map_or(0.0, |(i, v)| pct_of(i, v)),
            ));
            continue;
        }
        if m.estimate.as_deref() == Some("ratio") {
            out.push_str(&format!(
                "{}: 95% interval ±{:.2}%, the ratio estimate on the baseline (each measured \
                 iteration paired with its logged baseline value; docs/project.md)\n",
                m.metric,
                pct_of(m.interval, m.projected_total),
            ));
            continue;
        }
        out.push_str(&format!(
            "{}: 95% interval ±{:.2}% for the picks made (each pick's noise and how far its key \
             stands from its bin; docs/intervals.md); a pick drawn at random from each bin would \
             give ±{:.2}%, {samples}\n",
            m.metric,
            pct_of(m.interval, m.projected_total),
            pct_of(m.interval_within_bin, m.projected_total),
        ));
    }
    if !first.missing_bins.is_empty() {
        let ids: Vec<String> = first
            .missing_bins
            .iter()
            .map(|b| b.seqpoint.to_string())
            .collect();
        out.push_str(&format!(
            "left out ({}): SeqPoint {} = {:.2}% of the run, estimated at the measured new/baseline ratio\n",
            ALLOW_MISSING.typed(Surface::CommandLine, ""),
            ids.join(", "),
            100.0 * first.missing_share
        ));
    }
    if let Some(caveat) = &report.caveat {
        out.push_str(&format!("note: {caveat}\n"));
    }
    if let Some(target) = &report.target {
        out.push_str(&target_verdict(target, report.baseline_measured.is_some()));
    }
    out
}

/// `project --target-error`'s verdict in words: met or not on each figure, and the top-up.
/// `paired`: the top-up is measured on both configurations (`--baseline`).
fn target_verdict(target: &crate::doc::TargetDoc, paired: bool) -> String {
    let t = target.target_error_pct;
    let figures: Vec<String> = target
        .figures
        .iter()
        .map(|f| format!("{} ±{:.2}%", f.figure, f.half_width_pct))
        .collect();
    let mut out = if target.met {
        format!(
            "\ntarget ±{t}% met on every projected figure: {}\n",
            figures.join(", ")
        )
    } else {
        format!("\ntarget ±{t}% not met: {}\n", figures.join(", "))
    };
    if let Some(shortfall) = &target.shortfall {
        out.push_str(&format!("why still not: {shortfall}\n"));
    }
    if !target.top_up.is_empty() {
        let mut seqpoints: Vec<usize> = target.top_up.iter().map(|r| r.seqpoint).collect();
        seqpoints.dedup();
        out.push_str(&format!(
            "top-up: measure {} more iteration(s) of {} SeqPoint(s){} (--top-up NEXT.json lists \
             them), then project with every measurement file: {}\n",
            target.top_up.len(),
            seqpoints.len(),
            if paired {
                " on both configurations"
            } else {
                ""
            },
            if target.expected_met == Some(true) {
                "expected to meet the target at the noise measured so far"
            } else {
                "not expected to meet it"
            }
        ));
    }
    if let Some(reason) = &target.reason {
        out.push_str(&format!("why not: {reason}\n"));
    }
    out
}

/// " (one unique length: K = 1 is the only binning)" when that is so.
fn only_binning(selection: &Selection) -> &'static str {
    if selection.unique_keys == 1 {
        " (one unique length: K = 1 is the only binning)"
    } else {
        ""
    }
}

/// What a met target covers, and how the user confirms the rest: with `--compare` both
/// configurations' figures were judged on their logged values; otherwise the new
/// configuration is not measured yet (and with a lengths-only log, neither is the baseline),
/// so the plan stands on an assumption about its noise, which `project --target-error`
/// replaces by the measured noise. With a plan, how noisy a new configuration its reserve can
/// top up for.
fn target_scope(
    log: &RunLog,
    selection: &Selection,
    plan: Option<&ProfilePlan>,
    target_pct: f64,
) -> String {
    let t = as_typed(target_pct);
    let reach = plan.map_or(String::new(), |plan| {
        let per_row = crate::select::plan::reserve_per_row(plan.iterations());
        format!(
            " (the SeqPoints file holds {per_row} more of the bins' iterations per planned one, or \
             the whole bin, for a new configuration up to {:.1}x as noisy as the plan assumes)",
            crate::select::plan::reserve_reaches_noise(per_row)
        )
    });
    // A timed log whose keys show no noise is planned as exact (a simulator's counts are);
    // no noise is assumed for it, so the line must not say one is.
    let shows_noise = selection
        .seqpoints
        .iter()
        .any(|sp| sp.key_noise.iter().any(|k| k.logged_cv > 0.0));
    if log.compare().is_some() {
        String::new()
    } else if log.proxy.is_some() {
        format!(
            "covers: measurements not taken yet; the log has lengths only, so the plan assumes \
             each iteration's time varies {:.0}% within a length; measure the listed iterations \
             on both configurations, then `seqpoint project SEQPOINTS.json NEW.csv --baseline \
             BASE.csv --target-error {t}` confirms the target or lists the iterations to \
             add{reach}\n",
            100.0 * crate::estimate::ASSUMED_PROXY_CV
        )
    } else if shows_noise {
        format!(
            "covers: the baseline, which the log holds whole; for the new configuration the plan \
             assumes its noise is the baseline's (a noisier one needs more iterations, with the \
             square of its noise: about 4x at twice the noise): once measured, `seqpoint \
             project SEQPOINTS.json MEASURED.csv --target-error {t}` confirms the target on the \
             new total and the speedup or lists the iterations to add{reach}\n"
        )
    } else {
        format!(
            "covers: the baseline, which the log holds whole; for the new configuration the plan \
             assumes its noise is the baseline's, which the log shows as none (each length's \
             iterations cost the same, as a simulator's counts do): once measured, `seqpoint \
             project SEQPOINTS.json MEASURED.csv --target-error {t}` judges the target by the \
             measured noise, says where the measurements cannot bound a figure, and lists the \
             iterations to add{reach}\n"
        )
    }
}

/// A note when the measured error sits far below its interval: it was likely luck (empty
/// otherwise). `select` prints it under a met target; the explorer shows it there too.
pub fn luck_note(projection: &Projection) -> String {
    let (error, half) = (
        projection.worst_error_pct(),
        projection.worst_half_width_pct(),
    );
    if half > 0.0 && half > crate::select::LUCK_RATIO * error {
        format!(
            "note: the measured error {error:.3}% is far below its 95% interval ±{half:.2}%: \
             likely luck; another pick of the same design could miss by up to ±{half:.2}%\n"
        )
    } else {
        String::new()
    }
}

/// Why a target's plan misses it and what came closest (`None` when it is met): the verdict's
/// words, and the `advice` of the JSON.
pub fn plan_shortfall(selection: &Selection, plan: &ProfilePlan) -> Option<String> {
    let PlanRule::Target(t) = plan.rule else {
        return None;
    };
    if plan.met == Some(true) {
        return None;
    }
    let reach = if selection.unique_keys == 1 {
        "one unique length: K = 1 is the only binning".to_string()
    } else {
        format!(
            "no K up to {} brings every 95% interval within ±{}%",
            selection.options.max_bins,
            as_typed(t)
        )
    };
    Some(format!(
        "{reach}; the closest, K = {} with {} representative iterations profiled, gives {}",
        selection.bins(),
        plan.iterations(),
        plus_minus(plan.projection.worst_half_width_pct(), 2)
    ))
}

/// A 95% half-width in percent as the outputs word it: `±1.23%`, or, where the data cannot
/// bound a figure (`estimate::CANNOT_BOUND`), that there is none.
pub fn plus_minus(pct: f64, decimals: usize) -> String {
    if pct.is_finite() {
        format!("±{pct:.decimals$}%")
    } else {
        "no bound (cannot bound)".into()
    }
}

/// The target a plan is judged on: `--plan`'s, or under a budget the one K was chosen for.
fn judged_target(selection: &Selection, plan: Option<&ProfilePlan>) -> Option<f64> {
    match plan.map(|p| (p.rule, p.met)) {
        Some((PlanRule::Target(t), _)) => Some(t),
        Some((PlanRule::Budget(_), Some(_))) => selection.target.as_ref().map(|t| t.target_pct),
        _ => None,
    }
}

/// The verdict on a plan judged on a target: met with one sample per SeqPoint, met with a
/// plan (bins x samples), or not met and what was reachable; a budget's by its figures.
fn plan_verdict(log: &RunLog, selection: &Selection, plan: &ProfilePlan) -> Option<String> {
    let t = judged_target(selection, Some(plan))?;
    if log.len() < 2 {
        return Some(format!(
            "target {}% NOT met: one iteration cannot give an interval (nothing to measure its noise against)\n",
            as_typed(t)
        ));
    }
    if let (PlanRule::Budget(b), Some(target)) = (plan.rule, &selection.target) {
        return Some(budget_verdict(selection, plan, b, target));
    }
    let only = only_binning(selection);
    let what = "every total's and speedup's 95% interval";
    let k = selection.bins();
    let widest = plan.projection.worst_half_width_pct();
    Some(if let Some(shortfall) = plan_shortfall(selection, plan) {
        format!("target {}% NOT met ({what}): {shortfall}\n", as_typed(t))
    } else if plan.bins.iter().all(|b| b.samples() == 1) {
        format!(
            "target {}% met ({what} ±{widest:.2}%) with K = {k}{only}, one sample per SeqPoint\n",
            as_typed(t)
        )
    } else {
        let most = plan.bins.iter().map(|b| b.samples()).max().unwrap_or(1);
        format!(
            "target {}% met ({what} ±{widest:.2}%) with a plan: K = {k} bins{only} x 1-{most} samples = {} iterations (one per SeqPoint does not suffice)\n",
            as_typed(t),
            plan.iterations()
        )
    })
}

/// A budget's plan judged on the target K was chosen for, by the plan's own figures; where
/// it misses, the budget at the same K that meets it (`budget_advice`).
fn budget_verdict(
    selection: &Selection,
    plan: &ProfilePlan,
    budget: u64,
    target: &crate::select::TargetOutcome,
) -> String {
    let t = as_typed(target.target_pct);
    let rule = rule_text(target.rule);
    let figures = format!(
        "budget {budget}: error {:.3}%, 95% interval ±{:.2}%",
        plan.projection.worst_error_pct(),
        plan.projection.worst_half_width_pct()
    );
    let k = selection.bins();
    if plan.met == Some(true) {
        format!(
            "target {t}% met ({rule}) with K = {k}{} and a {figures}\n",
            only_binning(selection)
        )
    } else {
        let advice = budget_advice(selection, plan).map_or(String::new(), |a| format!("; {a}"));
        format!("target {t}% NOT met ({rule}) with K = {k} and a {figures}{advice}\n")
    }
}

/// What meets the target a budget misses, at the same K: the table's words and the JSON's
/// `advice`.
pub fn budget_advice(selection: &Selection, plan: &ProfilePlan) -> Option<String> {
    Some(match plan.meeting_budget? {
        Some(b) => format!(
            "a budget of {b} meets it ({})",
            BUDGET.typed(Surface::CommandLine, &b.to_string())
        ),
        None => format!(
            "no budget at K = {} meets it (every listed iteration of each bin counted)",
            selection.bins()
        ),
    })
}

/// The plan section of the `select` table: every iteration to profile, with its SeqPoint.
pub fn plan_table(log: &RunLog, selection: &Selection, plan: &ProfilePlan) -> String {
    let mut out = String::new();
    let rule = match plan.rule {
        PlanRule::Samples(m) => format!(
            "{m} per SeqPoint ({})",
            SAMPLES.typed(Surface::CommandLine, &m.to_string())
        ),
        PlanRule::Budget(b) => format!("budget {b}, Neyman allocation m_b ~ w_b s_b"),
        PlanRule::Target(t) => format!(
            "cheapest plan whose 95% interval is within ±{t}%: {}",
            if plan.met == Some(true) {
                "met"
            } else {
                "NOT met"
            }
        ),
    };
    out.push_str(&format!(
        "\nprofiling plan: {} iterations ({rule})\n{:>4} {:>8} {:>8}  iterations to profile\n",
        plan.iterations(),
        "id",
        "weight",
        "samples"
    ));
    for bin in &plan.bins {
        let sp = &selection.seqpoints[bin.seqpoint];
        let iterations: Vec<String> = bin
            .rows
            .iter()
            .map(|&r| log.iterations.get(r as usize).to_string())
            .collect();
        out.push_str(&format!(
            "{:>4} {:>8} {:>8}  {}\n",
            sp.id,
            sp.weight,
            bin.samples(),
            iterations.join(" ")
        ));
    }
    out.push_str(
        "(the totals above are projected from these iterations' logged values, intervals for this plan)\n",
    );
    out
}

fn totals_rows(projection: &Projection) -> String {
    let mut out = String::new();
    for row in &projection.totals {
        out.push_str(&format!(
            "{:<10} {:<14} {:>14} {:>14} {:>9} {:>31}\n",
            row.config.name(),
            row.metric,
            row.actual.map_or("-".into(), num),
            num(row.projected),
            row.error_pct.map_or("-".into(), |e| format!("{e:.3}")),
            range(row.interval)
        ));
    }
    for s in &projection.speedups {
        out.push_str(&format!(
            "{:<10} {:<14} {:>14} {:>14} {:>9} {:>31}\n",
            "speedup",
            s.metric,
            s.actual.map_or("-".into(), |v| format!("{v:.4}")),
            format!("{:.4}", s.projected),
            s.error_pct.map_or("-".into(), |e| format!("{e:.3}")),
            ratio_range(s.interval)
        ));
    }
    out
}

/// SeqPoints' errors beside the naive baselines' at the same number of profiled iterations.
pub fn baselines_table(
    projection: &Projection,
    profiled: u64,
    baselines: &[Baseline],
    draws: u32,
) -> String {
    let mut out = format!(
        "\nerror% beside naive baselines at the same budget ({profiled} profiled iterations; random: mean / worst of {draws} draws)\n{:<28} {:>10}",
        "method", "iterations"
    );
    for row in &projection.totals {
        out.push_str(&format!(
            " {:>20}",
            format!("{} {}", row.config.name(), row.metric)
        ));
    }
    for s in &projection.speedups {
        out.push_str(&format!(" {:>20}", format!("speedup {}", s.metric)));
    }
    out.push('\n');
    out.push_str(&format!("{:<28} {:>10}", "SeqPoints", profiled));
    for row in &projection.totals {
        out.push_str(&format!(
            " {:>20}",
            row.error_pct.map_or("-".into(), |e| format!("{e:.3}"))
        ));
    }
    for s in &projection.speedups {
        out.push_str(&format!(
            " {:>20}",
            s.error_pct.map_or("-".into(), |e| format!("{e:.3}"))
        ));
    }
    out.push('\n');
    for b in baselines {
        let name = match b.method.as_str() {
            "first-n" => "first N after warm-up".to_string(),
            "random" => "N random".to_string(),
            "systematic" => "every (len/N)-th".to_string(),
            "median-sl" => "single median-SL iteration".to_string(),
            other => other.to_string(),
        };
        out.push_str(&format!("{name:<28} {:>10}", b.iterations));
        for e in b.errors.iter().chain(&b.speedup_errors) {
            let cell = match e.worst_error_pct {
                Some(worst) => format!("{:.3} / {:.3}", e.error_pct, worst),
                None => format!("{:.3}", e.error_pct),
            };
            out.push_str(&format!(" {cell:>20}"));
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::share_text;

    #[test]
    fn a_share_of_the_run_that_is_not_zero_never_reads_zero() {
        // One iteration of ten million: 0.00001%.
        assert_eq!(share_text(1e-5), "<0.01");
        assert_eq!(share_text(0.0), "0.00");
        assert_eq!(share_text(0.25), "0.25");
        assert_eq!(share_text(14.2), "14");
    }
}
