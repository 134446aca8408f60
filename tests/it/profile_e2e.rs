//! From a training script to whole-run figures, for real: a tiny sequence model's dry pass,
//! `seqpoint select` on the proxy cost, a training run that measures only the listed
//! iterations through `profile_seqpoints` (and times every iteration with `TimedLog`),
//! `seqpoint project`, and the whole run's actual total against the projected interval.
//! With torch (CI points `SEQPOINT_PYTHON` at one that has it, and sets
//! `SEQPOINT_REQUIRE_TORCH=1`) the model is a transformer layer and every listed iteration
//! leaves a torch.profiler trace; without it the pure-Python stand-in walks the same path.
//! Step times are the process's CPU time, which other programs on the machine do not inflate.
//! Also the simulator path: `--format simpoints` files and `project` on the JSON beside them.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use crate::python_logger::{examples, python};

/// The `seqpoint` binary built for these tests, run from `dir`.
fn seqpoint_in(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_seqpoint"));
    cmd.current_dir(dir);
    cmd
}

fn run_ok(cmd: &mut Command, what: &str) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn has_torch(python: &str) -> bool {
    Command::new(python)
        .args(["-c", "import torch"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `iteration -> time_ms` of a JSON Lines run log.
fn times_of(path: &Path) -> BTreeMap<u64, f64> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| {
            let row: serde_json::Value = serde_json::from_str(line).unwrap();
            (
                row["iteration"].as_u64().unwrap(),
                row["time_ms"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// `(iteration, seqpoint, time_ms)` rows of the measured.csv written by profile_seqpoints.
fn measured_rows(path: &Path) -> Vec<(u64, usize, f64)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("iteration,seqpoint,time_ms"));
    lines
        .map(|line| {
            let f: Vec<&str> = line.split(',').collect();
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn a_run_profiled_at_its_seqpoints_projects_its_own_total() {
    let Some(python) = python() else { return };
    let torch = has_torch(&python);
    if std::env::var("SEQPOINT_REQUIRE_TORCH").is_ok_and(|v| v == "1") {
        assert!(
            torch,
            "SEQPOINT_REQUIRE_TORCH=1 but {python} cannot import torch"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let script = examples().join("tiny_profile.py");
    let model: &[&str] = if torch { &[] } else { &["--no-torch"] };

    // 1. Dry pass: lengths only.
    run_ok(
        Command::new(&python)
            .arg(&script)
            .args(["lengths", "--out"])
            .arg(out)
            .args(model),
        "dry pass",
    );
    // 2. SeqPoints on the proxy cost, six iterations per SeqPoint: a lengths-only selection
    //    knows nothing of the step times' own spread, and repeated samples bring it into the
    //    interval.
    run_ok(
        seqpoint_in(out).args([
            "select",
            "lengths.jsonl",
            "--cost",
            "linear",
            "--warmup",
            "5",
            "--bins",
            "8",
            "--samples",
            "6",
            "-o",
            "seqpoints.json",
        ]),
        "seqpoint select",
    );
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("seqpoints.json")).unwrap())
            .unwrap();
    let planned: BTreeMap<u64, usize> = doc["plan"]["profile"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["iteration"].as_u64().unwrap(),
                r["seqpoint"].as_u64().unwrap() as usize,
            )
        })
        .collect();
    // 3. Train, measuring only the listed iterations (plain timing through
    //    profile_seqpoints), and timing every one beside (TimedLog). CPU time: the tests
    //    running beside this one on a small machine would inflate wall times in bursts that
    //    no sample of iterations can see coming.
    let said = run_ok(
        Command::new(&python)
            .arg(&script)
            .arg("profile")
            .arg(out.join("seqpoints.json"))
            .arg("--out")
            .arg(out)
            .arg("--timed-log")
            .arg(out.join("run.jsonl"))
            .args(["--clock", "cpu", "--no-traces"])
            .args(model),
        "timed run",
    );
    // 4. Whole-run figures from the measurements, read as profile_seqpoints wrote them.
    let projection = project(out, "seqpoints.json", "profiles/measured.csv");

    let timed = times_of(&out.join("run.jsonl"));
    let logged_iterations = doc["input"]["iterations"].as_u64().unwrap();
    assert_eq!(
        timed.len() as u64,
        logged_iterations,
        "same batches in both passes"
    );
    let rows = measured_rows(&out.join("profiles/measured.csv"));
    let measured: BTreeMap<u64, usize> = rows.iter().map(|&(it, sp, _)| (it, sp)).collect();
    assert_eq!(
        measured, planned,
        "exactly the planned iterations, each once"
    );
    for &(iteration, _, time_ms) in &rows {
        // The measured step encloses the timed one.
        assert!(time_ms >= timed[&iteration], "iteration {iteration}");
    }
    assert_eq!(json_files(&out.join("profiles")), Vec::<String>::new());

    let (projected, lo, hi) = projection;
    let actual: f64 = timed.values().sum();
    // What the measuring step adds around the timed one (the timed log's own bookkeeping).
    let mut enclosing: Vec<f64> = rows
        .iter()
        .map(|&(iteration, _, ms)| 100.0 * (ms / timed[&iteration] - 1.0))
        .collect();
    enclosing.sort_by(f64::total_cmp);
    let mut report = format!(
        "{}: projected {projected:.1} ms in [{lo:.1}, {hi:.1}], actual {actual:.1} ms \
         ({:+.2}%); {} of {} iterations measured, each {:+.2}% over its timed step (median; \
         largest {:+.2}%)\n{said}",
        if torch {
            "PyTorch transformer layer"
        } else {
            "pure-Python stand-in"
        },
        100.0 * (projected - actual) / actual,
        rows.len(),
        logged_iterations,
        enclosing[enclosing.len() / 2],
        enclosing[enclosing.len() - 1],
    );

    // 3'. With torch, the same run under torch.profiler: one Chrome trace per listed
    //     iteration, and a measured.csv that `project` reads too. Its times carry the
    //     profiler's own cost, so only the run above is held to the interval.
    if torch {
        let traced = out.join("traced");
        let said = run_ok(
            Command::new(&python)
                .arg(&script)
                .arg("profile")
                .arg(out.join("seqpoints.json"))
                .arg("--out")
                .arg(&traced)
                .args(["--clock", "cpu"]),
            "traced run",
        );
        let traces = json_files(&traced.join("profiles"));
        let mut expected: Vec<String> = planned
            .iter()
            .map(|(it, sp)| format!("seqpoint-{sp}-iter{it}.json"))
            .collect();
        expected.sort();
        assert_eq!(traces, expected);
        for name in &traces {
            let trace: serde_json::Value =
                serde_json::from_slice(&std::fs::read(traced.join("profiles").join(name)).unwrap())
                    .unwrap();
            let events = trace["traceEvents"].as_array().unwrap();
            // The trace holds its own iteration's step.
            let iteration = name
                .rsplit("iter")
                .next()
                .unwrap()
                .trim_end_matches(".json");
            let step = format!("ProfilerStep#{iteration}");
            assert!(events.iter().any(|e| e["name"] == step.as_str()), "{name}");
        }
        let traced_rows = measured_rows(&traced.join("profiles/measured.csv"));
        let traced_measured: BTreeMap<u64, usize> =
            traced_rows.iter().map(|&(it, sp, _)| (it, sp)).collect();
        assert_eq!(traced_measured, planned);
        let (traced_projected, traced_lo, traced_hi) =
            project(out, "seqpoints.json", "traced/profiles/measured.csv");
        report.push_str(&format!(
            "under torch.profiler: projected {traced_projected:.1} ms in [{traced_lo:.1}, \
             {traced_hi:.1}] ({:+.2}% against the actual total); {} traces: {}\n{said}",
            100.0 * (traced_projected - actual) / actual,
            traces.len(),
            traces.join(" "),
        ));
    }
    eprintln!("{report}");
    assert!(
        lo <= actual && actual <= hi,
        "the whole run's total is outside the projected interval: {report}"
    );
}

/// `seqpoint project SEQPOINTS MEASURED` run in `dir`: the projected total of `time_ms` and
/// its 95% interval.
fn project(dir: &Path, seqpoints: &str, measured: &str) -> (f64, f64, f64) {
    let out = run_ok(
        seqpoint_in(dir).args(["project", seqpoints, measured, "--format", "json"]),
        "seqpoint project",
    );
    let projection: serde_json::Value = serde_json::from_str(&out).unwrap();
    let time = &projection["metrics"][0];
    assert_eq!(time["metric"], "time_ms");
    let number = |v: &serde_json::Value| v.as_f64().unwrap();
    (
        number(&time["projected_total"]),
        number(&time["interval"][0]),
        number(&time["interval"][1]),
    )
}

/// The `.json` files of a folder, sorted.
fn json_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    names
}

#[test]
fn simpoint_files_and_the_json_beside_them_agree() {
    let dir = tempfile::tempdir().unwrap();
    // The bundled sample run and its second configuration.
    run_ok(
        seqpoint_in(dir.path()).args([
            "select",
            "--bins",
            "12",
            "--format",
            "simpoints",
            "-o",
            "speech",
        ]),
        "seqpoint select --format simpoints",
    );
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&read("speech.json")).unwrap();
    let seqpoints = doc["seqpoints"].as_array().unwrap();
    let total = doc["input"]["iterations"].as_u64().unwrap() as f64;
    let simpoints: Vec<(u64, u64)> = read("speech.simpoints")
        .lines()
        .map(|l| {
            let (it, id) = l.split_once(' ').unwrap();
            (it.parse().unwrap(), id.parse().unwrap())
        })
        .collect();
    let weights: BTreeMap<u64, f64> = read("speech.weights")
        .lines()
        .map(|l| {
            let (w, id) = l.split_once(' ').unwrap();
            (id.parse().unwrap(), w.parse().unwrap())
        })
        .collect();
    assert_eq!(simpoints.len(), 12);
    assert_eq!(weights.len(), 12);
    assert!((weights.values().sum::<f64>() - 1.0).abs() < 1e-12);
    for (sp, &(iteration, id)) in seqpoints.iter().zip(&simpoints) {
        assert_eq!(sp["iteration"].as_u64(), Some(iteration));
        assert_eq!(sp["id"].as_u64(), Some(id));
        let weight = sp["weight"].as_u64().unwrap();
        assert_eq!((weights[&id] * total).round() as u64, weight);
    }

    // A simulator's figures for the listed iterations, by id: here the second
    // configuration's logged times. `project` on the JSON beside the files reads them, and
    // projects what the selection projected for that configuration.
    let mut measured = String::from("seqpoint,time_ms\n");
    for sp in seqpoints {
        let time = sp["compare_metrics"]["time_ms"].as_f64().unwrap();
        measured.push_str(&format!("{},{time}\n", sp["id"]));
    }
    std::fs::write(dir.path().join("simulated.csv"), measured).unwrap();
    let out = run_ok(
        seqpoint_in(dir.path()).args([
            "project",
            "speech.json",
            "simulated.csv",
            "--metric",
            "time_ms",
            "--format",
            "json",
        ]),
        "seqpoint project",
    );
    let projection: serde_json::Value = serde_json::from_str(&out).unwrap();
    let projected = projection["metrics"][0]["projected_total"]
        .as_f64()
        .unwrap();
    let selected = doc["projection"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["config"] == "compare" && r["metric"] == "time_ms")
        .unwrap()["projected"]
        .as_f64()
        .unwrap();
    assert!(
        (projected - selected).abs() <= 1e-9 * selected,
        "{projected} vs {selected}"
    );

    // A second export never replaces the first.
    let again = seqpoint_in(dir.path())
        .args([
            "select",
            "--bins",
            "6",
            "--format",
            "simpoints",
            "-o",
            "speech",
        ])
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
    assert_eq!(simpoints.len(), read("speech.simpoints").lines().count());
}
