//! The error target: when a point of the error curve meets it, the smallest K (per stratum)
//! that does, and what to do when none does (advice as data, put into words by `output`).

use super::{Progress, SelectError};
use crate::pick::{BinPicker, SeqPoint};
use crate::project::{project, project_total, Projection};
use crate::runlog::RunLog;
use crate::stats::half_width;

/// Under `--target-by measured`, no K whose 95% interval is wider than this many times the
/// target meets it.
pub const MEASURED_INTERVAL_LIMIT: f64 = 10.0;

/// A measured error this many times below its interval's half-width is likely luck.
pub const LUCK_RATIO: f64 = 3.0;

/// How the error target is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum TargetRule {
    /// Measured error and the 95% interval must both be within the target.
    #[default]
    Interval,
    /// Measured error alone (the published rule; a lucky pick can pass).
    Measured,
}

/// One K of the error-versus-K curve.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct CurvePoint {
    pub k: usize,
    pub bins: usize,
    pub worst_error_pct: f64,
    pub worst_half_width_pct: f64,
}

impl CurvePoint {
    /// The point of `k`: these SeqPoints projected over the run whose totals are `actual`.
    pub(crate) fn of(
        log: &RunLog,
        actual: &[Vec<f64>],
        k: usize,
        seqpoints: &[SeqPoint],
        samples: u64,
    ) -> CurvePoint {
        let projection = project(log, actual, seqpoints, samples);
        Self::of_projection(k, seqpoints.len(), &projection)
    }

    /// The point of a projection made of `bins` SeqPoints at `k` (a plan's, too).
    pub(crate) fn of_projection(k: usize, bins: usize, projection: &Projection) -> CurvePoint {
        CurvePoint {
            k,
            bins,
            worst_error_pct: projection.worst_error_pct(),
            worst_half_width_pct: projection.worst_half_width_pct(),
        }
    }

    pub(super) fn meets(&self, target: f64, rule: TargetRule) -> bool {
        let interval_limit = match rule {
            TargetRule::Interval => target,
            // The measured error alone, but never where the interval says the error could as
            // well be ten times the target: a hit there is luck.
            TargetRule::Measured => MEASURED_INTERVAL_LIMIT * target,
        };
        self.worst_error_pct <= target
            && crate::stats::meets_target(self.worst_half_width_pct, interval_limit)
    }

    /// How far from the target (<= 1 means met), for choosing the best K when none meets it.
    fn shortfall(&self, target: f64, rule: TargetRule) -> f64 {
        let interval = match rule {
            TargetRule::Interval => self.worst_half_width_pct,
            TargetRule::Measured => self.worst_half_width_pct / MEASURED_INTERVAL_LIMIT,
        };
        self.worst_error_pct.max(interval) / target
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct TargetOutcome {
    pub target_pct: f64,
    pub rule: TargetRule,
    pub met: bool,
    /// What would meet the target when it is not met.
    pub advice: Option<Advice>,
}

/// The error-target search for a run without strata, read off an error curve that covers
/// K = 1..=`limit`: the smallest K that meets the target, else the one that misses it least
/// (the earliest of equals), exactly what `TargetSearch` finds by computing the points.
pub(super) fn smallest_meeting(
    curve: &[CurvePoint],
    limit: usize,
    target: f64,
    rule: TargetRule,
) -> Option<(Vec<usize>, CurvePoint)> {
    let points = curve.get(..limit)?;
    if points.iter().enumerate().any(|(i, p)| p.k != i + 1) {
        return None;
    }
    let mut choice = TargetChoice::new(target, rule);
    for &point in points {
        if choice.offer(point) {
            break;
        }
    }
    choice.chosen()
}

/// The target rule over points offered in K order: the first that meets the target, else
/// the one that misses it least (the earliest of equals).
pub(super) struct TargetChoice {
    target: f64,
    rule: TargetRule,
    best: Option<CurvePoint>,
    pub(super) met: bool,
}

impl TargetChoice {
    pub(super) fn new(target: f64, rule: TargetRule) -> Self {
        TargetChoice {
            target,
            rule,
            best: None,
            met: false,
        }
    }

    /// Takes the next point; true once one meets the target (offer no more).
    pub(super) fn offer(&mut self, point: CurvePoint) -> bool {
        let (target, rule) = (self.target, self.rule);
        self.met = point.meets(target, rule);
        let better = self
            .best
            .is_none_or(|b| point.shortfall(target, rule) < b.shortfall(target, rule));
        if self.met || better {
            self.best = Some(point);
        }
        self.met
    }

    pub(super) fn chosen(&self) -> Option<(Vec<usize>, CurvePoint)> {
        self.best.map(|point| (vec![point.k], point))
    }
}

/// What would meet a missed target, as data (`output::table` puts it into words, for the
/// `select` table, the JSON document and the explorer alike).
#[derive(Debug, Clone, PartialEq)]
pub struct Advice {
    pub target_pct: f64,
    /// The largest K tried, per stratum when `per_stratum`.
    pub max_bins: usize,
    pub per_stratum: bool,
    /// The point that missed the target least.
    pub best: CurvePoint,
    /// `--samples` this many per SeqPoint meets the target at the best K (computed).
    pub samples: Option<u64>,
    pub bins: MoreBins,
}

/// Whether more bins could help a missed target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MoreBins {
    /// Nothing to say about bins.
    Unneeded,
    /// Allow more bins: `--max-bins` this many meets the target (computed).
    Allow(usize),
    /// No K up to this many meets the target either (computed).
    NoneUpTo(usize),
    /// Every unique key already has its own bin (K = this many): only the spread within keys
    /// is left, so more bins cannot help.
    CannotHelp(usize),
}

/// The error-target search over strata: K per stratum, judged on the whole run.
///
/// Every stratum starts at K = 1. While the whole run's projection (SeqPoints of all strata
/// together; totals sum over strata) misses the target, one bin is added to the stratum that
/// contributes most to the miss: the largest of its absolute error and (under the interval rule)
/// its 95% half-width, each as a share of the whole run's total of that configuration and metric,
/// and its share of the speedup error `|dA_s / A - dB_s / B|`. It stops when the run meets the
/// target or no stratum can grow, and returns the K per stratum of the best point seen.
/// Without strata this is exactly "the smallest K that meets the target".
pub(super) struct TargetSearch<'a> {
    pub(super) log: &'a RunLog,
    pub(super) pickers: &'a [BinPicker<'a>],
    pub(super) actual: &'a [Vec<f64>],
    pub(super) strata_actual: &'a [Vec<Vec<f64>>],
    pub(super) limits: &'a [usize],
    pub(super) target: f64,
    pub(super) rule: TargetRule,
    pub(super) samples: u64,
}

impl TargetSearch<'_> {
    /// `None` when `progress` stopped the search.
    pub(super) fn run(
        &self,
        progress: Progress,
    ) -> Result<Option<(Vec<usize>, CurvePoint)>, SelectError> {
        let strata = self.pickers.len();
        // Each step adds one bin to one stratum: at most this many steps.
        let steps = (self.limits.iter().sum::<usize>() + 1).saturating_sub(strata);
        let mut cache: Vec<std::collections::HashMap<usize, (Vec<SeqPoint>, f64)>> =
            vec![Default::default(); strata];
        let mut ks = vec![1usize; strata];
        let mut best: Option<(f64, Vec<usize>, CurvePoint)> = None;
        loop {
            for s in 0..strata {
                if !cache[s].contains_key(&ks[s]) {
                    let seqpoints = self.pickers[s].select(ks[s])?;
                    let share = self.contribution(s, &seqpoints);
                    cache[s].insert(ks[s], (seqpoints, share));
                }
            }
            let seqpoints: Vec<SeqPoint> = (0..strata)
                .flat_map(|s| cache[s][&ks[s]].0.iter().cloned())
                .collect();
            let point = CurvePoint::of(
                self.log,
                self.actual,
                ks.iter().sum(),
                &seqpoints,
                self.samples,
            );
            let shortfall = point.shortfall(self.target, self.rule);
            let met = point.meets(self.target, self.rule);
            if met || best.as_ref().is_none_or(|b| shortfall < b.0) {
                best = Some((shortfall, ks.clone(), point));
            }
            if met {
                break;
            }
            let done = (ks.iter().sum::<usize>() + 1).saturating_sub(strata);
            if progress(done, steps.max(done)).is_break() {
                return Ok(None);
            }
            let grow = (0..strata)
                .filter(|&s| ks[s] < self.limits[s])
                .max_by(|&a, &b| {
                    cache[a][&ks[a]]
                        .1
                        .total_cmp(&cache[b][&ks[b]].1)
                        .then(b.cmp(&a))
                });
            match grow {
                Some(s) => ks[s] += 1,
                None => break,
            }
        }
        let (_, ks, point) = best.expect("at least one point tried");
        Ok(Some((ks, point)))
    }

    /// How much stratum `s`, with these SeqPoints, adds to the whole run's miss (a share).
    fn contribution(&self, s: usize, seqpoints: &[SeqPoint]) -> f64 {
        let mut worst: f64 = 0.0;
        // Signed error of each configuration and metric, as a share of the run's total.
        let errors: Vec<Vec<f64>> = self
            .actual
            .iter()
            .enumerate()
            .map(|(c, totals)| {
                totals
                    .iter()
                    .enumerate()
                    .map(|(m, &total)| {
                        if total <= 0.0 {
                            return 0.0;
                        }
                        let estimate = project_total(seqpoints, c, m, self.samples);
                        if self.rule == TargetRule::Interval {
                            worst = worst.max(half_width(estimate.variance) / total);
                        }
                        (estimate.value - self.strata_actual[s][c][m]) / total
                    })
                    .collect()
            })
            .collect();
        for per_metric in &errors {
            worst = per_metric.iter().fold(worst, |w, e| w.max(e.abs()));
        }
        if let [baseline, compare, ..] = errors.as_slice() {
            for (a, b) in baseline.iter().zip(compare) {
                worst = worst.max((a - b).abs());
            }
        }
        worst
    }
}
#[cfg(test)]
mod tests {
    use std::ops::ControlFlow;

    use super::*;
    use crate::binning::Method;
    use crate::runlog::test_log as log;
    use crate::runlog::{load_bytes, InputFormat, LoadOptions};
    use crate::select::{run_selection, BinCount, SelectOptions, Selectors, Strata, StrataGroups};

    #[test]
    fn the_measured_rule_never_takes_an_interval_ten_times_the_target() {
        let point = |error, half| CurvePoint {
            k: 1,
            bins: 1,
            worst_error_pct: error,
            worst_half_width_pct: half,
        };
        assert!(point(0.5, 9.9).meets(1.0, TargetRule::Measured));
        assert!(!point(0.5, 10.1).meets(1.0, TargetRule::Measured));
        assert!(!point(0.5, 1.1).meets(1.0, TargetRule::Interval));
        assert!(!point(1.1, 0.5).meets(1.0, TargetRule::Measured));
        // On the speech log the measured rule used to stop at K = 1 (held-out error 9.2%).
        let speech = crate::runlog::test_speech_pair();
        let selection = run_selection(
            &speech,
            &SelectOptions {
                target_by: TargetRule::Measured,
                ..SelectOptions::default()
            },
        )
        .unwrap();
        assert!(selection.bins() > 1);
        assert!(selection.projection.worst_half_width_pct() <= 10.0);
    }

    #[test]
    fn advice_does_not_ask_for_bins_that_cannot_exist() {
        // Three keys, each with a spread: K = 3 is as far as binning goes.
        let narrow = log("seq_len,time_ms\n1,1\n1,3\n2,4\n2,7\n3,9\n3,12\n1,2\n2,5\n3,10\n");
        let options = SelectOptions {
            bins: BinCount::Target(crate::options::MIN_TARGET_PCT),
            ..SelectOptions::default()
        };
        let selection = run_selection(&narrow, &options).unwrap();
        let advice = selection.target.unwrap().advice.unwrap().to_string();
        assert!(!advice.contains("--max-bins"), "{advice}");
        assert!(advice.contains("own bin (K = 3)"), "{advice}");
    }

    #[test]
    fn advised_max_bins_meet_the_target_when_followed() {
        // 40 keys, time = key^2 exactly (two iterations each): one bin's offset is far from
        // the target (its interval ±8%), two bins' offsets nearly cancel (±0.94%); with
        // --max-bins 1 the advice names that K.
        let rows: String = (1..=40)
            .flat_map(|i| [i, i])
            .map(|i| format!("{i},{}\n", i * i))
            .collect();
        let wide = log(&format!("seq_len,time_ms\n{rows}"));
        let options = SelectOptions {
            bins: BinCount::Target(1.0),
            max_bins: 1,
            ..SelectOptions::default()
        };
        let advice = run_selection(&wide, &options)
            .unwrap()
            .target
            .unwrap()
            .advice
            .unwrap();
        let MoreBins::Allow(k) = advice.bins else {
            panic!("{advice}");
        };
        assert!(advice.to_string().contains(&format!("--max-bins {k}")));
        let followed = SelectOptions {
            max_bins: k,
            ..options
        };
        let selection = run_selection(&wide, &followed).unwrap();
        assert_eq!(selection.bins(), k);
        assert!(selection.target.unwrap().met);
    }

    #[test]
    fn the_target_read_off_the_curve_or_searched_in_parallel_equals_the_search() {
        let rows: String = (0..400u32)
            .map(|i| {
                let key = 10 + (i * 7919) % 61;
                format!(
                    "{key},{}\n",
                    f64::from(key * key) * (1.0 + f64::from(i % 7) / 40.0)
                )
            })
            .collect();
        let log = log(&format!("seq_len,time_ms\n{rows}"));
        let strata = StrataGroups::new(&log, Strata::None, 0).unwrap();
        let mut outcomes = std::collections::HashSet::new();
        for method in [Method::Optimal, Method::Quantile] {
            for (target, rule) in [
                (5.0, TargetRule::Interval),
                (1.0, TargetRule::Interval),
                (0.01, TargetRule::Interval),
                (0.5, TargetRule::Measured),
            ] {
                let options = SelectOptions {
                    bins: BinCount::Target(target),
                    method: Some(method),
                    target_by: rule,
                    max_bins: 24,
                    ..SelectOptions::default()
                };
                let selectors = Selectors::new(&log, &strata, &options, &mut |_, _| {
                    ControlFlow::Continue(())
                })
                .unwrap()
                .expect("never stopped");
                let mut go_on = |_, _| ControlFlow::Continue(());
                let curve = selectors.curve(&options, &mut go_on).unwrap().unwrap();
                assert_eq!(curve.len(), 24);
                let read = selectors
                    .choose(&options, curve, &mut go_on)
                    .unwrap()
                    .unwrap();
                let searched = selectors
                    .choose(&options, Vec::new(), &mut go_on)
                    .unwrap()
                    .unwrap();
                assert_eq!(
                    read.seqpoints, searched.seqpoints,
                    "{method:?} {target} {rule:?}"
                );
                assert_eq!(read.target, searched.target);
                assert_eq!(read.strata, searched.strata);
                // Both find what the stratum-by-stratum search finds on the one stratum.
                let general = TargetSearch {
                    log: &log,
                    pickers: &selectors.pickers,
                    actual: &strata.actual,
                    strata_actual: &strata.stratum_actual,
                    limits: &[24],
                    target,
                    rule,
                    samples: 1,
                };
                let (ks, point) = general.run(&mut go_on).unwrap().unwrap();
                assert_eq!(ks, [read.bins()], "{method:?} {target} {rule:?}");
                let own = &read.strata[0];
                assert_eq!(point.worst_error_pct, own.worst_error_pct);
                assert_eq!(point.worst_half_width_pct, own.worst_half_width_pct);
                outcomes.insert(read.target.unwrap().met);
            }
        }
        assert_eq!(
            outcomes.len(),
            2,
            "both a met and a missed target were tried"
        );
    }

    #[test]
    fn target_picks_smallest_k_that_is_exact_for_a_key_function() {
        // time = key^2 exactly: 3 unique keys -> K=3 gives zero error and zero spread.
        let log = log("seq_len,time_ms\n1,1\n2,4\n3,9\n1,1\n3,9\n2,4\n3,9\n");
        let options = SelectOptions {
            bins: BinCount::Target(crate::options::MIN_TARGET_PCT),
            ..SelectOptions::default()
        };
        let selection = run_selection(&log, &options).unwrap();
        assert_eq!(selection.bins(), 3);
        assert!(selection.target.as_ref().unwrap().met);
        assert_eq!(selection.seqpoints.iter().map(|s| s.weight).sum::<u64>(), 7);
        assert_eq!(selection.curve.len(), 3);
    }

    #[test]
    fn target_chooses_k_per_stratum() {
        // Phase 1: one key, constant time: exact with K = 1. Phase 2: keys 1..4, time = key^2:
        // exact only with K = 4. The target is met with K = 1 + 4, not 4 in each.
        let log = log("seq_len,time_ms\n1,5\n1,5\n1,5\n1,5\n1,1\n2,4\n3,9\n4,16\n");
        let options = SelectOptions {
            bins: BinCount::Target(crate::options::MIN_TARGET_PCT),
            strata: Strata::Phases(2),
            ..SelectOptions::default()
        };
        let selection = run_selection(&log, &options).unwrap();
        let ks: Vec<usize> = selection.strata.iter().map(|s| s.k).collect();
        assert_eq!(ks, vec![1, 4]);
        assert!(selection.target.as_ref().unwrap().met);
        assert_eq!(selection.projection.worst_error_pct(), 0.0);
        // Weights are per stratum and sum to each stratum's iterations.
        let weight = |s: usize| -> u64 {
            selection
                .seqpoints
                .iter()
                .filter(|p| p.stratum == Some(s))
                .map(|p| p.weight)
                .sum()
        };
        assert_eq!((weight(0), weight(1)), (4, 4));
    }

    #[test]
    fn the_target_applies_to_every_metric() {
        // Time is exact per key with K = 2; energy varies within key 2 (5, 9, 8: mean 22/3,
        // which no iteration holds), so the iteration picked for key 2 (its times tie: its
        // place in the run decides) projects 2 * 1 + 3 * its energy, never the actual 24.
        let text = "seq_len,time_ms,energy_j\n1,10,1\n1,10,1\n2,20,5\n2,20,9\n2,20,8\n";
        let options = SelectOptions {
            bins: BinCount::Target(crate::options::MIN_TARGET_PCT),
            ..SelectOptions::default()
        };
        let log_both = log(text);
        let both = run_selection(&log_both, &options).unwrap();
        assert!(!both.target.as_ref().unwrap().met);
        let energy = &both.projection.totals[1];
        let picked = both.seqpoints.iter().find(|sp| sp.key == [2]).unwrap();
        let picked_energy = log_both.configs[0].metrics[1].values[picked.row];
        assert_eq!(energy.metric, "energy_j");
        assert_eq!(energy.projected, 2.0 + 3.0 * picked_energy);
        assert_eq!(energy.actual, Some(24.0));
        let time_only = load_bytes(
            "t.csv",
            text.as_bytes(),
            InputFormat::Csv,
            &LoadOptions {
                metrics: vec!["time_ms".into()],
                ..LoadOptions::default()
            },
        )
        .unwrap();
        let selection = run_selection(&time_only, &options).unwrap();
        assert!(selection.target.as_ref().unwrap().met);
        assert_eq!(selection.bins(), 2);
    }

    #[test]
    fn unmet_target_says_what_would_meet_it() {
        // One key with noisy times around 10, the pick at 10: no K can shrink the interval,
        // more samples can; following the advice meets the target.
        let text = "seq_len,time_ms\n5,10\n5,11\n5,9\n5,10\n5,12\n5,8\n5,10\n5,10.5\n5,9.5\n5,10\n";
        let log = log(text);
        let options = SelectOptions {
            bins: BinCount::Target(2.0),
            ..SelectOptions::default()
        };
        let selection = run_selection(&log, &options).unwrap();
        let target = selection.target.unwrap();
        assert!(!target.met);
        let advice = target.advice.unwrap();
        let samples = advice.samples.unwrap();
        assert!(advice.to_string().contains(&format!("--samples {samples}")));
        let with = |samples| SelectOptions {
            samples,
            ..options.clone()
        };
        assert!(
            run_selection(&log, &with(samples))
                .unwrap()
                .target
                .unwrap()
                .met
        );
        // And it is the fewest that does.
        assert!(
            !run_selection(&log, &with(samples - 1))
                .unwrap()
                .target
                .unwrap()
                .met
        );
    }
}
