//! Why a top-up, once measured, left the target unmet: `project --target-error` promises that
//! measuring its top-up meets the target "or says why not". It is stateless (the SeqPoints
//! file and the measurement files are all it reads), so it retraces the rounds from them: the
//! plan's measured rows first, then each top-up it would have listed, as long as the
//! measurements hold that top-up. The last one retraced is the one just measured.
//!
//! On the redraw example's timed flows about one run in five needs a second top-up (smooth
//! case: 40 of 200 runs); each such verdict now says what fell short.

use std::collections::{BTreeSet, HashMap};

use crate::doc::{SelectDoc, TargetDoc, TopUpRow};
use crate::project::target::TOP_UP_AIM;
use crate::runlog::measured::Measurements;

/// Rounds retraced at most: past this many, the account is left out rather than slow.
const ROUNDS_RETRACED: usize = 8;

/// The iterations measured per SeqPoint (indexed like the document's), `None` where a row
/// names no iteration (a file by SeqPoint id or key cannot be retraced).
fn measured_sets(measured: &Measurements) -> Option<Vec<BTreeSet<u64>>> {
    measured
        .samples
        .iter()
        .map(|samples| samples.iter().map(|s| s.iteration).collect())
        .collect()
}

/// `measured` restricted to the iterations in `keep` (per SeqPoint).
pub(crate) fn restricted(measured: &Measurements, keep: &[BTreeSet<u64>]) -> Measurements {
    Measurements {
        samples: measured
            .samples
            .iter()
            .zip(keep)
            .map(|(samples, keep)| {
                samples
                    .iter()
                    .filter(|s| s.iteration.is_some_and(|it| keep.contains(&it)))
                    .cloned()
                    .collect()
            })
            .collect(),
        ..measured.clone()
    }
}

/// SeqPoint id -> its place in the document.
fn seqpoint_index(doc: &SelectDoc) -> HashMap<usize, usize> {
    doc.seqpoints
        .iter()
        .enumerate()
        .map(|(i, sp)| (sp.id, i))
        .collect()
}

/// A top-up's rows as sets per SeqPoint (indexed like the document's).
fn top_up_sets(doc: &SelectDoc, top_up: &[TopUpRow]) -> Vec<BTreeSet<u64>> {
    let index = seqpoint_index(doc);
    let mut sets = vec![BTreeSet::new(); doc.seqpoints.len()];
    for row in top_up {
        if let Some(&b) = index.get(&row.seqpoint) {
            sets[b].insert(row.iteration);
        }
    }
    sets
}

fn count(sets: &[BTreeSet<u64>]) -> usize {
    sets.iter().map(BTreeSet::len).sum()
}

/// Why `now` (the verdict on every measurement) is not met although a top-up was measured:
/// `judge_on` gives the verdict on a subset of the measurements (the same projection, on
/// those rows alone). The first stage is the plan's rows, or without a plan the SeqPoints'
/// own iterations. `None` where nothing beyond it was measured, where the file is itself a
/// top-up's (its plan lists the top-up, not the first stage), or where the measurements are
/// not the rounds `project` listed (other iterations, rows without one).
pub fn explain(
    doc: &SelectDoc,
    measured: &Measurements,
    now: &TargetDoc,
    judge_on: &dyn Fn(&[BTreeSet<u64>]) -> Option<TargetDoc>,
) -> Option<String> {
    if now.met {
        return None;
    }
    if doc.plan.as_ref().is_some_and(|p| p.rule == "top-up") {
        return None;
    }
    let all = measured_sets(measured)?;
    // The first stage: the plan's rows, or without a plan each SeqPoint's own iteration.
    let first_stage: Vec<TopUpRow> = match &doc.plan {
        Some(plan) => plan
            .profile
            .iter()
            .map(|r| TopUpRow {
                iteration: r.iteration,
                seqpoint: r.seqpoint,
            })
            .collect(),
        None => doc
            .seqpoints
            .iter()
            .map(|sp| TopUpRow {
                iteration: sp.iteration,
                seqpoint: sp.id,
            })
            .collect(),
    };
    let planned = top_up_sets(doc, &first_stage);
    let index = seqpoint_index(doc);
    let mut so_far: Vec<BTreeSet<u64>> = all
        .iter()
        .zip(&planned)
        .map(|(all, planned)| all.intersection(planned).copied().collect())
        .collect();
    if so_far == all
        || all
            .iter()
            .zip(&so_far)
            .any(|(a, s)| !a.is_empty() && s.is_empty())
    {
        return None;
    }
    for round in 1..=ROUNDS_RETRACED {
        let then = judge_on(&so_far)?;
        if then.met || then.top_up.is_empty() {
            return None;
        }
        let listed = top_up_sets(doc, &then.top_up);
        let unmeasured: Vec<&TopUpRow> = then
            .top_up
            .iter()
            .filter(|row| {
                index
                    .get(&row.seqpoint)
                    .is_none_or(|&b| !all[b].contains(&row.iteration))
            })
            .collect();
        let next: Vec<BTreeSet<u64>> = so_far
            .iter()
            .zip(&listed)
            .map(|(s, l)| s.union(l).copied().collect())
            .collect();
        let within = all.iter().zip(&next).all(|(a, n)| a.is_subset(n));
        if !unmeasured.is_empty() {
            // Part of this top-up measured, and nothing else: it is not all in yet.
            return within.then(|| partly_measured(round, then.top_up.len(), &unmeasured));
        }
        if within {
            return fell_short(round, count(&so_far), &then, now);
        }
        so_far = next;
    }
    None
}

fn ordinal(round: usize) -> String {
    match round {
        1 => "first".into(),
        2 => "second".into(),
        3 => "third".into(),
        n => format!("{n}th"),
    }
}

fn iterations(n: usize) -> String {
    if n == 1 {
        "1 iteration".into()
    } else {
        format!("{n} iterations")
    }
}

fn partly_measured(round: usize, listed: usize, unmeasured: &[&TopUpRow]) -> String {
    const SHOWN: usize = 5;
    let mut named: Vec<String> = unmeasured
        .iter()
        .take(SHOWN)
        .map(|r| format!("{} (SeqPoint {})", r.iteration, r.seqpoint))
        .collect();
    if unmeasured.len() > SHOWN {
        named.push(format!("and {} more", unmeasured.len() - SHOWN));
    }
    format!(
        "{} of the {listed} iterations the {} top-up listed {} not measured: iteration {}; the \
         new top-up is sized from the measurements given",
        unmeasured.len(),
        ordinal(round),
        if unmeasured.len() == 1 { "is" } else { "are" },
        named.join(", ")
    )
}

/// The top-up was measured whole: it was sized (`target::fewest_more`) to bring every
/// figure's variance within the aim at the noise the rows before it showed, so a figure over
/// the target now stands there by what the rows it added showed: a larger pooled residual
/// (the bins' values, which the relative variance also reads, move far less); or it was known
/// to fall short (`then.reason`). `None` where every figure meets the target (what is unmet
/// is a SeqPoint not measured).
fn fell_short(round: usize, before: usize, then: &TargetDoc, now: &TargetDoc) -> Option<String> {
    let target = now.target_error_pct;
    let over: Vec<String> = now
        .figures
        .iter()
        .filter(|f| !crate::stats::meets_target(f.half_width_pct, target))
        .map(|f| format!("{} at ±{:.2}%", f.figure, f.half_width_pct))
        .collect();
    if over.is_empty() {
        return None;
    }
    Some(match (&then.expected_met, &then.reason) {
        (Some(false), Some(reason)) => format!(
            "the {} top-up was measured, and was known to fall short: {reason}",
            ordinal(round)
        ),
        _ => format!(
            "the {} top-up ({}) was measured; it was sized to bring every figure \
             within ±{:.2}% at the noise the {before} iterations before it showed, and {} {} \
             over ±{target}%: the iterations it added read noisier than those before them",
            ordinal(round),
            iterations(then.top_up.len()),
            TOP_UP_AIM * target,
            over.join(", "),
            if over.len() == 1 { "stands" } else { "stand" }
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::{PlanDoc, ProfileRowDoc, TargetFigureDoc};
    use crate::output::json::select_document;
    use crate::project::target::candidates;
    use crate::runlog::measured::{Identified, Sample};
    use crate::runlog::{load_bytes, InputFormat, LoadOptions};
    use crate::select::{run_selection, BinCount, SelectOptions};

    /// Keys 10 and 20, eight iterations each, two SeqPoints with a plan of two rows each.
    fn doc() -> SelectDoc {
        let mut text = String::from("iteration,seq_len,time_ms\n");
        for i in 0..16 {
            let (key, time) = if i % 2 == 0 { (10, 1.0) } else { (20, 2.0) };
            text.push_str(&format!("{i},{key},{}\n", time + 0.01 * f64::from(i)));
        }
        let log = load_bytes(
            "run.csv",
            text.as_bytes(),
            InputFormat::Csv,
            &LoadOptions::default(),
        )
        .unwrap();
        let options = SelectOptions {
            bins: BinCount::Fixed(2),
            ..SelectOptions::default()
        };
        let mut doc = select_document(&log, &run_selection(&log, &options).unwrap(), None);
        // Each SeqPoint's first two iterations planned.
        let profile: Vec<ProfileRowDoc> = (0..doc.seqpoints.len())
            .flat_map(|b| {
                let seqpoint = doc.seqpoints[b].id;
                candidates(&doc, b)
                    .into_iter()
                    .take(2)
                    .map(move |iteration| ProfileRowDoc {
                        iteration,
                        seqpoint,
                        metrics: Default::default(),
                        expected: Default::default(),
                        epoch: None,
                        key: Vec::new(),
                    })
            })
            .collect();
        assert_eq!(profile.len(), 4);
        doc.plan = Some(PlanDoc {
            rule: "samples".into(),
            budget: None,
            target_error_pct: None,
            met: None,
            iterations: 4,
            bins: Vec::new(),
            profile,
            reserve: Vec::new(),
            projection: Vec::new(),
            speedup: None,
            profiling_reduction: None,
        });
        doc
    }

    fn plan_sets(doc: &SelectDoc) -> Vec<BTreeSet<u64>> {
        let rows: Vec<TopUpRow> = doc
            .plan
            .as_ref()
            .unwrap()
            .profile
            .iter()
            .map(|r| TopUpRow {
                iteration: r.iteration,
                seqpoint: r.seqpoint,
            })
            .collect();
        top_up_sets(doc, &rows)
    }

    fn measured(sets: &[BTreeSet<u64>]) -> Measurements {
        Measurements {
            source: "new.csv".into(),
            metric_names: vec!["time_ms".into()],
            identified_by: Identified::Iteration,
            samples: sets
                .iter()
                .map(|set| {
                    set.iter()
                        .map(|&it| Sample {
                            iteration: Some(it),
                            line: it + 2,
                            values: vec![1.0],
                        })
                        .collect()
                })
                .collect(),
        }
    }

    fn verdict(met: bool, top_up: Vec<TopUpRow>, half_width_pct: f64) -> TargetDoc {
        TargetDoc {
            target_error_pct: 1.0,
            met,
            figures: vec![TargetFigureDoc {
                figure: "time_ms total".into(),
                half_width_pct,
            }],
            top_up,
            expected_met: Some(true),
            reason: None,
            shortfall: None,
        }
    }

    /// A stand-in for the projection: below six measured iterations it lists one more of
    /// every SeqPoint (the next listed candidate), from six on one more of SeqPoint 0.
    fn judge(doc: &SelectDoc) -> impl Fn(&[BTreeSet<u64>]) -> Option<TargetDoc> + '_ {
        move |keep: &[BTreeSet<u64>]| {
            let bins: Vec<usize> = if count(keep) < 6 { vec![0, 1] } else { vec![0] };
            let top_up = bins
                .into_iter()
                .map(|b| TopUpRow {
                    iteration: candidates(doc, b)
                        .into_iter()
                        .find(|it| !keep[b].contains(it))
                        .unwrap(),
                    seqpoint: doc.seqpoints[b].id,
                })
                .collect();
            Some(verdict(false, top_up, 1.2))
        }
    }

    fn with(sets: &[BTreeSet<u64>], rows: &[TopUpRow], doc: &SelectDoc) -> Vec<BTreeSet<u64>> {
        let added = top_up_sets(doc, rows);
        sets.iter()
            .zip(&added)
            .map(|(s, a)| s.union(a).copied().collect())
            .collect()
    }

    #[test]
    fn nothing_to_say_on_the_plan_alone_or_when_met() {
        let doc = doc();
        let plan = plan_sets(&doc);
        let now = verdict(false, Vec::new(), 1.2);
        assert_eq!(explain(&doc, &measured(&plan), &now, &judge(&doc)), None);
        let first = judge(&doc)(&plan).unwrap();
        let all = with(&plan, &first.top_up, &doc);
        let met = verdict(true, Vec::new(), 0.9);
        assert_eq!(explain(&doc, &measured(&all), &met, &judge(&doc)), None);
    }

    #[test]
    fn a_measured_top_up_that_fell_short_is_named_by_its_round() {
        let doc = doc();
        let plan = plan_sets(&doc);
        let first = judge(&doc)(&plan).unwrap();
        let after_first = with(&plan, &first.top_up, &doc);
        let now = verdict(false, Vec::new(), 1.07);
        let why = explain(&doc, &measured(&after_first), &now, &judge(&doc)).unwrap();
        assert!(
            why.starts_with("the first top-up (2 iterations) was measured")
                && why.contains("the 4 iterations before it")
                && why.contains("time_ms total at ±1.07%")
                && why.contains("read noisier"),
            "{why}"
        );
        let second = judge(&doc)(&after_first).unwrap();
        let after_second = with(&after_first, &second.top_up, &doc);
        let why = explain(&doc, &measured(&after_second), &now, &judge(&doc)).unwrap();
        assert!(
            why.starts_with("the second top-up (1 iteration) was measured")
                && why.contains("the 6 iterations before it"),
            "{why}"
        );
    }

    #[test]
    fn without_a_plan_the_first_stage_is_each_seqpoints_own() {
        let mut doc = doc();
        doc.plan = None;
        let own: Vec<TopUpRow> = doc
            .seqpoints
            .iter()
            .map(|sp| TopUpRow {
                iteration: sp.iteration,
                seqpoint: sp.id,
            })
            .collect();
        let first_stage = top_up_sets(&doc, &own);
        let now = verdict(false, Vec::new(), 1.2);
        assert_eq!(
            explain(&doc, &measured(&first_stage), &now, &judge(&doc)),
            None
        );
        let first = judge(&doc)(&first_stage).unwrap();
        let after_first = with(&first_stage, &first.top_up, &doc);
        let why = explain(&doc, &measured(&after_first), &now, &judge(&doc)).unwrap();
        assert!(
            why.starts_with("the first top-up (2 iterations) was measured")
                && why.contains("the 2 iterations before it"),
            "{why}"
        );
    }

    #[test]
    fn a_top_up_measured_in_part_names_what_is_missing() {
        let doc = doc();
        let plan = plan_sets(&doc);
        let first = judge(&doc)(&plan).unwrap();
        let part = with(&plan, &first.top_up[..1], &doc);
        let now = verdict(false, Vec::new(), 1.2);
        let why = explain(&doc, &measured(&part), &now, &judge(&doc)).unwrap();
        let missing = &first.top_up[1];
        assert_eq!(
            why,
            format!(
                "1 of the 2 iterations the first top-up listed is not measured: iteration {} \
                 (SeqPoint {}); the new top-up is sized from the measurements given",
                missing.iteration, missing.seqpoint
            )
        );
    }

    #[test]
    fn other_iterations_or_rows_without_one_are_not_retraced() {
        let doc = doc();
        let plan = plan_sets(&doc);
        let now = verdict(false, Vec::new(), 1.2);
        // An iteration of SeqPoint 0's bin that no top-up listed first.
        let first = judge(&doc)(&plan).unwrap();
        let listed = top_up_sets(&doc, &first.top_up);
        let other = candidates(&doc, 0)
            .into_iter()
            .rev()
            .find(|it| !plan[0].contains(it) && !listed[0].contains(it))
            .unwrap();
        let mut others = plan.clone();
        others[0].insert(other);
        assert_eq!(explain(&doc, &measured(&others), &now, &judge(&doc)), None);
        // A row that names no iteration.
        let after_first = with(&plan, &first.top_up, &doc);
        let mut unnamed = measured(&after_first);
        unnamed.samples[1][0].iteration = None;
        assert_eq!(explain(&doc, &unnamed, &now, &judge(&doc)), None);
        // A top-up's own file: its plan is that top-up, not the first stage.
        let mut top_up_file = doc.clone();
        top_up_file.plan.as_mut().unwrap().rule = "top-up".into();
        assert_eq!(
            explain(&top_up_file, &measured(&after_first), &now, &judge(&doc)),
            None
        );
    }

    #[test]
    fn a_top_up_known_to_fall_short_says_so() {
        let doc = doc();
        let plan = plan_sets(&doc);
        let short = |keep: &[BTreeSet<u64>]| {
            judge(&doc)(keep).map(|t| TargetDoc {
                expected_met: Some(false),
                reason: Some("no more iterations listed".into()),
                ..t
            })
        };
        let first = short(&plan).unwrap();
        let after_first = with(&plan, &first.top_up, &doc);
        let now = verdict(false, Vec::new(), 1.2);
        assert_eq!(
            explain(&doc, &measured(&after_first), &now, &short).unwrap(),
            "the first top-up was measured, and was known to fall short: no more iterations listed"
        );
    }
}
