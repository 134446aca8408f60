//! A design whose speedup grows over training (computation-reuse-like): SeqPoints chosen by
//! sequence length alone misproject its speedup; SeqPoints per epoch (`--strata epoch`) do not.
//! Logs come from `seqpoint::testkit::models`, the same generator as `examples/gen_drift.rs`.

use crate::common::json_output;
use serde_json::Value;

use seqpoint::report::{run_checks, Check, ReportOptions, Verdict};
use seqpoint::testkit::models::{drift_run, DriftSpec, SynthPair};
use seqpoint::{run_selection, BinCount, LoadOptions, RunLog, SelectOptions, Selection, Strata};

const TARGET: f64 = 1.0;

/// How far one projection's error may reach, in its own 95% half-widths (`t95(dof)`
/// standard errors): 2.5 half-widths are 4.9 standard errors for the normal (1e-6 per
/// figure), 1.7e-5 at t with 30 degrees of freedom, 8.4e-5 at 15 (`project_cli`'s bound).
const ERROR_BOUND_IN_HALF_WIDTHS: f64 = 2.5;

fn pair(seed: u64) -> SynthPair {
    drift_run(&DriftSpec {
        seed,
        ..DriftSpec::default()
    })
}

fn select(log: &RunLog, strata: Strata, bins: BinCount) -> Selection {
    run_selection(
        log,
        &SelectOptions {
            strata,
            bins,
            ..SelectOptions::default()
        },
    )
    .unwrap()
}

/// Speedup errors (percent) of time and energy as `select` reports them.
fn speedup_errors(selection: &Selection) -> Vec<f64> {
    selection
        .projection
        .speedups
        .iter()
        .map(|s| s.error_pct.unwrap())
        .collect()
}

/// Speedup 95% half-widths (percent) of time and energy as `select` reports them.
fn speedup_half_widths(selection: &Selection) -> Vec<f64> {
    selection
        .projection
        .speedups
        .iter()
        .map(|s| s.half_width_pct)
        .collect()
}

#[test]
fn at_the_same_budget_sl_only_misses_the_speedup_and_strata_meet_it() {
    // 40 SeqPoints either way: 40 bins over the whole run, or 4 bins in each of 10 epochs.
    // SL-only picks sit anywhere in the run, so the drift is noise to them: unbiased, but
    // wide. Over seeds 1-60 (120 speedups each way): SL-only half-widths 4.47-7.87% (mean
    // 6.08%), errors mean 2.50% (sd 1.83%), 114/120 inside; per epoch half-widths 0.55-1.65%,
    // errors mean 0.33% (sd 0.28%), 117/120 inside. The claims, at their designed rates:
    // per seed and metric, SL-only's half-width beyond the target and the per-epoch one under
    // half of it (the ratio's largest 0.33, mean 0.18, sd 0.05: 6.5 sd below 0.5); over the
    // 20 errors of seeds 1-10, the per-epoch mean within the target (its sd 0.063%: 10 sd)
    // and SL-only's mean over twice it (4.3 sd: below 1e-4 per draw of the seeds). Strata
    // that did not help (per-epoch figures like SL-only's) fail all of them.
    let (mut sl_errors, mut st_errors) = (Vec::new(), Vec::new());
    for seed in 1..=10 {
        let log = pair(seed).load(&LoadOptions::default()).unwrap();
        assert_eq!(log.metric_names(), ["time_ms", "energy_j"]);
        let sl_only = select(&log, Strata::None, BinCount::Fixed(40));
        let strata = select(&log, Strata::Epoch, BinCount::Fixed(4));
        assert_eq!(sl_only.bins(), 40);
        assert_eq!(strata.bins(), 40);
        let (sl, st) = (speedup_errors(&sl_only), speedup_errors(&strata));
        assert_eq!((sl.len(), st.len()), (2, 2), "time and energy speedups");
        let (sl_hw, st_hw) = (speedup_half_widths(&sl_only), speedup_half_widths(&strata));
        for (s, t) in sl_hw.iter().zip(&st_hw) {
            assert!(*s > TARGET, "seed {seed}: SL-only half-widths {sl_hw:?}");
            assert!(
                *t < 0.5 * s,
                "seed {seed}: per-epoch speedup half-widths {st_hw:?} against SL-only {sl_hw:?}"
            );
        }
        sl_errors.extend(sl);
        st_errors.extend(st);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    assert!(
        mean(&st_errors) <= TARGET,
        "per-epoch speedup errors {st_errors:?} should be within {TARGET}% on average"
    );
    assert!(
        mean(&sl_errors) > 2.0 * mean(&st_errors),
        "SL-only speedup errors {sl_errors:?} should be over twice the per-epoch {st_errors:?}"
    );
}

#[test]
fn the_error_target_is_met_with_strata_on_every_metric_and_not_without() {
    let log = pair(1).load(&LoadOptions::default()).unwrap();
    // Not met without strata, in each of 200 seeds. Its speedup errors themselves are one
    // draw each: both above 1% in 94% of those seeds (seed 1 is one), neither in 1%: no claim
    // to hold a test to. With strata every error was within 1% in all 200 (largest 0.998%),
    // but an error within the target is one draw too (0 of 200 bounds its rate by 1.5% only),
    // so each error is held to `ERROR_BOUND_IN_HALF_WIDTHS` of its own 95% half-width.
    let sl_only = select(&log, Strata::None, BinCount::Target(TARGET));
    assert!(!sl_only.target.as_ref().unwrap().met);

    let strata = select(&log, Strata::Epoch, BinCount::Target(TARGET));
    assert!(strata.target.as_ref().unwrap().met);
    // Every configuration and metric (time and energy, baseline and compare) meets the target,
    // by error and by 95% interval; so do both speedups.
    assert_eq!(strata.projection.totals.len(), 4);
    for row in &strata.projection.totals {
        assert!(row.half_width_pct <= TARGET, "{row:?}");
        assert!(
            row.error_pct.unwrap() <= ERROR_BOUND_IN_HALF_WIDTHS * row.half_width_pct,
            "{row:?}"
        );
    }
    for (error, half_width) in speedup_errors(&strata)
        .iter()
        .zip(speedup_half_widths(&strata))
    {
        assert!(half_width <= TARGET, "{half_width}");
        assert!(
            error <= &(ERROR_BOUND_IN_HALF_WIDTHS * half_width),
            "{error}"
        );
    }
    // K per stratum, weights per stratum, projections summed over strata.
    assert_eq!(strata.strata.len(), 10);
    assert_eq!(
        strata.strata.iter().map(|s| s.k).sum::<usize>(),
        strata.bins()
    );
    for (i, s) in strata.strata.iter().enumerate() {
        let weight: u64 = strata
            .seqpoints
            .iter()
            .filter(|p| p.stratum == Some(i))
            .map(|p| p.weight)
            .sum();
        assert_eq!((s.iterations, weight), (200, 200), "{}", s.name);
        assert!(strata
            .seqpoints
            .iter()
            .filter(|p| p.stratum == Some(i))
            .all(|p| p.epoch == Some(i as u32)));
    }
    let projected: f64 = strata
        .seqpoints
        .iter()
        .map(|p| p.weight as f64 * p.values[1][0])
        .sum();
    let total = strata.projection.totals[2].projected;
    assert!(
        (total - projected).abs() <= 1e-9 * projected,
        "{total} vs {projected}"
    );
}

/// The usual workflow on drift run `seed`: choose SeqPoints from the baseline log (the new
/// design is not yet measured), profile them on the new design, project its speedup. The
/// speedup errors (percent, time and energy) of SL-only and per-epoch SeqPoints: at a 1%
/// target, then at the same profiling (8 and 16 per epoch, as many SL-only bins).
fn baseline_only_speedup_errors(seed: u64) -> Vec<(f64, f64)> {
    let pair = pair(seed);
    let full = pair.load(&LoadOptions::default()).unwrap();
    let baseline = pair.load_baseline(&LoadOptions::default()).unwrap();
    let speedup_error = |selection: &Selection, metric: usize| {
        let value = |config: usize, row: usize| full.configs[config].metrics[metric].values[row];
        let projected = |config| -> f64 {
            selection
                .seqpoints
                .iter()
                .map(|p| p.weight as f64 * value(config, p.row))
                .sum()
        };
        let actual = |config| -> f64 { (0..full.len()).map(|r| value(config, r)).sum() };
        let (s_projected, s_actual) = (projected(0) / projected(1), actual(0) / actual(1));
        100.0 * (s_projected - s_actual).abs() / s_actual
    };
    let sl_only = select(&baseline, Strata::None, BinCount::Target(TARGET));
    let strata = select(&baseline, Strata::Epoch, BinCount::Target(TARGET));
    assert!(sl_only.target.as_ref().unwrap().met && strata.target.as_ref().unwrap().met);
    let mut pairs = Vec::new();
    for metric in 0..2 {
        pairs.push((
            speedup_error(&sl_only, metric),
            speedup_error(&strata, metric),
        ));
    }
    for per_stratum in [8, 16] {
        let strata = select(&baseline, Strata::Epoch, BinCount::Fixed(per_stratum));
        let sl_only = select(&baseline, Strata::None, BinCount::Fixed(strata.bins()));
        for metric in 0..2 {
            pairs.push((
                speedup_error(&sl_only, metric),
                speedup_error(&strata, metric),
            ));
        }
    }
    pairs
}

#[test]
fn seqpoints_chosen_on_the_baseline_alone_carry_the_drift_into_the_speedup() {
    // SL-only SeqPoints sit anywhere in the run, so the drift enters the speedup as noise
    // that a plan sized on the baseline does not see; per-epoch ones take each epoch's share.
    // Over seeds 1-60 (360 errors) the means were 2.32% SL-only and 0.32% per epoch, and over
    // each 10 seeds (60 errors) 1.90-2.60% and 0.29-0.37%: the claims below, on seeds 1-10,
    // hold by over 6 sd of a 10-seed mean. (With the picks leaning early in the run, as they
    // once did, the SL-only errors were a bias instead: above 1% in every seed.)
    let errors: Vec<(f64, f64)> = (1..=10).flat_map(baseline_only_speedup_errors).collect();
    let mean = |f: fn(&(f64, f64)) -> f64| errors.iter().map(f).sum::<f64>() / errors.len() as f64;
    let (sl, st) = (mean(|e| e.0), mean(|e| e.1));
    assert!(st <= TARGET, "per-epoch speedup errors {errors:?}");
    assert!(
        sl > 2.0 * st,
        "SL-only against per-epoch speedup errors {errors:?}"
    );
}

#[test]
fn report_sees_the_drift_in_the_speedup_and_suggests_strata() {
    let log = pair(1).load(&LoadOptions::default()).unwrap();
    let findings = run_checks(&log, &ReportOptions::default());
    let drift = findings.iter().find(|f| f.check == Check::Drift).unwrap();
    assert_eq!(drift.verdict, Verdict::Warn);
    assert_eq!(drift.suggest.as_deref(), Some("--strata epoch"));
    let detail = |name: &str, config: Option<&str>, metric: &str| {
        drift
            .details
            .iter()
            .find(|d| {
                d.name == name
                    && d.metric.as_deref() == Some(metric)
                    && d.config.map(|c| c.name()) == config
            })
            .unwrap()
            .value
    };
    for metric in ["time_ms", "energy_j"] {
        // The baseline follows the length alone; the new design and its speedup drift.
        assert!(detail("drift", Some("baseline"), metric) < 0.01);
        assert!(detail("drift", Some("compare"), metric) > 0.05);
        assert!(detail("speedup_drift", None, metric) > 0.05);
    }
    // The same log without the drifting design passes the drift check.
    let baseline = pair(1).load_baseline(&LoadOptions::default()).unwrap();
    let findings = run_checks(&baseline, &ReportOptions::default());
    let drift = findings.iter().find(|f| f.check == Check::Drift).unwrap();
    assert_eq!(drift.verdict, Verdict::Ok, "{}", drift.figure);
}

fn write_pair(dir: &std::path::Path) -> (String, String) {
    let pair = pair(1);
    let base = dir.join("drift_base.csv");
    let new = dir.join("drift_new.csv");
    std::fs::write(&base, &pair.baseline).unwrap();
    std::fs::write(&new, &pair.compare).unwrap();
    (
        base.to_string_lossy().into_owned(),
        new.to_string_lossy().into_owned(),
    )
}

/// A figure of a `seqpoint/1` document (a speedup or a projection row) whose error lies
/// within `ERROR_BOUND_IN_HALF_WIDTHS` of its 95% half-width: one draw, held to a designed
/// bound rather than to the target (per epoch at 4 bins the half-widths reach 1.65%, so an
/// error within 1% would be a coin with a bias, not a claim).
fn error_within_bound(figure: &Value) {
    let [lo, hi] = [0, 1].map(|i| figure["interval"][i].as_f64().unwrap());
    let half_width_pct = 100.0 * (hi - lo) / 2.0 / figure["projected"].as_f64().unwrap();
    let error = figure["error_pct"].as_f64().unwrap();
    assert!(
        error <= ERROR_BOUND_IN_HALF_WIDTHS * half_width_pct,
        "{error}% off, 95% half-width {half_width_pct}%: {figure}"
    );
}

/// The speedups (time and energy) of a `seqpoint/1` document.
fn cli_speedups(doc: &Value) -> &Vec<Value> {
    let speedups = doc["speedups"].as_array().unwrap();
    assert_eq!(speedups.len(), 2);
    assert_eq!(speedups[0], doc["speedup"]);
    speedups
}

#[test]
fn through_the_cli_report_warns_and_strata_fix_the_speedup() {
    let dir = tempfile::tempdir().unwrap();
    let (base, new) = write_pair(dir.path());

    let report = json_output(&["report", &base, "--compare", &new, "--format", "json"]);
    assert_eq!(report["schema"], "seqpoint-report/1");
    let drift = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == "drift")
        .unwrap();
    assert_eq!(drift["verdict"], "warn");
    assert_eq!(drift["suggest"], "--strata epoch");
    assert!(drift["value"].as_f64().unwrap() > 0.01);

    let common = ["select", &base, "--compare", &new, "--format", "json"];
    let sl_only = json_output(&[&common[..], &["--bins", "40"]].concat());
    let strata = json_output(&[&common[..], &["--strata", "epoch", "--bins", "4"]].concat());
    // SL-only's interval sees the drift as noise: wider than the target (see above).
    assert!(sl_only["speedups"].as_array().unwrap().iter().all(|s| {
        let [lo, hi] = [0, 1].map(|i| s["interval"][i].as_f64().unwrap());
        (hi - lo) / 2.0 > TARGET / 100.0 * s["projected"].as_f64().unwrap()
    }));
    cli_speedups(&strata).iter().for_each(error_within_bound);
    // Every SeqPoint carries its stratum, and the epoch it comes from is that stratum.
    let points = strata["seqpoints"].as_array().unwrap();
    assert_eq!(points.len(), 40);
    for p in points {
        assert_eq!(p["stratum"], p["epoch"]);
    }
    assert!(sl_only["seqpoints"][0].get("stratum").is_none());

    let target =
        json_output(&[&common[..], &["--strata", "epoch", "--target-error", "1"]].concat());
    assert_eq!(target["selection"]["target_met"], true);
    assert_eq!(target["selection"]["strata"], "epoch");
    let per_stratum = target["selection"]["per_stratum"].as_array().unwrap();
    assert_eq!(per_stratum.len(), 10);
    let k_sum: u64 = per_stratum.iter().map(|s| s["k"].as_u64().unwrap()).sum();
    assert_eq!(k_sum, target["seqpoints"].as_array().unwrap().len() as u64);
    for row in target["projection"].as_array().unwrap() {
        error_within_bound(row);
    }
    cli_speedups(&target).iter().for_each(error_within_bound);
    let sl_target = json_output(&[&common[..], &["--target-error", "1"]].concat());
    assert_eq!(sl_target["selection"]["target_met"], false);
    assert!(sl_target["selection"]["advice"]
        .as_str()
        .unwrap()
        .contains("no K up to 64"));
}
