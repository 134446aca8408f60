//! `bounded`: one level of the exact 1-D DP without trying every split, for values that are
//! not monotone in key order (where the cost is not Monge and divide and conquer is wrong).
//!
//! Level `k` asks, for every end `j`, for the start `i` of the last bin that minimises
//! `c(i) = F(i) + w(i, j)`, where `F` is the previous level and `w` a bin's weighted sum of
//! squares. The search starts at the previous end's answer and skips whole blocks of starts
//! whose lower bound exceeds the best total found; three facts give the bounds:
//!
//! 1. `F` is nondecreasing in `i`: dropping the last group never raises a least cost.
//! 2. `w(i, j)` is nonincreasing in `i`: a bin's sum of squares never falls as it grows.
//!    So every start in `a..=b` costs at least `F(a) + w(b, j)`, and every start from `a` on
//!    at least `F(a)`.
//! 3. Splitting a bin never raises its sum of squares, `w(i, j) >= w(i, b) + w(b, j)`, and
//!    `F(i) + w(i, b)` is a partition of the first `b` groups in this level's bin count, so
//!    costs at least `G(b)`, this level's own answer at `b` (known: ends are filled in order).
//!    So every start up to `b` costs at least `G(b) + w(b, j)`.
//!
//! Nothing is skipped that could tie or beat the best, so the answer is the plain DP's: the
//! least `c(i)`, ties going to the smallest `i`.

use rayon::prelude::*;

use super::range_cost::RangeCost;

/// Starts on each side of the hint tried one by one before blocks are bounded.
const NEAR: usize = 24;

/// Rounding room for the bounds: prefix-sum costs obey the three facts only up to rounding.
fn slack(best: f64, scale: f64) -> f64 {
    1e-9 * (best.abs() + scale)
}

struct Search<'a> {
    previous: &'a [f64],
    costs: &'a RangeCost,
    j: usize,
    best: f64,
    best_i: usize,
    room: f64,
    /// Splits tried and bounds taken: the search's work, in cost look-ups.
    work: u64,
}

impl Search<'_> {
    fn offer(&mut self, i: usize) {
        self.work += 1;
        let c = self.previous[i] + self.costs.cost(i, self.j);
        if c < self.best || (c == self.best && i < self.best_i) {
            self.best = c;
            self.best_i = i;
            self.room = slack(c, self.costs.scale());
        }
    }

    /// `offer` for every start in `a..b`, in order (ties keep the first).
    fn offer_all(&mut self, a: usize, b: usize) {
        self.work += (b - a) as u64;
        let (mut best, mut best_i) = (self.best, self.best_i);
        for (i, &f) in self.previous.iter().enumerate().take(b).skip(a) {
            let c = f + self.costs.cost(i, self.j);
            if c < best {
                best = c;
                best_i = i;
            }
        }
        if best < self.best || (best == self.best && best_i < self.best_i) {
            self.best = best;
            self.best_i = best_i;
            self.room = slack(best, self.costs.scale());
        }
    }

    /// Whether no start in `a..b` can tie or beat the best (fact 1 and 2).
    fn beaten(&mut self, a: usize, b: usize) -> bool {
        self.work += 1;
        self.previous[a] + self.costs.cost(b - 1, self.j) > self.best + self.room
    }

    /// Every start in `a..b` not ruled out by its block's bound, halving the blocks; true
    /// when the whole block was ruled out at once.
    fn block(&mut self, a: usize, b: usize) -> bool {
        if self.beaten(a, b) {
            return true;
        }
        if b - a == 1 {
            self.offer(a);
            return false;
        }
        let mid = a + (b - a) / 2;
        self.block(a, mid);
        self.block(mid, b);
        false
    }
}

/// The next block's size: doubled after a block ruled out whole, else halved.
fn next_size(size: usize, ruled_out: bool) -> usize {
    if ruled_out {
        size * 2
    } else {
        (size / 2).max(1)
    }
}

/// Ends per part below which a level is not split over the cores.
const PARALLEL_ENDS: usize = 4096;

/// Fill `current[j]` and `splits[j]` for `j` in `k + 1..=groups` from `previous` (level
/// `k - 1`), as the plain DP does. Returns the work done, in cost look-ups: about the number
/// of ends when the bounds bite, up to the plain DP's (ends times splits) when they do not.
///
/// Many ends are cut into one run of consecutive ends per core. A run does not see the
/// answers of the runs before it, so it starts from a guess and uses fact 3 only within
/// itself: the same answers, a little more work.
pub(super) fn fill_level(
    previous: &[f64],
    current: &mut [f64],
    splits: &mut [u32],
    costs: &RangeCost,
    k: usize,
    groups: usize,
) -> u64 {
    let first = k + 1;
    if first > groups {
        return 0;
    }
    let ends = groups + 1 - first;
    let parts = crate::parallel::threads().min(ends / PARALLEL_ENDS).max(1);
    let per_part = ends.div_ceil(parts);
    if parts == 1 {
        return fill_run(
            previous,
            &mut current[first..=groups],
            &mut splits[first..=groups],
            first,
            costs,
            k,
        );
    }
    current[first..=groups]
        .par_chunks_mut(per_part)
        .zip(splits[first..=groups].par_chunks_mut(per_part))
        .enumerate()
        .map(|(p, (c, s))| fill_run(previous, c, s, first + p * per_part, costs, k))
        .sum()
}

/// `fill_level` for the ends `from..from + current.len()`; `current[0]` is end `from`.
fn fill_run(
    previous: &[f64],
    current: &mut [f64],
    splits: &mut [u32],
    from: usize,
    costs: &RangeCost,
    k: usize,
) -> u64 {
    let mut work = 0;
    for j in from..from + current.len() {
        let hint = if j > from {
            (splits[j - 1 - from] as usize).clamp(k, j - 1)
        } else {
            // No answer to start from: where the last of k + 1 even bins would start.
            (j - (j - k) / (k + 1)).clamp(k, j - 1)
        };
        let mut search = Search {
            previous,
            costs,
            j,
            best: f64::INFINITY,
            best_i: hint,
            room: 0.0,
            work: 0,
        };
        // Starts near the hint one by one, in a tight loop: there the total varies least
        // and blocks are seldom ruled out whole.
        let (near_from, near_to) = (hint.saturating_sub(NEAR).max(k), (hint + NEAR + 1).min(j));
        search.offer_all(near_from, near_to);
        // Later starts, in blocks that grow away from the hint while each is ruled out whole
        // and shrink when one is not: a block's bound loses more the larger it is.
        let (mut a, mut size) = (near_to, 1);
        while a < j {
            if previous[a] > search.best + search.room {
                break;
            }
            let b = (a + size).min(j);
            size = next_size(size, search.block(a, b));
            a = b;
        }
        // Earlier starts, the same way, until fact 3 rules out all that remain (it needs
        // this level's answer at `top`, known from `from` on).
        let (mut b, mut size) = (near_from, 1);
        while b > k {
            let top = b - 1;
            search.work += 1;
            if top > k
                && top >= from
                && current[top - from] + costs.cost(top, j) > search.best + search.room
            {
                break;
            }
            let a = b.saturating_sub(size).max(k);
            size = next_size(size, search.block(a, b));
            b = a;
        }
        current[j - from] = search.best;
        splits[j - from] = search.best_i as u32;
        work += search.work;
    }
    work
}

#[cfg(test)]
mod tests {
    use crate::binning::test_values::values_strategy;
    use crate::binning::{objective, Bins, OptimalTable, Solver};
    use proptest::prelude::*;

    /// Every way to cut `u` groups into `k` contiguous bins, with its objective.
    fn every_partition(counts: &[u64], values: &[f64], k: usize) -> Vec<(f64, Bins)> {
        fn cuts(
            from: usize,
            u: usize,
            left: usize,
            acc: &mut Vec<usize>,
            out: &mut Vec<Vec<usize>>,
        ) {
            if left == 0 {
                out.push(acc.clone());
                return;
            }
            for c in (from + 1)..=(u - left) {
                acc.push(c);
                cuts(c, u, left - 1, acc, out);
                acc.pop();
            }
        }
        let u = counts.len();
        let mut all = Vec::new();
        cuts(0, u, k - 1, &mut Vec::new(), &mut all);
        all.into_iter()
            .map(|inner| {
                let edges: Vec<usize> = std::iter::once(0).chain(inner).chain([u]).collect();
                let bins: Bins = edges.windows(2).map(|w| (w[0]..w[1]).collect()).collect();
                (objective(counts, values, &bins), bins)
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn bounded_equals_the_plain_dp((counts, values) in values_strategy(1..120), max_k in 1usize..24) {
            let plain = OptimalTable::build(&counts, &values, max_k, Solver::Plain);
            let fast = OptimalTable::build(&counts, &values, max_k, Solver::Bounded);
            prop_assert_eq!(plain.max_bins(), fast.max_bins());
            for k in 1..=plain.max_bins() {
                let (a, b) = (plain.cost(k), fast.cost(k));
                prop_assert!((a - b).abs() <= 1e-9 * (1.0 + a), "k={}: {} vs {}", k, a, b);
                let via_bins = objective(&counts, &values, &fast.bins(k));
                prop_assert!((via_bins - a).abs() <= 1e-6 * (1.0 + a), "k={}: bins cost {} vs {}", k, via_bins, a);
            }
        }

        #[test]
        fn bounded_finds_the_unique_optimum(
            items in prop::collection::vec((1u64..6, 0.0f64..1.0), 2..11),
            k in 2usize..6,
        ) {
            let counts: Vec<u64> = items.iter().map(|i| i.0).collect();
            let values: Vec<f64> = items.iter().enumerate()
                .map(|(g, &(_, r))| g as f64 + 4.0 * r)
                .collect();
            let k = k.min(counts.len());
            let mut all = every_partition(&counts, &values, k);
            all.sort_by(|a, b| a.0.total_cmp(&b.0));
            let fast = OptimalTable::build(&counts, &values, k, Solver::Bounded);
            let best = all[0].0;
            prop_assert!((fast.cost(k) - best).abs() <= 1e-9 * (1.0 + best));
            let unique = all.get(1).is_none_or(|second| second.0 > best + 1e-7 * (1.0 + best));
            if unique {
                prop_assert_eq!(&fast.bins(k), &all[0].1);
            }
        }
    }

    #[test]
    fn auto_on_pure_noise_equals_the_plain_dp() {
        // No trend: the bounds rule out little and `Auto` hands the levels to the plain DP.
        let mut seed = 3u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as f64 / (1u64 << 31) as f64
        };
        let counts: Vec<u64> = (0..1500).map(|_| 1 + (next() * 5.0) as u64).collect();
        let values: Vec<f64> = (0..1500).map(|_| next() * 100.0).collect();
        let plain = OptimalTable::build(&counts, &values, 12, Solver::Plain);
        let auto = OptimalTable::build(&counts, &values, 12, Solver::Auto);
        for k in 1..=12 {
            assert_eq!(plain.cost(k), auto.cost(k), "k={k}");
            assert_eq!(plain.bins(k), auto.bins(k), "k={k}");
        }
    }

    #[test]
    fn bounded_equals_plain_on_many_noisy_groups() {
        // Enough groups for a level to be split over two cores where there are two.
        let (counts, values) =
            crate::testkit::distinct::noisy_groups(3 * super::PARALLEL_ENDS, 0.05, 11);
        assert!(!crate::binning::is_monotone(&values));
        let plain = OptimalTable::build(&counts, &values, 32, Solver::Plain);
        let fast = OptimalTable::build(&counts, &values, 32, Solver::Bounded);
        for k in 1..=32 {
            assert_eq!(plain.cost(k), fast.cost(k), "k={k}");
            assert_eq!(plain.bins(k), fast.bins(k), "k={k}");
        }
    }
}
