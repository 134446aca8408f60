//! A ratio that changes with the cost within a bin: the new configuration's time over the
//! baseline's is seldom flat in the length (a kernel that gains most on long sequences, a
//! fixed overhead that weighs most on short ones), and a bin of a few SeqPoints can span a
//! factor of 4 in cost.
//!
//! The ratio estimate (`project::ratio`) divides each bin's measured new values by their
//! auxiliaries and scales by the bin's whole baseline: exact where the ratio is flat within the
//! bin. Where it drifts, the bin's iterations measured (the SeqPoint and its alternates, near
//! the bin's mean) give the ratio there, not the bin's, whose dearer iterations weigh more. On
//! the redraw example's speedup-by-length case (speedup 1.1x to 2x over lengths 20-600,
//! 7-8 bins), that position error was 55-62% of the squared error of the cheapest bins, and no
//! residual shows it: the pairs sit at one cost.
//!
//! The run shows the drift across its bins: `CostLine`, the line of the bins' `ln r` on their
//! baseline means' `ln X`, has slope `g` (`r` goes as `X^g`). Taken within each bin too, the
//! new value at an iteration of expected baseline `z` goes as `z^(1 + g)`: with `v = z / X`, the
//! auxiliary `a v^g` in place of `a`, and the bin's mean of it over all its iterations is `X
//! E[v^(1 + g)]` (`stats::LevelMoments::power_mean`, from the spread the SeqPoints file
//! records). A flat ratio fits `g` near 0 and changes nothing; the baseline's own noise in an
//! auxiliary is kept (`a`, the blend's).

use crate::project::paired_bin::PairedBin;

/// The weighted least-squares line of `ln r` on `ln X` over the bins with a positive ratio
/// and baseline mean, each weighted by its baseline total `w X`: flat with fewer than three
/// such bins or one `X`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostLine {
    centre_x: f64,
    centre_r: f64,
    pub slope: f64,
}

impl CostLine {
    /// `None` without a bin to fit.
    pub fn of(bins: &[PairedBin]) -> Option<CostLine> {
        let points: Vec<(f64, f64, f64)> = bins
            .iter()
            .filter_map(|b| {
                let (r, base) = (b.ratio(), b.weight * b.baseline_mean);
                (r > 0.0 && b.baseline_mean > 0.0 && base > 0.0)
                    .then(|| (b.baseline_mean.ln(), r.ln(), base))
            })
            .collect();
        if points.is_empty() {
            return None;
        }
        let weights: f64 = points.iter().map(|p| p.2).sum();
        let mean = |f: &dyn Fn(&(f64, f64, f64)) -> f64| {
            points.iter().map(|p| p.2 * f(p)).sum::<f64>() / weights
        };
        let (centre_x, centre_r) = (mean(&|p| p.0), mean(&|p| p.1));
        let sxx = mean(&|p| (p.0 - centre_x).powi(2));
        let slope = if points.len() >= 3 && sxx > 0.0 {
            mean(&|p| (p.0 - centre_x) * (p.1 - centre_r)) / sxx
        } else {
            0.0
        };
        Some(CostLine {
            centre_x,
            centre_r,
            slope,
        })
    }

    /// The ratio the line gives at baseline mean `x`.
    pub fn ratio_at(&self, x: f64) -> f64 {
        (self.centre_r + self.slope * (x.ln() - self.centre_x)).exp()
    }
}

/// The steepest drift followed, either way: `LevelMoments::power_mean`'s series holds to
/// 1e-4 at `|g ln v| <= 0.5`, a bin spanning a factor of 1.6 either side of its mean.
const STEEPEST: f64 = 1.0;

/// The bins with their auxiliaries and baseline means following the run's `CostLine` within
/// each bin (see the module's comment), and the slope followed (0, bins unchanged, where no
/// bin records its spread or the line is flat).
pub fn with_cost_trend(bins: Vec<PairedBin>) -> (Vec<PairedBin>, f64) {
    let recorded = bins
        .iter()
        .any(|b| b.levels.len() == b.pairs.len() && b.spread.0.iter().any(|&m| m != 0.0));
    let slope = match CostLine::of(&bins) {
        Some(line) if recorded => line.slope.clamp(-STEEPEST, STEEPEST),
        _ => 0.0,
    };
    if slope == 0.0 {
        return (bins, 0.0);
    }
    let bins = bins
        .into_iter()
        .map(|mut b| {
            // A spread whose series gives no positive mean (a hand-edited file: `project`
            // checks the moments' signs, not their size) keeps the bin flat.
            let power_mean = b.spread.power_mean(slope);
            if b.levels.len() == b.pairs.len() && power_mean.is_finite() && power_mean > 0.0 {
                for (pair, &v) in b.pairs.iter_mut().zip(&b.levels) {
                    pair.0 *= v.powf(slope);
                }
                b.baseline_mean *= power_mean;
            }
            b
        })
        .collect();
    (bins, slope)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::LevelMoments;

    /// A bin of `population` (expected baseline value, iterations) whose new values are `c
    /// z^(1 + g)` exactly, measured at the iterations of value `measured`: the bin, and its
    /// actual new total.
    fn bin(population: &[(f64, f64)], measured: &[f64], c: f64, g: f64) -> (PairedBin, f64) {
        let count: f64 = population.iter().map(|p| p.1).sum();
        let mean = population.iter().map(|p| p.0 * p.1).sum::<f64>() / count;
        let new = |z: f64| c * z.powf(1.0 + g);
        let bin = PairedBin {
            weight: count,
            population: count,
            baseline_mean: mean,
            pairs: measured.iter().map(|&z| (z, new(z))).collect(),
            levels: measured.iter().map(|&z| z / mean).collect(),
            spread: LevelMoments::of(population.iter().copied()).unwrap(),
            ..PairedBin::default()
        };
        let actual = population.iter().map(|&(z, n)| n * new(z)).sum();
        (bin, actual)
    }

    /// Four bins from cost 10 to 400, each spanning a factor of 3-4, measured at the value
    /// nearest each bin's mean (as the SeqPoint and its alternates are).
    fn run(g: f64) -> Vec<(PairedBin, f64)> {
        let populations: [&[(f64, f64)]; 4] = [
            &[(10.0, 40.0), (18.0, 30.0), (30.0, 20.0), (40.0, 10.0)],
            &[(40.0, 30.0), (60.0, 30.0), (90.0, 25.0), (130.0, 15.0)],
            &[(130.0, 20.0), (180.0, 30.0), (250.0, 20.0)],
            &[(250.0, 10.0), (320.0, 10.0), (400.0, 5.0)],
        ];
        populations
            .iter()
            .map(|population| {
                let count: f64 = population.iter().map(|p| p.1).sum();
                let mean = population.iter().map(|p| p.0 * p.1).sum::<f64>() / count;
                bin(population, &[mean, mean], 0.5, g)
            })
            .collect()
    }

    #[test]
    fn a_ratio_that_goes_as_a_power_of_the_cost_is_followed_within_each_bin() {
        for g in [-0.3, -0.1, 0.2] {
            let (bins, actual): (Vec<PairedBin>, Vec<f64>) = run(g).into_iter().unzip();
            // Measured at each bin's mean, the flat ratio takes the ratio there for the bin's,
            // whose dearer iterations weigh more: off by over 0.5% in some bin.
            let flat_worst = bins
                .iter()
                .zip(&actual)
                .map(|(b, a)| (b.total() / a - 1.0).abs())
                .fold(0.0, f64::max);
            assert!(flat_worst > 0.005, "g {g}: flat off by {flat_worst}");
            let (followed, slope) = with_cost_trend(bins);
            // Measured at the means, the bins' ratios are c X^g: the line's slope is g.
            assert!((slope - g).abs() < 1e-12, "{slope} against {g}");
            for (b, a) in followed.iter().zip(&actual) {
                let off = (b.total() / a - 1.0).abs();
                assert!(off < 1e-4, "g {g}: off by {off}");
            }
        }
    }

    #[test]
    fn a_flat_ratio_or_a_file_without_the_spread_leaves_the_bins_as_they_are() {
        let (bins, _): (Vec<PairedBin>, Vec<f64>) = run(0.0).into_iter().unzip();
        let (same, slope) = with_cost_trend(bins.clone());
        assert!(slope.abs() < 1e-12, "{slope}");
        for (a, b) in same.iter().zip(&bins) {
            assert!((a.total() / b.total() - 1.0).abs() < 1e-12);
        }
        // The same drift, but no bin records where its pairs stand: nothing to follow.
        let (unrecorded, _): (Vec<PairedBin>, Vec<f64>) = run(-0.3)
            .into_iter()
            .map(|(b, a)| {
                (
                    PairedBin {
                        levels: Vec::new(),
                        spread: LevelMoments::default(),
                        ..b
                    },
                    a,
                )
            })
            .unzip();
        let (kept, slope) = with_cost_trend(unrecorded.clone());
        assert_eq!((kept, slope), (unrecorded, 0.0));
    }

    #[test]
    fn a_spread_with_no_positive_mean_keeps_its_bin_flat() {
        // A first moment of 10 at a slope of -0.3: 1 - 3 < 0, no mean of a power.
        let (mut bins, _): (Vec<PairedBin>, Vec<f64>) = run(-0.3).into_iter().unzip();
        bins[0].spread = LevelMoments([10.0, 0.0, 0.0, 0.0]);
        let before = bins[0].clone();
        let (followed, slope) = with_cost_trend(bins);
        assert!(slope < 0.0);
        assert_eq!(followed[0], before);
        assert!(followed.iter().all(|b| b.total() > 0.0));
    }

    #[test]
    fn the_line_is_flat_on_fewer_than_three_bins() {
        let (bins, _): (Vec<PairedBin>, Vec<f64>) = run(-0.3).into_iter().unzip();
        let line = CostLine::of(&bins[..2]).unwrap();
        assert_eq!(line.slope, 0.0);
        assert!(CostLine::of(&[]).is_none());
    }
}
