//! Shared by the fuzz targets: load options chosen by a control byte, and the invariants
//! every loaded run log and every error message must hold (a violation aborts the run).

use seqpoint::runlog::measured::MeasuredOptions;
use seqpoint::runlog::{InputFormat, LoadError, LoadOptions};
use seqpoint::RunLog;

/// Longest error message a user may see for one bad input; longer ones flood the terminal.
pub const MESSAGE_LIMIT: usize = 1000;

/// Load options varied by one control byte: `--skip-bad`, the key and the metrics.
pub fn options_from(control: u8) -> LoadOptions {
    let key = match (control >> 1) & 3 {
        0 => vec![],
        1 => vec!["src_len".to_string(), "tgt_len".to_string()],
        2 => vec!["seq_len".to_string()],
        _ => vec!["a".to_string(), "b".to_string(), "c".to_string()],
    };
    let metrics = match (control >> 3) & 3 {
        0 => vec![],
        1 => vec!["time_ms".to_string()],
        2 => vec![
            "time_ms".to_string(),
            "energy_j".to_string(),
            "time_ms".to_string(),
        ],
        _ => vec!["m".to_string()],
    };
    LoadOptions {
        key,
        metrics,
        skip_bad: control & 1 == 1,
        ..LoadOptions::default()
    }
}

/// The `measured` target's control byte: the format (and the file name that says it) and the
/// metric options.
pub fn measured_setup(control: u8) -> (InputFormat, &'static str, MeasuredOptions) {
    let (format, path) = match control & 3 {
        0 | 3 => (InputFormat::Csv, "measured.csv"),
        1 => (InputFormat::Tsv, "measured.tsv"),
        _ => (InputFormat::Jsonl, "measured.jsonl"),
    };
    let options = MeasuredOptions {
        metrics: match (control >> 2) & 3 {
            0 => vec![],
            1 => vec!["time_ms".to_string()],
            2 => vec!["energy_j".to_string()],
            _ => vec!["time_ms".to_string(), "time_ms".to_string()],
        },
        ..MeasuredOptions::default()
    };
    (format, path, options)
}

/// Split fuzz input into a control byte and the file body.
pub fn split(data: &[u8]) -> (u8, &[u8]) {
    match data.split_first() {
        Some((&c, rest)) => (c, rest),
        None => (0, data),
    }
}

/// What a loaded run log must be, whatever the input was.
pub fn check_log(log: &RunLog, options: &LoadOptions) {
    let n = log.len();
    assert!(n > 0, "a loaded log has rows");
    let dims = log.dims();
    assert!(
        (1..=2).contains(&dims),
        "one or two key columns, got {dims}"
    );
    assert_eq!(log.keys.len(), n * dims, "keys are row-major n x dims");
    assert!(
        log.iterations.to_vec().windows(2).all(|w| w[0] < w[1]),
        "iterations strictly ascending"
    );
    if let Some(epochs) = &log.epochs {
        assert_eq!(epochs.len(), n, "one epoch per row");
    }
    for config in &log.configs {
        for metric in &config.metrics {
            assert_eq!(
                metric.values.len(),
                n,
                "metric {} has n values",
                metric.name
            );
            assert!(
                metric.values.iter().all(|v| v.is_finite() && *v >= 0.0),
                "metrics are finite and non-negative"
            );
        }
    }
    if !options.skip_bad {
        assert_eq!(log.skipped.count, 0, "nothing skipped without --skip-bad");
    }
    assert!(log.skipped.first_lines.len() as u64 <= log.skipped.count);
    if let Some(reason) = &log.skipped.first_reason {
        check_message(reason, &log.source);
    }
}

/// An error message names the file, is one readable line, and is not a flood.
pub fn check_message(message: &str, path: &str) {
    assert!(
        message.starts_with(path),
        "message names the file first: {message:?}"
    );
    assert!(
        !message.chars().any(char::is_control),
        "message has no control characters (they garble the terminal): {message:?}"
    );
    assert!(
        message.chars().count() <= MESSAGE_LIMIT,
        "message of {} characters floods the terminal: {:?}",
        message.chars().count(),
        message.chars().take(200).collect::<String>()
    );
}

pub fn check_error(err: &LoadError, path: &str) {
    check_message(&err.to_string(), path);
}

/// Load `body` as `format` and check the result either way.
pub fn load_and_check(path: &str, body: &[u8], format: InputFormat, control: u8) -> Option<RunLog> {
    let options = options_from(control);
    match seqpoint::runlog::load_bytes(path, body, format, &options) {
        Ok(log) => {
            check_log(&log, &options);
            Some(log)
        }
        Err(err) => {
            check_error(&err, path);
            None
        }
    }
}
