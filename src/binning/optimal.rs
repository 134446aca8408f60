//! `optimal`: the exact minimiser of the weighted within-bin sum of squares over contiguous
//! ranges of key-sorted groups (weighted 1-D k-means, as Ckmeans.1d.dp). One table answers
//! every K up to its maximum.
//!
//! The values are the groups' mean costs in key order. Sorted values make the range cost
//! Monge and divide and conquer exact; noisy costs are not sorted and then the cost is not
//! Monge (values 10, 0, 10: the two pairs cost 50 + 50, all three only 66.7, against the
//! quadrangle inequality), so such values take the bounded search of `bounded`, which finds
//! the plain DP's answer with far fewer splits tried. Past `EXACT_UP_TO` noisy groups even
//! that grows as the square of the groups, and `Auto` takes the `blocked` fallback: not
//! exact, but with a proven bound on how far from the optimum it is (`OptimalTable::gap`).

// Index loops mirror the DP's recurrences; iterator chains would hide them.
#![allow(clippy::needless_range_loop)]

use std::ops::ControlFlow;

use super::levels::{levels, Solver, EXACT_UP_TO, FALLBACK_BLOCKS};
use super::range_cost::{Objective, RangeCost};
use super::Bins;

/// The DP table: `best[k-1][j]` is the least cost of the first `j` groups in `k` bins and
/// `split[k-1][j]` where its last bin starts.
#[derive(Debug, Clone)]
pub struct OptimalTable {
    best: Vec<Vec<f64>>,
    split: Vec<Vec<u32>>,
    groups: usize,
    /// Set instead of `best` and `split` when the keys were too many for the exact DP.
    fallback: Option<super::blocked::Blocked>,
    objective: Objective,
}

pub fn is_monotone(values: &[f64]) -> bool {
    values.windows(2).all(|w| w[0] <= w[1]) || values.windows(2).all(|w| w[0] >= w[1])
}

impl OptimalTable {
    /// The table of the method's objective (`Objective::Spread`).
    pub fn build(counts: &[u64], values: &[f64], max_bins: usize, solver: Solver) -> Self {
        Self::build_for(counts, values, max_bins, solver, Objective::Spread)
    }

    /// The table of `objective`.
    pub fn build_for(
        counts: &[u64],
        values: &[f64],
        max_bins: usize,
        solver: Solver,
        objective: Objective,
    ) -> Self {
        Self::build_with_progress(counts, values, max_bins, solver, objective, &mut |_, _| {
            ControlFlow::Continue(())
        })
        .expect("never stopped")
    }

    /// `build`, telling `progress` `(steps done, steps)` as it goes (a level of a DP each);
    /// `None` when it answered `Break` (the explorer's cancel: a DP over many groups takes
    /// seconds).
    pub fn build_with_progress(
        counts: &[u64],
        values: &[f64],
        max_bins: usize,
        solver: Solver,
        objective: Objective,
        progress: &mut dyn FnMut(usize, usize) -> ControlFlow<()>,
    ) -> Option<Self> {
        let groups = counts.len();
        let max_bins = max_bins.clamp(1, groups.max(1));
        let costs = RangeCost::new(counts, values, objective);
        let solver = match solver {
            Solver::Auto if is_monotone(values) => Solver::DivideAndConquer,
            Solver::Auto if groups > EXACT_UP_TO => Solver::Blocked(FALLBACK_BLOCKS),
            other => other,
        };
        if let Solver::Blocked(blocks) = solver {
            let fallback = super::blocked::solve(&costs, groups, max_bins, blocks, progress)?;
            return Some(OptimalTable {
                best: Vec::new(),
                split: Vec::new(),
                groups,
                fallback: Some(fallback),
                objective,
            });
        }
        let (best, split) = levels(&costs, groups, max_bins, solver, &mut |done| {
            progress(done, max_bins)
        })?;
        Some(OptimalTable {
            best,
            split,
            groups,
            fallback: None,
            objective,
        })
    }

    /// What this table minimises.
    pub fn objective(&self) -> Objective {
        self.objective
    }

    pub fn max_bins(&self) -> usize {
        match &self.fallback {
            Some(f) => f.max_bins(),
            None => self.best.len(),
        }
    }

    /// The least objective with `k` bins (for the fallback: the objective of `bins(k)`).
    pub fn cost(&self, k: usize) -> f64 {
        let k = k.clamp(1, self.max_bins());
        match &self.fallback {
            Some(f) => f.cost(k),
            None => self.best[k - 1][self.groups],
        }
    }

    /// Whether every K's bins are the exact optimum (false for the `Blocked` fallback, whose
    /// distance from the optimum is bounded by `gap`).
    pub fn is_exact(&self) -> bool {
        self.fallback.is_none()
    }

    /// A proven lower bound on the least objective with `k` bins: the least objective itself
    /// when the table is exact.
    pub fn lower_bound(&self, k: usize) -> f64 {
        let k = k.clamp(1, self.max_bins());
        match &self.fallback {
            Some(f) => f.lower_bound(k),
            None => self.cost(k),
        }
    }

    /// How much above the optimum `bins(k)` may be, as a share of its objective:
    /// `(cost - lower_bound) / cost`, 0 when exact.
    pub fn gap(&self, k: usize) -> f64 {
        let cost = self.cost(k);
        if cost <= 0.0 {
            return 0.0;
        }
        ((cost - self.lower_bound(k)) / cost).max(0.0)
    }

    /// The optimal partition into `k` bins (`k` at most `max_bins`).
    pub fn bins(&self, k: usize) -> Bins {
        let k = k.clamp(1, self.max_bins());
        if let Some(f) = &self.fallback {
            return f.bins(k);
        }
        let mut bins = Vec::with_capacity(k);
        let mut end = self.groups;
        for level in (0..k).rev() {
            let start = if level == 0 {
                0
            } else {
                self.split[level][end] as usize
            };
            bins.push((start..end).collect());
            end = start;
        }
        bins.reverse();
        bins
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binning::levels::PARALLEL_GROUPS;
    use crate::binning::objective;
    use proptest::prelude::*;

    /// Every partition of `u` items into `k` contiguous ranges, by brute force.
    fn brute_force(counts: &[u64], values: &[f64], k: usize) -> f64 {
        fn rec(
            counts: &[u64],
            values: &[f64],
            start: usize,
            k: usize,
            acc: &mut Bins,
            best: &mut f64,
        ) {
            let u = counts.len();
            if k == 1 {
                acc.push((start..u).collect());
                *best = best.min(objective(counts, values, acc));
                acc.pop();
                return;
            }
            for end in (start + 1)..=(u - k + 1) {
                acc.push((start..end).collect());
                rec(counts, values, end, k - 1, acc, best);
                acc.pop();
            }
        }
        let mut best = f64::INFINITY;
        rec(counts, values, 0, k, &mut Vec::new(), &mut best);
        best
    }

    #[test]
    fn progress_sees_every_level_and_a_stop_returns_nothing() {
        let counts = vec![3, 1, 4, 1, 5, 9, 2, 6];
        let values = vec![2.0, 7.0, 1.0, 8.0, 2.0, 8.0, 1.0, 8.0];
        let mut seen = Vec::new();
        let table = OptimalTable::build_with_progress(
            &counts,
            &values,
            5,
            Solver::Plain,
            Objective::Spread,
            &mut |d, t| {
                seen.push((d, t));
                ControlFlow::Continue(())
            },
        )
        .unwrap();
        assert_eq!(seen, [(2, 5), (3, 5), (4, 5), (5, 5)]);
        let plain = OptimalTable::build(&counts, &values, 5, Solver::Plain);
        assert_eq!(table.cost(5), plain.cost(5));

        let mut asked = 0;
        let stopped = OptimalTable::build_with_progress(
            &counts,
            &values,
            5,
            Solver::Plain,
            Objective::Spread,
            &mut |_, _| {
                asked += 1;
                ControlFlow::Break(())
            },
        );
        assert!(stopped.is_none());
        assert_eq!(asked, 1, "stops at the first level it is told to");
    }

    proptest! {
        #[test]
        fn plain_dp_matches_brute_force(
            items in prop::collection::vec((1u64..20, 0.0f64..100.0), 1..9),
            k in 1usize..5,
        ) {
            let counts: Vec<u64> = items.iter().map(|i| i.0).collect();
            let values: Vec<f64> = items.iter().map(|i| i.1).collect();
            let k = k.min(counts.len());
            let table = OptimalTable::build(&counts, &values, k, Solver::Plain);
            let dp = objective(&counts, &values, &table.bins(k));
            let brute = brute_force(&counts, &values, k);
            prop_assert!((dp - brute).abs() <= 1e-6 * (1.0 + brute), "{dp} vs {brute}");
            prop_assert!((table.cost(k) - dp).abs() <= 1e-6 * (1.0 + dp));
        }

        #[test]
        fn divide_and_conquer_equals_plain_on_monotone_values(
            items in prop::collection::vec((1u64..50, 0.0f64..10.0), 1..200),
            max_k in 1usize..20,
        ) {
            let counts: Vec<u64> = items.iter().map(|i| i.0).collect();
            let mut acc = 0.0;
            let values: Vec<f64> = items.iter().map(|i| { acc += i.1; acc }).collect();
            let plain = OptimalTable::build(&counts, &values, max_k, Solver::Plain);
            let fast = OptimalTable::build(&counts, &values, max_k, Solver::DivideAndConquer);
            for k in 1..=plain.max_bins() {
                let (a, b) = (plain.cost(k), fast.cost(k));
                prop_assert!((a - b).abs() <= 1e-7 * (1.0 + a), "k={k}: {a} vs {b}");
                let via_bins = objective(&counts, &values, &fast.bins(k));
                prop_assert!((via_bins - b).abs() <= 1e-6 * (1.0 + b));
            }
        }
    }

    /// The DP without pruning: every split tried.
    fn unpruned(counts: &[u64], values: &[f64], max_bins: usize) -> Vec<f64> {
        let costs = RangeCost::new(counts, values, Objective::Spread);
        let u = counts.len();
        let mut best: Vec<f64> = (0..=u).map(|j| costs.cost(0, j)).collect();
        let mut out = vec![best[u]];
        for k in 1..max_bins.min(u) {
            let mut next = vec![f64::INFINITY; u + 1];
            for j in (k + 1)..=u {
                next[j] = (k..j)
                    .map(|i| best[i] + costs.cost(i, j))
                    .fold(f64::INFINITY, f64::min);
            }
            best = next;
            out.push(best[u]);
        }
        out
    }

    proptest! {
        #[test]
        fn pruned_plain_dp_equals_trying_every_split(
            items in prop::collection::vec((1u64..50, 0.0f64..100.0), 1..150),
            max_k in 1usize..24,
        ) {
            let counts: Vec<u64> = items.iter().map(|i| i.0).collect();
            let values: Vec<f64> = items.iter().map(|i| i.1).collect();
            let table = OptimalTable::build(&counts, &values, max_k, Solver::Plain);
            let reference = unpruned(&counts, &values, max_k);
            for (k, want) in reference.iter().enumerate() {
                let got = table.cost(k + 1);
                prop_assert!((got - want).abs() <= 1e-9 * (1.0 + want), "k={}: {got} vs {want}", k + 1);
                let via_bins = objective(&counts, &values, &table.bins(k + 1));
                prop_assert!((via_bins - want).abs() <= 1e-6 * (1.0 + want));
            }
        }
    }

    #[test]
    fn many_groups_use_every_core_and_stay_exact() {
        // Enough groups for the level-parallel path; noisy values (not monotone).
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as f64 / (1u64 << 31) as f64
        };
        let u = PARALLEL_GROUPS + 300;
        let counts: Vec<u64> = (0..u).map(|_| 1 + (next() * 40.0) as u64).collect();
        let values: Vec<f64> = (0..u).map(|i| i as f64 * 0.1 + next() * 30.0).collect();
        assert!(!is_monotone(&values));
        let table = OptimalTable::build(&counts, &values, 6, Solver::Plain);
        let reference = unpruned(&counts, &values, 6);
        for (k, want) in reference.iter().enumerate() {
            let got = table.cost(k + 1);
            assert!(
                (got - want).abs() <= 1e-9 * (1.0 + want),
                "k={}: {got} vs {want}",
                k + 1
            );
        }
    }

    #[test]
    fn one_bin_per_group_costs_nothing() {
        let counts = [3, 1, 4];
        let values = [5.0, 1.0, 9.0];
        let table = OptimalTable::build(&counts, &values, 3, Solver::Auto);
        assert_eq!(table.cost(3), 0.0);
        assert_eq!(table.bins(3), vec![vec![0], vec![1], vec![2]]);
    }

    /// `Objective::Draws`'s cost of some bins, summed directly: each bin's weighted sum of
    /// squares about its mean plus `cv2` times its squared total.
    fn draws_cost(counts: &[u64], values: &[f64], bins: &Bins, cv2: f64) -> f64 {
        bins.iter()
            .map(|bin| {
                let n: f64 = bin.iter().map(|&g| counts[g] as f64).sum();
                let total: f64 = bin.iter().map(|&g| counts[g] as f64 * values[g]).sum();
                let mean = total / n;
                let spread: f64 = bin
                    .iter()
                    .map(|&g| counts[g] as f64 * (values[g] - mean).powi(2))
                    .sum();
                spread + cv2 * total * total
            })
            .sum()
    }

    /// The least `draws_cost` over every cut of the groups into `k` contiguous bins.
    fn draws_brute_force(counts: &[u64], values: &[f64], k: usize, cv2: f64) -> f64 {
        fn rec(start: usize, k: usize, u: usize, acc: &mut Bins, visit: &mut dyn FnMut(&Bins)) {
            if k == 1 {
                acc.push((start..u).collect());
                visit(acc);
                acc.pop();
                return;
            }
            for end in (start + 1)..=(u - k + 1) {
                acc.push((start..end).collect());
                rec(end, k - 1, u, acc, visit);
                acc.pop();
            }
        }
        let mut best = f64::INFINITY;
        rec(0, k, counts.len(), &mut Vec::new(), &mut |bins| {
            best = best.min(draws_cost(counts, values, bins, cv2));
        });
        best
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// Every exact solver finds the least `Objective::Draws` cost that a brute force over
        /// every partition finds, on rising values (divide and conquer) and noisy ones (the
        /// bounded search), and its bins cost what its table says; the blocked fallback's
        /// bound stays under that optimum and its bins over it.
        #[test]
        fn every_solver_finds_the_least_cost_of_the_picks_alone(
            items in prop::collection::vec((1u64..6, 0.0f64..1.0), 2..10),
            k in 1usize..6,
            rising in any::<bool>(),
            cv2 in 0.0001f64..0.5,
        ) {
            let counts: Vec<u64> = items.iter().map(|i| i.0).collect();
            let values: Vec<f64> = items.iter().enumerate()
                .map(|(g, &(_, r))| if rising { 1.0 + g as f64 + r } else { 1.0 + 9.0 * r })
                .collect();
            let k = k.min(counts.len());
            let objective = Objective::Draws { cv2 };
            let best = draws_brute_force(&counts, &values, k, cv2);
            let close = |a: f64| (a - best).abs() <= 1e-9 * (1.0 + best);
            let mut solvers = vec![Solver::Plain, Solver::Bounded, Solver::Auto];
            if rising {
                solvers.push(Solver::DivideAndConquer);
            }
            for solver in solvers {
                let table = OptimalTable::build_for(&counts, &values, k, solver, objective);
                prop_assert!(close(table.cost(k)), "{:?}: {} vs {}", solver, table.cost(k), best);
                prop_assert!(close(draws_cost(&counts, &values, &table.bins(k), cv2)));
                prop_assert_eq!(table.objective(), objective);
            }
            let blocked = OptimalTable::build_for(&counts, &values, k, Solver::Blocked(3), objective);
            prop_assert!(blocked.lower_bound(k) <= best + 1e-9 * (1.0 + best));
            prop_assert!(draws_cost(&counts, &values, &blocked.bins(k), cv2) >= best - 1e-9 * (1.0 + best));
        }
    }

    /// A flat step of ten groups has no spread to remove: the method's own objective is 0
    /// whatever the cut, but for the picks alone the step splits into equal shares, each
    /// pick's noise standing for half the step: `2 x 50^2 x cv2`.
    #[test]
    fn the_picks_alone_split_a_flat_step_into_equal_shares() {
        let counts = [10u64; 10];
        let values = [1.0; 10];
        let spread = OptimalTable::build(&counts, &values, 2, Solver::Auto);
        assert_eq!(spread.cost(2), 0.0);
        let draws = OptimalTable::build_for(
            &counts,
            &values,
            2,
            Solver::Auto,
            Objective::Draws { cv2: 0.01 },
        );
        assert_eq!(
            draws.bins(2),
            vec![(0..5).collect::<Vec<_>>(), (5..10).collect()]
        );
        assert!((draws.cost(2) - 2.0 * 50.0f64.powi(2) * 0.01).abs() < 1e-9);
        // A negative value, which the solvers' bounds cannot take: the method's own cost.
        let signed = [1.0, -1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
        let table = OptimalTable::build_for(
            &counts,
            &signed,
            2,
            Solver::Auto,
            Objective::Draws { cv2: 0.01 },
        );
        assert_eq!(
            table.cost(2),
            OptimalTable::build(&counts, &signed, 2, Solver::Auto).cost(2)
        );
    }
}
