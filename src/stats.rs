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

/// How a positive quantity `z` spreads about its mean `Z` over a population, as the moments
/// `E[v ln^k v] / k!` (k = 1..=4) of `v = z / Z`: enough to give `E[v^(1 + g)]`, the mean of
/// a power of it (`power_mean`), without the population at hand. `project` reads a bin's
/// (of its baseline's expected values) to follow a ratio that changes with the cost within the
/// bin (`project::trend`). All zero for a population of one value.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LevelMoments(pub [f64; 4]);

impl LevelMoments {
    /// The moments of `(value, count)` pairs; `None` without a positive total or with a value
    /// that is not positive (its logarithm is not a number).
    pub fn of(values: impl Iterator<Item = (f64, f64)> + Clone) -> Option<LevelMoments> {
        let (mut count, mut sum) = (0.0, 0.0);
        for (value, n) in values.clone() {
            if !(value > 0.0 && value.is_finite()) {
                return None;
            }
            count += n;
            sum += n * value;
        }
        if !(count > 0.0 && sum > 0.0) {
            return None;
        }
        let mean = sum / count;
        let mut moments = [0.0; 4];
        for (value, n) in values {
            let v = value / mean;
            let ln = v.ln();
            let mut term = n * v / count;
            for (k, m) in moments.iter_mut().enumerate() {
                term *= ln / (k + 1) as f64;
                *m += term;
            }
        }
        Some(LevelMoments(moments))
    }

    /// `E[v^(1 + g)] = E[v e^(g ln v)] = 1 + sum_k g^k E[v ln^k v] / k!`, the series cut after
    /// its fourth power: within `(g ln v)^5 / 120` of the power's mean, which is below 2e-5
    /// where `|g ln v| <= 0.3` (a bin's cost within a factor of 2 of its mean at `|g| <= 0.4`).
    pub fn power_mean(&self, g: f64) -> f64 {
        self.curved_mean(g, 0.0)
    }

    /// `E[v e^(g ln v + c ln^2 v)]`, the mean of a power whose exponent bends with the level
    /// (`power_mean` at `c = 0`): the exponential's series in `L = ln v` to its fourth power,
    /// `1 + g L + (g^2/2 + c) L^2 + (g^3/6 + g c) L^3 + (g^4/24 + g^2 c/2 + c^2/2) L^4`, each
    /// `E[v L^k]` being `k!` times the recorded moment.
    pub fn curved_mean(&self, g: f64, c: f64) -> f64 {
        let coefficients = [
            g,
            g * g / 2.0 + c,
            g.powi(3) / 6.0 + g * c,
            g.powi(4) / 24.0 + g * g * c / 2.0 + c * c / 2.0,
        ];
        let factorials = [1.0, 2.0, 6.0, 24.0];
        1.0 + self
            .0
            .iter()
            .zip(coefficients)
            .zip(factorials)
            .map(|((m, a), k)| a * k * m)
            .sum::<f64>()
    }
}

/// The 97.5% point of the standard normal: a two-sided 95% interval is `estimate +- Z95 * sd`.
pub const Z95: f64 = 1.959_963_984_540_054;

/// The 97.5% point of Student's t with `dof` degrees of freedom (`Z95` when `dof` is
/// infinite): the multiplier of a 95% interval whose variance is estimated from `dof` degrees
/// of freedom. Exact at 1 and 2 degrees (closed forms), linear in `1/dof` between them, and
/// the Cornish-Fisher series in `1/dof` from 2 on (within 0.2% of the exact point there).
pub fn t95(dof: f64) -> f64 {
    const T1: f64 = 12.706_204_736_174_7;
    const T2: f64 = 4.302_652_729_749_464;
    if dof.is_nan() || dof <= 0.0 {
        return f64::INFINITY;
    }
    if dof < 1.0 {
        return T1;
    }
    if dof < 2.0 {
        let at = (1.0 / dof - 0.5) / 0.5;
        return T2 + at * (T1 - T2);
    }
    if dof.is_infinite() {
        return Z95;
    }
    let z = Z95;
    let (z3, z5, z7, z9) = (z.powi(3), z.powi(5), z.powi(7), z.powi(9));
    let series = z
        + (z3 + z) / (4.0 * dof)
        + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * dof.powi(2))
        + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * dof.powi(3))
        + (79.0 * z9 + 776.0 * z7 + 1482.0 * z5 - 1920.0 * z3 - 945.0 * z)
            / (92_160.0 * dof.powi(4));
    // At exactly 2 degrees the series falls 0.7% short of the closed form: blend it in.
    if dof < 3.0 {
        let series_at_2 = 4.270_551_341_899_817;
        series + (T2 - series_at_2) * (3.0 - dof)
    } else {
        series
    }
}

/// The 1% point of chi-square with `dof` degrees of freedom, over `dof`: a variance read on
/// `dof` degrees of freedom falls below this share of the variance it estimates one time in a
/// hundred, under normal noise. Exact (to 1e-9) on whole degrees up to nine, by the
/// Wilson-Hilferty cube root from ten (at most 1.8% low there, 0.5% from twenty); 0 without a
/// degree.
pub fn chi_square_1pct_over_dof(dof: f64) -> f64 {
    /// The exact points over their degrees, 1 to 9: the cube root is 85% low at two.
    const EXACT: [f64; 9] = [
        0.000_157_088,
        0.010_050_336,
        0.038_277_267,
        0.074_277_37,
        0.110_859_615,
        0.145_348_388,
        0.177_006_044,
        0.205_812_172,
        0.231_988_971,
    ];
    // The 1% point of the standard normal.
    const Z01: f64 = -2.326_347_874_040_841;
    if dof.is_nan() || dof < 1.0 {
        return 0.0;
    }
    if dof < 10.0 {
        return EXACT[dof as usize - 1];
    }
    let spread = 2.0 / (9.0 * dof);
    (1.0 - spread + Z01 * spread.sqrt()).powi(3)
}

/// The standard normal density.
fn normal_pdf(x: f64) -> f64 {
    (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// The standard normal distribution function (Abramowitz and Stegun 7.1.26: within 1.5e-7).
pub fn normal_cdf(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-z * z).exp();
    if x >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

/// The half-width `h` of the 95% interval around an estimate whose error is a known `bias`
/// plus normal noise of standard deviation `sd`: `P(|bias + sd Z| <= h) = 0.95`. It lies
/// between `max(|bias|, Z95 sd)` and `|bias| + Z95 sd`, and never above `Z95 sqrt(bias^2 +
/// sd^2)` (the interval that takes the bias for noise). To 1e-12 relative.
pub fn half_width_with_bias(bias: f64, sd: f64) -> f64 {
    let (bias, sd) = (bias.abs(), sd.max(0.0));
    if sd == 0.0 || bias == 0.0 {
        return bias.max(Z95 * sd);
    }
    let covered = |h: f64| coverage_with_bias(bias, sd, h);
    // Newton's steps on the coverage (it rises with `h`, its slope the two tails' densities),
    // kept inside a bracket that bisection narrows whenever a step would leave it: a few
    // steps where bisection alone took forty (the plan search asks this for every figure).
    let slope = |h: f64| (normal_pdf((h - bias) / sd) + normal_pdf((h + bias) / sd)) / sd;
    let (mut low, mut high) = (bias.max(Z95 * sd), bias + Z95 * sd);
    let mut h = high;
    for _ in 0..100 {
        let gap = covered(h) - 0.95;
        if gap >= 0.0 {
            high = h;
        } else {
            low = h;
        }
        let step = gap / slope(h);
        if step.abs() <= 1e-13 * h || high - low <= 1e-12 * high {
            break;
        }
        let next = h - step;
        h = if next > low && next < high && step.is_finite() {
            next
        } else {
            0.5 * (low + high)
        };
    }
    h
}

/// `P(|bias + sd Z| <= h)`, `sd > 0`.
fn coverage_with_bias(bias: f64, sd: f64, h: f64) -> f64 {
    normal_cdf((h - bias) / sd) - normal_cdf((-h - bias) / sd)
}

/// Whether `half_width_with_bias(bias, sd) <= h`, asked of the coverage at `h` once where
/// the half-width takes Newton's steps (the plan search's trims ask only this, thousands of
/// times per K).
pub fn half_width_with_bias_within(bias: f64, sd: f64, h: f64) -> bool {
    let (bias, sd) = (bias.abs(), sd.max(0.0));
    if sd == 0.0 || bias == 0.0 {
        return bias.max(Z95 * sd) <= h;
    }
    // The half-width's bracket (`half_width_with_bias`) decides most without the coverage.
    if h < bias.max(Z95 * sd) {
        return false;
    }
    h >= bias + Z95 * sd || coverage_with_bias(bias, sd, h) >= 0.95
}

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

/// Whether a 95% half-width (in percent) meets an error target (in percent), up to rounding:
/// the one rule every verdict of "target met" uses (`select`'s K search, its plans,
/// `project --target-error`).
pub fn meets_target(half_width_pct: f64, target_pct: f64) -> bool {
    half_width_pct <= target_limit_pct(target_pct)
}

/// The widest half-width (in percent) that meets `target_pct` (`meets_target`).
pub fn target_limit_pct(target_pct: f64) -> f64 {
    target_pct * (1.0 + 1e-9)
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
    /// The chi-square distribution function on `dof` degrees at `x`: the regularised lower
    /// incomplete gamma `P(dof / 2, x / 2)` by its series.
    fn chi_square_cdf(dof: f64, x: f64) -> f64 {
        let (a, x) = (dof / 2.0, x / 2.0);
        let (mut term, mut sum, mut n) = (1.0 / a, 1.0 / a, 1.0);
        while term > 1e-18 * sum {
            term *= x / (a + n);
            sum += term;
            n += 1.0;
        }
        sum * (-x + a * x.ln() - ln_gamma(a)).exp()
    }

    /// `ln Gamma(a)` for `a > 0` (Lanczos, g = 7: about 15 digits).
    fn ln_gamma(a: f64) -> f64 {
        const C: [f64; 9] = [
            0.999_999_999_999_809_9,
            676.520_368_121_885_1,
            -1_259.139_216_722_402_8,
            771.323_428_777_653_1,
            -176.615_029_162_140_6,
            12.507_343_278_686_905,
            -0.138_571_095_265_720_12,
            9.984_369_578_019_572e-6,
            1.505_632_735_149_311_6e-7,
        ];
        let x = a - 1.0;
        let t = x + 7.5;
        let series: f64 = C[0] + (1..9).map(|i| C[i] / (x + i as f64)).sum::<f64>();
        0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + series.ln()
    }

    #[test]
    fn the_chi_square_point_leaves_one_percent_below_it() {
        // Closed forms on one and two degrees: a squared normal, an exponential of mean 2.
        let z = 0.012_533_469_508_069_276_f64; // the standard normal's 50.5% point
        assert!((super::chi_square_1pct_over_dof(1.0) - z * z).abs() < 1e-9);
        assert!((super::chi_square_1pct_over_dof(2.0) - (-0.99f64.ln())).abs() < 1e-9);
        // Against the distribution itself: exact to the table's digits up to nine degrees,
        // the cube root's point a little low from ten (below 1%, never below 0.8%).
        for dof in 1..=400 {
            let dof = dof as f64;
            let p = chi_square_cdf(dof, dof * super::chi_square_1pct_over_dof(dof));
            let low = if dof < 10.0 { 0.01 - 1e-7 } else { 0.008 };
            assert!(p > low && p < 0.01 + 1e-7, "{dof} degrees: {p}");
        }
        assert_eq!(super::chi_square_1pct_over_dof(0.0), 0.0);
    }

    #[test]
    fn the_power_mean_of_a_spread_matches_the_population_it_was_read_from() {
        // Three values with counts: E[v^(1+g)] by hand against the moments' series.
        let values = [(2.0, 3.0), (3.0, 1.0), (5.0, 2.0)];
        let moments = super::LevelMoments::of(values.iter().copied()).unwrap();
        let count: f64 = values.iter().map(|v| v.1).sum();
        let mean: f64 = values.iter().map(|v| v.0 * v.1).sum::<f64>() / count;
        for g in [-0.4, -0.1, 0.0, 0.2, 0.5] {
            let exact: f64 = values
                .iter()
                .map(|&(z, n)| n * (z / mean).powf(1.0 + g))
                .sum::<f64>()
                / count;
            let series = moments.power_mean(g);
            assert!(
                (series - exact).abs() < 1e-4,
                "g {g}: {series} against {exact}"
            );
        }
        // Bending: E[v e^(g L + c L^2)], L = ln v, by hand against the series.
        for (g, c) in [(-0.3, -0.1), (-0.1, 0.05), (0.2, -0.2), (0.0, 0.1)] {
            let exact: f64 = values
                .iter()
                .map(|&(z, n)| {
                    let l = (z / mean).ln();
                    n * (z / mean) * (g * l + c * l * l).exp()
                })
                .sum::<f64>()
                / count;
            let series = moments.curved_mean(g, c);
            assert!(
                (series - exact).abs() < 1e-4,
                "g {g} c {c}: {series} against {exact}"
            );
        }
        // One value: no spread, every power's mean is 1.
        let one = super::LevelMoments::of([(4.0, 7.0)].into_iter()).unwrap();
        assert_eq!(one, super::LevelMoments::default());
        assert!(super::LevelMoments::of([(0.0, 1.0)].into_iter()).is_none());
    }

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
    fn t95_against_tables() {
        // Student's t, 97.5% points from the standard tables.
        for (dof, exact) in [
            (1.0, 12.7062),
            (2.0, 4.3027),
            (3.0, 3.1824),
            (4.0, 2.7764),
            (5.0, 2.5706),
            (10.0, 2.2281),
            (30.0, 2.0423),
        ] {
            let t = t95(dof);
            assert!(
                (t - exact).abs() / exact < 2e-3,
                "dof {dof}: {t} against {exact}"
            );
        }
        assert_eq!(t95(f64::INFINITY), Z95);
        // Fewer degrees, a wider interval, without a jump anywhere.
        let mut last = t95(1.0);
        for i in 10..2000 {
            let t = t95(f64::from(i) / 10.0);
            let dof = f64::from(i) / 10.0;
            assert!(
                t <= last && last - t < 0.15 * last,
                "{dof}: {t} after {last}"
            );
            last = t;
        }
    }

    #[test]
    fn a_known_bias_widens_the_interval_just_enough() {
        assert!((normal_cdf(Z95) - 0.975).abs() < 2e-7);
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-9);
        assert_eq!(half_width_with_bias(0.0, 1.0), Z95);
        assert_eq!(half_width_with_bias(-3.0, 0.0), 3.0);
        for (bias, sd) in [(0.5, 1.0), (1.0, 1.0), (2.0, 1.0), (10.0, 1.0), (1.0, 0.1)] {
            let h = half_width_with_bias(bias, sd);
            let covered = normal_cdf((h - bias) / sd) - normal_cdf((-h - bias) / sd);
            assert!((covered - 0.95).abs() < 1e-6, "{bias} {sd}: {covered}");
            assert!(
                h <= Z95 * (bias * bias + sd * sd).sqrt() + 1e-12,
                "{bias} {sd}: {h}"
            );
            assert!(h >= bias.max(Z95 * sd));
        }
        // A bias as large as the noise: 2.65 sd, not 1.96 sqrt(2) = 2.77 sd.
        assert!((half_width_with_bias(1.0, 1.0) - 2.65).abs() < 0.01);
    }

    #[test]
    fn the_biased_half_width_agrees_with_plain_bisection() {
        let covered =
            |h: f64, bias: f64, sd: f64| normal_cdf((h - bias) / sd) - normal_cdf((-h - bias) / sd);
        for bias in [1e-6f64, 0.01, 0.3, 1.0, 1.7, 4.0, 50.0] {
            for sd in [1e-4, 0.05, 1.0, 3.0] {
                let (mut low, mut high) = (bias.max(Z95 * sd), bias + Z95 * sd);
                for _ in 0..200 {
                    let mid = 0.5 * (low + high);
                    if covered(mid, bias, sd) >= 0.95 {
                        high = mid;
                    } else {
                        low = mid;
                    }
                }
                let h = half_width_with_bias(bias, sd);
                assert!((h - high).abs() <= 1e-10 * high, "{bias} {sd}: {h} {high}");
                assert!(half_width_with_bias(-bias, sd) == h);
            }
        }
    }

    #[test]
    fn whether_a_biased_half_width_is_within_agrees_with_the_half_width() {
        for bias in [0.0f64, -1e-6, 0.01, 0.3, -1.0, 1.7, 4.0, 50.0] {
            for sd in [0.0, 1e-4, 0.05, 1.0, 3.0] {
                let h = half_width_with_bias(bias, sd);
                if h == 0.0 {
                    assert!(half_width_with_bias_within(bias, sd, 0.0));
                    continue;
                }
                // Either side of the half-width by more than Newton's own tolerance.
                for factor in [0.0, 0.5, 0.99, 1.0 - 1e-9, 1.0 + 1e-9, 1.01, 2.0] {
                    let within = half_width_with_bias_within(bias, sd, factor * h);
                    assert_eq!(within, factor >= 1.0, "{bias} {sd} {factor}: {h}");
                }
            }
        }
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
