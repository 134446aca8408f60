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

use crate::common::torch_required;
use crate::python_logger::{examples, python};
use seqpoint::stats::Z95;

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

/// One step of the timed log: its epoch, padded length and time.
struct TimedStep {
    epoch: u64,
    seq_len: u64,
    time_ms: f64,
}

/// `iteration -> step` of the JSON Lines run log `TimedLog` writes.
fn timed_steps(path: &Path) -> BTreeMap<u64, TimedStep> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| {
            let row: serde_json::Value = serde_json::from_str(line).unwrap();
            let step = TimedStep {
                epoch: row["epoch"].as_u64().unwrap(),
                seq_len: row["seq_len"].as_u64().unwrap(),
                time_ms: row["time_ms"].as_f64().unwrap(),
            };
            (row["iteration"].as_u64().unwrap(), step)
        })
        .collect()
}

/// How much slower the first epoch's steps run than later steps of the same padded length
/// (median of the ratios, in percent): the one-time costs of a fresh process (allocator
/// growth, first-touch page faults) that a listed early iteration carries into the
/// projection, multiplied by its weight. None when no length repeats.
fn first_epoch_slowdown_pct(steps: &BTreeMap<u64, TimedStep>) -> Option<f64> {
    let mut later: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for step in steps.values().filter(|s| s.epoch > 0) {
        later.entry(step.seq_len).or_default().push(step.time_ms);
    }
    let mut ratios: Vec<f64> = steps
        .values()
        .filter(|s| s.epoch == 0)
        .filter_map(|s| {
            let times = later.get(&s.seq_len)?;
            let mean = times.iter().sum::<f64>() / times.len() as f64;
            Some(100.0 * (s.time_ms / mean - 1.0))
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    (!ratios.is_empty()).then(|| ratios[ratios.len() / 2])
}

/// `(iteration, seqpoint, time_ms)` rows of the measured.csv written by profile_seqpoints.
fn measured_rows(path: &Path) -> Vec<(u64, usize, f64)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("iteration,seqpoint,time_ms,traced"));
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

/// How far from the projection the actual total may lie, in multiples of the 95% interval's
/// half-width: 3.25, that is 6.4 of the interval's own standard deviations. The step times are
/// real CPU times, so this is one random draw per run and its false-failure rate is designed:
/// the interval's variance is estimated (Student's t, 38 degrees of freedom: 46 measured steps
/// over 8 bins), so with no shift the bound is missed 1.8 times in 10^7 runs. With the largest
/// shift seen (a mean error of +1.7% over six CI runs) on the narrowest interval seen (±1.7%,
/// sd 0.87%), the bound (5.5%) lies 4.4 sd beyond the shift: 4 in 10^5 runs, and 6 in 10^6 on
/// a ±2.5% interval. At 3 half-widths it was 1.8 in 10^4 there (3.9 sd; the 5 in 10^5 said
/// before was the normal tail, not t's). The test still catches what it is for: on a run with
/// the widest interval seen (±4.65%, bound ±15.1%), handing each SeqPoint its neighbour's
/// measurements (an id mix-up) put the projection +15.4% or +19.8% off, and measured times
/// inflated by 16% or more (a measuring step that times more than the step) fall outside
/// whatever the interval; smaller inflations are caught by `MEASURING_STEP_BOUND_PCT`. Whether
/// 95% intervals hold 95% of the time is the seeded redraw tests' question
/// (`interval_coverage`), not this single draw's; the report gives the 95% verdict beside.
const BOUND_IN_HALF_WIDTHS: f64 = 3.25;

/// How much the measuring step (`profile_seqpoints`, plain timing) may add to the projection
/// over the same iterations' times in the timed log, in percent. Both time the same steps in
/// the same run, so this is no sampling question: the bookkeeping around a step was +0.30%
/// (median of 17 runs) and +0.46% to +0.53% in 8 runs on a loaded machine, at most +0.83% for
/// one step; 5% is ten times the largest seen. A measuring step that took in the data loading,
/// the profiler's start and stop or a second step would pass the `>=` check step by step and,
/// where the interval is wide, the bound above; not this one.
const MEASURING_STEP_BOUND_PCT: f64 = 5.0;

#[test]
fn a_run_profiled_at_its_seqpoints_projects_its_own_total() {
    let name = "profile_e2e::a_run_profiled_at_its_seqpoints_projects_its_own_total";
    let Some(python) = python(name) else { return };
    let torch = has_torch(&python);
    if torch_required() {
        assert!(
            torch,
            "torch is required here (CI=true or SEQPOINT_REQUIRE_TORCH=1) but {python} cannot \
             import it"
        );
    } else if !torch {
        crate::common::note(&format!(
            "NOTE {name}: {python} has no torch; the pure-Python stand-in runs instead"
        ));
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

    let steps = timed_steps(&out.join("run.jsonl"));
    let timed: BTreeMap<u64, f64> = steps.iter().map(|(&it, s)| (it, s.time_ms)).collect();
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
    // The same listed iterations projected from their timed-log times: the projection
    // without the measuring step's own bookkeeping.
    let mut inner = String::from("iteration,seqpoint,time_ms\n");
    for &(iteration, seqpoint, _) in &rows {
        inner.push_str(&format!("{iteration},{seqpoint},{}\n", timed[&iteration]));
    }
    std::fs::write(out.join("inner.csv"), inner).unwrap();
    let (inner_projected, _, _) = project(out, "seqpoints.json", "inner.csv");
    let half_width = (hi - lo) / 2.0;
    let error = projected - actual;
    let sd = half_width / Z95;
    let listed_early = rows
        .iter()
        .filter(|&&(iteration, _, _)| steps[&iteration].epoch == 0)
        .count();
    // What the measuring step adds around the timed one (the timed log's own bookkeeping).
    let mut enclosing: Vec<f64> = rows
        .iter()
        .map(|&(iteration, _, ms)| 100.0 * (ms / timed[&iteration] - 1.0))
        .collect();
    enclosing.sort_by(f64::total_cmp);
    let mut report = format!(
        "{}: projected {projected:.1} ms in [{lo:.1}, {hi:.1}] (95%, ±{:.2}%), actual \
         {actual:.1} ms: error {:+.2}% = {:+.2} sd, {} the 95% interval; the test's bound \
         is ±{:.2}% ({BOUND_IN_HALF_WIDTHS} half-widths)\n\
         {} of {} iterations measured ({listed_early} in the first epoch), each {:+.2}% over \
         its timed step (median; largest {:+.2}%); projected from the timed steps instead: \
         {:+.2}%; first-epoch steps {} over later steps of the same length (median)\n{said}",
        if torch {
            "PyTorch transformer layer"
        } else {
            "pure-Python stand-in"
        },
        100.0 * half_width / projected,
        100.0 * error / actual,
        error / sd,
        if lo <= actual && actual <= hi {
            "inside"
        } else {
            "OUTSIDE"
        },
        100.0 * BOUND_IN_HALF_WIDTHS * half_width / projected,
        rows.len(),
        logged_iterations,
        enclosing[enclosing.len() / 2],
        enclosing[enclosing.len() - 1],
        100.0 * (inner_projected - actual) / actual,
        first_epoch_slowdown_pct(&steps).map_or("-".to_string(), |p| format!("{p:+.2}%")),
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
            .map(|(it, sp)| format!("seqpoint-{sp}-iter{it}.pt.trace.json"))
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
                .trim_end_matches(".pt.trace.json");
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
    let measuring_step_pct = 100.0 * (projected / inner_projected - 1.0);
    assert!(
        measuring_step_pct <= MEASURING_STEP_BOUND_PCT,
        "the measuring step adds {measuring_step_pct:+.2}% to the projection over the timed \
         steps of the same iterations (at most {MEASURING_STEP_BOUND_PCT}%): {report}"
    );
    assert!(
        error.abs() <= BOUND_IN_HALF_WIDTHS * half_width,
        "the whole run's total is more than {BOUND_IN_HALF_WIDTHS} half-widths of the 95% \
         interval from the projection: {report}"
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
