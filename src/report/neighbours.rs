//! `neighbours`: windows of consecutive iterations that ran slower than the same keys elsewhere
//! in the run, as when another process shared the machine for a while. Such a window inflates
//! the baseline's total, and so every speedup projected against it, while SeqPoints picked
//! outside it do not show it.
//!
//! The test, per configuration and metric: each judged iteration's residual against its key's
//! median, `q_i = x_i / med_g(i) - 1`, in iteration order, less its least-squares line over the
//! run (a steady drift over training is the `drift` check's business, not a window). The window
//! is the stretch with the largest rise of the residuals' running sum, `max_{a<b} sum_{a<=i<b}
//! q_i`. Its p-value comes from the same statistic over `PERMUTATIONS` seeded reorderings of the
//! residuals, so it holds for any noise distribution when the residuals are exchangeable (no
//! window): a run without a window alarms with probability at most `false_alarm` (split over the
//! configurations and metrics). A window must also span `MIN_WINDOW` judged iterations (one
//! slow iteration is an outlier), carry `neighbour_excess_min` of the total (a significant
//! window too small to bias a projection is not worth re-measuring) and run
//! `neighbour_slowdown_min` slower than the same keys elsewhere (a gentler, broad rise is drift
//! rather than another process). Up to `MAX_WINDOWS` are found, each after removing the ones
//! before.

use crate::options::{Surface, EXCLUDE};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::robust::JUDGED_MIN;
use super::{pct, Check, Context, Detail, Finding, Series};

/// Fewest reorderings behind a p-value (more when the significance asked for is finer).
pub const PERMUTATIONS: usize = 199;
/// Fewest judged iterations in a window.
pub const MIN_WINDOW: usize = 10;
/// Windows looked for per configuration and metric.
pub const MAX_WINDOWS: usize = 3;

/// A window found in one series, as rows of the log (inclusive) and its p-value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Detected {
    pub first_row: usize,
    pub last_row: usize,
    pub p_value: f64,
}

/// The largest rise of the running sum of `z`: `(a, b, rise)` with the window `a..b`.
fn largest_rise(z: &[f64]) -> (usize, usize, f64) {
    let (mut sum, mut low, mut low_at) = (0.0, 0.0, 0usize);
    let mut best = (0, 0, 0.0);
    for (i, &v) in z.iter().enumerate() {
        sum += v;
        if sum - low > best.2 {
            best = (low_at, i + 1, sum - low);
        }
        if sum < low {
            low = sum;
            low_at = i + 1;
        }
    }
    best
}

/// `values` less their least-squares line over `positions`.
fn detrended(positions: &[f64], values: &[f64]) -> Vec<f64> {
    let n = values.len() as f64;
    let mean_x = positions.iter().sum::<f64>() / n;
    let mean_y = values.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (&x, &y) in positions.iter().zip(values) {
        sxy += (x - mean_x) * (y - mean_y);
        sxx += (x - mean_x).powi(2);
    }
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    positions
        .iter()
        .zip(values)
        .map(|(&x, &y)| y - mean_y - slope * (x - mean_x))
        .collect()
}

/// The Monte Carlo p-value of `rise` over seeded reorderings of `z`, `(1 + beaten) / (B + 1)`
/// with `B + 1` a multiple of `1 / alpha` (at least `PERMUTATIONS`), so that the test is exact
/// at `alpha`. It stops once the window can no longer be significant (then the value returned
/// is above `alpha` but not the full p-value).
fn p_value(z: &[f64], rise: f64, seed: u64, alpha: f64) -> f64 {
    let per_alarm = (1.0 / alpha).ceil().max(1.0) as usize;
    let draws = (PERMUTATIONS + 1).div_ceil(per_alarm) * per_alarm - 1;
    // Beaten more often than this and the p-value is above alpha.
    let allowed = ((alpha * (draws + 1) as f64).round() as usize).saturating_sub(1);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut shuffled = z.to_vec();
    let mut beaten = 0usize;
    for _ in 0..draws {
        shuffled.shuffle(&mut rng);
        if largest_rise(&shuffled).2 >= rise {
            beaten += 1;
            if beaten > allowed {
                break;
            }
        }
    }
    (1 + beaten) as f64 / (draws + 1) as f64
}

/// At most this many residuals enter the test: longer runs are summed in blocks of
/// consecutive iterations (blocks of exchangeable residuals are exchangeable), so the cost
/// stays bounded; window edges are then found to a block.
const MAX_POINTS: usize = 20_000;

/// What to do with a significant window (rows, inclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowVerdict {
    /// Report it and look for another.
    Report,
    /// Not a window (a warm-up): leave its rows out and look for another.
    Skip,
    /// Too small to matter: stop looking.
    Stop,
}

/// Slow windows of one series at significance `alpha`, looked for in rows `start..`. `judge`
/// decides what a significant window is (see `WindowVerdict`).
pub fn slow_windows(
    values: &[f64],
    medians_of_row: &[Option<f64>],
    start: usize,
    alpha: f64,
    judge: &mut dyn FnMut(usize, usize) -> WindowVerdict,
) -> Vec<Detected> {
    let mut active: Vec<(usize, f64)> = (start..values.len())
        .filter_map(|row| {
            let median = medians_of_row[row]?;
            (median > 0.0 && values[row].is_finite()).then(|| (row, values[row] / median - 1.0))
        })
        .collect();
    let mut found = Vec::new();
    for round in 0..MAX_WINDOWS {
        if active.len() < 2 * MIN_WINDOW {
            break;
        }
        let positions: Vec<f64> = active.iter().map(|&(row, _)| row as f64).collect();
        let residuals: Vec<f64> = active.iter().map(|&(_, q)| q).collect();
        let z = detrended(&positions, &residuals);
        let block = z.len().div_ceil(MAX_POINTS);
        let blocks: Vec<f64> = z.chunks(block).map(|c| c.iter().sum()).collect();
        let (a, b, rise) = largest_rise(&blocks);
        let (a, b) = (a * block, (b * block).min(z.len()));
        if b - a < MIN_WINDOW || rise <= 0.0 {
            break;
        }
        let p = p_value(&blocks, rise, round as u64, alpha);
        if p > alpha {
            break;
        }
        let (first_row, last_row) = (active[a].0, active[b - 1].0);
        match judge(first_row, last_row) {
            WindowVerdict::Stop => break,
            WindowVerdict::Skip => {}
            WindowVerdict::Report => found.push(Detected {
                first_row,
                last_row,
                p_value: p,
            }),
        }
        active.retain(|&(row, _)| row < first_row || row > last_row);
    }
    found
}

/// Each row's key median when its key group is judged (`JUDGED_MIN` iterations or more).
fn medians_of_rows(ctx: &Context, series: &Series) -> Vec<Option<f64>> {
    let medians = ctx.medians(series);
    ctx.group_of_row
        .iter()
        .map(|&g| (ctx.groups.counts[g as usize] >= JUDGED_MIN).then_some(medians[g as usize]))
        .collect()
}

/// A window's effect on one series: how much slower it ran than the same keys outside every
/// window, and what that adds to the series' total.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WindowEffect {
    /// `sum_W x_i / sum_W mbar_g(i) - 1` over the window's rows whose key also runs outside
    /// every window (`mbar_g`: the key's mean there).
    pub slowdown: f64,
    /// `sum_W x_i * slowdown / (1 + slowdown)`: the window's time beyond what its keys cost
    /// elsewhere, in the metric's units.
    pub excess: f64,
    /// `excess` over the series' total.
    pub share: f64,
}

/// The effect of window `window` (rows, inclusive) on `values`, against key means over the rows
/// in none of `windows`. None when no key of the window runs outside them.
pub fn window_effect(
    values: &[f64],
    group_of_row: &[u32],
    groups: usize,
    window: (usize, usize),
    windows: &[(usize, usize)],
) -> Option<WindowEffect> {
    let inside = |row: usize| windows.iter().any(|&(a, b)| (a..=b).contains(&row));
    let (mut sums, mut counts) = (vec![0.0; groups], vec![0u64; groups]);
    for (row, (&x, &g)) in values.iter().zip(group_of_row).enumerate() {
        if !inside(row) {
            sums[g as usize] += x;
            counts[g as usize] += 1;
        }
    }
    let (mut actual, mut expected) = (0.0, 0.0);
    for row in window.0..=window.1 {
        let g = group_of_row[row] as usize;
        if counts[g] > 0 {
            actual += values[row];
            expected += sums[g] / counts[g] as f64;
        }
    }
    if expected <= 0.0 {
        return None;
    }
    let slowdown = actual / expected - 1.0;
    let window_total: f64 = values[window.0..=window.1].iter().sum();
    let excess = window_total * slowdown / (1.0 + slowdown);
    let total: f64 = values.iter().sum();
    Some(WindowEffect {
        slowdown,
        excess,
        share: if total > 0.0 { excess / total } else { 0.0 },
    })
}

/// The windows found over every configuration and metric, merged where they overlap, as
/// inclusive row ranges in run order, with the smallest p-value of each.
pub(crate) fn find_windows(ctx: &Context, warmup: usize) -> Vec<(usize, usize, f64)> {
    let series = ctx.series.len().max(1);
    let alpha = ctx.options.false_alarm / series as f64;
    let mut all: Vec<(usize, usize, f64)> = Vec::new();
    for s in &ctx.series {
        let medians = medians_of_rows(ctx, s);
        let effect = |first: usize, last: usize, window: (usize, usize)| {
            window_effect(
                s.values,
                &ctx.group_of_row,
                ctx.groups.len(),
                (first, last),
                &[window],
            )
        };
        let mut judge = |first: usize, last: usize| {
            let large = effect(first, last, (first, last)).is_some_and(|e| {
                e.share >= ctx.options.neighbour_excess_min
                    && e.slowdown >= ctx.options.neighbour_slowdown_min
            });
            if !large {
                return WindowVerdict::Stop;
            }
            // A slow start that fades (its second half less than half as slow as its first) is
            // a warm-up, which the warmup check owns: another process slows a stretch evenly.
            let mid = first + (last - first) / 2;
            let halves = (
                effect(first, mid, (first, last)),
                effect(mid + 1, last, (first, last)),
            );
            if first <= warmup {
                if let (Some(early), Some(late)) = halves {
                    if late.slowdown < 0.5 * early.slowdown {
                        return WindowVerdict::Skip;
                    }
                }
            }
            WindowVerdict::Report
        };
        for d in slow_windows(s.values, &medians, 0, alpha, &mut judge) {
            all.push((d.first_row, d.last_row, d.p_value));
        }
    }
    all.sort_by_key(|w| (w.0, w.1));
    let mut merged: Vec<(usize, usize, f64)> = Vec::new();
    for w in all {
        match merged.last_mut() {
            Some(m) if w.0 <= m.1 + 1 => {
                m.1 = m.1.max(w.1);
                m.2 = m.2.min(w.2);
            }
            _ => merged.push(w),
        }
    }
    merged
}

/// "4.20% slower" or "0.10% faster".
fn pace(slowdown: f64) -> String {
    let word = if slowdown < 0.0 { "faster" } else { "slower" };
    format!("{} {word}", pct(slowdown.abs()))
}

fn signed(share: f64) -> String {
    format!("{:+.2}%", 100.0 * share)
}

/// `neighbours`: value = iterations in slow windows (0 when none). Warns when a window is found,
/// naming its iterations, how much slower they ran, their excess on each total and on each
/// speedup (or, with one configuration, on any speedup projected against it), and suggesting
/// `--exclude` for `select`.
pub(crate) fn neighbours(ctx: &Context, windows: &[(usize, usize, f64)]) -> Finding {
    let series = ctx.series.len().max(1);
    let rule = format!(
        "residuals against each key's median in iteration order, detrended; largest rise of \
         their running sum, permutation p-value; false-alarm rate {} per run",
        pct(ctx.options.false_alarm)
    );
    if windows.is_empty() {
        return Finding {
            check: Check::Neighbours,
            verdict: super::Verdict::Ok,
            value: Some(0.0),
            figure: format!(
                "no window of {MIN_WINDOW} or more iterations runs {} or more slower than the \
                 same keys elsewhere with an excess of {} of a total or more ({rule})",
                pct(ctx.options.neighbour_slowdown_min),
                pct(ctx.options.neighbour_excess_min)
            ),
            advice: "no sign of another process slowing part of the run".to_string(),
            suggest: None,
            details: Vec::new(),
        };
    }
    let ranges: Vec<(usize, usize)> = windows.iter().map(|w| (w.0, w.1)).collect();
    let iteration = |row: usize| ctx.log.iterations.get(row);
    let mut details = Vec::new();
    let mut parts = Vec::new();
    let mut flags = Vec::new();
    // Per series, the excess of every window together (for the speedups).
    let mut excess_of_series = vec![0.0; ctx.series.len()];
    for &(first, last, p) in windows {
        let name = format!("{}-{}", iteration(first), iteration(last));
        flags.push(EXCLUDE.typed(Surface::CommandLine, &name));
        details.push(Detail::run(
            format!("window {name} iterations"),
            (last - first + 1) as f64,
        ));
        details.push(Detail::run(format!("window {name} p_value"), p));
        let mut effects = Vec::new();
        for (i, s) in ctx.series.iter().enumerate() {
            let Some(e) = window_effect(
                s.values,
                &ctx.group_of_row,
                ctx.groups.len(),
                (first, last),
                &ranges,
            ) else {
                continue;
            };
            excess_of_series[i] += e.excess;
            details.push(Detail::of(s, format!("window {name} slowdown"), e.slowdown));
            details.push(Detail::of(
                s,
                format!("window {name} excess_share"),
                e.share,
            ));
            effects.push(format!(
                "{} {}, {} of its total",
                s.label(),
                pace(e.slowdown),
                signed(e.share)
            ));
        }
        parts.push(format!(
            "iterations {name} ({} iterations, p = {p:.4}): {}",
            last - first + 1,
            effects.join("; ")
        ));
    }
    let mut bias_text = Vec::new();
    let mut largest_bias: f64 = 0.0;
    let metrics = ctx.log.configs[0].metrics.len();
    let total = |i: usize| ctx.series[i].values.iter().sum::<f64>();
    if ctx.log.configs.len() > 1 {
        for m in 0..metrics {
            let (b, c) = (m, metrics + m);
            let measured = total(b) / total(c);
            let clean = (total(b) - excess_of_series[b]) / (total(c) - excess_of_series[c]);
            let bias = measured / clean - 1.0;
            largest_bias = largest_bias.max(bias.abs());
            details.push(Detail {
                config: None,
                metric: Some(ctx.series[b].metric.to_string()),
                name: "speedup_bias".to_string(),
                value: bias,
            });
            bias_text.push(format!(
                "the {} speedup reads {measured:.4} with them, {clean:.4} without ({})",
                ctx.series[b].metric,
                signed(bias)
            ));
        }
    } else {
        for (m, excess) in excess_of_series.iter().enumerate() {
            let bias = total(m) / (total(m) - excess) - 1.0;
            largest_bias = largest_bias.max(bias.abs());
            details.push(Detail {
                config: None,
                metric: Some(ctx.series[m].metric.to_string()),
                name: "speedup_bias".to_string(),
                value: bias,
            });
            bias_text.push(format!(
                "any speedup projected against this run's {} total reads {} too high",
                ctx.series[m].metric,
                signed(bias)
            ));
        }
    }
    let rows: usize = windows.iter().map(|w| w.1 - w.0 + 1).sum();
    let figure = format!(
        "{} slower than the same keys elsewhere in the run: {}; {} ({rule}; {series} series)",
        if windows.len() == 1 {
            "one window of iterations runs".to_string()
        } else {
            format!("{} windows of iterations run", windows.len())
        },
        parts.join("; "),
        bias_text.join("; ")
    );
    let flags = flags.join(" ");
    Finding {
        check: Check::Neighbours,
        verdict: super::Verdict::Warn,
        value: Some(rows as f64),
        figure,
        advice: format!(
            "likely another process shared the machine (or training changed for a while): the \
             window inflates the totals, and so the speedup, by up to {}, and SeqPoints picked \
             outside it will not show it; re-measure those iterations on a quiet machine, or \
             leave them out of the selection: {}",
            pct(largest_bias),
            ctx.select_command(&flags)
        ),
        suggest: Some(flags),
        details,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn largest_rise_by_hand() {
        // Running sums 1, -1, 2, 5, 3: the largest rise is from -1 (after 2 values) to 5.
        assert_eq!(largest_rise(&[1.0, -2.0, 3.0, 3.0, -2.0]), (2, 4, 6.0));
        assert_eq!(largest_rise(&[-1.0, -1.0]).2, 0.0);
    }

    #[test]
    fn detrending_removes_a_line_exactly() {
        let x: Vec<f64> = (0..10).map(f64::from).collect();
        let y: Vec<f64> = x.iter().map(|v| 3.0 - 0.5 * v).collect();
        assert!(detrended(&x, &y).iter().all(|r| r.abs() < 1e-12));
    }

    #[test]
    fn a_plateau_is_found_and_noise_is_not() {
        // 300 rows of one key with a deterministic +-1% zigzag; rows 100-159 run 13% slow.
        let clean: Vec<f64> = (0..300)
            .map(|i| 100.0 * (1.0 + 0.01 * ((i * 7919 % 13) as f64 / 6.0 - 1.0)))
            .collect();
        let mut slowed = clean.clone();
        for v in &mut slowed[100..160] {
            *v *= 1.13;
        }
        let medians = vec![Some(100.0); 300];
        let found = slow_windows(&slowed, &medians, 0, 0.01, &mut |_, _| {
            WindowVerdict::Report
        });
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].first_row, found[0].last_row), (100, 159));
        assert!(found[0].p_value <= 0.01);
        let report = &mut |_, _| WindowVerdict::Report;
        assert!(slow_windows(&clean, &medians, 0, 0.01, report).is_empty());
        // The effect: 13% slower, excess 60 rows x 13 on a total of about 30,780.
        let of_row = vec![0u32; 300];
        let e = window_effect(&slowed, &of_row, 1, (100, 159), &[(100, 159)]).unwrap();
        assert!((e.slowdown - 0.13).abs() < 0.005, "{e:?}");
        let true_excess: f64 = (100..160).map(|i| slowed[i] - clean[i]).sum();
        assert!((e.excess - true_excess).abs() < 0.03 * true_excess, "{e:?}");
    }

    #[test]
    fn long_runs_are_tested_in_blocks_and_the_window_found_to_a_block() {
        // 50,000 rows (blocks of 3): rows 20,000-24,999 run 13% slow.
        let n = 50_000;
        let values: Vec<f64> = (0..n)
            .map(|i| {
                let zigzag = 1.0 + 0.02 * ((i * 7919 % 13) as f64 / 6.0 - 1.0);
                let slow = if (20_000..25_000).contains(&i) {
                    1.13
                } else {
                    1.0
                };
                100.0 * zigzag * slow
            })
            .collect();
        let medians = vec![Some(100.0); n];
        let found = slow_windows(&values, &medians, 0, 0.01, &mut |_, _| {
            WindowVerdict::Report
        });
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].first_row.abs_diff(20_000) <= 3, "{found:?}");
        assert!(found[0].last_row.abs_diff(24_999) <= 3, "{found:?}");
    }

    /// 1,200 iterations over 12 keys (cost 10 x key) with a deterministic +-1.5% zigzag, each
    /// multiplied by `factor(i)`.
    fn run_with(factor: impl Fn(usize) -> f64) -> crate::runlog::RunLog {
        let mut text = String::from("seq_len,time_ms\n");
        for i in 0..1200usize {
            let key = 1 + (i * 7) % 12;
            let zigzag = 1.0 + 0.015 * ((i * 7919 % 11) as f64 / 5.0 - 1.0);
            let time = 10.0 * key as f64 * zigzag * factor(i);
            text.push_str(&format!("{key},{time:.4}\n"));
        }
        super::super::test_support::log(&text)
    }

    fn finding_of(log: &crate::runlog::RunLog, check: Check) -> Finding {
        super::super::run_checks(log, &super::super::ReportOptions::default())
            .into_iter()
            .find(|f| f.check == check)
            .unwrap()
    }

    #[test]
    fn a_fading_start_is_a_warmup_and_a_plateau_start_is_a_window() {
        let fading = run_with(|i| 1.0 + 2.0 * (-(i as f64) / 15.0).exp());
        let f = finding_of(&fading, Check::Neighbours);
        assert_eq!(f.verdict, super::super::Verdict::Ok, "{}", f.figure);
        let w = finding_of(&fading, Check::Warmup);
        assert!(w
            .suggest
            .as_deref()
            .is_some_and(|s| s.starts_with("--warmup")));

        let plateau = run_with(|i| if i < 300 { 1.14 } else { 1.0 });
        let f = finding_of(&plateau, Check::Neighbours);
        assert_eq!(
            f.suggest.as_deref(),
            Some("--exclude 0-299"),
            "{}",
            f.figure
        );
        let w = finding_of(&plateau, Check::Warmup);
        assert_eq!(w.suggest, None, "{}", w.advice);
        assert!(w
            .advice
            .contains("start of a slow window (iterations 0-299"));
    }
}
