//! `--exclude A-B` and `--warmup` edge cases from the command line: what `select` picks and
//! records, how `project` leaves measured rows out, and the errors for ranges and warm-ups
//! that cannot work.

use crate::common::{json_output, seqpoint_in};
use serde_json::Value;

fn iterations_of(doc: &Value) -> Vec<u64> {
    doc["seqpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|sp| sp["iteration"].as_u64().unwrap())
        .collect()
}

fn weights_of(doc: &Value) -> u64 {
    doc["seqpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|sp| sp["weight"].as_u64().unwrap())
        .sum()
}

/// Run `seqpoint ARGS` from the repository root and return (success, stderr).
fn run(args: &[&str]) -> (bool, String) {
    let out = seqpoint_in(std::path::Path::new("."))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_warmup_covering_whole_bins_picks_no_warmup_iteration() {
    // The bundled sample has 450 iterations; with --warmup 440 three of four bins hold only
    // warm-up iterations. They join the nearest bin that has a later iteration.
    for method in ["optimal", "quantile", "uniform", "kmeans"] {
        let doc = json_output(&[
            "select", "--warmup", "440", "--bins", "4", "--method", method, "--format", "json",
        ]);
        let picked = iterations_of(&doc);
        assert!(picked.iter().all(|&i| i >= 440), "{method}: {picked:?}");
        assert_eq!(weights_of(&doc), 450, "{method}");
    }
}

#[test]
fn a_warmup_at_or_past_the_run_is_refused() {
    for warmup in ["450", "451", "100000"] {
        let (ok, err) = run(&["select", "--warmup", warmup]);
        assert!(!ok);
        assert!(
            err.contains(&format!(
                "--warmup {warmup}: covers the whole run (450 iterations)"
            )),
            "{err}"
        );
    }
    let (ok, err) = run(&[
        "select", "--warmup", "120", "--strata", "phases:4", "--bins", "2",
    ]);
    assert!(!ok);
    assert!(err.contains("covers every iteration of phase 1"), "{err}");
}

#[test]
fn excluded_ranges_are_merged_recorded_and_never_picked() {
    let doc = json_output(&[
        "select",
        "--exclude",
        "0-99",
        "--exclude",
        "50-149",
        "--exclude",
        "400-449",
        "--bins",
        "8",
        "--format",
        "json",
    ]);
    assert_eq!(
        doc["selection"]["exclude"],
        serde_json::json!(["0-149", "400-449"])
    );
    assert_eq!(doc["input"]["iterations"], 250);
    assert_eq!(doc["input"]["excluded_iterations"], 200);
    assert_eq!(weights_of(&doc), 250);
    for i in iterations_of(&doc) {
        assert!((150..400).contains(&i), "picked {i}");
    }
    for sp in doc["seqpoints"].as_array().unwrap() {
        for alt in sp["alternates"].as_array().unwrap() {
            assert!((150..400).contains(&alt.as_u64().unwrap()), "{alt}");
        }
    }
    // The actual totals are those of the kept iterations: the sum of 150-399 of the log.
    let text = std::fs::read_to_string("assets/speech_t1.csv").unwrap();
    let kept: f64 = text
        .lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let it: u64 = f[0].parse().unwrap();
            (150..400)
                .contains(&it)
                .then(|| f[4].parse::<f64>().unwrap())
        })
        .sum();
    let actual = doc["projection"][0]["actual"].as_f64().unwrap();
    assert!((actual - kept).abs() < 1e-6 * kept, "{actual} vs {kept}");
    // Without --exclude the field is not written.
    let plain = json_output(&["select", "--bins", "8", "--format", "json"]);
    assert!(plain["selection"].get("exclude").is_none());
    assert!(plain["input"].get("excluded_iterations").is_none());
}

#[test]
fn bad_ranges_get_clear_errors() {
    for (range, expect) in [
        (
            "10-4",
            "the iteration range \"10-4\" is reversed: write the first iteration first (4-10)",
        ),
        (
            "400-500",
            "--exclude 400-500: reaches outside the run: its iterations are 0-449",
        ),
        (
            "0-449",
            "--exclude 0-449: leaves no iteration of the run (0-449)",
        ),
        ("ten", "expected A-B with A and B iteration numbers"),
    ] {
        let (ok, err) = run(&["select", "--exclude", range]);
        assert!(!ok, "{range}");
        assert!(err.contains(expect), "{range}: {err}");
    }
}

#[test]
fn project_leaves_out_measured_rows_of_excluded_iterations() {
    let dir = tempfile::tempdir().unwrap();
    let seqpoints = dir.path().join("seqpoints.json");
    let out = seqpoint_in(std::path::Path::new("."))
        .args(["select", "--bins", "4", "--samples", "2", "-o"])
        .arg(&seqpoints)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&std::fs::read(&seqpoints).unwrap()).unwrap();
    // Each planned iteration measured once on the two-thread run (its logged time).
    let t2 = std::fs::read_to_string("assets/speech_t2.csv").unwrap();
    let time_of = |it: u64| -> String {
        t2.lines()
            .nth(it as usize + 1)
            .unwrap()
            .split(',')
            .nth(4)
            .unwrap()
            .to_string()
    };
    let profile = doc["plan"]["profile"].as_array().unwrap();
    let mut measured = String::from("iteration,time_ms\n");
    for row in profile {
        let it = row["iteration"].as_u64().unwrap();
        measured.push_str(&format!("{it},{}\n", time_of(it)));
    }
    let measured_path = dir.path().join("measured.csv");
    std::fs::write(&measured_path, &measured).unwrap();
    // Leave out one extra sample (not a SeqPoint's own iteration).
    let own: Vec<u64> = iterations_of(&doc);
    let extra = profile
        .iter()
        .map(|r| r["iteration"].as_u64().unwrap())
        .find(|i| !own.contains(i))
        .unwrap();
    let project = |extra_args: &[&str]| {
        let mut cmd = seqpoint_in(std::path::Path::new("."));
        cmd.arg("project").arg(&seqpoints).arg(&measured_path);
        cmd.args(extra_args).args(["--format", "json"]);
        cmd.output().unwrap()
    };
    let all = project(&[]);
    assert!(all.status.success());
    let range = format!("{extra}-{extra}");
    let fewer = project(&["--exclude", &range]);
    assert!(
        fewer.status.success(),
        "{}",
        String::from_utf8_lossy(&fewer.stderr)
    );
    let note = String::from_utf8_lossy(&fewer.stderr);
    assert!(
        note.contains(&format!("--exclude {range} left out 1 measured row(s)")),
        "{note}"
    );
    assert_ne!(
        all.stdout, fewer.stdout,
        "the left-out sample changes the projection"
    );
    // The projection records what it left out; one without --exclude records nothing.
    let json = |out: &std::process::Output| -> serde_json::Value {
        serde_json::from_slice(&out.stdout).unwrap()
    };
    assert_eq!(json(&fewer)["excluded"], serde_json::json!([range]));
    assert!(json(&all).get("excluded").is_none());
    // Rows that do not say which iteration they measured cannot be excluded.
    let by_id = dir.path().join("by_id.csv");
    std::fs::write(&by_id, "seqpoint,time_ms\n0,700\n1,800\n2,900\n3,1000\n").unwrap();
    let out = seqpoint_in(std::path::Path::new("."))
        .arg("project")
        .arg(&seqpoints)
        .arg(&by_id)
        .args(["--exclude", "0-10"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--exclude needs an 'iteration' column"),
        "{err}"
    );
}

/// `select --exclude` says how many iterations its totals stand for, in the header and the
/// cost line, as its JSON counts them.
#[test]
fn the_header_and_cost_count_the_kept_iterations() {
    let args = ["select", "--exclude", "283-416", "--bins", "8"];
    let out = seqpoint_in(std::path::Path::new("."))
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let doc = json_output(&[&args[..], &["--format", "json"]].concat());
    let (kept, excluded) = (
        doc["input"]["iterations"].as_u64().unwrap(),
        doc["input"]["excluded_iterations"].as_u64().unwrap(),
    );
    assert_eq!((kept, excluded), (316, 134));
    let header = text.lines().next().unwrap();
    assert!(
        header.contains(&format!(
            ": {kept} of {} iterations ({excluded} excluded), 8 SeqPoints",
            kept + excluded
        )),
        "{header}"
    );
    let to_profile = doc["iterations_to_profile"].as_u64().unwrap();
    let cost = format!(
        "profile {to_profile} of {kept} iterations ({:.1}x fewer)",
        kept as f64 / to_profile as f64
    );
    assert!(text.contains(&cost), "{cost} not in\n{text}");
    // Without --exclude the header counts the run.
    let plain = seqpoint_in(std::path::Path::new("."))
        .args(["select", "--bins", "8"])
        .output()
        .unwrap();
    let plain = String::from_utf8(plain.stdout).unwrap();
    assert!(plain
        .lines()
        .next()
        .unwrap()
        .contains(": 450 iterations, 8 SeqPoints"));
}

/// `--exclude` leaves a window's measurements out, not its work: `project` counts the window's
/// iterations at their own lengths. Hand-built run: 600 iterations of 10 lengths (time = the
/// length, exact per length), the window 200-299 holds only the three longest lengths and runs
/// 20% slow on the baseline; the new configuration takes exactly half the clean time. Each
/// excluded iteration must land in the bin holding its length, and the projection of the whole
/// run is then exact: the new total half the clean total, the baseline total the clean one
/// (the window counted at its lengths' means over the kept iterations), the speedup 2. Rescaled
/// uniformly instead (what an older SeqPoints file gets with `--run-iterations`), the window
/// would count at the rest's mix, 10% low here.
#[test]
fn project_counts_the_excluded_window_at_its_own_lengths() {
    let lengths: Vec<u64> = (0..600u64)
        .map(|i| {
            if (200..300).contains(&i) {
                800 + 100 * (i % 3)
            } else {
                100 + 100 * (i % 10)
            }
        })
        .collect();
    let slowed = |i: usize| if (200..300).contains(&i) { 1.2 } else { 1.0 };
    let mut log = String::from("iteration,seq_len,time_ms\n");
    for (i, &len) in lengths.iter().enumerate() {
        log.push_str(&format!("{i},{len},{}\n", len as f64 * slowed(i)));
    }
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("run.csv");
    std::fs::write(&log_path, log).unwrap();
    let doc_path = dir.path().join("seqpoints.json");
    let out = seqpoint_in(dir.path())
        .args([
            "select",
            "run.csv",
            "--exclude",
            "200-299",
            "--bins",
            "4",
            "--samples",
            "2",
        ])
        .args(["-o", "seqpoints.json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&std::fs::read(&doc_path).unwrap()).unwrap();
    // Every excluded iteration in the bin holding its length, counted once.
    let seqpoints = doc["seqpoints"].as_array().unwrap();
    for sp in seqpoints {
        let (lo, hi) = (
            sp["bin"]["min"][0].as_u64().unwrap(),
            sp["bin"]["max"][0].as_u64().unwrap(),
        );
        let held = (200..300)
            .filter(|&i| (lo..=hi).contains(&lengths[i]))
            .count() as u64;
        assert_eq!(sp["excluded"].as_u64().unwrap_or(0), held, "bin {lo}-{hi}");
    }
    // Measure the plan on the new configuration (half the clean time).
    let mut measured = String::from("iteration,time_ms\n");
    for row in doc["plan"]["profile"].as_array().unwrap() {
        let it = row["iteration"].as_u64().unwrap();
        measured.push_str(&format!("{it},{}\n", lengths[it as usize] as f64 / 2.0));
    }
    std::fs::write(dir.path().join("measured.csv"), measured).unwrap();
    let project = |document: &str, extra: &[&str]| -> Value {
        let out = seqpoint_in(dir.path())
            .args(["project", document, "measured.csv", "--format", "json"])
            .args(extra)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let clean: f64 = lengths.iter().map(|&l| l as f64).sum();
    let report = project("seqpoints.json", &[]);
    assert_eq!(report["logged_iterations"], 600);
    assert_eq!(report["excluded_in_bins"], 100);
    let metric = &report["metrics"][0];
    let close = |a: f64, b: f64| (a / b - 1.0).abs() < 1e-9;
    let (new, baseline, speedup) = (
        metric["projected_total"].as_f64().unwrap(),
        metric["baseline_total"].as_f64().unwrap(),
        metric["speedup"].as_f64().unwrap(),
    );
    assert!(close(new, clean / 2.0), "{new} vs {}", clean / 2.0);
    assert!(close(baseline, clean), "{baseline} vs {clean}");
    assert!(close(speedup, 2.0), "{speedup}");
    // The same document without the placed window (as written before): rescaled uniformly.
    let mut old = doc.clone();
    for sp in old["seqpoints"].as_array_mut().unwrap() {
        sp.as_object_mut().unwrap().remove("excluded");
        for stats in sp["bin_stats"].as_object_mut().unwrap().values_mut() {
            stats.as_object_mut().unwrap().remove("excluded_mean");
        }
    }
    std::fs::write(dir.path().join("old.json"), old.to_string()).unwrap();
    let rescaled = project("old.json", &["--run-iterations", "600"]);
    let rescaled = rescaled["metrics"][0]["projected_total"].as_f64().unwrap();
    assert!(
        rescaled / (clean / 2.0) - 1.0 < -0.05,
        "{rescaled} vs {}",
        clean / 2.0
    );
}
