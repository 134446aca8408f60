//! Every input a fuzz target ever crashed on (`tests/fuzz_crashes/TARGET-HASH`, the raw fuzz
//! input) replayed through the same library call with the same checks, so a fixed crash
//! stays fixed. See the README's "Fuzzing" section for the targets.

use std::path::Path;

use seqpoint::doc::SelectDoc;
use seqpoint::project::document::parse_select_doc;
use seqpoint::runlog::measured::{parse_measured, MeasuredOptions};
use seqpoint::runlog::{load_bytes, InputFormat, LoadOptions};

// The fuzz targets' own helpers (control byte, invariants, message checks): the fuzz crate
// is a separate workspace, so its file is compiled in here rather than depended on.
#[path = "../../fuzz/src/lib.rs"]
mod fuzz_checks;

use fuzz_checks::{check_message, load_and_check, measured_setup, split};

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
    let (control, body) = split(data);
    let (format, path, options) = measured_setup(control);
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
            "load_csv" | "load_tsv" | "load_jsonl" => {
                let (path, format) = match target {
                    "load_csv" => ("run.csv", InputFormat::Csv),
                    "load_tsv" => ("run.tsv", InputFormat::Tsv),
                    _ => ("run.jsonl", InputFormat::Jsonl),
                };
                let (control, body) = split(&data);
                load_and_check(path, body, format, control);
            }
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
        "seqpoints.json:165:39: not a valid 'seqpoint/1' document: unknown variant \
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
