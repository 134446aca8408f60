//! The whole `select` pipeline over plain data: the options, the `Selection` it makes, and
//! `answer` (in `answer.rs`), the one entry point `seqpoint select` and the explorer call.
//!
//! `strata` prepares the key groups of each stratum (one pass over the rows); `selectors`
//! bins and picks for any K, draws the error curve and chooses K; `target` holds the error
//! target's rules and advice; `plan` spreads extra profiled iterations over the SeqPoints
//! (`testkit::coverage` checks by redraws that the intervals hold what they claim).

mod answer;
pub mod command;
pub mod exclude;
mod excluded_share;
pub mod naive;
pub mod plan;
mod selectors;
mod strata;
mod target;

use std::ops::ControlFlow;

use crate::binning::{BinningError, Method};
use crate::pick::{Pick, SeqPoint};
use crate::project::Projection;
use crate::runlog::RunLog;

pub use crate::doc::StratumOutcome;
pub use answer::{
    answer, answer_with, Answer, Answering, SelectRequest, StageProgress, CHEAPEST_PLAN,
    PROFILING_PLAN,
};
pub use exclude::{parse_iteration_range, Exclusion, IterationRange};
pub use excluded_share::{excluded_shares, ExcludedShare};
pub use selectors::Selectors;
pub use strata::{kept_strata_rows, strata_rows, Strata, StrataGroups, StratumRows};
pub use target::{
    Advice, CurvePoint, MoreBins, TargetOutcome, TargetRule, LUCK_RATIO, MEASURED_INTERVAL_LIMIT,
};

pub use crate::options::{OptionError, DEFAULT_MAX_BINS, DEFAULT_TARGET_PCT};

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
    /// Iterations removed before grouping (`--exclude`): in no total and never picked.
    pub exclude: Exclusion,
    pub seed: u64,
    /// Profiled iterations per SeqPoint assumed by the intervals.
    pub samples: u64,
    /// A budget's plan will draw over each bin (`--budget`), whatever `samples` says: the
    /// bins are then the method's own, as at two or more per SeqPoint (`PlanAsk::shape`).
    pub drawn_over_bins: bool,
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
            exclude: Exclusion::default(),
            seed: 0,
            samples: 1,
            drawn_over_bins: false,
            strata: Strata::None,
            error_curve: true,
        }
    }
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
    /// How far above the optimum the `optimal` bins may be, as a share of their objective
    /// (against a proven lower bound), where too many distinct noisy keys made the exact DP
    /// give way to its blocked fallback; `None` when the bins are exact.
    pub binning_gap: Option<f64>,
}

impl Selection {
    pub fn bins(&self) -> usize {
        self.seqpoints.len()
    }

    /// Iterations the selection's totals stand for: the run less `--exclude`'s iterations,
    /// which is what the SeqPoints' weights sum to (read off them, not off the rows: the
    /// explorer asks on every frame).
    pub fn kept_iterations(&self) -> u64 {
        self.seqpoints.iter().map(|sp| sp.weight).sum()
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
    /// An option's value that no K could satisfy, naming the option.
    #[error(transparent)]
    Option(#[from] OptionError),
    #[error("{0}")]
    Invalid(String),
}

impl SelectError {
    /// The error as `surface` words it: an option's value named as the user typed it there
    /// (`--exclude 0-5` or `:exclude 0-5`), any other error as it is.
    pub fn worded(&self, surface: crate::options::Surface) -> String {
        match self {
            SelectError::Option(e) => e.worded(surface),
            other => other.to_string(),
        }
    }
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

/// Each option's value within its range (`options`), before any log is read: the part of
/// `check_options` the CLI and the explorer can check first.
pub fn check_values(options: &SelectOptions) -> Result<(), OptionError> {
    use crate::options::{BINS, MAX_BINS, SAMPLES, TARGET_ERROR};
    SAMPLES.check_count(options.samples)?;
    MAX_BINS.check_count(options.max_bins as u64)?;
    match options.bins {
        BinCount::Fixed(k) => BINS.check_count(k as u64),
        BinCount::Target(t) => TARGET_ERROR.check_percent(t),
    }
}

/// Reject options no K could satisfy, before any work (the same messages for `select` and
/// the explorer, which checks before it opens the terminal). The metric values themselves
/// are checked once, by `StrataGroups::new`.
pub fn check_options(log: &RunLog, options: &SelectOptions) -> Result<(), SelectError> {
    check_values(options)?;
    let rows = log.len() as u64;
    if options.warmup > 0 && options.warmup >= rows {
        return Err(crate::options::WARMUP
            .error(
                &options.warmup.to_string(),
                format!(
                    "covers the whole run ({rows} iterations): no iteration is left to pick; \
                     use a warm-up below {rows}"
                ),
            )
            .into());
    }
    options.exclude.check(log)?;
    if options.method == Some(Method::Optimal) && log.dims() != 1 {
        return Err(crate::options::METHOD
            .error(
                "optimal",
                format!(
                    "needs a one-length key (it bins contiguous ranges of sorted lengths), \
                     and this key has {} lengths",
                    log.dims()
                ),
            )
            .instead(&crate::options::METHOD, "kmeans")
            .into());
    }
    Ok(())
}

/// Told `(done, total)` after each K tried; `Break` stops the work (the explorer's cancel).
pub type Progress<'p> = &'p mut dyn FnMut(usize, usize) -> ControlFlow<()>;

/// What making a selection is doing, for a progress display (`answer_with`'s stages).
pub const PREPARING_BINS: &str = "preparing bins";
pub const ERROR_CURVE: &str = "error curve";
pub const CHOOSING_K: &str = "choosing K";

/// Selectors, curve and choice over prepared key groups, telling `progress` each stage;
/// `None` when it stopped them.
pub(super) fn select_on(
    log: &RunLog,
    strata: &StrataGroups,
    options: &SelectOptions,
    progress: StageProgress,
) -> Result<Option<Selection>, SelectError> {
    let stage = std::cell::Cell::new(PREPARING_BINS);
    let mut told = |done, total| progress(stage.get(), done, total);
    // Each stage is told as it starts (total 0: not known yet), not only after its first step.
    if told(0, 0).is_break() {
        return Ok(None);
    }
    let Some(selectors) = Selectors::new(log, strata, options, &mut told)? else {
        return Ok(None);
    };
    stage.set(ERROR_CURVE);
    let curve_len = selectors.curve_len(options);
    if curve_len > 0 && told(0, curve_len).is_break() {
        return Ok(None);
    }
    let Some(curve) = selectors.curve(options, &mut told)? else {
        return Ok(None);
    };
    stage.set(CHOOSING_K);
    selectors.choose(options, curve, &mut told)
}

/// The SeqPoints alone, one profiled iteration each (no plan): the selection `answer`
/// plans for. What `seqpoint select` gives is `answer`.
pub fn run_selection(log: &RunLog, options: &SelectOptions) -> Result<Selection, SelectError> {
    check_options(log, options)?;
    let strata = StrataGroups::for_options(log, options)?;
    let selection = select_on(log, &strata, options, &mut |_, _, _| {
        ControlFlow::Continue(())
    })?;
    Ok(selection.expect("never stopped"))
}

/// `run_selection` over key groups prepared earlier (same strata and warm-up): no pass over
/// the rows, so it suits repeated recomputes.
pub fn run_selection_on(
    log: &RunLog,
    strata: &StrataGroups,
    options: &SelectOptions,
) -> Result<Selection, SelectError> {
    check_options(log, options)?;
    let selection = select_on(log, strata, options, &mut |_, _, _| {
        ControlFlow::Continue(())
    })?;
    Ok(selection.expect("never stopped"))
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
            bins: BinCount::Target(crate::options::MIN_TARGET_PCT),
            max_bins: 12,
            error_curve: true,
            ..SelectOptions::default()
        };
        let stages_of = |options: &SelectOptions| {
            let mut stages: Vec<&str> = Vec::new();
            let answering = Answering {
                progress: Some(&mut |stage, done, total| {
                    assert!(done <= total, "{stage} {done}/{total}");
                    if stages.last() != Some(&stage) {
                        stages.push(stage);
                    }
                    ControlFlow::Continue(())
                }),
                ..Answering::default()
            };
            let request = SelectRequest {
                options: options.clone(),
                plan: None,
            };
            let answered = answer_with(&log, &request, answering).unwrap();
            (stages, answered.expect("never stopped").selection)
        };
        let (stages, selection) = stages_of(&options);
        // The DP table level by level, then the curve, which answers the target: no search.
        assert_eq!(stages, [PREPARING_BINS, ERROR_CURVE]);
        assert_eq!(selection.curve.len(), 12);
        let plain = run_selection(&log, &options).unwrap();
        assert_eq!(selection.seqpoints, plain.seqpoints);

        let no_curve = SelectOptions {
            error_curve: false,
            ..options
        };
        let (stages, _) = stages_of(&no_curve);
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

    fn sample() -> RunLog {
        let load = crate::runlog::LoadOptions::default();
        crate::load_run(crate::runlog::sample::SAMPLE_NAME, &load).unwrap()
    }

    #[test]
    fn a_warmup_covering_whole_bins_never_picks_a_warmup_iteration() {
        // 450 iterations; with --warmup 440 most bins hold only warm-up iterations.
        let log = sample();
        for method in Method::ALL {
            for warmup in [300u64, 440, 449] {
                for k in [2usize, 4, 16] {
                    let options = SelectOptions {
                        method: Some(method),
                        bins: BinCount::Fixed(k),
                        warmup,
                        error_curve: false,
                        ..SelectOptions::default()
                    };
                    let s = run_selection(&log, &options).unwrap();
                    let case = format!("{} warm-up {warmup} K {k}", method.name());
                    for sp in &s.seqpoints {
                        assert!(sp.row as u64 >= warmup, "{case}: picked row {}", sp.row);
                    }
                    // The warm-up's iterations still count, through the bins they joined.
                    let weights: u64 = s.seqpoints.iter().map(|sp| sp.weight).sum();
                    assert_eq!(weights, 450, "{case}");
                    assert!(s.bins() <= k, "{case}");
                }
            }
        }
    }

    #[test]
    fn a_warmup_at_or_past_the_run_is_an_error() {
        let log = sample();
        for warmup in [450u64, 451, u64::MAX] {
            let options = SelectOptions {
                warmup,
                ..SelectOptions::default()
            };
            let e = run_selection(&log, &options).unwrap_err().to_string();
            assert!(
                e.contains(&format!(
                    "--warmup {warmup}: covers the whole run (450 iterations)"
                )),
                "{e}"
            );
        }
        // A stratum wholly inside the warm-up has nothing to pick either.
        let options = SelectOptions {
            warmup: 120,
            bins: BinCount::Fixed(2),
            strata: Strata::Phases(4),
            ..SelectOptions::default()
        };
        let e = run_selection(&log, &options).unwrap_err().to_string();
        assert!(e.contains("covers every iteration of phase 1"), "{e}");
    }

    #[test]
    fn excluded_iterations_are_in_no_total_and_never_picked() {
        let log = sample();
        let exclude = Exclusion::parse(&["0-99", "300-349", "320-329"]).unwrap();
        let kept: Vec<usize> = (0..log.len())
            .filter(|&r| !(0..100).contains(&r) && !(300..350).contains(&r))
            .collect();
        for strata in [Strata::None, Strata::Epoch, Strata::Phases(3)] {
            let options = SelectOptions {
                bins: BinCount::Fixed(6),
                exclude: exclude.clone(),
                strata,
                error_curve: false,
                ..SelectOptions::default()
            };
            let s = run_selection(&log, &options).unwrap();
            for sp in &s.seqpoints {
                assert!(
                    !exclude.contains(sp.iteration),
                    "{strata}: picked {}",
                    sp.iteration
                );
                assert!(
                    sp.alternates.iter().all(|&a| !exclude.contains(a)),
                    "{strata}"
                );
            }
            let weights: u64 = s.seqpoints.iter().map(|sp| sp.weight).sum();
            assert_eq!(weights, kept.len() as u64, "{strata}");
            for config in &log.configs {
                let expect: f64 = kept.iter().map(|&r| config.metrics[0].values[r]).sum();
                let total = s.projection.totals.iter();
                let actual = total
                    .filter(|t| t.config == config.role)
                    .find_map(|t| t.actual)
                    .unwrap();
                assert!(
                    (actual - expect).abs() < 1e-6 * expect,
                    "{strata}: {actual} {expect}"
                );
            }
            // Planned extra samples come from the kept iterations too.
            let plan = plan::plan_selection(&log, &s, plan::PlanRule::Samples(4)).unwrap();
            for bin in &plan.bins {
                for &row in &bin.rows {
                    assert!(!exclude.contains(log.iteration(row as usize)), "{strata}");
                }
            }
        }
        // The document records the merged ranges and the iterations the weights cover; the
        // command repeats them; a document without the fields still reads.
        let options = SelectOptions {
            bins: BinCount::Fixed(4),
            exclude,
            ..SelectOptions::default()
        };
        let s = run_selection(&log, &options).unwrap();
        let doc = crate::output::json::select_document(&log, &s, None);
        assert_eq!(doc.selection.exclude, ["0-99", "300-349"]);
        assert_eq!(
            (doc.input.iterations, doc.input.excluded_iterations),
            (300, 150)
        );
        let mut json = serde_json::to_value(&doc).unwrap();
        json["selection"].as_object_mut().unwrap().remove("exclude");
        json["input"]
            .as_object_mut()
            .unwrap()
            .remove("excluded_iterations");
        let old: crate::doc::SelectDoc = serde_json::from_value(json).unwrap();
        assert!(old.selection.exclude.is_empty() && old.input.excluded_iterations == 0);
        let (method, pick) = method_and_pick(&log, &options);
        let command = crate::select::command::select_command(
            "run.csv",
            &Default::default(),
            &options,
            &Default::default(),
            method,
            pick,
        );
        assert!(
            command.contains("--exclude 0-99 --exclude 300-349"),
            "{command}"
        );
    }
}
