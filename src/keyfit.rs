//! `--key fit`: a measured metric fitted on a few per-step columns (least squares with an
//! intercept), and the fitted cost made an integer key. Plain arithmetic on columns: the run
//! log applies it (`runlog::packed::apply_fit`).

// Index loops mirror the matrix arithmetic; iterator chains would hide it.
#![allow(clippy::needless_range_loop)]

/// A least-squares fit `y = intercept + sum(coefficients[j] * x[j])`.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    pub intercept: f64,
    /// One per column; `None` for a column left out because it is constant or a linear
    /// combination of the columns before it (a packed run's `tokens` is often the budget in
    /// every step), whose coefficient no data could tell.
    pub coefficients: Vec<Option<f64>>,
    /// The share of `y`'s variance the fit explains (0 when `y` is constant).
    pub r_squared: f64,
}

impl Fit {
    pub fn predict(&self, row: impl IntoIterator<Item = f64>) -> f64 {
        self.intercept
            + row
                .into_iter()
                .zip(&self.coefficients)
                .map(|(x, c)| c.map_or(0.0, |c| c * x))
                .sum::<f64>()
    }

    pub fn predict_all(&self, columns: &[Vec<f64>]) -> Vec<f64> {
        let rows = columns.first().map_or(0, Vec::len);
        (0..rows)
            .map(|r| self.predict(columns.iter().map(|c| c[r])))
            .collect()
    }
}

/// A column whose variance, once the columns before it are accounted for, is below this share
/// of its own is left out: its coefficient would be noise (or infinite).
const COLLINEAR: f64 = 1e-9;

/// Fit `y` on `columns` (each as long as `y`) by least squares with an intercept. Columns are
/// centred and scaled first, so tokens (thousands) and their squares (millions) are solved
/// together without losing digits; the normal equations are solved by a Cholesky
/// factorisation that leaves out a column it cannot tell from the ones before it.
pub fn fit(columns: &[Vec<f64>], y: &[f64]) -> Fit {
    let n = y.len();
    let p = columns.len();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / n.max(1) as f64;
    let y_mean = mean(y);
    let means: Vec<f64> = columns.iter().map(|c| mean(c)).collect();
    let scales: Vec<f64> = columns
        .iter()
        .zip(&means)
        .map(|(c, m)| c.iter().map(|x| (x - m) * (x - m)).sum::<f64>().sqrt())
        .collect();
    let z = |j: usize, r: usize| (columns[j][r] - means[j]) / scales[j];
    let mut kept: Vec<bool> = scales.iter().map(|&s| s > 0.0 && s.is_finite()).collect();
    // Normal equations of the scaled columns: a[i][j] = z_i . z_j, b[j] = z_j . (y - mean).
    let mut a = vec![vec![0.0; p]; p];
    let mut b = vec![0.0; p];
    for r in 0..n {
        let dy = y[r] - y_mean;
        for i in (0..p).filter(|&i| kept[i]) {
            let zi = z(i, r);
            b[i] += zi * dy;
            for j in (i..p).filter(|&j| kept[j]) {
                a[i][j] += zi * z(j, r);
            }
        }
    }
    // Cholesky a = L L^T over the kept columns, dropping one whose pivot has (nearly)
    // vanished.
    let mut l = vec![vec![0.0; p]; p];
    for j in 0..p {
        if !kept[j] {
            continue;
        }
        let pivot = a[j][j]
            - (0..j)
                .filter(|&k| kept[k])
                .map(|k| l[j][k] * l[j][k])
                .sum::<f64>();
        if pivot <= COLLINEAR * a[j][j] {
            kept[j] = false;
            continue;
        }
        l[j][j] = pivot.sqrt();
        for i in (j + 1..p).filter(|&i| kept[i]) {
            let dot: f64 = (0..j).filter(|&k| kept[k]).map(|k| l[i][k] * l[j][k]).sum();
            l[i][j] = (a[j][i] - dot) / l[j][j];
        }
    }
    // Forward then back substitution.
    let mut w = vec![0.0; p];
    for j in (0..p).filter(|&j| kept[j]) {
        let dot: f64 = (0..j).filter(|&k| kept[k]).map(|k| l[j][k] * w[k]).sum();
        w[j] = (b[j] - dot) / l[j][j];
    }
    let mut beta = vec![0.0; p];
    for j in (0..p).rev().filter(|&j| kept[j]) {
        let dot: f64 = (j + 1..p)
            .filter(|&k| kept[k])
            .map(|k| l[k][j] * beta[k])
            .sum();
        beta[j] = (w[j] - dot) / l[j][j];
    }
    let coefficients: Vec<Option<f64>> = (0..p)
        .map(|j| kept[j].then(|| beta[j] / scales[j]))
        .collect();
    let intercept = y_mean
        - coefficients
            .iter()
            .zip(&means)
            .map(|(c, m)| c.map_or(0.0, |c| c * m))
            .sum::<f64>();
    let mut fit = Fit {
        intercept,
        coefficients,
        r_squared: 0.0,
    };
    let (mut sse, mut sst) = (0.0, 0.0);
    for r in 0..n {
        let e = y[r] - fit.predict(columns.iter().map(|c| c[r]));
        sse += e * e;
        sst += (y[r] - y_mean) * (y[r] - y_mean);
    }
    if sst > 0.0 {
        fit.r_squared = (1.0 - sse / sst).clamp(0.0, 1.0);
    }
    fit
}

/// About how many distinct values a fitted cost is cut into. A fitted cost is continuous, about
/// one step per value, and a key's groups need several steps each for their noise; a thousand
/// levels of the fitted range put 20 steps in a value of a 20,000-step run while rounding
/// costs at most 0.05% of the range, far below the noise of one step.
pub const LEVELS: f64 = 1000.0;

/// A fitted cost as an integer key: `round(cost / step)`, with `step` the smallest of 1, 2 or
/// 5 times a power of ten that cuts the fitted range into at most [`LEVELS`] values, so a key
/// reads as the cost in a round unit (key 1234 with step 0.01 is 12.34).
#[derive(Debug, Clone, PartialEq)]
pub struct Quantised {
    pub keys: Vec<u32>,
    pub step: f64,
    pub distinct: usize,
    /// Rows whose fitted cost was below 0 (an intercept below 0 and a small step), keyed 0.
    pub clamped: usize,
}

impl Quantised {
    pub fn of(costs: &[f64]) -> Quantised {
        let clamped = costs.iter().filter(|&&c| c < 0.0).count();
        let (lo, hi) = costs.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &c| {
            let c = c.max(0.0);
            (lo.min(c), hi.max(c))
        });
        let range = if hi > lo { hi - lo } else { hi };
        let mut step = round_step(range / LEVELS);
        // Keys are 32-bit: a narrow range far from 0 takes a coarser step.
        while hi / step > f64::from(u32::MAX) {
            step = round_step(step * 2.5);
        }
        let keys: Vec<u32> = costs
            .iter()
            .map(|&c| (c.max(0.0) / step).round() as u32)
            .collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        sorted.dedup();
        Quantised {
            distinct: sorted.len(),
            keys,
            step,
            clamped,
        }
    }
}

/// The smallest of 1, 2 or 5 times a power of ten at least `at_least` (1 for nothing).
fn round_step(at_least: f64) -> f64 {
    if !(at_least > 0.0 && at_least.is_finite()) {
        return 1.0;
    }
    let mut power = 10f64.powi(at_least.log10().floor() as i32);
    loop {
        for m in [1.0, 2.0, 5.0] {
            // A hair of slack: 0.3 / 0.1 is 2.9999999999999996.
            if m * power >= at_least * (1.0 - 1e-12) {
                return m * power;
            }
        }
        power *= 10.0;
    }
}

/// A coefficient for a note: four significant digits, in e-notation when very small or large.
pub fn shown_coefficient(c: f64) -> String {
    if c == 0.0 {
        return "0".into();
    }
    let magnitude = c.abs().log10().floor();
    if !(-3.0..6.0).contains(&magnitude) {
        return format!("{c:.3e}");
    }
    let decimals = (3.0 - magnitude).max(0.0) as usize;
    let text = format!("{c:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exact_linear_cost_is_recovered() {
        // y = 5 + 2 a + 0.5 b, by hand on four rows.
        let a = vec![1.0, 2.0, 3.0, 4.0];
        let b = vec![10.0, 0.0, 20.0, 4.0];
        let y: Vec<f64> = a
            .iter()
            .zip(&b)
            .map(|(a, b)| 5.0 + 2.0 * a + 0.5 * b)
            .collect();
        let fit = fit(&[a, b], &y);
        assert!((fit.intercept - 5.0).abs() < 1e-9, "{fit:?}");
        assert!((fit.coefficients[0].unwrap() - 2.0).abs() < 1e-9);
        assert!((fit.coefficients[1].unwrap() - 0.5).abs() < 1e-9);
        assert!((fit.r_squared - 1.0).abs() < 1e-12);
    }

    #[test]
    fn constant_and_dependent_columns_are_left_out() {
        // `budget` is constant, `twice` is 2 x `a`: only `a` has a coefficient.
        let a = vec![1.0, 2.0, 3.0, 5.0];
        let budget = vec![8.0; 4];
        let twice: Vec<f64> = a.iter().map(|x| 2.0 * x).collect();
        let y = vec![3.0, 5.0, 7.0, 11.0];
        let fit = fit(&[budget, a, twice], &y);
        assert_eq!(fit.coefficients[0], None);
        assert!((fit.coefficients[1].unwrap() - 2.0).abs() < 1e-9);
        assert_eq!(fit.coefficients[2], None);
        assert!((fit.intercept - 1.0).abs() < 1e-9);
    }

    #[test]
    fn the_share_explained_is_one_less_the_residual_share() {
        // y = x + e with e = +1, -1, -1, +1 orthogonal to x (centred 1,3,5,7 -> -3,-1,1,3):
        // the fit is y = x exactly, SSE = 4, SST = 20 + 4 = 24.
        let x = vec![1.0, 3.0, 5.0, 7.0];
        let y = vec![2.0, 2.0, 4.0, 8.0];
        let fit = fit(std::slice::from_ref(&x), &y);
        assert!((fit.coefficients[0].unwrap() - 1.0).abs() < 1e-12);
        assert!(
            (fit.r_squared - (1.0 - 4.0 / 24.0)).abs() < 1e-12,
            "{fit:?}"
        );
    }

    #[test]
    fn steps_are_round_and_cut_the_range_into_a_thousand_at_most() {
        assert_eq!(round_step(0.3), 0.5);
        assert_eq!(round_step(0.1), 0.1);
        assert_eq!(round_step(0.0011), 0.002);
        assert_eq!(round_step(7.0), 10.0);
        assert_eq!(round_step(0.0), 1.0);
        // Costs 10 to 30: a range of 20, steps of 0.02 (1000 values).
        let q = Quantised::of(&[10.0, 30.0, 20.004]);
        assert_eq!(q.step, 0.02);
        assert_eq!(q.keys, vec![500, 1500, 1000]);
        assert_eq!((q.distinct, q.clamped), (3, 0));
        // A cost below 0 is keyed 0, and the range starts there: 0 to 9, steps of 0.01.
        let q = Quantised::of(&[-1.0, 9.0]);
        assert_eq!((q.keys.clone(), q.step, q.clamped), (vec![0, 900], 0.01, 1));
        // One cost: one key, the cost in steps of a thousandth of it.
        let q = Quantised::of(&[4.0, 4.0]);
        assert_eq!((q.keys[0], q.step, q.distinct), (800, 0.005, 1));
    }

    #[test]
    fn coefficients_are_shown_to_four_digits() {
        assert_eq!(shown_coefficient(12.345678), "12.35");
        assert_eq!(shown_coefficient(0.004), "0.004");
        assert_eq!(shown_coefficient(1.2e-7), "1.200e-7");
        assert_eq!(shown_coefficient(-250.0), "-250");
        assert_eq!(shown_coefficient(0.0), "0");
    }
}
