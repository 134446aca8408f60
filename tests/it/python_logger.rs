//! The way into the tool: logs written by the `seqpoint_log` package (and the tiny
//! example) load with the seqpoint library as they are. Skips, saying so, when Python is
//! absent (fails on CI, which requires it).

use std::path::{Path, PathBuf};
use std::process::Command;

use seqpoint::{load_run, run_selection, BinCount, LoadOptions, SelectOptions};

pub(crate) fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pytorch")
}

/// The Python to run the logger with: `SEQPOINT_PYTHON` (CI points it at an interpreter with
/// torch), else python3; None, with a `SKIP` line for `test`, when it does not run here (on
/// CI, where it is required, the test fails instead).
pub(crate) fn python(test: &str) -> Option<String> {
    let python = std::env::var("SEQPOINT_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let ok = Command::new(&python)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        crate::common::skip(test, &format!("{python} not found"));
    }
    ok.then_some(python)
}

fn run_python(python: &str, script: &str, dir: &Path) {
    let out = Command::new(python)
        .arg("-c")
        .arg(script)
        .env("PYTHONPATH", examples().join("src"))
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn dry_pass_and_timed_logs_load_as_run_logs() {
    let Some(python) = python("python_logger::dry_pass_and_timed_logs_load_as_run_logs") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // A list-based loader: 3 batches per epoch, 2 epochs; each batch a list of sequences.
    let script = r#"
import seqpoint_log
loader = [[[0] * 5, [0] * 9], [[0] * 3], [[0] * 12, [0] * 4, [0] * 7]]
seqpoint_log.dry_pass(loader, "lengths.jsonl", epochs=2)
ticks = iter(range(1000))
clock = lambda: next(ticks) * 0.004      # every step takes 4 ms
with seqpoint_log.TimedLog("run.jsonl", synchronize=None, energy=None, clock=clock) as log:
    for epoch in range(2):
        for batch in loader:
            with log.step(epoch=epoch, **seqpoint_log.describe_batch(batch)):
                pass
"#;
    run_python(&python, script, dir.path());

    let lengths = load_run(
        dir.path().join("lengths.jsonl").to_str().unwrap(),
        &LoadOptions::default(),
    )
    .unwrap();
    assert_eq!(lengths.len(), 6);
    assert_eq!(lengths.keys, vec![9, 3, 12, 9, 3, 12]);
    assert_eq!(
        lengths.epochs.map(|e| e.to_vec()),
        Some(vec![0, 0, 0, 1, 1, 1])
    );
    assert!(lengths.proxy.is_some(), "no metric: a proxy cost stands in");

    let run = load_run(
        dir.path().join("run.jsonl").to_str().unwrap(),
        &LoadOptions::default(),
    )
    .unwrap();
    assert_eq!(run.keys, lengths.keys, "same batches in both logs");
    assert_eq!(run.metric_names(), vec!["time_ms"]);
    let times = &run.configs[0].metrics[0].values;
    assert!(times.iter().all(|&t| (t - 4.0).abs() < 1e-9), "{times:?}");

    let selection = run_selection(
        &run,
        &SelectOptions {
            bins: BinCount::Fixed(2),
            ..SelectOptions::default()
        },
    )
    .unwrap();
    assert_eq!(selection.seqpoints.iter().map(|s| s.weight).sum::<u64>(), 6);
}

#[test]
fn the_tiny_example_writes_logs_seqpoint_reads() {
    let Some(python) = python("python_logger::the_tiny_example_writes_logs_seqpoint_reads") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(&python)
        .arg(examples().join("tiny_train.py"))
        .args(["--no-torch", "--utterances", "80", "--epochs", "2", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lengths = load_run(
        dir.path().join("lengths.jsonl").to_str().unwrap(),
        &LoadOptions::default(),
    )
    .unwrap();
    let run = load_run(
        dir.path().join("run.jsonl").to_str().unwrap(),
        &LoadOptions::default(),
    )
    .unwrap();
    // 80 utterances in batches of 8, two epochs.
    assert_eq!(run.len(), 20);
    assert_eq!(
        run.keys, lengths.keys,
        "the dry pass saw the training's batches"
    );
    assert_eq!(run.epoch_count(), Some(2));
    assert!(run.proxy.is_none());
    assert!(run.configs[0].metrics[0].values.iter().all(|&t| t > 0.0));
}

/// Whether `python` imports torch; when it does not, a `SKIP` line for `test` (on CI, where
/// torch is required, the test fails instead).
fn torch_or_skip(python: &str, test: &str) -> bool {
    let ok = Command::new(python)
        .args(["-c", "import torch"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            !crate::common::torch_required(),
            "{test}: torch is required here but {python} cannot import it"
        );
        crate::common::skip(test, &format!("{python} has no torch"));
    }
    ok
}

#[test]
fn a_two_rank_torchrun_job_writes_one_log_seqpoint_reads() {
    let name = "python_logger::a_two_rank_torchrun_job_writes_one_log_seqpoint_reads";
    let Some(python) = python(name) else { return };
    if !torch_or_skip(&python, name) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(&python)
        .args([
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nnodes",
            "1",
            "--nproc_per_node",
            "2",
        ])
        .arg(examples().join("tests/two_ranks.py"))
        .arg(dir.path())
        .env("PYTHONPATH", examples().join("src"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "torchrun failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let run = load_run(&path("run.jsonl"), &LoadOptions::default()).unwrap();
    let lengths = load_run(&path("lengths.jsonl"), &LoadOptions::default()).unwrap();
    // 64 sequences over 2 ranks in batches of 4, 2 epochs: one row per job step.
    assert_eq!(run.len(), 16);
    assert_eq!(
        run.keys, lengths.keys,
        "the dry pass saw the training's batches"
    );
    assert_eq!(run.metric_names(), vec!["time_ms"]);
    // The key is the longer of the two ranks' padded lengths, kept beside it.
    let text = std::fs::read_to_string(path("run.jsonl")).unwrap();
    for (line, &key) in text.lines().zip(&run.keys) {
        let row: serde_json::Value = serde_json::from_str(line).unwrap();
        let rank = |r: &str| row[r].as_u64().unwrap();
        let longest = rank("rank0_seq_len").max(rank("rank1_seq_len"));
        assert_eq!(u64::from(key), longest, "{line}");
    }
    // And it is a log `select` chooses from.
    let selection = run_selection(
        &run,
        &SelectOptions {
            bins: BinCount::Fixed(3),
            ..SelectOptions::default()
        },
    )
    .unwrap();
    assert_eq!(
        selection.seqpoints.iter().map(|s| s.weight).sum::<u64>(),
        16
    );
}

/// With real torch.profiler, `profile_seqpoints` marks its rows `traced` 1 (the step ran under
/// the profiler, whose cost is in its time), and `seqpoint project` reads the file as it is
/// and says that the projection includes the profiler's overhead. A `TimedLog` of every step
/// run inside it marks the same steps, so `project` says so of the full timed log as well,
/// besides how many of its rows it left out.
#[test]
fn traced_measurements_from_real_torch_are_noted_by_project() {
    const TEST: &str = "python_logger::traced_measurements_from_real_torch_are_noted_by_project";
    let Some(python) = python(TEST) else {
        return;
    };
    if !torch_or_skip(&python, TEST) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bin = env!("CARGO_BIN_EXE_seqpoint");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/speech_t1.csv");
    let status = Command::new(bin)
        .arg("select")
        .arg(&data)
        .args(["--bins", "4", "-o", "sp.json"])
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    let script = r#"
import csv, json, torch, seqpoint_log
x = torch.randn(32, 32)
with seqpoint_log.TimedLog("run.jsonl") as log, \
        seqpoint_log.profile_seqpoints("sp.json", "p") as prof:
    assert prof.uses_torch_profiler
    for step in range(450):
        with log.step(epoch=0, seq_len=100, batch_size=8):
            (x @ x).sum()
        prof.step()
        if prof.done:
            break
rows = list(csv.DictReader(open("p/measured.csv")))
assert len(rows) == 4 and all(r["traced"] == "1" for r in rows), rows
logged = [json.loads(line) for line in open("run.jsonl")]
traced = [r["iteration"] for r in logged if r["traced"] == 1]
assert traced == [int(r["iteration"]) for r in rows], (traced, rows)
"#;
    run_python(&python, script, dir.path());
    let logged = std::fs::read_to_string(dir.path().join("run.jsonl"))
        .unwrap()
        .lines()
        .count();
    let full = Command::new(bin)
        .args(["project", "sp.json", "run.jsonl", "--format", "json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        full.status.success(),
        "{}",
        String::from_utf8_lossy(&full.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&full.stdout).unwrap();
    assert_eq!(report["traced_rows"], 4, "{report}");
    let ignored = report["ignored_rows"].as_u64().unwrap() as usize;
    let notes = report["input_notes"].to_string();
    assert!(
        ignored > 0 && notes.contains(&format!("left out {ignored} row(s)")),
        "{notes}"
    );
    let read: usize = notes
        .split("read the ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count of rows read in {notes}"));
    assert_eq!(ignored + read, logged, "{notes}");
    let out = Command::new(bin)
        .args(["project", "sp.json", "p/measured.csv", "--format", "json"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("note: 4 of the 4 measured row(s) were timed with the profiler on"),
        "{stderr}"
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["traced_rows"], 4);
    assert!(report["input_notes"][0]
        .as_str()
        .unwrap()
        .contains("the projection reads high"));
}
