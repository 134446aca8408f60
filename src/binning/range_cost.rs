//! A bin's cost for the exact 1-D binning: the weighted sum of squares of any contiguous
//! range of key groups, plus for one-draw objectives the noise of a draw carried to the bin's
//! whole share (`Objective`), from prefix sums, in O(1). Shared by the plain DP (`optimal`)
//! and the bounded search (`bounded`).

/// What the exact binning minimises.
///
/// `Spread`, the method's objective: each bin's weighted sum of squares `SS_b` of its keys'
/// mean costs. It is the variance of a plan that profiles each bin in proportion to its
/// size, and with nearest-mean picks it keeps each bin's keys near the one picked.
///
/// `Draws { cv2 }`: `SS_b + cv2 T_b^2` for a selection that profiles each bin at its
/// SeqPoint alone, `T_b` the bin's total and `cv2` one iteration's squared relative noise.
/// The one iteration stands for the bin's whole share, so its noise adds `T_b^2 cv^2` to the
/// projected total's variance: a bin holding a sixth of the run carries one iteration's
/// noise into a sixth of it, where `Spread` alone (a flat step has no spread to remove)
/// leaves the dearest steps whole; `SS_b` still keeps the keys near the one picked. Measured
/// on the redraw example (200 runs, one iteration per SeqPoint), the speedup's
/// 95th-percentile error beat random iterations at the same count on 25 of 25 rows of each
/// table, where `Spread` beat it on 23 (docs/plans.md). Plans that draw several iterations
/// over each bin, or size each bin by its noise (`select --target-error`'s), keep `Spread`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Objective {
    Spread,
    Draws { cv2: f64 },
}

impl Objective {
    /// The weight on a bin's squared total: `cv2` for `Draws`, where every value is finite and
    /// non-negative (costs and times are; the solvers' bounds need it), else 0.
    pub(super) fn total_weight(self, values: &[f64]) -> f64 {
        match self {
            Objective::Draws { cv2 }
                if cv2.is_finite()
                    && cv2 > 0.0
                    && values.iter().all(|v| v.is_finite() && *v >= 0.0) =>
            {
                cv2
            }
            _ => 0.0,
        }
    }
}

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
