//! `blocked`: the fallback of the exact 1-D binning for many distinct keys whose values are
//! noisy (not monotone), where the exact DP's time grows as the square of the groups. It is
//! not exact; beside each K's bins it keeps a proven lower bound on the optimum, so the
//! distance from the optimum is known (`OptimalTable::gap`).
//!
//! The groups are cut into `blocks` runs of consecutive groups of about equal length.
//!
//! - The bins: the exact DP over the blocks (bins may only start at a block's edge), then
//!   each cut moved, one at a time, to the place within a block either side that costs least
//!   with its neighbours fixed, until no move helps. Their objective is computed over the
//!   groups, so it is what the bins really cost.
//! - The lower bound: map any partition `S` of the groups into K bins to the blocks. A block
//!   with no cut inside lies whole in one bin; a block with cuts inside is *cut*. Each bin of
//!   `S` is (a piece of a cut block) + (a run of whole blocks) + (a piece of a cut block), and
//!   splitting a bin never raises its sum of squares, so `S` costs at least the runs' costs
//!   plus, for each cut block, the least cost of its pieces: at least its best split in two
//!   when it holds one cut, at least 0 when it holds more. A DP over the blocks that lets
//!   each K - 1 cuts fall on an edge (one cut), inside a block (one cut, the block costs its
//!   best split in two) or twice inside a block (two cuts, the block costs 0) minimises over
//!   a set that holds every such image, so its least cost is at most the optimum's.

// Index loops mirror the DP's recurrences; iterator chains would hide them.
#![allow(clippy::needless_range_loop)]

use std::ops::ControlFlow;

use super::levels::{levels, Solver};
use super::range_cost::RangeCost;
use super::Bins;

/// Rounds of moving every cut before the bins are taken as they are.
const REFINE_ROUNDS: usize = 16;

/// Ends of a level of the lower bound's DP given to one core at a time.
const PARALLEL_BLOCK: usize = 64;

/// Every K's bins (as the groups where bins 2..=K start), their objective and a proven lower
/// bound on the least objective.
#[derive(Debug, Clone)]
pub(super) struct Blocked {
    starts: Vec<Vec<usize>>,
    cost: Vec<f64>,
    lower: Vec<f64>,
    groups: usize,
}

impl Blocked {
    pub(super) fn max_bins(&self) -> usize {
        self.cost.len()
    }

    pub(super) fn cost(&self, k: usize) -> f64 {
        self.cost[k - 1]
    }

    pub(super) fn lower_bound(&self, k: usize) -> f64 {
        self.lower[k - 1]
    }

    pub(super) fn bins(&self, k: usize) -> Bins {
        let starts = &self.starts[k - 1];
        let edges: Vec<usize> = std::iter::once(0)
            .chain(starts.iter().copied())
            .chain([self.groups])
            .collect();
        edges.windows(2).map(|w| (w[0]..w[1]).collect()).collect()
    }
}

/// Bins and lower bounds for every K up to `max_bins` over `groups` groups, telling
/// `progress` `(steps done, steps)`; `None` when it answered `Break`.
pub(super) fn solve(
    costs: &RangeCost,
    groups: usize,
    max_bins: usize,
    blocks: usize,
    progress: &mut dyn FnMut(usize, usize) -> ControlFlow<()>,
) -> Option<Blocked> {
    let blocks = blocks.max(max_bins).clamp(1, groups.max(1));
    let edges: Vec<usize> = (0..=blocks).map(|b| b * groups / blocks).collect();
    let coarse = costs.at_edges(&edges);
    let steps = 2 * max_bins;
    let (_, split) = levels(&coarse, blocks, max_bins, Solver::Auto, &mut |done| {
        progress(done, steps)
    })?;
    let reach = groups.div_ceil(blocks) + 1;
    let mut starts = Vec::with_capacity(max_bins);
    let mut cost = Vec::with_capacity(max_bins);
    for k in 1..=max_bins {
        let mut cuts = Vec::with_capacity(k - 1);
        let mut end = blocks;
        for level in (1..k).rev() {
            end = split[level][end] as usize;
            cuts.push(edges[end]);
        }
        cuts.reverse();
        refine(costs, groups, &mut cuts, reach);
        cost.push(objective(costs, groups, &cuts));
        starts.push(cuts);
    }
    let lower = lower_bounds(costs, &coarse, &edges, max_bins, &mut |done| {
        progress(max_bins + done, steps)
    })?;
    Some(Blocked {
        starts,
        cost,
        lower,
        groups,
    })
}

/// The objective of bins starting at 0 and at each of `cuts`.
fn objective(costs: &RangeCost, groups: usize, cuts: &[usize]) -> f64 {
    let mut from = 0;
    let mut total = 0.0;
    for &to in cuts.iter().chain([&groups]) {
        total += costs.cost(from, to);
        from = to;
    }
    total
}

/// Moves each cut to the place within `reach` groups that costs least with the cuts either
/// side of it fixed, round after round until none moves: the objective never rises.
fn refine(costs: &RangeCost, groups: usize, cuts: &mut [usize], reach: usize) {
    for _ in 0..REFINE_ROUNDS {
        let mut moved = false;
        for m in 0..cuts.len() {
            let before = if m == 0 { 0 } else { cuts[m - 1] };
            let after = cuts.get(m + 1).copied().unwrap_or(groups);
            let here = cuts[m];
            let pair = |c: usize| costs.cost(before, c) + costs.cost(c, after);
            let (mut best, mut best_c) = (pair(here), here);
            let from = here.saturating_sub(reach).max(before + 1);
            let to = (here + reach).min(after - 1);
            for c in from..=to {
                let total = pair(c);
                if total < best {
                    best = total;
                    best_c = c;
                }
            }
            if best_c != here {
                cuts[m] = best_c;
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
}

/// A proven lower bound on the least objective of every K up to `max_bins` (see the module
/// comment), from the DP over the blocks whose edges are `edges`; `coarse` gives a run of
/// whole blocks its cost. `progress` is told the levels done.
fn lower_bounds(
    costs: &RangeCost,
    coarse: &RangeCost,
    edges: &[usize],
    max_bins: usize,
    progress: &mut dyn FnMut(usize) -> ControlFlow<()>,
) -> Option<Vec<f64>> {
    let blocks = edges.len() - 1;
    let inf = f64::INFINITY;
    // The least cost of a block cut in two inside (none when it is one group).
    let split_in_two: Vec<f64> = edges
        .windows(2)
        .map(|w| {
            ((w[0] + 1)..w[1])
                .map(|c| costs.cost(w[0], c) + costs.cost(c, w[1]))
                .fold(inf, f64::min)
        })
        .collect();
    // Per number of cuts used: `run_ends[b]`, the least cost of blocks `0..b` with the last
    // run ending at edge `b`; `cut_ends[b]`, the same with block `b - 1` cut inside.
    let mut run_ends: Vec<Vec<f64>> = Vec::with_capacity(max_bins);
    let mut cut_ends: Vec<Vec<f64>> = Vec::with_capacity(max_bins);
    let mut lower = Vec::with_capacity(max_bins);
    let mut least = inf;
    for used in 0..max_bins {
        let mut cut_end = vec![inf; blocks + 1];
        if used == 0 {
            cut_end[0] = 0.0; // the start: a run may begin at edge 0 with no cut
        }
        let either = |level: Option<&usize>, b: usize| -> f64 {
            level.map_or(inf, |&l| run_ends[l][b].min(cut_ends[l][b]))
        };
        let one_less = used.checked_sub(1);
        let two_less = used.checked_sub(2);
        for b in 1..=blocks {
            let one_cut = either(one_less.as_ref(), b - 1) + split_in_two[b - 1];
            let two_cuts = either(two_less.as_ref(), b - 1);
            cut_end[b] = one_cut.min(two_cuts);
        }
        // A run starts at an edge after a run (one more cut) or after a cut block.
        let start: Vec<f64> = (0..=blocks)
            .map(|a| {
                let after_run = one_less.map_or(inf, |l| run_ends[l][a]);
                after_run.min(cut_end[a])
            })
            .collect();
        let mut run_end = vec![inf; blocks + 1];
        let jobs: Vec<(usize, &mut [f64])> = run_end[1..]
            .chunks_mut(PARALLEL_BLOCK)
            .enumerate()
            .map(|(n, chunk)| (1 + n * PARALLEL_BLOCK, chunk))
            .collect();
        crate::parallel::run_jobs(jobs, crate::parallel::threads(), |(first, chunk), _| {
            for (offset, slot) in chunk.iter_mut().enumerate() {
                *slot = least_run_end(&start, coarse, first + offset);
            }
            Some(())
        });
        least = least.min(run_end[blocks]).min(cut_end[blocks]);
        // Rounding room: prefix-sum costs are exact only up to rounding.
        lower.push((least - 1e-9 * (least.abs() + costs.scale())).max(0.0));
        run_ends.push(run_end);
        cut_ends.push(cut_end);
        if used >= 2 {
            // Only the last two levels are read again.
            run_ends[used - 2] = Vec::new();
            cut_ends[used - 2] = Vec::new();
        }
        if progress(used + 1).is_break() {
            return None;
        }
    }
    Some(lower)
}

/// `min over a < b of start[a] + coarse.cost(a, b)`: scanned from `a = b - 1` down, stopping
/// once the run alone costs more than the best (a run's cost only grows as it reaches back,
/// and `start` is never negative).
fn least_run_end(start: &[f64], coarse: &RangeCost, b: usize) -> f64 {
    let mut best = f64::INFINITY;
    for a in (0..b).rev() {
        let run = coarse.cost(a, b);
        if run > best {
            break;
        }
        best = best.min(start[a] + run);
    }
    best
}

#[cfg(test)]
mod tests {
    use crate::binning::test_values::values_strategy;
    use crate::binning::{objective, OptimalTable, Solver};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// The plain DP is the oracle: the fallback's bins cost what it says, never less than
        /// the optimum, and its lower bound never exceeds the optimum.
        #[test]
        fn the_lower_bound_holds_and_the_bins_cost_what_they_say(
            (counts, values) in values_strategy(2..90),
            max_k in 1usize..16,
            blocks in 1usize..40,
        ) {
            let exact = OptimalTable::build(&counts, &values, max_k, Solver::Plain);
            let fallback = OptimalTable::build(&counts, &values, max_k, Solver::Blocked(blocks));
            prop_assert!(!fallback.is_exact());
            prop_assert_eq!(exact.max_bins(), fallback.max_bins());
            for k in 1..=exact.max_bins() {
                let best = exact.cost(k);
                let room = 1e-9 * (1.0 + best);
                let bins = fallback.bins(k);
                prop_assert_eq!(bins.len(), k);
                prop_assert_eq!(bins.concat(), (0..counts.len()).collect::<Vec<_>>());
                let real = objective(&counts, &values, &bins);
                prop_assert!((real - fallback.cost(k)).abs() <= 1e-6 * (1.0 + real), "k={}: {} vs {}", k, real, fallback.cost(k));
                prop_assert!(fallback.cost(k) >= best - room, "k={}: below the optimum", k);
                prop_assert!(fallback.lower_bound(k) <= best + room, "k={}: bound {} above the optimum {}", k, fallback.lower_bound(k), best);
                let gap = fallback.gap(k);
                prop_assert!((0.0..=1.0).contains(&gap));
                // The optimum lies within the gap stated.
                prop_assert!(best >= fallback.cost(k) * (1.0 - gap) - room);
            }
        }
    }

    #[test]
    fn one_group_per_block_is_the_exact_answer() {
        let (counts, values) = crate::testkit::distinct::noisy_groups(300, 0.05, 5);
        let exact = OptimalTable::build(&counts, &values, 12, Solver::Plain);
        let fallback = OptimalTable::build(&counts, &values, 12, Solver::Blocked(300));
        for k in 1..=12 {
            let best = exact.cost(k);
            assert!((fallback.cost(k) - best).abs() <= 1e-9 * best, "k={k}");
            // Only the rounding room of the bound is left.
            assert!(fallback.gap(k) < 1e-6, "k={k}: gap {}", fallback.gap(k));
        }
    }

    #[test]
    fn the_gap_is_small_on_noisy_curves() {
        // Blocks of 8 groups: the bound loses about a block per cut of each bin's cost (the
        // pieces of a cut block are priced apart from their bins), a few K B / U of the whole.
        let (counts, values) = crate::testkit::distinct::noisy_groups(4000, 0.05, 9);
        let exact = OptimalTable::build(&counts, &values, 32, Solver::Auto);
        let fallback = OptimalTable::build(&counts, &values, 32, Solver::Blocked(500));
        for k in 1..=32 {
            let gap = fallback.gap(k);
            assert!(
                gap < 4.0 * k as f64 * 8.0 / 4000.0 + 1e-6,
                "k={k}: gap {gap}"
            );
            let real = (fallback.cost(k) - exact.cost(k)) / exact.cost(k);
            assert!(
                real <= gap + 1e-9,
                "k={k}: {real} above the stated gap {gap}"
            );
        }
    }
}
