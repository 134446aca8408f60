//! Reading MEASURED: hand-written files, one per rule.

use super::columns::SeqPointIndex;
use super::*;
use crate::output::json::select_document;
use crate::runlog::{load_bytes, LoadOptions};
use crate::select::{run_selection, BinCount, SelectOptions};

/// Keys 10 (rows 0, 3), 20 (rows 1, 4), 30 (rows 2, 5): three SeqPoints, one per key.
fn doc() -> SelectDoc {
    let text = "iteration,seq_len,time_ms\n0,10,1\n1,20,2\n2,30,3\n3,10,1.5\n4,20,2.5\n5,30,3.5\n";
    let log = load_bytes(
        "run.csv",
        text.as_bytes(),
        InputFormat::Csv,
        &LoadOptions::default(),
    )
    .unwrap();
    let options = SelectOptions {
        bins: BinCount::Fixed(3),
        ..SelectOptions::default()
    };
    select_document(&log, &run_selection(&log, &options).unwrap(), None)
}

fn parse(text: &str, format: InputFormat) -> Result<Measurements, LoadError> {
    parse_measured(
        "m.csv",
        text.as_bytes(),
        format,
        &doc(),
        &MeasuredOptions::default(),
    )
}

#[test]
fn unknown_ids_are_told_the_ids_there_are() {
    let mut doc = doc();
    let index = SeqPointIndex::new(&doc);
    let n = doc.seqpoints.len();
    assert_eq!(index.ids_text(), format!("0-{}", n - 1));
    let last = doc.seqpoints.len() - 1;
    doc.seqpoints[last].id = 99;
    let index = SeqPointIndex::new(&doc);
    let listed: Vec<String> = (0..last)
        .map(|i| i.to_string())
        .chain(["99".into()])
        .collect();
    assert_eq!(index.ids_text(), listed.join(", "));
    let err = index.by_id(last as u64).unwrap_err();
    assert!(
        err.ends_with(&format!("SeqPoints file ({})", listed.join(", "))),
        "{err}"
    );
}

#[test]
fn rows_find_their_seqpoint_by_id_iteration_or_key() {
    let doc = doc();
    let own: Vec<u64> = doc.seqpoints.iter().map(|s| s.iteration).collect();
    let alternates: Vec<u64> = doc.seqpoints.iter().map(|s| s.alternates[0]).collect();
    let by_iteration = format!(
        "iteration,time_ms\n{},0.5\n{},0.7\n{},1\n{},1.5\n",
        own[0], alternates[0], own[1], own[2]
    );
    let m = parse(&by_iteration, InputFormat::Csv).unwrap();
    assert_eq!(m.identified_by, Identified::Iteration);
    assert_eq!(m.samples[0].len(), 2);
    assert_eq!(m.distinct_iterations(0), 2);
    assert_eq!(m.samples[0][1].values, vec![0.7]);
    assert_eq!(m.samples[0][1].line, 3);

    let m = parse("seqpoint\ttime_ms\n2\t1\n2\t1.2\n0\t3\n", InputFormat::Tsv).unwrap();
    assert_eq!(m.identified_by, Identified::SeqPoint);
    assert_eq!(
        m.samples.iter().map(Vec::len).collect::<Vec<_>>(),
        [1, 0, 2]
    );
    // No iteration column: the two samples may repeat one iteration.
    assert_eq!(m.distinct_iterations(2), 1);

    let m = parse("sl,time_ms\n20,1\n30,2\n10,3\n", InputFormat::Csv).unwrap();
    assert_eq!(m.identified_by, Identified::Key);
    assert_eq!(m.samples[1][0].values, vec![1.0]);
    assert_eq!(m.rows(), 3);

    let jsonl = "{\"seqpoint\": 1, \"time_ms\": 2.5}\n\n{\"seqpoint\": 1, \"time_ms\": 2.25}\n";
    let m = parse(jsonl, InputFormat::Jsonl).unwrap();
    assert_eq!(m.samples[1].len(), 2);
}

#[test]
fn errors_name_file_line_column_value_and_expectation() {
    let err = |text: &str, format| parse(text, format).unwrap_err().to_string();
    assert_eq!(
        err("seqpoint,time_ms\n0,1\n7,2\n", InputFormat::Csv),
        "m.csv:3:1: column 'seqpoint': found SeqPoint 7, expected one of the 3 SeqPoint ids in the SeqPoints file (0-2)"
    );
    assert_eq!(
        err("seqpoint,time_ms\n0,fast\n", InputFormat::Csv),
        "m.csv:2:2: column 'time_ms': found \"fast\", expected a number"
    );
    assert!(err("iteration,time_ms\n99,1\n", InputFormat::Csv).starts_with(
        "m.csv:2:1: column 'iteration': found iteration 99, expected an iteration the SeqPoints file lists"
    ));
    assert_eq!(
        err("seq_len,time_ms\n40,1\n", InputFormat::Csv),
        "m.csv:2:1: column 'seq_len': found key [40], expected a key inside one of the SeqPoints' bins"
    );
    assert!(err("step_no,time_ms\n1,1\n", InputFormat::Csv)
        .starts_with("m.csv:1: no column names the SeqPoint of a row; expected 'seqpoint'"));
    assert!(err("seqpoint,energy\n1,1\n", InputFormat::Csv).starts_with(
        "m.csv:1: no metric column; expected one of the SeqPoints file's metrics (time_ms)"
    ));
    assert_eq!(
        err("seqpoint,time_ms\n0\n", InputFormat::Csv),
        "m.csv:2:2: expected 2 fields as in the header, found 1"
    );
    assert_eq!(
        err("{\"seqpoint\": 0, \"time_ms\": -1}\n", InputFormat::Jsonl),
        "m.csv:1:28: column 'time_ms': found \"-1\", expected a non-negative number"
    );
    assert!(err("{\"seqpoint\": 0,\n", InputFormat::Jsonl).starts_with("m.csv:1:"));
    assert_eq!(
        err("seqpoint,time_ms\n", InputFormat::Csv),
        "m.csv: the file has a header but no rows; expected one row per profiled iteration"
    );
    assert!(err("  \n", InputFormat::Csv).contains("the file is empty"));
}

fn parse_noted(text: &str, format: InputFormat) -> (Measurements, MeasuredNotes) {
    parse_measured_noted(
        "m.csv",
        text.as_bytes(),
        format,
        &doc(),
        &MeasuredOptions::default(),
    )
    .unwrap()
}

/// A full timed log (every iteration of the run) is read as the rows of the iterations
/// the SeqPoints file lists; the others are left out and counted.
#[test]
fn a_full_timed_log_gives_the_listed_rows_and_counts_the_others() {
    let doc = doc();
    let listed: HashSet<u64> = doc
        .seqpoints
        .iter()
        .flat_map(|sp| std::iter::once(sp.iteration).chain(sp.alternates.iter().copied()))
        .collect();
    let mut text = "iteration,seq_len,time_ms\n".to_string();
    for it in 0..40u64 {
        text.push_str(&format!("{it},{},{}.5\n", 10 + 10 * (it % 3), it));
    }
    let (m, notes) = parse_noted(&text, InputFormat::Csv);
    let unlisted = (0..40).filter(|it| !listed.contains(it)).count();
    assert!(unlisted > 30, "{listed:?}");
    assert_eq!(notes.ignored_rows, unlisted);
    assert_eq!(notes.rows, 40 - unlisted);
    assert_eq!(m.rows(), notes.rows);
    let first = (0..40).find(|it| !listed.contains(it)).unwrap();
    assert_eq!(notes.first_ignored, Some((first + 2, first)));
    // The rows kept are exactly the listed ones, each with its own value.
    for sample in m.samples.iter().flatten() {
        let it = sample.iteration.unwrap();
        assert!(listed.contains(&it));
        assert_eq!(sample.values, vec![it as f64 + 0.5]);
    }
    // A file of listed rows only leaves nothing out, and has no traced column.
    let (_, notes) = parse_noted(
        &format!("iteration,time_ms\n{},1\n", doc.seqpoints[0].iteration),
        InputFormat::Csv,
    );
    assert_eq!((notes.ignored_rows, notes.traced_column), (0, false));
    // JSON Lines alike; an unlisted row's other fields are not read.
    let jsonl = format!(
        "{{\"iteration\": 999, \"time_ms\": \"n/a\"}}\n{{\"iteration\": {}, \"time_ms\": 2}}\n",
        doc.seqpoints[1].iteration
    );
    let (m, notes) = parse_noted(&jsonl, InputFormat::Jsonl);
    assert_eq!((m.rows(), notes.ignored_rows), (1, 1));
    assert_eq!(notes.first_ignored, Some((1, 999)));
}

/// Not one row of a listed iteration: the first row is the error, saying what is listed.
#[test]
fn a_file_without_one_listed_iteration_is_an_error_at_its_first_row() {
    let err = parse("iteration,time_ms\n99,1\n98,2\n", InputFormat::Csv)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with(
            "m.csv:2:1: column 'iteration': found iteration 99, expected an iteration the \
             SeqPoints file lists (a SeqPoint's, a planned or an alternate one: 0, 1, 2, 3, \
             4, 5), and no row of the file is one"
        ),
        "{err}"
    );
    // The start of a stream with no listed row yet is no error (later rows may be).
    let part = parse_measured_part(
        "m.csv",
        b"iteration,time_ms\n99,1\n98,2\n",
        InputFormat::Csv,
        &doc(),
        &MeasuredOptions::default(),
        false,
    )
    .unwrap_err();
    assert_eq!(part.line(), None);
}

/// A `traced` column (as `profile_seqpoints` writes it) says which rows were timed with the
/// profiler on; any other value is an error at its field.
#[test]
fn the_traced_column_marks_rows_timed_with_the_profiler_on() {
    let doc = doc();
    let its: Vec<u64> = doc.seqpoints.iter().map(|sp| sp.iteration).collect();
    let text = format!(
        "iteration,seqpoint,time_ms,traced\n{},0,1,1\n{},1,2,0\n{},2,3,true\n",
        its[0], its[1], its[2]
    );
    let (m, notes) = parse_noted(&text, InputFormat::Csv);
    assert_eq!(m.rows(), 3);
    assert!(notes.traced_column);
    assert_eq!(notes.traced, vec![Some(its[0]), Some(its[2])]);
    let jsonl = "{\"seqpoint\": 0, \"time_ms\": 1, \"traced\": false}\n\
                 {\"seqpoint\": 1, \"time_ms\": 1, \"traced\": 1}\n";
    let (_, notes) = parse_noted(jsonl, InputFormat::Jsonl);
    assert_eq!(notes.traced, vec![None]);
    let err = |text: &str| parse(text, InputFormat::Csv).unwrap_err().to_string();
    assert_eq!(
        err("seqpoint,time_ms,traced\n0,1,yes\n"),
        "m.csv:2:3: column 'traced': found \"yes\", expected 1 (timed with the profiler on) \
         or 0 (off)"
    );
    assert!(err("seqpoint,time_ms,traced\n0,1,\n").starts_with("m.csv:2:3: column 'traced'"));
    // Two columns that answer to 'traced' are ambiguous, as any other column's names.
    assert!(
        err("seqpoint,time_ms,traced,Traced\n0,1,0,0\n").contains("traced"),
        "{}",
        err("seqpoint,time_ms,traced,Traced\n0,1,0,0\n")
    );
}

/// Line numbers are the lines' own whatever the line ends (LF, CRLF, a lone CR in a
/// quoted field), blank lines counted.
#[test]
fn errors_name_the_line_after_crlf_line_ends() {
    let err = |text: &str| parse(text, InputFormat::Csv).unwrap_err().to_string();
    for (text, line) in [
        ("seqpoint,time_ms\r\n0,1\r\n1,x\r\n", 3),
        ("seqpoint,time_ms\n0,1\n1,x\n", 3),
        ("seqpoint,time_ms\r\n\r\n0,1\r\n\r\n1,x\r\n", 5),
        ("seqpoint,time_ms\r\n0,\"1\"\r\n1,x", 3),
    ] {
        assert!(
            err(text).starts_with(&format!("m.csv:{line}:2: column 'time_ms'")),
            "{text:?}: {}",
            err(text)
        );
    }
    let (_, notes) = parse_noted("iteration,time_ms\r\n99,1\r\n0,1\r\n", InputFormat::Csv);
    assert_eq!(notes.first_ignored, Some((2, 99)));
}

#[test]
fn named_metrics_must_exist_and_an_iteration_must_match_its_seqpoint() {
    let options = MeasuredOptions {
        metrics: vec!["time_mss".into()],
        ..MeasuredOptions::default()
    };
    let err = parse_measured(
        "m.csv",
        b"seqpoint,time_ms\n0,1\n",
        InputFormat::Csv,
        &doc(),
        &options,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("no metric column 'time_mss'") && err.contains("did you mean 'time_ms'?"),
        "{err}"
    );
    let doc = doc();
    let text = format!(
        "seqpoint,iteration,time_ms\n1,{},1\n",
        doc.seqpoints[0].iteration
    );
    let err = parse(&text, InputFormat::Csv).unwrap_err().to_string();
    assert!(
        err.starts_with("m.csv:2:2: column 'iteration': iteration"),
        "{err}"
    );
    assert!(
        err.contains("belongs to SeqPoint 0, but the row names SeqPoint 1"),
        "{err}"
    );
}
