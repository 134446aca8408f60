//! The one variance of a projected total and of a speedup, for the design the tool uses: a
//! representative key per bin (nearest-mean, median, centroid or mode) and the iteration
//! nearest that key's centre, profiled `s` times (the pick, then its alternates). Every
//! interval `select` and `project` print comes from here; `docs/intervals.md` derives it.
//!
//! Per bin `b` of weight `w`, with the value `v` measured at the pick (mean of `s`):
//! `Var(w v) = w^2 v^2 [ cv^2 (1/s - 1/w)+ + (d/x)^2 + cv^2 / n (1 - n/w) ]`
//! - `cv`: the within-key noise of one iteration, pooled over the bin's key groups (the
//!   baseline log's; scaled for a new configuration by what its measurements show);
//! - `d`: how far the picked key's mean stands from the bin's mean on the baseline (`x` the
//!   baseline value at the pick), the representation error;
//! - `n`: iterations of the picked key; `cv^2 / n` is the noise of its mean, which a new
//!   configuration draws afresh.
//!
//! The speedup is the paired ratio `sum w x / sum w y` (baseline and new values at the same
//! picks), whose offsets `d` cancel; its variance keeps the new pick's noise and both keys'
//! mean noise.

use crate::groups::{KeyGroups, Moments};
use crate::stats::{compensated_sum, half_width_pct, interval};

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
    /// bin's key groups with two or more iterations (else over the whole run's).
    pub cv: f64,
    /// The picked key's mean minus the bin's mean (representation error on the baseline).
    pub offset: f64,
    /// Iterations of the picked key.
    pub count: u64,
    /// The picked key's mean on the baseline.
    pub mean: f64,
}

/// Pooled squared coefficient of variation of one iteration over these key groups:
/// `sum (n_u - 1) s_u^2 / mu_u^2 / sum (n_u - 1)`; `None` when no group has two iterations.
fn pooled_cv2<'a>(groups: impl IntoIterator<Item = &'a Moments>) -> Option<f64> {
    let (mut squares, mut dof) = (0.0, 0.0);
    for m in groups {
        if m.count >= 2 && m.mean != 0.0 {
            squares += m.m2 / (m.mean * m.mean);
            dof += (m.count - 1) as f64;
        }
    }
    (dof > 0.0).then(|| squares / dof)
}

impl KeyNoise {
    /// The bin `members` (key group indices) with key group `picked` as its representative,
    /// on the baseline's metric `metric`.
    pub fn of(groups: &KeyGroups, members: &[usize], picked: usize, metric: usize) -> KeyNoise {
        let moments = &groups.moments[0][metric];
        let cv2 = pooled_cv2(members.iter().map(|&g| &moments[g]))
            .or_else(|| pooled_cv2(moments.iter()))
            .unwrap_or_else(|| {
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
        KeyNoise {
            cv: cv2.sqrt(),
            offset: moments[picked].mean - bin_mean,
            count: moments[picked].count,
            mean: moments[picked].mean,
        }
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

    /// `cv^2 / n (1 - n/w)`: the noise of the picked key's mean, as a share of the bin.
    fn key_mean_noise(&self, cv2: f64) -> f64 {
        let n = self.key.count.max(1) as f64;
        cv2 / n * (1.0 - n / self.weight.max(1.0)).max(0.0)
    }

    /// How far the baseline's value at the picks stands from its key's mean, relatively:
    /// part of the speedup's error that the new configuration does not share.
    fn pick_offset_rel(&self) -> f64 {
        let x = self.x();
        if x != 0.0 && self.key.mean != 0.0 {
            (x - self.key.mean) / x
        } else {
            0.0
        }
    }

    /// The relative representation error `d / x` (0 without a baseline value).
    fn offset_rel(&self) -> f64 {
        let x = self.x();
        if x != 0.0 {
            self.key.offset / x
        } else {
            0.0
        }
    }
}

/// A figure's variance as `sum_b per_sample[b] / s_b + rest`, `s_b` the distinct iterations
/// profiled for bin `b`: what a plan can shrink (the noise of the picks) and what it cannot
/// (the keys' offsets and the noise of their means).
#[derive(Debug, Clone, PartialEq)]
pub struct VarianceParts {
    pub value: f64,
    pub per_sample: Vec<f64>,
    pub rest: f64,
}

impl VarianceParts {
    /// The variance with `samples[b]` distinct iterations profiled per bin.
    pub fn variance(&self, samples: &[u64]) -> f64 {
        let noise: f64 = self
            .per_sample
            .iter()
            .zip(samples)
            .map(|(a, &s)| a / s.max(1) as f64)
            .sum();
        (noise + self.rest).max(0.0)
    }

    fn estimate(&self, bins: &[PickedBin]) -> Estimate {
        let samples: Vec<u64> = bins.iter().map(|b| b.distinct.max(1)).collect();
        Estimate {
            value: self.value,
            variance: self.variance(&samples),
        }
    }
}

/// Parts of a total whose bin values are `value(b)` with one iteration's squared noise
/// `cv2[b]`: `(w v)^2 [cv^2 (1/s - 1/w) + (d/x)^2 + cv^2/n (1 - n/w)]`.
fn total_parts_with(
    bins: &[PickedBin],
    value: impl Fn(&PickedBin) -> f64,
    cv2: &[f64],
) -> VarianceParts {
    let mut per_sample = Vec::with_capacity(bins.len());
    let mut rest = 0.0;
    for (b, &c) in bins.iter().zip(cv2) {
        let scale = (b.weight * value(b)).powi(2);
        // A bin profiled whole has no noise left: `1/s - 1/w` is then 0.
        per_sample.push(scale * c);
        rest += scale * (b.offset_rel().powi(2) - c / b.weight.max(1.0));
    }
    VarianceParts {
        value: compensated_sum(bins.iter().map(|b| b.weight * value(b))),
        per_sample,
        rest,
    }
}

/// Variance parts of the baseline total `sum w x`.
pub fn baseline_parts(bins: &[PickedBin]) -> VarianceParts {
    let cv2: Vec<f64> = bins.iter().map(|b| b.key.cv.powi(2)).collect();
    total_parts_with(bins, PickedBin::x, &cv2)
}

/// Variance parts of the new configuration's total `sum w y`.
pub fn new_parts(bins: &[PickedBin]) -> VarianceParts {
    total_parts_with(bins, PickedBin::y, &new_noise(bins))
}

/// Variance parts of the paired speedup `sum w x / sum w y` (delta method): per bin the new
/// pick's noise and the noise of both keys' means; the representation offsets cancel.
pub fn speedup_parts(bins: &[PickedBin]) -> VarianceParts {
    let noise = new_noise(bins);
    let x = compensated_sum(bins.iter().map(|b| b.weight * b.x()));
    let y = compensated_sum(bins.iter().map(|b| b.weight * b.y()));
    let ratio = x / y;
    let mut per_sample = Vec::with_capacity(bins.len());
    let mut rest = 0.0;
    for (b, &c) in bins.iter().zip(&noise) {
        let scale = (ratio * b.weight * b.y() / y).powi(2);
        per_sample.push(scale * c);
        rest += scale
            * (b.pick_offset_rel().powi(2) + b.key_mean_noise(b.key.cv.powi(2))
                - c / b.weight.max(1.0));
    }
    VarianceParts {
        value: ratio,
        per_sample,
        rest,
    }
}

/// The baseline total `sum w x` and its variance.
pub fn baseline_total(bins: &[PickedBin]) -> Estimate {
    baseline_parts(bins).estimate(bins)
}

/// Squared noise of one iteration on the new configuration, per bin: the baseline's, scaled
/// up when the measurements show the new configuration is noisier (never down: a quieter
/// configuration is not assumed from a few picks).
///
/// With two or more values in every bin, the pooled within-bin variance of `ln(y / x)` (the
/// paired ratios; the pairing removes the keys' differences). With one, the residual variance
/// of `ln(y / x)` across SeqPoints after a straight line in `ln x` (the speedup may vary with
/// length; what is left is noise, and any curvature, which only widens), fitted per stratum
/// (a mean alone with two or three SeqPoints). With nothing to fit, the baseline's noise stands.
pub fn new_noise(bins: &[PickedBin]) -> Vec<f64> {
    let base: Vec<f64> = bins.iter().map(|b| b.key.cv.powi(2)).collect();
    let mean_base = base.iter().sum::<f64>() / base.len().max(1) as f64;
    let Some(observed) = observed_new_noise(bins) else {
        return base;
    };
    if mean_base <= 0.0 {
        return vec![observed; bins.len()];
    }
    let factor = (observed / mean_base).max(1.0);
    base.iter().map(|c| c * factor).collect()
}

fn log_ratio(x: f64, y: f64) -> Option<f64> {
    (x > 0.0 && y > 0.0).then(|| (y / x).ln())
}

fn observed_new_noise(bins: &[PickedBin]) -> Option<f64> {
    if bins.iter().all(|b| b.new.len() >= 2) {
        let (mut squares, mut dof) = (0.0, 0.0);
        for b in bins {
            let ratios: Vec<f64> = b
                .baseline
                .iter()
                .zip(&b.new)
                .filter_map(|(&x, &y)| log_ratio(x, y))
                .collect();
            if ratios.len() >= 2 {
                let m = mean(&ratios);
                squares += ratios.iter().map(|r| (r - m).powi(2)).sum::<f64>();
                dof += (ratios.len() - 1) as f64;
            }
        }
        return (dof > 0.0).then(|| squares / dof);
    }
    // Against the picked key's baseline mean, not the pick's own value: the pick is one
    // noisy iteration, its key's mean much less so. Per stratum, pooled.
    let mut strata: std::collections::BTreeMap<usize, Vec<(f64, f64)>> = Default::default();
    for b in bins {
        let x = if b.key.mean > 0.0 { b.key.mean } else { b.x() };
        if let Some(r) = log_ratio(x, b.y()) {
            if x.ln().is_finite() {
                strata.entry(b.stratum).or_default().push((x.ln(), r));
            }
        }
    }
    let (mut squares, mut dof) = (0.0, 0.0);
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
    (dof > 0.0).then(|| squares / dof)
}

/// Residual variance of a least-squares polynomial of `degree` (0 to 2) through `points`.
fn residual_variance(points: &[(f64, f64)], degree: usize) -> f64 {
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    // Centred powers of x as the regressors; solve the normal equations (at most 3x3).
    let columns = degree + 1;
    let row = |x: f64| -> Vec<f64> { (0..columns).map(|d| (x - mx).powi(d as i32)).collect() };
    let mut a = vec![vec![0.0; columns + 1]; columns];
    for &(x, y) in points {
        let r = row(x);
        for i in 0..columns {
            for j in 0..columns {
                a[i][j] += r[i] * r[j];
            }
            a[i][columns] += r[i] * y;
        }
    }
    let coefficients = solve(a).unwrap_or_else(|| {
        let my = points.iter().map(|p| p.1).sum::<f64>() / n;
        let mut c = vec![0.0; columns];
        c[0] = my;
        c
    });
    let residual: f64 = points
        .iter()
        .map(|&(x, y)| {
            let fit: f64 = row(x).iter().zip(&coefficients).map(|(r, c)| r * c).sum();
            (y - fit).powi(2)
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
    new_parts(bins).estimate(bins)
}

/// The paired speedup `sum w x / sum w y` and its variance.
pub fn paired_speedup(bins: &[PickedBin]) -> Estimate {
    speedup_parts(bins).estimate(bins)
}

#[cfg(test)]
mod tests {
    use super::*;

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
            offset,
            count,
            mean,
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
        // (10 * 4)^2 [0.01 (1 - 1/10) + (1/4)^2] = 1600 * (0.009 + 0.0625) = 114.4.
        assert!((b.variance - 114.4).abs() < 1e-9, "{b:?}");
        // New: the same relative terms at the new values (fewer than four SeqPoints: the
        // baseline's noise stands): (10 * 2)^2 * 0.0715 = 28.6.
        let n = new_total(&bins);
        assert_eq!(n.value, 40.0);
        assert!((n.variance - 28.6).abs() < 1e-9, "{n:?}");
        // Speedup 80 / 40 = 2; the offset cancels; left: the new pick's noise 0.01 (1 - 1/10)
        // and the baseline key mean's 0.01 / 3 (1 - 3/10), on the bin's share 20/40 of the
        // new total: 2^2 (1/2)^2 (0.009 + 0.0023333) = 0.0113333.
        let s = paired_speedup(&bins);
        assert_eq!(s.value, 2.0);
        assert!((s.variance - 0.011_333_333).abs() < 1e-8, "{s:?}");
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
        let points: Vec<(f64, f64)> = (1..=9)
            .map(|i| {
                let lx = f64::from(i);
                (lx, 0.3 + 0.1 * lx - 0.02 * lx * lx)
            })
            .collect();
        assert!(residual_variance(&points, 2) < 1e-20);
        assert!(residual_variance(&points, 1) > 1e-4);
    }
}
