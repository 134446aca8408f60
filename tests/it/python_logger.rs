//! The way into the tool: logs written by `examples/pytorch/seqpoint_log.py` (and the tiny
//! example) load with the seqpoint library as they are. Skips when python3 is absent.

use std::path::{Path, PathBuf};
use std::process::Command;

use seqpoint::{load_run, run_selection, BinCount, LoadOptions, SelectOptions};

pub(crate) fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pytorch")
}

/// The Python to run the logger with: `SEQPOINT_PYTHON` (CI points it at an interpreter with
/// torch), else python3; None, with a note, when it does not run here.
pub(crate) fn python() -> Option<String> {
    let python = std::env::var("SEQPOINT_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let ok = Command::new(&python)
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        eprintln!("note: {python} not found; the Python logger tests are skipped");
    }
    ok.then_some(python)
}

fn run_python(python: &str, script: &str, dir: &Path) {
    let out = Command::new(python)
        .arg("-c")
        .arg(script)
        .env("PYTHONPATH", examples())
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
    let Some(python) = python() else { return };
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
    let Some(python) = python() else { return };
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
