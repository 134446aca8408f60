//! A bin's baseline curve: the baseline value each of its keys is expected to take, what
//! `project`'s ratio estimate divides by in place of a measured iteration's own logged value.
//!
//! Why: an iteration's logged baseline value is its key's cost plus that iteration's noise.
//! Where the two configurations' noises are unrelated, dividing the new value by the logged
//! one adds the baseline's noise to the new configuration's, and the ratio then needs about
//! twice the iterations a known cost curve would. The curve removes that noise, using every
//! iteration of the bin rather than the few measured.
//!
//! How: per metric, a curve `f` through the keys' baseline means (least squares weighted by
//! each key's iterations, with an intercept: a quadratic in a one-column key, a plane in a
//! two-column one), and each key's own mean pulled towards it as far as its iterations cannot
//! tell them apart (empirical Bayes): `z = f + lambda (mean - f)`, `lambda = tau^2 / (tau^2 +
//! s^2 / n)`, with `s^2` the pooled within-key variance and `tau^2` the keys' spread about the
//! curve beyond what that noise explains. A smooth cost leaves `tau^2` near 0 and `z` is the
//! fitted curve; a stepwise one (a kernel switching tile sizes inside the bin) makes `tau^2`
//! large and the keys keep their own means. The curve is scaled so that it sums to the bin's baseline total over its
//! iterations, as the ratio estimate's population total requires.
//!
//! Where the bin cannot separate a key's cost from its noise (every key seen once, or no
//! more keys than the curve has parameters), each key keeps its own mean: with one iteration
//! per key that is the iteration's logged value, the estimate as it was without a curve.

use crate::groups::KeyGroups;
use crate::stats::LevelMoments;

/// Each member key's expected baseline value, per metric.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BaselineCurve {
    dims: usize,
    /// The members' keys, row-major, ascending.
    keys: Vec<u32>,
    /// `[metric][member]`, in `keys`' order.
    expected: Vec<Vec<f64>>,
    /// `[metric]`: how the expected values spread over the bin's iterations (each key's
    /// counted as often as it was logged), all zero for one key.
    levels: Vec<LevelMoments>,
}

impl BaselineCurve {
    /// The curve of the bin `members` (key group indices of `groups`) on the baseline.
    pub fn of(groups: &KeyGroups, members: &[usize]) -> Self {
        let dims = groups.dims;
        if let (&[g], 1..) = (members, dims) {
            // A key alone keeps its own mean (`expected_means`): most bins at a large K, each
            // made at every K the plan's search costs.
            return BaselineCurve {
                dims,
                keys: groups.key(g).to_vec(),
                expected: groups.moments[0]
                    .iter()
                    .map(|metric| vec![metric[g].mean])
                    .collect(),
                levels: vec![LevelMoments::default(); groups.moments[0].len()],
            };
        }
        let mut members = members.to_vec();
        members.sort_by(|&a, &b| groups.key(a).cmp(groups.key(b)));
        let mut sorted_keys = Vec::with_capacity(members.len() * dims);
        let mut coords: Vec<f64> = Vec::with_capacity(members.len() * dims);
        for &g in &members {
            sorted_keys.extend_from_slice(groups.key(g));
            coords.extend(groups.key(g).iter().map(|&k| f64::from(k)));
        }
        let mut keys: Vec<KeyMean> = coords
            .chunks(dims.max(1))
            .map(|c| KeyMean {
                coords: c,
                count: 0.0,
                mean: 0.0,
                squares: 0.0,
            })
            .collect();
        let mut levels = Vec::with_capacity(groups.moments[0].len());
        let expected = groups.moments[0]
            .iter()
            .map(|metric| {
                for (key, &g) in keys.iter_mut().zip(&members) {
                    key.count = metric[g].count as f64;
                    key.mean = metric[g].mean;
                    key.squares = metric[g].m2;
                }
                let expected = expected_means(&keys);
                let counted = expected.iter().zip(&keys).map(|(&e, k)| (e, k.count));
                levels.push(LevelMoments::of(counted).unwrap_or_default());
                expected
            })
            .collect();
        BaselineCurve {
            dims,
            keys: sorted_keys,
            expected,
            levels,
        }
    }

    /// How `metric`'s expected values spread over the bin's iterations (`LevelMoments`).
    pub fn levels(&self, metric: usize) -> LevelMoments {
        self.levels.get(metric).copied().unwrap_or_default()
    }

    /// The expected baseline value of `metric` at `key`, if `key` is one of the bin's.
    pub fn at(&self, key: &[u32], metric: usize) -> Option<f64> {
        if self.dims == 0 || key.len() != self.dims {
            return None;
        }
        let count = self.keys.len() / self.dims;
        let (mut lo, mut hi) = (0, count);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.keys[mid * self.dims..(mid + 1) * self.dims].cmp(key) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return self.expected.get(metric)?.get(mid).copied(),
            }
        }
        None
    }
}

/// One key of a bin on one metric: where it stands, its iterations, their mean and their sum
/// of squared deviations from it.
#[derive(Debug, Clone, PartialEq)]
struct KeyMean<'a> {
    coords: &'a [f64],
    count: f64,
    mean: f64,
    squares: f64,
}

/// Each key's expected value (see the module's comment), scaled to the keys' total.
fn expected_means(keys: &[KeyMean<'_>]) -> Vec<f64> {
    let own = || keys.iter().map(|k| k.mean).collect();
    let within_dof: f64 = keys.iter().map(|k| (k.count - 1.0).max(0.0)).sum();
    // A curve has at least its intercept: one key, or no noise to weigh it by, keeps its own
    // without a fit (the bins of one key are most of them at a large K).
    if within_dof <= 0.0 || keys.len() <= 1 {
        return own();
    }
    let Some(line) = fit_line(keys) else {
        return own();
    };
    if keys.len() <= line.parameters {
        return own();
    }
    let noise = keys.iter().map(|k| k.squares).sum::<f64>() / within_dof;
    let fitted: Vec<f64> = keys.iter().map(|k| line.at(k.coords)).collect();
    let total: f64 = keys.iter().map(|k| k.count).sum();
    let misfit: f64 = keys
        .iter()
        .zip(&fitted)
        .map(|(k, f)| k.count * (k.mean - f).powi(2))
        .sum();
    // E[misfit] = (G - p) s^2 + tau^2 N (1 - p / G), by the weighted fit's leverage.
    let g = keys.len() as f64;
    let p = line.parameters as f64;
    let spread = ((misfit - (g - p) * noise) / (total * (1.0 - p / g))).max(0.0);
    let mut expected = fitted;
    for (e, k) in expected.iter_mut().zip(keys) {
        let f = *e;
        let pull = if noise > 0.0 {
            spread / (spread + noise / k.count)
        } else {
            1.0
        };
        *e = f + pull * (k.mean - f);
    }
    let sum_expected: f64 = keys.iter().zip(&expected).map(|(k, e)| k.count * e).sum();
    let sum_own: f64 = keys.iter().map(|k| k.count * k.mean).sum();
    // A curve that dips to zero or below at the bin's edge cannot divide; keys' own means can.
    let positive = |v: f64| v > 0.0;
    if !positive(sum_expected) || !expected.iter().all(|&e| positive(e)) {
        return own();
    }
    let scale = sum_own / sum_expected;
    for e in &mut expected {
        *e *= scale;
    }
    expected
}

/// A fitted surface `intercept + sum b_j (feature_j - centre_j)` over the keys' features
/// (`push_features`), with no coefficient along a feature the keys do not vary in.
struct Line {
    /// The keys' weighted mean coordinates, subtracted before the features are taken.
    origin: Vec<f64>,
    centre: Vec<f64>,
    coefficients: Vec<f64>,
    /// Fitted parameters: the intercept and one per feature that varies.
    parameters: usize,
}

impl Line {
    fn at(&self, coords: &[f64]) -> f64 {
        let term = |j: usize, x: f64| self.coefficients[1 + j] * (x - self.centre[j]);
        // The features of the shifted coordinates (`push_features`), taken without a buffer: a
        // line is read at every key of every bin.
        let terms: f64 = match (coords, self.origin.as_slice()) {
            ([x], [o]) => {
                let x = x - o;
                [term(0, x), term(1, x * x)].into_iter().sum()
            }
            _ => coords
                .iter()
                .zip(&self.origin)
                .enumerate()
                .map(|(j, (x, o))| term(j, x - o))
                .sum(),
        };
        self.coefficients[0] + terms
    }
}

/// What the curve is fitted on: the key's coordinates and, for a one-dimensional key, its
/// square, pushed onto `features`. Costs bend with length (attention is quadratic in it), and
/// a straight line through a bent cost sits above it mid-bin, where the pick stands: dividing
/// by it there would lean every ratio low.
fn push_features(coords: impl Iterator<Item = f64>, features: &mut Vec<f64>) {
    let start = features.len();
    features.extend(coords);
    if let &[x] = &features[start..] {
        features.push(x * x);
    }
}

/// Weighted least squares of the keys' means on their features (weights: iterations), solved
/// on centred features; a feature along which the keys do not vary (or vary only with
/// others) gets no coefficient. `None` without any iteration.
fn fit_line(keys: &[KeyMean<'_>]) -> Option<Line> {
    let total: f64 = keys.iter().map(|k| k.count).sum();
    if keys.is_empty() || total <= 0.0 {
        return None;
    }
    // Centre the coordinates first so that the square of a length is not a huge number
    // nearly collinear with the length itself.
    let dims = keys[0].coords.len();
    let origin: Vec<f64> = (0..dims)
        .map(|d| keys.iter().map(|k| k.count * k.coords[d]).sum::<f64>() / total)
        .collect();
    // Each key's features, `n` a key, in one buffer.
    let mut shifted = Vec::with_capacity(keys.len() * (dims + 1));
    for k in keys {
        push_features(
            k.coords.iter().zip(&origin).map(|(x, o)| x - o),
            &mut shifted,
        );
    }
    let n = shifted.len() / keys.len();
    let shifted = shifted.chunks_exact(n);
    let centre: Vec<f64> = (0..n)
        .map(|j| {
            keys.iter()
                .zip(shifted.clone())
                .map(|(k, f)| k.count * f[j])
                .sum::<f64>()
                / total
        })
        .collect();
    let mean = keys.iter().map(|k| k.count * k.mean).sum::<f64>() / total;
    // Normal equations of the coefficients on centred features (the intercept is the mean),
    // `a` row-major.
    let mut a = vec![0.0; n * n];
    let mut b = vec![0.0; n];
    for (k, f) in keys.iter().zip(shifted) {
        for i in 0..n {
            let xi = f[i] - centre[i];
            b[i] += k.count * xi * (k.mean - mean);
            for j in 0..n {
                a[i * n + j] += k.count * xi * (f[j] - centre[j]);
            }
        }
    }
    let slopes = solve_dropping_flat(a, b);
    let parameters = 1 + slopes.iter().filter(|s| s.is_some()).count();
    let mut coefficients = vec![mean];
    coefficients.extend(slopes.into_iter().map(|s| s.unwrap_or(0.0)));
    Some(Line {
        origin,
        centre,
        coefficients,
        parameters,
    })
}

/// Solves `a x = b` (symmetric, positive semi-definite, `a` row-major) by Gaussian
/// elimination, leaving out (as `None`) each variable whose pivot is negligible next to its
/// own diagonal: a coordinate that does not vary, or varies only with one already taken.
fn solve_dropping_flat(mut a: Vec<f64>, mut b: Vec<f64>) -> Vec<Option<f64>> {
    let n = b.len();
    let diagonal: Vec<f64> = (0..n).map(|i| a[i * n + i]).collect();
    let mut kept = vec![false; n];
    let mut pivot_row = Vec::with_capacity(n);
    for i in 0..n {
        // Also false for a NaN pivot.
        let pivots = diagonal[i] > 0.0 && a[i * n + i] > 1e-9 * diagonal[i];
        if !pivots {
            continue;
        }
        kept[i] = true;
        pivot_row.clear();
        pivot_row.extend_from_slice(&a[i * n..(i + 1) * n]);
        for r in 0..n {
            if r != i && a[r * n + i] != 0.0 {
                let factor = a[r * n + i] / pivot_row[i];
                for (cell, p) in a[r * n..(r + 1) * n].iter_mut().zip(&pivot_row) {
                    *cell -= factor * p;
                }
                b[r] -= factor * b[i];
            }
        }
    }
    (0..n)
        .map(|i| kept[i].then(|| b[i] / a[i * n + i]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const XS: [f64; 6] = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0];

    /// The curve as first written, a buffer per key and feature: the oracle of the one above,
    /// which must give the same values, bit for bit.
    mod plain {
        use super::super::{BaselineCurve, KeyMean};
        use crate::groups::KeyGroups;

        pub(super) fn curve_of(groups: &KeyGroups, members: &[usize]) -> BaselineCurve {
            let dims = groups.dims;
            let mut members = members.to_vec();
            members.sort_by(|&a, &b| groups.key(a).cmp(groups.key(b)));
            let sorted_keys = members
                .iter()
                .flat_map(|&g| groups.key(g).to_vec())
                .collect();
            let coords: Vec<f64> = members
                .iter()
                .flat_map(|&g| groups.key(g).iter().map(|&k| f64::from(k)))
                .collect();
            let mut keys: Vec<KeyMean> = coords
                .chunks(dims.max(1))
                .map(|c| KeyMean {
                    coords: c,
                    count: 0.0,
                    mean: 0.0,
                    squares: 0.0,
                })
                .collect();
            let expected = groups.moments[0]
                .iter()
                .map(|metric| {
                    for (key, &g) in keys.iter_mut().zip(&members) {
                        key.count = metric[g].count as f64;
                        key.mean = metric[g].mean;
                        key.squares = metric[g].m2;
                    }
                    expected_means(&keys)
                })
                .collect();
            BaselineCurve {
                dims,
                keys: sorted_keys,
                expected,
                // Not the oracle's to check: the spread is read off the values compared.
                levels: Vec::new(),
            }
        }

        /// Each key's expected value (see the module's comment), scaled to the keys' total.
        pub(super) fn expected_means(keys: &[KeyMean<'_>]) -> Vec<f64> {
            let own: Vec<f64> = keys.iter().map(|k| k.mean).collect();
            let within_dof: f64 = keys.iter().map(|k| (k.count - 1.0).max(0.0)).sum();
            let Some(line) = fit_line(keys) else {
                return own;
            };
            if within_dof <= 0.0 || keys.len() <= line.parameters {
                return own;
            }
            let noise = keys.iter().map(|k| k.squares).sum::<f64>() / within_dof;
            let fitted: Vec<f64> = keys.iter().map(|k| line.at(k.coords)).collect();
            let total: f64 = keys.iter().map(|k| k.count).sum();
            let misfit: f64 = keys
                .iter()
                .zip(&fitted)
                .map(|(k, f)| k.count * (k.mean - f).powi(2))
                .sum();
            // E[misfit] = (G - p) s^2 + tau^2 N (1 - p / G), by the weighted fit's leverage.
            let g = keys.len() as f64;
            let p = line.parameters as f64;
            let spread = ((misfit - (g - p) * noise) / (total * (1.0 - p / g))).max(0.0);
            let expected: Vec<f64> = keys
                .iter()
                .zip(&fitted)
                .map(|(k, &f)| {
                    let pull = if noise > 0.0 {
                        spread / (spread + noise / k.count)
                    } else {
                        1.0
                    };
                    f + pull * (k.mean - f)
                })
                .collect();
            let sum_expected: f64 = keys.iter().zip(&expected).map(|(k, e)| k.count * e).sum();
            let sum_own: f64 = keys.iter().map(|k| k.count * k.mean).sum();
            // A curve that dips to zero or below at the bin's edge cannot divide; keys' own means can.
            let positive = |v: f64| v > 0.0;
            if !positive(sum_expected) || !expected.iter().all(|&e| positive(e)) {
                return own;
            }
            let scale = sum_own / sum_expected;
            expected.iter().map(|e| e * scale).collect()
        }

        /// A fitted surface `intercept + sum b_j (feature_j - centre_j)` over the keys' features
        /// (`features`), with no coefficient along a feature the keys do not vary in.
        struct Line {
            /// The keys' weighted mean coordinates, subtracted before the features are taken.
            origin: Vec<f64>,
            centre: Vec<f64>,
            coefficients: Vec<f64>,
            /// Fitted parameters: the intercept and one per feature that varies.
            parameters: usize,
        }

        impl Line {
            fn at(&self, coords: &[f64]) -> f64 {
                let shifted: Vec<f64> = coords
                    .iter()
                    .zip(&self.origin)
                    .map(|(x, o)| x - o)
                    .collect();
                self.coefficients[0]
                    + features(&shifted)
                        .iter()
                        .zip(&self.centre)
                        .zip(&self.coefficients[1..])
                        .map(|((x, c), b)| b * (x - c))
                        .sum::<f64>()
            }
        }

        /// What the curve is fitted on: the key's coordinates and, for a one-dimensional key, its
        /// square. Costs bend with length (attention is quadratic in it), and a straight line
        /// through a bent cost sits above it mid-bin, where the pick stands: dividing by it there
        /// would lean every ratio low.
        fn features(coords: &[f64]) -> Vec<f64> {
            let mut features = coords.to_vec();
            if let [x] = coords {
                features.push(x * x);
            }
            features
        }

        /// Weighted least squares of the keys' means on their features (weights: iterations), solved
        /// on centred features; a feature along which the keys do not vary (or vary only with
        /// others) gets no coefficient. `None` without any iteration.
        fn fit_line(keys: &[KeyMean<'_>]) -> Option<Line> {
            let total: f64 = keys.iter().map(|k| k.count).sum();
            if keys.is_empty() || total <= 0.0 {
                return None;
            }
            // Centre the coordinates first so that the square of a length is not a huge number
            // nearly collinear with the length itself.
            let dims = keys[0].coords.len();
            let origin: Vec<f64> = (0..dims)
                .map(|d| keys.iter().map(|k| k.count * k.coords[d]).sum::<f64>() / total)
                .collect();
            let shifted: Vec<Vec<f64>> = keys
                .iter()
                .map(|k| {
                    let c: Vec<f64> = k.coords.iter().zip(&origin).map(|(x, o)| x - o).collect();
                    features(&c)
                })
                .collect();
            let n = shifted[0].len();
            let centre: Vec<f64> = (0..n)
                .map(|j| {
                    keys.iter()
                        .zip(&shifted)
                        .map(|(k, f)| k.count * f[j])
                        .sum::<f64>()
                        / total
                })
                .collect();
            let mean = keys.iter().map(|k| k.count * k.mean).sum::<f64>() / total;
            // Normal equations of the coefficients on centred features (the intercept is the mean).
            let mut a = vec![vec![0.0; n]; n];
            let mut b = vec![0.0; n];
            for (k, f) in keys.iter().zip(&shifted) {
                for i in 0..n {
                    let xi = f[i] - centre[i];
                    b[i] += k.count * xi * (k.mean - mean);
                    for j in 0..n {
                        a[i][j] += k.count * xi * (f[j] - centre[j]);
                    }
                }
            }
            let slopes = solve_dropping_flat(a, b);
            let parameters = 1 + slopes.iter().filter(|s| s.is_some()).count();
            let mut coefficients = vec![mean];
            coefficients.extend(slopes.into_iter().map(|s| s.unwrap_or(0.0)));
            Some(Line {
                origin,
                centre,
                coefficients,
                parameters,
            })
        }

        /// Solves `a x = b` (symmetric, positive semi-definite) by Gaussian elimination, leaving out
        /// (as `None`) each variable whose pivot is negligible next to its own diagonal: a coordinate
        /// that does not vary, or varies only with one already taken.
        fn solve_dropping_flat(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Vec<Option<f64>> {
            let n = b.len();
            let diagonal: Vec<f64> = (0..n).map(|i| a[i][i]).collect();
            let mut kept = vec![false; n];
            for i in 0..n {
                // Also false for a NaN pivot.
                let pivots = diagonal[i] > 0.0 && a[i][i] > 1e-9 * diagonal[i];
                if !pivots {
                    continue;
                }
                kept[i] = true;
                let pivot_row = a[i].clone();
                for r in 0..n {
                    if r != i && a[r][i] != 0.0 {
                        let factor = a[r][i] / pivot_row[i];
                        for (cell, p) in a[r].iter_mut().zip(&pivot_row) {
                            *cell -= factor * p;
                        }
                        b[r] -= factor * b[i];
                    }
                }
            }
            (0..n).map(|i| kept[i].then(|| b[i] / a[i][i])).collect()
        }
    }

    /// splitmix64's finalizer: a fixed hash, so the bins are the same on every run.
    fn mix(x: u64) -> u64 {
        let h = x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        let h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        h ^ (h >> 31)
    }

    /// The curve without a buffer per key is the curve with them, bit for bit, on bins of one
    /// to nine keys in one and two dimensions: smooth, stepwise, flat along a dimension, seen
    /// once, noiseless, and dipping below zero (where the keys keep their own means).
    #[test]
    fn the_curve_is_the_plain_curves_bit_for_bit() {
        let mut fitted = 0;
        for case in 0..4_000u64 {
            let h = |i: u64| mix(case * 1_000 + i);
            let unit = |i: u64| (h(i) >> 11) as f64 / (1u64 << 53) as f64;
            let dims = 1 + (h(0) % 2) as usize;
            let count = 1 + (h(1) % 9) as usize;
            let coords: Vec<f64> = (0..count * dims)
                .map(|i| {
                    let flat = dims == 2 && i % 2 == 1 && h(2) % 3 == 0;
                    if flat {
                        7.0
                    } else {
                        (h(100 + i as u64) % 600) as f64
                    }
                })
                .collect();
            let keys: Vec<KeyMean> = coords
                .chunks(dims)
                .enumerate()
                .map(|(i, c)| {
                    let i = i as u64;
                    let seen = match h(3) % 4 {
                        0 => 1.0,
                        _ => (1 + h(200 + i) % 40) as f64,
                    };
                    let curve = 3.0 + 0.05 * c[0] + 1e-4 * c[0] * c[0];
                    let step = if h(4) % 3 == 0 && c[0] > 300.0 {
                        20.0
                    } else {
                        0.0
                    };
                    let shift = if h(5) % 5 == 0 { -30.0 } else { 0.0 };
                    let sd = if h(6) % 7 == 0 {
                        0.0
                    } else {
                        2.0 * unit(300 + i)
                    };
                    KeyMean {
                        coords: c,
                        count: seen,
                        mean: curve + step + shift + (unit(400 + i) - 0.5),
                        squares: sd * sd * (seen - 1.0),
                    }
                })
                .collect();
            let (fast, slow) = (expected_means(&keys), plain::expected_means(&keys));
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&fast),
                bits(&slow),
                "case {case}: {fast:?} against {slow:?}"
            );
            fitted += usize::from(keys.iter().zip(&fast).any(|(k, e)| k.mean != *e));
        }
        // Most bins are fitted, not left at their own means.
        assert!(fitted > 1_000, "{fitted} of 4,000 fitted");
    }

    /// A bin's curve is the plain one, bit for bit, for every run of consecutive keys of a
    /// log (one key alone, in a line of one or two columns, seen once or many times), its
    /// members given in either order.
    #[test]
    fn a_bins_curve_is_the_plain_ones_bit_for_bit() {
        let one: String = (0..600u64)
            .map(|i| {
                let key = 10 + mix(i) % 30;
                let time = 3.0 + 0.05 * key as f64 + (mix(i ^ 77) % 1000) as f64 / 4000.0;
                let other = 1.0 + (mix(i ^ 99) % 1000) as f64 / 100.0;
                format!("{key},{time},{other}\n")
            })
            .collect();
        let two: String = (0..400u64)
            .map(|i| {
                let (a, b) = (1 + mix(i) % 6, 1 + mix(i ^ 5) % 5);
                let time = 2.0 + (a * b) as f64 + (mix(i ^ 77) % 1000) as f64 / 1000.0;
                format!("{a},{b},{time}\n")
            })
            .collect();
        use crate::runlog::{load_bytes, InputFormat, LoadOptions};
        let options = LoadOptions {
            key: vec!["src_len".into(), "tgt_len".into()],
            ..LoadOptions::default()
        };
        let text = format!("src_len,tgt_len,time_ms\n{two}");
        let logs = [
            crate::runlog::test_log(&format!("seq_len,time_ms,mem_mb\n{one}")),
            load_bytes("t.csv", text.as_bytes(), InputFormat::Csv, &options).unwrap(),
        ];
        for log in &logs {
            let groups = KeyGroups::from_log(log);
            let count = groups.len();
            assert!(count >= 25, "{count} keys");
            for first in 0..count {
                for end in first + 1..=count {
                    let members: Vec<usize> = (first..end).collect();
                    let reversed: Vec<usize> = members.iter().rev().copied().collect();
                    let plain = plain::curve_of(&groups, &members);
                    for members in [&members, &reversed] {
                        let curve = BaselineCurve::of(&groups, members);
                        assert_eq!(curve.keys, plain.keys, "{members:?}");
                        let bits = |c: &BaselineCurve| {
                            c.expected
                                .iter()
                                .map(|m| m.iter().map(|x| x.to_bits()).collect::<Vec<_>>())
                                .collect::<Vec<_>>()
                        };
                        assert_eq!(bits(&curve), bits(&plain), "{members:?}");
                    }
                }
            }
        }
    }

    fn key(x: f64, count: f64, mean: f64, sd: f64) -> KeyMean<'static> {
        KeyMean {
            coords: std::slice::from_ref(&XS[x as usize]),
            count,
            mean,
            squares: sd * sd * (count - 1.0),
        }
    }

    #[test]
    fn keys_near_a_parabola_take_the_parabola() {
        // Means 10 + 2x + 0.5x^2 at x = 0..4, moved by 0.1 (1, -4, 6, -4, 1): a pattern
        // orthogonal to 1, x and x^2 over five equally weighted points, so the fitted curve is
        // the parabola itself. Its scatter about the fit, 3 x 0.01 x 70 = 2.1, is less than
        // the (5 - 3) x 2^2 = 8 that noise of sd 2 over 3 iterations per key explains: tau^2 = 0
        // and every key takes the parabola.
        let wiggle = [1.0, -4.0, 6.0, -4.0, 1.0];
        let parabola = |x: f64| 10.0 + 2.0 * x + 0.5 * x * x;
        let keys: Vec<KeyMean> = (0..5)
            .map(|x| key(x as f64, 3.0, parabola(x as f64) + 0.1 * wiggle[x], 2.0))
            .collect();
        for (x, e) in expected_means(&keys).iter().enumerate() {
            assert!((e - parabola(x as f64)).abs() < 1e-9, "{x}: {e}");
        }
        // The same scatter with almost no noise is the keys' own: they keep their means.
        let quiet: Vec<KeyMean> = (0..5)
            .map(|x| key(x as f64, 3.0, parabola(x as f64) + 0.1 * wiggle[x], 0.001))
            .collect();
        for (k, e) in quiet.iter().zip(expected_means(&quiet)) {
            assert!((e - k.mean).abs() < 1e-3, "{} -> {e}", k.mean);
        }
    }

    #[test]
    fn a_step_the_noise_cannot_explain_keeps_the_keys_own_means() {
        // A cost that jumps from 10 to 50 inside the bin, noise sd 0.1 over 20 iterations:
        // tau^2 dwarfs s^2 / n, so each key stays within 0.01 of its own mean.
        let keys: Vec<KeyMean> = (0..6)
            .map(|x| key(x as f64, 20.0, if x < 3 { 10.0 } else { 50.0 }, 0.1))
            .collect();
        for (k, e) in keys.iter().zip(expected_means(&keys)) {
            assert!((e - k.mean).abs() < 0.01, "{} -> {e}", k.mean);
        }
    }

    #[test]
    fn the_curve_sums_to_the_bins_total_and_stays_between_line_and_means() {
        let keys = [
            key(0.0, 2.0, 10.0, 3.0),
            key(1.0, 5.0, 13.0, 3.0),
            key(2.0, 1.0, 11.0, 0.0),
            key(4.0, 4.0, 17.0, 3.0),
            key(5.0, 7.0, 25.0, 3.0),
        ];
        let expected = expected_means(&keys);
        let total: f64 = keys.iter().map(|k| k.count * k.mean).sum();
        let curve: f64 = keys.iter().zip(&expected).map(|(k, e)| k.count * e).sum();
        assert!((total - curve).abs() < 1e-9 * total);
        assert!(expected.iter().all(|e| e.is_finite() && *e > 0.0));
    }

    #[test]
    fn keys_seen_once_or_too_few_keep_their_own_values() {
        let once = [
            key(0.0, 1.0, 10.0, 0.0),
            key(1.0, 1.0, 14.0, 0.0),
            key(2.0, 1.0, 11.0, 0.0),
        ];
        assert_eq!(expected_means(&once), vec![10.0, 14.0, 11.0]);
        let two = [key(0.0, 3.0, 10.0, 1.0), key(1.0, 3.0, 14.0, 1.0)];
        assert_eq!(expected_means(&two), vec![10.0, 14.0]);
    }

    #[test]
    fn a_flat_dimension_gets_no_slope() {
        // Two-dimensional keys whose second coordinate never varies: a line in the first.
        let coords: Vec<[f64; 2]> = (0..4).map(|x| [x as f64, 7.0]).collect();
        let keys: Vec<KeyMean> = coords
            .iter()
            .enumerate()
            .map(|(x, c)| KeyMean {
                coords: c,
                count: 4.0,
                mean: 5.0 + 2.0 * x as f64,
                squares: 3.0,
            })
            .collect();
        let line = fit_line(&keys).unwrap();
        assert_eq!(line.parameters, 2);
        assert!((line.at(&[3.0, 7.0]) - 11.0).abs() < 1e-9);
    }
}
