//! Every flag `report` suggests, followed as a user would: `seqpoint select RUN --compare NEW
//! FLAG`, on the bundled logs and on generated runs whose truth is known; the intervals the
//! followed command prints must hold the figures they bound.

use std::path::Path;

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde_json::Value;

use crate::common::json_output;
use seqpoint::testkit::coverage::GENERATED_CASES;
use seqpoint::testkit::models::{drift_run, translation_run, DriftSpec, TranslationSpec};

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// `report RUN [--compare NEW] EXTRA --format json`: each finding's check and suggested flags.
fn suggestions(run: &str, compare: Option<&str>, extra: &[&str]) -> Vec<(String, String)> {
    let mut args = vec!["report", run];
    if let Some(c) = compare {
        args.extend(["--compare", c]);
    }
    args.extend_from_slice(extra);
    args.extend(["--format", "json"]);
    let doc = json_output(&args);
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| {
            Some((
                f["check"].as_str()?.to_string(),
                f["suggest"].as_str()?.to_string(),
            ))
        })
        .collect()
}

/// One figure a followed `select` printed: its name, whether its interval holds the actual
/// figure, its error and half-width in percent.
#[derive(Debug, Clone)]
struct Figure {
    name: String,
    holds: bool,
    error_pct: f64,
    half_width_pct: f64,
}

fn figure(name: String, f: &Value) -> Figure {
    let actual = f["actual"].as_f64().unwrap();
    let projected = f["projected"].as_f64().unwrap();
    let [lo, hi] = [
        f["interval"][0].as_f64().unwrap(),
        f["interval"][1].as_f64().unwrap(),
    ];
    Figure {
        name,
        holds: lo <= actual && actual <= hi,
        error_pct: 100.0 * (projected / actual - 1.0),
        half_width_pct: 100.0 * (hi - lo) / 2.0 / actual,
    }
}

/// `select RUN [--compare NEW] FLAGS --format json`: every projected total and speedup.
fn followed(run: &str, compare: Option<&str>, flags: &[&str]) -> (Vec<Figure>, Value) {
    let mut args = vec!["select", run];
    if let Some(c) = compare {
        args.extend(["--compare", c]);
    }
    args.extend_from_slice(flags);
    args.extend(["--format", "json"]);
    let doc = json_output(&args);
    let mut figures = Vec::new();
    for p in doc["projection"].as_array().unwrap() {
        let name = format!(
            "{} {}",
            p["metric"].as_str().unwrap(),
            p["config"].as_str().unwrap()
        );
        figures.push(figure(name, p));
    }
    for s in doc["speedups"].as_array().into_iter().flatten() {
        figures.push(figure(
            format!("speedup {}", s["metric"].as_str().unwrap()),
            s,
        ));
    }
    (figures, doc)
}

/// A second configuration of a translation run: the same batches, attention 3x faster.
fn translation_new(csv: &str, spec: &TranslationSpec, seed: u64) -> String {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut out = String::from("iteration,src_len,tgt_len,time_ms\n");
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let (s, t): (f64, f64) = (f[1].parse().unwrap(), f[2].parse().unwrap());
        let cost = 5.0 + spec.per_source * s + spec.per_target * t + spec.per_pair * s * t / 3.0;
        let z: f64 = {
            let u1: f64 = 1.0 - rng.gen::<f64>();
            let u2: f64 = rng.gen::<f64>();
            (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
        };
        let time = cost * (1.0 + spec.noise * z).max(0.5);
        out.push_str(&format!("{},{},{},{time:.3}\n", f[0], f[1], f[2]));
    }
    out
}

/// `report` on a run, then each suggestion followed with the report's own reading flags:
/// (check, suggested flag, the figures the followed `select` printed).
fn follow_all(
    run: &str,
    compare: Option<&str>,
    flags: &[&str],
    checks: &[&str],
) -> Vec<(String, String, Vec<Figure>)> {
    suggestions(run, compare, flags)
        .into_iter()
        .filter(|(check, _)| checks.is_empty() || checks.contains(&check.as_str()))
        .map(|(check, flag)| {
            let mut all: Vec<&str> = flags.to_vec();
            // A suggested key replaces the key the report read.
            if flag.starts_with("--key") {
                if let Some(at) = all.iter().position(|f| *f == "--key") {
                    all.drain(at..at + 2);
                }
            }
            all.extend(flag.split_whitespace());
            let (figures, _) = followed(run, compare, &all);
            (check, flag, figures)
        })
        .collect()
}

/// How often a sound build's 95% interval may miss its figure in these tests: `select`'s
/// intervals are read as about 90% ones (docs/intervals.md), so a miss rate of 10% is sound.
const SOUND_MISS_RATE: f64 = 0.10;

/// Chance that a sound build fails one of these tests: split over the figures each checks.
const FALSE_FAILURE: f64 = 1e-4;

/// `P(X >= k)` for `X ~ Binomial(n, p)`.
fn binomial_tail(n: u32, p: f64, k: u32) -> f64 {
    let mut term = (1.0 - p).powi(n as i32); // P(X = 0)
    let mut below = 0.0;
    for j in 0..k.min(n + 1) {
        below += term;
        term *= f64::from(n - j) / f64::from(j + 1) * p / (1.0 - p);
    }
    (1.0 - below).max(0.0)
}

/// The most misses out of `n` that a sound build (miss rate `SOUND_MISS_RATE`) exceeds with
/// chance below `alpha`.
fn most_misses(n: u32, alpha: f64) -> u32 {
    (0..=n)
        .find(|&k| binomial_tail(n, SOUND_MISS_RATE, k + 1) < alpha)
        .unwrap_or(n)
}

#[test]
fn binomial_bounds_by_hand() {
    // n = 3, p = 0.1: P(X >= 2) = 3 (0.01)(0.9) + 0.001 = 0.028.
    assert!((binomial_tail(3, 0.1, 2) - 0.028).abs() < 1e-12);
    assert!((binomial_tail(3, 0.1, 0) - 1.0).abs() < 1e-12);
    // n = 10: P(X >= 7) = 9.1e-6 < 1e-4 / 3 <= P(X >= 6) = 1.5e-4: at most 6 misses.
    assert_eq!(most_misses(10, 1e-4 / 3.0), 6);
}

/// Misses per figure over redraws of a followed advice, and the bound they are held to.
#[derive(Default)]
struct Tally {
    runs: u32,
    misses: std::collections::BTreeMap<String, u32>,
    worst: std::collections::BTreeMap<String, f64>,
}

impl Tally {
    fn add(&mut self, figures: &[Figure]) {
        self.runs += 1;
        for f in figures {
            *self.misses.entry(f.name.clone()).or_default() += u32::from(!f.holds);
            let worst = self.worst.entry(f.name.clone()).or_default();
            *worst = worst.max(f.error_pct.abs() / f.half_width_pct);
        }
    }

    /// Every figure's misses within the binomial bound; prints the figures measured.
    fn assert_sound(&self, what: &str) {
        let alpha = FALSE_FAILURE / self.misses.len().max(1) as f64;
        let bound = most_misses(self.runs, alpha);
        for (name, &misses) in &self.misses {
            crate::common::note(&format!(
                "{what}: {name}: {misses} of {} outside their interval (bound {bound}), worst \
                 error {:.2} half-widths",
                self.runs, self.worst[name]
            ));
            assert!(
                misses <= bound,
                "{what}: {name} outside its interval in {misses} of {} runs (bound {bound})",
                self.runs
            );
        }
    }
}

#[test]
fn on_the_bundled_logs_every_suggestion_followed_holds() {
    let mut seen = Vec::new();
    for (run, compare, flags) in [
        ("assets/speech_t1.csv", Some("assets/speech_t2.csv"), vec![]),
        ("assets/speech_t1.csv", None, vec![]),
        (
            "assets/speech_t1.csv",
            Some("assets/speech_t2.csv"),
            vec!["--exclude", "283-416"],
        ),
        (
            "assets/packed_cpu_written.jsonl",
            Some("assets/packed_cpu_fused.jsonl"),
            vec![],
        ),
    ] {
        for (check, flag, figures) in follow_all(run, compare, &flags, &[]) {
            for f in &figures {
                assert!(f.holds, "{run} {flags:?}, {check} {flag}: {f:?}");
            }
            seen.push(format!("{run} {flag}"));
        }
    }
    // The advice these logs are known for was given (and so followed above).
    for want in [
        "assets/speech_t1.csv --strata epoch",
        "assets/speech_t1.csv --exclude 283-416",
        "assets/packed_cpu_written.jsonl --key attn",
    ] {
        assert!(seen.iter().any(|s| s == want), "{want} not in {seen:?}");
    }
}

/// A drifting run (the new design's savings grow over training), 3 epochs of 100 batches:
/// `report` suggests `--strata epoch`; followed, the intervals hold.
#[test]
fn strata_advice_on_drifting_runs_holds() {
    let dir = tempfile::tempdir().unwrap();
    let mut tally = Tally::default();
    for seed in 1..=10 {
        let pair = drift_run(&DriftSpec {
            seed,
            epochs: 3,
            batches_per_epoch: 100,
            noise: 0.04,
            ..DriftSpec::default()
        });
        let base = write(dir.path(), &format!("b{seed}.csv"), &pair.baseline);
        let new = write(dir.path(), &format!("n{seed}.csv"), &pair.compare);
        let flags = ["--metric", "time_ms"];
        let followed = follow_all(&base, Some(&new), &flags, &[]);
        let strata = followed
            .iter()
            .find(|(check, ..)| check == "drift")
            .unwrap_or_else(|| panic!("seed {seed}: no drift advice"));
        assert_eq!(strata.1, "--strata epoch");
        tally.add(&strata.2);
    }
    tally.assert_sound("--strata epoch on drifting runs");
}

/// Translation runs whose cost one length decides, or nearly (0.5 ms per source token beside
/// 3 per target token, where `report` still finds the target alone would do), noisy: `report`
/// suggests keying on that length alone; followed, the intervals hold.
#[test]
fn key_advice_on_translation_runs_holds() {
    let dir = tempfile::tempdir().unwrap();
    for (length, per_source, per_target, noise) in [
        ("src_len", 2.0, 0.0, 0.08),
        ("tgt_len", 0.0, 3.0, 0.08),
        ("tgt_len", 0.5, 3.0, 0.05),
    ] {
        let mut tally = Tally::default();
        for seed in 1..=10 {
            let spec = TranslationSpec {
                seed,
                iterations: 1200,
                per_source,
                per_target,
                per_pair: 0.0,
                noise,
            };
            let csv = translation_run(&spec);
            let base = write(dir.path(), "t.csv", &csv);
            let new = write(
                dir.path(),
                "n.csv",
                &translation_new(&csv, &spec, 100 + seed),
            );
            let flags = ["--key", "src_len,tgt_len"];
            // The noise advice (`--samples`) is followed on the redraw corpus.
            for (check, flag, figures) in follow_all(&base, Some(&new), &flags, &["explained"]) {
                if check == "explained" {
                    assert_eq!(flag, format!("--key {length}"), "seed {seed}");
                    tally.add(&figures);
                }
            }
        }
        crate::common::note(&format!(
            "--key {length}: suggested in {} of 10",
            tally.runs
        ));
        // Not a vacuous pass: the advice is given on most of these runs (10 of 10 each).
        assert!(
            tally.runs >= 5,
            "--key {length} suggested in {} of 10",
            tally.runs
        );
        tally.assert_sound(&format!("--key {length} on translation runs"));
    }
}

/// How often `report` may tell a run without drift to bin its strata separately: the drift
/// check is designed for 1% (`ReportOptions::drift_false_alarm`), but its chi-square is
/// approximate under heavy tails: 28 of 2,000 redraws of the heavy-tailed case (1.4%).
const DRIFT_FALSE_ALARM: f64 = 0.02;

/// The redraw corpus (`GENERATED_CASES`), its times drawn again per seed: whatever `report`
/// suggests is followed, and the intervals hold. No case drifts, so `report` suggests strata
/// at most at its false-alarm rate: a drift above the 1% threshold that noise alone explains
/// is not acted on (the heavy-tailed case drifted 1.12% against 1.03% from noise, was told
/// `--strata phases:4`, and following it put the new total and the speedup outside their
/// intervals).
#[test]
fn on_the_redraw_corpus_every_suggestion_followed_holds() {
    use seqpoint::testkit::coverage::GeneratedCase;
    let dir = tempfile::tempdir().unwrap();
    let (mut runs, mut strata, mut above_threshold, mut advised) = (0u32, 0u32, 0u32, 0u32);
    for case in GENERATED_CASES {
        let lengths = case.lengths(7);
        let mut tallies: std::collections::BTreeMap<String, Tally> = Default::default();
        for seed in 0..12 {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(1000 + seed);
            let base = GeneratedCase::csv(&lengths, &case.times(&lengths, 0, &mut rng));
            let new = GeneratedCase::csv(&lengths, &case.times(&lengths, 1, &mut rng));
            let base = write(dir.path(), "b.csv", &base);
            let new = write(dir.path(), "n.csv", &new);
            let report = json_output(&["report", &base, "--compare", &new, "--format", "json"]);
            let drift = report["findings"]
                .as_array()
                .unwrap()
                .iter()
                .find(|f| f["check"] == "drift")
                .unwrap();
            runs += 1;
            strata += u32::from(drift["suggest"].is_string());
            above_threshold += u32::from(drift["value"].as_f64().unwrap() > 0.01);
            for (check, flag, figures) in follow_all(&base, Some(&new), &[], &[]) {
                let kind = flag.split_whitespace().next().unwrap().to_string();
                tallies
                    .entry(format!("{check} {kind}"))
                    .or_default()
                    .add(&figures);
            }
        }
        for (advice, tally) in &tallies {
            advised += tally.runs;
            crate::common::note(&format!("{}: {advice} in {} of 12", case.name, tally.runs));
            tally.assert_sound(&format!("{} {advice}", case.name));
        }
    }
    // Not a vacuous pass: the noisier new configuration is told `--samples` on every redraw.
    assert!(advised >= 12, "only {advised} suggestions followed");
    // The fewest alarms a sound build exceeds with chance below FALSE_FAILURE.
    let bound = (0..=runs)
        .find(|&k| binomial_tail(runs, DRIFT_FALSE_ALARM, k + 1) < FALSE_FAILURE)
        .unwrap();
    crate::common::note(&format!(
        "redraw corpus: strata suggested in {strata} of {runs} runs (bound {bound}); drift above \
         the 1% threshold in {above_threshold}"
    ));
    assert!(
        strata <= bound,
        "strata suggested in {strata} of {runs} runs without drift"
    );
}

/// The drift check on runs without drift, many redraws (the library's `run_checks`, as
/// `report` calls it): the heavy-tailed case of the redraw corpus, whose drift figure is
/// mostly noise, is told to bin its phases separately at most at the false-alarm rate.
#[test]
fn heavy_tails_are_not_taken_for_drift() {
    use seqpoint::report::{run_checks, Check, ReportOptions};
    use seqpoint::runlog::{load_bytes, with_compare, InputFormat, LoadOptions};
    use seqpoint::testkit::coverage::GeneratedCase;
    let case = GENERATED_CASES
        .iter()
        .find(|c| c.name == "heavy-tailed")
        .unwrap();
    let lengths = case.lengths(7);
    let load = |text: &str| {
        load_bytes(
            "t.csv",
            text.as_bytes(),
            InputFormat::Csv,
            &LoadOptions::default(),
        )
        .unwrap()
    };
    let runs = 200u32;
    let (mut strata, mut above_threshold) = (0u32, 0u32);
    for seed in 0..u64::from(runs) {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5000 + seed);
        let base = GeneratedCase::csv(&lengths, &case.times(&lengths, 0, &mut rng));
        let new = GeneratedCase::csv(&lengths, &case.times(&lengths, 1, &mut rng));
        let log = with_compare(load(&base), load(&new)).unwrap();
        let findings = run_checks(&log, &ReportOptions::default());
        let drift = findings.iter().find(|f| f.check == Check::Drift).unwrap();
        strata += u32::from(drift.suggest.is_some());
        above_threshold += u32::from(drift.value.unwrap_or(0.0) > 0.01);
    }
    let bound = (0..=runs)
        .find(|&k| binomial_tail(runs, DRIFT_FALSE_ALARM, k + 1) < FALSE_FAILURE)
        .unwrap();
    crate::common::note(&format!(
        "heavy-tailed: strata suggested in {strata} of {runs} (bound {bound}); drift above the 1% \
         threshold in {above_threshold}"
    ));
    assert!(
        strata <= bound,
        "strata suggested in {strata} of {runs} runs without drift"
    );
}

/// Noisy runs without drift (3 epochs of 150 batches, 6% noise, a steady 30% saving): the
/// noise check does not read their spread as drift (it told 11 of 20 `--strata epoch`, "more
/// samples per SeqPoint would not" help), and the `--samples` it suggests instead, followed,
/// holds.
#[test]
fn noise_without_drift_is_not_read_as_drift() {
    use seqpoint::report::{run_checks, Check, ReportOptions};
    use seqpoint::LoadOptions;
    let spec = |seed| DriftSpec {
        seed,
        noise: 0.06,
        epochs: 3,
        batches_per_epoch: 150,
        time_saving: (0.3, 0.3),
        ..DriftSpec::default()
    };
    let runs = 20u32;
    let mut strata = 0;
    for seed in 1..=u64::from(runs) {
        let log = drift_run(&spec(seed))
            .load(&LoadOptions::default())
            .unwrap();
        let findings = run_checks(&log, &ReportOptions::default());
        let noise = findings.iter().find(|f| f.check == Check::Noise).unwrap();
        strata += u32::from(noise.suggest.as_deref() == Some("--strata epoch"));
    }
    let bound = (0..=runs)
        .find(|&k| binomial_tail(runs, DRIFT_FALSE_ALARM, k + 1) < FALSE_FAILURE)
        .unwrap();
    crate::common::note(&format!(
        "noise without drift: --strata suggested by the noise check in {strata} of {runs} \
         (bound {bound})"
    ));
    assert!(strata <= bound, "{strata} of {runs}");
    let dir = tempfile::tempdir().unwrap();
    let mut tally = Tally::default();
    for seed in 1..=8 {
        let pair = drift_run(&spec(seed));
        let base = write(dir.path(), "b.csv", &pair.baseline);
        let new = write(dir.path(), "n.csv", &pair.compare);
        for (_, flag, figures) in follow_all(&base, Some(&new), &[], &["noise"]) {
            assert!(flag.starts_with("--samples"), "seed {seed}: {flag}");
            tally.add(&figures);
        }
    }
    assert!(
        tally.runs >= 4,
        "--samples suggested in {} of 8",
        tally.runs
    );
    tally.assert_sound("--samples on noisy runs without drift");
}
