//! A bin's cost for the exact 1-D binning: the weighted sum of squares of any contiguous
//! range of key groups, plus for one-draw objectives the noise of a draw carried to the bin's
//! whole share (`Objective`), from prefix sums, in O(1). Shared by the plain DP (`optimal`)
//! and the bounded search (`bounded`).

use super::optimal::Objective;

/// Prefix sums that give any contiguous range's cost in O(1).
pub(super) struct RangeCost {
    /// Prefix sums of weight, weighted value and weighted square, side by side so that one
    /// range's cost reads two cache lines.
    sums: Vec<[f64; 3]>,
    /// What the values were centred on (a bin's total is `s + w centre`).
    centre: f64,
    /// The weight on a bin's squared total (`Objective::total_weight`).
    total_weight: f64,
}

impl RangeCost {
    pub(super) fn new(counts: &[u64], values: &[f64], objective: Objective) -> Self {
        // Centre the values: the squares then stay small and the subtraction below exact-ish.
        let total: f64 = counts.iter().map(|&c| c as f64).sum();
        let centre = counts
            .iter()
            .zip(values)
            .map(|(&c, &v)| c as f64 * v)
            .sum::<f64>()
            / total.max(1.0);
        let mut sums = Vec::with_capacity(counts.len() + 1);
        let mut running = [0.0; 3];
        sums.push(running);
        for (&c, &v) in counts.iter().zip(values) {
            let (n, x) = (c as f64, v - centre);
            running = [running[0] + n, running[1] + n * x, running[2] + n * x * x];
            sums.push(running);
        }
        RangeCost {
            sums,
            centre,
            total_weight: objective.total_weight(values),
        }
    }

    /// The weighted sum of squares of all groups around their mean: the size of the costs,
    /// by which rounding room is measured.
    pub(super) fn scale(&self) -> f64 {
        self.sums.last().map_or(0.0, |s| s[2])
    }

    /// The same costs over blocks of consecutive groups: group `b` of the result is groups
    /// `edges[b]..edges[b + 1]` here (`edges` rising from 0 to the number of groups).
    pub(super) fn at_edges(&self, edges: &[usize]) -> RangeCost {
        RangeCost {
            sums: edges.iter().map(|&e| self.sums[e]).collect(),
            ..*self
        }
    }

    /// Cost of groups `i..j` (half-open) forming one bin: its weighted sum of squares, plus
    /// `total_weight` times its squared total. The second term keeps every property the
    /// solvers rest on, for non-negative values (`Objective::total_weight` is 0 otherwise):
    /// a bin's total falls as it shrinks, `(a + b)^2 >= a^2 + b^2` when it splits, and a convex
    /// function of a range's sum is Monge.
    pub(super) fn cost(&self, i: usize, j: usize) -> f64 {
        let (from, to) = (&self.sums[i], &self.sums[j]);
        let w = to[0] - from[0];
        if w <= 0.0 {
            return 0.0;
        }
        let s = to[1] - from[1];
        let q = to[2] - from[2];
        let spread = (q - s * s / w).max(0.0);
        if self.total_weight > 0.0 {
            spread + self.total_weight * (s + w * self.centre).powi(2)
        } else {
            spread
        }
    }
}
