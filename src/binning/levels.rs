//! `levels`: the exact DP's recurrence, level by level (bins 1, 2, ... K), by the solver
//! `Solver` names. `optimal` keeps the table it fills; `blocked` runs it over blocks of
//! groups. Why each solver is exact, and when `Auto` takes which, is said at each.

// Index loops mirror the DP's recurrences; iterator chains would hide them.
#![allow(clippy::needless_range_loop)]

use std::ops::ControlFlow;

use super::range_cost::RangeCost;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Solver {
    /// Divide and conquer when the values are monotone in key order, else the bounded
    /// search (the plain DP when the bounds rule out too little) up to `EXACT_UP_TO` groups
    /// and the `Blocked` fallback past it.
    Auto,
    /// O(K U^2): exact for any values.
    Plain,
    /// O(K U log U): exact when the cost matrix is Monge (monotone values).
    DivideAndConquer,
    /// Exact for any values: the plain DP's answer, skipping blocks of splits by lower bounds.
    Bounded,
    /// Not exact: bins cut only at the edges of this many blocks of consecutive groups, each
    /// cut then moved to its best place, with a proven lower bound on the optimum beside it
    /// (`OptimalTable::gap`). Time about that of the exact DP over this many groups.
    Blocked(usize),
}

/// Groups up to which `Auto` solves noisy (not monotone) values exactly; past it the exact
/// DP's time grows as the square of the groups and the `Blocked` fallback is used.
pub const EXACT_UP_TO: usize = 20_000;

/// Blocks of the `Blocked` fallback under `Auto`: its time is about that of the exact DP on
/// this many groups; its gap shrinks as they grow.
pub const FALLBACK_BLOCKS: usize = 8192;

/// Groups from which the plain DP spreads each level over the cores, and its block of ends.
pub(super) const PARALLEL_GROUPS: usize = 1024;
const PARALLEL_BLOCK: usize = 128;

/// `Auto` leaves the bounded search for the plain DP once a level costs more than this
/// fraction of the plain DP's splits (both are exact: only the time differs).
const BOUNDED_GIVES_UP: u64 = 8;
/// The least cost of the first `j` groups in `k` bins (`best[k-1][j]`) and where its last bin
/// starts (`split[k-1][j]`), for every `k` up to `max_bins`, by one exact solver; `progress`
/// is told the levels done after each and stops the work when it answers `Break`.
#[allow(clippy::type_complexity)]
pub(super) fn levels(
    costs: &RangeCost,
    groups: usize,
    max_bins: usize,
    solver: Solver,
    progress: &mut dyn FnMut(usize) -> ControlFlow<()>,
) -> Option<(Vec<Vec<f64>>, Vec<Vec<u32>>)> {
    let auto = solver == Solver::Auto;
    let mut solver = match solver {
        Solver::Auto => Solver::Bounded,
        other => other,
    };
    let divide = solver == Solver::DivideAndConquer;
    let mut best = vec![vec![f64::INFINITY; groups + 1]; max_bins];
    let mut split = vec![vec![0u32; groups + 1]; max_bins];
    for j in 1..=groups {
        best[0][j] = costs.cost(0, j);
    }
    for k in 1..max_bins {
        let (done, rest) = best.split_at_mut(k);
        let previous = &done[k - 1];
        let current = &mut rest[0];
        let splits = &mut split[k];
        if divide {
            fill_divide(
                previous,
                current,
                splits,
                costs,
                k,
                k + 1,
                groups,
                k,
                groups - 1,
            );
        } else if solver == Solver::Bounded {
            let work = super::bounded::fill_level(previous, current, splits, costs, k, groups);
            // Values with no trend to speak of (pure noise) leave the bounds nothing to
            // rule out: the plain DP, on every core, then does the same work sooner.
            let splits_tried = (groups * groups.saturating_sub(k)) as u64 / 2;
            if auto && work > splits_tried / BOUNDED_GIVES_UP {
                solver = Solver::Plain;
            }
        } else if groups < PARALLEL_GROUPS {
            for j in (k + 1)..=groups {
                let (best_cost, best_i) = best_split(previous, costs, k, j);
                current[j] = best_cost;
                splits[j] = best_i as u32;
            }
        } else {
            // Each j of a level is independent: blocks of j go to the cores.
            let jobs: Vec<(usize, &mut [f64], &mut [u32])> = current[k + 1..]
                .chunks_mut(PARALLEL_BLOCK)
                .zip(splits[k + 1..].chunks_mut(PARALLEL_BLOCK))
                .enumerate()
                .map(|(b, (c, s))| (k + 1 + b * PARALLEL_BLOCK, c, s))
                .collect();
            crate::parallel::run_jobs(jobs, crate::parallel::threads(), |(first, c, s), _| {
                for (offset, (cost, split)) in c.iter_mut().zip(s.iter_mut()).enumerate() {
                    let (best_cost, best_i) = best_split(previous, costs, k, first + offset);
                    *cost = best_cost;
                    *split = best_i as u32;
                }
                Some(())
            });
        }
        if progress(k + 1).is_break() {
            return None;
        }
    }
    Some((best, split))
}

/// The best start `i` (in `k..j`) of the last bin of the first `j` groups, and its cost.
///
/// Scans `i` downwards and stops once the last bin alone costs more than the best total found:
/// a bin's sum of squares only grows as it takes in more groups (smaller `i`) and the earlier
/// bins' cost is never negative, so no smaller `i` can do better. Exact for any values (this
/// is not the Monge shortcut); ties keep the smallest `i`, as a full upward scan would.
#[inline]
fn best_split(previous: &[f64], costs: &RangeCost, k: usize, j: usize) -> (f64, usize) {
    let (mut best_cost, mut best_i) = (f64::INFINITY, k);
    for i in (k..j).rev() {
        let last_bin = costs.cost(i, j);
        // A hair of slack: prefix-sum costs are monotone only up to rounding.
        if last_bin > best_cost + best_cost.abs() * 1e-9 {
            break;
        }
        let c = previous[i] + last_bin;
        if c <= best_cost {
            best_cost = c;
            best_i = i;
        }
    }
    (best_cost, best_i)
}

/// Fill `current[j]` for `j` in `lo..=hi` knowing the best split lies in `split_lo..=split_hi`
/// (monotone in `j` when the cost is Monge).
#[allow(clippy::too_many_arguments)]
fn fill_divide(
    previous: &[f64],
    current: &mut [f64],
    splits: &mut [u32],
    costs: &RangeCost,
    k: usize,
    lo: usize,
    hi: usize,
    split_lo: usize,
    split_hi: usize,
) {
    if lo > hi {
        return;
    }
    let mid = (lo + hi) / 2;
    let (mut best_cost, mut best_i) = (f64::INFINITY, split_lo.max(k));
    for i in split_lo.max(k)..=split_hi.min(mid - 1) {
        let c = previous[i] + costs.cost(i, mid);
        if c < best_cost {
            best_cost = c;
            best_i = i;
        }
    }
    current[mid] = best_cost;
    splits[mid] = best_i as u32;
    if mid > lo {
        fill_divide(
            previous,
            current,
            splits,
            costs,
            k,
            lo,
            mid - 1,
            split_lo,
            best_i,
        );
    }
    fill_divide(
        previous,
        current,
        splits,
        costs,
        k,
        mid + 1,
        hi,
        best_i,
        split_hi,
    );
}
