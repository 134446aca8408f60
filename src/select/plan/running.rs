//! A projection's figures kept as running sums over the plan search's steps: a fill or a trim
//! changes one bin's samples between projections, and each figure is a sum of its bins' terms
//! (`estimate::Figure`), so a projection costs a step per changed bin instead of a pass over
//! every bin and figure (at K = 500 with `--compare`, those passes were 60% of the search).

use crate::estimate::{variance_with_bias, BinSums, BinTerms, Figure, NewNoise};
use crate::stats::{half_width_pct, half_width_with_bias_within, target_limit_pct};

/// One figure of one metric: its bins' terms at the search's current samples, and their sums.
pub(super) struct RunningFigure {
    figure: Figure,
    /// One profiled iteration's squared noise per bin: the same at any samples (`running`).
    cv2: Vec<f64>,
    terms: Vec<BinTerms>,
    sums: BinTerms,
    /// Bins changed since the sums were last added up whole: past the bins' count they are
    /// added up again, so that the rounding of the additions and subtractions stays that of a
    /// few passes, however long the search.
    changes: usize,
}

impl RunningFigure {
    fn new(figure: Figure, bins: &[BinSums], cv2: Vec<f64>) -> RunningFigure {
        let terms = bins
            .iter()
            .zip(&cv2)
            .map(|(b, &c)| figure.terms(b, c))
            .collect();
        let mut running = RunningFigure {
            figure,
            cv2,
            terms,
            sums: BinTerms::default(),
            changes: 0,
        };
        running.add_up();
        running
    }

    fn add_up(&mut self) {
        self.sums = BinTerms::default();
        for &t in &self.terms {
            self.sums += t;
        }
        self.changes = 0;
    }

    /// Bin `b` is now `bin`.
    pub(super) fn set(&mut self, b: usize, bin: &BinSums) {
        let terms = self.figure.terms(bin, self.cv2[b]);
        self.sums -= self.terms[b];
        self.sums += terms;
        self.terms[b] = terms;
        self.changes += 1;
        if self.changes > self.terms.len() {
            self.add_up();
        }
    }

    /// The figure's value, noise variance and bias; `None` where it cannot be bounded.
    fn read(&self) -> Option<(f64, f64, f64)> {
        // The noise is the same at any samples, never silent (`running`).
        if self.figure.unbounded(&self.sums, false) {
            return None;
        }
        let combined = self.figure.combine(&self.sums);
        let spread = (combined.noise_scale * (self.sums.noise + self.sums.rest)).max(0.0);
        Some((combined.value, spread, combined.bias))
    }

    /// The figure's 95% half-width in percent, as its `VarianceParts` give it.
    pub(super) fn half_width_pct(&self) -> f64 {
        self.read().map_or(f64::INFINITY, |(value, spread, bias)| {
            half_width_pct(value, variance_with_bias(spread, bias))
        })
    }

    /// Whether `half_width_pct` meets `target_pct` (`stats::meets_target`), without solving
    /// for the half-width.
    pub(super) fn meets(&self, target_pct: f64) -> bool {
        let Some((value, spread, bias)) = self.read() else {
            return false;
        };
        if spread.is_infinite() {
            return false;
        }
        let limit = target_limit_pct(target_pct) / 100.0 * value.abs();
        value == 0.0 || half_width_with_bias_within(bias, spread.sqrt(), limit)
    }
}

/// Every figure of `bins` (`[metric][bin]`), running: per metric the baseline's total and,
/// with a compare configuration, its total and the speedup, in `ListedRows::figures`' order.
/// `None` where a figure's noise rests on the picks' values (a new configuration whose log
/// shows no noise at any key: `NewNoise::logged`), which a step per bin cannot follow.
pub(super) fn running(bins: &[Vec<BinSums>], compare: bool) -> Option<Vec<Vec<RunningFigure>>> {
    bins.iter()
        .map(|bins| {
            let mut figures = vec![RunningFigure::new(
                Figure::Baseline,
                bins,
                NewNoise::baseline(bins).cv2,
            )];
            if compare {
                let noise = NewNoise::logged(bins)?;
                figures.push(RunningFigure::new(Figure::New, bins, noise.cv2.clone()));
                figures.push(RunningFigure::new(Figure::Speedup, bins, noise.cv2));
            }
            Some(figures)
        })
        .collect()
}
