//! The CSV lists a profiler script reads: the SeqPoints, or every iteration a plan profiles.

use crate::runlog::RunLog;
use crate::select::plan::ProfilePlan;
use crate::select::Selection;

/// The columns both lists share: `id,iteration,epoch,<keys>,weight,<metrics>[,stratum]`.
fn header(log: &RunLog, strata: bool) -> String {
    let mut out = String::from("id,iteration,epoch");
    for name in &log.key_names {
        out.push(',');
        out.push_str(name);
    }
    out.push_str(",weight");
    for name in &log.metric_names() {
        out.push(',');
        out.push_str(name);
    }
    if strata {
        out.push_str(",stratum");
    }
    out
}

/// One iteration's shared columns (no line end), as `header` names them.
struct Row<'a> {
    id: usize,
    iteration: u64,
    epoch: Option<u32>,
    key: &'a [u32],
    weight: u64,
    stratum: Option<usize>,
}

impl Row<'_> {
    fn push(&self, out: &mut String, values: impl Iterator<Item = f64>) {
        out.push_str(&format!(
            "{},{},{}",
            self.id,
            self.iteration,
            self.epoch.map_or(String::new(), |e| e.to_string())
        ));
        for k in self.key {
            out.push_str(&format!(",{k}"));
        }
        out.push_str(&format!(",{}", self.weight));
        for v in values {
            out.push_str(&format!(",{v}"));
        }
        if let Some(s) = self.stratum {
            out.push_str(&format!(",{s}"));
        }
    }
}

fn has_strata(selection: &Selection) -> bool {
    selection.seqpoints.iter().any(|s| s.stratum.is_some())
}

/// The list a profiler script reads when a plan profiles several iterations per SeqPoint:
/// one row per iteration, `id` naming its SeqPoint and `sample` numbering it (0 = the
/// SeqPoint's own iteration); other columns as in `seqpoints_csv`.
pub fn profile_csv(log: &RunLog, selection: &Selection, plan: &ProfilePlan) -> String {
    let mut out = header(log, has_strata(selection));
    out.push_str(",sample,samples\n");
    for bin in &plan.bins {
        let sp = &selection.seqpoints[bin.seqpoint];
        for (sample, &row) in bin.rows.iter().enumerate() {
            let row = row as usize;
            let shared = Row {
                id: sp.id,
                iteration: log.iterations.get(row),
                epoch: log.epoch(row),
                key: log.key(row),
                weight: sp.weight,
                stratum: sp.stratum,
            };
            shared.push(
                &mut out,
                log.configs[0].metrics.iter().map(|m| m.values[row]),
            );
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
    let mut out = header(log, has_strata(selection));
    out.push('\n');
    for sp in &selection.seqpoints {
        let shared = Row {
            id: sp.id,
            iteration: sp.iteration,
            epoch: sp.epoch,
            key: &sp.key,
            weight: sp.weight,
            stratum: sp.stratum,
        };
        shared.push(&mut out, sp.values[0].iter().copied());
        out.push('\n');
    }
    out
}
