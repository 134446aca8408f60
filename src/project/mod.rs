//! Projection: whole-run totals from SeqPoints against the full log (`Projection`, what
//! `select` reports), and `project` from measurements on a new configuration (`document`).
//!
//! The one variance of a projected total and of a speedup is `crate::estimate`'s; `stratified`
//! carries it to measured samples. The measurements themselves are read by `runlog::measured`.

pub mod document;
pub mod merge;
pub mod paired;
pub mod paired_bin;
pub mod ratio;
pub mod request;
mod run_bins;
pub mod shortfall;
pub mod stratified;
pub mod target;
pub mod trend;
pub mod validate;

use std::collections::BTreeSet;

use crate::doc::{ProjectionReport, SelectDoc};
use crate::pick::SeqPoint;
use crate::project::request::{ProjectError, ProjectOptions};
use crate::runlog::measured::Measurements;
use crate::runlog::{ConfigRole, RunLog};
use crate::stats::{compensated_sum, percent_error};

pub use crate::estimate::{
    baseline_total, new_noise, new_total, paired_speedup, stratum_variance, Estimate, KeyNoise,
    PickedBin, StratumVariance,
};

/// `project`: the new configuration's measurements projected over the run, each figure with
/// its interval; with `baseline` (a lengths-only selection, `--baseline`) both
/// configurations' paired. With a target, the verdict and its top-up, and where a top-up it
/// listed was measured and the target is still not met, why (`shortfall`).
pub fn project_measured(
    seqpoints_path: &str,
    doc: &SelectDoc,
    baseline: Option<&Measurements>,
    new: &Measurements,
    options: &ProjectOptions,
) -> Result<ProjectionReport, ProjectError> {
    let on = |new: &Measurements, baseline: Option<&Measurements>| match baseline {
        Some(baseline) => paired::project_paired(seqpoints_path, doc, baseline, new, options),
        None => document::project_measurements(seqpoints_path, doc, new, options),
    };
    let mut report = on(new, baseline)?;
    if let Some(now) = &report.target {
        let judge_on = |keep: &[BTreeSet<u64>]| {
            let restricted_baseline = baseline.map(|b| shortfall::restricted(b, keep));
            on(
                &shortfall::restricted(new, keep),
                restricted_baseline.as_ref(),
            )
            .ok()
            .and_then(|r| r.target)
        };
        let why = shortfall::explain(doc, new, now, &judge_on);
        if let Some(target) = &mut report.target {
            target.shortfall = why;
        }
    }
    Ok(report)
}

/// The SeqPoints' picks of metric `metric` as the estimate takes them: each SeqPoint's own
/// values on every configuration, standing for `samples[b]` profiled iterations (at most its
/// bin's).
pub fn picked_bins(seqpoints: &[SeqPoint], metric: usize, samples: &[u64]) -> Vec<PickedBin> {
    seqpoints
        .iter()
        .zip(samples)
        .map(|(sp, &m)| PickedBin {
            weight: sp.weight as f64,
            baseline: vec![sp.values[0][metric]],
            new: sp
                .values
                .get(1)
                .map(|v| vec![v[metric]])
                .unwrap_or_default(),
            distinct: m.clamp(1, sp.weight.max(1)),
            key: sp.key_noise[metric],
            stratum: sp.stratum.unwrap_or(0),
        })
        .collect()
}

/// The projected total of configuration `config` (0 the baseline) from `picked_bins`.
pub fn total_of(bins: &[PickedBin], config: usize) -> Estimate {
    if config == 0 {
        baseline_total(bins)
    } else {
        new_total(bins)
    }
}

/// `P_c = sum_b w_b m_c(iter_b)` and its variance with `samples` profiled per SeqPoint.
pub fn project_total(
    seqpoints: &[SeqPoint],
    config: usize,
    metric: usize,
    samples: u64,
) -> Estimate {
    total_of(
        &picked_bins(seqpoints, metric, &vec![samples; seqpoints.len()]),
        config,
    )
}

/// One configuration and metric: projected against actual.
#[derive(Debug, Clone, PartialEq)]
pub struct TotalRow {
    pub metric: String,
    pub config: ConfigRole,
    pub actual: Option<f64>,
    pub projected: f64,
    pub error_pct: Option<f64>,
    pub interval: [f64; 2],
    pub half_width_pct: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SpeedupRow {
    pub metric: String,
    pub actual: Option<f64>,
    pub projected: f64,
    pub error_pct: Option<f64>,
    pub interval: [f64; 2],
    pub half_width_pct: f64,
}

/// Everything `select` reports about a set of SeqPoints.
#[derive(Debug, Clone, PartialEq)]
pub struct Projection {
    pub totals: Vec<TotalRow>,
    pub speedups: Vec<SpeedupRow>,
    /// Whole log's baseline time over the time of the profiled iterations.
    pub profiling_reduction: f64,
    /// Baseline time (first metric) of the profiled iterations.
    pub profiled_cost: f64,
    /// True when the metric is a proxy cost, so errors are proxy errors.
    pub proxy: bool,
}

impl Projection {
    /// The largest error over every configuration and metric (and speedup), in percent.
    pub fn worst_error_pct(&self) -> f64 {
        self.totals
            .iter()
            .filter_map(|t| t.error_pct)
            .chain(self.speedups.iter().filter_map(|s| s.error_pct))
            .fold(0.0, f64::max)
    }

    /// Share of the run's baseline time (first metric) spent on the profiled iterations.
    pub fn profiled_share(&self) -> f64 {
        if self.profiling_reduction.is_finite() && self.profiling_reduction > 0.0 {
            1.0 / self.profiling_reduction
        } else {
            0.0
        }
    }

    /// The actual totals this projection was judged against, `[config][metric]` in `log`'s
    /// order as `actual_totals` gives them; `None` when one is missing.
    pub fn actual_totals(&self, log: &RunLog) -> Option<Vec<Vec<f64>>> {
        let names = log.metric_names();
        log.configs
            .iter()
            .map(|config| {
                names
                    .iter()
                    .map(|name| {
                        self.totals
                            .iter()
                            .find(|t| t.config == config.role && &t.metric == name)?
                            .actual
                    })
                    .collect()
            })
            .collect()
    }

    /// The widest 95% interval half-width over every total and speedup, in percent.
    pub fn worst_half_width_pct(&self) -> f64 {
        self.totals
            .iter()
            .map(|t| t.half_width_pct)
            .chain(self.speedups.iter().map(|s| s.half_width_pct))
            .fold(0.0, f64::max)
    }
}

/// Actual totals of every configuration and metric: `[config][metric]`.
pub fn actual_totals(log: &RunLog) -> Vec<Vec<f64>> {
    log.configs
        .iter()
        .map(|c| {
            c.metrics
                .iter()
                .map(|m| compensated_sum(m.values.iter().copied()))
                .collect()
        })
        .collect()
}

/// Project every configuration and metric of the log from its SeqPoints.
pub fn project(
    log: &RunLog,
    actual: &[Vec<f64>],
    seqpoints: &[SeqPoint],
    samples: u64,
) -> Projection {
    project_planned(log, actual, seqpoints, &vec![samples; seqpoints.len()])
}

/// `project` with `samples[b]` profiled iterations for SeqPoint `b` (a budget plan); each
/// SeqPoint's `values` are then the mean of its profiled iterations.
pub fn project_planned(
    log: &RunLog,
    actual: &[Vec<f64>],
    seqpoints: &[SeqPoint],
    samples: &[u64],
) -> Projection {
    let bins: Vec<Vec<PickedBin>> = (0..log.metric_names().len())
        .map(|m| picked_bins(seqpoints, m, samples))
        .collect();
    // Each SeqPoint stands for its `m` profiled iterations (at most its bin's): the cost of
    // the extra ones is taken as the SeqPoint's own, until a plan lists them (`plan.rs`
    // then counts the listed iterations' logged values).
    let profiled: f64 = seqpoints
        .iter()
        .zip(samples)
        .map(|(sp, &m)| m.clamp(1, sp.weight.max(1)) as f64 * sp.values[0][0])
        .sum();
    project_bins(log, actual, &bins, profiled)
}

/// The projection of every configuration and metric from picked bins (`[metric][bin]`), the
/// profiled iterations costing `profiled` on the baseline's first metric.
pub fn project_bins(
    log: &RunLog,
    actual: &[Vec<f64>],
    bins: &[Vec<PickedBin>],
    profiled: f64,
) -> Projection {
    let names = log.metric_names();
    let mut totals = Vec::new();
    for (c, config) in log.configs.iter().enumerate() {
        for (m, name) in names.iter().enumerate() {
            let estimate = total_of(&bins[m], c);
            let actual = actual[c][m];
            totals.push(TotalRow {
                metric: name.clone(),
                config: config.role,
                actual: Some(actual),
                projected: estimate.value,
                error_pct: Some(percent_error(estimate.value, actual)),
                interval: estimate.interval(),
                half_width_pct: estimate.half_width_pct(),
            });
        }
    }
    let speedups = if log.configs.len() > 1 {
        names
            .iter()
            .enumerate()
            .map(|(m, name)| {
                let estimate = paired_speedup(&bins[m]);
                let actual = actual[0][m] / actual[1][m];
                SpeedupRow {
                    metric: name.clone(),
                    actual: Some(actual),
                    projected: estimate.value,
                    error_pct: Some(percent_error(estimate.value, actual)),
                    interval: estimate.interval(),
                    half_width_pct: estimate.half_width_pct(),
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    Projection {
        totals,
        speedups,
        profiled_cost: profiled,
        profiling_reduction: if profiled > 0.0 {
            actual[0][0] / profiled
        } else {
            f64::INFINITY
        },
        proxy: log.proxy.is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binning::Method;
    use crate::groups::KeyGroups;
    use crate::pick::{BinPicker, Pick, PickSettings};
    use crate::stats::Z95;

    fn settings(max_bins: usize) -> PickSettings {
        PickSettings {
            method: Method::Optimal,
            pick: Pick::NearestMean,
            warmup: 0,
            seed: 0,
            max_bins,
        }
    }

    use crate::runlog::test_log as log;

    #[test]
    fn projection_by_hand() {
        // Two keys, two bins. Key 10: times 1, 3 (median 2 -> both tie, earliest = row 0: 1).
        // Key 20: times 5, 6, 7 (median 6 -> row 3).
        let log = log("seq_len,time_ms\n10,1\n10,3\n20,5\n20,6\n20,7\n");
        let groups = KeyGroups::from_log(&log);
        let selector = BinPicker::new(&log, &groups, settings(2), None).unwrap();
        let sps = selector.select(2).unwrap();
        assert_eq!(
            sps.iter().map(|s| s.iteration).collect::<Vec<_>>(),
            vec![0, 3]
        );
        let estimate = project_total(&sps, 0, 0, 1);
        // P = 2*1 + 3*6 = 20; actual 22.
        assert_eq!(estimate.value, 20.0);
        // The design's variance, per bin (w x)^2 [cv^2 (1 - 1/w) + (d/x)^2 + key-mean noise]:
        // key 10: cv^2 = 2 / 2^2 = 0.5, one key, no offset: 2^2 * 0.5 * 0.5 = 1;
        // key 20: cv^2 = (2 / 6^2) / 2, (3 * 6)^2 * (1/36) * (2/3) = 6. Var = 7.
        assert!((estimate.variance - 7.0).abs() < 1e-9, "{estimate:?}");
        let projection = project(&log, &actual_totals(&log), &sps, 1);
        let row = &projection.totals[0];
        assert_eq!(row.actual, Some(22.0));
        assert!((row.error_pct.unwrap() - 100.0 * 2.0 / 22.0).abs() < 1e-12);
        assert!((row.interval[1] - (20.0 + Z95 * 7f64.sqrt())).abs() < 1e-9);
        // Profiling reduction: 22 / (1 + 6).
        assert!((projection.profiling_reduction - 22.0 / 7.0).abs() < 1e-12);
        // Two per SeqPoint cost twice as much: 22 / (2 * 1 + 2 * 6).
        let twice = project(&log, &actual_totals(&log), &sps, 2);
        assert!((twice.profiling_reduction - 22.0 / 14.0).abs() < 1e-12);
        // No bin gives more iterations than it has: 22 / (2 * 1 + 3 * 6).
        let capped = project(&log, &actual_totals(&log), &sps, 5);
        assert!((capped.profiling_reduction - 22.0 / 20.0).abs() < 1e-12);
    }

    #[test]
    fn one_bin_per_key_is_exact_when_the_metric_is_a_function_of_the_key() {
        let log = log("seq_len,time_ms\n10,2\n30,18\n10,2\n20,8\n30,18\n30,18\n");
        let groups = KeyGroups::from_log(&log);
        let selector = BinPicker::new(&log, &groups, settings(3), None).unwrap();
        let sps = selector.select(3).unwrap();
        let projection = project(&log, &actual_totals(&log), &sps, 1);
        assert_eq!(projection.totals[0].error_pct, Some(0.0));
        assert_eq!(projection.totals[0].half_width_pct, 0.0);
        assert_eq!(sps.iter().map(|s| s.weight).sum::<u64>(), 6);
    }
}
