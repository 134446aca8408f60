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

    /// The pairs' indices in the order of their place in the bin (`levels`, else their
    /// auxiliary): the proxy order a systematic plan spreads its draws over.
    pub(crate) fn proxy_order(&self) -> Vec<usize> {
        let place = |i: usize| {
            if self.levels.len() == self.pairs.len() {
                self.levels[i]
            } else {
                self.pairs[i].0
            }
        };
        let mut order: Vec<usize> = (0..self.pairs.len()).collect();
        order.sort_by(|&a, &b| place(a).total_cmp(&place(b)).then(a.cmp(&b)));
        order
    }

    /// `residuals` from successive differences: half the squared differences of neighbouring
    /// residuals in proxy order (`proxy_order`), over as many degrees of freedom. The classic
    /// variance of a systematic sample: for residuals that are pure noise it estimates what
    /// `residuals` does, and where the bin's ratio to the proxy changes along the proxy
    /// order (a cost that steps where the proxy does not, or drifts), only the differences
    /// between neighbours count, which a sample spread evenly over that order is no more
    /// wrong by.
    pub(crate) fn successive_residuals(&self, expected_ratio: f64) -> (f64, f64) {
        let Some(residual) = self.relative_residuals(expected_ratio) else {
            return (0.0, 0.0);
        };
        let in_order: Vec<f64> = self.proxy_order().iter().map(|&i| residual[i]).collect();
        (
            half_successive_squares(&in_order),
            (residual.len() - 1) as f64,
        )
    }

    /// `(sum of squared relative residuals, degrees of freedom)` of this bin's pairs.
    pub(crate) fn residuals(&self, expected_ratio: f64) -> (f64, f64) {
        let Some(residual) = self.relative_residuals(expected_ratio) else {
            return (0.0, 0.0);
        };
        (
            residual.iter().map(|e| e * e).sum(),
            (residual.len() - 1) as f64,
        )
    }

    /// Each pair's residual about the bin's plain ratio relative to `expected_ratio abar`, in
    /// `pairs`' order; `None` for fewer than two pairs or a scale that is not positive.
    fn relative_residuals(&self, expected_ratio: f64) -> Option<Vec<f64>> {
        let s = self.pairs.len();
        if s < 2 {
            return None;
        }
        let r = self.plain_ratio();
        let xbar = compensated_sum(self.pairs.iter().map(|p| p.0)) / s as f64;
        let scale = expected_ratio * xbar;
        (scale > 0.0).then(|| {
            self.pairs
                .iter()
                .map(|&(x, y)| (y - r * x) / scale)
                .collect()
        })
    }
}

/// Half the sum of squared differences of neighbours in `values`: the successive-difference
/// residual sum, whose expectation for pure noise is the plain sum of squares about the mean.
pub(crate) fn half_successive_squares(values: &[f64]) -> f64 {
    values.windows(2).map(|w| (w[1] - w[0]).powi(2) / 2.0).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bin(pairs: &[(f64, f64)], levels: &[f64]) -> PairedBin {
        PairedBin {
            weight: 1.0,
            population: 100.0,
            baseline_mean: 1.0,
            pairs: pairs.to_vec(),
            levels: levels.to_vec(),
            ..PairedBin::default()
        }
    }

    /// By hand: auxiliary 1 throughout, values 1 3 2 4 at places 0.5 1.5 1.0 2.0, so the
    /// ratio is 2.5 and the residuals in place order -1.5 -0.5 0.5 1.5: a trend along the
    /// proxy order. Successive differences 1, 1, 1: half their squares 1.5, over (2.5 * 1)^2
    /// 0.24 on 3 degrees of freedom, where the plain residuals give 5 / 6.25 = 0.8.
    /// Alternating residuals (-1 1 -1 1 in place order) read larger: differences of 2, 6 / 4
    /// = 1.5 against 4 / 4 = 1.
    #[test]
    fn successive_differences_by_hand() {
        let trend = bin(
            &[(1.0, 1.0), (1.0, 3.0), (1.0, 2.0), (1.0, 4.0)],
            &[0.5, 1.5, 1.0, 2.0],
        );
        assert_eq!(trend.proxy_order(), vec![0, 2, 1, 3]);
        let (squares, dof) = trend.successive_residuals(2.5);
        assert!((squares - 0.24).abs() < 1e-12, "{squares}");
        assert_eq!(dof, 3.0);
        let (plain, _) = trend.residuals(2.5);
        assert!((plain - 0.8).abs() < 1e-12, "{plain}");
        let alternating = bin(
            &[(1.0, 1.0), (1.0, 3.0), (1.0, 1.0), (1.0, 3.0)],
            &[1.0, 2.0, 3.0, 4.0],
        );
        let (squares, _) = alternating.successive_residuals(2.0);
        assert!((squares - 1.5).abs() < 1e-12, "{squares}");
        assert!((alternating.residuals(2.0).0 - 1.0).abs() < 1e-12);
        // Without places the auxiliary orders them; one pair has no spread.
        assert_eq!(
            bin(&[(2.0, 1.0), (1.0, 1.0)], &[]).proxy_order(),
            vec![1, 0]
        );
        assert_eq!(
            bin(&[(1.0, 1.0)], &[1.0]).successive_residuals(1.0),
            (0.0, 0.0)
        );
    }
}
