//! A run with more distinct noisy lengths than the exact DP takes: `optimal` names how far
//! its bins may be from the optimum, and a long selection off a terminal says how far it is.

use std::path::Path;

use seqpoint::binning::EXACT_UP_TO;
use seqpoint::testkit::distinct::noisy_groups;

use crate::common::{assert_succeeded, seqpoint_in};

/// A log with `distinct` lengths whose mean cost is noisy around a curve.
fn write_noisy_log(path: &Path, distinct: usize) {
    let (counts, values) = noisy_groups(distinct, 0.05, 4);
    let mut text = String::from("seq_len,time_ms\n");
    for (g, (&count, &value)) in counts.iter().zip(&values).enumerate() {
        for _ in 0..count {
            text.push_str(&format!("{},{value:.3}\n", g + 1));
        }
    }
    std::fs::write(path, text).unwrap();
}

#[test]
fn many_noisy_keys_name_the_gap_in_json_and_table() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("many.csv");
    write_noisy_log(&log, EXACT_UP_TO + 4000);
    let log = log.to_str().unwrap();
    let args = ["select", log, "--bins", "4", "--max-bins", "6"];
    let out = seqpoint_in(dir.path())
        .args(args)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_succeeded(&out);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let gap = doc["selection"]["binning_gap_pct"]
        .as_f64()
        .expect("the fallback's gap is in the JSON");
    assert!(gap > 0.0 && gap < 5.0, "gap {gap}%");
    assert_eq!(doc["selection"]["method"], "optimal");

    let table = seqpoint_in(dir.path()).args(args).output().unwrap();
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains(&format!("bins within {gap:.2}% of the optimum")),
        "{text}"
    );

    // An exact answer says nothing of a gap.
    let exact = crate::common::json_output(&["select", "sample:speech_t1.csv", "--format", "json"]);
    assert!(exact["selection"].get("binning_gap_pct").is_none());
}

/// Off a terminal, `select ARGS` on a run of many distinct keys writes plain status lines to
/// stderr, one of them naming `stage`, and the JSON alone to stdout.
fn assert_status_lines(args: &[&str], stage: &str) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("many.csv");
    write_noisy_log(&log, EXACT_UP_TO + 4000);
    let out = seqpoint_in(dir.path())
        .args(["select", log.to_str().unwrap()])
        .args(args)
        .args(["--format", "json"])
        // The first line at once instead of after two seconds; stderr is a pipe here.
        .env("SEQPOINT_STATUS_AFTER_MS", "0")
        .output()
        .unwrap();
    assert_succeeded(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with(&format!("seqpoint: {stage}"))),
        "{args:?}: {stderr}"
    );
    assert_eq!(
        lines
            .last()
            .map(|l| l.starts_with("seqpoint: selection done")),
        Some(true),
        "{args:?}: {stderr}"
    );
    // Plain lines, no bar drawing, and standard output is the JSON alone.
    assert!(
        !stderr.contains('\r') && !stderr.contains('\u{1b}'),
        "{stderr:?}"
    );
    serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("JSON alone on stdout");
}

#[test]
fn a_long_selection_off_a_terminal_writes_status_lines_to_stderr_only() {
    assert_status_lines(&["--bins", "4"], "preparing bins");
}

#[test]
fn the_default_target_plan_off_a_terminal_writes_status_lines_too() {
    assert_status_lines(&[], "planning");
}
