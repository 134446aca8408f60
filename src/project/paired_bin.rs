//! One bin's measured pairs, as the ratio estimate (`project::ratio`) and the cost trend
//! (`project::trend`) read them: its ratio (Beale's), its projected total and its residuals.

use crate::stats::{compensated_sum, LevelMoments};

/// One measured bin: its weight and population in the projected run, its baseline mean over
/// all its iterations, and the measured pairs (baseline, new), one per distinct iteration.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PairedBin {
    pub weight: f64,
    pub population: f64,
    pub baseline_mean: f64,
    pub pairs: Vec<(f64, f64)>,
    /// The least squared relative residual this bin's interval takes, whatever its pairs
    /// show (see `ratio::ratio_total`); 0 for none.
    pub noise_floor: f64,
    /// Where each pair stands in the bin: the baseline expected at its key over the bin's
    /// mean (`v`, in `pairs`' order), and how that spreads over all the bin's iterations.
    /// What `trend::with_cost_trend` follows a ratio that changes with the cost by; empty
    /// and zero where the SeqPoints file does not say (its ratio is then taken as flat).
    pub levels: Vec<f64>,
    pub spread: LevelMoments,
}

impl PairedBin {
    /// The plain ratio `ybar / abar`: what the residuals are taken about.
    pub(crate) fn plain_ratio(&self) -> f64 {
        let x = compensated_sum(self.pairs.iter().map(|p| p.0));
        let y = compensated_sum(self.pairs.iter().map(|p| p.1));
        if x > 0.0 {
            y / x
        } else {
            0.0
        }
    }

    /// The bin's ratio, Beale's: `r (1 + f c_ay / s) / (1 + f c_aa / s)`, with `c_ay` and
    /// `c_aa` the pairs' sample covariance and variance relative to `abar ybar` and `abar^2`
    /// and `f = 1 - s/N`. The plain ratio leans by about `(f / s) R (c_aa - c_ay)`: where the
    /// new configuration's share of the baseline drifts across a bin whose cost varies
    /// severalfold (a speedup growing with the length), the dearer iterations, where the
    /// share is lowest, weigh most in the bin's total but count once among `s`, and the ratio
    /// of 2-6 pairs leans high; Beale's factor takes that first-order term out. On the redraw
    /// example's speedup-by-length case (200 runs, the draws' seed varied) the first stage's
    /// new total leaned +0.16% plain and +0.08% so, with the same intervals. Fewer than two
    /// pairs, a bin measured whole (`f = 0`), or terms that leave no positive ratio: the plain
    /// ratio.
    pub(crate) fn ratio(&self) -> f64 {
        let plain = self.plain_ratio();
        let s = self.pairs.len();
        if s < 2 || plain <= 0.0 {
            return plain;
        }
        let n = s as f64;
        let f = (1.0 - n / self.population).max(0.0);
        let abar = compensated_sum(self.pairs.iter().map(|p| p.0)) / n;
        let ybar = compensated_sum(self.pairs.iter().map(|p| p.1)) / n;
        let moment =
            |g: &dyn Fn(&(f64, f64)) -> f64| compensated_sum(self.pairs.iter().map(g)) / (n - 1.0);
        let s_aa = moment(&|p| (p.0 - abar).powi(2));
        let s_ay = moment(&|p| (p.0 - abar) * (p.1 - ybar));
        let corrected =
            plain * (1.0 + f / n * s_ay / (abar * ybar)) / (1.0 + f / n * s_aa / (abar * abar));
        if corrected.is_finite() && corrected > 0.0 {
            corrected
        } else {
            plain
        }
    }

    /// The bin's projected new total `w X r`.
    pub(crate) fn total(&self) -> f64 {
        self.weight * self.baseline_mean * self.ratio()
    }

    /// `(sum of squared relative residuals, degrees of freedom)` of this bin's pairs.
    pub(crate) fn residuals(&self, expected_ratio: f64) -> (f64, f64) {
        let s = self.pairs.len();
        if s < 2 {
            return (0.0, 0.0);
        }
        let r = self.plain_ratio();
        let xbar = compensated_sum(self.pairs.iter().map(|p| p.0)) / s as f64;
        let scale = expected_ratio * xbar;
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
