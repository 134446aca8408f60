//! The CSV lists a profiler script reads: the SeqPoints, or every iteration a plan profiles.

use crate::runlog::RunLog;
use crate::select::plan::ProfilePlan;
use crate::select::Selection;

/// The list a profiler script reads when a plan profiles several iterations per SeqPoint:
/// one row per iteration, `id` naming its SeqPoint and `sample` numbering it (0 = the
/// SeqPoint's own iteration); other columns as in `seqpoints_csv`.
pub fn profile_csv(log: &RunLog, selection: &Selection, plan: &ProfilePlan) -> String {
    let names = log.metric_names();
    let strata = selection.seqpoints.iter().any(|s| s.stratum.is_some());
    let mut out = String::from("id,iteration,epoch");
    for k in &log.key_names {
        out.push(',');
        out.push_str(k);
    }
    out.push_str(",weight");
    for n in &names {
        out.push(',');
        out.push_str(n);
    }
    if strata {
        out.push_str(",stratum");
    }
    out.push_str(",sample,samples\n");
    for bin in &plan.bins {
        let sp = &selection.seqpoints[bin.seqpoint];
        for (sample, &row) in bin.rows.iter().enumerate() {
            let row = row as usize;
            out.push_str(&format!(
                "{},{},{}",
                sp.id,
                log.iterations.get(row),
                log.epochs
                    .as_ref()
                    .map_or(String::new(), |e| e[row].to_string())
            ));
            for k in log.key(row) {
                out.push_str(&format!(",{k}"));
            }
            out.push_str(&format!(",{}", sp.weight));
            for config_metric in &log.configs[0].metrics {
                out.push_str(&format!(",{}", config_metric.values[row]));
            }
            if let Some(s) = sp.stratum {
                out.push_str(&format!(",{s}"));
            }
            out.push_str(&format!(",{sample},{}\n", bin.samples()));
        }
    }
    out
}

/// The CSV file `seqpoint select` writes: the iterations to profile when a plan asks for
/// more than one per SeqPoint, else the SeqPoint list.
pub fn select_csv(log: &RunLog, selection: &Selection, plan: Option<&ProfilePlan>) -> String {
    match plan {
        Some(plan) => profile_csv(log, selection, plan),
        None => seqpoints_csv(log, selection),
    }
}

/// The SeqPoint list a profiler script reads: `id,iteration,epoch,<keys>,weight,<metrics>`.
pub fn seqpoints_csv(log: &RunLog, selection: &Selection) -> String {
    let names = log.metric_names();
    let mut out = String::from("id,iteration,epoch");
    for k in &log.key_names {
        out.push(',');
        out.push_str(k);
    }
    out.push_str(",weight");
    for n in &names {
        out.push(',');
        out.push_str(n);
    }
    if selection.seqpoints.iter().any(|s| s.stratum.is_some()) {
        out.push_str(",stratum");
    }
    out.push('\n');
    for sp in &selection.seqpoints {
        out.push_str(&format!(
            "{},{},{}",
            sp.id,
            sp.iteration,
            sp.epoch.map_or(String::new(), |e| e.to_string())
        ));
        for k in &sp.key {
            out.push_str(&format!(",{k}"));
        }
        out.push_str(&format!(",{}", sp.weight));
        for v in &sp.values[0] {
            out.push_str(&format!(",{v}"));
        }
        if let Some(s) = sp.stratum {
            out.push_str(&format!(",{s}"));
        }
        out.push('\n');
    }
    out
}
