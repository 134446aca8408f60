//! The JSON files: a selection as its `seqpoint/1` document, with its plan and the naive
//! baselines at the same budget.

use crate::estimate::CANNOT_BOUND;
use std::collections::BTreeMap;

use crate::doc::{
    BinRange, BinStats, InputDoc, PlanDoc, PlannedBinDoc, ProfileRowDoc, SelectDoc, SelectionDoc,
    SeqPointDoc, SpeedupDoc, TotalDoc, MEASURED_COST, SCHEMA,
};
use crate::pick::SeqPoint;
use crate::project::{SpeedupRow, TotalRow};
use crate::report::document::{ReportDoc, ReportInput, REPORT_SCHEMA};
use crate::report::Finding;
use crate::runlog::RunLog;
use crate::select::naive::Baselines;
use crate::select::plan::{PlanRule, ProfilePlan};
use crate::select::{excluded_shares, BinCount, ExcludedShare, Exclusion, Selection};

fn metric_map(names: &[String], values: &[f64]) -> BTreeMap<String, f64> {
    names.iter().cloned().zip(values.iter().copied()).collect()
}

/// The baseline curve of `sp`'s bin at the key of log row `row`, by metric: what `project`'s
/// ratio divides by (`pick::BaselineCurve`). Empty for a proxy cost, which is exact per key
/// and so its own curve.
fn expected_map(
    log: &RunLog,
    names: &[String],
    sp: &SeqPoint,
    row: usize,
) -> BTreeMap<String, f64> {
    if log.proxy.is_some() {
        return BTreeMap::new();
    }
    let key = log.key(row);
    names
        .iter()
        .enumerate()
        .filter_map(|(m, name)| Some((name.clone(), sp.bin.curve.at(key, m)?)))
        .collect()
}

/// A figure as the document holds it: `None` (written `null`) when it is not a number.
fn number(value: f64) -> Option<f64> {
    value.is_finite().then_some(value)
}

/// An interval as the document holds it, and why there is none: an infinite one (the data
/// cannot bound the figure, `estimate::CANNOT_BOUND`) is written `[0, f64::MAX]`, true of any
/// time or energy, so that no reader takes it for a bound, and never `null`.
fn interval_doc(interval: [f64; 2]) -> ([f64; 2], Option<String>) {
    if interval.iter().all(|v| v.is_finite()) {
        (interval, None)
    } else {
        ([0.0, f64::MAX], Some(CANNOT_BOUND.into()))
    }
}

fn total_doc(row: &TotalRow) -> TotalDoc {
    let (interval, cannot_bound) = interval_doc(row.interval);
    TotalDoc {
        actual: row.actual.and_then(number),
        config: row.config,
        error_pct: row.error_pct.and_then(number),
        interval,
        metric: row.metric.clone(),
        projected: row.projected,
        cannot_bound,
    }
}

fn speedup_doc(row: &SpeedupRow) -> SpeedupDoc {
    let (interval, cannot_bound) = interval_doc(row.interval);
    SpeedupDoc {
        actual: row.actual.and_then(number),
        error_pct: row.error_pct.and_then(number),
        interval: interval.map(number),
        metric: row.metric.clone(),
        projected: number(row.projected),
        cannot_bound,
    }
}

/// The `seqpoint/1` document for a selection. `command` records how to reproduce it.
pub fn select_document(log: &RunLog, selection: &Selection, command: Option<String>) -> SelectDoc {
    let names = log.metric_names();
    let excluded = selection.options.exclude.excluded_rows(log);
    // The strata were read for the selection itself, so they read again here.
    let shares = excluded_shares(log, selection)
        .unwrap_or_else(|_| vec![ExcludedShare::default(); selection.seqpoints.len()]);
    let seqpoints = selection
        .seqpoints
        .iter()
        .zip(&shares)
        .map(|(sp, share)| SeqPointDoc {
            id: sp.id,
            stratum: sp.stratum,
            iteration: sp.iteration,
            epoch: sp.epoch,
            key: sp.key.clone(),
            weight: sp.weight,
            excluded: share.iterations,
            bin: BinRange {
                min: sp.bin_min.clone(),
                max: sp.bin_max.clone(),
            },
            alternates: sp.alternates.clone(),
            alternate_metrics: names
                .iter()
                .enumerate()
                .map(|(m, n)| {
                    let values = sp
                        .alternates
                        .iter()
                        .filter_map(|&it| log.iterations.row_of(it))
                        .map(|row| log.configs[0].metrics[m].values[row])
                        .collect();
                    (n.clone(), values)
                })
                .filter(|(_, values): &(String, Vec<f64>)| !values.is_empty())
                .collect(),
            alternate_expected: names
                .iter()
                .enumerate()
                .filter(|_| log.proxy.is_none())
                .filter_map(|(m, name)| {
                    let values: Option<Vec<f64>> = sp
                        .alternates
                        .iter()
                        .map(|&it| sp.bin.curve.at(log.key(log.iterations.row_of(it)?), m))
                        .collect();
                    values.filter(|v| !v.is_empty()).map(|v| (name.clone(), v))
                })
                .collect(),
            metrics: metric_map(&names, &sp.values[0]),
            expected: expected_map(log, &names, sp, sp.row),
            compare_metrics: sp.values.get(1).map(|v| metric_map(&names, v)),
            bin_stats: names
                .iter()
                .enumerate()
                .map(|(m, n)| {
                    let moments = &sp.bin.moments[0][m];
                    let key = &sp.key_noise[m];
                    let stats = BinStats {
                        count: moments.count,
                        mean: moments.mean,
                        sd: moments.sample_variance().sqrt(),
                        key_cv: Some(key.logged_cv),
                        key_offset: Some(key.offset),
                        key_count: Some(key.count),
                        excluded_mean: (share.iterations > 0).then(|| share.baseline_mean[m]),
                        levels: Some(sp.bin.curve.levels(m).0)
                            .filter(|l| l.iter().any(|&v| v != 0.0)),
                    };
                    (n.clone(), stats)
                })
                .collect(),
        })
        .collect();
    SelectDoc {
        schema: SCHEMA.to_string(),
        input: InputDoc {
            path: log.source.clone(),
            iterations: selection.kept_iterations(),
            excluded_iterations: excluded,
            epochs: log.epoch_count(),
            key: log.key_names.clone(),
            unique_keys: selection.unique_keys as u64,
            metrics: names.clone(),
            compare: log.compare().map(|c| c.source.clone()),
            iteration_like: log.iteration_like.clone(),
            skipped_rows: log.skipped.count,
        },
        selection: SelectionDoc {
            method: selection.method.name().to_string(),
            binning_gap_pct: selection.binning_gap.map(|g| 100.0 * g),
            pick: selection.pick.name().to_string(),
            bins: selection.bins(),
            target_error_pct: match selection.options.bins {
                BinCount::Target(t) => Some(t),
                BinCount::Fixed(_) => None,
            },
            cost: log
                .proxy
                .map_or(MEASURED_COST.to_string(), |c| c.to_string()),
            warmup: selection.options.warmup,
            exclude: selection.options.exclude.texts(),
            seed: selection.options.seed,
            samples: selection.options.samples,
            strata: selection.options.strata.to_string(),
            target_met: selection.target.as_ref().map(|t| t.met),
            advice: selection
                .target
                .as_ref()
                .and_then(|t| t.advice.as_ref().map(ToString::to_string)),
            per_stratum: if selection.options.strata == crate::select::Strata::None {
                Vec::new()
            } else {
                selection.strata.clone()
            },
        },
        seqpoints,
        projection: selection.projection.totals.iter().map(total_doc).collect(),
        speedup: selection.projection.speedups.first().map(speedup_doc),
        speedups: selection
            .projection
            .speedups
            .iter()
            .map(speedup_doc)
            .collect(),
        profiling_reduction: selection.projection.profiling_reduction,
        iterations_to_profile: None,
        profiled_share: None,
        command,
        plan: None,
        baselines: Vec::new(),
    }
}

/// The `plan` section of the `seqpoint/1` document.
pub fn plan_document(log: &RunLog, selection: &Selection, plan: &ProfilePlan) -> PlanDoc {
    let (rule, budget, target) = match plan.rule {
        PlanRule::Samples(_) => ("samples", None, None),
        PlanRule::Budget(b) => ("budget", Some(b), None),
        PlanRule::Target(t) => ("target", None, Some(t)),
    };
    let bins = plan
        .bins
        .iter()
        .map(|b| PlannedBinDoc {
            seqpoint: b.seqpoint,
            samples: b.samples(),
            weight: selection.seqpoints[b.seqpoint].weight,
        })
        .collect();
    let names = log.metric_names();
    let row_doc = |seqpoint: usize, r: u32| ProfileRowDoc {
        iteration: log.iterations.get(r as usize),
        seqpoint,
        expected: expected_map(log, &names, &selection.seqpoints[seqpoint], r as usize),
        metrics: metric_map(
            &names,
            &log.configs[0]
                .metrics
                .iter()
                .map(|m| m.values[r as usize])
                .collect::<Vec<f64>>(),
        ),
        epoch: log.epochs.as_ref().map(|e| e[r as usize]),
        key: log.key(r as usize).to_vec(),
    };
    let profile = plan
        .bins
        .iter()
        .flat_map(|b| b.rows.iter().map(|&r| row_doc(b.seqpoint, r)))
        .collect();
    let reserve = plan
        .bins
        .iter()
        .flat_map(|b| b.reserve.iter().map(|&r| row_doc(b.seqpoint, r)))
        .collect();
    PlanDoc {
        rule: rule.to_string(),
        budget,
        target_error_pct: target,
        met: plan.met,
        iterations: plan.iterations(),
        bins,
        profile,
        reserve,
        projection: plan.projection.totals.iter().map(total_doc).collect(),
        speedup: plan.projection.speedups.first().map(speedup_doc),
        profiling_reduction: Some(plan.projection.profiling_reduction),
    }
}

/// The document `seqpoint select` writes, made once and handed to every writer (the JSON
/// text, the CSV lists, the SimPoint set): the selection with its profiling plan (if any) and,
/// given `baselines`, the naive baselines at the same number of profiled iterations. The
/// explorer's export makes it here too, so both write the same bytes (the explorer adds
/// `command`).
pub fn select_file_document(
    log: &RunLog,
    selection: &Selection,
    plan: Option<&ProfilePlan>,
    command: Option<String>,
    baselines: Option<&Baselines>,
) -> SelectDoc {
    let profiled = plan.map_or(selection.bins() as u64, ProfilePlan::iterations);
    let options = &selection.options;
    let mut doc = select_document(log, selection, command);
    doc.plan = plan.map(|p| plan_document(log, selection, p));
    if let Some(plan) = plan {
        if let PlanRule::Target(t) = plan.rule {
            // The target was met (or not) by the plan.
            doc.selection.target_error_pct = Some(t);
            doc.selection.target_met = plan.met;
            doc.selection.advice = super::table::plan_shortfall(selection, plan);
        } else if let Some(met) = plan.met {
            // A budget's plan judged on the target K was chosen for: its figures decide.
            doc.selection.target_met = Some(met);
            doc.selection.advice = super::table::budget_advice(selection, plan);
        }
        // The top level describes what is to be profiled: the plan's iterations.
        let projection = &plan.projection;
        doc.projection = projection.totals.iter().map(total_doc).collect();
        doc.speedup = projection.speedups.first().map(speedup_doc);
        doc.speedups = projection.speedups.iter().map(speedup_doc).collect();
        doc.profiling_reduction = projection.profiling_reduction;
    }
    doc.iterations_to_profile = Some(profiled);
    doc.profiled_share = Some(if plan.is_some() {
        plan.map_or(0.0, |p| p.projection.profiled_share())
    } else {
        selection.projection.profiled_share()
    });
    if let Some(baselines) = baselines {
        doc.baselines = baselines.all(profiled as usize, options.warmup, options.seed);
    }
    doc
}

/// A document's JSON file: pretty-printed, one line end after it.
pub fn document_text<T: serde::Serialize>(doc: &T) -> String {
    serde_json::to_string_pretty(doc).expect("plain data serialises") + "\n"
}

/// The JSON file `seqpoint select` writes (`select_file_document` as text).
pub fn select_json(
    log: &RunLog,
    selection: &Selection,
    plan: Option<&ProfilePlan>,
    command: Option<String>,
    baselines: &Baselines,
) -> String {
    document_text(&select_file_document(
        log,
        selection,
        plan,
        command,
        Some(baselines),
    ))
}

/// The `seqpoint-report/1` document: the findings of `seqpoint report` and what they were made
/// on: `log` less the `exclude`d iterations.
pub fn report_document(log: &RunLog, exclude: &Exclusion, findings: Vec<Finding>) -> ReportDoc {
    let excluded = exclude.excluded_rows(log);
    ReportDoc {
        schema: REPORT_SCHEMA.to_string(),
        input: ReportInput {
            path: log.source.clone(),
            compare: log.compare().map(|c| c.source.clone()),
            iterations: log.len() as u64 - excluded,
            excluded_iterations: excluded,
            exclude: exclude.texts(),
            epochs: log.epoch_count(),
            key: log.key_names.clone(),
            metrics: log.metric_names(),
            skipped_rows: log.skipped.count,
        },
        findings,
    }
}

/// The first figure of a projection that is not a finite number (NaN or infinite), by name:
/// such a figure is never written (JSON would hold `null`, a table `inf`) with exit status 0.
pub fn non_finite_figure(report: &crate::doc::ProjectionReport) -> Option<String> {
    let mut figures: Vec<(String, f64)> = vec![
        ("run_iterations".into(), report.run_iterations),
        ("scale".into(), report.scale),
    ];
    for m in &report.metrics {
        let name = |what: &str| format!("{} {what}", m.metric);
        figures.push((name("projected total"), m.projected_total));
        figures.extend(m.interval.iter().map(|&v| (name("interval"), v)));
        figures.extend(m.interval_within_bin.iter().map(|&v| (name("interval"), v)));
        figures.extend(m.baseline_total.map(|v| (name("baseline total"), v)));
        figures.extend(m.speedup.map(|v| (name("speedup"), v)));
        for pair in [m.baseline_interval, m.interval_samples, m.speedup_interval]
            .into_iter()
            .flatten()
        {
            figures.extend(pair.iter().map(|&v| (name("interval"), v)));
        }
        figures.push((name("missing share"), m.missing_share));
    }
    figures
        .into_iter()
        .find(|(_, v)| !v.is_finite())
        .map(|(name, v)| format!("{name} is {v}"))
}
