//! The ratio estimate `project` uses when every measured iteration's baseline value is known
//! (the SeqPoints file carries the pick's, its alternates' and its plan rows' logged values):
//! the baseline, known for every iteration of the run, as auxiliary information, the
//! survey-sampling way.
//!
//! Per bin `b` of weight `w` whose baseline mean over all its iterations is `X`, with pairs
//! `(x_i, y_i)` at the `s` distinct iterations measured: `r = ybar / xbar` and the bin's new
//! total `w X r`. Dividing by the same iterations' baseline mean removes what the plain mean
//! `w ybar` carries over from where the measured iterations stand in the bin (the picked
//! key's offset from the bin's mean, and where its samples fall within the key), as far as
//! the new configuration's time follows the baseline's within a bin. The speedup is the known
//! baseline total over the projected new total.
//!
//! The variance is the ratio estimator's, `sum (w X r)^2 q (1/s - 1/N)`, with `q` the squared
//! relative residual `(y - r x) / (r xbar)` pooled over the bins measured at two or more
//! iterations (relative noise is alike across lengths), and Student's t at the pooled degrees
//! of freedom. With no bin measured twice there are no degrees of freedom: no interval from
//! the pairs (`None`), and the caller keeps the design's interval from the baseline log.

use std::collections::{BTreeMap, HashMap};

use crate::doc::SelectDoc;
use crate::estimate::VarianceParts;
use crate::runlog::measured::Measurements;
use crate::stats::{compensated_sum, t95, Z95};

/// One measured bin: its weight and population in the projected run, its baseline mean over
/// all its iterations, and the measured pairs (baseline, new), one per distinct iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct PairedBin {
    pub weight: f64,
    pub population: f64,
    pub baseline_mean: f64,
    pub pairs: Vec<(f64, f64)>,
}

impl PairedBin {
    fn ratio(&self) -> f64 {
        let x = compensated_sum(self.pairs.iter().map(|p| p.0));
        let y = compensated_sum(self.pairs.iter().map(|p| p.1));
        if x > 0.0 {
            y / x
        } else {
            0.0
        }
    }

    /// The bin's projected new total `w X r`.
    fn total(&self) -> f64 {
        self.weight * self.baseline_mean * self.ratio()
    }

    /// `(sum of squared relative residuals, degrees of freedom)` of this bin's pairs.
    fn residuals(&self) -> (f64, f64) {
        let s = self.pairs.len();
        if s < 2 {
            return (0.0, 0.0);
        }
        let r = self.ratio();
        let xbar = compensated_sum(self.pairs.iter().map(|p| p.0)) / s as f64;
        let scale = r * xbar;
        if scale <= 0.0 {
            return (0.0, 0.0);
        }
        let squares: f64 = self
            .pairs
            .iter()
            .map(|&(x, y)| ((y - r * x) / scale).powi(2))
            .sum();
        (squares, (s - 1) as f64)
    }
}

/// The projected new total and the variance parts of its interval (per bin `a_b / s_b` plus
/// the finite-population part), already widened for Student's t; `None` without degrees of
/// freedom or with a baseline value that is not positive.
pub fn ratio_total(bins: &[PairedBin]) -> Option<VarianceParts> {
    if bins
        .iter()
        .any(|b| b.pairs.is_empty() || b.pairs.iter().any(|p| p.0.is_nan() || p.0 <= 0.0))
    {
        return None;
    }
    let (squares, dof) = bins
        .iter()
        .map(PairedBin::residuals)
        .fold((0.0, 0.0), |(a, b), (c, d)| (a + c, b + d));
    if dof <= 0.0 {
        return None;
    }
    let q = squares / dof * (t95(dof) / Z95).powi(2);
    let per_sample: Vec<f64> = bins.iter().map(|b| b.total().powi(2) * q).collect();
    let rest = -bins
        .iter()
        .zip(&per_sample)
        .map(|(b, a)| a / b.population.max(1.0))
        .sum::<f64>();
    Some(VarianceParts {
        value: compensated_sum(bins.iter().map(PairedBin::total)),
        per_sample,
        rest,
        bias: 0.0,
    })
}

/// The speedup `baseline / new` and its variance parts, from the new total's (delta method:
/// the baseline total is known, so the speedup's relative error is the new total's).
pub fn ratio_speedup(baseline_total: f64, new: &VarianceParts) -> VarianceParts {
    let speedup = baseline_total / new.value;
    let scale = (speedup / new.value).powi(2);
    VarianceParts {
        value: speedup,
        per_sample: new.per_sample.iter().map(|a| a * scale).collect(),
        rest: new.rest * scale,
        bias: 0.0,
    }
}

/// The baseline's logged value of `metric` at every iteration the SeqPoints file names: each
/// SeqPoint's own, its alternates' and its plan rows'.
fn known_baseline(doc: &SelectDoc, metric: &str) -> HashMap<u64, f64> {
    let mut known = HashMap::new();
    for sp in &doc.seqpoints {
        if let Some(&v) = sp.metrics.get(metric) {
            known.insert(sp.iteration, v);
        }
        if let Some(values) = sp.alternate_metrics.get(metric) {
            known.extend(sp.alternates.iter().copied().zip(values.iter().copied()));
        }
    }
    for row in doc.plan.iter().flat_map(|p| p.profile.iter()) {
        if let Some(&v) = row.metrics.get(metric) {
            known.insert(row.iteration, v);
        }
    }
    known
}

/// Every SeqPoint's measured pairs for `metric` (measured column `m`), one per distinct
/// iteration (repeated rows of an iteration averaged), weights scaled by `scale`; `None` when
/// the pairs are incomplete: a SeqPoint not measured, a row that names no iteration, an
/// iteration whose baseline value the file does not hold, or a metric the log did not time.
pub fn paired_bins(
    doc: &SelectDoc,
    metric: &str,
    measured: &Measurements,
    m: usize,
    scale: f64,
) -> Option<Vec<PairedBin>> {
    if !doc.input.metrics.iter().any(|name| name == metric) {
        return None;
    }
    let known = known_baseline(doc, metric);
    doc.seqpoints
        .iter()
        .zip(&measured.samples)
        .map(|(sp, samples)| {
            let stats = sp.bin_stats.get(metric)?;
            let mut by_iteration: BTreeMap<u64, (f64, usize)> = BTreeMap::new();
            for sample in samples {
                let entry = by_iteration.entry(sample.iteration?).or_insert((0.0, 0));
                entry.0 += sample.values[m];
                entry.1 += 1;
            }
            let pairs = by_iteration
                .into_iter()
                .map(|(it, (sum, n))| Some((*known.get(&it)?, sum / n as f64)))
                .collect::<Option<Vec<_>>>()?;
            (!pairs.is_empty()).then(|| PairedBin {
                weight: sp.weight as f64 * scale,
                population: (stats.count as f64).max(sp.weight as f64) * scale,
                baseline_mean: stats.mean,
                pairs,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bin(weight: f64, mean: f64, pairs: &[(f64, f64)]) -> PairedBin {
        PairedBin {
            weight,
            population: weight,
            baseline_mean: mean,
            pairs: pairs.to_vec(),
        }
    }

    #[test]
    fn a_constant_ratio_is_exact_wherever_the_pairs_stand() {
        // The measured iterations sit below the bin's mean (10), the new configuration runs
        // at half the baseline: the total is w X / 2 exactly, with no residual.
        let bins = [
            bin(100.0, 10.0, &[(8.0, 4.0), (9.0, 4.5)]),
            bin(50.0, 20.0, &[(25.0, 12.5), (21.0, 10.5)]),
        ];
        let parts = ratio_total(&bins).unwrap();
        assert!((parts.value - (500.0 + 500.0)).abs() < 1e-9);
        assert!(parts.variance(&[2, 2]).abs() < 1e-9);
        let speedup = ratio_speedup(2000.0 + 0.0, &parts);
        assert!((speedup.value - 2.0).abs() < 1e-12);
    }

    #[test]
    fn variance_by_hand() {
        // One bin, pairs (1, 1), (3, 2): r = 3/4, xbar = 2, residuals 1 - 3/4 = 1/4 and
        // 2 - 9/4 = -1/4, relative to r xbar = 3/2: 1/6 each; q = 2/36 over 1 dof.
        let b = bin(10.0, 2.0, &[(1.0, 1.0), (3.0, 2.0)]);
        let parts = ratio_total(std::slice::from_ref(&b)).unwrap();
        let total = 10.0 * 2.0 * 0.75;
        assert!((parts.value - total).abs() < 1e-12);
        let q = 2.0 / 36.0 * (t95(1.0) / Z95).powi(2);
        let expected = total * total * q * (1.0 / 2.0 - 1.0 / 10.0);
        assert!((parts.variance(&[2]) - expected).abs() < 1e-9);
    }

    #[test]
    fn no_bin_measured_twice_gives_no_interval() {
        assert!(ratio_total(&[bin(10.0, 2.0, &[(1.0, 1.0)])]).is_none());
        assert!(ratio_total(&[bin(10.0, 2.0, &[(0.0, 1.0), (1.0, 1.0)])]).is_none());
    }
}
