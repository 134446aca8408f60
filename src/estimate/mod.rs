//! The one variance of a projected total and of a speedup, for the design the tool uses: a
//! representative key per bin (nearest-mean, median, centroid or mode) and iterations of that
//! key spread over its values (the median first), profiled `s` times (the pick, then its
//! alternates). Every interval `select` and `project` print comes from here;
//! `docs/intervals.md` derives it.
//!
//! Per bin `b` of weight `w`, with the value `v` measured at the pick (mean of `s`), the error
//! is a known bias plus noise:
//! - bias `w v d/x`: how far the picked key's mean stands from the bin's mean on the baseline
//!   (`x` the baseline value at the pick), known, so the bins' offsets add with their signs;
//! - noise `(w v)^2 cv^2 (1/s - 1/w)+`, `cv` the within-key noise of one iteration pooled over
//!   the bin's key groups (the baseline log's; scaled for a new configuration by what its
//!   measurements show, with Student's t for the few degrees of freedom that rests on); on a
//!   new configuration also `cv_B^2 / n (1 - n/w)`, the noise of the picked key's baseline
//!   mean the carried offset rests on.
//!
//! The 95% half-width holds `|bias + noise|` 95% of the time (`stats::half_width_with_bias`).
//! The speedup is the paired ratio `sum w x / sum w y` (baseline and new values at the same
//! picks), whose offsets `d` cancel; its bias is how far the baseline's values at the picks
//! stand from their keys' means, its noise the new pick's and both keys' means'.
//!
//! Where the new configuration's every iteration is logged (`select --compare`, `LoggedNew`),
//! its own within-key noise replaces the baseline's (per bin, taken as known), and its own
//! offset `d_N` replaces the carried one as the bias `w d_N` (with rows of other keys carried
//! at the picks' ratio from their known baseline spread `x - key mean`). A key fitted on the
//! baseline's cost does not see what the new configuration speeds up, so at one key it may
//! vary more, and its picked key stand apart from its bin differently, than the baseline's.

mod figure;

pub use figure::{BinTerms, Combined, Figure};

use crate::groups::{KeyGroups, Moments};
use crate::stats::{
    chi_square_1pct_over_dof, compensated_sum, half_width_pct, half_width_with_bias, interval, t95,
    Z95,
};

/// A projected total (or ratio) with its variance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub value: f64,
    pub variance: f64,
}

impl Estimate {
    pub fn interval(&self) -> [f64; 2] {
        interval(self.value, self.variance)
    }

    /// Half-width of the 95% interval as a percentage of the estimate.
    pub fn half_width_pct(&self) -> f64 {
        half_width_pct(self.value, self.variance)
    }
}

/// How one bin adds to the variance of a projected total: `(weight, population, samples,
/// sd) -> variance`. A plain function so the random-draw interval check can compare formulas.
pub type StratumVariance = fn(f64, f64, f64, f64) -> f64;

/// Stratified sampling: a bin of `population` iterations standing for `weight` iterations,
/// `samples` of them profiled at random, within-bin standard deviation `sd`, adds
/// `weight^2 (1 - samples/population) sd^2 / samples` to `Var(P)`. The finite-population
/// correction makes a fully profiled bin exact. This is the interval of a pick drawn at
/// random from the whole bin; it stands for bins `project` must impute (`--allow-missing`).
pub fn stratum_variance(weight: f64, population: f64, samples: f64, sd: f64) -> f64 {
    let samples = samples.max(1.0);
    let unsampled = (1.0 - samples / population).max(0.0);
    weight * weight * unsampled * sd * sd / samples
}

/// What the baseline log says about a bin's picked key, for one metric.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct KeyNoise {
    /// Relative within-key noise of one iteration (coefficient of variation), pooled over the
    /// bin's key groups with two or more iterations, or the whole run's where the bin's reads
    /// quiet beyond chance (`KeyLog::cv2`).
    pub cv: f64,
    /// The picked key's mean minus the bin's mean (representation error on the baseline).
    pub offset: f64,
    /// Iterations of the picked key.
    pub count: u64,
    /// The picked key's mean on the baseline.
    pub mean: f64,
    /// The within-key noise the bin's own keys show: `cv` before the run's and before any
    /// noise a plan assumed (`at_least`). The SeqPoints file records this one, so that
    /// `project` never takes an assumption for a measurement, and the run's noise it floors
    /// at is the iteration-weighted mean of what the bins show.
    pub logged_cv: f64,
    /// The bin holds several keys that the baseline cannot tell apart (the same mean, no
    /// noise within any key): how a new configuration differs between them is nothing the
    /// baseline shows, so a figure carried from a pick in it cannot be bounded unless the bin
    /// was profiled whole (`Figure::unbounded`).
    pub blind: bool,
    /// What the new configuration's own log says of the same key, where its every iteration
    /// is logged (`select --compare`); `None` where only measurements at the picks will show
    /// it (`project`, and a log without a compare configuration).
    pub new: Option<LoggedNew>,
}

/// The new configuration's within-key noise and representation offset at a bin's picked key,
/// read off its own log as `KeyNoise` reads the baseline's. At one key the new configuration
/// may vary more than the baseline: a key fitted on the baseline's cost does not see the work
/// the new configuration speeds up (at one fitted cost, steps with more attention run faster
/// on a configuration with faster attention), and how far the picked key stands from its bin
/// differs between the configurations for the same reason. Known from the log, neither is
/// scaled from the baseline's nor estimated from the few picks.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LoggedNew {
    /// Relative within-key noise of one iteration, pooled as `KeyNoise::cv` is.
    pub cv: f64,
    /// The picked key's mean minus the bin's mean on the new configuration.
    pub offset: f64,
    /// How many of the rows a plan lists first are of the picked key (`u64::MAX` for a bin of
    /// one key): beyond them the rows are other keys', whose own offsets are not known here.
    pub own_rows: u64,
}

/// The within-key noise a plan assumes for measurements not yet taken when the log has
/// lengths only (its proxy cost is exact per length, so the log shows none): one iteration's
/// coefficient of variation. 4% is the bundled speech logs' standard deviation within one
/// length (3-4%, heavier-tailed than their 1.5-2.5% median absolute deviation); `project
/// --baseline` measures the real noise and confirms the plan or tops it up.
pub const ASSUMED_PROXY_CV: f64 = 0.04;

impl KeyNoise {
    /// This noise, but at least `cv` per iteration: what a plan assumes of measurements the
    /// log cannot show (`ASSUMED_PROXY_CV`).
    pub fn at_least(self, cv: f64) -> KeyNoise {
        KeyNoise {
            cv: self.cv.max(cv),
            new: self.new.map(|n| LoggedNew {
                cv: n.cv.max(cv),
                ..n
            }),
            ..self
        }
    }

    /// This noise, with `own_rows` of the rows a plan lists first of the picked key
    /// (`LoggedNew::own_rows`).
    pub fn with_own_rows(self, own_rows: u64) -> KeyNoise {
        KeyNoise {
            new: self.new.map(|n| LoggedNew { own_rows, ..n }),
            ..self
        }
    }

    /// Whether a bin is one the baseline cannot tell apart (`blind`): several keys, no noise
    /// within any (`cv2`), and every key's mean the same (`alike`).
    pub fn is_blind(cv2: f64, alike: bool, several_keys: bool) -> bool {
        cv2 == 0.0 && alike && several_keys
    }

    /// The bin `members` (key group indices) with key group `picked` as its representative,
    /// on the baseline's metric `metric`; with a compare configuration in `groups`, what its
    /// own log says of the same key too (`LoggedNew`).
    pub fn of(groups: &KeyGroups, members: &[usize], picked: usize, metric: usize) -> KeyNoise {
        let moments = &groups.moments[0][metric];
        let base = KeyLog::of(moments, members, picked, groups.run_cv2[0][metric]);
        let alike = members
            .iter()
            .all(|&g| moments[g].mean == moments[picked].mean);
        let blind = KeyNoise::is_blind(base.own_cv2, alike, members.len() > 1);
        let new = groups.moments.get(1).map(|moments| {
            let new = KeyLog::of(&moments[metric], members, picked, groups.run_cv2[1][metric]);
            LoggedNew {
                cv: new.cv2.sqrt(),
                offset: new.offset,
                own_rows: u64::MAX,
            }
        });
        KeyNoise {
            cv: base.cv2.sqrt(),
            logged_cv: base.own_cv2.sqrt(),
            offset: base.offset,
            count: moments[picked].count,
            mean: moments[picked].mean,
            blind,
            new,
        }
    }
}

/// One configuration's log at a bin's picked key: the squared within-key noise pooled over
/// the bin's key groups with two or more iterations (else over the whole run's, else the
/// bin's own spread), and the picked key's mean minus the bin's.
struct KeyLog {
    /// The noise the bin's own keys show.
    own_cv2: f64,
    /// What an estimate takes: `own_cv2`, or the run's (`KeyGroups::run_cv2`) where the bin's
    /// reads too far below it to be chance (`KeyLog::reads_quiet`). A bin's keys hold
    /// iterations of a slow tail or none, and a bin whose keys missed the tail reads quiet
    /// although its unprofiled iterations are as likely to hold one as any: with heavy tails,
    /// one iteration per SeqPoint at K = 64 covered the speedup 91.5% of the time on its own
    /// keys' noise. Floored at the run's everywhere it held 97%, but every bin whose keys are
    /// quieter than the run's widened (the bundled sample's 1% plan grew from 60 to 65
    /// iterations); floored where the bin reads quiet beyond chance, it held 96% on the bins
    /// of the method's own objective, and the others keep their own (docs/plans.md).
    cv2: f64,
    offset: f64,
}

impl KeyLog {
    fn of(moments: &[Moments], members: &[usize], picked: usize, run_cv2: Option<f64>) -> KeyLog {
        let own = Moments::pooled_cv2(members.iter().map(|&g| &moments[g]));
        let own_cv2 = own.map(|(cv2, _)| cv2).or(run_cv2).unwrap_or_else(|| {
            // Every key seen once: the bin's own spread is all there is to go by.
            let bin = Moments::pooled(members.iter().map(|&g| &moments[g]));
            if bin.mean != 0.0 {
                bin.sample_variance() / (bin.mean * bin.mean)
            } else {
                0.0
            }
        });
        let weight: f64 = members.iter().map(|&g| moments[g].count as f64).sum();
        let bin_mean = members
            .iter()
            .map(|&g| moments[g].count as f64 * moments[g].mean)
            .sum::<f64>()
            / weight.max(1.0);
        let cv2 = match (own, run_cv2) {
            (Some((cv2, dof)), Some(run)) if KeyLog::reads_quiet(cv2, dof, run) => run,
            _ => own_cv2,
        };
        KeyLog {
            own_cv2,
            cv2,
            offset: moments[picked].mean - bin_mean,
        }
    }

    /// Whether noise `cv2` read on `dof` degrees of freedom is below the run's `run_cv2`
    /// beyond chance: under the 1% point of chi-square at its degrees (normal noise as
    /// quiet as the run's reads that low one time in a hundred).
    fn reads_quiet(cv2: f64, dof: f64, run_cv2: f64) -> bool {
        cv2 < run_cv2 * chi_square_1pct_over_dof(dof)
    }
}

/// One SeqPoint as the estimate takes it: its weight, the values measured at its profiled
/// iterations (the pick first) on the baseline and, when there is one, the new configuration
/// (same iterations, same order), and what the baseline log says about its key.
#[derive(Debug, Clone, PartialEq)]
pub struct PickedBin {
    pub weight: f64,
    pub baseline: Vec<f64>,
    /// Empty when there is no new configuration.
    pub new: Vec<f64>,
    /// Distinct iterations profiled (repeats of one iteration count once).
    pub distinct: u64,
    pub key: KeyNoise,
    /// The stratum (training phase) the SeqPoint belongs to: a speedup that drifts between
    /// phases is not noise, so the new configuration's noise is fitted per stratum.
    pub stratum: usize,
}

fn mean(values: &[f64]) -> f64 {
    compensated_sum(values.iter().copied()) / values.len().max(1) as f64
}

impl PickedBin {
    /// Mean baseline value at the profiled iterations.
    pub fn x(&self) -> f64 {
        mean(&self.baseline)
    }

    /// Mean new-configuration value at the profiled iterations.
    pub fn y(&self) -> f64 {
        mean(&self.new)
    }

    /// The sums the interval formulas read of this bin.
    pub fn sums(&self) -> BinSums {
        let ratios: Vec<f64> = self
            .baseline
            .iter()
            .zip(&self.new)
            .filter_map(|(&x, &y)| log_ratio(x, y))
            .collect();
        let m = mean(&ratios);
        BinSums {
            weight: self.weight,
            x: self.x(),
            y: self.y(),
            new_count: self.new.len(),
            ratios: RatioSpread {
                count: ratios.len(),
                squares: ratios.iter().map(|r| (r - m).powi(2)).sum(),
            },
            distinct: self.distinct,
            key: self.key,
            stratum: self.stratum,
        }
    }
}

/// One bin as the interval formulas read it: its measured values reduced to their means and
/// the spread of their paired log ratios. `PickedBin::sums` makes it from the values; a plan's
/// search makes it from running sums over its listed rows, so that trying a sample count
/// costs a step per bin, not per profiled iteration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BinSums {
    pub weight: f64,
    /// Mean baseline value at the profiled iterations.
    pub x: f64,
    /// Mean new-configuration value at the profiled iterations (0 without one).
    pub y: f64,
    /// New-configuration values measured (0 without one).
    pub new_count: usize,
    pub ratios: RatioSpread,
    pub distinct: u64,
    pub key: KeyNoise,
    pub stratum: usize,
}

/// The paired log ratios `ln(y / x)` of a bin's profiled iterations (those with both values
/// positive): how many, and their squared deviations from their mean, summed.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RatioSpread {
    pub count: usize,
    pub squares: f64,
}

impl BinSums {
    /// `cv^2 / n (1 - n/w)`: the noise of the picked key's mean, as a share of the bin.
    fn key_mean_noise(&self, cv2: f64) -> f64 {
        let n = self.key.count.max(1) as f64;
        cv2 / n * (1.0 - n / self.weight.max(1.0)).max(0.0)
    }

    /// How far the baseline's value at the picks stands from its key's mean, relatively:
    /// part of the speedup's error that the new configuration does not share.
    fn pick_offset_rel(&self) -> f64 {
        if self.x != 0.0 && self.key.mean != 0.0 {
            (self.x - self.key.mean) / self.x
        } else {
            0.0
        }
    }

    /// `others / s^2`: the rows beyond the picked key's own among the `s` profiled.
    fn other_keys_share(&self, new: LoggedNew) -> f64 {
        let s = self.distinct.max(1);
        let others = s.saturating_sub(new.own_rows);
        others as f64 / (s as f64).powi(2)
    }

    /// The relative representation error `d / x` (0 without a baseline value).
    fn offset_rel(&self) -> f64 {
        if self.x != 0.0 {
            self.key.offset / self.x
        } else {
            0.0
        }
    }
}

fn sums_of(bins: &[PickedBin]) -> Vec<BinSums> {
    bins.iter().map(PickedBin::sums).collect()
}

/// A figure's variance as `sum_b per_sample[b] / s_b + rest`, `s_b` the distinct iterations
/// profiled for bin `b`: what a plan can shrink (the noise of the picks) and what it cannot
/// (the noise of the keys' means); and the known error of these picks, `bias` (their offsets
/// added with their signs), which the interval covers as a bias, not as noise.
#[derive(Debug, Clone, PartialEq)]
pub struct VarianceParts {
    pub value: f64,
    pub per_sample: Vec<f64>,
    pub rest: f64,
    pub bias: f64,
}

impl VarianceParts {
    /// The variance of the noise alone with `samples[b]` distinct iterations per bin.
    fn spread(&self, samples: &[u64]) -> f64 {
        let noise: f64 = self
            .per_sample
            .iter()
            .zip(samples)
            .map(|(a, &s)| a / s.max(1) as f64)
            .sum();
        (noise + self.rest).max(0.0)
    }

    /// The variance whose normal 95% interval, `Z95 sqrt(variance)`, is this figure's with
    /// `samples[b]` distinct iterations per bin (`variance_with_bias`). It falls as the
    /// samples grow.
    pub fn variance(&self, samples: &[u64]) -> f64 {
        variance_with_bias(self.spread(samples), self.bias)
    }

    /// The parts scaled so that `Z95 sqrt(variance)` is the 95% half-width when the noise
    /// (`per_sample`) was estimated from `dof` degrees of freedom: Student's t at the
    /// Welch-Satterthwaite degrees of the noise's variance, `V^2 / (N^2 / dof)` with `N` the
    /// part estimated from the new configuration's values at the bins' profiled iterations
    /// (the rest is known from the baseline).
    fn widened_for(mut self, bins: &[BinSums], dof: f64) -> VarianceParts {
        if !dof.is_finite() {
            return self;
        }
        let samples: Vec<u64> = bins.iter().map(|b| b.distinct.max(1)).collect();
        let noise: f64 = self
            .per_sample
            .iter()
            .zip(&samples)
            .map(|(a, &s)| a / s as f64)
            .sum();
        let total = self.spread(&samples);
        if noise <= 0.0 || total <= 0.0 {
            return self;
        }
        // Never fewer than the noise's own (the finite-population part may make `V < N`).
        let effective = (total.powi(2) / (noise.powi(2) / dof)).max(dof);
        let factor = (t95(effective) / Z95).powi(2);
        for a in &mut self.per_sample {
            *a *= factor;
        }
        self.rest *= factor;
        self
    }

    fn estimate(&self, bins: &[BinSums]) -> Estimate {
        let samples: Vec<u64> = bins.iter().map(|b| b.distinct.max(1)).collect();
        Estimate {
            value: self.value,
            variance: self.variance(&samples),
        }
    }
}

/// The variance whose normal 95% interval, `Z95 sqrt(variance)`, holds a figure whose noise
/// has variance `spread` and whose known error is `bias`: the noise's, or with a bias the
/// `(h / Z95)^2` of the half-width `h` that holds `|bias + noise|` 95% of the time
/// (`stats::half_width_with_bias`).
pub fn variance_with_bias(spread: f64, bias: f64) -> f64 {
    if bias == 0.0 || spread.is_infinite() {
        return spread;
    }
    (half_width_with_bias(bias, spread.sqrt()) / Z95).powi(2)
}

/// A figure's parts over these bins, one profiled iteration's squared noise being `cv2[b]`
/// in bin `b` (`Figure::terms`), with the bins' summed terms: the values summed compensated.
fn parts_of(figure: Figure, bins: &[BinSums], cv2: &[f64]) -> (VarianceParts, BinTerms) {
    let terms: Vec<BinTerms> = bins
        .iter()
        .zip(cv2)
        .map(|(b, &c)| figure.terms(b, c))
        .collect();
    let mut sums = BinTerms::default();
    for &t in &terms {
        sums += t;
    }
    sums.x = compensated_sum(terms.iter().map(|t| t.x));
    sums.value = compensated_sum(terms.iter().map(|t| t.value));
    let combined = figure.combine(&sums);
    let parts = VarianceParts {
        value: combined.value,
        per_sample: terms
            .iter()
            .map(|t| t.per_sample * combined.noise_scale)
            .collect(),
        rest: sums.rest * combined.noise_scale,
        bias: combined.bias,
    };
    (parts, sums)
}

/// Variance parts of the baseline total `sum w x`.
pub fn baseline_parts(bins: &[PickedBin]) -> VarianceParts {
    baseline_parts_of(&sums_of(bins))
}

/// `baseline_parts` of bins given by their sums.
pub fn baseline_parts_of(bins: &[BinSums]) -> VarianceParts {
    parts_of(Figure::Baseline, bins, &NewNoise::baseline(bins).cv2).0
}

/// Variance parts of the new configuration's total `sum w y`.
pub fn new_parts(bins: &[PickedBin]) -> VarianceParts {
    let bins = sums_of(bins);
    new_parts_with(&bins, &NewNoise::of(&bins))
}

fn new_parts_with(bins: &[BinSums], noise: &NewNoise) -> VarianceParts {
    measured_parts(Figure::New, bins, noise)
}

/// The parts of a figure of the new configuration (its total, the speedup), whose noise
/// `noise` is estimated from its measurements: widened for the degrees of freedom that rests
/// on. No interval where the data are silent (`NewNoise::silent`, `Figure::unbounded`) and
/// some bin was not profiled whole: a zero width there would claim an exactness nothing
/// measured shows (an all-equal baseline binned in one bin and the new configuration
/// measured once projects anything at all). The variance is then infinite, so no target is
/// met by it, and the outputs say "cannot bound" with the reason (`CANNOT_BOUND`).
fn measured_parts(figure: Figure, bins: &[BinSums], noise: &NewNoise) -> VarianceParts {
    let (parts, sums) = parts_of(figure, bins, &noise.cv2);
    let parts = parts.widened_for(bins, noise.dof);
    if figure.unbounded(&sums, noise.silent) {
        return VarianceParts {
            rest: f64::INFINITY,
            ..parts
        };
    }
    parts
}

/// Variance parts of the paired speedup `sum w x / sum w y` (delta method): per bin the new
/// pick's noise and the noise of both keys' means; the representation offsets cancel. How far
/// the baseline's values at the picks stand from their keys' means is known: the new
/// configuration does not share it under independent noise, so it enters as its signed sum
/// (a bias of these picks), squared.
pub fn speedup_parts(bins: &[PickedBin]) -> VarianceParts {
    let bins = sums_of(bins);
    speedup_parts_with(&bins, &NewNoise::of(&bins))
}

/// The new configuration's total and the speedup (`new_parts`, `speedup_parts`) of bins given
/// by their sums, the new configuration's noise estimated once for both.
pub fn new_and_speedup_parts_of(bins: &[BinSums]) -> (VarianceParts, VarianceParts) {
    let noise = NewNoise::of(bins);
    (
        new_parts_with(bins, &noise),
        speedup_parts_with(bins, &noise),
    )
}

fn speedup_parts_with(bins: &[BinSums], noise: &NewNoise) -> VarianceParts {
    measured_parts(Figure::Speedup, bins, noise)
}

/// What an output says of a figure the data cannot bound (`Figure::unbounded`): its
/// interval is infinite, and JSON writes it as `[0, f64::MAX]` beside this reason.
pub const CANNOT_BOUND: &str = "cannot bound: nothing measured shows how the new \
    configuration varies where the baseline shows no difference (one iteration per SeqPoint, or \
    a bin of lengths the baseline cannot tell apart, measured at one of them); profile two or \
    more iterations per SeqPoint, or give each such length its own bin";

/// The baseline total `sum w x` and its variance.
pub fn baseline_total(bins: &[PickedBin]) -> Estimate {
    let bins = sums_of(bins);
    baseline_parts_of(&bins).estimate(&bins)
}

/// Squared noise of one iteration on the new configuration, per bin, and the degrees of
/// freedom it was estimated from (infinite when the baseline's noise stands).
#[derive(Debug, Clone, PartialEq)]
pub struct NewNoise {
    pub cv2: Vec<f64>,
    pub dof: f64,
    /// Nothing measured shows the new configuration's noise (no degrees of freedom), and the
    /// baseline it would stand in for shows none either: the data are silent, and a figure
    /// not measured whole cannot be bounded (`Figure::unbounded`).
    pub silent: bool,
}

impl NewNoise {
    /// The baseline's own noise, taken as known (pooled over the log's key groups).
    pub fn baseline(bins: &[BinSums]) -> NewNoise {
        NewNoise {
            cv2: bins.iter().map(|b| b.key.cv.powi(2)).collect(),
            dof: f64::INFINITY,
            silent: false,
        }
    }

    /// The baseline's noise, scaled up when the measurements show the new configuration is
    /// noisier (never down: a quieter configuration is not assumed from a few picks).
    ///
    /// With two or more values in every bin, the pooled within-bin variance of `ln(y / x)`
    /// (the paired ratios; the pairing removes the keys' differences). With one, the residual
    /// variance of `ln(y / x)` across SeqPoints after a straight line in `ln x` (the speedup
    /// may vary with length; what is left is noise, and any curvature, which only widens),
    /// fitted per stratum (a mean alone with two or three SeqPoints). With nothing to fit, the
    /// baseline's noise stands. A scaled noise carries the degrees of freedom of its fit.
    ///
    /// Where the new configuration's every iteration is logged (`LoggedNew`, `select
    /// --compare`), its own within-key noise is known and is taken, per bin, instead: what
    /// the few picks show of it rests on few degrees of freedom, and a noise chosen by the
    /// picks' spread is one a plan could be sized on by luck.
    pub fn of(bins: &[BinSums]) -> NewNoise {
        if let Some(logged) = NewNoise::logged(bins) {
            return logged;
        }
        let estimated = NewNoise::estimated(bins);
        if !bins.is_empty() && bins.iter().all(|b| b.key.new.is_some()) {
            // A log that shows no noise at any key is no measurement of how the picks'
            // neighbours differ: as silent as the picks alone show.
            return NewNoise {
                cv2: vec![0.0; bins.len()],
                dof: f64::INFINITY,
                silent: estimated.silent,
            };
        }
        estimated
    }

    /// `of` where the new configuration's log shows its noise at every bin's key, and some
    /// noise at one at least: then it is the same whatever the samples (the plan search keeps
    /// its figures running on it). `None` otherwise.
    pub fn logged(bins: &[BinSums]) -> Option<NewNoise> {
        let cv2: Vec<f64> = bins
            .iter()
            .map(|b| b.key.new.map(|n| n.cv.powi(2)))
            .collect::<Option<_>>()?;
        cv2.iter().any(|&c| c > 0.0).then_some(NewNoise {
            cv2,
            dof: f64::INFINITY,
            silent: false,
        })
    }

    /// `of` where nothing but the picks shows the new configuration's noise.
    fn estimated(bins: &[BinSums]) -> NewNoise {
        let base = NewNoise::baseline(bins);
        let mean_base = base.cv2.iter().sum::<f64>() / base.cv2.len().max(1) as f64;
        let Some((observed, dof)) = observed_new_noise(bins) else {
            return NewNoise {
                silent: mean_base <= 0.0,
                ..base
            };
        };
        if mean_base <= 0.0 {
            return NewNoise {
                cv2: vec![observed; bins.len()],
                dof,
                silent: false,
            };
        }
        if observed <= mean_base {
            return base;
        }
        let factor = observed / mean_base;
        NewNoise {
            cv2: base.cv2.iter().map(|c| c * factor).collect(),
            dof,
            silent: false,
        }
    }
}

/// Squared noise of one iteration on the new configuration, per bin (`NewNoise::of`).
pub fn new_noise(bins: &[PickedBin]) -> Vec<f64> {
    NewNoise::of(&sums_of(bins)).cv2
}

fn log_ratio(x: f64, y: f64) -> Option<f64> {
    (x > 0.0 && y > 0.0).then(|| (y / x).ln())
}

/// The new configuration's observed squared noise and its degrees of freedom.
fn observed_new_noise(bins: &[BinSums]) -> Option<(f64, f64)> {
    if bins.iter().all(|b| b.new_count >= 2) {
        let (mut squares, mut dof) = (0.0, 0.0);
        for b in bins.iter().filter(|b| b.ratios.count >= 2) {
            squares += b.ratios.squares;
            dof += (b.ratios.count - 1) as f64;
        }
        return (dof > 0.0).then(|| (squares / dof, dof));
    }
    // Against the picked key's baseline mean, not the pick's own value: the pick is one
    // noisy iteration, its key's mean much less so. Per stratum, pooled. A bin measured
    // `s` times gives the mean of `s` ratios, whose residual is `s` times quieter: it
    // counts `s` times (weighted least squares), so that more samples in some bins never
    // make the noise of one iteration look smaller. Those bins' spread within (about their
    // own mean) joins the pool with its degrees of freedom.
    let mut strata: std::collections::BTreeMap<usize, Vec<(f64, f64, f64)>> = Default::default();
    let (mut squares, mut dof) = (0.0, 0.0);
    for b in bins {
        let x = if b.key.mean > 0.0 { b.key.mean } else { b.x };
        if let Some(r) = log_ratio(x, b.y) {
            if x.ln().is_finite() {
                let weight = b.new_count.max(1) as f64;
                strata
                    .entry(b.stratum)
                    .or_default()
                    .push((x.ln(), r, weight));
            }
        }
        if b.ratios.count >= 2 {
            squares += b.ratios.squares;
            dof += (b.ratios.count - 1) as f64;
        }
    }
    for points in strata.values().filter(|p| p.len() >= 2) {
        // The stratum's mean ratio, a straight line in ln x from four SeqPoints, a parabola
        // from seven (a speedup that varies with length bends in ln x); what is left is noise.
        let degree = match points.len() {
            2..=3 => 0,
            4..=6 => 1,
            _ => 2,
        };
        let free = (points.len() - degree - 1) as f64;
        squares += residual_variance(points, degree) * free;
        dof += free;
    }
    (dof > 0.0).then(|| (squares / dof, dof))
}

/// Residual variance (per unit weight) of a weighted least-squares polynomial of `degree`
/// (0 to 2) through `points` `(x, y, weight)`: a point of weight `w` has variance `v / w`.
fn residual_variance(points: &[(f64, f64, f64)], degree: usize) -> f64 {
    let n = points.len() as f64;
    let total_weight: f64 = points.iter().map(|p| p.2).sum();
    let mx = points.iter().map(|p| p.2 * p.0).sum::<f64>() / total_weight;
    // Centred powers of x as the regressors; solve the normal equations (at most 3x3).
    let columns = degree + 1;
    let row = |x: f64| -> Vec<f64> { (0..columns).map(|d| (x - mx).powi(d as i32)).collect() };
    let mut a = vec![vec![0.0; columns + 1]; columns];
    for &(x, y, w) in points {
        let r = row(x);
        for i in 0..columns {
            for j in 0..columns {
                a[i][j] += w * r[i] * r[j];
            }
            a[i][columns] += w * r[i] * y;
        }
    }
    let coefficients = solve(a).unwrap_or_else(|| {
        let my = points.iter().map(|p| p.2 * p.1).sum::<f64>() / total_weight;
        let mut c = vec![0.0; columns];
        c[0] = my;
        c
    });
    let residual: f64 = points
        .iter()
        .map(|&(x, y, w)| {
            let fit: f64 = row(x).iter().zip(&coefficients).map(|(r, c)| r * c).sum();
            w * (y - fit).powi(2)
        })
        .sum();
    residual / (n - columns as f64).max(1.0)
}

/// Gaussian elimination with partial pivoting on an augmented matrix; `None` when singular.
fn solve(mut a: Vec<Vec<f64>>) -> Option<Vec<f64>> {
    let n = a.len();
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, pivot);
        let pivot_row = a[col].clone();
        for (r, row) in a.iter_mut().enumerate() {
            if r != col {
                let f = row[col] / pivot_row[col];
                for (value, p) in row.iter_mut().zip(&pivot_row).skip(col) {
                    *value -= f * p;
                }
            }
        }
    }
    Some((0..n).map(|i| a[i][n] / a[i][i]).collect())
}

/// The new configuration's total `sum w y` and its variance (offsets carried over at the
/// pick's own new/baseline ratio).
pub fn new_total(bins: &[PickedBin]) -> Estimate {
    let sums = sums_of(bins);
    new_parts(bins).estimate(&sums)
}

/// The paired speedup `sum w x / sum w y` and its variance.
pub fn paired_speedup(bins: &[PickedBin]) -> Estimate {
    let sums = sums_of(bins);
    speedup_parts(bins).estimate(&sums)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::half_width_with_bias;

    fn bin(weight: f64, x: f64, y: f64, key: KeyNoise) -> PickedBin {
        PickedBin {
            weight,
            baseline: vec![x],
            new: vec![y],
            distinct: 1,
            key,
            stratum: 0,
        }
    }

    fn key(cv: f64, offset: f64, count: u64, mean: f64) -> KeyNoise {
        KeyNoise {
            cv,
            logged_cv: cv,
            offset,
            count,
            mean,
            blind: false,
            new: None,
        }
    }

    #[test]
    fn totals_by_hand() {
        // w 10, x 4 (key mean 4, bin mean 5: offset -1), cv 0.1; w 5, x 8, no offset, cv 0.
        let bins = [
            bin(10.0, 4.0, 2.0, key(0.1, -1.0, 3, 4.0)),
            bin(5.0, 8.0, 4.0, key(0.0, 0.0, 5, 8.0)),
        ];
        let b = baseline_total(&bins);
        assert_eq!(b.value, 80.0);
        // Noise (10 * 4)^2 0.01 (1 - 1/10) = 14.4; the known offset 10 * -1 = -10 a bias.
        let half = |bias: f64, variance: f64| half_width_with_bias(bias, variance.sqrt());
        let width = |e: Estimate| (e.interval()[1] - e.interval()[0]) / 2.0;
        assert!((width(b) - half(10.0, 14.4)).abs() < 1e-9, "{b:?}");
        // New: the same relative terms at the new values (fewer than four SeqPoints: the
        // baseline's noise stands), (10 * 2)^2 * 0.009 = 3.6, the carried offset's own noise,
        // the picked key's mean: 400 * 0.01 / 3 (1 - 3/10) = 0.93333, and the offset carried
        // at the pick's ratio, 20 * -1/4 = -5, the bias.
        let n = new_total(&bins);
        assert_eq!(n.value, 40.0);
        assert!((width(n) - half(5.0, 4.533_333_333)).abs() < 1e-7, "{n:?}");
        // Speedup 80 / 40 = 2; the offset cancels; left: the new pick's noise 0.01 (1 - 1/10)
        // and the baseline key mean's 0.01 / 3 (1 - 3/10), on the bin's share 20/40 of the
        // new total: 2^2 (1/2)^2 (0.009 + 0.0023333) = 0.0113333.
        let s = paired_speedup(&bins);
        assert_eq!(s.value, 2.0);
        assert!((s.variance - 0.011_333_333).abs() < 1e-8, "{s:?}");
    }

    #[test]
    fn a_logged_new_configuration_is_taken_at_its_own_noise_and_offset() {
        // One bin of weight 10, two rows: baseline 4.0 and 4.4 (mean 4.2; the picked key's
        // mean 4.0, the bin's 5.0: offset -1; cv 0.1), new 2.0 and 2.4 (mean 2.2). The new
        // configuration's log: cv 0.3 at the key, its key 0.5 below its bin, one row of the
        // picked key listed first (the second is another key's).
        let mut b = bin(10.0, 4.0, 2.0, key(0.1, -1.0, 3, 4.0));
        b.baseline = vec![4.0, 4.4];
        b.new = vec![2.0, 2.4];
        b.distinct = 2;
        b.key.new = Some(LoggedNew {
            cv: 0.3,
            offset: -0.5,
            own_rows: 1,
        });
        let bins = [b];
        let noise = NewNoise::of(&sums_of(&bins));
        assert_eq!(noise.cv2, [0.09]);
        assert_eq!(noise.dof, f64::INFINITY);
        let half = |bias: f64, spread: f64| half_width_with_bias(bias, spread.sqrt()) / Z95;
        // New total 22: noise 22^2 0.09 (1/2 - 1/10) = 17.424, the other key's row's baseline
        // noise 22^2 0.01 (1/2^2) = 1.21; bias: the known offset 10 (-0.5) and the rows'
        // spread on the baseline carried at their ratio, 22 (4.2 - 4.0) / 4.2.
        let n = new_parts(&bins);
        assert_eq!(n.value, 22.0);
        let bias = -5.0 + 22.0 * 0.2 / 4.2;
        let want = half(bias, 17.424 + 1.21).powi(2);
        assert!(
            (n.variance(&[2]) - want).abs() < 1e-9 * want,
            "{n:?} {want}"
        );
        // Speedup 42 / 22: the baseline's whole error 10 (4.2 - 4.0 - 1) = -8 over 42, less
        // the new one's (the bias above) over 22; noise r^2 (0.09 (1/2 - 1/10) + 0.01 / 4).
        let s = speedup_parts(&bins);
        let r = 42.0 / 22.0;
        assert!((s.value - r).abs() < 1e-12);
        let want = half(r * (-8.0 / 42.0 - bias / 22.0), r * r * (0.036 + 0.0025)).powi(2);
        assert!(
            (s.variance(&[2]) - want).abs() < 1e-9 * want,
            "{s:?} {want}"
        );
        // Without the log, the baseline's noise and the carried offset: another interval.
        let mut unlogged = bins[0].clone();
        unlogged.key.new = None;
        assert_ne!(new_parts(&[unlogged]).variance(&[2]), n.variance(&[2]));
    }

    #[test]
    fn offsets_add_with_their_signs() {
        // Two noiseless bins of weight 10 at x = 4, offsets +1 and -1: the picks' errors
        // cancel exactly, and the interval says so; offsets +1 and +1 add to 20, exactly the
        // interval's half-width.
        let opposite = [
            bin(10.0, 4.0, 2.0, key(0.0, 1.0, 3, 4.0)),
            bin(10.0, 4.0, 2.0, key(0.0, -1.0, 3, 4.0)),
        ];
        assert_eq!(baseline_total(&opposite).variance, 0.0);
        let same = [
            bin(10.0, 4.0, 2.0, key(0.0, 1.0, 3, 4.0)),
            bin(10.0, 4.0, 2.0, key(0.0, 1.0, 3, 4.0)),
        ];
        let same = baseline_total(&same);
        assert!(((same.interval()[1] - same.interval()[0]) / 2.0 - 20.0).abs() < 1e-9);
        // The speedup: baseline values 10% above their keys' means in both bins (a known
        // lean the new configuration does not share) add up too: ratio 4.4 / 2, shares 1/2
        // each, 2.2 (0.5 * 0.1/1.1 + 0.5 * 0.1/1.1).
        let lean = [
            bin(10.0, 4.4, 2.0, key(0.0, 0.0, 3, 4.0)),
            bin(10.0, 4.4, 2.0, key(0.0, 0.0, 3, 4.0)),
        ];
        let s = paired_speedup(&lean);
        let half = (s.interval()[1] - s.interval()[0]) / 2.0;
        assert!((half - 2.2 * 0.1 / 1.1).abs() < 1e-12, "{s:?}");
    }

    #[test]
    fn noise_from_few_degrees_of_freedom_widens_by_student_t() {
        // Four SeqPoints, no offsets, the new configuration visibly noisier than the
        // baseline: its noise rests on the 2 degrees of freedom a line through four points
        // leaves, and the whole variance is noise, so the interval is t(2) wide, not z.
        let scatter = [1.2, 0.8, 0.8, 1.2];
        let bins: Vec<PickedBin> = (0..4)
            .map(|i| {
                let x = 10.0 * (i + 1) as f64;
                bin(1000.0, x, x / 2.0 * scatter[i], key(0.001, 0.0, 2, x))
            })
            .collect();
        let noise = NewNoise::of(&sums_of(&bins));
        assert_eq!(noise.dof, 2.0);
        let raw = parts_of(Figure::New, &sums_of(&bins), &noise.cv2).0;
        let plain: f64 = raw.per_sample.iter().sum::<f64>() + raw.rest;
        let widened = new_parts(&bins).variance(&[1; 4]);
        let ratio = (t95(2.0) / Z95).powi(2);
        // The carried key-mean noise (tiny here) makes the degrees a little more than 2.
        assert!(widened > 0.97 * ratio * plain, "{widened} {plain} {ratio}");
        assert!(
            widened <= ratio * plain * 1.001,
            "{widened} {plain} {ratio}"
        );
        // The baseline's noise is taken as known: no widening.
        let b = baseline_parts(&bins);
        assert_eq!(
            b.variance(&[1; 4]),
            b.per_sample.iter().sum::<f64>() + b.rest
        );
    }

    /// Four keys of 20 iterations each alternating about 100 by 10, 0.5, 8 and 5: squared
    /// noise `d^2 / 100^2 * 20 / 19` each, pooled over the run `sum / 4` (19 degrees each).
    /// The key at 0.5 reads quiet beyond chance (under the chi-square's 1% point at 19
    /// degrees, 0.4017 of the run's) and takes the run's; the key at 5 reads below the run's
    /// but within chance (0.53 of it) and keeps its own, as do the noisier two.
    #[test]
    fn a_bin_reading_quiet_beyond_chance_takes_the_runs_noise() {
        let mut csv = String::from("seq_len,time_ms\n");
        for (key, d) in [(10, 10.0), (20, 0.5), (30, 8.0), (40, 5.0)] {
            for i in 0..20 {
                let sign = if i % 2 == 0 { 1.0 } else { -1.0 };
                csv.push_str(&format!("{key},{}\n", 100.0 + sign * d));
            }
        }
        let log = crate::runlog::test_log(&csv);
        let groups = KeyGroups::from_log(&log);
        let own = |d: f64| (d / 100.0f64).powi(2) * 20.0 / 19.0;
        let run = (own(10.0) + own(0.5) + own(8.0) + own(5.0)) / 4.0;
        let noise = |g: usize| KeyNoise::of(&groups, &[g], g, 0);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(own(5.0) < run && own(5.0) > 0.4017 * run && own(0.5) < 0.4017 * run);
        for (g, d, taken) in [(0, 10.0, own(10.0)), (1, 0.5, run), (2, 8.0, own(8.0))] {
            let key = noise(g);
            assert!(close(key.cv.powi(2), taken), "{g}: {key:?}");
            // The file records what the bin's own keys show.
            assert!(close(key.logged_cv.powi(2), own(d)), "{g}: {key:?}");
        }
        assert!(close(noise(3).cv.powi(2), own(5.0)));
    }

    #[test]
    fn a_fully_profiled_single_key_bin_is_exact() {
        let mut b = bin(4.0, 3.0, 1.5, key(0.2, 0.0, 4, 3.0));
        b.baseline = vec![3.0; 4];
        b.new = vec![1.5; 4];
        b.distinct = 4;
        assert_eq!(baseline_total(&[b.clone()]).variance, 0.0);
        assert_eq!(new_total(&[b.clone()]).variance, 0.0);
        assert_eq!(paired_speedup(&[b]).variance, 0.0);
    }

    #[test]
    fn a_noisier_new_configuration_is_seen_in_the_paired_ratios() {
        // Eight SeqPoints, key means 10..80, baseline cv 1%; the new configuration runs at
        // half the time with +-10% scatter around it: the ratios' residual spread says so.
        let scatter = [1.1, 0.9, 1.1, 0.9, 1.1, 0.9, 1.1, 0.9];
        let bins: Vec<PickedBin> = (0..8)
            .map(|i| {
                let x = 10.0 * (i + 1) as f64;
                bin(10.0, x, x / 2.0 * scatter[i], key(0.01, 0.0, 2, x))
            })
            .collect();
        let noise = new_noise(&bins);
        assert!(noise.iter().all(|&c| c > 0.005), "{noise:?}");
        // Exactly half at every pick: nothing beyond the baseline's own noise.
        let quiet: Vec<PickedBin> = bins
            .iter()
            .map(|b| bin(b.weight, b.x(), b.x() / 2.0, b.key))
            .collect();
        assert!(new_noise(&quiet).iter().all(|&c| (c - 1e-4).abs() < 1e-12));
    }

    #[test]
    fn a_speedup_that_varies_smoothly_with_length_is_not_taken_for_noise() {
        // y / x follows a parabola in ln x exactly: the residual variance is 0.
        let points: Vec<(f64, f64, f64)> = (1..=9)
            .map(|i| {
                let lx = f64::from(i);
                (lx, 0.3 + 0.1 * lx - 0.02 * lx * lx, 1.0)
            })
            .collect();
        assert!(residual_variance(&points, 2) < 1e-20);
        assert!(residual_variance(&points, 1) > 1e-4);
    }

    #[test]
    fn a_mean_of_several_samples_counts_as_many_in_the_residual() {
        // One ratio at 0, a mean of three at 1: the weighted mean is 0.75, the residual per
        // unit weight 1 (0.75)^2 + 3 (0.25)^2 = 0.75 over one degree of freedom. Unweighted it
        // would be 0.5: more samples in a bin made one iteration's noise look smaller.
        let points = [(0.0, 0.0, 1.0), (0.0, 1.0, 3.0)];
        assert!((residual_variance(&points, 0) - 0.75).abs() < 1e-12);
        let unweighted = [(0.0, 0.0, 1.0), (0.0, 1.0, 1.0)];
        assert!((residual_variance(&unweighted, 0) - 0.5).abs() < 1e-12);
    }
}
