//! A ratio that changes with the cost within a bin: the new configuration's time over the
//! baseline's is seldom flat in the length (a kernel that gains most on long sequences, a
//! fixed overhead that weighs most on short ones), and a bin of a few SeqPoints can span a
//! factor of 4 in cost.
//!
//! The ratio estimate (`project::ratio`) divides each bin's measured new values by their
//! auxiliaries and scales by the bin's whole baseline: exact where the ratio is flat within the
//! bin. Where it drifts, the bin's iterations measured (the SeqPoint and its alternates, near
//! the bin's mean) give the ratio there, not the bin's, whose dearer iterations weigh more. On
//! the redraw example's speedup-by-length case (speedup 1.1x to 2x over lengths 20-600,
//! 7-8 bins), that position error was 55-62% of the squared error of the cheapest bins, and no
//! residual shows it: the pairs sit at one cost.
//!
//! The run shows the drift across its bins: `CostLine`, the line of the bins' `ln r` on their
//! baseline means' `ln X` (a parabola from five bins measured twice), has slope `g` at a bin's
//! mean and bend `c` (`r` goes as `X^g` there, bending as `c ln^2`). Taken within each bin too,
//! the new value at an iteration of expected baseline `z` goes as `z v^(g + c ln v)`: with `v
//! = z / X`, the auxiliary `a e^(g ln v + c ln^2 v)` in place of `a`, and the bin's mean of it
//! over all its iterations is `X E[v e^(g ln v + c ln^2 v)]`
//! (`stats::LevelMoments::curved_mean`, from the spread the SeqPoints file records). A flat
//! ratio fits `g` and `c` near 0 and changes nothing; the baseline's own noise in an auxiliary
//! is kept (`a`, the blend's).

use crate::project::paired_bin::PairedBin;

/// The bins' line of `ln r` on `ln X`, weighted least squares over the bins with a positive
/// ratio and baseline mean, each weighted by its baseline total `w X`: a parabola in `ln X`
/// from `CURVED_FROM` such bins measured at two or more iterations, a straight line from
/// three bins, flat with fewer or one `X`.
///
/// Why a parabola: a speedup that changes linearly with the length is no power of the cost.
/// On the redraw example's speedup-by-length case (1.1x to 2x over lengths 20-600, cost `10 +
/// L^1.5 / 10`) the local slope of `ln r` on `ln X` runs from -0.06 over the shortest lengths
/// to -0.26 over the longest, and one straight line followed within every bin misplaced the
/// ratio of the bins at either end: with the new configuration measured without noise, the
/// two-stage flow still erred by up to 0.69% (p95) over fresh drawings of the run's lengths,
/// and its intervals held 89% at 1.46x the statistical limit's iterations. Followed along the
/// parabola through each bin's mean: 0.32% without noise, 92-92.5% held at 1.29x; on one
/// drawing of the lengths 93-93.5% at 1.25x (94-95% at 1.41x before). The other cases, timed
/// and lengths-only, moved by less than their 200-run noise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostLine {
    centre_x: f64,
    intercept: f64,
    /// The slope of `ln r` on `ln X` at the bins' weighted centre.
    pub slope: f64,
    curvature: f64,
}

/// Bins from which the line may curve: three coefficients and two degrees of freedom left.
/// They must be measured at two or more iterations each. At one pair per bin the noise is read
/// across the bins (`ratio::between_bins`), and there the bend cost more than it gave: on the
/// redraw example's lengths-only case with heavy tails (5% of iterations 1.5x slower), K =
/// 8-16, the new total's intervals held 70.5-80% bent and 91.5-96.5% straight. A test of the
/// bend against the bins' scatter did not help (the ratio to a linear proxy, `10/L +
/// sqrt(L)/10`, does bend); why the straight line's misfit held those intervals up is not
/// pinned down.
const CURVED_FROM: usize = 5;

impl CostLine {
    /// `None` without a bin to fit.
    pub fn of(bins: &[PairedBin]) -> Option<CostLine> {
        let points: Vec<(f64, f64, f64)> = bins
            .iter()
            .filter_map(|b| {
                let (r, base) = (b.ratio(), b.weight * b.baseline_mean);
                (r > 0.0 && b.baseline_mean > 0.0 && base > 0.0)
                    .then(|| (b.baseline_mean.ln(), r.ln(), base))
            })
            .collect();
        if points.is_empty() {
            return None;
        }
        let weights: f64 = points.iter().map(|p| p.2).sum();
        let mean = |f: &dyn Fn(&(f64, f64, f64)) -> f64| {
            points.iter().map(|p| p.2 * f(p)).sum::<f64>() / weights
        };
        let centre_x = mean(&|p| p.0);
        let flat = CostLine {
            centre_x,
            intercept: mean(&|p| p.1),
            slope: 0.0,
            curvature: 0.0,
        };
        let centred: Vec<(f64, f64, f64)> = points
            .iter()
            .map(|&(x, y, w)| (x - centre_x, y, w))
            .collect();
        let measured_twice = bins.iter().filter(|b| b.pairs.len() >= 2).count();
        let fitted = if points.len() >= CURVED_FROM && measured_twice >= CURVED_FROM {
            least_squares::<3>(&centred).or_else(|| least_squares::<2>(&centred))
        } else if points.len() >= 3 {
            least_squares::<2>(&centred)
        } else {
            None
        };
        Some(match fitted {
            Some(c) => CostLine {
                centre_x,
                intercept: c[0],
                slope: c[1],
                curvature: c.get(2).copied().unwrap_or(0.0),
            },
            None => flat,
        })
    }

    /// The ratio the line gives at baseline mean `x`.
    pub fn ratio_at(&self, x: f64) -> f64 {
        let u = x.ln() - self.centre_x;
        (self.intercept + self.slope * u + self.curvature * u * u).exp()
    }

    /// The slope of `ln r` on `ln X` the line has at baseline mean `x`.
    pub fn slope_at(&self, x: f64) -> f64 {
        self.slope + 2.0 * self.curvature * (x.ln() - self.centre_x)
    }
}

/// The weighted least-squares polynomial of degree `N - 1` through `(u, y, weight)`: its
/// coefficients, lowest first; `None` where the points do not determine them (fewer distinct
/// `u` than coefficients). Solved by Gaussian elimination with partial pivoting on the normal
/// equations, which for `u` centred on the points' mean are well conditioned at these sizes.
fn least_squares<const N: usize>(points: &[(f64, f64, f64)]) -> Option<Vec<f64>> {
    let mut a = [[0.0f64; N]; N];
    let mut b = [0.0f64; N];
    for &(u, y, w) in points {
        let powers: [f64; N] = std::array::from_fn(|i| u.powi(i as i32));
        for i in 0..N {
            for j in 0..N {
                a[i][j] += w * powers[i] * powers[j];
            }
            b[i] += w * powers[i] * y;
        }
    }
    let scale = a[0][0].abs().max(f64::MIN_POSITIVE);
    for col in 0..N {
        let pivot = (col..N).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        // A pivot this small is a column the others already span: no distinct fit.
        if a[pivot][col].abs() <= 1e-12 * scale {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        let (pivot_row, pivot_b) = (a[col], b[col]);
        for (row, rhs) in a.iter_mut().zip(b.iter_mut()).skip(col + 1) {
            let factor = row[col] / pivot_row[col];
            for (entry, above) in row.iter_mut().zip(pivot_row).skip(col) {
                *entry -= factor * above;
            }
            *rhs -= factor * pivot_b;
        }
    }
    let mut x = vec![0.0; N];
    for row in (0..N).rev() {
        let rest: f64 = (row + 1..N).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - rest) / a[row][row];
    }
    x.iter().all(|c| c.is_finite()).then_some(x)
}

/// The steepest drift (and bend) followed, either way: `LevelMoments::curved_mean`'s series
/// holds to 1e-4 at `|g ln v| <= 0.5`, a bin spanning a factor of 1.6 either side of its mean.
const STEEPEST: f64 = 1.0;

/// The bins with their auxiliaries and baseline means following the run's `CostLine` within
/// each bin (see the module's comment), and the line's slope at the bins' centre (0, bins
/// unchanged, where no bin records its spread or the line is flat).
pub fn with_cost_trend(bins: Vec<PairedBin>) -> (Vec<PairedBin>, f64) {
    let recorded = bins
        .iter()
        .any(|b| b.levels.len() == b.pairs.len() && b.spread.0.iter().any(|&m| m != 0.0));
    let line = match CostLine::of(&bins) {
        Some(line) if recorded && (line.slope != 0.0 || line.curvature != 0.0) => line,
        _ => return (bins, 0.0),
    };
    let bins = bins
        .into_iter()
        .map(|mut b| {
            // Each bin follows the line as it runs through its own baseline mean: its slope
            // there and its bend, `v^(g + c ln v)` about the mean.
            let slope = if b.baseline_mean > 0.0 {
                line.slope_at(b.baseline_mean).clamp(-STEEPEST, STEEPEST)
            } else {
                0.0
            };
            let bend = line.curvature.clamp(-STEEPEST, STEEPEST);
            // A spread whose series gives no positive mean (a hand-edited file: `project`
            // checks the moments' signs, not their size) keeps the bin flat.
            let mean = b.spread.curved_mean(slope, bend);
            if b.levels.len() == b.pairs.len() && mean.is_finite() && mean > 0.0 {
                for (pair, &v) in b.pairs.iter_mut().zip(&b.levels) {
                    if v > 0.0 {
                        let ln = v.ln();
                        pair.0 *= (slope * ln + bend * ln * ln).exp();
                    }
                }
                b.baseline_mean *= mean;
            }
            b
        })
        .collect();
    (bins, line.slope.clamp(-STEEPEST, STEEPEST))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::LevelMoments;

    /// A bin of `population` (expected baseline value, iterations) whose new values are `c
    /// z^(1 + g)` exactly, measured at the iterations of value `measured`: the bin, and its
    /// actual new total.
    fn bin(population: &[(f64, f64)], measured: &[f64], c: f64, g: f64) -> (PairedBin, f64) {
        let count: f64 = population.iter().map(|p| p.1).sum();
        let mean = population.iter().map(|p| p.0 * p.1).sum::<f64>() / count;
        let new = |z: f64| c * z.powf(1.0 + g);
        let bin = PairedBin {
            weight: count,
            population: count,
            baseline_mean: mean,
            pairs: measured.iter().map(|&z| (z, new(z))).collect(),
            levels: measured.iter().map(|&z| z / mean).collect(),
            spread: LevelMoments::of(population.iter().copied()).unwrap(),
            ..PairedBin::default()
        };
        let actual = population.iter().map(|&(z, n)| n * new(z)).sum();
        (bin, actual)
    }

    /// Four bins from cost 10 to 400, each spanning a factor of 3-4, measured at the value
    /// nearest each bin's mean (as the SeqPoint and its alternates are).
    fn run(g: f64) -> Vec<(PairedBin, f64)> {
        let populations: [&[(f64, f64)]; 4] = [
            &[(10.0, 40.0), (18.0, 30.0), (30.0, 20.0), (40.0, 10.0)],
            &[(40.0, 30.0), (60.0, 30.0), (90.0, 25.0), (130.0, 15.0)],
            &[(130.0, 20.0), (180.0, 30.0), (250.0, 20.0)],
            &[(250.0, 10.0), (320.0, 10.0), (400.0, 5.0)],
        ];
        populations
            .iter()
            .map(|population| {
                let count: f64 = population.iter().map(|p| p.1).sum();
                let mean = population.iter().map(|p| p.0 * p.1).sum::<f64>() / count;
                bin(population, &[mean, mean], 0.5, g)
            })
            .collect()
    }

    #[test]
    fn a_ratio_that_goes_as_a_power_of_the_cost_is_followed_within_each_bin() {
        for g in [-0.3, -0.1, 0.2] {
            let (bins, actual): (Vec<PairedBin>, Vec<f64>) = run(g).into_iter().unzip();
            // Measured at each bin's mean, the flat ratio takes the ratio there for the bin's,
            // whose dearer iterations weigh more: off by over 0.5% in some bin.
            let flat_worst = bins
                .iter()
                .zip(&actual)
                .map(|(b, a)| (b.total() / a - 1.0).abs())
                .fold(0.0, f64::max);
            assert!(flat_worst > 0.005, "g {g}: flat off by {flat_worst}");
            let (followed, slope) = with_cost_trend(bins);
            // Measured at the means, the bins' ratios are c X^g: the line's slope is g.
            assert!((slope - g).abs() < 1e-12, "{slope} against {g}");
            for (b, a) in followed.iter().zip(&actual) {
                let off = (b.total() / a - 1.0).abs();
                assert!(off < 1e-4, "g {g}: off by {off}");
            }
        }
    }

    #[test]
    fn a_flat_ratio_or_a_file_without_the_spread_leaves_the_bins_as_they_are() {
        let (bins, _): (Vec<PairedBin>, Vec<f64>) = run(0.0).into_iter().unzip();
        let (same, slope) = with_cost_trend(bins.clone());
        assert!(slope.abs() < 1e-12, "{slope}");
        for (a, b) in same.iter().zip(&bins) {
            assert!((a.total() / b.total() - 1.0).abs() < 1e-12);
        }
        // The same drift, but no bin records where its pairs stand: nothing to follow.
        let (unrecorded, _): (Vec<PairedBin>, Vec<f64>) = run(-0.3)
            .into_iter()
            .map(|(b, a)| {
                (
                    PairedBin {
                        levels: Vec::new(),
                        spread: LevelMoments::default(),
                        ..b
                    },
                    a,
                )
            })
            .unzip();
        let (kept, slope) = with_cost_trend(unrecorded.clone());
        assert_eq!((kept, slope), (unrecorded, 0.0));
    }

    #[test]
    fn a_spread_with_no_positive_mean_keeps_its_bin_flat() {
        // A first moment of 10 at a slope of -0.3: 1 - 3 < 0, no mean of a power.
        let (mut bins, _): (Vec<PairedBin>, Vec<f64>) = run(-0.3).into_iter().unzip();
        bins[0].spread = LevelMoments([10.0, 0.0, 0.0, 0.0]);
        let before = bins[0].clone();
        let (followed, slope) = with_cost_trend(bins);
        assert!(slope < 0.0);
        assert_eq!(followed[0], before);
        assert!(followed.iter().all(|b| b.total() > 0.0));
    }

    /// Bins whose ratios lie exactly on `ln r = a + b u + c u^2` (`u` = `ln X` less the bins'
    /// weighted centre) give back `a`, `b` and `c`, and each bin's slope `b + 2 c u`; four
    /// such bins fit a straight line (the parabola needs five, each measured twice), as do five
    /// measured once each, and five at one `X` are flat.
    #[test]
    fn the_line_bends_from_five_bins() {
        let (a, b, c) = (-0.4, -0.15, -0.05);
        let at = |xs: &[f64]| -> Vec<PairedBin> {
            // Equal baseline totals `w X`, so the weighted centre is the plain mean of ln X.
            let centre = xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64;
            xs.iter()
                .map(|&x| {
                    let u = x.ln() - centre;
                    let r = (a + b * u + c * u * u).exp();
                    PairedBin {
                        weight: 1000.0 / x,
                        population: 1000.0 / x,
                        baseline_mean: x,
                        pairs: vec![(x, r * x); 2],
                        ..PairedBin::default()
                    }
                })
                .collect()
        };
        let xs = [20.0, 60.0, 150.0, 400.0, 1200.0];
        let line = CostLine::of(&at(&xs)).unwrap();
        let centre = xs.iter().map(|x: &f64| x.ln()).sum::<f64>() / 5.0;
        assert!((line.slope - b).abs() < 1e-9, "{line:?}");
        assert!((line.curvature - c).abs() < 1e-9, "{line:?}");
        for x in xs {
            let u = x.ln() - centre;
            assert!((line.ratio_at(x).ln() - (a + b * u + c * u * u)).abs() < 1e-9);
            assert!((line.slope_at(x) - (b + 2.0 * c * u)).abs() < 1e-9);
        }
        let straight = CostLine::of(&at(&xs[..4])).unwrap();
        assert_eq!(straight.curvature, 0.0);
        assert!(straight.slope < 0.0);
        // The same bins measured at one iteration each: a straight line.
        let once: Vec<PairedBin> = at(&xs)
            .into_iter()
            .map(|mut b| {
                b.pairs.truncate(1);
                b
            })
            .collect();
        assert_eq!(CostLine::of(&once).unwrap().curvature, 0.0);
        let one_x = CostLine::of(&at(&[100.0; 5])).unwrap();
        assert_eq!((one_x.slope, one_x.curvature), (0.0, 0.0));
        assert!((one_x.ratio_at(100.0).ln() - a).abs() < 1e-9);
    }

    /// Six bins whose new values go as `z e^(-0.4 - 0.02 ln^2 z)` (a ratio bending over `ln
    /// z`), each measured twice at its mean: each bin followed along the line's slope and bend
    /// at its mean gives its actual total, where one straight line's slope in every bin misses.
    #[test]
    fn a_ratio_that_bends_with_the_cost_is_followed_at_each_bins_own_slope() {
        let ratio = |z: f64| (-0.4 - 0.02 * z.ln().powi(2)).exp();
        let populations: [&[(f64, f64)]; 6] = [
            &[(10.0, 40.0), (14.0, 30.0), (20.0, 20.0)],
            &[(20.0, 30.0), (30.0, 30.0), (45.0, 25.0)],
            &[(45.0, 20.0), (70.0, 30.0), (100.0, 20.0)],
            &[(100.0, 10.0), (150.0, 10.0), (220.0, 5.0)],
            &[(220.0, 10.0), (330.0, 10.0), (500.0, 5.0)],
            &[(500.0, 10.0), (750.0, 10.0), (1100.0, 5.0)],
        ];
        let (bins, actual): (Vec<PairedBin>, Vec<f64>) = populations
            .iter()
            .map(|population| {
                let count: f64 = population.iter().map(|p| p.1).sum();
                let mean = population.iter().map(|p| p.0 * p.1).sum::<f64>() / count;
                let bin = PairedBin {
                    weight: count,
                    population: count,
                    baseline_mean: mean,
                    pairs: vec![(mean, ratio(mean) * mean); 2],
                    levels: vec![1.0; 2],
                    spread: LevelMoments::of(population.iter().copied()).unwrap(),
                    ..PairedBin::default()
                };
                let actual: f64 = population.iter().map(|&(z, n)| n * ratio(z) * z).sum();
                (bin, actual)
            })
            .unzip();
        let worst = |followed: &[PairedBin]| {
            followed
                .iter()
                .zip(&actual)
                .map(|(b, a)| (b.total() / a - 1.0).abs())
                .fold(0.0, f64::max)
        };
        let (followed, _) = with_cost_trend(bins.clone());
        // One straight line's slope for every bin, as before the line could bend.
        let points: Vec<(f64, f64, f64)> = bins
            .iter()
            .map(|b| {
                (
                    b.baseline_mean.ln(),
                    b.ratio().ln(),
                    b.weight * b.baseline_mean,
                )
            })
            .collect();
        let centre =
            points.iter().map(|p| p.0 * p.2).sum::<f64>() / points.iter().map(|p| p.2).sum::<f64>();
        let centred: Vec<(f64, f64, f64)> =
            points.iter().map(|&(x, y, w)| (x - centre, y, w)).collect();
        let slope = least_squares::<2>(&centred).unwrap()[1];
        let straight: Vec<PairedBin> = bins
            .iter()
            .map(|b| {
                let mut b = b.clone();
                b.baseline_mean *= b.spread.power_mean(slope);
                b
            })
            .collect();
        let total_error = |bins: &[PairedBin]| {
            bins.iter().map(PairedBin::total).sum::<f64>() / actual.iter().sum::<f64>() - 1.0
        };
        // Followed along the bend, each bin's total is its actual one to the series' cut.
        assert!(worst(&followed) < 1e-6, "off by {}", worst(&followed));
        assert!(total_error(&followed).abs() < 1e-6);
        // One straight line's slope in every bin misses the run by 0.20% and a bin by 0.33%.
        assert!(
            total_error(&straight) > 1.5e-3,
            "{}",
            total_error(&straight)
        );
        assert!(worst(&straight) > 3e-3, "{}", worst(&straight));
    }

    #[test]
    fn the_line_is_flat_on_fewer_than_three_bins() {
        let (bins, _): (Vec<PairedBin>, Vec<f64>) = run(-0.3).into_iter().unzip();
        let line = CostLine::of(&bins[..2]).unwrap();
        assert_eq!(line.slope, 0.0);
        assert!(CostLine::of(&[]).is_none());
    }
}
