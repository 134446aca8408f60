//! The one variance of a projected total (stratified sampling, one bin a stratum) and of a
//! speedup (delta method): every interval the tool prints comes from here or `stratified`.

use crate::pick::SeqPoint;
use crate::stats::{compensated_sum, half_width_pct, interval};

/// A projected total with its variance (from sampling `samples` iterations per bin).
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
/// sd) -> variance`. A plain function so the interval check can compare formulas.
pub type StratumVariance = fn(f64, f64, f64, f64) -> f64;

/// Stratified sampling: a bin of `population` iterations standing for `weight` iterations,
/// `samples` of them profiled at random, within-bin standard deviation `sd`, adds
/// `weight^2 (1 - samples/population) sd^2 / samples` to `Var(P)`. The finite-population
/// correction makes a fully profiled bin exact (a bin of one iteration, profiled, is known).
pub fn stratum_variance(weight: f64, population: f64, samples: f64, sd: f64) -> f64 {
    let samples = samples.max(1.0);
    let unsampled = (1.0 - samples / population).max(0.0);
    weight * weight * unsampled * sd * sd / samples
}

/// `P_c = sum_b w_b m_c(iter_b)`; `Var(P) = sum_b w_b^2 (1 - m/w_b) s_b^2 / m`.
pub fn project_total(
    seqpoints: &[SeqPoint],
    config: usize,
    metric: usize,
    samples: u64,
) -> Estimate {
    project_total_planned(seqpoints, config, metric, &vec![samples; seqpoints.len()])
}

/// `project_total` with `samples[b]` profiled iterations for SeqPoint `b` (a budget plan).
pub fn project_total_planned(
    seqpoints: &[SeqPoint],
    config: usize,
    metric: usize,
    samples: &[u64],
) -> Estimate {
    let value = compensated_sum(
        seqpoints
            .iter()
            .map(|sp| sp.weight as f64 * sp.values[config][metric]),
    );
    let variance = seqpoints
        .iter()
        .zip(samples)
        .map(|(sp, &m)| {
            let w = sp.weight as f64;
            let sd = sp.bin.moments[config][metric].sample_variance().sqrt();
            stratum_variance(w, w, m.max(1) as f64, sd)
        })
        .sum();
    Estimate { value, variance }
}

/// Projected speedup `P_baseline / P_compare` with the delta-method variance of a ratio
/// estimator whose numerator and denominator are measured on the same iterations.
pub fn project_speedup(seqpoints: &[SeqPoint], metric: usize, samples: u64) -> Estimate {
    project_speedup_planned(seqpoints, metric, &vec![samples; seqpoints.len()])
}

/// `project_speedup` with `samples[b]` profiled iterations for SeqPoint `b`.
pub fn project_speedup_planned(seqpoints: &[SeqPoint], metric: usize, samples: &[u64]) -> Estimate {
    let a = project_total_planned(seqpoints, 0, metric, samples).value;
    let b = project_total_planned(seqpoints, 1, metric, samples).value;
    let ratio = a / b;
    let variance = seqpoints
        .iter()
        .zip(samples)
        .map(|(sp, &m)| {
            let n = sp.bin.weight;
            if n < 2 {
                return 0.0;
            }
            let var_a = sp.bin.moments[0][metric].sample_variance();
            let var_b = sp.bin.moments[1][metric].sample_variance();
            let cov = sp.bin.cross[metric] / (n - 1) as f64;
            let residual = (var_a - 2.0 * ratio * cov + ratio * ratio * var_b).max(0.0);
            stratum_variance(n as f64, n as f64, m.max(1) as f64, residual.sqrt())
        })
        .sum::<f64>()
        / (b * b);
    Estimate {
        value: ratio,
        variance,
    }
}
