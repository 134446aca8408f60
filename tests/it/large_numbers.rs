//! Large numbers: keys up to u32::MAX and metrics up to 1e12 over millions of rows keep the
//! whole-run totals exact to within a few units in the last place, checked against an exact
//! integer reference (every generated metric is a multiple of 1/1024, so its sum is exact in
//! i128). The 10M-row run is `#[ignore]`d for debug builds; 1M rows run every time.

use seqpoint::project::actual_totals;
use seqpoint::runlog::{ConfigRole, Configuration, MetricColumn, SkippedRows};
use seqpoint::select::{BinCount, SelectOptions};
use seqpoint::stats::compensated_sum;
use seqpoint::{run_selection, KeyGroups, Method, RunLog};

/// Distinct keys spread over the whole u32 range, ends included.
const KEYS: [u32; 16] = [
    0,
    1,
    77,
    65_535,
    1 << 24,
    123_456_789,
    1 << 31,
    3_000_000_000,
    3_999_999_999,
    4_100_000_000,
    4_200_000_000,
    4_294_000_000,
    4_294_967_000,
    4_294_967_293,
    4_294_967_294,
    u32::MAX,
];

/// A metric that depends on the key alone, in units of 1/1024, from ~1e-3 up to 1e12: tiny and
/// huge values side by side are what loses precision in a naive sum.
fn metric_units(key_index: usize) -> i128 {
    let scale = [1i128, 1_000, 1_000_000_000, 1_000_000_000_000 * 1024];
    (key_index as i128 * 7 + 1) * scale[key_index % 4] % (1_000_000_000_000 * 1024 + 1)
}

/// A deterministic pseudo-random stream (xorshift64*), so the row order is unsorted.
struct Stream(u64);

impl Stream {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// `n` rows with keys from `KEYS`, and the exact total of the metric in 1/1024 units.
fn big_log(n: usize) -> (RunLog, i128) {
    let mut stream = Stream(0x5eed);
    let mut keys = Vec::with_capacity(n);
    let mut values = Vec::with_capacity(n);
    let mut exact = 0i128;
    for _ in 0..n {
        let k = (stream.next() % KEYS.len() as u64) as usize;
        let units = metric_units(k);
        keys.push(KEYS[k]);
        values.push(units as f64 / 1024.0);
        exact += units;
    }
    let log = RunLog {
        source: "generated".to_string(),
        key_names: vec!["seq_len".to_string()],
        iterations: seqpoint::runlog::Iterations::dense(n),
        epochs: None,
        keys,
        configs: vec![Configuration {
            role: ConfigRole::Baseline,
            source: "generated".to_string(),
            metrics: vec![MetricColumn {
                name: "time_ms".to_string(),
                values,
            }],
            measurement_like: Vec::new(),
        }],
        skipped: SkippedRows::default(),
        proxy: None,
        iteration_like: Vec::new(),
    };
    (log, exact)
}

fn relative_error(value: f64, exact_units: i128) -> f64 {
    let exact = exact_units as f64 / 1024.0;
    (value - exact).abs() / exact
}

fn check_totals(n: usize) {
    let (log, exact) = big_log(n);
    assert!(log.keys.contains(&u32::MAX) && log.keys.contains(&0));
    let max = log.configs[0].metrics[0]
        .values
        .iter()
        .copied()
        .fold(0.0, f64::max);
    assert!((0.9e12..=1e12).contains(&max), "metrics reach 1e12: {max}");

    // The compensated total is the exact total rounded once (within 2 units in the last place).
    let total = compensated_sum(log.configs[0].metrics[0].values.iter().copied());
    assert!(
        relative_error(total, exact) <= 2.0 * f64::EPSILON,
        "compensated total {total} off by {:e}",
        relative_error(total, exact)
    );
    assert_eq!(actual_totals(&log)[0][0], total);
    // The data is hard enough to matter: a naive left-to-right sum misses the bound by far
    // (about 8e-13 relative at 1M rows).
    let naive: f64 = log.configs[0].metrics[0].values.iter().sum();
    assert!(relative_error(naive, exact) > 100.0 * f64::EPSILON);

    // Key groups hold every row once, and their sums add up to the same total.
    let groups = KeyGroups::from_log(&log);
    assert_eq!(groups.len(), KEYS.len());
    assert_eq!(groups.iterations(), n as u64);
    assert_eq!(groups.keys.last(), Some(&u32::MAX));
    let grouped = compensated_sum(groups.moments[0][0].iter().map(|m| m.sum));
    assert!(relative_error(grouped, exact) <= 4.0 * f64::EPSILON);

    // One SeqPoint per key with a key-determined metric projects the total exactly.
    let options = SelectOptions {
        method: Some(Method::Optimal),
        bins: BinCount::Fixed(KEYS.len()),
        max_bins: KEYS.len(),
        ..SelectOptions::default()
    };
    let selection = run_selection(&log, &options).unwrap();
    assert_eq!(
        selection.seqpoints.iter().map(|s| s.weight).sum::<u64>(),
        n as u64
    );
    let row = &selection.projection.totals[0];
    assert!(
        relative_error(row.projected, exact) <= 4.0 * f64::EPSILON,
        "projected {} off by {:e}",
        row.projected,
        relative_error(row.projected, exact)
    );
    assert!(row.error_pct.unwrap() <= 1e-12, "{row:?}");
    assert!(row.interval[0] <= row.projected && row.projected <= row.interval[1]);
}

#[test]
fn one_million_rows_keep_exact_totals() {
    check_totals(1_000_000);
}

#[test]
#[ignore = "10M rows: about a minute in a debug build; run with --ignored or --release"]
fn ten_million_rows_keep_exact_totals() {
    check_totals(10_000_000);
}

/// A run of 60 iterations whose iteration 7 measured `at_seven` (the rest 10-16 ms).
fn run_with(dir: &std::path::Path, name: &str, at_seven: &str) {
    let mut text = String::from("iteration,seq_len,time_ms\n");
    for i in 0..60 {
        let ms = if i == 7 {
            at_seven.to_string()
        } else {
            (10 + i % 7).to_string()
        };
        text.push_str(&format!("{i},{},{ms}\n", 5 + i % 7));
    }
    std::fs::write(dir.join(name), text).unwrap();
}

fn seqpoint(dir: &std::path::Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = crate::common::seqpoint_in(dir).args(args).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every number in a JSON document is finite: no `null` stands where a figure is expected.
fn figures_finite(value: &serde_json::Value, path: &str) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, v) in map {
                figures_finite(v, &format!("{path}.{key}"));
            }
        }
        serde_json::Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                figures_finite(v, &format!("{path}[{i}]"));
            }
        }
        serde_json::Value::Number(n) => assert!(n.as_f64().unwrap().is_finite(), "{path}"),
        _ => {}
    }
}

/// Measurements whose totals, squares or ratios would overflow are refused where they stand
/// (file, line, column); measurements at the edge of what is accepted project finite figures.
#[test]
fn measurements_that_would_overflow_are_refused_with_their_place() {
    let dir = tempfile::tempdir().unwrap();
    run_with(dir.path(), "r.csv", "12");
    let (code, _, stderr) = seqpoint(dir.path(), &["select", "r.csv", "-k", "3", "-o", "sp.json"]);
    assert_eq!(code, Some(0), "{stderr}");
    for (value, expected) in [
        ("1e300", "expected a measurement of at most 1e30"),
        ("1.7e308", "expected a measurement of at most 1e30"),
        ("1e-300", "expected 0 or a measurement of at least 1e-30"),
    ] {
        std::fs::write(
            dir.path().join("m.csv"),
            format!("seqpoint,time_ms\n0,12\n1,{value}\n2,14\n"),
        )
        .unwrap();
        let (code, stdout, stderr) = seqpoint(dir.path(), &["project", "sp.json", "m.csv"]);
        assert_eq!(code, Some(1), "{value}: {stdout}");
        assert!(
            stderr.starts_with(&format!(
                "error: m.csv:3:2: column 'time_ms': found \"{value}\""
            )) && stderr.contains(expected),
            "{value}: {stderr}"
        );
    }
    // select --compare: 1e150 against 1e-300 made a speedup of inf with error 0.000.
    run_with(dir.path(), "big.csv", "1e150");
    run_with(dir.path(), "tiny.csv", "1e-300");
    let (code, _, stderr) = seqpoint(dir.path(), &["select", "big.csv", "--compare", "r.csv"]);
    assert_eq!(code, Some(1));
    assert!(
        stderr.starts_with("error: big.csv:9:3: column 'time_ms'"),
        "{stderr}"
    );
    let (code, _, stderr) = seqpoint(dir.path(), &["select", "r.csv", "--compare", "tiny.csv"]);
    assert_eq!(code, Some(1));
    assert!(
        stderr.starts_with("error: tiny.csv:9:3: column 'time_ms'"),
        "{stderr}"
    );

    // The edges themselves are read, and every figure written is finite.
    run_with(dir.path(), "edge_big.csv", "1e30");
    run_with(dir.path(), "edge_tiny.csv", "1e-30");
    for args in [
        &[
            "select",
            "edge_big.csv",
            "--compare",
            "edge_tiny.csv",
            "-k",
            "7",
            "--format",
            "json",
        ][..],
        &[
            "select",
            "edge_tiny.csv",
            "--compare",
            "edge_big.csv",
            "-k",
            "7",
            "--format",
            "json",
        ],
    ] {
        let (code, stdout, stderr) = seqpoint(dir.path(), args);
        assert_eq!(code, Some(0), "{args:?}: {stderr}");
        let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        figures_finite(&doc["projection"], "projection");
        figures_finite(&doc["speedup"], "speedup");
        assert!(
            doc["speedup"]["projected"].as_f64().is_some(),
            "{}",
            doc["speedup"]
        );
    }
    std::fs::write(
        dir.path().join("m.csv"),
        "seqpoint,time_ms\n0,1e30\n1,1e-30\n2,14\n",
    )
    .unwrap();
    let (code, stdout, stderr) = seqpoint(
        dir.path(),
        &["project", "sp.json", "m.csv", "--format", "json"],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let doc: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    figures_finite(&doc, "report");
    assert!(doc["metrics"][0]["speedup"].as_f64().is_some(), "{doc}");
}
