//! Two-length keys (`--key src_len,tgt_len`) on a generated translation-like run: k-means
//! bins scaled per length, and `report` saying whether one length alone would do.

use crate::common::json_output;
use assert_cmd::Command;

use seqpoint::report::{run_checks, Check, Finding, ReportOptions};
use seqpoint::runlog::{load_bytes, InputFormat};
use seqpoint::testkit::models::{load_translation, translation_run, TranslationSpec};
use seqpoint::{run_selection, BinCount, LoadOptions, Method, RunLog, SelectOptions};

/// Small enough that k-means over every K stays quick in a debug build.
fn spec() -> TranslationSpec {
    TranslationSpec {
        iterations: 800,
        ..TranslationSpec::default()
    }
}

fn explained(log: &RunLog) -> Finding {
    run_checks(log, &ReportOptions::default())
        .into_iter()
        .find(|f| f.check == Check::Explained)
        .unwrap()
}

fn detail(f: &Finding, name: &str) -> f64 {
    f.details.iter().find(|d| d.name == name).unwrap().value
}

#[test]
fn report_keeps_both_lengths_when_both_carry_cost() {
    let log = load_translation(&spec()).unwrap();
    let f = explained(&log);
    assert_eq!(f.suggest, None);
    assert!(f.advice.contains("neither length alone"), "{}", f.advice);
    assert_eq!(detail(&f, "alone_would_do"), 0.0);
    // Each length alone explains less than both (adjusted for the number of groups).
    let both = detail(&f, "explained_adjusted");
    assert!(detail(&f, "explained_adjusted_by_src_len") < both - 0.01);
    assert!(detail(&f, "explained_adjusted_by_tgt_len") < both - 0.01);
}

#[test]
fn report_says_the_source_length_alone_would_do_when_it_decides_the_cost() {
    let log = load_translation(&TranslationSpec {
        per_target: 0.0,
        per_pair: 0.0,
        ..spec()
    })
    .unwrap();
    let f = explained(&log);
    assert_eq!(f.suggest.as_deref(), Some("--key src_len"));
    assert_eq!(detail(&f, "alone_would_do"), 1.0);
    assert!(detail(&f, "explained_by_tgt_len") < 0.9);
}

fn kmeans(log: &RunLog, k: usize) -> seqpoint::Selection {
    run_selection(
        log,
        &SelectOptions {
            bins: BinCount::Fixed(k),
            max_bins: k,
            seed: 3,
            ..SelectOptions::default()
        },
    )
    .unwrap()
}

#[test]
fn select_bins_both_lengths_with_kmeans() {
    let log = load_translation(&spec()).unwrap();
    let selection = kmeans(&log, 8);
    assert_eq!(selection.method, Method::Kmeans);
    assert_eq!(selection.bins(), 8);
    assert_eq!(
        selection.seqpoints.iter().map(|s| s.weight).sum::<u64>(),
        800
    );
    for sp in &selection.seqpoints {
        assert_eq!(sp.key.len(), 2);
        for d in 0..2 {
            assert!(
                sp.bin_min[d] <= sp.key[d] && sp.key[d] <= sp.bin_max[d],
                "{sp:?}"
            );
        }
    }
    // More bins make them more homogeneous: the interval narrows from K = 1 to K = 8.
    let first = selection.curve.first().unwrap();
    let last = selection.curve.last().unwrap();
    assert!(last.worst_half_width_pct < first.worst_half_width_pct / 2.0);
}

#[test]
fn kmeans_is_blind_to_the_units_of_each_length() {
    // The same run with target lengths counted in hundredths: scaled per length, the bins and
    // the SeqPoints do not change.
    let text = translation_run(&spec());
    let scaled: String = text
        .lines()
        .enumerate()
        .map(|(i, line)| {
            if i == 0 {
                return format!("{line}\n");
            }
            let f: Vec<&str> = line.split(',').collect();
            let tgt: u32 = f[2].parse().unwrap();
            format!("{},{},{},{}\n", f[0], f[1], tgt * 100, f[3])
        })
        .collect();
    let options = LoadOptions {
        key: vec!["src_len".into(), "tgt_len".into()],
        ..LoadOptions::default()
    };
    let read = |t: &str| load_bytes("t.csv", t.as_bytes(), InputFormat::Csv, &options).unwrap();
    let (a, b) = (kmeans(&read(&text), 6), kmeans(&read(&scaled), 6));
    let picks = |s: &seqpoint::Selection| {
        let mut p: Vec<(u64, u64)> = s
            .seqpoints
            .iter()
            .map(|s| (s.iteration, s.weight))
            .collect();
        p.sort_unstable();
        p
    };
    assert_eq!(picks(&a), picks(&b));
}

#[test]
fn through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("translation.csv");
    std::fs::write(&path, translation_run(&spec())).unwrap();
    let path = path.to_str().unwrap();

    let key = ["--key", "src_len,tgt_len"];
    let select = json_output(
        &[
            &[
                "select",
                path,
                "--bins",
                "6",
                "--max-bins",
                "6",
                "--format",
                "json",
            ],
            &key[..],
        ]
        .concat(),
    );
    assert_eq!(select["selection"]["method"], "kmeans");
    assert_eq!(
        select["input"]["key"],
        serde_json::json!(["src_len", "tgt_len"])
    );
    let points = select["seqpoints"].as_array().unwrap();
    assert_eq!(points.len(), 6);
    assert!(points
        .iter()
        .all(|p| p["key"].as_array().unwrap().len() == 2));

    let report = json_output(&[&["report", path, "--format", "json"], &key[..]].concat());
    let explained = &report["findings"][0];
    assert_eq!(explained["check"], "explained");
    let names: Vec<&str> = explained["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"explained_by_src_len") && names.contains(&"explained_by_tgt_len"));
    assert!(explained["advice"]
        .as_str()
        .unwrap()
        .contains("neither length alone would do"));

    // The exact 1-D dynamic program cannot bin two lengths: the error says what to use.
    Command::cargo_bin("seqpoint")
        .unwrap()
        .args([&["select", path, "--method", "optimal"], &key[..]].concat())
        .assert()
        .failure()
        .stderr(predicates::str::contains("--method kmeans"));
}
