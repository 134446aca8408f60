//! An independent check of `seqpoint select` on the real logs: the projection, weights,
//! bins and speedup in the JSON are recomputed here from the raw CSV with plain code that
//! shares nothing with the library.

use crate::common::json_output;
use std::collections::BTreeMap;

use serde_json::Value;

/// iteration -> (seq_len, time_ms), read with a plain split.
fn read_log(path: &str) -> BTreeMap<u64, (u32, f64)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (it, sl, t) = (col("iteration"), col("seq_len"), col("time_ms"));
    lines
        .map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            (
                f[it].parse().unwrap(),
                (f[sl].parse().unwrap(), f[t].parse().unwrap()),
            )
        })
        .collect()
}

fn select_json(args: &[&str]) -> Value {
    let run = [
        "select",
        "tests/data/speech_t1.csv",
        "--compare",
        "tests/data/speech_t2.csv",
        "--format",
        "json",
    ];
    json_output(&[&run[..], args].concat())
}

fn check(doc: &Value) {
    let t1 = read_log("tests/data/speech_t1.csv");
    let t2 = read_log("tests/data/speech_t2.csv");
    let sps = doc["seqpoints"].as_array().unwrap();
    let weight = |s: &Value| s["weight"].as_u64().unwrap();
    let iteration = |s: &Value| s["iteration"].as_u64().unwrap();
    assert_eq!(
        sps.iter().map(weight).sum::<u64>(),
        t1.len() as u64,
        "weights sum to N"
    );

    // Each bin's weight is the number of iterations whose length lies in its range, the
    // ranges do not overlap, and the SeqPoint's iteration has a length inside it.
    let mut previous_max = 0;
    for s in sps {
        let (lo, hi) = (
            s["bin"]["min"][0].as_u64().unwrap() as u32,
            s["bin"]["max"][0].as_u64().unwrap() as u32,
        );
        assert!(
            lo > previous_max || previous_max == 0,
            "bins overlap at {lo}"
        );
        previous_max = hi;
        let inside = t1.values().filter(|(k, _)| (lo..=hi).contains(k)).count() as u64;
        assert_eq!(inside, weight(s));
        let (k, t) = t1[&iteration(s)];
        assert!((lo..=hi).contains(&k));
        assert_eq!(s["key"][0].as_u64().unwrap() as u32, k);
        assert_eq!(s["metrics"]["time_ms"].as_f64().unwrap(), t);
    }

    let project = |log: &BTreeMap<u64, (u32, f64)>| {
        sps.iter()
            .map(|s| weight(s) as f64 * log[&iteration(s)].1)
            .sum::<f64>()
    };
    let actual = |log: &BTreeMap<u64, (u32, f64)>| log.values().map(|v| v.1).sum::<f64>();
    for (config, log) in [("baseline", &t1), ("compare", &t2)] {
        let row = doc["projection"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["config"] == config)
            .unwrap();
        let (p, a) = (project(log), actual(log));
        assert!((row["projected"].as_f64().unwrap() - p).abs() < 1e-6 * a);
        assert!((row["actual"].as_f64().unwrap() - a).abs() < 1e-6 * a);
        let error = 100.0 * (p - a).abs() / a;
        assert!((row["error_pct"].as_f64().unwrap() - error).abs() < 1e-9);
        let [lo, hi] = [
            row["interval"][0].as_f64().unwrap(),
            row["interval"][1].as_f64().unwrap(),
        ];
        assert!(lo <= p && p <= hi);
    }
    let speedup = project(&t1) / project(&t2);
    assert!((doc["speedup"]["projected"].as_f64().unwrap() - speedup).abs() < 1e-12);
    assert!((doc["speedup"]["actual"].as_f64().unwrap() - actual(&t1) / actual(&t2)).abs() < 1e-12);
    let profiled: f64 = sps.iter().map(|s| t1[&iteration(s)].1).sum();
    assert!((doc["profiling_reduction"].as_f64().unwrap() - actual(&t1) / profiled).abs() < 1e-9);
}

#[test]
fn select_with_a_target_is_confirmed_independently() {
    // One iteration per SeqPoint: the SeqPoints' own values are the projection.
    let doc = select_json(&["--target-error", "1", "--samples", "1"]);
    check(&doc);
    // The target's verdict agrees with the figures the JSON reports.
    let met = doc["selection"]["target_met"].as_bool().unwrap();
    let worst_error = doc["projection"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["error_pct"].as_f64().unwrap())
        .chain([doc["speedup"]["error_pct"].as_f64().unwrap()])
        .fold(0.0, f64::max);
    let widest = doc["projection"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let p = r["projected"].as_f64().unwrap();
            100.0 * (r["interval"][1].as_f64().unwrap() - p) / p
        })
        .fold(0.0, f64::max);
    // The speedup's interval counts too.
    let speedup = &doc["speedup"];
    let p = speedup["projected"].as_f64().unwrap();
    let widest = widest.max(100.0 * (speedup["interval"][1].as_f64().unwrap() - p) / p);
    assert_eq!(
        met,
        worst_error <= 1.0 && widest <= 1.0,
        "error {worst_error}, interval {widest}"
    );
}

#[test]
fn every_method_and_pick_is_confirmed_independently() {
    for method in ["optimal", "uniform", "quantile", "kmeans"] {
        for pick in ["nearest-mean", "median", "centroid", "mode"] {
            check(&select_json(&[
                "--bins", "12", "--method", method, "--pick", pick,
            ]));
        }
    }
}

#[test]
fn measured_rule_alone_accepts_fewer_bins_than_the_interval_rule() {
    let measured = select_json(&["--target-error", "1", "--target-by", "measured"]);
    let interval = select_json(&["--target-error", "1"]);
    let bins = |d: &Value| d["selection"]["bins"].as_u64().unwrap();
    assert!(
        bins(&measured) < bins(&interval),
        "{} vs {}",
        bins(&measured),
        bins(&interval)
    );
}
