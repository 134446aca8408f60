//! The bad-input corpus (`tests/bad_inputs/`, one small file per case) run through the real
//! binary: each bad file gives exactly the message a user sees and exit code 1; files that are
//! merely unusual (BOM, CRLF, quotes, spaces, gzip) select exactly what the plain file selects.

use std::os::unix::fs::PermissionsExt;

use crate::common::{corpus, select_in_corpus, seqpoint_bound_by_permissions, seqpoint_in};

/// `(arguments after "select", exact standard error)`. Every case also gets `-k 2 --format csv`.
const BAD: &[(&[&str], &str)] = &[
    (
        &["empty.csv"],
        "error: empty.csv: the file is empty; expected a header row and one row per iteration\n",
    ),
    (
        &["blank_lines.csv"],
        "error: blank_lines.csv: the file is empty; expected a header row and one row per iteration\n",
    ),
    (
        &["header_only.csv"],
        "error: header_only.csv: the file has a header but no rows; expected one row per iteration\n",
    ),
    (
        &["semicolons.csv"],
        "error: semicolons.csv:1: no key column 'seq_len'; the columns are: iteration;seq_len;time_ms \
         (the header is one column: is the file separated by ';'? seqpoint reads commas (CSV), \
         tabs (TSV) or JSON Lines: convert it, e.g. tr ';' ',')\n",
    ),
    (
        &["tabs_named_csv.csv"],
        "error: tabs_named_csv.csv:1: no key column 'seq_len'; the columns are: \
         iteration\\tseq_len\\ttime_ms (the header is one column: is the file tab-separated? \
         use --input-format tsv)\n",
    ),
    (
        &["missing_key.csv"],
        "error: missing_key.csv:1: no key column 'seq_len'; the columns are: iteration, length, time_ms\n",
    ),
    (
        &["two_keys.csv", "--key", "src_len,len"],
        "error: two_keys.csv:1: no key column 'len'; the columns are: iteration, src_len, tgt_len, time_ms\n",
    ),
    (
        &["plain.csv", "--metric", "energy_j"],
        "error: plain.csv:1: no metric column 'energy_j'; the columns are: iteration, seq_len, time_ms\n",
    ),
    (
        &["mixed_types.csv"],
        "error: mixed_types.csv:3:2: column 'seq_len': found \"abc\", expected a non-negative integer length\n",
    ),
    (
        &["mixed_metric.csv"],
        "error: mixed_metric.csv:3:3: column 'time_ms': found \"fast\", expected a number\n",
    ),
    (
        &["fractional_length.csv"],
        "error: fractional_length.csv:3:2: column 'seq_len': found \"12.5\", expected a non-negative integer length\n",
    ),
    (
        &["negative_length.csv"],
        "error: negative_length.csv:3:2: column 'seq_len': found \"-4\", expected a non-negative integer length\n",
    ),
    (
        &["nan_metric.csv"],
        "error: nan_metric.csv:3:3: column 'time_ms': found \"NaN\", expected a finite number (not NaN or infinity)\n",
    ),
    (
        &["inf_metric.csv"],
        "error: inf_metric.csv:3:3: column 'time_ms': found \"inf\", expected a finite number (not NaN or infinity)\n",
    ),
    (
        &["negative_metric.csv"],
        "error: negative_metric.csv:3:3: column 'time_ms': found \"-2.5\", expected a non-negative number\n",
    ),
    (
        &["huge_length.csv"],
        "error: huge_length.csv:3:2: column 'seq_len': found \"4294967296\", expected a length of at most 4294967295\n",
    ),
    (
        &["huge_iteration.csv"],
        "error: huge_iteration.csv:3:1: column 'iteration': found \"1e30\", expected a non-negative integer\n",
    ),
    (
        &["huge_metric.csv"],
        "error: huge_metric.csv:3:3: column 'time_ms': found \"1e308\", expected a measurement of \
         at most 1e30 (a larger one would overflow the totals and intervals): rescale the metric \
         (e.g. to seconds)\n",
    ),
    (
        &["tiny_metric.csv"],
        "error: tiny_metric.csv:3:3: column 'time_ms': found \"1e-300\", expected 0 or a \
         measurement of at least 1e-30 (a smaller one would overflow a speedup's ratio): rescale \
         the metric (e.g. to nanoseconds)\n",
    ),
    (
        &["duplicate_iteration.csv"],
        "error: duplicate_iteration.csv:4: duplicate iteration 0 (also on line 2); expected each iteration once\n",
    ),
    (
        &["short_row.csv"],
        "error: short_row.csv:3:3: expected 3 fields as in the header, found 2\n",
    ),
    (
        &["long_row.csv"],
        "error: long_row.csv:3:4: expected 3 fields as in the header, found 4\n",
    ),
    (
        &["non_utf8_field.csv"],
        "error: non_utf8_field.csv:3:2: column 'seq_len': found \"\\xFF\\xFE\", expected a non-negative integer length\n",
    ),
    (
        &["non_utf8_header.csv"],
        "error: non_utf8_header.csv:1:3: header \"time_\\xE9ms\" is not UTF-8 text\n",
    ),
    (
        // An escape sequence in a header is shown escaped, never sent to the terminal.
        &["escape_header.csv"],
        "error: escape_header.csv:1: no key column 'seq_len'; the columns are: iteration, \\u{1b}[2Jlen, time_ms\n",
    ),
    (
        // A control character in a column that is used: no output could carry the name both
        // safely and as written (the CSV list had `t\u{1b}[2Jms`, naming no column).
        &["control_name.csv", "--metric", "t\u{1b}[2Jms"],
        "error: control_name.csv:1: column name 't\\u{1b}[2Jms' holds a control character \
         (U+001B); expected printable characters only: rename the column\n",
    ),
    (
        &["bad_rows.csv"],
        "error: bad_rows.csv:3:2: column 'seq_len': found \"x\", expected a non-negative integer length\n",
    ),
    (
        &["all_bad.csv", "--skip-bad"],
        "error: all_bad.csv: every row was bad (2 skipped, first: all_bad.csv:2:2: column 'seq_len': \
         found \"x\", expected a non-negative integer length)\n",
    ),
    (
        // A log still being written: its last line is cut mid-row and has no line end.
        &["cut_last_line.csv"],
        "error: cut_last_line.csv:6:3: expected 3 fields as in the header, found 2; this is the \
         last line and it has no line end: the log looks cut off mid-row (is the run still \
         writing it?): wait for it to finish, or pass --skip-bad to leave the row out\n",
    ),
    (
        &["cut_last_line.jsonl"],
        "error: cut_last_line.jsonl:4:22: expected one JSON object per line (EOF while parsing \
         a string); this is the last line and it has no line end: the log looks cut off \
         mid-row (is the run still writing it?): wait for it to finish, or pass --skip-bad to \
         leave the row out\n",
    ),
    (
        // More bad rows than good: --skip-bad alone does not select from the few left.
        &["bad_rows.csv", "--skip-bad"],
        "error: bad_rows.csv: --skip-bad would leave out 5 of 9 rows (55.56%) and keep 4; \
         expected at most 50% of them bad (first: bad_rows.csv:3:2: column 'seq_len': found \
         \"x\", expected a non-negative integer length): the file, --input-format or a column \
         is likely wrong; pass --skip-bad=100% to keep what is left\n",
    ),
    (
        &["bad_rows.csv", "--skip-bad=50"],
        "error: bad_rows.csv: --skip-bad would leave out 5 of 9 rows (55.56%) and keep 4; \
         expected at most 50% of them bad (first: bad_rows.csv:3:2: column 'seq_len': found \
         \"x\", expected a non-negative integer length): the file, --input-format or a column \
         is likely wrong; pass --skip-bad=100% to keep what is left\n",
    ),
    (
        // UTF-32 is named as UTF-32: the UTF-16 iconv it was given made garbage.
        &["utf32.csv"],
        "error: utf32.csv: the file is UTF-32 text; expected UTF-8: convert it with iconv -f \
         UTF-32 -t UTF-8 and read the result\n",
    ),
    (
        &["zipped.csv"],
        "error: zipped.csv: the file is zip data, not text; expected CSV, TSV or JSON Lines, \
         plain or gzip-compressed: unpack it first (e.g. unzip -p FILE > run.csv)\n",
    ),
    (
        &["bzipped.csv"],
        "error: bzipped.csv: the file is bzip2 data, not text; expected CSV, TSV or JSON Lines, \
         plain or gzip-compressed: unpack it first (e.g. bzip2 -dc FILE > run.csv)\n",
    ),
    (
        &["xzipped.csv"],
        "error: xzipped.csv: the file is xz data, not text; expected CSV, TSV or JSON Lines, \
         plain or gzip-compressed: unpack it first (e.g. xz -dc FILE > run.csv)\n",
    ),
    (
        // A lone surrogate in a field nothing reads: named, at its column.
        &["lone_surrogate.jsonl"],
        "error: lone_surrogate.jsonl:2:56: found \\udc00 in a string, half of a UTF-16 \
         surrogate pair and no character by itself; expected one JSON object per line with \
         strings of whole characters (the writer split a character in two)\n",
    ),
    (
        &["truncated.csv.gz"],
        "error: truncated.csv.gz: truncated or corrupt gzip data (incomplete deflate stream); \
         expected a complete .gz file\n",
    ),
    (
        &["bad.jsonl"],
        "error: bad.jsonl:2:1: expected one JSON object per line (invalid type: sequence, expected a map)\n",
    ),
    (
        &["bad_value.jsonl"],
        "error: bad_value.jsonl:2:44: column 'time_ms': found \"slow\", expected a number\n",
    ),
    // JSON null or an array is a value that is there, not a missing column.
    (
        &["null_value.jsonl"],
        "error: null_value.jsonl:2:44: column 'time_ms': found \"null\", expected a number\n",
    ),
    (
        &["array_value.jsonl"],
        "error: array_value.jsonl:2:29: column 'seq_len': found \"[20,21]\", expected a non-negative integer length\n",
    ),
    (
        &["base.csv", "--compare", "compare_missing.csv"],
        "error: compare_missing.csv: iteration 2 of base.csv is missing here; expected the same iterations in both logs\n",
    ),
    (
        &["base.csv", "--compare", "compare_extra.csv"],
        "error: compare_extra.csv: iteration 4 is not in base.csv; expected the same iterations in both logs\n",
    ),
    (
        &["base.csv", "--compare", "compare_key.csv"],
        "error: compare_key.csv: iteration 2 has key [12] here but [10] in base.csv; expected the same \
         batches in the same order\n",
    ),
    (
        &["base.csv", "--compare", "compare_metric.csv"],
        "error: compare_metric.csv: the --compare log has metrics [energy_j], expected the baseline's [time_ms]\n",
    ),
    (
        &["base.csv", "--compare", "compare_no_metric.csv"],
        "error: compare_no_metric.csv: the --compare log has no metric column (expected e.g. time_ms)\n",
    ),
    (
        &["base.csv", "--compare", "compare_bad_row.csv"],
        "error: compare_bad_row.csv:4:3: column 'time_ms': found \"oops\", expected a number\n",
    ),
    (
        // Skipping the bad compare row leaves its iteration missing: the message says why.
        &["base.csv", "--compare", "compare_bad_row.csv", "--skip-bad"],
        "error: compare_bad_row.csv: iteration 2 of base.csv is missing here (a bad row was skipped \
         here with --skip-bad, at line 4); expected the same iterations in both logs\n",
    ),
    (
        // The same from the other side: the baseline's skipped row leaves the compare one extra.
        &["compare_bad_row.csv", "--compare", "base.csv", "--skip-bad"],
        "error: base.csv: iteration 2 is not in compare_bad_row.csv (a bad row was skipped there \
         with --skip-bad, at line 4); expected the same iterations in both logs\n",
    ),
    (
        &["two_keys.csv", "--key", "src_len,tgt_len", "--method", "optimal"],
        "error: --method optimal: needs a one-length key (it bins contiguous ranges of sorted \
         lengths), and this key has 2 lengths; use --method kmeans\n",
    ),
    (
        // A quote that never closes, in a column nothing reads, would swallow 38 rows.
        &["unterminated_quote.csv"],
        "error: unterminated_quote.csv:3:4: unterminated quote: this field opens with '\"' and \
         never closes, so the rest of the file would be read as one value; expected a closing \
         '\"' (or no quote: in CSV a field that starts with '\"' is quoted)\n",
    ),
    (
        // 2,000,000 zero bytes in 2 KB of gzip: refused after the first MiB, not grown into.
        &["zeros.csv.gz"],
        "error: zeros.csv.gz:1: line longer than 1 MiB (the --max-line limit); expected one \
         short row per line: is this a run log? stopped reading here (raise the limit with \
         --max-line)\n",
    ),
    (
        &["plain.csv", "--max-line", "10"],
        "error: plain.csv:1: line longer than 10 bytes (the --max-line limit); expected one \
         short row per line: is this a run log? stopped reading here (raise the limit with \
         --max-line)\n",
    ),
    (
        &["plain.csv", "--max-input", "20"],
        "error: plain.csv: holds more than 20 bytes (the --max-input limit); stopped reading \
         there (raise the limit with --max-input)\n",
    ),
    (
        &["quoted.csv", "--max-input", "20"],
        "error: quoted.csv: holds more than 20 bytes (the --max-input limit); stopped reading \
         there (raise the limit with --max-input)\n",
    ),
    (
        &["plain.csv.gz", "--max-input", "20"],
        "error: plain.csv.gz: decompresses to more than 20 bytes (the --max-input limit); \
         stopped reading there (raise the limit with --max-input)\n",
    ),
    (
        // Four rows of a key and a metric: 4 x (4 + 8 + 8) bytes of columns.
        &["plain.csv", "--max-memory", "64"],
        "error: plain.csv: reading it needs at least 80 bytes, more than 64 bytes (the \
         --max-memory limit); stopped reading there (raise the limit with --max-memory, or \
         split the log)\n",
    ),
    (
        // A metric that first appears on line 2 is a column, not ignored.
        &["late_metric.jsonl"],
        "error: late_metric.jsonl:1: column 'time_ms' is missing in this row (the key first \
         appears on line 2; expected it on every line)\n",
    ),
    (
        &["duplicate_key.jsonl"],
        "error: duplicate_key.jsonl:2:44: key 'time_ms' appears twice in this object; expected \
         each key once\n",
    ),
    (
        &["ambiguous_key.csv"],
        "error: ambiguous_key.csv:1:4: columns 'seq_len' and 'SEQ_LEN' both match the key column \
         'seq_len' (names match ignoring case); expected one: rename or remove the other\n",
    ),
    (
        &["repeated_key.csv"],
        "error: repeated_key.csv:1:4: columns 'seq_len' and 'seq_len' both match the key column \
         'seq_len' (names match ignoring case); expected one: rename or remove the other\n",
    ),
    (
        &["utf16.csv"],
        "error: utf16.csv: the file is UTF-16 text; expected UTF-8: convert it with iconv -f \
         UTF-16LE -t UTF-8 and read the result\n",
    ),
    (
        &["junk_after.csv.gz"],
        "error: junk_after.csv.gz: complete gzip data followed by bytes that are neither gzip nor \
         zero padding (trailing junk); expected only gzip data: remove what follows the \
         compressed stream, or decompress it with gzip -dc (which warns and ignores it) and \
         read the result\n",
    ),
    (
        &["double.csv.gz"],
        "error: double.csv.gz: decompresses to gzip data again (the file was compressed twice); \
         expected text inside one layer of gzip: decompress it once with gzip -dc and read the \
         result\n",
    ),
    (
        // The value as written, not as serde_json prints it back (-1e29).
        &["exponent.jsonl"],
        "error: exponent.jsonl:2:44: column 'time_ms': found \"-1E+29\", expected a non-negative \
         number\n",
    ),
    (
        &["no_such_file.csv"],
        "error: no_such_file.csv: cannot read: No such file or directory (os error 2)\n",
    ),
];

#[test]
fn every_bad_input_gives_its_exact_message() {
    let mut failures = Vec::new();
    for (args, expected) in BAD {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["-k", "2", "--format", "csv"]);
        let (code, stdout, stderr) = select_in_corpus(&all);
        if code != 1 || !stdout.is_empty() || stderr != *expected {
            failures.push(format!(
                "select {}\n  exit {code}, stdout {stdout:?}\n  got      {stderr:?}\n  expected {expected:?}",
                all.join(" ")
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Files that differ from `plain.csv` only in encoding details select exactly the same.
#[test]
fn unusual_but_valid_files_load_like_the_plain_one() {
    let (code, plain, stderr) = select_in_corpus(&["plain.csv", "-k", "2", "--format", "csv"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert!(
        plain.starts_with("id,iteration,epoch,seq_len,weight,time_ms\n"),
        "{plain}"
    );
    for file in [
        "bom.csv",
        "crlf.csv",
        "quoted.csv",
        "spaces.csv",
        "plain.csv.gz",
        "latin1.csv",
        // In TSV a quote is an ordinary character (a note column full of them).
        "quotes.tsv",
        // Zero padding after the gzip data, as gzip itself accepts.
        "padded.csv.gz",
    ] {
        let (code, out, stderr) = select_in_corpus(&[file, "-k", "2", "--format", "csv"]);
        assert_eq!((code, stderr.as_str()), (0, ""), "{file}");
        assert_eq!(out, plain, "{file} should select what plain.csv selects");
    }
}

/// JSON Lines ended by `\r` alone (jq and Python read it) select what the `\n` lines select.
#[test]
fn json_lines_ended_by_cr_alone_load() {
    let (code, cr, stderr) = select_in_corpus(&["cr_only.jsonl", "-k", "2", "--format", "csv"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read(corpus().join("cr_only.jsonl")).unwrap();
    let lf: Vec<u8> = text
        .iter()
        .map(|&b| if b == b'\r' { b'\n' } else { b })
        .collect();
    std::fs::write(dir.path().join("cr_only.jsonl"), lf).unwrap();
    let out = seqpoint_in(dir.path())
        .args(["select", "cr_only.jsonl", "-k", "2", "--format", "csv"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(cr, String::from_utf8_lossy(&out.stdout));
    assert_eq!(cr.lines().count(), 3, "{cr}");
}

#[test]
fn the_largest_length_loads() {
    let (code, out, stderr) = select_in_corpus(&["max_length.csv", "-k", "2", "--format", "csv"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert!(out.contains(",4294967295,"), "{out}");
}

#[test]
fn skipped_rows_are_reported_even_in_json() {
    let (code, out, stderr) = select_in_corpus(&[
        "bad_rows.csv",
        "--skip-bad=60%",
        "-k",
        "2",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    // Said once.
    assert_eq!(
        stderr,
        "note: skipped 5 bad rows of bad_rows.csv (lines 3, 4, 6, 7, 9); first: bad_rows.csv:3:2: \
         column 'seq_len': found \"x\", expected a non-negative integer length\n"
    );
    let doc: serde_json::Value = serde_json::from_str(&out).expect("stdout is clean JSON");
    assert_eq!(doc["input"]["iterations"], 4);
    assert_eq!(doc["input"]["skipped_rows"], 5);
    // A share beyond 100% is a usage error.
    let (code, _, stderr) = select_in_corpus(&["bad_rows.csv", "--skip-bad=150%", "-k", "2"]);
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with(
            "error: invalid value '150%' for '--skip-bad[=<PCT>]': expected the share of rows \
             that may be skipped, from 0% to 100% (e.g. --skip-bad=20%), found '150%'\n"
        ),
        "{stderr}"
    );
    // `--skip-bad FILE` is the switch and the run log, not a share.
    let (code, _, stderr) = select_in_corpus(&["--skip-bad", "plain.csv", "-k", "2"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
}

/// Three good rows among two million bad ones: refused by default, kept when the user says so
/// (`--skip-bad=100%`), the count in the JSON and the note written once.
#[test]
fn skip_bad_refuses_to_keep_almost_nothing_unless_told() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("iteration,seq_len,time_ms\n0,10,1\n1,20,2\n2,30,3\n");
    for i in 3..20_003 {
        text.push_str(&format!("{i},x,1\n"));
    }
    std::fs::write(dir.path().join("run.csv"), text).unwrap();
    let run = |args: &[&str]| {
        let out = seqpoint_in(dir.path()).args(args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, out, err) = run(&["select", "run.csv", "--skip-bad", "-k", "2"]);
    assert_eq!((code, out.as_str()), (Some(1), ""), "{err}");
    assert!(
        err.starts_with(
            "error: run.csv: --skip-bad would leave out 20000 of 20003 rows (99.99%) and keep 3; \
             expected at most 50% of them bad (first: run.csv:5:2:"
        ),
        "{err}"
    );
    let (code, out, err) = run(&[
        "select",
        "run.csv",
        "--skip-bad=100%",
        "-k",
        "2",
        "--format",
        "json",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        err.matches("note: skipped 20000 bad rows").count(),
        1,
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["input"]["skipped_rows"], 20000);
    assert_eq!(doc["input"]["iterations"], 3);
    // The report and the figure say it too, once; the report's JSON records the count.
    let (code, out, err) = run(&["report", "run.csv", "--skip-bad=100%", "--format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        err.matches("note: skipped 20000 bad rows").count(),
        1,
        "{err}"
    );
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["input"]["skipped_rows"], 20000);
    let (code, _, err) = run(&["plot", "run.csv", "--skip-bad=100%", "-k", "2", "-o", "-"]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(
        err.matches("note: skipped 20000 bad rows").count(),
        1,
        "{err}"
    );
}

/// A log still being written: with --skip-bad its cut last row is left out and named once.
#[test]
fn a_cut_last_line_is_named_when_skipped() {
    for file in ["cut_last_line.csv", "cut_last_line.jsonl"] {
        let (code, out, stderr) =
            select_in_corpus(&[file, "--skip-bad", "-k", "2", "--format", "csv"]);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(out.lines().count(), 3, "{out}");
        // The one bad row is the cut one: its reason says so, in one note.
        assert!(
            stderr.starts_with(&format!("note: skipped 1 bad row of {file} (line ")),
            "{stderr}"
        );
        assert!(
            stderr.ends_with(
                "; this is the last line and it has no line end: the log looks cut off mid-row \
                 (is the run still writing it?)\n"
            ),
            "{stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
    // Another bad row first: the cut one gets a note of its own.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("run.csv"),
        "iteration,seq_len,time_ms\n0,10,1\n1,x,2\n2,30,3\n3,40,4\n4,50,5\n5,6",
    )
    .unwrap();
    let out = seqpoint_in(dir.path())
        .args([
            "select",
            "run.csv",
            "--skip-bad",
            "-k",
            "2",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(
        stderr.lines().next().unwrap_or_default(),
        "note: run.csv:7: the last line has no line end and was left out with --skip-bad: the \
         log looks cut off mid-row (is the run still writing it?)"
    );
    assert_eq!(stderr.lines().count(), 2, "{stderr}");
    // A last line without a line end that is a whole row is read as it is, without a word.
    let (code, out, stderr) =
        select_in_corpus(&["no_final_newline.csv", "-k", "2", "--format", "csv"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    assert!(out.contains("\n"), "{out}");
}

/// A field of a million characters: the message shows 40 of them, not the megabyte.
#[test]
fn a_very_long_field_is_cut_in_the_message() {
    let dir = tempfile::tempdir().unwrap();
    let long = "9".repeat(1_000_000);
    let text = format!("iteration,seq_len,time_ms\n0,10,1\n1,20,{long}x\n");
    std::fs::write(dir.path().join("long.csv"), text).unwrap();
    let output = seqpoint_in(dir.path())
        .args(["select", "long.csv", "-k", "1"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        format!(
            "error: long.csv:3:3: column 'time_ms': found \"{}…\", expected a number\n",
            "9".repeat(40)
        )
    );
}

/// A header of 100,000 columns without the key: the message lists names up to 400 characters
/// (`c0`..`c9` take 4 with their separator, `c10`.. take 5: 40 + 72 * 5 = 400, so `c0`..`c81`)
/// and then the count.
#[test]
fn a_very_wide_header_is_summarised() {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..100_000).map(|i| format!("c{i}")).collect();
    let text = format!("{}\n{}\n", names.join(","), vec!["1"; 100_000].join(","));
    std::fs::write(dir.path().join("wide.csv"), text).unwrap();
    let output = seqpoint_in(dir.path())
        .args(["select", "wide.csv"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let listed: Vec<String> = (0..82).map(|i| format!("c{i}")).collect();
    assert_eq!(
        String::from_utf8(output.stderr).unwrap(),
        format!(
            "error: wide.csv:1: no key column 'seq_len'; the columns are: {}, ... (100000 columns in all)\n",
            listed.join(", ")
        )
    );
}

/// Long lines that are valid load: a 200,000-character ignored column does not matter.
#[test]
fn a_very_long_valid_line_loads() {
    let dir = tempfile::tempdir().unwrap();
    let note = "n".repeat(200_000);
    let text = format!("seq_len,time_ms,note\n10,1.5,{note}\n20,2.5,{note}\n");
    std::fs::write(dir.path().join("long.csv"), text).unwrap();
    seqpoint_in(dir.path())
        .args(["select", "long.csv", "-k", "2", "--format", "csv"])
        .assert()
        .success()
        .stdout("id,iteration,epoch,seq_len,weight,time_ms\n0,0,,10,1,1.5\n1,1,,20,1,2.5\n");
}

#[test]
fn a_directory_is_not_a_run_log() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("run.csv")).unwrap();
    seqpoint_in(dir.path())
        .args(["select", "run.csv"])
        .assert()
        .code(1)
        .stdout("")
        .stderr(
            "error: run.csv: is a directory; expected a run log file (CSV, TSV or JSON Lines, \
             optionally .gz)\n",
        );
}

/// A file no one may read. As root (CI), where chmod 000 does not stop reading, `seqpoint`
/// runs as an unprivileged user who owns the file, as a normal user would.
#[test]
fn a_file_without_read_permission() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("locked.csv");
    std::fs::copy(corpus().join("plain.csv"), &path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    seqpoint_bound_by_permissions(dir.path())
        .args(["select", "locked.csv"])
        .assert()
        .code(1)
        .stderr("error: locked.csv: cannot read: Permission denied (os error 13)\n");
}

/// A Unix socket where a log is expected: it exists, it is not a folder, and opening it fails
/// even for root. The message names the file and the reason.
#[test]
fn a_socket_cannot_be_read() {
    let dir = tempfile::tempdir().unwrap();
    let _listener = std::os::unix::net::UnixListener::bind(dir.path().join("run.csv")).unwrap();
    seqpoint_in(dir.path())
        .args(["select", "run.csv"])
        .assert()
        .code(1)
        .stdout("")
        .stderr("error: run.csv: cannot read: No such device or address (os error 6)\n");
}

/// A path through a regular file (`plain.csv/run.csv`) is unreadable for root too.
#[test]
fn a_path_under_a_file_cannot_be_read() {
    let (code, out, stderr) = select_in_corpus(&["plain.csv/run.csv"]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert_eq!(
        stderr,
        "error: plain.csv/run.csv: cannot read: Not a directory (os error 20)\n"
    );
}

/// With `--skip-bad` the line without the late metric is skipped and the metric is read from
/// the others (it used to be ignored, and a proxy cost used without a word).
#[test]
fn a_metric_that_starts_on_line_two_is_read() {
    let (code, out, stderr) = select_in_corpus(&[
        "late_metric.jsonl",
        "--skip-bad",
        "-k",
        "2",
        "--format",
        "csv",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        out.starts_with("id,iteration,epoch,seq_len,weight,time_ms\n"),
        "{out}"
    );
    assert!(stderr.starts_with("note: skipped 1 bad row of late_metric.jsonl (line 1)"));
}

/// `/dev/zero` never ends and has no newline: refused after one line's worth, at once.
#[test]
fn an_endless_device_is_refused_at_the_line_limit() {
    let dir = tempfile::tempdir().unwrap();
    seqpoint_in(dir.path())
        .args(["select", "/dev/zero"])
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .code(1)
        .stdout("")
        .stderr(
            "error: /dev/zero:1: line longer than 1 MiB (the --max-line limit); expected one \
             short row per line: is this a run log? stopped reading here (raise the limit with \
             --max-line)\n",
        );
}

/// A named pipe is opened once and read once: the writer's data all arrives (it used to be
/// opened, closed and opened again, losing the data and blocking).
#[test]
fn a_named_pipe_is_read_like_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("run.csv");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(status.success());
    let text = std::fs::read(corpus().join("plain.csv")).unwrap();
    let writer = std::thread::spawn(move || std::fs::write(fifo, text));
    let (_, plain, _) = select_in_corpus(&["plain.csv", "-k", "2", "--format", "csv"]);
    seqpoint_in(dir.path())
        .args(["select", "run.csv", "-k", "2", "--format", "csv"])
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .success()
        .stdout(plain);
    writer.join().unwrap().unwrap();
}

/// Standard input as both the run log and `--compare` cannot work: said as such.
#[test]
fn standard_input_cannot_be_read_twice() {
    seqpoint_in(&corpus())
        .args(["select", "-", "--compare", "-"])
        .pipe_stdin(corpus().join("plain.csv"))
        .unwrap()
        .assert()
        .code(1)
        .stdout("")
        .stderr(
            "error: <stdin>: the run log and --compare are both standard input, which can be read \
             only once; expected a file for one of them (save it first, e.g. with tee)\n",
        );
}

/// The SeqPoints document with a byte-order mark projects as without one; MEASURED is read
/// within the same limits as a run log.
#[test]
fn project_accepts_a_bom_and_bounds_measured() {
    let dir = tempfile::tempdir().unwrap();
    let (code, doc, stderr) = select_in_corpus(&["plain.csv", "-k", "2", "--format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    std::fs::write(
        dir.path().join("seqpoints.json"),
        [b"\xEF\xBB\xBF".as_slice(), doc.as_bytes()].concat(),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("measured.csv"),
        "seqpoint,time_ms\n0,1.5\n1,4\n",
    )
    .unwrap();
    seqpoint_in(dir.path())
        .args(["project", "seqpoints.json", "measured.csv"])
        .assert()
        .success();
    seqpoint_in(dir.path())
        .args([
            "project",
            "seqpoints.json",
            "measured.csv",
            "--max-line",
            "8",
        ])
        .assert()
        .code(1)
        .stderr(
            "error: measured.csv:1: line longer than 8 bytes (the --max-line limit); expected \
             one short row per line: is this a run log? stopped reading here (raise the limit \
             with --max-line)\n",
        );
}

/// `(MEASURED file in the corpus, exact standard error)` of `project` against the SeqPoints
/// file of `select plain.csv -k 2`: MEASURED follows the run log's column rules.
const MEASURED_BAD: &[(&str, &str)] = &[
    (
        // JSON Lines columns are every line's keys, not the first line's.
        "measured_late_metric.jsonl",
        "error: measured_late_metric.jsonl:1: column 'time_ms' is missing in this row (the key \
         first appears on line 2; expected it on every line)\n",
    ),
    (
        "measured_duplicate_key.jsonl",
        "error: measured_duplicate_key.jsonl:2:28: key 'time_ms' appears twice in this object; \
         expected each key once\n",
    ),
    (
        "measured_ambiguous.jsonl",
        "error: measured_ambiguous.jsonl:2:28: columns 'TIME_MS' and 'time_ms' both match the \
         metric column 'time_ms' (names match ignoring case); expected one: rename or remove the \
         other\n",
    ),
    (
        "measured_ambiguous.csv",
        "error: measured_ambiguous.csv:1:3: columns 'time_ms' and 'TIME_MS' both match the \
         metric column 'time_ms' (names match ignoring case); expected one: rename or remove the \
         other\n",
    ),
    (
        "measured_repeated.csv",
        "error: measured_repeated.csv:1:3: columns 'seqpoint' and 'seqpoint' both match the \
         seqpoint column 'seqpoint' (names match ignoring case); expected one: rename or remove \
         the other\n",
    ),
    (
        "measured_unterminated_quote.csv",
        "error: measured_unterminated_quote.csv:2:3: unterminated quote: this field opens with \
         '\"' and never closes, so the rest of the file would be read as one value; expected a \
         closing '\"' (or no quote: in CSV a field that starts with '\"' is quoted)\n",
    ),
];

/// The SeqPoints file of `select plain.csv -k 2`, written into `dir`.
fn plain_seqpoints(dir: &std::path::Path) -> std::path::PathBuf {
    let (code, doc, stderr) = select_in_corpus(&["plain.csv", "-k", "2", "--format", "json"]);
    assert_eq!(code, 0, "{stderr}");
    let path = dir.join("seqpoints.json");
    std::fs::write(&path, doc).unwrap();
    path
}

#[test]
fn every_bad_measured_file_gives_its_exact_message() {
    let dir = tempfile::tempdir().unwrap();
    let doc = plain_seqpoints(dir.path());
    let mut failures = Vec::new();
    for (file, expected) in MEASURED_BAD {
        let output = seqpoint_in(&corpus())
            .args(["project", doc.to_str().unwrap(), file])
            .output()
            .expect("the binary runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        if output.status.code() != Some(1) || !output.stdout.is_empty() || stderr != *expected {
            failures.push(format!(
                "project SEQPOINTS {file}\n  exit {:?}\n  got      {stderr:?}\n  expected {expected:?}",
                output.status.code()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A JSON Lines key nothing reads may start on any line; the rows still project.
#[test]
fn a_measured_key_nothing_reads_may_start_late() {
    let dir = tempfile::tempdir().unwrap();
    let doc = plain_seqpoints(dir.path());
    let output = seqpoint_in(&corpus())
        .args(["project", doc.to_str().unwrap(), "measured_late_note.jsonl"])
        .output()
        .expect("the binary runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
