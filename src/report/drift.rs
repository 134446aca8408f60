//! `drift`: does a key cost the same early and late in training? Each key group's cost per
//! epoch (or per phase) against its whole-run mean, summarised as the run's weighted drift.

use super::{pct, Check, Context, Detail, Finding, Verdict};
use crate::options::{Surface, STRATA};
use crate::rows::RowRanges;
use crate::runlog::RunLog;
use crate::select::{strata_rows, Strata};

/// How the run is cut to look for drift: by epoch when the log has two or more, else in
/// contiguous phases of (nearly) equal numbers of rows: the strata `select --strata` bins.
#[derive(Debug, Clone, PartialEq)]
pub struct DriftStrata {
    pub names: Vec<String>,
    pub of_row: Vec<u32>,
    /// The `select` flag that bins these strata separately.
    pub flag: String,
    strata: Strata,
}

impl DriftStrata {
    pub fn of(log: &RunLog, phases: usize) -> DriftStrata {
        let two_epochs = log.epochs.as_ref().is_some_and(|epochs| {
            let mut epochs = epochs.iter();
            let first = epochs.next();
            epochs.any(|e| Some(e) != first)
        });
        let strata = if two_epochs {
            Strata::Epoch
        } else {
            Strata::Phases(phases.clamp(1, log.len().max(1)))
        };
        let mut of_row = vec![0u32; log.len()];
        let mut names = Vec::new();
        // Only an empty log has no rows to split; it is one (empty) phase.
        let split = strata_rows(log, strata)
            .unwrap_or_else(|_| vec![("phase 1".into(), RowRanges::all(log.len()))]);
        for (i, (name, rows)) in split.into_iter().enumerate() {
            for row in rows.iter() {
                of_row[row] = i as u32;
            }
            names.push(name);
        }
        DriftStrata {
            names,
            of_row,
            flag: STRATA.typed(Surface::CommandLine, &strata.to_string()),
            strata,
        }
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// "epoch" or "phase": what one stratum is called in figures.
    pub fn unit(&self) -> &'static str {
        match self.strata {
            Strata::Epoch => "epoch",
            _ => "phase",
        }
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// One stratum's drift of one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct StratumDrift {
    pub name: String,
    /// Rows of the stratum whose key group also occurs in another stratum (the rows compared).
    pub rows: u64,
    /// `D_s = sum_{i in s} x_i / sum_{i in s} xbar_g(i) - 1` over those rows, where `xbar_g`
    /// is the key group's mean over the whole run: the stratum's actual total against the
    /// total its keys predict. Equivalently, the weighted mean over key groups of
    /// `mean_{g,s} / xbar_g - 1`, each group weighted by `n_{g,s} xbar_g` (its predicted share
    /// of the stratum's cost). 0 when the key alone decides the cost, up to noise.
    pub drift: f64,
    /// `sqrt(sum_{i in s} (x_i - xbar_g(i))^2) / sum_{i in s} xbar_g(i)`: about the standard
    /// error of `drift` from within-key noise alone, to judge whether a drift is more than noise.
    pub noise: f64,
}

/// Per-stratum drift of one metric (see `StratumDrift`). Key groups seen in only one stratum
/// are left out: they say nothing about change over training.
pub fn stratum_drifts(
    values: &[f64],
    group_of_row: &[u32],
    groups: usize,
    strata: &DriftStrata,
) -> Vec<StratumDrift> {
    let mut sums = vec![0.0; groups];
    let mut counts = vec![0u64; groups];
    // Stratum of a group's first row, and whether it also occurs in another stratum.
    let mut first = vec![u32::MAX; groups];
    let mut spans = vec![false; groups];
    for ((&x, &g), &s) in values.iter().zip(group_of_row).zip(&strata.of_row) {
        let g = g as usize;
        sums[g] += x;
        counts[g] += 1;
        if first[g] == u32::MAX {
            first[g] = s;
        } else if first[g] != s {
            spans[g] = true;
        }
    }
    let means: Vec<f64> = sums
        .iter()
        .zip(&counts)
        .map(|(s, &c)| s / c.max(1) as f64)
        .collect();
    let k = strata.len();
    let (mut actual, mut predicted, mut squares, mut rows) =
        (vec![0.0; k], vec![0.0; k], vec![0.0; k], vec![0u64; k]);
    for ((&x, &g), &s) in values.iter().zip(group_of_row).zip(&strata.of_row) {
        let (g, s) = (g as usize, s as usize);
        if !spans[g] {
            continue;
        }
        actual[s] += x;
        predicted[s] += means[g];
        squares[s] += (x - means[g]).powi(2);
        rows[s] += 1;
    }
    (0..k)
        .map(|s| StratumDrift {
            name: strata.names[s].clone(),
            rows: rows[s],
            drift: if predicted[s] > 0.0 {
                actual[s] / predicted[s] - 1.0
            } else {
                0.0
            },
            noise: if predicted[s] > 0.0 {
                squares[s].sqrt() / predicted[s]
            } else {
                0.0
            },
        })
        .collect()
}

/// Whether a drift is worth acting on, from each series' (weighted drift, p-value): some
/// series drifts above `drift_max` with a p-value below `false_alarm` split over the series
/// tested (Bonferroni), so a run without drift raises it at most that often. Also the smallest
/// p-value among the series above `drift_max` (1 when none is).
pub fn beyond_noise(tested: &[(f64, f64)], drift_max: f64, false_alarm: f64) -> (bool, f64) {
    let p = tested
        .iter()
        .filter(|(w, _)| *w > drift_max)
        .map(|t| t.1)
        .fold(1.0, f64::min);
    (p < false_alarm / tested.len().max(1) as f64, p)
}

/// Whether the run drifts from one stratum to the next beyond noise, as the `drift` check
/// decides it (`beyond_noise` over every configuration, metric and speedup): what the `noise`
/// check asks before it reads a spread as drift.
pub(crate) fn drifts_beyond_noise(ctx: &Context, strata: &DriftStrata) -> bool {
    let per_series: Vec<Vec<StratumDrift>> = ctx
        .series
        .iter()
        .map(|s| stratum_drifts(s.values, &ctx.group_of_row, ctx.groups.len(), strata))
        .collect();
    beyond_noise(
        &tested(&with_speedups(ctx, per_series)),
        ctx.options.drift_max,
        ctx.options.drift_false_alarm,
    )
    .0
}

/// Each series' drifts by stratum (`ctx.series`' order), then, with a second configuration,
/// each metric's speedup's: every drift the checks weigh and test.
fn with_speedups(ctx: &Context, mut per_series: Vec<Vec<StratumDrift>>) -> Vec<Vec<StratumDrift>> {
    if ctx.log.configs.len() > 1 {
        let metrics = ctx.log.configs[0].metrics.len();
        for m in 0..metrics {
            let speedup = speedup_drifts(&per_series[m], &per_series[metrics + m]);
            per_series.push(speedup);
        }
    }
    per_series
}

/// Each drift's (weighted drift, p-value from noise alone), as `beyond_noise` takes them.
fn tested(all: &[Vec<StratumDrift>]) -> Vec<(f64, f64)> {
    all.iter()
        .map(|d| (weighted_drift(d), drift_p_value(d)))
        .collect()
}

/// The run's weighted drift: `sum_s rows_s |D_s| / sum_s rows_s`.
pub fn weighted_drift(drifts: &[StratumDrift]) -> f64 {
    let rows: u64 = drifts.iter().map(|d| d.rows).sum();
    if rows == 0 {
        return 0.0;
    }
    drifts
        .iter()
        .map(|d| d.rows as f64 * d.drift.abs())
        .sum::<f64>()
        / rows as f64
}

/// The speedup's drift per stratum: `R_s = (1 + D_baseline,s) / (1 + D_compare,s) - 1`, the
/// stratum's speedup over the speedup its keys predict from whole-run key means.
pub fn speedup_drifts(baseline: &[StratumDrift], compare: &[StratumDrift]) -> Vec<StratumDrift> {
    baseline
        .iter()
        .zip(compare)
        .map(|(a, b)| StratumDrift {
            name: a.name.clone(),
            rows: a.rows,
            drift: (1.0 + a.drift) / (1.0 + b.drift) - 1.0,
            noise: (a.noise.powi(2) + b.noise.powi(2)).sqrt(),
        })
        .collect()
}

/// How likely drifts as large as `drifts` are from within-key noise alone: the p-value of
/// `Q = sum_s (D_s / noise_s)^2` against chi-square with one degree of freedom fewer than the
/// strata compared (the strata's excesses over their keys' whole-run means sum to zero):
/// exact on one and two degrees, by the Wilson-Hilferty cube root from three (within 0.01 of
/// the exact tail there). `noise_s` overstates the standard error of `D_s` (a key's
/// whole-run mean shares the stratum's own rows), so the test errs towards "noise". A stratum
/// with a drift and no noise at all is a drift beyond doubt (0); 1 when fewer than two strata
/// have rows to compare.
pub fn drift_p_value(drifts: &[StratumDrift]) -> f64 {
    let compared: Vec<&StratumDrift> = drifts.iter().filter(|d| d.rows > 0).collect();
    if compared.len() < 2 {
        return 1.0;
    }
    let mut q = 0.0;
    for d in &compared {
        if d.noise > 0.0 {
            q += (d.drift / d.noise).powi(2);
        } else if d.drift != 0.0 {
            return 0.0;
        }
    }
    match compared.len() - 1 {
        // Exact on one and two degrees of freedom: the usual two strata, and three epochs.
        1 => 2.0 * (1.0 - crate::stats::normal_cdf(q.sqrt())),
        2 => (-q / 2.0).exp(),
        dof => {
            let dof = dof as f64;
            let spread = 2.0 / (9.0 * dof);
            let z = ((q / dof).cbrt() - (1.0 - spread)) / spread.sqrt();
            1.0 - crate::stats::normal_cdf(z)
        }
    }
}

fn signed(share: f64) -> String {
    format!("{:+.2}%", 100.0 * share)
}

fn describe(drifts: &[StratumDrift]) -> String {
    let per: Vec<String> = drifts
        .iter()
        .map(|d| format!("{} {}", d.name, signed(d.drift)))
        .collect();
    let noise = weighted_noise(drifts);
    format!(
        "{} ({}; noise alone about {})",
        pct(weighted_drift(drifts)),
        per.join(", "),
        pct(noise)
    )
}

fn weighted_noise(drifts: &[StratumDrift]) -> f64 {
    let rows: u64 = drifts.iter().map(|d| d.rows).sum();
    if rows == 0 {
        return 0.0;
    }
    drifts.iter().map(|d| d.rows as f64 * d.noise).sum::<f64>() / rows as f64
}

/// The largest weighted drift over configurations, metrics and speedups, over the rows
/// outside `windows` only (the slow windows the `neighbours` check found).
fn drift_outside(ctx: &Context, strata: &DriftStrata, windows: &[(usize, usize)]) -> f64 {
    let outside: Vec<usize> = (0..ctx.log.len())
        .filter(|&row| !windows.iter().any(|&(a, b)| (a..=b).contains(&row)))
        .collect();
    let mut kept = strata.clone();
    kept.of_row = outside.iter().map(|&r| strata.of_row[r]).collect();
    let group_of_row: Vec<u32> = outside.iter().map(|&r| ctx.group_of_row[r]).collect();
    let per_series: Vec<Vec<StratumDrift>> = ctx
        .series
        .iter()
        .map(|s| {
            let values: Vec<f64> = outside.iter().map(|&r| s.values[r]).collect();
            stratum_drifts(&values, &group_of_row, ctx.groups.len(), &kept)
        })
        .collect();
    with_speedups(ctx, per_series)
        .iter()
        .map(|d| weighted_drift(d))
        .fold(0.0, f64::max)
}

/// `drift`: value = the largest weighted drift over configurations and metrics and, with a
/// second configuration, over the speedup of each metric. Warns above `drift_max` when that
/// drift is more than within-key noise gives (`beyond_noise`), saying the key alone does not
/// decide the cost and suggesting `--strata`; a drift noise explains is `ok`, and says so.
pub(crate) fn drift(ctx: &Context, windows: &[(usize, usize)]) -> Finding {
    let strata = DriftStrata::of(ctx.log, ctx.options.phases);
    let unmeasurable = |why: String| Finding {
        check: Check::Drift,
        verdict: Verdict::Warn,
        value: None,
        figure: format!("not measurable: {why}"),
        advice: "log several epochs (or a longer run) so that keys recur over training; until \
                 then nothing shows whether a key costs the same early and late"
            .to_string(),
        suggest: None,
        details: Vec::new(),
    };
    if strata.len() < 2 {
        return unmeasurable("the run has one epoch and one phase".to_string());
    }
    let per_series: Vec<Vec<StratumDrift>> = ctx
        .series
        .iter()
        .map(|s| stratum_drifts(s.values, &ctx.group_of_row, ctx.groups.len(), &strata))
        .collect();
    let compared: u64 = per_series
        .first()
        .map_or(0, |d| d.iter().map(|d| d.rows).sum());
    if compared == 0 {
        return unmeasurable(format!(
            "no key occurs in two of the {} {}s",
            strata.len(),
            strata.unit()
        ));
    }
    let series = ctx.series.len();
    let all = with_speedups(ctx, per_series);
    // Each drift's (weighted drift, p-value from noise alone): a drift is acted on only where
    // it is both above the threshold and more than noise (see `beyond_noise`).
    let tested = tested(&all);
    let value = tested.iter().map(|t| t.0).fold(0.0, f64::max);
    let mut details = Vec::new();
    let mut parts = Vec::new();
    for (s, drifts) in ctx.series.iter().zip(&all[..series]) {
        let w = weighted_drift(drifts);
        details.push(Detail::of(s, "drift", w));
        for d in drifts {
            details.push(Detail::of(s, format!("drift {}", d.name), d.drift));
        }
        parts.push(format!("{} {}", s.label(), describe(drifts)));
    }
    for (m, speedup) in all[series..].iter().enumerate() {
        let w = weighted_drift(speedup);
        let name = &ctx.log.configs[0].metrics[m].name;
        details.push(Detail {
            config: None,
            metric: Some(name.clone()),
            name: "speedup_drift".to_string(),
            value: w,
        });
        for d in speedup {
            details.push(Detail {
                config: None,
                metric: Some(name.clone()),
                name: format!("speedup_drift {}", d.name),
                value: d.drift,
            });
        }
        parts.push(format!("speedup {name} {}", describe(speedup)));
    }
    let by = strata.unit();
    let figure = format!(
        "weighted drift of each key's mean by {by} ({} {by}s; {compared} of {} iterations have \
         keys seen in two or more): {}",
        strata.len(),
        ctx.log.len(),
        parts.join("; ")
    );
    let (beyond, p_value) = beyond_noise(
        &tested,
        ctx.options.drift_max,
        ctx.options.drift_false_alarm,
    );
    details.push(Detail::run("drift_p_value", p_value));
    let outside = (!windows.is_empty()).then(|| drift_outside(ctx, &strata, windows));
    if let Some(outside) = outside {
        details.push(Detail::run("drift_outside_slow_windows", outside));
    }
    if let Some(outside) =
        outside.filter(|&o| value > ctx.options.drift_max && o <= ctx.options.drift_max)
    {
        return Finding {
            check: Check::Drift,
            verdict: Verdict::Warn,
            value: Some(value),
            figure: format!(
                "{figure}; without the slow windows' iterations: {}",
                pct(outside)
            ),
            advice: format!(
                "the drift comes from the slow window(s) the neighbours check names: without \
                 them each key costs the same in every {by} within {}; deal with the window \
                 rather than binning each {by} separately",
                pct(ctx.options.drift_max)
            ),
            suggest: None,
            details,
        };
    }
    let figure = match outside {
        Some(o) => format!("{figure}; without the slow windows' iterations: {}", pct(o)),
        None => figure,
    };
    if value > ctx.options.drift_max && !beyond {
        // Strata cut a noisy run into fewer iterations per key: binning each separately on a
        // drift that noise alone explains only thins the SeqPoints' evidence.
        return Finding {
            check: Check::Drift,
            verdict: Verdict::Ok,
            value: Some(value),
            figure: format!(
                "{figure}; noise alone gives drifts this large with p = {p_value:.3} (chi-square \
                 over the {by}s)"
            ),
            advice: format!(
                "the drift is within what within-key noise gives (p = {p_value:.3}, above {}): \
                 no sign that a key costs differently from one {by} to the next; one set of \
                 SeqPoints serves the whole run",
                ctx.options.drift_false_alarm
            ),
            suggest: None,
            details,
        };
    }
    if value > ctx.options.drift_max {
        Finding {
            check: Check::Drift,
            verdict: Verdict::Warn,
            value: Some(value),
            figure,
            advice: format!(
                "the same key costs differently from one {by} to the next (up to {} weighted): \
                 the key alone does not decide the cost here; bin each {by} separately so each \
                 has its own SeqPoints ({})",
                pct(value),
                strata.flag
            ),
            suggest: Some(strata.flag),
            details,
        }
    } else {
        Finding {
            check: Check::Drift,
            verdict: Verdict::Ok,
            value: Some(value),
            figure,
            advice: format!(
                "each key costs the same in every {by} within {}: one set of SeqPoints serves \
                 the whole run",
                pct(ctx.options.drift_max)
            ),
            suggest: None,
            details,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::log;
    use super::super::*;
    use super::*;
    use crate::runlog::with_compare;

    // Two epochs. Key 10 costs 10 then 12; key 20 costs 20 then 20; key 30 only in epoch 1.
    const RUN: &str =
        "epoch,seq_len,time_ms\n0,10,10\n0,20,20\n0,10,10\n1,10,12\n1,20,20\n1,30,99\n";

    #[test]
    fn stratum_drift_by_hand() {
        let log = log(RUN);
        let ctx = Context::new(&log, &ReportOptions::default());
        let strata = DriftStrata::of(&log, 4);
        assert_eq!(strata.names, ["epoch 0", "epoch 1"]);
        assert_eq!(strata.flag, "--strata epoch");
        let d = stratum_drifts(
            ctx.series[0].values,
            &ctx.group_of_row,
            ctx.groups.len(),
            &strata,
        );
        // Key 10 mean = 32/3; key 20 mean 20; key 30 is left out (one epoch only).
        // Epoch 0: actual 40, predicted 2 * 32/3 + 20 = 124/3 -> D = 120/124 - 1.
        // Epoch 1: actual 32, predicted 32/3 + 20 = 92/3 -> D = 96/92 - 1.
        assert_eq!((d[0].rows, d[1].rows), (3, 2));
        assert!((d[0].drift - (120.0 / 124.0 - 1.0)).abs() < 1e-12);
        assert!((d[1].drift - (96.0 / 92.0 - 1.0)).abs() < 1e-12);
        // Noise: epoch 1 squares = (12 - 32/3)^2 + 0 = 16/9 -> sqrt = 4/3, over 92/3.
        assert!((d[1].noise - (4.0 / 3.0) / (92.0 / 3.0)).abs() < 1e-12);
        let w = weighted_drift(&d);
        let expect = (3.0 * (4.0 / 124.0) + 2.0 * (4.0 / 92.0)) / 5.0;
        assert!((w - expect).abs() < 1e-12);
        // Against noise: epoch 0's excess is 40 - 124/3 = -4/3 over sqrt(8/9) (z = -sqrt 2),
        // epoch 1's 4/3 over 4/3 (z = 1): Q = 3 on one degree of freedom, p = 0.0833.
        let p = drift_p_value(&d);
        assert!((p - 0.083_265).abs() < 1e-5, "{p}");
        // A 3.7% drift on six iterations is what noise gives: no strata suggested.
        let f = drift(&ctx, &[]);
        assert_eq!(f.verdict, Verdict::Ok);
        assert!((f.value.unwrap() - expect).abs() < 1e-12);
        assert_eq!(f.suggest, None);
        assert!(
            f.advice.contains("within what within-key noise gives"),
            "{}",
            f.advice
        );
    }

    #[test]
    fn a_drift_beyond_noise_suggests_strata() {
        // Key 10 costs 10 ten times in epoch 0 and 12 ten times in epoch 1; key 20 costs 20
        // throughout. Each epoch's excess is -10 (then +10) over sqrt(10): Q = 20, p ~ 1e-5.
        let mut text = String::from("epoch,seq_len,time_ms\n");
        for (epoch, cost) in [(0, 10), (1, 12)] {
            for _ in 0..10 {
                text.push_str(&format!("{epoch},10,{cost}\n{epoch},20,20\n"));
            }
        }
        let log = log(&text);
        let ctx = Context::new(&log, &ReportOptions::default());
        let f = drift(&ctx, &[]);
        assert_eq!(f.verdict, Verdict::Warn);
        assert_eq!(f.suggest.as_deref(), Some("--strata epoch"));
        let p = f
            .details
            .iter()
            .find(|d| d.name == "drift_p_value")
            .unwrap();
        assert!(p.value < 1e-4, "{}", p.value);
    }

    #[test]
    fn beyond_noise_needs_both_size_and_significance() {
        // Three series tested at 1%: each must reach p < 1/300.
        assert_eq!(
            beyond_noise(&[(0.02, 0.003), (0.0, 0.0), (0.0, 1.0)], 0.01, 0.01),
            (true, 0.003)
        );
        assert!(!beyond_noise(&[(0.02, 0.004), (0.0, 0.0), (0.0, 1.0)], 0.01, 0.01).0);
        // Significant but small: below the threshold, nothing to act on.
        assert_eq!(beyond_noise(&[(0.005, 0.0)], 0.01, 0.01), (false, 1.0));
        // No strata to compare, or no noise and no drift.
        let flat = StratumDrift {
            name: "a".into(),
            rows: 3,
            drift: 0.0,
            noise: 0.0,
        };
        assert_eq!(drift_p_value(std::slice::from_ref(&flat)), 1.0);
        assert!(drift_p_value(&[flat.clone(), flat.clone()]) > 1.0 - 1e-6);
        // Three strata (two degrees): exp(-Q/2); z = 1 in each gives Q = 3.
        let unit = StratumDrift {
            drift: 0.01,
            noise: 0.01,
            ..flat.clone()
        };
        let p = drift_p_value(&[unit.clone(), unit.clone(), unit.clone()]);
        assert!((p - (-1.5f64).exp()).abs() < 1e-12);
        // Eleven (ten degrees), Q = 11: the exact chi-square tail is 0.3575.
        let p = drift_p_value(&vec![unit; 11]);
        assert!((p - 0.3575).abs() < 0.01, "{p}");
        let jump = StratumDrift {
            drift: 0.01,
            ..flat.clone()
        };
        assert_eq!(drift_p_value(&[flat, jump]), 0.0);
    }

    #[test]
    fn one_epoch_is_cut_into_phases() {
        // 8 rows, 4 phases of 2: key 1 costs 1 early and 1 late; no drift at all.
        let log = log("seq_len,time_ms\n1,1\n2,2\n1,1\n2,2\n1,1\n2,2\n1,1\n2,2\n");
        let strata = DriftStrata::of(&log, 4);
        assert_eq!(strata.of_row, [0, 0, 1, 1, 2, 2, 3, 3]);
        assert_eq!(strata.flag, "--strata phases:4");
        let f = drift(&Context::new(&log, &ReportOptions::default()), &[]);
        assert_eq!((f.verdict, f.value), (Verdict::Ok, Some(0.0)));
    }

    #[test]
    fn the_speedup_drifts_when_only_the_new_design_changes() {
        // Baseline: key 1 costs 10 in both epochs. New design: 10 then 5 (speedup 1 then 2).
        // Eight iterations per epoch, so that the drift is beyond noise: the speedup's
        // excesses are -1/4 and +1/2 against a noise of sqrt(8 x 2.5^2) / 60 each (Q = 22.5).
        let rows = |late: u32| {
            let mut text = String::from("epoch,seq_len,time_ms\n");
            for (epoch, cost) in [(0, 10), (1, late)] {
                text.push_str(&format!("{epoch},1,{cost}\n").repeat(8));
            }
            text
        };
        let (base, new) = (log(&rows(10)), log(&rows(5)));
        let log = with_compare(base, new).unwrap();
        let f = drift(&Context::new(&log, &ReportOptions::default()), &[]);
        // Compare mean 7.5: D = 10/7.5 - 1 = +1/3 then 5/7.5 - 1 = -1/3.
        // Speedup drift: 1 / (4/3) - 1 = -1/4 and 1 / (2/3) - 1 = +1/2; weighted 3/8.
        let speedup = f
            .details
            .iter()
            .find(|d| d.name == "speedup_drift")
            .unwrap();
        assert!((speedup.value - 0.375).abs() < 1e-12);
        assert!((f.value.unwrap() - 0.375).abs() < 1e-12);
        assert_eq!(f.verdict, Verdict::Warn);
    }

    #[test]
    fn no_recurring_key_is_not_measurable() {
        let log = log("epoch,seq_len,time_ms\n0,1,1\n1,2,2\n");
        let f = drift(&Context::new(&log, &ReportOptions::default()), &[]);
        assert_eq!((f.verdict, f.value), (Verdict::Warn, None));
    }
}
