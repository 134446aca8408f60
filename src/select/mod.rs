//! The whole `select` pipeline over plain data: the options, the `Selection` it makes and
//! `run_selection`, which the CLI calls (the explorer runs the same stages one by one).
//!
//! `strata` prepares the key groups of each stratum (one pass over the rows); `selectors`
//! bins and picks for any K, draws the error curve and chooses K; `target` holds the error
//! target's rules and advice; `plan` spreads extra profiled iterations over the SeqPoints;
//! `coverage` checks by redraws that the intervals hold what they claim.

pub mod coverage;
pub mod plan;
mod selectors;
mod strata;
mod target;

use std::ops::ControlFlow;

use crate::binning::{BinningError, Method};
use crate::pick::{Pick, SeqPoint};
use crate::project::Projection;
use crate::runlog::RunLog;

pub use selectors::Selectors;
pub use strata::{strata_rows, Strata, StrataGroups, StratumRows};
pub use target::{Advice, CurvePoint, MoreBins, TargetOutcome, TargetRule};

/// The largest K tried for an error target unless the user says otherwise (`--max-bins`).
pub const DEFAULT_MAX_BINS: usize = 64;
/// The error target, in percent, unless the user says otherwise (`--target-error`).
pub const DEFAULT_TARGET_PCT: f64 = 1.0;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BinCount {
    Fixed(usize),
    Target(f64),
}

#[derive(Debug, Clone, PartialEq)]
pub struct SelectOptions {
    pub method: Option<Method>,
    pub pick: Option<Pick>,
    pub bins: BinCount,
    pub max_bins: usize,
    pub target_by: TargetRule,
    pub warmup: u64,
    pub seed: u64,
    /// Profiled iterations per SeqPoint assumed by the intervals.
    pub samples: u64,
    pub strata: Strata,
    /// Compute the error-versus-K curve (every K up to `max_bins`); off when only the
    /// selection itself is wanted, since k-means makes each K cost a clustering.
    pub error_curve: bool,
}

impl Default for SelectOptions {
    fn default() -> Self {
        SelectOptions {
            method: None,
            pick: None,
            bins: BinCount::Target(DEFAULT_TARGET_PCT),
            max_bins: DEFAULT_MAX_BINS,
            target_by: TargetRule::Interval,
            warmup: 0,
            seed: 0,
            samples: 1,
            strata: Strata::None,
            error_curve: true,
        }
    }
}

/// One stratum of a selection: its K and how well its own SeqPoints project it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StratumOutcome {
    pub name: String,
    pub iterations: u64,
    pub k: usize,
    /// Whether this stratum's own projection meets the target (always true with fixed K). The
    /// error target applies to the whole run, so a stratum may miss it while the run meets it.
    pub met: bool,
    /// This stratum's own worst error and 95% half-width, against its own totals, in percent.
    pub worst_error_pct: f64,
    pub worst_half_width_pct: f64,
}

/// The result of `select`: SeqPoints, their projection, and how K was chosen.
#[derive(Debug, Clone)]
pub struct Selection {
    pub method: Method,
    pub pick: Pick,
    pub options: SelectOptions,
    pub seqpoints: Vec<SeqPoint>,
    pub projection: Projection,
    pub target: Option<TargetOutcome>,
    pub strata: Vec<StratumOutcome>,
    /// Error and interval for every K with the same K in every stratum.
    pub curve: Vec<CurvePoint>,
    /// Distinct keys in the whole run.
    pub unique_keys: usize,
}

impl Selection {
    pub fn bins(&self) -> usize {
        self.seqpoints.len()
    }

    /// Iterations to profile: `--samples` per SeqPoint, never more than its bin holds.
    pub fn iterations_to_profile(&self) -> u64 {
        let samples = self.options.samples.max(1);
        self.seqpoints
            .iter()
            .map(|sp| samples.min(sp.weight.max(1)))
            .sum()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    #[error(transparent)]
    Binning(#[from] BinningError),
    #[error("--strata epoch needs an epoch column in the run log")]
    NoEpochs,
    #[error("{0}")]
    Invalid(String),
}

/// The binning method and pick in effect: the options' own, else the defaults for this log.
pub fn method_and_pick(log: &RunLog, options: &SelectOptions) -> (Method, Pick) {
    let method = options.method.unwrap_or(Method::default_for(log.dims()));
    let pick = options.pick.unwrap_or(if log.proxy.is_some() {
        Pick::Median
    } else {
        Pick::NearestMean
    });
    (method, pick)
}

/// Reject options no K could satisfy, before any work (the same messages for `select` and
/// the explorer, which checks before it opens the terminal). The metric values themselves
/// are checked once, by `StrataGroups::new`.
pub fn check_options(log: &RunLog, options: &SelectOptions) -> Result<(), SelectError> {
    if options.samples == 0 {
        return Err(SelectError::Invalid("--samples must be at least 1".into()));
    }
    match options.bins {
        BinCount::Fixed(0) => return Err(SelectError::Invalid("--bins must be at least 1".into())),
        BinCount::Target(t) if !(t > 0.0 && t.is_finite()) => {
            return Err(SelectError::Invalid(format!(
                "--target-error must be a positive percentage, got {t}"
            )))
        }
        _ => {}
    }
    if options.method == Some(Method::Optimal) && log.dims() != 1 {
        return Err(BinningError::OptimalNeedsOneDim(log.dims()).into());
    }
    Ok(())
}

/// Told `(done, total)` after each K tried; `Break` stops the work (the explorer's cancel).
pub type Progress<'p> = &'p mut dyn FnMut(usize, usize) -> ControlFlow<()>;

/// What `run_selection_with_progress` is doing, for a progress display.
pub const PREPARING_BINS: &str = "preparing bins";
pub const ERROR_CURVE: &str = "error curve";
pub const CHOOSING_K: &str = "choosing K";

/// `run_selection`, telling `report` `(stage, done, total)` as it goes: the exact DP table's
/// levels, the error curve's K, the target search's K. Slow stages are k-means fits and the
/// plain DP over many thousand key groups.
pub fn run_selection_with_progress(
    log: &RunLog,
    options: &SelectOptions,
    report: &mut dyn FnMut(&'static str, usize, usize),
) -> Result<Selection, SelectError> {
    // Settings first (cheap); the metric values are checked while preparing the groups.
    check_options(log, options)?;
    let strata = StrataGroups::new(log, options.strata, options.warmup)?;
    select_on(log, &strata, options, report)
}

/// Selectors, curve and choice over prepared key groups, reporting each stage.
fn select_on(
    log: &RunLog,
    strata: &StrataGroups,
    options: &SelectOptions,
    report: &mut dyn FnMut(&'static str, usize, usize),
) -> Result<Selection, SelectError> {
    let stage = std::cell::Cell::new(PREPARING_BINS);
    let mut told = |done, total| {
        report(stage.get(), done, total);
        ControlFlow::Continue(())
    };
    // Each stage is told as it starts (total 0: not known yet), not only after its first step.
    let _ = told(0, 0);
    let selectors =
        Selectors::new_with_progress(log, strata, options, &mut told)?.expect("never stopped");
    stage.set(ERROR_CURVE);
    if selectors.curve_len(options) > 0 {
        let _ = told(0, selectors.curve_len(options));
    }
    let curve = selectors.curve(options, &mut told)?.expect("never stopped");
    stage.set(CHOOSING_K);
    Ok(selectors
        .choose(options, curve, &mut told)?
        .expect("never stopped"))
}

pub fn run_selection(log: &RunLog, options: &SelectOptions) -> Result<Selection, SelectError> {
    run_selection_with_progress(log, options, &mut |_, _, _| {})
}

/// `run_selection` over key groups prepared earlier (same strata and warm-up): no pass over
/// the rows, so it suits repeated recomputes.
pub fn run_selection_on(
    log: &RunLog,
    strata: &StrataGroups,
    options: &SelectOptions,
) -> Result<Selection, SelectError> {
    check_options(log, options)?;
    select_on(log, strata, options, &mut |_, _, _| {})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runlog::test_log as log;

    #[test]
    fn selecting_reports_its_stages_in_order() {
        let rows: String = (0..300u32)
            .map(|i| format!("{},{}\n", 10 + i % 40, (10 + i % 40) * 2 + i % 3))
            .collect();
        let log = log(&format!("seq_len,time_ms\n{rows}"));
        let options = SelectOptions {
            bins: BinCount::Target(0.001),
            max_bins: 12,
            error_curve: true,
            ..SelectOptions::default()
        };
        let mut stages: Vec<&str> = Vec::new();
        let selection = run_selection_with_progress(&log, &options, &mut |stage, done, total| {
            assert!(done <= total, "{stage} {done}/{total}");
            if stages.last() != Some(&stage) {
                stages.push(stage);
            }
        })
        .unwrap();
        // The DP table level by level, then the curve, which answers the target: no search.
        assert_eq!(stages, [PREPARING_BINS, ERROR_CURVE]);
        assert_eq!(selection.curve.len(), 12);
        let plain = run_selection(&log, &options).unwrap();
        assert_eq!(selection.seqpoints, plain.seqpoints);

        let no_curve = SelectOptions {
            error_curve: false,
            ..options
        };
        let mut stages: Vec<&str> = Vec::new();
        run_selection_with_progress(&log, &no_curve, &mut |stage, _, _| {
            if stages.last() != Some(&stage) {
                stages.push(stage);
            }
        })
        .unwrap();
        // Without a curve the target's K is searched.
        assert_eq!(stages, [PREPARING_BINS, CHOOSING_K]);
    }

    #[test]
    fn phases_give_each_stratum_its_seqpoints() {
        let log = log("seq_len,time_ms\n1,1\n2,4\n1,1\n2,4\n1,1\n2,4\n");
        let options = SelectOptions {
            bins: BinCount::Fixed(2),
            strata: Strata::Phases(2),
            ..SelectOptions::default()
        };
        let selection = run_selection(&log, &options).unwrap();
        assert_eq!(selection.bins(), 4);
        let strata: Vec<_> = selection.seqpoints.iter().map(|s| s.stratum).collect();
        assert_eq!(strata, vec![Some(0), Some(0), Some(1), Some(1)]);
        assert!(selection.seqpoints[2..].iter().all(|s| s.iteration >= 3));
        assert_eq!(selection.projection.worst_error_pct(), 0.0);
    }

    #[test]
    fn strata_projection_is_the_sum_of_the_strata() {
        // Key 1 costs 1 in phase 1 and 3 in phase 2: one bin per phase is exact, while one bin
        // over the whole run projects from a single iteration, 1 or 3, for all four.
        let log = log("seq_len,time_ms\n1,1\n1,1\n1,3\n1,3\n");
        let fixed = |strata| SelectOptions {
            bins: BinCount::Fixed(1),
            strata,
            ..SelectOptions::default()
        };
        let split = run_selection(&log, &fixed(Strata::Phases(2))).unwrap();
        assert_eq!(split.projection.totals[0].projected, 8.0);
        assert_eq!(split.strata[1].worst_error_pct, 0.0);
        let whole = run_selection(&log, &fixed(Strata::None)).unwrap();
        assert!(whole.projection.worst_error_pct() >= 50.0);
    }
}
