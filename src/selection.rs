//! The whole `select` pipeline over plain data: strata, bin count (fixed or by error
//! target), SeqPoints and their projection. The CLI and TUI both call `run_selection`.

use std::collections::HashMap;
use std::fmt;
use std::ops::ControlFlow;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::binning::{BinningError, Method, OptimalTable, Solver};
use crate::groups::KeyGroups;
use crate::project::{actual_totals, project, project_total, Projection};
use crate::runlog::RunLog;
use crate::pick::{Candidates, Pick, PickSettings, Selector, SeqPoint};
use crate::stats::Z95;

/// Training phases binned separately, each with its own SeqPoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strata {
    #[default]
    None,
    Epoch,
    Phases(usize),
}

impl fmt::Display for Strata {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Strata::None => write!(f, "none"),
            Strata::Epoch => write!(f, "epoch"),
            Strata::Phases(p) => write!(f, "phases:{p}"),
        }
    }
}

impl FromStr for Strata {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "none" => Ok(Strata::None),
            "epoch" => Ok(Strata::Epoch),
            other => match other.strip_prefix("phases:").map(str::parse::<usize>) {
                Some(Ok(p)) if p >= 1 => Ok(Strata::Phases(p)),
                _ => Err(format!(
                    "unknown strata {s:?}; expected none, epoch or phases:P with P >= 1"
                )),
            },
        }
    }
}

/// How the error target is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum TargetRule {
    /// Measured error and the 95% interval must both be within the target.
    #[default]
    Interval,
    /// Measured error alone (the published rule; a lucky pick can pass).
    Measured,
}

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
            bins: BinCount::Target(1.0),
            max_bins: 64,
            target_by: TargetRule::Interval,
            warmup: 0,
            seed: 0,
            samples: 1,
            strata: Strata::None,
            error_curve: true,
        }
    }
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
    fn meets(&self, target: f64, rule: TargetRule) -> bool {
        self.worst_error_pct <= target
            && (rule == TargetRule::Measured || self.worst_half_width_pct <= target)
    }

    /// How far from the target (<= 1 means met), for choosing the best K when none meets it.
    fn shortfall(&self, target: f64, rule: TargetRule) -> f64 {
        let interval = match rule {
            TargetRule::Interval => self.worst_half_width_pct,
            TargetRule::Measured => 0.0,
        };
        self.worst_error_pct.max(interval) / target
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

#[derive(Debug, Clone, PartialEq)]
pub struct TargetOutcome {
    pub target_pct: f64,
    pub rule: TargetRule,
    pub met: bool,
    /// What would meet the target when it is not met.
    pub advice: Option<String>,
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

/// A stratum's name and its rows (ascending; `None` is every row).
pub type StratumRows = (String, Option<Vec<u32>>);

/// The rows of each stratum, in stratum order (the order of `SeqPoint::stratum`).
pub fn strata_rows(log: &RunLog, strata: Strata) -> Result<Vec<StratumRows>, SelectError> {
    Ok(match strata {
        Strata::None => vec![("all".to_string(), None)],
        Strata::Epoch => {
            let epochs = log.epochs.as_ref().ok_or(SelectError::NoEpochs)?;
            let mut by_epoch: std::collections::BTreeMap<u32, Vec<u32>> = Default::default();
            for (row, e) in epochs.iter().enumerate() {
                by_epoch.entry(e).or_default().push(row as u32);
            }
            by_epoch
                .into_iter()
                .map(|(e, rows)| (format!("epoch {e}"), Some(rows)))
                .collect()
        }
        Strata::Phases(p) => {
            let n = log.len();
            if p == 0 {
                return Err(SelectError::Invalid(
                    "--strata phases:P needs at least one phase".into(),
                ));
            }
            if p > n {
                return Err(SelectError::Invalid(format!(
                    "--strata phases:{p} asks for more phases than the {n} iterations"
                )));
            }
            (0..p)
                .map(|i| {
                    let (lo, hi) = (i * n / p, (i + 1) * n / p);
                    (
                        format!("phase {}", i + 1),
                        Some((lo as u32..hi as u32).collect()),
                    )
                })
                .collect()
        }
    })
}

fn totals_of(groups: &KeyGroups) -> Vec<Vec<f64>> {
    groups
        .moments
        .iter()
        .map(|config| {
            config
                .iter()
                .map(|metric| metric.iter().map(|g| g.sum).sum())
                .collect()
        })
        .collect()
}

fn curve_point(
    log: &RunLog,
    actual: &[Vec<f64>],
    k: usize,
    seqpoints: &[SeqPoint],
    samples: u64,
) -> CurvePoint {
    let projection = project(log, actual, seqpoints, samples);
    CurvePoint {
        k,
        bins: seqpoints.len(),
        worst_error_pct: projection.worst_error_pct(),
        worst_half_width_pct: projection.worst_half_width_pct(),
    }
}

/// Metrics so large that a total or a bin's `w^2 s^2` would overflow f64 turn every error and
/// interval into NaN: refuse them up front, naming the value and the iteration that holds it.
fn check_magnitudes(log: &RunLog) -> Result<(), SelectError> {
    let n = log.len().max(1);
    let limit = f64::MAX.sqrt() / (4.0 * n as f64);
    for config in &log.configs {
        for metric in &config.metrics {
            let too_large = metric
                .values
                .iter()
                .position(|v| v.is_nan() || v.abs() > limit);
            if let Some(row) = too_large {
                let remedy = if log.proxy.is_some() {
                    "choose a smaller --cost exponent"
                } else {
                    "rescale the metric (e.g. to seconds)"
                };
                return Err(SelectError::Invalid(format!(
                    "{}: column '{}' has {:e} at iteration {}, too large to total over {n} \
                     iterations (at most {limit:.3e}); {remedy}",
                    config.source,
                    metric.name,
                    metric.values[row],
                    log.iterations.get(row)
                )));
            }
        }
    }
    Ok(())
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

/// The largest K the binners prepare for (the exact DP table's size).
fn table_bins(options: &SelectOptions) -> usize {
    match options.bins {
        BinCount::Fixed(k) => k.max(options.max_bins),
        BinCount::Target(_) => options.max_bins.max(1),
    }
}

/// Everything a selection needs that depends only on the log, the strata and the warm-up:
/// the key groups and candidate iterations of every stratum. Building it passes over every
/// row once; `Selectors` built on it (any method, pick or K) work on key groups only.
pub struct StrataGroups {
    pub names: Vec<String>,
    pub groups: Vec<KeyGroups>,
    /// Per stratum: each key group's iterations after warm-up, nearest its median first.
    pub candidates: Vec<Candidates>,
    pub warmup: u64,
    /// True when the run is split (`--strata` other than none): SeqPoints then carry it.
    pub split: bool,
    /// Whole-run actual totals per configuration and metric (one pass over the rows, here,
    /// so that a recompute never passes over them again), and each stratum's.
    actual: Vec<Vec<f64>>,
    stratum_actual: Vec<Vec<Vec<f64>>>,
    /// Exact DP tables by (stratum, largest K), kept so that a later `Selectors` with
    /// `optimal` (another pick, a K change through `run_selection_on`) does not rebuild them.
    tables: Mutex<HashMap<(usize, usize), Arc<OptimalTable>>>,
}

impl StrataGroups {
    pub fn new(log: &RunLog, strata: Strata, warmup: u64) -> Result<Self, SelectError> {
        check_magnitudes(log)?;
        let rows = strata_rows(log, strata)?;
        let groups: Vec<KeyGroups> = rows
            .iter()
            .map(|(_, rows)| KeyGroups::from_rows(log, rows.as_deref()))
            .collect();
        let stratum_actual = groups.iter().map(totals_of).collect();
        Ok(StrataGroups {
            candidates: groups
                .iter()
                .map(|g| Candidates::new(log, g, warmup))
                .collect(),
            groups,
            names: rows.into_iter().map(|(name, _)| name).collect(),
            warmup,
            split: strata != Strata::None,
            actual: actual_totals(log),
            stratum_actual,
            tables: Mutex::new(HashMap::new()),
        })
    }

    /// A kept DP table of `stratum` covering at least `max_bins` bins.
    fn table(&self, stratum: usize, max_bins: usize) -> Option<Arc<OptimalTable>> {
        let tables = self.tables.lock().ok()?;
        tables
            .iter()
            .filter(|((s, k), _)| *s == stratum && *k >= max_bins)
            .min_by_key(|((_, k), _)| *k)
            .map(|(_, table)| table.clone())
    }

    fn keep_table(&self, stratum: usize, table: Arc<OptimalTable>) {
        if let Ok(mut tables) = self.tables.lock() {
            tables.insert((stratum, table.max_bins()), table);
        }
    }

    /// The whole run's actual totals, `[config][metric]`.
    pub fn actual(&self) -> &[Vec<f64>] {
        &self.actual
    }

    /// The most key groups in one stratum: no K above it makes more bins.
    pub fn largest(&self) -> usize {
        self.groups.iter().map(KeyGroups::len).max().unwrap_or(1)
    }
}

/// Told `(done, total)` after each K tried; `Break` stops the work (the explorer's cancel).
pub type Progress<'p> = &'p mut dyn FnMut(usize, usize) -> ControlFlow<()>;

/// One method and pick over every stratum, built once (the exact DP table with it) and then
/// asked for any K in O(groups): what `select` runs once and the explorer keeps between keys.
pub struct Selectors<'a> {
    log: &'a RunLog,
    strata: &'a StrataGroups,
    selectors: Vec<Selector<'a>>,
    method: Method,
    pick: Pick,
}

impl<'a> Selectors<'a> {
    /// Resolves the default method and pick as `select` does; `options.bins` and
    /// `options.max_bins` size the exact DP table (any K still works beyond it, slower).
    pub fn new(
        log: &'a RunLog,
        strata: &'a StrataGroups,
        options: &SelectOptions,
    ) -> Result<Self, SelectError> {
        let selectors =
            Self::new_with_progress(log, strata, options, &mut |_, _| ControlFlow::Continue(()))?;
        Ok(selectors.expect("never stopped"))
    }

    /// `new`, telling `progress` how far the exact DP tables are built (the only slow part:
    /// seconds for a plain DP over many thousand key groups); `None` when it stopped them.
    pub fn new_with_progress(
        log: &'a RunLog,
        strata: &'a StrataGroups,
        options: &SelectOptions,
        progress: Progress,
    ) -> Result<Option<Self>, SelectError> {
        if options.warmup != strata.warmup {
            return Err(SelectError::Invalid(format!(
                "key groups prepared for warm-up {}, asked for {}",
                strata.warmup, options.warmup
            )));
        }
        let (method, pick) = method_and_pick(log, options);
        let prepared = table_bins(options);
        let settings = PickSettings {
            method,
            pick,
            warmup: options.warmup,
            seed: options.seed,
            max_bins: prepared,
        };
        let count = strata.groups.len();
        let mut selectors = Vec::with_capacity(count);
        for (i, g) in strata.groups.iter().enumerate() {
            let mut table = strata.table(i, prepared);
            if table.is_none() && method == Method::Optimal && g.dims == 1 {
                // Built here rather than inside the selector, so that it reports and stops.
                let built = OptimalTable::build_with_progress(
                    &g.counts,
                    &g.binning_values(),
                    prepared,
                    Solver::Auto,
                    &mut |done, levels| progress(i * levels + done, count * levels),
                );
                let Some(built) = built else {
                    return Ok(None);
                };
                let built = Arc::new(built);
                strata.keep_table(i, built.clone());
                table = Some(built);
            }
            selectors.push(Selector::prepared(
                log,
                g,
                &strata.candidates[i],
                table,
                settings,
                strata.split.then_some(i),
            )?);
        }
        Ok(Some(Selectors {
            log,
            strata,
            selectors,
            method,
            pick,
        }))
    }

    pub fn method(&self) -> Method {
        self.method
    }

    pub fn pick(&self) -> Pick {
        self.pick
    }

    /// Strata the run is split into (1 without `--strata`).
    pub fn strata(&self) -> usize {
        self.selectors.len()
    }

    /// Whether this K is answered in O(groups) in every stratum: from the exact DP table,
    /// by uniform or quantile cuts, or from a k-means fit made already (the curve's).
    pub fn ready(&self, k: usize) -> bool {
        self.selectors.iter().all(|s| s.ready(k))
    }

    /// The same K in every stratum, projected over the whole run.
    pub fn curve_point(&self, k: usize, samples: u64) -> Result<CurvePoint, SelectError> {
        let mut seqpoints = Vec::new();
        for selector in &self.selectors {
            seqpoints.extend(selector.select(k)?);
        }
        Ok(curve_point(
            self.log,
            &self.strata.actual,
            k,
            &seqpoints,
            samples,
        ))
    }

    /// How many K the error-versus-K curve covers for these options (none when not asked).
    pub fn curve_len(&self, options: &SelectOptions) -> usize {
        if options.error_curve {
            table_bins(options).min(self.strata.largest())
        } else {
            0
        }
    }

    /// The error-versus-K curve, K = 1..=`curve_len`; `None` when `progress` stopped it.
    pub fn curve(
        &self,
        options: &SelectOptions,
        progress: Progress,
    ) -> Result<Option<Vec<CurvePoint>>, SelectError> {
        let len = self.curve_len(options);
        let mut curve = Vec::with_capacity(len);
        let finished = self.points_in_order(len, options.samples, &mut |point| {
            curve.push(point);
            progress(point.k, len)
        })?;
        Ok(finished.then_some(curve))
    }

    /// The target search of a run without strata (the smallest K that meets the target, else
    /// the one that misses least), over K = 1..=`limit` computed on every core in K order,
    /// stopping at the first that meets it: what `TargetSearch` finds, sooner.
    fn search_one_stratum(
        &self,
        limit: usize,
        target: f64,
        rule: TargetRule,
        samples: u64,
        progress: Progress,
    ) -> Result<Option<(Vec<usize>, CurvePoint)>, SelectError> {
        let mut choice = TargetChoice::new(target, rule);
        let finished = self.points_in_order(limit, samples, &mut |point| {
            if choice.offer(point) {
                return ControlFlow::Break(());
            }
            progress(point.k, limit)
        })?;
        if !finished && !choice.met {
            return Ok(None);
        }
        Ok(choice.chosen())
    }
    /// Hands `visit` the point of each K = 1..=`len` in K order until it answers `Break`;
    /// false when it did. The points are computed on every core (k-means takes a while per
    /// K): workers take the next K from a counter, this thread puts them in order.
    fn points_in_order(
        &self,
        len: usize,
        samples: u64,
        visit: &mut dyn FnMut(CurvePoint) -> ControlFlow<()>,
    ) -> Result<bool, SelectError> {
        let threads = crate::parallel::threads().min(len);
        if threads <= 1 {
            for k in 1..=len {
                if visit(self.curve_point(k, samples)?).is_break() {
                    return Ok(false);
                }
            }
            return Ok(true);
        }
        let next_k = AtomicUsize::new(1);
        let stop = AtomicBool::new(false);
        std::thread::scope(|scope| {
            let (sender, receiver) = std::sync::mpsc::channel();
            for _ in 0..threads {
                let sender = sender.clone();
                let (next_k, stop) = (&next_k, &stop);
                scope.spawn(move || loop {
                    let k = next_k.fetch_add(1, Ordering::Relaxed);
                    if k > len || stop.load(Ordering::Relaxed) {
                        return;
                    }
                    if sender.send((k, self.curve_point(k, samples))).is_err() {
                        return;
                    }
                });
            }
            drop(sender);
            // Points arrive in any order; `waiting` holds them until their turn.
            let mut waiting: Vec<Option<CurvePoint>> = vec![None; len];
            let mut next = 0;
            while next < len {
                let (k, point) = receiver.recv().expect("a worker sends every K it takes");
                match point {
                    Ok(point) => waiting[k - 1] = Some(point),
                    Err(e) => {
                        stop.store(true, Ordering::Relaxed);
                        return Err(e);
                    }
                }
                while let Some(point) = waiting.get_mut(next).and_then(Option::take) {
                    next += 1;
                    if visit(point).is_break() {
                        stop.store(true, Ordering::Relaxed);
                        return Ok(false);
                    }
                }
            }
            Ok(true)
        })
    }

    /// The selection for `options` (fixed K, or the error-target search), carrying `curve`;
    /// `None` when `progress` stopped the search.
    pub fn choose(
        &self,
        options: &SelectOptions,
        curve: Vec<CurvePoint>,
        progress: Progress,
    ) -> Result<Option<Selection>, SelectError> {
        let (log, strata) = (self.log, self.strata);
        let mut chosen: Vec<Vec<SeqPoint>> = Vec::new();
        let mut outcomes = Vec::new();
        let mut target = None;
        let ks = match options.bins {
            BinCount::Fixed(k) => vec![k; self.selectors.len()],
            BinCount::Target(pct) => {
                let max_bins = table_bins(options);
                let limits: Vec<usize> = strata
                    .groups
                    .iter()
                    .map(|g| max_bins.min(g.len()))
                    .collect();
                let search = TargetSearch {
                    log,
                    selectors: &self.selectors,
                    actual: &strata.actual,
                    strata_actual: &strata.stratum_actual,
                    limits: &limits,
                    target: pct,
                    rule: options.target_by,
                    samples: options.samples,
                };
                let from_curve = match limits.as_slice() {
                    [limit] => smallest_meeting(&curve, *limit, pct, options.target_by),
                    _ => None,
                };
                let found = match (from_curve, limits.as_slice()) {
                    (Some(found), _) => Some(found),
                    (None, [limit]) => self.search_one_stratum(
                        *limit,
                        pct,
                        options.target_by,
                        options.samples,
                        progress,
                    )?,
                    _ => search.run(progress)?,
                };
                let Some((ks, point)) = found else {
                    return Ok(None);
                };
                let met = point.meets(pct, options.target_by);
                target = Some(TargetOutcome {
                    target_pct: pct,
                    rule: options.target_by,
                    met,
                    advice: (!met).then(|| advice_for(&point, pct, options, strata.largest())),
                });
                ks
            }
        };
        for (i, selector) in self.selectors.iter().enumerate() {
            let seqpoints = selector.select(ks[i])?;
            let own = curve_point(
                log,
                &strata.stratum_actual[i],
                ks[i],
                &seqpoints,
                options.samples,
            );
            outcomes.push(StratumOutcome {
                name: strata.names[i].clone(),
                iterations: strata.groups[i].iterations(),
                k: ks[i],
                // With a fixed K there is no target to miss.
                met: match options.bins {
                    BinCount::Fixed(_) => true,
                    BinCount::Target(pct) => own.meets(pct, options.target_by),
                },
                worst_error_pct: own.worst_error_pct,
                worst_half_width_pct: own.worst_half_width_pct,
            });
            chosen.push(seqpoints);
        }
        let mut seqpoints: Vec<SeqPoint> = chosen.into_iter().flatten().collect();
        for (id, sp) in seqpoints.iter_mut().enumerate() {
            sp.id = id;
        }
        let projection = project(log, &strata.actual, &seqpoints, options.samples);
        Ok(Some(Selection {
            method: self.method,
            pick: self.pick,
            options: options.clone(),
            seqpoints,
            projection,
            target,
            strata: outcomes,
            curve,
        }))
    }
}

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
    let selectors =
        Selectors::new_with_progress(log, strata, options, &mut told)?.expect("never stopped");
    stage.set(ERROR_CURVE);
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

/// The error-target search for a run without strata, read off an error curve that covers
/// K = 1..=`limit`: the smallest K that meets the target, else the one that misses it least
/// (the earliest of equals), exactly what `TargetSearch` finds by computing the points.
fn smallest_meeting(
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
struct TargetChoice {
    target: f64,
    rule: TargetRule,
    best: Option<CurvePoint>,
    met: bool,
}

impl TargetChoice {
    fn new(target: f64, rule: TargetRule) -> Self {
        TargetChoice {
            target,
            rule,
            best: None,
            met: false,
        }
    }

    /// Takes the next point; true once one meets the target (offer no more).
    fn offer(&mut self, point: CurvePoint) -> bool {
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

    fn chosen(&self) -> Option<(Vec<usize>, CurvePoint)> {
        self.best.map(|point| (vec![point.k], point))
    }
}

/// Say what would meet the target: more samples per SeqPoint when only the interval is too
/// wide (the half-width shrinks with the square root of the samples), else more bins.
/// `unique_keys`: the most key groups in a stratum; beyond it more bins change nothing.
fn advice_for(
    best: &CurvePoint,
    target: f64,
    options: &SelectOptions,
    unique_keys: usize,
) -> String {
    let per_stratum = if options.strata == Strata::None {
        ""
    } else {
        " per stratum"
    };
    let mut parts =
        vec![format!(
        "no K up to {}{per_stratum} meets {}%; best K = {} (error {:.2}%, 95% interval ±{:.2}%)",
        options.max_bins,
        crate::text::setting(target),
        best.k, best.worst_error_pct, best.worst_half_width_pct
    )];
    if options.target_by == TargetRule::Interval && best.worst_half_width_pct > target {
        let factor = (best.worst_half_width_pct / target).powi(2);
        let samples = (options.samples as f64 * factor).ceil() as u64;
        parts.push(format!(
            "profile about {samples} iterations per SeqPoint (--samples {samples})"
        ));
    }
    let more_bins_possible = options.max_bins < unique_keys;
    if more_bins_possible && (best.worst_error_pct > target || best.k >= options.max_bins) {
        parts.push(format!(
            "or allow more bins (--max-bins {})",
            options.max_bins.saturating_mul(2).min(unique_keys)
        ));
    } else if !more_bins_possible && best.worst_error_pct > target {
        // Every key has a bin of its own: what is left is the spread within keys.
        parts.push(format!(
            "every {} already has its own bin (K = {unique_keys}), so more bins cannot help",
            if unique_keys == 1 {
                "key"
            } else {
                "unique key"
            }
        ));
    }
    parts.join(", ")
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
struct TargetSearch<'a> {
    log: &'a RunLog,
    selectors: &'a [Selector<'a>],
    actual: &'a [Vec<f64>],
    strata_actual: &'a [Vec<Vec<f64>>],
    limits: &'a [usize],
    target: f64,
    rule: TargetRule,
    samples: u64,
}

impl TargetSearch<'_> {
    /// `None` when `progress` stopped the search.
    fn run(&self, progress: Progress) -> Result<Option<(Vec<usize>, CurvePoint)>, SelectError> {
        let strata = self.selectors.len();
        // Each step adds one bin to one stratum: at most this many steps.
        let steps = (self.limits.iter().sum::<usize>() + 1).saturating_sub(strata);
        let mut cache: Vec<std::collections::HashMap<usize, (Vec<SeqPoint>, f64)>> =
            vec![Default::default(); strata];
        let mut ks = vec![1usize; strata];
        let mut best: Option<(f64, Vec<usize>, CurvePoint)> = None;
        loop {
            for s in 0..strata {
                if !cache[s].contains_key(&ks[s]) {
                    let seqpoints = self.selectors[s].select(ks[s])?;
                    let share = self.contribution(s, &seqpoints);
                    cache[s].insert(ks[s], (seqpoints, share));
                }
            }
            let seqpoints: Vec<SeqPoint> = (0..strata)
                .flat_map(|s| cache[s][&ks[s]].0.iter().cloned())
                .collect();
            let point = curve_point(
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
                            worst = worst.max(Z95 * estimate.variance.max(0.0).sqrt() / total);
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
    use super::*;
    use crate::runlog::{load_bytes, InputFormat, LoadOptions};

    use crate::runlog::test_log as log;

    #[test]
    fn preparing_selectors_reports_and_can_be_stopped_without_keeping_a_table() {
        let log = log("seq_len,time_ms\n1,1\n2,4\n3,9\n4,16\n5,25\n6,36\n");
        let strata = StrataGroups::new(&log, Strata::None, 0).unwrap();
        let options = SelectOptions {
            bins: BinCount::Fixed(3),
            method: Some(Method::Optimal),
            ..SelectOptions::default()
        };
        let stopped = Selectors::new_with_progress(&log, &strata, &options, &mut |_, _| {
            ControlFlow::Break(())
        })
        .unwrap();
        assert!(stopped.is_none());
        assert!(strata.table(0, 3).is_none(), "a stopped build is not kept");

        let mut reports = Vec::new();
        let selectors = Selectors::new_with_progress(&log, &strata, &options, &mut |d, t| {
            reports.push((d, t));
            ControlFlow::Continue(())
        })
        .unwrap()
        .unwrap();
        assert_eq!(
            reports.last().map(|r| r.0 == r.1),
            Some(true),
            "{reports:?}"
        );
        assert!(strata.table(0, 3).is_some(), "the finished table is kept");
        let via_plain = run_selection_on(&log, &strata, &options).unwrap();
        let point = selectors.curve_point(3, 1).unwrap();
        assert_eq!(point.bins, via_plain.bins());
    }

    #[test]
    fn the_curve_holds_every_k_in_order_and_stops_when_told() {
        let rows: String = (0..300)
            .map(|i| format!("{},{}\n", 10 + i % 37, (10 + i % 37) * 3 + i % 5))
            .collect();
        let log = log(&format!("seq_len,time_ms\n{rows}"));
        let strata = StrataGroups::new(&log, Strata::None, 0).unwrap();
        let options = SelectOptions {
            bins: BinCount::Target(1.0),
            method: Some(Method::Kmeans),
            max_bins: 20,
            error_curve: true,
            ..SelectOptions::default()
        };
        let selectors = Selectors::new(&log, &strata, &options).unwrap();
        let mut reports = Vec::new();
        let curve = selectors
            .curve(&options, &mut |d, t| {
                reports.push((d, t));
                ControlFlow::Continue(())
            })
            .unwrap()
            .unwrap();
        assert_eq!(reports, (1..=20).map(|d| (d, 20)).collect::<Vec<_>>());
        for (i, point) in curve.iter().enumerate() {
            let alone = selectors.curve_point(i + 1, options.samples).unwrap();
            assert_eq!(point.k, i + 1);
            assert_eq!(point.worst_error_pct, alone.worst_error_pct);
        }
        let mut told = 0;
        let stopped = selectors.curve(&options, &mut |_, _| {
            told += 1;
            ControlFlow::Break(())
        });
        assert!(stopped.unwrap().is_none());
        assert_eq!(told, 1);
    }

    #[test]
    fn advice_does_not_ask_for_bins_that_cannot_exist() {
        // Three keys, each with a spread: K = 3 is as far as binning goes.
        let narrow = log("seq_len,time_ms\n1,1\n1,3\n2,4\n2,7\n3,9\n3,12\n1,2\n2,5\n3,10\n");
        let options = SelectOptions {
            bins: BinCount::Target(0.001),
            ..SelectOptions::default()
        };
        let selection = run_selection(&narrow, &options).unwrap();
        let advice = selection.target.unwrap().advice.unwrap();
        assert!(!advice.contains("--max-bins"), "{advice}");
        assert!(advice.contains("own bin (K = 3)"), "{advice}");

        // With more keys than --max-bins, more bins remain the advice.
        let rows: String = (0..40)
            .map(|i| format!("{},{}\n", i, i * i + i % 3))
            .collect();
        let wide = log(&format!("seq_len,time_ms\n{rows}"));
        let options = SelectOptions {
            bins: BinCount::Target(0.0001),
            max_bins: 4,
            ..SelectOptions::default()
        };
        let advice = run_selection(&wide, &options)
            .unwrap()
            .target
            .unwrap()
            .advice
            .unwrap();
        assert!(advice.contains("--max-bins 8"), "{advice}");
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
                let selectors = Selectors::new(&log, &strata, &options).unwrap();
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
                    selectors: &selectors.selectors,
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
    fn strata_parse() {
        assert_eq!("epoch".parse::<Strata>(), Ok(Strata::Epoch));
        assert_eq!("phases:3".parse::<Strata>(), Ok(Strata::Phases(3)));
        assert!("phases:0".parse::<Strata>().is_err());
    }

    #[test]
    fn target_picks_smallest_k_that_is_exact_for_a_key_function() {
        // time = key^2 exactly: 3 unique keys -> K=3 gives zero error and zero spread.
        let log = log("seq_len,time_ms\n1,1\n2,4\n3,9\n1,1\n3,9\n2,4\n3,9\n");
        let options = SelectOptions {
            bins: BinCount::Target(0.001),
            ..SelectOptions::default()
        };
        let selection = run_selection(&log, &options).unwrap();
        assert_eq!(selection.bins(), 3);
        assert!(selection.target.as_ref().unwrap().met);
        assert_eq!(selection.seqpoints.iter().map(|s| s.weight).sum::<u64>(), 7);
        assert_eq!(selection.curve.len(), 3);
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
    fn target_chooses_k_per_stratum() {
        // Phase 1: one key, constant time: exact with K = 1. Phase 2: keys 1..4, time = key^2:
        // exact only with K = 4. The target is met with K = 1 + 4, not 4 in each.
        let log = log("seq_len,time_ms\n1,5\n1,5\n1,5\n1,5\n1,1\n2,4\n3,9\n4,16\n");
        let options = SelectOptions {
            bins: BinCount::Target(0.001),
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

    #[test]
    fn the_target_applies_to_every_metric() {
        // Time is exact per key with K = 2; energy varies within key 2 (5, 9, 7), so the
        // iteration picked for key 2 (energy 5) projects 2 * 1 + 3 * 5 = 17 against 23.
        let text = "seq_len,time_ms,energy_j\n1,10,1\n1,10,1\n2,20,5\n2,20,9\n2,20,7\n";
        let options = SelectOptions {
            bins: BinCount::Target(0.001),
            ..SelectOptions::default()
        };
        let both = run_selection(&log(text), &options).unwrap();
        assert!(!both.target.as_ref().unwrap().met);
        let energy = &both.projection.totals[1];
        assert_eq!(
            (energy.metric.as_str(), energy.projected),
            ("energy_j", 17.0)
        );
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
        // One key with noisy times: no K can shrink the interval, more samples can.
        let log = log("seq_len,time_ms\n5,10\n5,14\n5,9\n5,11\n5,13\n5,8\n5,12\n5,10\n");
        let selection = run_selection(&log, &SelectOptions::default()).unwrap();
        let target = selection.target.unwrap();
        assert!(!target.met);
        assert!(target.advice.unwrap().contains("--samples"));
    }
}
