//! The CLI under hostile or careless use, with the real binary and real files: a closed pipe,
//! output names whose extension says another format (`.csv.gz`, `.png`, `-`), `man --dir`
//! into a folder with a page in the way, nonsense flags, a tampered SeqPoints document,
//! control characters in file names, and signals in the middle of writing a file.

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::common::seqpoint_in;

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// `seqpoint ARGS` in `dir` fails with exactly `message` (after "error: "), exit code 1, and
/// writes nothing to standard output.
fn fails(dir: &Path, args: &[&str], message: &str) {
    seqpoint_in(dir)
        .args(args)
        .assert()
        .code(1)
        .stdout("")
        .stderr(format!("error: {message}\n"));
}

// ---- a closed pipe ------------------------------------------------------------------------

/// `seqpoint select | head -c 10` with the reader gone before anything is written: the process
/// ends by SIGPIPE as other tools do, with nothing on standard error.
#[test]
fn a_closed_pipe_ends_quietly_by_sigpipe() {
    for args in [&["select"][..], &["select", "--format", "csv"], &["man"]] {
        // The reader is closed before the child starts: with `Stdio::piped()` a small output
        // could land in the pipe's buffer before the parent dropped its end, and the child
        // would exit 0 on a loaded machine.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let mut child = Command::new(env!("CARGO_BIN_EXE_seqpoint"))
            .args(args)
            // A slow (unoptimised, shared-core) build may pass two seconds and write its
            // progress status line: that is not the pipe's doing, and not what is checked here.
            .env("SEQPOINT_STATUS_AFTER_MS", "600000")
            .stdout(Stdio::from(writer))
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(stderr, "", "{args:?}");
        assert_eq!(status.signal(), Some(libc::SIGPIPE), "{args:?}: {status:?}");
    }
}

// ---- the format follows the name ----------------------------------------------------------

#[test]
fn a_gz_name_is_written_compressed_in_the_format_before_it() {
    let dir = tempfile::tempdir().unwrap();
    seqpoint_in(dir.path())
        .args(["select", "-k", "2", "-o", "list.csv.gz"])
        .assert()
        .success()
        .stderr("wrote list.csv.gz\n");
    seqpoint_in(dir.path())
        .args(["select", "-k", "2", "-o", "s.JSON.gz"])
        .assert()
        .success();
    let gunzip = |name: &str| {
        let bytes = std::fs::read(dir.path().join(name)).unwrap();
        let mut text = String::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_string(&mut text)
            .unwrap();
        text
    };
    assert!(gunzip("list.csv.gz").starts_with("id,iteration,epoch,seq_len,weight,"));
    let doc: Value = serde_json::from_str(&gunzip("s.JSON.gz")).unwrap();
    assert_eq!(doc["schema"], "seqpoint/1");
    // What is written can be read back: `project` reads the compressed document's list.
}

#[test]
fn an_extension_that_names_no_format_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    fails(
        dir.path(),
        &["select", "-k", "2", "-o", "s.xlsx"],
        "s.xlsx: cannot tell the format from '.xlsx'; name the file .json, .csv, .simpoints, a text table \
         as .txt or no extension (each optionally .gz), or pass --format",
    );
    fails(
        dir.path(),
        &["report", "-o", "checks.csv"],
        "checks.csv: cannot tell the format from '.csv'; name the file .json, a text table as \
         .txt or no extension (each optionally .gz), or pass --format",
    );
    assert!(files_in(dir.path()).is_empty());
    // Said explicitly, the format wins over the name.
    seqpoint_in(dir.path())
        .args(["select", "-k", "2", "-o", "s.xlsx", "--format", "csv"])
        .assert()
        .success();
    assert!(std::fs::read_to_string(dir.path().join("s.xlsx"))
        .unwrap()
        .starts_with("id,iteration,"));
}

#[test]
fn dash_is_standard_output_never_a_file_named_dash() {
    let dir = tempfile::tempdir().unwrap();
    let out = seqpoint_in(dir.path())
        .args(["select", "-k", "2", "--format", "json", "-o", "-"])
        .assert()
        .success()
        .stderr("")
        .get_output()
        .stdout
        .clone();
    let doc: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(doc["seqpoints"].as_array().unwrap().len(), 2);
    let svg = seqpoint_in(dir.path())
        .args(["plot", "-k", "2", "-o", "-"])
        .assert()
        .success()
        .stderr("")
        .get_output()
        .stdout
        .clone();
    assert!(svg.starts_with(b"<svg "));
    roxmltree::Document::parse(std::str::from_utf8(&svg).unwrap()).unwrap();
    seqpoint_in(dir.path())
        .args(["report", "-o", "-"])
        .assert()
        .success()
        .stdout(predicates::str::starts_with("sample:speech_t1.csv"));
    assert!(files_in(dir.path()).is_empty());
}

#[test]
fn plot_refuses_a_png_name_and_says_how_to_get_one() {
    let dir = tempfile::tempdir().unwrap();
    fails(
        dir.path(),
        &["plot", "-o", "fig.png"],
        "fig.png: seqpoint draws SVG only; write fig.svg, then convert it: rsvg-convert fig.svg \
         -o fig.png",
    );
    fails(
        dir.path(),
        &["plot", "-o", "fig.pdf"],
        "fig.pdf: seqpoint draws SVG only; write fig.svg, then convert it: rsvg-convert -f pdf \
         fig.svg -o fig.pdf",
    );
    fails(
        dir.path(),
        &["plot", "-o", "figure"],
        "figure: a figure is SVG; name it figure.svg (or -o - for standard output)",
    );
    assert!(files_in(dir.path()).is_empty());
}

/// The advice works when followed: where rsvg-convert is installed, the PNG it names is made.
#[test]
fn the_png_advice_works_when_followed() {
    if Command::new("rsvg-convert")
        .arg("--version")
        .output()
        .is_err()
    {
        crate::common::skip(
            "hardening_cli::the_png_advice_works_when_followed",
            "rsvg-convert is not installed",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    seqpoint_in(dir.path())
        .args(["plot", "-k", "3", "-o", "fig.svg"])
        .assert()
        .success()
        .stderr("wrote fig.svg (3 SeqPoints); as a PNG: rsvg-convert fig.svg -o fig.png\n");
    let status = Command::new("rsvg-convert")
        .args(["fig.svg", "-o", "fig.png"])
        .current_dir(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    assert!(std::fs::read(dir.path().join("fig.png"))
        .unwrap()
        .starts_with(b"\x89PNG"));
}

// ---- man --dir: every page or none --------------------------------------------------------

#[test]
fn man_dir_writes_every_page_or_none() {
    let dir = tempfile::tempdir().unwrap();
    let man = dir.path().join("man1");
    std::fs::create_dir(&man).unwrap();
    // A page that exists, and sorts after pages that do not: nothing may be written first.
    std::fs::write(man.join("seqpoint-tui.1"), "mine\n").unwrap();
    fails(
        dir.path(),
        &["man", "--dir", "man1"],
        "man1/seqpoint-tui.1: already exists; pass --force to overwrite it; no man page was \
         written",
    );
    assert_eq!(files_in(&man), ["seqpoint-tui.1"]);
    // A named pipe in the way is refused even with --force, and again nothing is written.
    std::fs::remove_file(man.join("seqpoint-tui.1")).unwrap();
    let c = std::ffi::CString::new(man.join("seqpoint-report.1").to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    seqpoint_in(dir.path())
        .args(["man", "--dir", "man1", "--force"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "man1/seqpoint-report.1: is a named pipe",
        ));
    assert_eq!(files_in(&man), ["seqpoint-report.1"]);
    std::fs::remove_file(man.join("seqpoint-report.1")).unwrap();
    seqpoint_in(dir.path())
        .args(["man", "--dir", "man1"])
        .assert()
        .success();
    let pages = files_in(&man);
    assert!(
        pages.len() >= 8 && pages.iter().all(|p| p.ends_with(".1")),
        "{pages:?}"
    );
}

// ---- nonsense flags -----------------------------------------------------------------------

#[test]
fn nonsense_selection_flags_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    for (target, shown) in [("1e-320", "1e-320"), ("0.001", "0.001"), ("150", "150")] {
        fails(
            dir.path(),
            &["select", "--target-error", target],
            &format!(
                "--target-error {shown}: expected a percentage from 0.01 to 100; a target finer \
                 than 0.01% is below the run-to-run noise of any measured time, and no K or \
                 number of samples would be computed to meet it"
            ),
        );
    }
    fails(
        dir.path(),
        &["select", "--max-bins", "0"],
        "--max-bins 0: expected a whole number of at least 1",
    );
    fails(
        dir.path(),
        &["select", "--key", "a,b,c"],
        "--key a,b,c: one or two key columns (a length, or src_len,tgt_len), not 3",
    );
    fails(
        dir.path(),
        &["select", "--key", "seq_len,seq_len"],
        "--key seq_len,seq_len: names the same column twice; give it once, or two different \
         columns",
    );
    // The same checks hold for plot (and the explorer, which shares them).
    fails(
        dir.path(),
        &["plot", "--max-bins", "0", "-o", "f.svg"],
        "--max-bins 0: expected a whole number of at least 1",
    );
}

/// The finest target accepted advises a computed count of samples, not a saturated u64::MAX.
#[test]
fn a_target_at_the_floor_advises_no_saturated_count() {
    let out = seqpoint_in(Path::new(env!("CARGO_MANIFEST_DIR")))
        .args(["select", "--target-error", "0.01", "--max-bins", "2"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("target 0.01% NOT met"), "{out}");
    assert!(!out.contains(&u64::MAX.to_string()), "{out}");
}

#[test]
fn more_bins_than_keys_is_said() {
    let dir = tempfile::tempdir().unwrap();
    seqpoint_in(dir.path())
        .args(["select", "--bins", "1000000000"])
        .assert()
        .success()
        .stderr("note: --bins 1000000000: the run has 133 distinct keys, so there are 133 bins\n");
}

#[test]
fn a_metric_that_is_zero_everywhere_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("run.csv"),
        "seq_len,time_ms,energy_j\n10,0,1\n20,0,2\n30,0,3\n40,0,4\n",
    )
    .unwrap();
    let message = "run.csv: metric 'time_ms' is 0 in every iteration: there is nothing to bin \
                   or project; choose another with --metric (energy_j)";
    fails(dir.path(), &["select", "run.csv"], message);
    fails(dir.path(), &["report", "run.csv"], message);
    seqpoint_in(dir.path())
        .args(["select", "run.csv", "--metric", "energy_j", "-k", "2"])
        .assert()
        .success();
}

#[test]
fn a_lengths_only_log_whose_lengths_are_all_zero_is_refused() {
    // Its cost of the lengths is 0 throughout: once "target 1% met (±0.00%)" with one sample.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("run.csv"),
        "iteration,seq_len\n0,0\n1,0\n2,0\n",
    )
    .unwrap();
    let message = "run.csv: every iteration's seq_len is 0, so its cost of the lengths is 0 \
                   throughout: there is nothing to bin or project; expected the padded lengths \
                   (--key COL names their column)";
    fails(dir.path(), &["select", "run.csv"], message);
    fails(dir.path(), &["report", "run.csv"], message);
    // One length that is not 0 is enough to go on.
    std::fs::write(
        dir.path().join("some.csv"),
        "iteration,seq_len\n0,0\n1,8\n2,0\n",
    )
    .unwrap();
    seqpoint_in(dir.path())
        .args(["select", "some.csv", "-k", "2"])
        .assert()
        .success();
}

// ---- project: the document and the run length ---------------------------------------------

/// A SeqPoints document from the bundled sample (450 iterations, 3 epochs) with K = 4, and a
/// complete measurement of it by id.
fn project_case() -> (tempfile::TempDir, Value) {
    let dir = tempfile::tempdir().unwrap();
    seqpoint_in(dir.path())
        .args(["select", "-k", "4", "-o", "s.json"])
        .assert()
        .success();
    std::fs::write(
        dir.path().join("m.csv"),
        "seqpoint,time_ms\n0,100\n1,100\n2,100\n3,100\n",
    )
    .unwrap();
    let doc = serde_json::from_slice(&std::fs::read(dir.path().join("s.json")).unwrap()).unwrap();
    (dir, doc)
}

#[test]
fn project_refuses_a_run_shorter_than_the_log_or_too_long_to_count() {
    let (dir, _) = project_case();
    let project = ["project", "s.json", "m.csv"];
    fails(
        dir.path(),
        &[&project[..], &["--run-iterations", "100"]].concat(),
        "--run-iterations 100 is fewer than the 450 iterations the SeqPoints were chosen from; \
         the whole run includes the logged part: pass at least 450",
    );
    fails(
        dir.path(),
        &[&project[..], &["--run-epochs", "2"]].concat(),
        "--run-epochs 2 is fewer than the 3 epochs the SeqPoints were chosen from; the whole \
         run includes the logged part: pass at least 3",
    );
    fails(
        dir.path(),
        &[&project[..], &["--run-epochs", "1e308"]].concat(),
        "--run-epochs 1e308 makes a run of more than 1e308 iterations; expected at most \
         9007199254740992 (2^53, the largest count projected exactly)",
    );
    seqpoint_in(dir.path())
        .args(project)
        .args(["--run-epochs", "90"])
        .assert()
        .success()
        .stdout(predicates::str::contains("run: 13500.0 iterations"));
}

/// Each tampering is refused, naming the document, the field's JSON path and what was
/// expected; before any measurement is read.
#[test]
fn project_checks_the_seqpoints_document() {
    let (dir, doc) = project_case();
    let tampered = |edit: &dyn Fn(&mut Value), message: &str| {
        let mut d = doc.clone();
        edit(&mut d);
        std::fs::write(dir.path().join("t.json"), serde_json::to_vec(&d).unwrap()).unwrap();
        fails(
            dir.path(),
            &["project", "t.json", "m.csv"],
            &format!("t.json: {message}"),
        );
    };
    let w0 = doc["seqpoints"][0]["weight"].as_u64().unwrap();
    tampered(
        &|d| d["seqpoints"][0]["weight"] = (w0 + 10).into(),
        "the SeqPoints' weights (seqpoints[].weight) sum to 460; expected the run's 450 \
         iterations (input.iterations): every iteration is in exactly one bin",
    );
    tampered(
        &|d| d["seqpoints"][2]["weight"] = 0.into(),
        "seqpoints[2].weight is 0; expected the number of iterations its bin holds, at least 1",
    );
    tampered(
        &|d| d["seqpoints"][1]["weight"] = u64::MAX.into(),
        &format!(
            "seqpoints[1].weight is {}; expected the number of iterations its bin holds, at \
             most the run's 450 (input.iterations)",
            u64::MAX
        ),
    );
    tampered(
        &|d| d["seqpoints"][3]["bin_stats"]["time_ms"]["sd"] = (-2.5).into(),
        "seqpoints[3].bin_stats.time_ms.sd is -2.5; expected a standard deviation: finite and \
         not negative",
    );
    tampered(
        &|d| d["input"]["iterations"] = 0.into(),
        "input.iterations is 0; expected the number of iterations in the run log, at least 1",
    );
    let it0 = doc["seqpoints"][0]["iteration"].clone();
    tampered(
        &|d| d["seqpoints"][2]["iteration"] = it0.clone(),
        &format!(
            "seqpoints[2].iteration is {it0}, as is seqpoints[0].iteration; expected each \
             SeqPoint's iteration once (one representative per bin)"
        ),
    );
    // A duplicate id is the document's fault, not the measurements'.
    tampered(
        &|d| d["seqpoints"][1]["id"] = 0.into(),
        "seqpoints[1].id is 0, as is seqpoints[0].id; expected each SeqPoint's id once",
    );
}

/// What the document's numbers must agree on: a spread non-negative values can have, keys
/// and bins of the input's dimensions, bins that hold their key and do not overlap, and
/// measurements that are not negative. Each was projected without a word before.
#[test]
fn project_checks_that_the_documents_numbers_agree() {
    let (dir, doc) = project_case();
    let tampered = |edit: &dyn Fn(&mut Value), message: &str| {
        let mut d = doc.clone();
        edit(&mut d);
        std::fs::write(dir.path().join("t.json"), serde_json::to_vec(&d).unwrap()).unwrap();
        fails(
            dir.path(),
            &["project", "t.json", "m.csv"],
            &format!("t.json: {message}"),
        );
    };
    let count = doc["seqpoints"][0]["bin_stats"]["time_ms"]["count"]
        .as_u64()
        .unwrap();
    tampered(
        &|d| d["seqpoints"][0]["bin_stats"]["time_ms"]["key_cv"] = 1e155.into(),
        &format!(
            "seqpoints[0].bin_stats.time_ms.key_cv is 1e155; expected at most {count}, the \
             largest coefficient of variation the bin's {count} values (bin_stats.count), none \
             negative, can have"
        ),
    );
    let mean = doc["seqpoints"][0]["bin_stats"]["time_ms"]["mean"]
        .as_f64()
        .unwrap();
    tampered(
        &|d| d["seqpoints"][0]["bin_stats"]["time_ms"]["sd"] = (mean * 1e3 * count as f64).into(),
        &format!(
            "seqpoints[0].bin_stats.time_ms.sd is {:e}; expected at most mean x sqrt(count) = \
             {}, the most {count} values that are not negative can spread",
            mean * 1e3 * count as f64,
            mean * (count as f64).sqrt()
        ),
    );
    tampered(
        &|d| d["seqpoints"][1]["metrics"]["time_ms"] = (-5.0).into(),
        "seqpoints[1].metrics.time_ms is -5; expected a measurement: 0, or from 1e-30 to 1e30",
    );
    let alternates = doc["seqpoints"][1]["alternates"].as_array().unwrap().len();
    assert!(alternates > 0, "the sample's SeqPoint 1 has alternates");
    tampered(
        &|d| d["seqpoints"][1]["alternate_metrics"]["time_ms"][0] = (-5.0).into(),
        "seqpoints[1].alternate_metrics.time_ms[0] is -5; expected a measurement: 0, or from \
         1e-30 to 1e30",
    );
    tampered(
        &|d| {
            d["seqpoints"][1]["alternate_metrics"]["time_ms"]
                .as_array_mut()
                .unwrap()
                .push(1.0.into())
        },
        &format!(
            "seqpoints[1].alternate_metrics.time_ms is {} number(s) long; expected {alternates}, \
             one per iteration of seqpoints[1].alternates",
            alternates + 1
        ),
    );
    tampered(
        &|d| d["seqpoints"][1]["bin_stats"]["time_ms"]["mean"] = (-5.0).into(),
        "seqpoints[1].bin_stats.time_ms.mean is -5; expected a measurement: 0, or from 1e-30 \
         to 1e30",
    );
    tampered(
        &|d| d["projection"][0]["actual"] = (-1.0).into(),
        "projection[0].actual is -1; expected a total that is finite and not negative",
    );
    let (min, max) = (
        doc["seqpoints"][2]["bin"]["min"][0].as_u64().unwrap(),
        doc["seqpoints"][2]["bin"]["max"][0].as_u64().unwrap(),
    );
    tampered(
        &|d| {
            d["seqpoints"][2]["bin"]["min"][0] = max.into();
            d["seqpoints"][2]["bin"]["max"][0] = min.into();
        },
        &format!(
            "seqpoints[2].bin is from {max} to {min}; expected a minimum not above the maximum"
        ),
    );
    tampered(
        &|d| d["seqpoints"][2]["key"] = serde_json::json!([min, 7]),
        "seqpoints[2].key is 2 number(s) long; expected 1, one per key column of input.key",
    );
    // Bin 3 widened down into the bin below it (the bins are in key order).
    let below = (0..4)
        .filter(|&i| doc["seqpoints"][i]["bin"]["max"][0].as_u64().unwrap() < min)
        .max_by_key(|&i| doc["seqpoints"][i]["bin"]["max"][0].as_u64().unwrap())
        .unwrap();
    let below_max = doc["seqpoints"][below]["bin"]["max"][0].as_u64().unwrap();
    tampered(
        &|d| d["seqpoints"][2]["bin"]["min"][0] = below_max.into(),
        &format!(
            "seqpoints[2].bin is from {below_max}, inside seqpoints[{below}].bin (up to \
             {below_max}); expected bins that do not overlap: each length in one bin"
        ),
    );
    // The untouched document projects.
    seqpoint_in(dir.path())
        .args(["project", "s.json", "m.csv"])
        .assert()
        .success();
}

// ---- control characters in file names -----------------------------------------------------

/// ESC and OSC sequences in a file name are shown escaped in an error, a "wrote" line and a
/// table header; no raw control character reaches the terminal.
#[test]
fn control_characters_in_names_are_shown_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let run = "run\u{1b}[31m.csv";
    std::fs::write(dir.path().join(run), "seq_len,time_ms\n10,1\n20,2\n30,x\n").unwrap();
    let bad = seqpoint_in(dir.path())
        .args(["select", run])
        .assert()
        .code(1)
        .get_output()
        .stderr
        .clone();
    let bad = String::from_utf8(bad).unwrap();
    assert!(bad.starts_with("error: run\\u{1b}[31m.csv:4:"), "{bad}");
    assert!(!bad.contains('\u{1b}'));

    std::fs::write(dir.path().join(run), "seq_len,time_ms\n10,1\n20,2\n30,3\n").unwrap();
    let out = "out\u{1b}]0;owned\u{7}.json";
    seqpoint_in(dir.path())
        .args(["select", run, "-k", "2", "-o", out])
        .assert()
        .success()
        .stderr("wrote out\\u{1b}]0;owned\\u{7}.json\n");
    let table = seqpoint_in(dir.path())
        .args(["select", run, "-k", "2"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let table = String::from_utf8(table).unwrap();
    assert!(
        table.starts_with("run\\u{1b}[31m.csv: 3 iterations"),
        "{table}"
    );
    assert!(!table.contains('\u{1b}'));
    seqpoint_in(dir.path())
        .args(["select", run, "-k", "2", "-o", out])
        .assert()
        .code(1)
        .stderr(
            "error: out\\u{1b}]0;owned\\u{7}.json: already exists; pass --force to overwrite it\n",
        );
}

/// A name quoted inside a message (the measurements file of `project`, a `--compare` log) is
/// escaped too: every error passes one last escape before the terminal.
#[test]
fn names_quoted_inside_messages_are_escaped_too() {
    let (dir, _) = project_case();
    let measured = "m\u{1b}]2;title\u{7}.csv";
    std::fs::write(dir.path().join(measured), "seqpoint,time_ms\n0,100\n").unwrap();
    let err = seqpoint_in(dir.path())
        .args(["project", "s.json", measured])
        .assert()
        .code(1)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(err).unwrap();
    assert!(
        err.starts_with("error: m\\u{1b}]2;title\\u{7}.csv: no measurement for 3 of the 4"),
        "{err}"
    );
    std::fs::write(dir.path().join("a.csv"), "iteration,seq_len\n0,1\n1,2\n").unwrap();
    let compare = "b\u{1b}[2J.csv";
    std::fs::write(dir.path().join(compare), "iteration,seq_len\n0,1\n5,2\n").unwrap();
    let err = seqpoint_in(dir.path())
        .args(["select", "a.csv", "--compare", compare])
        .assert()
        .code(1)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(err).unwrap();
    assert!(err.starts_with("error: b\\u{1b}[2J.csv: "), "{err}");
    assert!(!err.contains('\u{1b}'), "{err}");
}

// ---- signals while writing ----------------------------------------------------------------

/// SIGINT, SIGTERM or SIGHUP arriving while the output's temporary file is being made durable
/// (strace injects the signal at the temporary file's fsync and holds the call for a moment):
/// the process ends by that signal, and neither the output nor a `.seqpoint-XXXXXX` file is
/// left. Skipped where strace or ptrace is not available.
#[test]
fn a_signal_during_an_export_leaves_no_temporary_file() {
    let probe = Command::new("strace")
        .args(["-qq", "-o", "/dev/null", "true"])
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        crate::common::skip(
            "hardening_cli::a_signal_during_an_export_leaves_no_temporary_file",
            "strace is not available or may not trace here",
        );
        return;
    }
    for (signal, name) in [
        (libc::SIGINT, "SIGINT"),
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGHUP, "SIGHUP"),
        (libc::SIGQUIT, "SIGQUIT"),
        (libc::SIGPIPE, "SIGPIPE"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let mut strace = Command::new("strace");
        // SIGQUIT's default action dumps core: no core file in the folder checked below.
        // SAFETY: setrlimit only, between fork and exec.
        unsafe {
            use std::os::unix::process::CommandExt;
            strace.pre_exec(|| {
                let none = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                libc::setrlimit(libc::RLIMIT_CORE, &none);
                Ok(())
            });
        }
        let status = strace
            .args(["-f", "-qq", "-o", "/dev/null", "-e", "trace=fsync", "-e"])
            .arg(format!(
                "inject=fsync:signal={name}:delay_exit=300000:when=1"
            ))
            .arg(env!("CARGO_BIN_EXE_seqpoint"))
            .args(["select", "-k", "4", "-o", "s.json"])
            .current_dir(dir.path())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert_eq!(status.signal(), Some(signal), "{name}: {status:?}");
        // The signal came before the rename: the output is not written, and nothing is left.
        assert_eq!(files_in(dir.path()), Vec::<String>::new(), "{name}");
    }
}

// ---- header names that only look like a known column ------------------------------------

/// A run whose iterations start at 1000, so row numbers (0, 1, ...) can never pass for them,
/// under the header name `iteration_name`, as CSV and as JSON Lines.
fn run_named(dir: &Path, iteration_name: &str) {
    let mut csv = format!("{iteration_name},seq_len,time_ms\n");
    let mut jsonl = String::new();
    for i in 0..40u32 {
        let (len, ms) = (5 + i % 4, 10 + (i % 4) * 5);
        csv.push_str(&format!("{},{len},{ms}\n", 1000 + i));
        jsonl.push_str(&format!(
            "{{{}: {}, \"seq_len\": {len}, \"time_ms\": {ms}}}\n",
            serde_json::to_string(iteration_name).unwrap(),
            1000 + i
        ));
    }
    std::fs::write(dir.join("run.csv"), csv).unwrap();
    std::fs::write(dir.join("run.jsonl"), jsonl).unwrap();
}

/// The iterations a selection picked, its JSON `input` and its standard error.
fn picked(dir: &Path, file: &str) -> (Vec<u64>, Value, String) {
    let out = seqpoint_in(dir)
        .args(["select", file, "-k", "4", "--format", "json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{file}: {stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let iterations = doc["seqpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["iteration"].as_u64().unwrap())
        .collect();
    (iterations, doc["input"].clone(), stderr)
}

#[test]
fn boms_and_invisible_characters_do_not_hide_the_iteration_column() {
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "\u{FEFF}\u{FEFF}iteration",
        "\u{FEFF}\"\u{FEFF}iteration\"",
        "ite\u{200B}ration",
        "\u{2060}Iteration ",
    ] {
        run_named(dir.path(), name);
        for file in ["run.csv", "run.jsonl"] {
            let (iterations, input, stderr) = picked(dir.path(), file);
            assert!(
                iterations.iter().all(|&i| (1000..1040).contains(&i)),
                "{name:?} in {file}: {iterations:?}"
            );
            assert!(input.get("iteration_like").is_none(), "{name:?}: {input}");
            assert_eq!(stderr, "", "{name:?} in {file}");
        }
    }
}

#[test]
fn a_column_that_only_looks_like_the_iteration_is_named_in_a_note_and_the_json() {
    let dir = tempfile::tempdir().unwrap();
    run_named(dir.path(), "global_step");
    for file in ["run.csv", "run.jsonl"] {
        let (iterations, input, stderr) = picked(dir.path(), file);
        // Row numbers, as said.
        assert!(iterations.iter().all(|&i| i < 40), "{file}: {iterations:?}");
        assert_eq!(input["iteration_like"], serde_json::json!(["global_step"]));
        assert_eq!(
            stderr,
            format!(
                "note: {file}: no iteration column, so iterations are numbered by row (0, 1, \
                 2, ...); 'global_step' looks like one but is not read as it: rename it to \
                 'iteration' (or 'step') to use it\n"
            )
        );
    }
    // A log with no such column is not noted.
    run_named(dir.path(), "loss");
    let (_, input, stderr) = picked(dir.path(), "run.csv");
    assert_eq!(stderr, "");
    assert!(input.get("iteration_like").is_none(), "{input}");
}

// ---- false or unclear messages --------------------------------------------------------------

/// `man --dir FILE` names the file as the problem (it said "creating FILE"); a write that
/// fails (here: a file-size limit, as a full disk) leaves no folder it made behind.
#[test]
fn man_dir_on_a_file_or_a_failing_write_says_so_and_leaves_nothing() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("afile"), "x").unwrap();
    fails(
        dir.path(),
        &["man", "--dir", "afile"],
        "afile: is a file, not a folder; expected a folder to write the man pages in (it is \
         made when missing)",
    );
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_seqpoint"));
    cmd.current_dir(dir.path())
        .args(["man", "--dir", "new/man1"]);
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit {
                rlim_cur: 100,
                rlim_max: 100,
            };
            libc::setrlimit(libc::RLIMIT_FSIZE, &limit);
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.ends_with("; no man page was written\n"), "{stderr}");
    assert_eq!(files_in(dir.path()), ["afile"], "{stderr}");
}

/// Help that cannot be written is an error (it exited 0 with nothing written).
#[test]
fn help_to_a_full_device_fails() {
    for args in [&["--help"][..], &["select", "--help"], &["--version"]] {
        let out = Command::new(env!("CARGO_BIN_EXE_seqpoint"))
            .args(args)
            .stdout(std::fs::File::create("/dev/full").unwrap())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "error: cannot write to standard output: No space left on device (os error 28)\n"
        );
    }
    // To a pipe, help is written as before.
    let out = Command::new(env!("CARGO_BIN_EXE_seqpoint"))
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("Usage: seqpoint"));
}

/// A closed standard input (or /dev/null) is said to be that, not "the file is empty": which
/// of the two it is where that can be told (a closed one reads as /dev/null opened for
/// reading and writing, a redirected one is opened for reading), and for every input read
/// through `-`, not only a run log: the hint fits `project`'s measurements and SeqPoints file
/// as well as `select`'s log.
#[test]
fn a_closed_standard_input_is_named() {
    use std::os::unix::process::CommandExt;
    let message = |what: &str| {
        format!(
            "error: <stdin>: {what}, so `-` has nothing to read; expected the file piped or \
             redirected in (`- < FILE`, `cat FILE | ...`), or its name in place of `-`\n"
        )
    };
    let (dir, _) = project_case();
    for args in [
        &["select", "-"][..],
        &["project", "s.json", "-"],
        &["project", "-", "m.csv"],
    ] {
        let mut closed = Command::new(env!("CARGO_BIN_EXE_seqpoint"));
        closed.current_dir(dir.path()).args(args);
        // SAFETY: close is async-signal-safe.
        unsafe {
            closed.pre_exec(|| {
                libc::close(0);
                Ok(())
            });
        }
        let mut null = Command::new(env!("CARGO_BIN_EXE_seqpoint"));
        null.current_dir(dir.path()).args(args).stdin(Stdio::null());
        for (mut cmd, what) in [
            (closed, "standard input is closed (or /dev/null)"),
            (null, "standard input is /dev/null"),
        ] {
            let out = cmd.output().unwrap();
            assert_eq!(out.status.code(), Some(1), "{args:?}");
            assert_eq!(
                String::from_utf8_lossy(&out.stderr),
                message(what),
                "{args:?}"
            );
        }
    }
    // A file or a pipe on standard input is read as before.
    seqpoint_in(dir.path())
        .args(["project", "s.json", "-"])
        .write_stdin("seqpoint,time_ms\n0,100\n1,100\n2,100\n3,100\n")
        .assert()
        .success();
}

/// Measurements that are 0 in every row projected a total of 0 with speedup "-" and exit 0:
/// now an error naming the column.
#[test]
fn project_refuses_measurements_that_are_zero_everywhere() {
    let (dir, _) = project_case();
    std::fs::write(
        dir.path().join("zero.csv"),
        "seqpoint,time_ms\n0,0\n1,0\n2,0\n3,0\n",
    )
    .unwrap();
    fails(
        dir.path(),
        &["project", "s.json", "zero.csv"],
        "zero.csv: column 'time_ms' is 0 in all 4 rows; expected the profiled iterations' \
         measurements (a total of 0 has no speedup or interval): is it the right column, and \
         did the profiler record it?",
    );
    // Some zeros among real measurements are measurements.
    std::fs::write(
        dir.path().join("some.csv"),
        "seqpoint,time_ms\n0,0\n1,100\n2,100\n3,100\n",
    )
    .unwrap();
    seqpoint_in(dir.path())
        .args(["project", "s.json", "some.csv"])
        .assert()
        .success();
}

/// A hint's command names the file it means: a name with a line break or a bell was shown
/// `f\u{a}.svg` in `rsvg-convert ...`, which names another file once pasted; now `$'f\n.svg'`,
/// still nothing raw on the terminal.
#[test]
fn a_hint_names_an_odd_file_so_a_shell_reads_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let name = "f\n\u{7}'x.svg";
    let out = seqpoint_in(dir.path())
        .args(["plot", "-o", name])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains('\u{7}'), "{stderr}");
    let hint = stderr
        .split("rsvg-convert ")
        .nth(1)
        .and_then(|rest| rest.split(" -o ").next())
        .unwrap_or_else(|| panic!("{stderr}"));
    assert_eq!(hint, "$'f\\n\\x07\\'x.svg'");
    let said = Command::new("bash")
        .args(["-c", &format!("printf %s {hint}")])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&said.stdout), name);
    // The refusal of a PNG name gives the same kind of word.
    fails(
        dir.path(),
        &["plot", "-o", "g\u{7}.png"],
        "'g\\u{7}.png': seqpoint draws SVG only; write $'g\\x07.svg', then convert it: \
         rsvg-convert $'g\\x07.svg' -o $'g\\x07.png'",
    );
}

/// A proxy cost too large to total was "column 'proxy_cost(power:100)' has 1e300 at iteration
/// 0", as if a cell of the file held it, with no line or column to find: now it names the key
/// it was computed from and says it is in no cell.
#[test]
fn a_proxy_cost_too_large_names_its_key() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("p.csv"), "seq_len\n1000\n2000\n3000\n").unwrap();
    fails(
        dir.path(),
        &["select", "p.csv", "-k", "1", "--cost", "power:100"],
        "p.csv: the proxy cost power:100 of seq_len 1000 (iteration 0; computed, in no cell of \
         the file) is 1e300, too large to total over 3 iterations (at most 1.117e153); choose a \
         smaller --cost exponent",
    );
}
