//! The stratified estimate behind `project`: a whole-run total from the samples measured per
//! bin, with its variance from the within-bin spread and from repeated samples.
//!
//! How the two sources combine, per bin (both are estimates of the uncertainty of the bin's
//! measured mean, from different data):
//! - within-bin spread: which iterations stand for the bin. The selection log's bin standard
//!   deviation, carried to the new configuration in proportion to its means (times the overall
//!   new/baseline ratio of the measured bins), over the number of *distinct* iterations
//!   profiled, with the finite-population correction.
//! - repeated samples (two or more rows for the bin): the sample variance of the rows over
//!   their count. For repeated runs of one iteration this is measurement noise; for distinct
//!   random draws it is the new configuration's own within-bin spread.
//!
//! The bin contributes the *larger* of the two. Adding them would count the spread twice when
//! the samples are random draws from the bin (then both estimate the same variance); and the
//! selection log's spread already includes one measurement's noise per iteration, so for
//! repeats of one iteration the within-bin term alone bounds the truth. Taking the larger keeps
//! the interval honest when the new configuration is noisier than the selection log said.

use super::StratumVariance;
use crate::stats::{compensated_sum, interval};

/// What was measured for one bin (one SeqPoint), and what the selection knew of the bin.
#[derive(Debug, Clone, PartialEq)]
pub struct BinMeasure {
    /// Iterations the bin stands for in the run being projected (scaled for longer runs).
    pub weight: f64,
    /// Iterations the bin holds, for the finite-population correction.
    pub population: f64,
    /// The bin's mean and standard deviation of the metric in the selection log.
    pub baseline_mean: f64,
    pub baseline_sd: f64,
    /// Measured samples on the new configuration; empty when the bin was not measured.
    pub values: Vec<f64>,
    /// Distinct iterations among `values` (repeats of one iteration count once).
    pub distinct: usize,
}

impl BinMeasure {
    pub fn is_measured(&self) -> bool {
        !self.values.is_empty()
    }

    fn mean(&self) -> f64 {
        compensated_sum(self.values.iter().copied()) / self.values.len() as f64
    }

    /// Sample standard deviation of the measured values (0 with fewer than two).
    fn sample_sd(&self) -> f64 {
        let n = self.values.len();
        if n < 2 {
            return 0.0;
        }
        let mean = self.mean();
        let m2: f64 = self.values.iter().map(|v| (v - mean).powi(2)).sum();
        (m2 / (n - 1) as f64).sqrt()
    }
}

/// A projected total and the variances behind its interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StratifiedEstimate {
    pub value: f64,
    /// Per bin the larger of the two sources, plus the imputation of missing bins.
    pub variance: f64,
    /// The within-bin spread alone (plus missing bins).
    pub within_variance: f64,
    /// Repeated samples alone, when every measured bin has at least two samples.
    pub sample_variance: Option<f64>,
    /// New over baseline over the measured bins: `sum w xbar / sum w mean`.
    pub ratio: f64,
    /// Weight of the bins left out (imputed from `ratio`).
    pub missing_weight: f64,
    /// The variance of the imputed bins alone.
    pub missing_variance: f64,
}

impl StratifiedEstimate {
    pub fn interval(&self) -> [f64; 2] {
        interval(self.value, self.variance)
    }
}

/// The projected total `P = sum_b w_b xbar_b` and its variance (module comment for the rule).
/// Bins without samples are imputed as `ratio * baseline_mean` with the variance of that
/// ratio and of its spread across the measured bins. `None` when no bin was measured.
pub fn estimate(bins: &[BinMeasure], formula: StratumVariance) -> Option<StratifiedEstimate> {
    let measured: Vec<&BinMeasure> = bins.iter().filter(|b| b.is_measured()).collect();
    if measured.is_empty() {
        return None;
    }
    let measured_total = compensated_sum(measured.iter().map(|b| b.weight * b.mean()));
    let measured_baseline = compensated_sum(measured.iter().map(|b| b.weight * b.baseline_mean));
    // With no baseline to compare against, the selection log's spread is used unscaled.
    let ratio = if measured_baseline > 0.0 {
        measured_total / measured_baseline
    } else {
        1.0
    };

    let mut within = 0.0;
    let mut combined = 0.0;
    let mut samples = Some(0.0);
    for b in &measured {
        let within_b = formula(
            b.weight,
            b.population,
            b.distinct.max(1) as f64,
            ratio * b.baseline_sd,
        );
        let samples_b = (b.values.len() >= 2).then(|| {
            formula(
                b.weight,
                f64::INFINITY,
                b.values.len() as f64,
                b.sample_sd(),
            )
        });
        within += within_b;
        combined += within_b.max(samples_b.unwrap_or(0.0));
        samples = samples.zip(samples_b).map(|(s, b)| s + b);
    }

    // Missing bins: new mean = ratio * baseline mean. Its uncertainty: the ratio's own
    // (from the measured bins' variance) and how much bins' ratios differ from each other.
    let missing: Vec<&BinMeasure> = bins.iter().filter(|b| !b.is_measured()).collect();
    let ratio_variance = if measured_baseline > 0.0 {
        combined / (measured_baseline * measured_baseline)
    } else {
        0.0
    };
    let ratio_spread = ratio_spread(&measured, ratio);
    let mut missing_value = 0.0;
    let mut missing_variance = 0.0;
    for b in &missing {
        missing_value += b.weight * ratio * b.baseline_mean;
        let spread = ratio_spread.unwrap_or_else(|| {
            if b.baseline_mean > 0.0 {
                (ratio * b.baseline_sd / b.baseline_mean).powi(2)
            } else {
                0.0
            }
        });
        missing_variance += (b.weight * b.baseline_mean).powi(2) * (ratio_variance + spread);
    }
    let missing_weight = missing.iter().map(|b| b.weight).sum();
    let sample_variance = if missing.is_empty() { samples } else { None };
    Some(StratifiedEstimate {
        value: measured_total + missing_value,
        variance: combined + missing_variance,
        within_variance: within + missing_variance,
        sample_variance,
        ratio,
        missing_weight,
        missing_variance,
    })
}

/// Weighted variance of the per-bin ratios `xbar_b / mean_b` around `ratio`, from two or
/// more measured bins with a positive baseline mean.
fn ratio_spread(measured: &[&BinMeasure], ratio: f64) -> Option<f64> {
    let usable: Vec<&&BinMeasure> = measured.iter().filter(|b| b.baseline_mean > 0.0).collect();
    if usable.len() < 2 {
        return None;
    }
    let weight: f64 = usable.iter().map(|b| b.weight).sum();
    let squares: f64 = usable
        .iter()
        .map(|b| b.weight * (b.mean() / b.baseline_mean - ratio).powi(2))
        .sum();
    let n = usable.len() as f64;
    Some(squares / weight * n / (n - 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::stratum_variance;

    fn bin(weight: f64, mean: f64, sd: f64, values: &[f64], distinct: usize) -> BinMeasure {
        BinMeasure {
            weight,
            population: weight,
            baseline_mean: mean,
            baseline_sd: sd,
            values: values.to_vec(),
            distinct,
        }
    }

    #[test]
    fn one_sample_per_bin_by_hand() {
        // Baseline bins: (w 10, mean 2, sd 1), (w 20, mean 4, sd 2).
        // New: 1 and 2 -> P = 10 + 40 = 50; ratio = 50 / (20 + 80) = 0.5.
        let bins = [
            bin(10.0, 2.0, 1.0, &[1.0], 1),
            bin(20.0, 4.0, 2.0, &[2.0], 1),
        ];
        let e = estimate(&bins, stratum_variance).unwrap();
        assert_eq!(e.value, 50.0);
        assert_eq!(e.ratio, 0.5);
        // Within: 10^2 (1 - 1/10) 0.5^2 + 20^2 (1 - 1/20) 1^2 = 22.5 + 380.
        assert!((e.within_variance - 402.5).abs() < 1e-9);
        assert_eq!(e.variance, e.within_variance);
        assert_eq!(e.sample_variance, None);
        assert_eq!(e.missing_weight, 0.0);
    }

    #[test]
    fn repeated_samples_take_the_larger_source_per_bin() {
        // Bin 1: samples 1, 3 (sd sqrt 2) of one iteration; bin 2: one sample.
        let bins = [
            bin(10.0, 4.0, 0.1, &[1.0, 3.0], 1),
            bin(10.0, 4.0, 0.1, &[2.0], 1),
        ];
        let e = estimate(&bins, stratum_variance).unwrap();
        assert_eq!(e.value, 40.0);
        // ratio = 40 / 80 = 0.5; within per bin: 100 * 0.9 * 0.05^2 = 0.225.
        assert!((e.within_variance - 0.45).abs() < 1e-12);
        // Samples in bin 1: 100 * 2 / 2 = 100, larger than 0.225.
        assert!((e.variance - (100.0 + 0.225)).abs() < 1e-9);
        // Bin 2 has one sample: no samples-only variance.
        assert_eq!(e.sample_variance, None);
    }

    #[test]
    fn distinct_iterations_shrink_the_within_term() {
        let repeats = [bin(100.0, 10.0, 2.0, &[10.0, 10.0, 10.0, 10.0], 1)];
        let draws = [bin(100.0, 10.0, 2.0, &[10.0, 10.0, 10.0, 10.0], 4)];
        let a = estimate(&repeats, stratum_variance).unwrap();
        let b = estimate(&draws, stratum_variance).unwrap();
        // 100^2 (1 - 1/100) 4 / 1 against 100^2 (1 - 4/100) 4 / 4.
        assert!((a.within_variance - 39600.0).abs() < 1e-6);
        assert!((b.within_variance - 9600.0).abs() < 1e-6);
        assert_eq!(b.sample_variance, Some(0.0));
    }

    #[test]
    fn missing_bins_are_imputed_from_the_ratio() {
        // Measured bins run at half the baseline (ratios 0.5 and 0.5): the missing bin too.
        let bins = [
            bin(10.0, 2.0, 0.0, &[1.0], 1),
            bin(10.0, 4.0, 0.0, &[2.0], 1),
            bin(30.0, 6.0, 0.0, &[], 0),
        ];
        let e = estimate(&bins, stratum_variance).unwrap();
        assert_eq!(e.value, 10.0 + 20.0 + 30.0 * 3.0);
        assert_eq!(e.missing_weight, 30.0);
        // Equal ratios and no spread: nothing uncertain.
        assert_eq!(e.variance, 0.0);
        // Ratios 0.5 and 1.0 differ: the missing bin inherits their spread.
        let bins = [
            bin(10.0, 2.0, 0.0, &[1.0], 1),
            bin(10.0, 4.0, 0.0, &[4.0], 1),
            bin(30.0, 6.0, 0.0, &[], 0),
        ];
        let e = estimate(&bins, stratum_variance).unwrap();
        let ratio = 50.0 / 60.0;
        assert!((e.ratio - ratio).abs() < 1e-12);
        let spread = (10.0 * (0.5 - ratio).powi(2) + 10.0 * (1.0 - ratio).powi(2)) / 20.0 * 2.0;
        assert!((e.variance - (180.0f64).powi(2) * spread).abs() < 1e-6);
        assert!(e.sample_variance.is_none());
    }

    #[test]
    fn nothing_measured_is_no_estimate() {
        assert!(estimate(&[bin(1.0, 1.0, 0.0, &[], 0)], stratum_variance).is_none());
    }
}
