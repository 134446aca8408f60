//! Every input a fuzz target ever crashed on (`tests/fuzz_crashes/TARGET-HASH`, the raw fuzz
//! input) replayed through the same library call with the same checks, so a fixed crash
//! stays fixed. See the README's "Fuzzing" section for the targets.

use std::path::Path;

use seqpoint::export::SelectDoc;
use seqpoint::measured::{parse_measured, MeasuredOptions};
use seqpoint::projection_workflow::parse_select_doc;
use seqpoint::runlog::{load_bytes, InputFormat, LoadOptions};

/// As in the fuzz targets: longest message a user may see for one bad input.
const MESSAGE_LIMIT: usize = 1000;

/// The fuzz targets' control byte: `--skip-bad`, the key and the metrics.
fn options_from(control: u8) -> LoadOptions {
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

fn check_message(message: &str, path: &str) {
    assert!(message.starts_with(path), "{message:?}");
    assert!(!message.chars().any(char::is_control), "{message:?}");
    assert!(
        message.chars().count() <= MESSAGE_LIMIT,
        "{} characters: {message:?}",
        message.chars().count()
    );
}

fn replay_load(name: &str, data: &[u8], format: InputFormat) {
    let (control, body) = data.split_first().map_or((0, data), |(&c, b)| (c, b));
    let options = options_from(control);
    match load_bytes(name, body, format, &options) {
        Ok(log) => {
            assert!(!log.is_empty());
            assert_eq!(log.keys.len(), log.len() * log.dims());
            assert!(log.iterations.to_vec().windows(2).all(|w| w[0] < w[1]));
        }
        Err(err) => check_message(&err.to_string(), name),
    }
}

/// As the `select_doc` target: a document or a clean error; a document reads back unchanged.
fn replay_select_doc(data: &[u8]) {
    match parse_select_doc("seqpoints.json", data) {
        Ok(doc) => {
            let text = serde_json::to_string(&doc).unwrap();
            let again: SelectDoc = serde_json::from_str(&text).unwrap();
            assert_eq!(again, doc);
        }
        Err(err) => {
            let message = err.to_string();
            assert!(!message.chars().any(char::is_control), "{message:?}");
        }
    }
}

/// As the `measured` target: the bundled sample's 3-SeqPoint document, the format and metric
/// options from the control byte, then the measurements or a clean error naming the file.
fn replay_measured(data: &[u8]) {
    let doc_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/select_doc/sample_k3.json");
    let doc = parse_select_doc("seqpoints.json", &std::fs::read(doc_path).unwrap()).unwrap();
    let (control, body) = data.split_first().map_or((0, data), |(&c, b)| (c, b));
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
        format: None,
    };
    match parse_measured(path, body, format, &doc, &options) {
        Ok(measured) => assert_eq!(measured.samples.len(), doc.seqpoints.len()),
        Err(err) => check_message(&err.to_string(), path),
    }
}

#[test]
fn every_fuzz_crash_stays_fixed() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_crashes");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&folder).expect("tests/fuzz_crashes exists") {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let data = std::fs::read(&path).unwrap();
        let target = name.rsplit_once('-').map_or(name.as_str(), |(t, _)| t);
        match target {
            "load_csv" => replay_load("run.csv", &data, InputFormat::Csv),
            "load_tsv" => replay_load("run.tsv", &data, InputFormat::Tsv),
            "load_jsonl" => replay_load("run.jsonl", &data, InputFormat::Jsonl),
            "select_doc" => replay_select_doc(&data),
            "measured" => replay_measured(&data),
            other => panic!("{name}: no replay for fuzz target {other}"),
        }
        replayed += 1;
    }
    assert!(
        replayed > 0,
        "no crash inputs found in {}",
        folder.display()
    );
}

/// The first crash, by hand: a JSON Lines header of long, strange names without the key once
/// gave a 1,029-character message. Now the column list stops at 400 characters.
#[test]
fn a_header_of_long_names_gives_a_short_message() {
    let names: Vec<String> = (0..30)
        .map(|i| format!("\"{}{i}\": 1", "\u{7f}".repeat(40)))
        .collect();
    let line = format!("{{{}}}\n", names.join(", "));
    let err = load_bytes(
        "run.jsonl",
        line.as_bytes(),
        InputFormat::Jsonl,
        &LoadOptions::default(),
    )
    .unwrap_err();
    let message = err.to_string();
    check_message(&message, "run.jsonl");
    assert!(message.ends_with(", ... (30 columns in all)"), "{message}");
}

/// The second crash, by hand: serde quotes an unknown value of a SeqPoints file in its message,
/// so an escape sequence there (`\u001b[2J` clears the screen) reached the terminal. Now it
/// is shown escaped.
#[test]
fn an_escape_sequence_in_a_seqpoints_file_is_shown_escaped() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/select_doc/no_compare.json"),
    )
    .unwrap();
    // The last "baseline" is a typed configuration (in the naive baselines' errors).
    let at = text.rfind("\"baseline\"").unwrap();
    let hostile = format!("{}\"\\u001b[2Jbaseline\"{}", &text[..at], &text[at + 10..]);
    let err = parse_select_doc("seqpoints.json", hostile.as_bytes()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "seqpoints.json: not a valid 'seqpoint/1' document: unknown variant \
         `\\u{1b}[2Jbaseline`, expected `baseline` or `compare`"
    );
}

/// The third crash, by hand: a measurements header with control characters and no metric
/// column was printed raw in the message. Now the names are escaped.
#[test]
fn a_measurements_header_is_shown_escaped() {
    let doc_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/select_doc/sample_k3.json");
    let doc = parse_select_doc("seqpoints.json", &std::fs::read(doc_path).unwrap()).unwrap();
    let body = b"seqpoint,\x1b[2Jtime\n0,1\n";
    let err = parse_measured(
        "measured.csv",
        body,
        InputFormat::Csv,
        &doc,
        &MeasuredOptions::default(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "measured.csv:1: no metric column; expected one of the SeqPoints file's metrics \
         (time_ms) or --metric COL; the columns are: seqpoint, \\u{1b}[2Jtime"
    );
}
