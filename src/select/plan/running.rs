//! A projection's figures kept as running sums over the plan search's steps: a fill or a trim
//! changes one bin's samples between projections, and each figure is a sum of its bins' terms
//! (`estimate::Figure`), so a projection costs a step per changed bin instead of a pass over
//! every bin and figure (at K = 500 with `--compare`, those passes were 60% of the search).

use crate::estimate::{variance_with_bias, BinSums, BinTerms, Figure, NewNoise, RatioSpread};
use crate::pick::{SeqPoint, ALTERNATES};
use crate::runlog::RunLog;
use crate::stats::{half_width_pct, half_width_with_bias_within, target_limit_pct};

use super::design::{curve_at, curve_scale, PlanDesign};

/// The sums over a bin's first rows on one metric (`RunningSums`).
#[derive(Debug, Clone, Copy, Default)]
struct Prefix {
    baseline: f64,
    new: f64,
    /// The paired log ratios `ln(y / x)` that exist (counted exactly in an `f64`), their sum
    /// and sum of squares.
    ratio_count: f64,
    ratio: f64,
    ratio_squares: f64,
    /// Over the bin (`PlanDesign::OverBin`): the baseline's curve at the rows' keys, so that
    /// the baseline reads as the plan's projection reads it (`PlanDesign::baseline_values`);
    /// 0 at the key.
    curve: f64,
}

/// Running sums over each bin's listed rows, on every metric: per bin and metric, entry `i`
/// sums the bin's first `i` rows. A plan asking more samples than the bin lists takes them
/// round again (as `draw_rows` repeats the list), so a sum over `s` rows is whole rounds plus
/// a first part. One buffer for every bin of a K: built once per search, and a bin's figures
/// read off two entries (a buffer per bin and sum was most of a search's allocations).
pub(super) struct RunningSums {
    /// Per bin, per metric, the bin's `listed + 1` entries.
    entries: Vec<Prefix>,
    /// Where each bin's entries start, then the buffer's end.
    starts: Vec<usize>,
    metrics: usize,
    compare: bool,
    over_bin: bool,
}

impl RunningSums {
    /// The sums over each bin's listed rows, as many as `caps[b]` allows and at least one: at
    /// the key `seqpoints[b]`'s own row, then its alternates' (the rows the plan takes first);
    /// over the bin its draws (`PlanDesign::seqpoints`), its own row where it has none.
    pub(super) fn over(
        log: &RunLog,
        seqpoints: &[SeqPoint],
        design: PlanDesign,
        caps: &[u64],
    ) -> RunningSums {
        let metrics = log.configs[0].metrics.len();
        let compare = log.configs.len() > 1;
        let over_bin = design == PlanDesign::OverBin;
        // About a bin's listed rows and one more entry per bin and metric (a list holds the
        // pick and its alternates, nine rows at most): reserved once, not grown.
        let mut entries = Vec::with_capacity(seqpoints.len() * metrics * (ALTERNATES + 2));
        let mut starts = Vec::with_capacity(seqpoints.len() + 1);
        let mut rows = Vec::new();
        for (b, sp) in seqpoints.iter().enumerate() {
            // Over the bin a plan of two or more profiles the draws alone (the SeqPoint's own
            // only where it is drawn); a bin with nothing to draw profiles its SeqPoint.
            let own_listed = !over_bin || sp.alternates.is_empty();
            let listed =
                (caps[b].max(1) as usize).min(usize::from(own_listed) + sp.alternates.len());
            // At the key the values come off the pick (`Picked::listed_values`); over the bin
            // the rows are needed for the curve at their keys, and draws are not the pick's.
            let known = |c: usize, metric: usize| {
                (!over_bin).then(|| sp.listed_values(c, metric)).flatten()
            };
            rows.clear();
            if known(0, 0).is_none() {
                rows.extend(
                    own_listed
                        .then_some(sp.row as u32)
                        .into_iter()
                        .chain(
                            sp.alternates
                                .iter()
                                .filter_map(|&it| log.iterations.row_of(it))
                                .map(|r| r as u32),
                        )
                        .take(listed),
                );
            }
            starts.push(entries.len());
            for metric in 0..metrics {
                // Each configuration's values of this metric at the listed rows.
                let (baseline, new) = (
                    &log.configs[0].metrics[metric].values,
                    &log.configs[compare as usize].metrics[metric].values,
                );
                let (known_x, known_y) = (known(0, metric), known(compare as usize, metric));
                let mut last = Prefix::default();
                entries.push(last);
                let count = if known_x.is_some() {
                    listed
                } else {
                    rows.len()
                };
                for i in 0..count {
                    let x = known_x.map_or_else(|| baseline[rows[i] as usize], |v| v[i]);
                    let curve = if over_bin {
                        last.curve + curve_at(log, sp, rows[i], metric)
                    } else {
                        0.0
                    };
                    let y = if compare {
                        known_y.map_or_else(|| new[rows[i] as usize], |v| v[i])
                    } else {
                        0.0
                    };
                    let ratio = (compare && x > 0.0 && y > 0.0).then(|| (y / x).ln());
                    let r = ratio.unwrap_or(0.0);
                    last = Prefix {
                        baseline: last.baseline + x,
                        new: last.new + y,
                        ratio_count: last.ratio_count + if ratio.is_some() { 1.0 } else { 0.0 },
                        ratio: last.ratio + r,
                        ratio_squares: last.ratio_squares + r * r,
                        curve,
                    };
                    entries.push(last);
                }
            }
        }
        starts.push(entries.len());
        RunningSums {
            entries,
            starts,
            metrics,
            compare,
            over_bin,
        }
    }

    /// Bin `b` (`sp`) on `metric` as the interval formulas read it with `samples` rows
    /// profiled.
    pub(super) fn bin(&self, b: usize, sp: &SeqPoint, metric: usize, samples: u64) -> BinSums {
        let per_metric = (self.starts[b + 1] - self.starts[b]) / self.metrics;
        let start = self.starts[b] + metric * per_metric;
        let entries = &self.entries[start..start + per_metric];
        let listed = per_metric - 1;
        let s = samples.max(1) as usize;
        let (rounds, part) = ((s / listed) as f64, s % listed);
        let (whole, part) = (&entries[listed], &entries[part]);
        // The sum of a field over the first `s` rows, the list taken round again as needed.
        let first = |field: fn(&Prefix) -> f64| rounds * field(whole) + field(part);
        let ratio_count = first(|p| p.ratio_count) as usize;
        let (sum, squares) = (first(|p| p.ratio), first(|p| p.ratio_squares));
        // The baseline's mean over the first `s` rows, divided by the curve's there over the
        // bin (`PlanDesign::baseline_values`).
        let plain = first(|p| p.baseline) / s as f64;
        let x = if self.over_bin {
            let bin_mean = sp.bin.moments[0][metric].mean;
            plain * curve_scale(bin_mean, first(|p| p.curve) / s as f64)
        } else {
            plain
        };
        BinSums {
            weight: sp.weight as f64,
            x,
            y: if self.compare {
                first(|p| p.new) / s as f64
            } else {
                0.0
            },
            new_count: if self.compare { s } else { 0 },
            ratios: RatioSpread {
                count: ratio_count,
                squares: if ratio_count > 0 {
                    (squares - sum * sum / ratio_count as f64).max(0.0)
                } else {
                    0.0
                },
            },
            distinct: samples,
            key: sp.key_noise[metric],
            stratum: sp.stratum.unwrap_or(0),
        }
    }
}

/// One figure of one metric: its bins' terms at the search's current samples, and their sums.
pub(super) struct RunningFigure {
    figure: Figure,
    /// One profiled iteration's squared noise per bin: the same at any samples (`running`).
    cv2: Vec<f64>,
    terms: Vec<BinTerms>,
    sums: BinTerms,
    /// Bins changed since the sums were last added up whole: past the bins' count they are
    /// added up again, so that the rounding of the additions and subtractions stays that of a
    /// few passes, however long the search.
    changes: usize,
}

impl RunningFigure {
    fn new(figure: Figure, bins: &[BinSums], cv2: Vec<f64>) -> RunningFigure {
        let terms = bins
            .iter()
            .zip(&cv2)
            .map(|(b, &c)| figure.terms(b, c))
            .collect();
        let mut running = RunningFigure {
            figure,
            cv2,
            terms,
            sums: BinTerms::default(),
            changes: 0,
        };
        running.add_up();
        running
    }

    fn add_up(&mut self) {
        self.sums = BinTerms::default();
        for &t in &self.terms {
            self.sums += t;
        }
        self.changes = 0;
    }

    /// Bin `b` is now `bin`.
    pub(super) fn set(&mut self, b: usize, bin: &BinSums) {
        let terms = self.figure.terms(bin, self.cv2[b]);
        self.sums -= self.terms[b];
        self.sums += terms;
        self.terms[b] = terms;
        self.changes += 1;
        if self.changes > self.terms.len() {
            self.add_up();
        }
    }

    /// The figure's value, noise variance and bias; `None` where it cannot be bounded.
    fn read(&self) -> Option<(f64, f64, f64)> {
        // The noise is the same at any samples, never silent (`running`).
        if self.figure.unbounded(&self.sums, false) {
            return None;
        }
        let combined = self.figure.combine(&self.sums);
        let spread = (combined.noise_scale * (self.sums.noise + self.sums.rest)).max(0.0);
        Some((combined.value, spread, combined.bias))
    }

    /// The figure's 95% half-width in percent, as its `VarianceParts` give it.
    pub(super) fn half_width_pct(&self) -> f64 {
        self.read().map_or(f64::INFINITY, |(value, spread, bias)| {
            half_width_pct(value, variance_with_bias(spread, bias))
        })
    }

    /// Whether `half_width_pct` meets `target_pct` (`stats::meets_target`), without solving
    /// for the half-width.
    pub(super) fn meets(&self, target_pct: f64) -> bool {
        let Some((value, spread, bias)) = self.read() else {
            return false;
        };
        if spread.is_infinite() {
            return false;
        }
        let limit = target_limit_pct(target_pct) / 100.0 * value.abs();
        value == 0.0 || half_width_with_bias_within(bias, spread.sqrt(), limit)
    }
}

/// Every figure of `bins` (`[metric][bin]`), running: per metric the baseline's total and,
/// with a compare configuration, its total and the speedup, in `ListedRows::figures`' order.
/// `None` where a figure's noise rests on the picks' values (a new configuration whose log
/// shows no noise at any key: `NewNoise::logged`), which a step per bin cannot follow.
pub(super) fn running(bins: &[Vec<BinSums>], compare: bool) -> Option<Vec<Vec<RunningFigure>>> {
    bins.iter()
        .map(|bins| {
            let mut figures = vec![RunningFigure::new(
                Figure::Baseline,
                bins,
                NewNoise::baseline(bins).cv2,
            )];
            if compare {
                let noise = NewNoise::logged(bins)?;
                figures.push(RunningFigure::new(Figure::New, bins, noise.cv2.clone()));
                figures.push(RunningFigure::new(Figure::Speedup, bins, noise.cv2));
            }
            Some(figures)
        })
        .collect()
}
