//! Plain-text tables for what comes after selection: the `project` report, the profiling
//! plan of `select --samples/--budget/--plan`, and the naive baselines beside SeqPoints.

use crate::project::baselines::Baseline;
use crate::project::document::ProjectionReport;
use crate::project::Projection;
use crate::runlog::RunLog;
use crate::select::plan::{PlanRule, ProfilePlan};
use crate::select::Selection;
use crate::text::num;

fn pct_of(interval: [f64; 2], value: f64) -> f64 {
    if value == 0.0 {
        return 0.0;
    }
    100.0 * (interval[1] - interval[0]) / 2.0 / value.abs()
}

fn range(interval: [f64; 2]) -> String {
    format!("[{}, {}]", num(interval[0]), num(interval[1]))
}

fn ratio_range(interval: [f64; 2]) -> String {
    format!("[{:.4}, {:.4}]", interval[0], interval[1])
}

/// The `project` report.
pub fn projection_table(report: &ProjectionReport) -> String {
    let mut out = String::new();
    let first = &report.metrics[0];
    let total = first.measured_seqpoints as usize + first.missing_bins.len();
    out.push_str(&format!(
        "{} + {}: {} of {} SeqPoints measured ({} rows, matched by {})\n",
        report.seqpoints,
        report.measured,
        first.measured_seqpoints,
        total,
        first.samples,
        report.identified_by
    ));
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
        out.push_str(&format!(
            "{}: 95% interval ±{:.2}%: ±{:.2}% from the within-bin spread, {samples}; each bin counts the larger\n",
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
            "left out (--allow-missing): SeqPoint {} = {:.2}% of the run, estimated at the measured new/baseline ratio\n",
            ids.join(", "),
            100.0 * first.missing_share
        ));
    }
    out
}

/// The plan section of the `select` table: every iteration to profile, with its SeqPoint.
pub fn plan_table(log: &RunLog, selection: &Selection, plan: &ProfilePlan) -> String {
    let mut out = String::new();
    let rule = match plan.rule {
        PlanRule::Samples(m) => format!("{m} per SeqPoint (--samples {m})"),
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
        "projected from the planned iterations' logged values, intervals for this plan:\n",
    );
    out.push_str(&totals_rows(&plan.projection));
    out.push_str(&format!(
        "profiling reduction: {:.1}x\n",
        plan.projection.profiling_reduction
    ));
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
