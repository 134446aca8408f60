//! `seqpoint select` end to end (assert_cmd): every load error the run-log reader promises
//! (missing key column, bad length, bad metric, duplicate iteration, empty file, truncated
//! gzip, misaligned --compare, optimal on two lengths) in each input format and from standard
//! input, each with its exact message, exit code 1 and nothing on standard output; and
//! `--skip-bad` reporting how many rows it skipped and where the first ones were.

use std::io::Write;

use flate2::write::GzEncoder;
use flate2::Compression;

use crate::common::seqpoint_in;

/// A scratch folder holding the named files.
fn folder(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in files {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    dir
}

fn gzip(text: &str) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::default());
    encoder.write_all(text.as_bytes()).unwrap();
    encoder.finish().unwrap()
}

/// `select ARGS` in `dir` fails with exactly `message` (after "error: "), exit code 1.
fn fails(dir: &tempfile::TempDir, args: &[&str], message: &str) {
    seqpoint_in(dir.path())
        .arg("select")
        .args(args)
        .assert()
        .code(1)
        .stdout("")
        .stderr(format!("error: {message}\n"));
}

const RUN: &str = "iteration,seq_len,time_ms\n0,10,1.5\n1,20,2.5\n2,10,1.25\n3,30,4\n";

#[test]
fn missing_key_column_lists_the_columns() {
    let dir = folder(&[
        ("run.tsv", b"iteration\tlength\ttime_ms\n0\t10\t1\n"),
        (
            "run.jsonl",
            b"{\"iteration\": 0, \"len\": 10, \"time_ms\": 1}\n",
        ),
        ("two.csv", b"src_len,tgt_len,time_ms\n1,2,3\n"),
    ]);
    fails(
        &dir,
        &["run.tsv"],
        "run.tsv:1: no key column 'seq_len'; the columns are: iteration, length, time_ms",
    );
    fails(
        &dir,
        &["run.jsonl"],
        "run.jsonl:1: no key column 'seq_len'; the columns are: iteration, len, time_ms",
    );
    fails(
        &dir,
        &["two.csv", "--key", "src_len,tgtlen"],
        "two.csv:1: no key column 'tgtlen'; the columns are: src_len, tgt_len, time_ms \
         (did you mean 'tgt_len'?)",
    );
}

#[test]
fn a_length_that_is_not_a_non_negative_integer() {
    let dir = folder(&[
        ("frac.jsonl", b"{\"seq_len\": 3.5, \"time_ms\": 1}\n"),
        ("neg.tsv", b"iteration\tseq_len\ttime_ms\n0\t-3\t1\n"),
        ("word.csv.gz", &gzip("seq_len,time_ms\n12,1\nlong,2\n")),
    ]);
    fails(
        &dir,
        &["frac.jsonl"],
        "frac.jsonl:1:13: column 'seq_len': found \"3.5\", expected a non-negative integer length",
    );
    fails(
        &dir,
        &["neg.tsv"],
        "neg.tsv:2:2: column 'seq_len': found \"-3\", expected a non-negative integer length",
    );
    fails(
        &dir,
        &["word.csv.gz"],
        "word.csv.gz:3:1: column 'seq_len': found \"long\", expected a non-negative integer length",
    );
}

#[test]
fn a_metric_that_is_not_finite_or_is_negative() {
    let dir = folder(&[
        ("nan.jsonl", b"{\"seq_len\": 3, \"time_ms\": \"NaN\"}\n"),
        ("huge.jsonl", b"{\"seq_len\": 3, \"time_ms\": 1e999}\n"),
        ("inf.tsv", b"seq_len\ttime_ms\n3\t-inf\n"),
        ("neg.csv", b"seq_len,energy_j\n3,1\n4,-0.5\n"),
    ]);
    fails(
        &dir,
        &["nan.jsonl"],
        "nan.jsonl:1:27: column 'time_ms': found \"NaN\", expected a finite number (not NaN or infinity)",
    );
    fails(
        &dir,
        &["huge.jsonl"],
        "huge.jsonl:1:31: expected one JSON object per line (number out of range)",
    );
    fails(
        &dir,
        &["inf.tsv"],
        "inf.tsv:2:2: column 'time_ms': found \"-inf\", expected a finite number (not NaN or infinity)",
    );
    fails(
        &dir,
        &["neg.csv"],
        "neg.csv:3:2: column 'energy_j': found \"-0.5\", expected a non-negative number",
    );
}

#[test]
fn a_duplicate_iteration_names_both_lines() {
    let dir = folder(&[
        (
            "dup.jsonl",
            b"{\"iteration\": 1, \"seq_len\": 3, \"time_ms\": 1}\n\n{\"iteration\": 1, \"seq_len\": 4, \"time_ms\": 1}\n",
        ),
        ("dup.tsv", b"step\tsl\n7\t1\n8\t2\n7\t3\n"),
    ]);
    fails(
        &dir,
        &["dup.jsonl"],
        "dup.jsonl:3: duplicate iteration 1 (also on line 1); expected each iteration once",
    );
    fails(
        &dir,
        &["dup.tsv"],
        "dup.tsv:4: duplicate iteration 7 (also on line 2); expected each iteration once",
    );
}

#[test]
fn an_empty_file_in_any_format() {
    let dir = folder(&[
        ("empty.jsonl", b""),
        ("empty.tsv", b"\n\n"),
        ("empty.csv.gz", &gzip("")),
    ]);
    for name in ["empty.jsonl", "empty.tsv", "empty.csv.gz"] {
        fails(
            &dir,
            &[name],
            &format!("{name}: the file is empty; expected a header row and one row per iteration"),
        );
    }
}

#[test]
fn standard_input_is_read_and_checked_too() {
    let dir = folder(&[]);
    seqpoint_in(dir.path())
        .args(["select", "-", "-k", "2", "--format", "csv"])
        .write_stdin(RUN)
        .assert()
        .success()
        .stdout("id,iteration,epoch,seq_len,weight,time_ms\n0,0,,10,3,1.5\n1,3,,30,1,4\n");
    seqpoint_in(dir.path())
        .args(["select", "-", "--input-format", "tsv"])
        .write_stdin("iteration\tseq_len\ttime_ms\n0\t-3\t1\n")
        .assert()
        .code(1)
        .stdout("")
        .stderr(
            "error: <stdin>:2:2: column 'seq_len': found \"-3\", expected a non-negative integer length\n",
        );
    seqpoint_in(dir.path())
        .args(["select", "-"])
        .write_stdin("")
        .assert()
        .code(1)
        .stderr(
            "error: <stdin>: the file is empty; expected a header row and one row per iteration\n",
        );
}

#[test]
fn a_truncated_gzip_file() {
    let whole = gzip(&RUN.repeat(50));
    let dir = folder(&[
        ("cut.csv.gz", &whole[..whole.len() / 2]),
        ("cut.jsonl.gz", &whole[..12]),
        ("header_only.gz", &whole[..2]),
    ]);
    for name in ["cut.csv.gz", "cut.jsonl.gz"] {
        fails(
            &dir,
            &[name],
            &format!(
                "{name}: truncated or corrupt gzip data (incomplete deflate stream); expected a \
                 complete .gz file"
            ),
        );
    }
    // Only the two magic bytes: no gzip header at all. From standard input: the stream is
    // complete but its 8-byte trailer (checksum and length) is cut in half.
    fails(
        &dir,
        &["header_only.gz"],
        "header_only.gz: truncated or corrupt gzip data (unexpected end of file); expected a \
         complete .gz file",
    );
    seqpoint_in(dir.path())
        .args(["select", "-", "-k", "2", "--format", "csv"])
        .write_stdin(&whole[..whole.len() - 4])
        .assert()
        .code(1)
        .stderr(
            "error: <stdin>: truncated or corrupt gzip data (unexpected end of file); expected a \
             complete .gz file\n",
        );
}

#[test]
fn a_misaligned_compare_log_says_which_iteration() {
    let dir = folder(&[
        ("run.csv", RUN.as_bytes()),
        (
            "missing.jsonl",
            b"{\"iteration\": 0, \"seq_len\": 10, \"time_ms\": 1}\n{\"iteration\": 1, \"seq_len\": 20, \"time_ms\": 1}\n{\"iteration\": 2, \"seq_len\": 10, \"time_ms\": 1}\n",
        ),
        (
            "extra.tsv",
            b"iteration\tseq_len\ttime_ms\n0\t10\t1\n1\t20\t1\n2\t10\t1\n3\t30\t1\n9\t10\t1\n",
        ),
        (
            "key.csv.gz",
            &gzip("iteration,seq_len,time_ms\n0,10,1\n1,20,1\n2,10,1\n3,31,1\n"),
        ),
    ]);
    fails(
        &dir,
        &["run.csv", "--compare", "missing.jsonl"],
        "missing.jsonl: iteration 3 of run.csv is missing here; expected the same iterations in both logs",
    );
    fails(
        &dir,
        &["run.csv", "--compare", "extra.tsv"],
        "extra.tsv: iteration 9 is not in run.csv; expected the same iterations in both logs",
    );
    fails(
        &dir,
        &["run.csv", "--compare", "key.csv.gz"],
        "key.csv.gz: iteration 3 has key [31] here but [30] in run.csv; expected the same batches \
         in the same order",
    );
}

#[test]
fn optimal_on_two_lengths_is_an_error_not_a_fallback() {
    let dir = folder(&[(
        "mt.csv",
        b"src_len,tgt_len,time_ms\n10,12,1\n20,18,2\n10,12,1\n",
    )]);
    fails(
        &dir,
        &["mt.csv", "--key", "src_len,tgt_len", "--method", "optimal"],
        "--method optimal: needs a one-length key (it bins contiguous ranges of sorted \
         lengths), and this key has 2 lengths; use --method kmeans",
    );
    seqpoint_in(dir.path())
        .args([
            "select",
            "mt.csv",
            "--key",
            "src_len,tgt_len",
            "-k",
            "2",
            "--format",
            "csv",
        ])
        .assert()
        .success();
}

/// Eight bad rows among good ones: the count, the first five line numbers and the first
/// reason, in the table (standard output) and as a note on standard error for JSON and CSV.
#[test]
fn skip_bad_reports_counts_and_first_lines() {
    let mut text = String::from("iteration,seq_len,time_ms\n");
    for i in 0..20 {
        let row = match i {
            2 => "2,x,1".to_string(),
            3 => "3,10,-1".to_string(),
            5 => "5,10".to_string(),
            8 => "8,10,NaN".to_string(),
            11 | 12 | 15 | 19 => format!("{i},1.5,1"),
            _ => format!("{i},{},{}", 10 + i % 3, 1 + i % 3),
        };
        text.push_str(&row);
        text.push('\n');
    }
    let dir = folder(&[("run.csv", text.as_bytes())]);
    let note = "skipped 8 bad rows of run.csv (lines 4, 5, 7, 10, 13, ...); first: run.csv:4:2: \
                column 'seq_len': found \"x\", expected a non-negative integer length";
    let table = seqpoint_in(dir.path())
        .args([
            "select",
            "run.csv",
            "--skip-bad",
            "-k",
            "2",
            "--format",
            "table",
        ])
        .assert()
        .success()
        .stderr("")
        .get_output()
        .stdout
        .clone();
    let table = String::from_utf8(table).unwrap();
    assert!(
        table.starts_with(&format!(
            "run.csv: 12 iterations, 2 SeqPoints, method optimal, pick nearest-mean\n{note}\n"
        )),
        "{table}"
    );
    for format in ["json", "csv"] {
        seqpoint_in(dir.path())
            .args([
                "select",
                "run.csv",
                "--skip-bad",
                "-k",
                "2",
                "--format",
                format,
            ])
            .assert()
            .success()
            .stderr(format!("note: {note}\n"));
    }
    // Without --skip-bad the first bad row stops the run.
    fails(
        &dir,
        &["run.csv", "-k", "2"],
        "run.csv:4:2: column 'seq_len': found \"x\", expected a non-negative integer length",
    );
}

#[test]
fn skip_bad_in_json_lines_counts_physical_lines() {
    let dir = folder(&[(
        "run.jsonl",
        b"{\"seq_len\": 1, \"time_ms\": 1}\n\nnot json\n{\"seq_len\": 2, \"time_ms\": -1}\n{\"seq_len\": 2, \"time_ms\": 2}\n",
    )]);
    seqpoint_in(dir.path())
        .args([
            "select",
            "run.jsonl",
            "--skip-bad",
            "-k",
            "1",
            "--format",
            "csv",
        ])
        .assert()
        .success()
        .stderr(
            "note: skipped 2 bad rows of run.jsonl (lines 3, 4); first: run.jsonl:3:2: expected \
             one JSON object per line (expected ident)\n",
        );
}

/// Settings at the edge of their types: K and --max-bins far beyond the keys, --samples at
/// u64::MAX, a vanishing target. Each runs to an answer (none allocates for the K typed, none
/// overflows) or is refused with its reason; a K beyond the keys is said, not hidden.
#[test]
fn extreme_settings_do_not_crash() {
    let dir = folder(&[("run.csv", RUN.as_bytes())]);
    let max = u64::MAX.to_string();
    for (args, stderr) in [
        (
            vec!["--bins", "1000000000"],
            "note: --bins 1000000000: the run has 3 distinct keys, so there are 3 bins\n"
                .to_string(),
        ),
        (
            vec!["--bins", max.as_str()],
            format!("note: --bins {max}: the run has 3 distinct keys, so there are 3 bins\n"),
        ),
        (vec!["--max-bins", max.as_str()], String::new()),
        (
            vec!["--max-bins", max.as_str(), "--target-error", "0.01"],
            String::new(),
        ),
        (vec!["--samples", max.as_str(), "-k", "2"], String::new()),
    ] {
        seqpoint_in(dir.path())
            .args(["select", "run.csv"])
            .args(&args)
            .assert()
            .success()
            .stderr(stderr);
    }
    // A vanishing target is refused: no K or number of samples could be computed to meet it.
    for target in ["1e-300", "0.0001"] {
        seqpoint_in(dir.path())
            .args(["select", "run.csv", "--target-error", target])
            .args(["--max-bins", "2"])
            .assert()
            .code(1)
            .stdout("")
            .stderr(predicates::str::starts_with(format!(
                "error: --target-error {target}: expected a percentage from 0.01 to 100"
            )));
    }
    // A warm-up past the run leaves nothing to pick: refused, saying so.
    seqpoint_in(dir.path())
        .args(["select", "run.csv", "--warmup", max.as_str(), "-k", "2"])
        .assert()
        .failure()
        .stderr(predicates::str::contains(format!(
            "--warmup {max}: covers the whole run"
        )));
}

/// A time column under another name is not silently replaced by a proxy cost: the note (and
/// the `--compare` error) name it with the `--metric` to pass, and passing it reads it.
#[test]
fn a_time_column_under_another_name_is_suggested_and_the_suggestion_works() {
    let log = "iteration,seq_len,gpu_step_time_ms\n0,10,1.5\n1,20,2.5\n2,10,1.25\n3,30,4\n";
    let dir = folder(&[("run.csv", log.as_bytes()), ("new.csv", log.as_bytes())]);
    seqpoint_in(dir.path())
        .args(["select", "run.csv", "-k", "2"])
        .assert()
        .success()
        .stderr(
            "note: run.csv: no time_ms or energy_j column, so a proxy cost (linear) stands in; \
             'gpu_step_time_ms' looks measured: pass --metric gpu_step_time_ms\n",
        );
    fails(
        &dir,
        &["run.csv", "--compare", "new.csv", "-k", "2"],
        "new.csv: the --compare log has no metric column (expected e.g. time_ms); \
         'gpu_step_time_ms' looks measured: pass --metric gpu_step_time_ms",
    );
    let out = seqpoint_in(dir.path())
        .args(["select", "run.csv", "--compare", "new.csv", "-k", "2"])
        .args(["--metric", "gpu_step_time_ms"])
        .assert()
        .success()
        .stderr("")
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("speedup    gpu_step_time_ms"), "{out}");
    assert!(!out.contains("proxy"), "{out}");
}

#[test]
fn a_met_target_says_what_it_covers_on_a_timed_log() {
    // The bundled 1-thread run shows about 4% noise within a length: the plan for the new
    // configuration stands on that noise, and the line says so without the no-noise wording.
    let log = concat!(env!("CARGO_MANIFEST_DIR"), "/assets/speech_t1.csv");
    let out = crate::common::text_output(&["select", log, "--target-error", "1"]);
    // Its words wrap with the terminal's width; joined, they say what the plan assumes and
    // what a noisier new configuration would take.
    let joined = out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        joined.contains(
            "for the new configuration the plan assumes its noise is the baseline's (a noisier \
             one needs more iterations, with the square of its noise: about 4x at twice the \
             noise): once measured"
        ),
        "{out}"
    );
    assert!(!out.contains("shows as none"), "{out}");
    // And how far its top-ups reach: the plan's 59 iterations are well under 20,000 / 24, so
    // each bin holds 24 more per planned one (or the whole bin), 25x the plan, which after
    // the slack of 25 / 16 is 16 = 4^2: a configuration 4x as noisy.
    assert!(
        joined.contains(
            "(the SeqPoints file holds 24 more of the bins' iterations per planned one, or the \
             whole bin, for a new configuration up to 4.0x as noisy as the plan assumes)"
        ),
        "{out}"
    );
}
