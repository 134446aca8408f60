//! How many profiled iterations each bin gets: a budget spread by Neyman allocation, and the
//! fewest samples that bring a variance within what a target allows. One greedy allocator
//! (`LargestGains`) serves both.

use crate::estimate::VarianceParts;
use crate::options::BUDGET;
use crate::pick::{total_order_bits, SeqPoint};
use crate::select::SelectError;
use crate::stats::{half_width_with_bias, Z95};

/// Neyman allocation of `budget` profiled iterations over bins: `m_b ~ w_b s_b`, at least one
/// per bin and at most `caps[b]`, summing to `budget`. In whole iterations: each extra one goes
/// to the bin where it removes the most variance, `(w s)^2 / (m (m + 1))` (ties: the lower
/// index), which is the integer optimum of the Neyman problem and tends to `m_b ~ w_b s_b`.
pub fn neyman_allocation(
    weights: &[f64],
    spreads: &[f64],
    caps: &[u64],
    budget: u64,
) -> Result<Vec<u64>, SelectError> {
    let bins = weights.len() as u64;
    if budget < bins {
        return Err(BUDGET
            .error(
                &budget.to_string(),
                format!(
                    "fewer than the {bins} SeqPoints (each needs at least one profiled \
                     iteration); use a budget of at least {bins}, or fewer bins"
                ),
            )
            .into());
    }
    let available: u64 = caps.iter().sum();
    if budget > available {
        return Err(BUDGET
            .error(
                &budget.to_string(),
                format!(
                    "more than the {available} iterations that can be profiled (after warm-up)"
                ),
            )
            .into());
    }
    let mut products: Vec<f64> = weights.iter().zip(spreads).map(|(w, s)| w * s).collect();
    if products.iter().sum::<f64>() <= 0.0 {
        // No spread anywhere: any allocation is exact; spread by weight.
        products = weights.to_vec();
    }
    let squares: Vec<f64> = products.iter().map(|p| p * p).collect();
    let mut samples = vec![1u64; weights.len()];
    let mut gains = LargestGains::new(&squares, &samples, caps);
    for _ in bins..budget {
        gains.add_one(&mut samples).expect("budget within the caps");
    }
    Ok(samples)
}

/// One more sample at a time where it removes the most of a variance `sum_b a_b / s_b`: the
/// bin whose `a_b / (s_b (s_b + 1))` is largest (ties: the lower bin), below its cap. The
/// gains wait in a heap, so a step costs `log K`, not a pass over the bins: plans of tens
/// of thousands of samples (a fine target over a large run, a large budget) add them all.
pub(super) struct LargestGains<'a> {
    per_sample: &'a [f64],
    caps: &'a [u64],
    /// `(gain as total_order_bits, Reverse(bin))`: the largest gain, then the lowest bin.
    heap: std::collections::BinaryHeap<(u64, std::cmp::Reverse<usize>)>,
}

impl<'a> LargestGains<'a> {
    pub(super) fn new(per_sample: &'a [f64], samples: &[u64], caps: &'a [u64]) -> Self {
        let mut gains = LargestGains {
            per_sample,
            caps,
            heap: Default::default(),
        };
        for (b, &s) in samples.iter().enumerate() {
            gains.offer(b, s);
        }
        gains
    }

    pub(super) fn gain(&self, b: usize, s: u64) -> f64 {
        self.per_sample[b] / (s * (s + 1)) as f64
    }

    pub(super) fn offer(&mut self, b: usize, s: u64) {
        if s < self.caps[b] {
            let gain = total_order_bits(self.gain(b, s));
            self.heap.push((gain, std::cmp::Reverse(b)));
        }
    }

    /// Adds the sample and returns the variance it removed; `None` when every bin is full.
    pub(super) fn add_one(&mut self, samples: &mut [u64]) -> Option<f64> {
        let (_, std::cmp::Reverse(b)) = self.heap.pop()?;
        let removed = self.gain(b, samples[b]);
        samples[b] += 1;
        self.offer(b, samples[b]);
        Some(removed)
    }
}

/// Within-bin standard deviation of the baseline's first metric, per bin (what a budget is
/// spread by).
pub(super) fn spreads(seqpoints: &[SeqPoint]) -> Vec<f64> {
    seqpoints
        .iter()
        .map(|sp| sp.bin.moments[0][0].sample_variance().sqrt())
        .collect()
}

/// The fewest iterations per bin (at least 1, at most `caps[b]`) bringing a variance
/// `sum_b a_b / s_b + rest` within `allowed`: `s_b ~ sqrt(a_b)` (Lagrange), rounded up.
/// `None` when no number of samples can: the part samples cannot shrink is already too large.
pub fn fewest_samples(parts: &VarianceParts, caps: &[u64], allowed: f64) -> Option<Vec<u64>> {
    let room = allowed - parts.rest;
    let full: Vec<u64> = caps.iter().map(|&c| c.max(1)).collect();
    if parts.variance(&full) > allowed * (1.0 + 1e-9) {
        return None;
    }
    let roots: Vec<f64> = parts.per_sample.iter().map(|a| a.max(0.0).sqrt()).collect();
    let sum: f64 = roots.iter().sum();
    if sum <= 0.0 || room <= 0.0 {
        return Some(vec![1; caps.len()]);
    }
    let mut samples: Vec<u64> = roots
        .iter()
        .zip(&full)
        .map(|(r, &cap)| ((r * sum / room - 1e-9).ceil().max(1.0) as u64).min(cap))
        .collect();
    add_where_it_removes_most(parts, &mut samples, &full, allowed).then_some(samples)
}

/// `fewest_samples` where the figure's bias stays in: the noise alone, without the bias,
/// must then fit within the variance the bias leaves room for (`room_beside_bias`), which
/// keeps the search a running sum. `None` when the bias alone fills `allowed`, or no count
/// within the caps can.
pub(super) fn fewest_samples_with_bias(
    parts: &VarianceParts,
    caps: &[u64],
    allowed: f64,
) -> Option<Vec<u64>> {
    let room = room_beside_bias(parts.bias, allowed)?;
    let unbiased = VarianceParts {
        bias: 0.0,
        ..parts.clone()
    };
    fewest_samples(&unbiased, caps, room)
}

/// The largest noise variance `v` for which an interval around a known `bias` plus noise of
/// variance `v` is within the one of variance `allowed` (`VarianceParts::variance`: the
/// half-width `half_width_with_bias(bias, sqrt v)` within `Z95 sqrt(allowed)`). It lies
/// between `((Z95 sqrt(allowed) - |bias|) / Z95)^2` and `allowed` (the half-width lies between
/// `|bias| + Z95 sd` and `Z95 sd`); found by bisection, to 1e-12 relative. `None` when the
/// bias alone takes all of it.
pub(super) fn room_beside_bias(bias: f64, allowed: f64) -> Option<f64> {
    let half = Z95 * allowed.max(0.0).sqrt();
    if bias == 0.0 {
        return Some(allowed);
    }
    if bias.abs() >= half {
        return None;
    }
    let fits = |v: f64| half_width_with_bias(bias, v.sqrt()) <= half;
    let (mut low, mut high) = (((half - bias.abs()) / Z95).powi(2), allowed);
    while high - low > 1e-12 * high {
        let middle = 0.5 * (low + high);
        if fits(middle) {
            low = middle;
        } else {
            high = middle;
        }
    }
    Some(low)
}

/// Caps may leave `fewest_samples`' first answer short: one more sample where it removes
/// the most variance (`LargestGains`), until the variance holds. The variance is kept as a
/// running sum, computed whole only near the limit (so the answer is the one a whole
/// computation at every step would give; with a bias, which is not a sum, always).
/// False when every bin is full first.
pub(super) fn add_where_it_removes_most(
    parts: &VarianceParts,
    samples: &mut [u64],
    full: &[u64],
    allowed: f64,
) -> bool {
    let limit = allowed * (1.0 + 1e-9);
    let mut gains = LargestGains::new(&parts.per_sample, samples, full);
    let mut running = parts.variance(samples);
    loop {
        let near = (running - limit).abs() <= 1e-6 * limit;
        if parts.bias != 0.0 || near {
            // Near the limit the running sum's rounding could decide: the whole sum does.
            running = parts.variance(samples);
        }
        if running <= limit {
            return true;
        }
        match gains.add_one(samples) {
            Some(removed) => running -= removed,
            None => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::project::stratum_variance;

    #[test]
    fn fewest_samples_by_hand() {
        // Var = 4 / s_0 + 1 / s_1 within 3: s ~ sqrt(a) = (2, 1), scaled by 3 / 3: (2, 1).
        let parts = VarianceParts {
            value: 1.0,
            per_sample: vec![4.0, 1.0],
            rest: 0.0,
            bias: 0.0,
        };
        assert_eq!(fewest_samples(&parts, &[9, 9], 3.0), Some(vec![2, 1]));
        assert!(parts.variance(&[1, 1]) > 3.0);
        // A cap moves the need elsewhere; too much that samples cannot shrink is no plan.
        assert_eq!(fewest_samples(&parts, &[1, 9], 5.0), Some(vec![1, 1]));
        assert_eq!(fewest_samples(&parts, &[1, 9], 4.5), Some(vec![1, 2]));
        let stuck = VarianceParts { rest: 3.5, ..parts };
        assert_eq!(fewest_samples(&stuck, &[9, 9], 3.0), None);
    }

    #[test]
    fn room_beside_bias_by_hand() {
        // No bias: all of it. A bias of the whole half-width or more: none.
        assert_eq!(room_beside_bias(0.0, 4.0), Some(4.0));
        let half = Z95 * 2.0;
        assert_eq!(room_beside_bias(half, 4.0), None);
        assert_eq!(room_beside_bias(-1.5 * half, 4.0), None);
        // Otherwise the noise variance at which the biased half-width is the allowed one,
        // between the two bounds `half_width_with_bias` keeps, for either sign of the bias.
        for bias in [0.1, 0.5, 2.0, 3.5, -2.0] {
            let room = room_beside_bias(bias, 4.0).unwrap();
            let width = half_width_with_bias(bias, room.sqrt());
            assert!(
                (width - half).abs() <= 1e-9 * half,
                "{bias}: {width} vs {half}"
            );
            assert!(room <= 4.0 && room >= ((half - f64::abs(bias)) / Z95).powi(2));
        }
    }

    proptest::proptest! {
        /// With the bias kept, the samples found are what `fewest_samples` gives without it
        /// in the room the bias leaves, and they hold the whole variance (bias and noise);
        /// none only where the bias fills the target, or the caps leave the noise too large.
        #[test]
        fn fewest_samples_with_bias_holds_the_biased_variance(
            per_sample in proptest::collection::vec(0.0f64..50.0, 1..=6),
            caps in proptest::collection::vec(1u64..=40, 6),
            bias in -3.0f64..3.0,
            allowed in 0.5f64..20.0,
        ) {
            let k = per_sample.len();
            let caps = &caps[..k];
            let parts = VarianceParts { value: 1.0, per_sample, rest: 0.0, bias };
            let found = fewest_samples_with_bias(&parts, caps, allowed);
            let full: Vec<u64> = caps.to_vec();
            match room_beside_bias(bias, allowed) {
                None => proptest::prop_assert!(found.is_none()),
                Some(room) => {
                    let unbiased = VarianceParts { bias: 0.0, ..parts.clone() };
                    proptest::prop_assert_eq!(&found, &fewest_samples(&unbiased, caps, room));
                    if let Some(found) = found {
                        proptest::prop_assert!(parts.variance(&found) <= allowed * (1.0 + 1e-6));
                    } else {
                        proptest::prop_assert!(unbiased.variance(&full) > room);
                    }
                }
            }
        }
    }

    proptest::proptest! {
        /// Against every plan of up to three bins within their caps: `fewest_samples` finds a
        /// plan exactly when one exists, its plan holds the variance, and it costs at most one
        /// sample per bin more than the cheapest (the continuous optimum rounded up).
        #[test]
        fn fewest_samples_against_every_plan(
            per_sample in proptest::collection::vec(0.0f64..50.0, 1..=3),
            caps in proptest::collection::vec(1u64..=12, 3),
            rest in 0.0f64..2.0,
            allowed in 0.5f64..20.0,
        ) {
            let k = per_sample.len();
            let caps = &caps[..k];
            let parts = VarianceParts { value: 1.0, per_sample, rest, bias: 0.0 };
            let holds = |s: &[u64]| parts.variance(s) <= allowed * (1.0 + 1e-9);
            let mut cheapest: Option<u64> = None;
            let mut plan = vec![1u64; k];
            loop {
                if holds(&plan) {
                    let cost = plan.iter().sum::<u64>();
                    cheapest = Some(cheapest.map_or(cost, |c| c.min(cost)));
                }
                // The next plan in counting order, each bin 1..=cap.
                let Some(b) = (0..k).find(|&b| plan[b] < caps[b]) else { break };
                plan[b] += 1;
                plan[..b].iter_mut().for_each(|s| *s = 1);
            }
            let found = fewest_samples(&parts, caps, allowed);
            proptest::prop_assert_eq!(found.is_some(), cheapest.is_some());
            if let (Some(found), Some(cheapest)) = (found, cheapest) {
                proptest::prop_assert!(holds(&found));
                proptest::prop_assert!(found.iter().zip(caps).all(|(&s, &c)| (1..=c).contains(&s)));
                let cost = found.iter().sum::<u64>();
                proptest::prop_assert!(cost <= cheapest + k as u64, "{cost} vs {cheapest}");
            }
        }
    }

    proptest::proptest! {
        /// The heap and running sum give what one whole computation per added sample gives.
        #[test]
        fn adding_by_heap_is_adding_one_at_a_time(
            bins in proptest::collection::vec((0.0f64..50.0, 1u64..500, 1u64..20), 1..40),
            rest in 0.0f64..0.5,
            allowed in 0.05f64..5.0,
        ) {
            let parts = VarianceParts {
                value: 1.0,
                per_sample: bins.iter().map(|b| b.0).collect(),
                rest,
                bias: 0.0,
            };
            let full: Vec<u64> = bins.iter().map(|b| b.1).collect();
            let start: Vec<u64> = bins.iter().map(|b| b.2.min(b.1)).collect();
            let mut by_heap = start.clone();
            let heap_holds = add_where_it_removes_most(&parts, &mut by_heap, &full, allowed);
            let mut one_at_a_time = start;
            let mut holds = true;
            while parts.variance(&one_at_a_time) > allowed * (1.0 + 1e-9) {
                let gain = |b: usize| {
                    parts.per_sample[b] / (one_at_a_time[b] * (one_at_a_time[b] + 1)) as f64
                };
                let next = (0..full.len())
                    .filter(|&b| one_at_a_time[b] < full[b])
                    .max_by(|&a, &b| gain(a).total_cmp(&gain(b)).then(b.cmp(&a)));
                match next {
                    Some(b) => one_at_a_time[b] += 1,
                    None => {
                        holds = false;
                        break;
                    }
                }
            }
            proptest::prop_assert_eq!(heap_holds, holds);
            proptest::prop_assert_eq!(by_heap, one_at_a_time);
        }
    }

    #[test]
    fn neyman_by_hand() {
        // w s = 10, 30, 0. Gains (w s)^2 / (m (m+1)): 30 takes 450, 150, 75, then 10 (50) beats
        // 30 (45), then 30 again: 2, 5, and the minimum 1 for the bin without spread.
        let m = neyman_allocation(&[10.0, 10.0, 20.0], &[1.0, 3.0, 0.0], &[99, 99, 99], 8).unwrap();
        assert_eq!(m, vec![2, 5, 1]);
        assert_eq!(m.iter().sum::<u64>(), 8);
        // A cap moves the rest elsewhere.
        let m = neyman_allocation(&[10.0, 10.0], &[1.0, 3.0], &[99, 3], 8).unwrap();
        assert_eq!(m, vec![5, 3]);
    }

    #[test]
    fn budget_outside_what_can_be_profiled_is_an_error() {
        let err = neyman_allocation(&[1.0, 1.0, 1.0], &[1.0; 3], &[5; 3], 2).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("--budget 2: fewer than the 3 SeqPoints"),
            "{err}"
        );
        let err = neyman_allocation(&[1.0, 1.0], &[1.0; 2], &[2, 3], 6).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("--budget 6: more than the 5 iterations"),
            "{err}"
        );
    }

    #[test]
    fn neyman_beats_equal_allocation() {
        let weights = [100.0, 50.0, 10.0, 300.0];
        let spreads = [1.0, 8.0, 0.5, 2.0];
        let caps = [100, 50, 10, 300];
        let variance = |m: &[u64]| -> f64 {
            (0..4)
                .map(|b| stratum_variance(weights[b], weights[b], m[b] as f64, spreads[b]))
                .sum()
        };
        let neyman = neyman_allocation(&weights, &spreads, &caps, 40).unwrap();
        assert!(variance(&neyman) < variance(&[10, 10, 10, 10]));
        // No single move of one iteration between bins does better (integer optimum here).
        for from in 0..4 {
            for to in 0..4 {
                if from == to || neyman[from] == 1 {
                    continue;
                }
                let mut moved = neyman.clone();
                moved[from] -= 1;
                moved[to] += 1;
                assert!(variance(&moved) >= variance(&neyman) - 1e-9, "{moved:?}");
            }
        }
    }
}
