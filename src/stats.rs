//! Small numeric helpers shared by grouping, projection and checks: compensated sums,
//! medians, percent errors, and the only 95% interval arithmetic.

/// Compensated (Neumaier) summation: totals of 10M metrics up to 1e12 stay exact to ~1 ulp.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CompensatedSum {
    sum: f64,
    compensation: f64,
}

impl CompensatedSum {
    pub fn add(&mut self, x: f64) {
        let t = self.sum + x;
        if self.sum.abs() >= x.abs() {
            self.compensation += (self.sum - t) + x;
        } else {
            self.compensation += (x - t) + self.sum;
        }
        self.sum = t;
    }

    pub fn value(&self) -> f64 {
        self.sum + self.compensation
    }
}

pub fn compensated_sum(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut total = CompensatedSum::default();
    for v in values {
        total.add(v);
    }
    total.value()
}

/// Median of a scratch buffer (reordered in place); NaN-free input assumed. Empty -> 0.
pub fn median_in_place(values: &mut [f64]) -> f64 {
    let n = values.len();
    if n == 0 {
        return 0.0;
    }
    let mid = n / 2;
    let (_, upper, _) = values.select_nth_unstable_by(mid, f64::total_cmp);
    let upper = *upper;
    if n % 2 == 1 {
        upper
    } else {
        let lower = values[..mid]
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        (lower + upper) / 2.0
    }
}

/// The 97.5% point of the standard normal: a two-sided 95% interval is `estimate +- Z95 * sd`.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Half-width of the 95% interval of an estimate with this variance.
pub fn half_width(variance: f64) -> f64 {
    Z95 * variance.max(0.0).sqrt()
}

/// `value +- Z95 sqrt(variance)`: the 95% interval.
pub fn interval(value: f64, variance: f64) -> [f64; 2] {
    let half = half_width(variance);
    [value - half, value + half]
}

/// Half-width of the 95% interval as a percentage of `value` (0 for a zero value).
pub fn half_width_pct(value: f64, variance: f64) -> f64 {
    if value == 0.0 {
        return 0.0;
    }
    100.0 * Z95 * variance.max(0.0).sqrt() / value.abs()
}

/// The variance whose 95% interval has this half-width (the inverse of `half_width`).
pub fn variance_of_half_width(half: f64) -> f64 {
    (half / Z95).powi(2)
}

pub fn percent_error(estimate: f64, actual: f64) -> f64 {
    // Equal values are exact even when both are infinite (a speedup over a zero-cost compare).
    if estimate == actual {
        0.0
    } else if actual == 0.0 {
        f64::INFINITY
    } else {
        100.0 * (estimate - actual).abs() / actual.abs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compensated_sum_beats_naive_on_hard_input() {
        // 1e16 + many 1.0s: a naive f64 sum loses every 1.0.
        let mut values = vec![1e16];
        values.extend(std::iter::repeat_n(1.0, 1000));
        values.push(-1e16);
        assert_eq!(compensated_sum(values.iter().copied()), 1000.0);
        assert_ne!(values.iter().sum::<f64>(), 1000.0);
    }

    #[test]
    fn medians_by_hand() {
        assert_eq!(median_in_place(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median_in_place(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median_in_place(&mut []), 0.0);
    }

    #[test]
    fn percent_errors() {
        assert_eq!(percent_error(99.0, 100.0), 1.0);
        assert_eq!(percent_error(0.0, 0.0), 0.0);
        assert_eq!(percent_error(f64::INFINITY, f64::INFINITY), 0.0);
        assert_eq!(percent_error(1.0, 0.0), f64::INFINITY);
    }
}
