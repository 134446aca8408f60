//! `seqpoint report` from the command line: the table, the `seqpoint-report/1` JSON, files,
//! several metrics, and clear errors on bad input. Figures on the bundled sample (real
//! measurements) are checked against values computed independently of this code.

use crate::common::json_output;
use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

use seqpoint::report::{run_checks, Check, ReportOptions, Verdict};
use seqpoint::runlog::sample::{SAMPLE_COMPARE_NAME, SAMPLE_NAME};
use seqpoint::testkit::models::{drift_run, DriftSpec};
use seqpoint::{load_run, LoadOptions};

fn seqpoint() -> Command {
    Command::cargo_bin("seqpoint").unwrap()
}

fn finding<'a>(doc: &'a Value, check: &str) -> &'a Value {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["check"] == check)
        .unwrap()
}

fn detail(finding: &Value, name: &str, config: Option<&str>) -> f64 {
    finding["details"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == name && config.is_none_or(|c| d["config"] == c))
        .unwrap_or_else(|| panic!("no detail {name} {config:?}"))["value"]
        .as_f64()
        .unwrap()
}

#[test]
fn the_table_on_the_bundled_sample_lists_every_check() {
    seqpoint().arg("report").assert().success().stdout(
        predicate::str::contains("sample:speech_t1.csv vs sample:speech_t2.csv: 450 iterations")
            .and(predicate::str::is_match(r"(?m)^explained ok\s+0\.995$").unwrap())
            .and(predicate::str::is_match(r"(?m)^drift\s+warn 2\.34%$").unwrap())
            .and(predicate::str::contains("suggested: --strata epoch"))
            .and(predicate::str::contains("1 of 6 checks warn")),
    );
}

#[test]
fn sample_figures_match_independent_computation() {
    // Reference values computed from the CSV files with a separate script: share of variance
    // explained 0.99474 / 0.99641 (the data README gives 0.995 / 0.996), median within-key CV
    // 4.093% / 2.870%, per-epoch drift of keys seen in two or more epochs -2.53%, -1.06%,
    // +3.46% (1 thread) and -2.61%, +0.79%, +1.70% (2 threads).
    let doc = json_output(&["report", "--format", "json"]);
    let explained = finding(&doc, "explained");
    assert!((detail(explained, "explained", Some("baseline")) - 0.99474).abs() < 5e-5);
    assert!((detail(explained, "explained", Some("compare")) - 0.99641).abs() < 5e-5);
    let noise = finding(&doc, "noise");
    assert!((detail(noise, "median_cv", Some("baseline")) - 0.04093).abs() < 5e-5);
    assert!((detail(noise, "median_cv", Some("compare")) - 0.02870).abs() < 5e-5);
    let drift = finding(&doc, "drift");
    for (epoch, base, compare) in [
        (0, -0.0253, -0.0261),
        (1, -0.0106, 0.0079),
        (2, 0.0346, 0.0170),
    ] {
        let name = format!("drift epoch {epoch}");
        assert!((detail(drift, &name, Some("baseline")) - base).abs() < 5e-4);
        assert!((detail(drift, &name, Some("compare")) - compare).abs() < 5e-4);
    }
    assert_eq!(drift["verdict"], "warn");
    let shape = finding(&doc, "shape");
    assert_eq!(detail(shape, "unique_keys", None), 133.0);
    assert_eq!(detail(shape, "epochs", None), 3.0);
}

#[test]
fn the_library_and_the_cli_agree() {
    let options = LoadOptions {
        compare: Some(SAMPLE_COMPARE_NAME.to_string()),
        ..LoadOptions::default()
    };
    let log = load_run(SAMPLE_NAME, &options).unwrap();
    let findings = run_checks(&log, &ReportOptions::default());
    let doc = json_output(&["report", "--format", "json"]);
    // Both sides go through JSON text, so that float parsing treats them alike.
    let library: Value = serde_json::from_str(&serde_json::to_string(&findings).unwrap()).unwrap();
    assert_eq!(
        library, doc["findings"],
        "the CLI prints what run_checks returns"
    );
    let verdicts: Vec<Verdict> = findings.iter().map(|f| f.verdict).collect();
    assert_eq!(verdicts.iter().filter(|&&v| v == Verdict::Warn).count(), 1);
    assert_eq!(findings[3].check, Check::Drift);
}

#[test]
fn json_shape_follows_the_schema() {
    let doc = json_output(&["report", "--format", "json"]);
    assert_eq!(doc["schema"], "seqpoint-report/1");
    assert_eq!(doc["input"]["iterations"], 450);
    let findings = doc["findings"].as_array().unwrap();
    let checks: Vec<&str> = findings
        .iter()
        .map(|f| f["check"].as_str().unwrap())
        .collect();
    assert_eq!(
        checks,
        ["explained", "noise", "warmup", "drift", "outliers", "shape"]
    );
    for f in findings {
        assert!(f["verdict"] == "ok" || f["verdict"] == "warn");
        assert!(f["value"].is_number(), "{f}");
        assert!(!f["advice"].as_str().unwrap().is_empty());
        assert!(!f["figure"].as_str().unwrap().is_empty());
    }
}

#[test]
fn several_metrics_are_each_checked() {
    let dir = tempfile::tempdir().unwrap();
    let pair = drift_run(&DriftSpec {
        epochs: 3,
        batches_per_epoch: 60,
        ..DriftSpec::default()
    });
    let (base, new) = (dir.path().join("b.csv"), dir.path().join("n.csv"));
    std::fs::write(&base, pair.baseline).unwrap();
    std::fs::write(&new, pair.compare).unwrap();
    let (base, new) = (base.to_str().unwrap(), new.to_str().unwrap());
    let doc = json_output(&[
        "report",
        base,
        "--compare",
        new,
        "--metric",
        "time_ms",
        "--metric",
        "energy_j",
        "--format",
        "json",
    ]);
    assert_eq!(
        doc["input"]["metrics"],
        serde_json::json!(["time_ms", "energy_j"])
    );
    let explained = finding(&doc, "explained");
    let metrics: Vec<(&str, &str)> = explained["details"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["name"] == "explained")
        .map(|d| (d["config"].as_str().unwrap(), d["metric"].as_str().unwrap()))
        .collect();
    assert_eq!(
        metrics,
        [
            ("baseline", "time_ms"),
            ("baseline", "energy_j"),
            ("compare", "time_ms"),
            ("compare", "energy_j")
        ]
    );
    let drift = finding(&doc, "drift");
    let speedups = drift["details"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["name"] == "speedup_drift")
        .count();
    assert_eq!(speedups, 2);
    // Asking for energy alone checks energy alone.
    let energy = json_output(&["report", base, "--metric", "energy_j", "--format", "json"]);
    assert_eq!(energy["input"]["metrics"], serde_json::json!(["energy_j"]));
}

#[test]
fn output_files_are_written_once_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.json");
    let out = out.to_str().unwrap();
    seqpoint()
        .args(["report", "-o", out])
        .assert()
        .success()
        .stderr(predicate::str::contains("wrote"));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    assert_eq!(doc["schema"], "seqpoint-report/1");
    seqpoint()
        .args(["report", "-o", out])
        .assert()
        .failure()
        .stderr(predicate::str::contains("already exists; pass --force"));
    seqpoint()
        .args(["report", "-o", out, "--force", "--format", "table"])
        .assert()
        .success();
    assert!(std::fs::read_to_string(out)
        .unwrap()
        .starts_with("sample:speech_t1.csv"));
}

#[test]
fn the_drift_threshold_and_phases_are_honoured() {
    // The sample drifts 2.34%: a 3% threshold passes it.
    let doc = json_output(&["report", "--drift-threshold", "3", "--format", "json"]);
    assert_eq!(finding(&doc, "drift")["verdict"], "ok");
    // Without an epoch column the run is cut into phases.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no_epochs.csv");
    let mut text = String::from("seq_len,time_ms\n");
    for i in 0..40 {
        text.push_str(&format!("{},{}\n", 10 + i % 4, 10 + i % 4 + i / 20));
    }
    std::fs::write(&path, text).unwrap();
    let doc = json_output(&[
        "report",
        path.to_str().unwrap(),
        "--phases",
        "2",
        "--format",
        "json",
    ]);
    let drift = finding(&doc, "drift");
    assert_eq!(drift["suggest"], "--strata phases:2");
    assert!(drift["figure"].as_str().unwrap().contains("2 phases"));
}

fn write(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn bad_input_is_a_clear_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write(
        dir.path(),
        "bad.csv",
        "iteration,seq_len,time_ms\n0,10,1\n1,20,abc\n",
    );
    seqpoint()
        .args(["report", &bad])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "bad.csv:3:3: column 'time_ms': found \"abc\", expected a number",
        ));
    let good = write(
        dir.path(),
        "good.csv",
        "iteration,seq_len,time_ms\n0,10,1\n",
    );
    seqpoint()
        .args(["report", &good, "--metric", "nosuch"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("no metric column 'nosuch'"));
    let other = write(
        dir.path(),
        "other.csv",
        "iteration,seq_len,time_ms\n5,10,1\n",
    );
    seqpoint()
        .args(["report", &good, "--compare", &other])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("iteration 0"));
    seqpoint()
        .args(["report", "/nonexistent/run.csv"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "/nonexistent/run.csv: cannot read",
        ));
    seqpoint()
        .args(["report", "--phases", "0"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("--phases must be at least 1"));
    seqpoint()
        .args(["report", "--drift-threshold=-1"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("--drift-threshold"));
    seqpoint()
        .args(["report", "--format", "xml"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("possible values: table, json"));
}

#[test]
fn a_log_without_metrics_is_reported_as_unchecked() {
    let dir = tempfile::tempdir().unwrap();
    let lengths = write(dir.path(), "lengths.csv", "seq_len\n10\n20\n10\n");
    let doc = json_output(&["report", &lengths, "--format", "json"]);
    let findings = doc["findings"].as_array().unwrap();
    for f in &findings[..5] {
        assert_eq!(f["verdict"], "warn");
        assert!(f["value"].is_null());
    }
    assert_eq!(findings[5]["check"], "shape");
}
