//! The documents seqpoint writes and reads back, fully typed: `seqpoint/1` (a selection) and
//! `seqpoint-projection/1` (what `project` found); `report::document` holds the third. Plain
//! data low in the crate, so readers (`runlog::measured`) and writers alike can use them.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Which configuration a metric was measured on: the run log itself, or `--compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConfigRole {
    Baseline,
    Compare,
}

impl ConfigRole {
    pub fn name(self) -> &'static str {
        match self {
            ConfigRole::Baseline => "baseline",
            ConfigRole::Compare => "compare",
        }
    }
}

/// One stratum of a selection: its K and how well its own SeqPoints project it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StratumOutcome {
    pub name: String,
    pub iterations: u64,
    pub k: usize,
    /// Whether this stratum's own projection meets the target (always true with fixed K). The
    /// error target applies to the whole run, so a stratum may miss it while the run meets it.
    pub met: bool,
    /// This stratum's own worst error and 95% half-width, against its own totals, in percent.
    pub worst_error_pct: f64,
    /// Infinite where the data cannot bound a figure (`estimate::CANNOT_BOUND`): written as
    /// `null`, read back as infinity.
    #[serde(deserialize_with = "null_as_infinity")]
    pub worst_half_width_pct: f64,
}

/// A baseline's error on one configuration and metric (or on the speedup, `config` absent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaselineError {
    pub metric: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<ConfigRole>,
    /// Percent error (for random draws: the mean absolute error over the draws).
    pub error_pct: f64,
    /// For random draws: the worst absolute error over the draws.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worst_error_pct: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// `first-n`, `random`, `systematic` or `median-sl`.
    pub method: String,
    /// Profiled iterations.
    pub iterations: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draws: Option<u32>,
    pub errors: Vec<BaselineError>,
    pub speedup_errors: Vec<BaselineError>,
}

impl Baseline {
    /// The largest error over configurations and metrics (worst draw for random).
    pub fn worst_error_pct(&self) -> f64 {
        self.errors
            .iter()
            .map(|e| e.worst_error_pct.unwrap_or(e.error_pct))
            .fold(0.0, f64::max)
    }
}

pub const SCHEMA: &str = "seqpoint/1";

/// `selection.cost` of a run whose metrics were measured (otherwise the proxy cost's name).
pub const MEASURED_COST: &str = "measured";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputDoc {
    pub path: String,
    /// Iterations the selection stands for: the log's rows less the excluded ones (so the
    /// SeqPoints' weights sum to it).
    pub iterations: u64,
    /// Rows of the log left out by `--exclude` (0, and not written, without it).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub excluded_iterations: u64,
    pub epochs: Option<u32>,
    pub key: Vec<String>,
    pub unique_keys: u64,
    pub metrics: Vec<String>,
    pub compare: Option<String>,
    /// The log had no iteration column, so iterations are row numbers (0, 1, ...), and these
    /// columns looked like one (`global_step`); absent when none did.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub iteration_like: Vec<String>,
    /// Rows `--skip-bad` left out of the log (absent when none were).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped_rows: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelectionDoc {
    pub method: String,
    /// How far above the optimum `optimal`'s bins may be, in % of their objective, when too
    /// many distinct noisy keys made it use the blocked fallback (absent when exact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binning_gap_pct: Option<f64>,
    pub pick: String,
    pub bins: usize,
    pub target_error_pct: Option<f64>,
    pub cost: String,
    pub warmup: u64,
    /// Iteration ranges left out before grouping (`--exclude`), merged, as "A-B".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    pub seed: u64,
    #[serde(default = "one")]
    pub samples: u64,
    #[serde(default)]
    pub strata: String,
    #[serde(default)]
    pub target_met: Option<bool>,
    #[serde(default)]
    pub advice: Option<String>,
    /// Each stratum's name, iterations, K and own figures (empty without --strata).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_stratum: Vec<StratumOutcome>,
}

pub(crate) fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn one() -> u64 {
    1
}

fn null_as_infinity<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::INFINITY))
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BinRange {
    pub min: Vec<u32>,
    pub max: Vec<u32>,
}

/// Within-bin statistics of one metric on the baseline: what `project` needs for intervals.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BinStats {
    pub count: u64,
    pub mean: f64,
    pub sd: f64,
    /// The picked key's within-key noise of one iteration (coefficient of variation, pooled
    /// over the bin's keys), its mean minus the bin's mean, and its iterations: what the
    /// interval of the design actually used is computed from. Absent in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_cv: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_offset: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_count: Option<u64>,
    /// The baseline value the bin's excluded iterations (`SeqPointDoc::excluded`) are counted
    /// at, on average: each at its key's mean over the kept iterations (absent without any).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excluded_mean: Option<f64>,
    /// How the baseline's expected values (its curve, `pick::BaselineCurve`; a proxy's own
    /// values) spread over the bin's iterations about their mean: `E[v ln^k v] / k!` for k =
    /// 1..=4, `v` an iteration's expected value over the bin's mean (`stats::LevelMoments`).
    /// What lets `project` follow a ratio that changes with the cost within a bin
    /// (`project::trend`). Absent for a bin of one key and in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub levels: Option<[f64; 4]>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeqPointDoc {
    pub id: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stratum: Option<usize>,
    pub iteration: u64,
    pub epoch: Option<u32>,
    pub key: Vec<u32>,
    pub weight: u64,
    /// Iterations left out by `--exclude` whose keys fall in this bin: in no figure of
    /// `select` (`weight` is of the kept iterations), counted by `project`, which projects the
    /// whole run at its own lengths (`select::excluded_shares`). 0, and not written, without.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub excluded: u64,
    pub bin: BinRange,
    pub alternates: Vec<u64>,
    /// The baseline's logged values at each alternate, by metric, in `alternates`' order:
    /// what pairs a measured alternate with the baseline (`project`'s ratio estimate).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub alternate_metrics: BTreeMap<String, Vec<f64>>,
    /// The baseline's expected values at each alternate's key, by metric, in `alternates`'
    /// order (see `ProfileRowDoc::expected`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub alternate_expected: BTreeMap<String, Vec<f64>>,
    /// The SeqPoint's own iteration's values, by metric.
    pub metrics: BTreeMap<String, f64>,
    /// The baseline's expected values at the SeqPoint's key, by metric.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub expected: BTreeMap<String, f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compare_metrics: Option<BTreeMap<String, f64>>,
    /// Its bin's statistics on the baseline, by metric.
    #[serde(default)]
    pub bin_stats: BTreeMap<String, BinStats>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelectDoc {
    pub schema: String,
    pub input: InputDoc,
    pub selection: SelectionDoc,
    pub seqpoints: Vec<SeqPointDoc>,
    pub projection: Vec<TotalDoc>,
    pub speedup: Option<SpeedupDoc>,
    /// The speedup of every metric (`speedup` is the first of these), so that time and energy
    /// are both reported.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub speedups: Vec<SpeedupDoc>,
    /// Infinite when the SeqPoints' own metric is zero; JSON has no infinity, so it is written
    /// as `null` and read back as infinity.
    #[serde(deserialize_with = "null_as_infinity")]
    pub profiling_reduction: f64,
    /// Iterations to profile in all (the plan's when there is one) and their share of the
    /// run's baseline time (first metric), a fraction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations_to_profile: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profiled_share: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The iterations to profile when more than one per SeqPoint is planned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanDoc>,
    /// Naive ways to pick the same number of iterations, and their errors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub baselines: Vec<Baseline>,
}

impl SelectDoc {
    /// Every row the plan names, to profile now (`profile`) and in reserve, in that order.
    pub fn plan_rows(&self) -> impl Iterator<Item = &ProfileRowDoc> {
        self.plan
            .iter()
            .flat_map(|p| p.profile.iter().chain(p.reserve.iter()))
    }
}

impl SelectionDoc {
    /// Whether the SeqPoints were chosen on a proxy cost (no metric was measured).
    pub fn is_proxy(&self) -> bool {
        self.cost != MEASURED_COST
    }
}

/// One configuration's projected total of one metric against its actual total. Fields stand
/// in the order the format has always written them; a figure that is not a number (an error
/// against a zero total) is `null`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TotalDoc {
    pub actual: Option<f64>,
    pub config: ConfigRole,
    pub error_pct: Option<f64>,
    pub interval: [f64; 2],
    pub metric: String,
    pub projected: f64,
    /// Why no interval bounds this figure (`interval` is then `[0, f64::MAX]`): absent when
    /// one does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cannot_bound: Option<String>,
}

/// The projected speedup of one metric (baseline over compare). A speedup over a zero total
/// is not a number: its figures are then `null`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpeedupDoc {
    pub actual: Option<f64>,
    pub error_pct: Option<f64>,
    pub interval: [Option<f64>; 2],
    pub metric: String,
    pub projected: Option<f64>,
    /// As `TotalDoc::cannot_bound`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cannot_bound: Option<String>,
}

/// How many iterations to profile per SeqPoint, and which.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanDoc {
    /// `samples` (M per SeqPoint), `budget` (Neyman allocation of B) or `target`
    /// (the cheapest plan whose 95% interval meets the error target).
    pub rule: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_error_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub met: Option<bool>,
    /// Profiled iterations in all.
    pub iterations: u64,
    pub bins: Vec<PlannedBinDoc>,
    /// One entry per iteration to profile.
    pub profile: Vec<ProfileRowDoc>,
    /// More iterations of each SeqPoint's bin, not to profile now: what `project
    /// --target-error` may list for a top-up when the new configuration turns out noisier
    /// than planned (absent in files from before it). A top-up's own file holds here the
    /// original plan's other rows, so that either file reads the same measurements.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reserve: Vec<ProfileRowDoc>,
    /// Projected from the planned iterations' logged values, intervals for this plan.
    #[serde(default)]
    pub projection: Vec<TotalDoc>,
    #[serde(default)]
    pub speedup: Option<SpeedupDoc>,
    #[serde(default)]
    pub profiling_reduction: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedBinDoc {
    pub seqpoint: usize,
    pub samples: u64,
    pub weight: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileRowDoc {
    pub iteration: u64,
    pub seqpoint: usize,
    /// The baseline's logged values at this iteration, by metric (pairs the speedup).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, f64>,
    /// The baseline's expected value at this iteration's key, by metric: its bin's baseline
    /// curve (`pick::BaselineCurve`), what `project`'s ratio divides by. Absent in older files,
    /// which divide by `metrics`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub expected: BTreeMap<String, f64>,
    #[serde(default)]
    pub epoch: Option<u32>,
    #[serde(default)]
    pub key: Vec<u32>,
}

pub const PROJECTION_SCHEMA: &str = "seqpoint-projection/1";

/// A SeqPoint with no measurement, left out under `--allow-missing`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MissingBin {
    pub seqpoint: usize,
    pub iteration: u64,
    /// Iterations it stands for (scaled to the run) and their share of the run.
    pub weight: f64,
    pub share: f64,
}

/// One metric's projection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricProjection {
    pub metric: String,
    /// The baseline's whole-run total from the SeqPoints file (scaled to the run).
    pub baseline_total: Option<f64>,
    /// `actual` when the selection log measured it, `projected` otherwise.
    pub baseline_source: Option<String>,
    pub baseline_interval: Option<[f64; 2]>,
    pub projected_total: f64,
    /// 95% interval: per bin the larger of the within-bin and repeated-sample variances.
    pub interval: [f64; 2],
    /// 95% interval from the within-bin spread alone.
    pub interval_within_bin: [f64; 2],
    /// 95% interval from repeated samples alone (every measured SeqPoint has two or more).
    pub interval_samples: Option<[f64; 2]>,
    /// Baseline total over projected total: the speedup (for energy: the saving ratio).
    pub speedup: Option<f64>,
    pub speedup_interval: Option<[f64; 2]>,
    /// `speedup`, or `saving` for energy metrics.
    pub ratio: String,
    pub missing_bins: Vec<MissingBin>,
    pub missing_share: f64,
    /// `ratio`: every measured iteration paired with its logged baseline value, the new total
    /// is the ratio estimate on the baseline (`project::ratio`); `paired`: both configurations
    /// measured at the same iterations (`--baseline`), both totals ratio estimates on the
    /// proxy cost (`project::paired`); `design` otherwise (absent in files from before the
    /// ratio estimate).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate: Option<String>,
    /// The ratio estimate's blend (`project::ratio`): the share of an iteration's baseline
    /// noise (its logged value less the baseline expected at its key) that the new
    /// configuration's measurements show they follow, 0 to 1. Absent where the SeqPoints
    /// file has no expected values or the ratio estimate is not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_noise_share: Option<f64>,
    /// The ratio estimate's cost trend (`project::trend`): the new configuration's ratio to
    /// the baseline goes as the baseline's cost to this power across the bins, and is followed
    /// so within each (0 for a flat ratio). Absent where the ratio estimate is not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_trend: Option<f64>,
    /// Measured rows used and SeqPoints measured.
    pub samples: u64,
    pub measured_seqpoints: u64,
}

/// The `seqpoint-projection/1` document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProjectionReport {
    pub schema: String,
    pub seqpoints: String,
    pub measured: String,
    pub identified_by: String,
    /// Iterations logged, iterations of the projected run, and the weight scale between them.
    pub logged_iterations: u64,
    pub run_iterations: f64,
    pub scale: f64,
    /// `--exclude`'s merged ranges, whose measured rows were left out (absent when none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub excluded: Vec<String>,
    /// Iterations `select --exclude` left out and the SeqPoints file places in bins: part of
    /// `logged_iterations`, projected at their bins (absent when none).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub excluded_in_bins: u64,
    /// Every measurement file, when there were several (`measured` then names the first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measured_files: Vec<String>,
    /// `--baseline`'s measurements of the same iterations on the baseline configuration (the
    /// lengths-only flow): the baseline total is then projected, not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_measured: Option<String>,
    pub metrics: Vec<MetricProjection>,
    /// What the intervals do not bound, and the flag that would, where the design leaves
    /// something out (`project::paired::one_per_seqpoint_from_lengths`); absent when nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caveat: Option<String>,
    /// `--target-error`'s verdict on every projected figure, and the top-up where unmet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<TargetDoc>,
}

/// Whether every projected figure (each metric's new total and speedup) is within the error
/// target at 95%, and which iterations, not yet measured, are expected to meet it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetDoc {
    pub target_error_pct: f64,
    /// Met now, by the measurements given.
    pub met: bool,
    /// Each figure judged and its 95% half-width now, in percent.
    pub figures: Vec<TargetFigureDoc>,
    /// The iterations to measure next (empty when met).
    pub top_up: Vec<TopUpRow>,
    /// Whether the top-up is expected to meet the target, from the noise measured so far.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_met: Option<bool>,
    /// Why the top-up is not expected to meet it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Where a top-up `project` listed was measured and the target is still not met, why
    /// (`project::shortfall`); or which of its iterations are not measured yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shortfall: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TargetFigureDoc {
    pub figure: String,
    /// Infinite where the measurements cannot bound the figure: written as `null`, read back
    /// as infinity.
    #[serde(deserialize_with = "null_as_infinity")]
    pub half_width_pct: f64,
}

/// One iteration to measure next, as `profile_seqpoints` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopUpRow {
    pub iteration: u64,
    pub seqpoint: usize,
}
