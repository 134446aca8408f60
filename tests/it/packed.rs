//! Packed batches: `doc_lens` read from CSV and JSON Lines into the derived keys, a log's own
//! column of a derived name read instead (with a note), and `--key fit` on a generated packed
//! run whose cost is known.

use seqpoint::runlog::{load_bytes, load_run_noted, InputFormat, LoadProgress};
use seqpoint::LoadOptions;

use crate::common::seqpoint_in;

fn options(key: &[&str]) -> LoadOptions {
    LoadOptions {
        key: key.iter().map(|k| k.to_string()).collect(),
        ..LoadOptions::default()
    }
}

#[test]
fn csv_and_json_lines_derive_the_same_keys() {
    let csv = "iteration,seq_len,doc_lens,time_ms\n0,8,3 5,1\n1,8,8,2\n2,8,2 2|4,3\n";
    let jsonl = "{\"iteration\":0,\"seq_len\":8,\"doc_lens\":[3,5],\"time_ms\":1}\n\
                 {\"iteration\":1,\"seq_len\":8,\"doc_lens\":[8],\"time_ms\":2}\n\
                 {\"iteration\":2,\"seq_len\":8,\"doc_lens\":[[2,2],[4]],\"time_ms\":3}\n";
    // By hand: tokens 8, 8, 8; attn 9+25, 64, 4+4+16; docs 2, 1, 3; max_doc 5, 8, 4.
    for (key, want) in [
        ("tokens", vec![8, 8, 8]),
        ("attn", vec![34, 64, 24]),
        ("docs", vec![2, 1, 3]),
        ("max_doc", vec![5, 8, 4]),
    ] {
        for (text, format) in [(csv, InputFormat::Csv), (jsonl, InputFormat::Jsonl)] {
            let log = load_bytes("t", text.as_bytes(), format, &options(&[key])).unwrap();
            assert_eq!(log.keys, want, "{key} {format:?}");
            assert_eq!(log.key_names, [key]);
        }
    }
    let log = load_bytes(
        "t",
        csv.as_bytes(),
        InputFormat::Csv,
        &options(&["tokens", "attn"]),
    )
    .unwrap();
    assert_eq!(log.keys, [8, 34, 8, 64, 8, 24]);
}

#[test]
fn a_malformed_list_is_named_by_line_and_column() {
    let csv = "iteration,doc_lens,time_ms\n0,3 5,1\n1,3 -5,2\n";
    let err = load_bytes(
        "run.csv",
        csv.as_bytes(),
        InputFormat::Csv,
        &options(&["attn"]),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("run.csv:3:2: column 'doc_lens': found \"3 -5\" ('-5' is not a length), expected document lengths"),
        "{err}"
    );
    let jsonl = "{\"doc_lens\": [3, 5], \"time_ms\": 1}\n{\"doc_lens\": [], \"time_ms\": 1}\n";
    let err = load_bytes(
        "run.jsonl",
        jsonl.as_bytes(),
        InputFormat::Jsonl,
        &options(&["docs"]),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("run.jsonl:2:14: column 'doc_lens': found \"[]\" (an empty list)"),
        "{err}"
    );
}

#[test]
fn a_logs_own_column_wins_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.csv");
    std::fs::write(&path, "doc_lens,tokens,time_ms\n3 5,100,1\n8,200,2\n").unwrap();
    let (log, notes) = load_run_noted(
        path.to_str().unwrap(),
        &options(&["tokens"]),
        &LoadProgress::default(),
    )
    .unwrap();
    assert_eq!(log.keys, [100, 200]);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].contains("the key 'tokens' is the log's own column"),
        "{notes:?}"
    );
    // Without the column, doc_lens gives it, and nothing needs saying.
    std::fs::write(&path, "doc_lens,time_ms\n3 5,1\n8,2\n").unwrap();
    let (log, notes) = load_run_noted(
        path.to_str().unwrap(),
        &options(&["tokens"]),
        &LoadProgress::default(),
    )
    .unwrap();
    assert_eq!((log.keys, notes.len()), (vec![8, 8], 0));
}

/// A packed run: documents of varied lengths packed into a budget of 2,048 tokens, step time
/// 2 + 0.001 x tokens + 2e-6 x attn ms with +-1% noise (a seeded hash, no randomness).
fn packed_run(steps: u32) -> String {
    let mut text = String::from("iteration,seq_len,doc_lens,time_ms\n");
    let mut h: u64 = 12345;
    let mut next = || {
        h = h
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        h >> 33
    };
    for step in 0..steps {
        let mut lens = Vec::new();
        let mut used = 0u64;
        loop {
            // Lengths from 16 to about 2,000, mostly short: a heavy tail, as real text has.
            let len = 16 + (next() % 1000) * (next() % 1000) / 500;
            if used + len > 2048 {
                break;
            }
            used += len;
            lens.push(len);
        }
        if lens.is_empty() {
            lens.push(2048);
        }
        let tokens: u64 = lens.iter().sum();
        let attn: u64 = lens.iter().map(|l| l * l).sum();
        let noise = 1.0 + ((next() % 2001) as f64 - 1000.0) / 100_000.0;
        let time = (2.0 + 0.001 * tokens as f64 + 2e-6 * attn as f64) * noise;
        let lens: Vec<String> = lens.iter().map(u64::to_string).collect();
        text.push_str(&format!("{step},2048,{},{time:.4}\n", lens.join(" ")));
    }
    text
}

#[test]
fn the_fit_recovers_a_known_cost_and_keys_the_run_on_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("packed.csv");
    std::fs::write(&path, packed_run(2000)).unwrap();
    let (log, notes) = load_run_noted(
        path.to_str().unwrap(),
        &options(&["fit"]),
        &LoadProgress::default(),
    )
    .unwrap();
    assert_eq!(log.key_names, ["fit"]);
    assert_eq!(log.keys.len(), 2000);
    let note = notes
        .iter()
        .find(|n| n.starts_with("--key fit:"))
        .expect("the fit is noted");
    // Noise of +-1% (uniform, sd 0.58%) against a cost that varies far more: nearly all of
    // the variance is explained.
    let share: f64 = note
        .split("explains ")
        .nth(1)
        .and_then(|t| t.split('%').next())
        .and_then(|t| t.parse().ok())
        .unwrap();
    assert!(share > 95.0, "{note}");
    // The key follows the cost: its rank correlation with the time is near 1.
    let time = &log.configs[0].metrics[0].values;
    let (mut agree, mut pairs) = (0u64, 0u64);
    for i in (0..2000).step_by(7) {
        for j in (i + 1..2000).step_by(11) {
            if log.keys[i] != log.keys[j] {
                pairs += 1;
                agree += u64::from((log.keys[i] < log.keys[j]) == (time[i] < time[j]));
            }
        }
    }
    assert!(agree as f64 > 0.9 * pairs as f64, "{agree} of {pairs}");
}

#[test]
fn select_keyed_on_the_fit_says_what_was_fitted() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("packed.csv"), packed_run(600)).unwrap();
    let out = seqpoint_in(dir.path())
        .args(["select", "packed.csv", "--key", "fit", "--bins", "8"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("note: --key fit: time_ms = "), "{stderr}");
    assert!(stderr.contains("x attn"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("8 SeqPoints"));
}
