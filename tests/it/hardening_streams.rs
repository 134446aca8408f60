//! Inputs and outputs that are streams, run as a shell would set them up (real files behind
//! standard input and output, real pipes and FIFOs): a log read through `- < run.csv` is never
//! overwritten, `-o /dev/stdout >> app.log` appends instead of replacing app.log, and a stream
//! that is not a log is refused at its first line without being read to its end.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// The binary run from `dir` with its standard streams set by the caller, as a shell's
/// redirects set them.
fn seqpoint_in(dir: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_seqpoint"));
    cmd.current_dir(dir)
        .env("SEQPOINT_STATUS_AFTER_MS", "600000")
        .stdin(Stdio::null());
    cmd
}

fn write_run(dir: &Path, name: &str) -> String {
    let mut text = String::from("iteration,seq_len,time_ms\n");
    for i in 0..60 {
        text.push_str(&format!("{i},{},{}\n", 5 + i % 7, 10 + (i % 7) * 3));
    }
    std::fs::write(dir.join(name), &text).unwrap();
    text
}

fn run_with_stdin(dir: &Path, args: &[&str], stdin: &str) -> std::process::Output {
    seqpoint_in(dir)
        .args(args)
        .stdin(File::open(dir.join(stdin)).unwrap())
        .output()
        .unwrap()
}

#[test]
fn a_log_read_through_standard_input_is_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let run = write_run(dir.path(), "r.csv");
    for args in [
        &["select", "-", "-k", "3", "-o", "r.csv", "--force"][..],
        &["report", "-", "-o", "r.csv", "--force"],
        &["select", "-", "-k", "3", "-o", "./r.csv", "--force"],
    ] {
        let out = run_with_stdin(dir.path(), args, "r.csv");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("is the file standard input reads")
                && stderr.contains("an input is never overwritten"),
            "{args:?}: {stderr}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("r.csv")).unwrap(),
            run
        );
    }
    // A hard link to it is the same file.
    std::fs::hard_link(dir.path().join("r.csv"), dir.path().join("h.csv")).unwrap();
    let out = run_with_stdin(
        dir.path(),
        &["select", "-", "-o", "h.csv", "--force"],
        "r.csv",
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("r.csv")).unwrap(),
        run
    );

    // --compare - : the compare log read through standard input is an input too.
    let compare = write_run(dir.path(), "c.csv");
    let out = run_with_stdin(
        dir.path(),
        &[
            "select",
            "r.csv",
            "--compare",
            "-",
            "-k",
            "3",
            "-o",
            "c.csv",
            "--force",
        ],
        "c.csv",
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("c.csv")).unwrap(),
        compare
    );

    // Another file is written as usual while standard input is a file.
    let out = run_with_stdin(
        dir.path(),
        &["select", "-", "-k", "3", "-o", "s.json"],
        "r.csv",
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.path().join("s.json").is_file());
}

#[test]
fn measurements_read_through_standard_input_are_never_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    write_run(dir.path(), "r.csv");
    let out = seqpoint_in(dir.path())
        .args(["select", "r.csv", "-k", "3", "-o", "sp.json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let measured = "seqpoint,time_ms\n0,10\n1,13\n2,16\n";
    std::fs::write(dir.path().join("m.csv"), measured).unwrap();
    let out = run_with_stdin(
        dir.path(),
        &[
            "project",
            "sp.json",
            "-",
            "--input-format",
            "csv",
            "-o",
            "m.csv",
            "--force",
        ],
        "m.csv",
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("m.csv")).unwrap(),
        measured
    );
}

#[test]
fn dev_stdout_redirected_to_a_file_is_appended_to_not_replaced() {
    let dir = tempfile::tempdir().unwrap();
    write_run(dir.path(), "r.csv");
    let log = dir.path().join("app.log");
    std::fs::write(&log, "earlier line\n").unwrap();
    for force in [true, false] {
        let mut args = vec![
            "select",
            "r.csv",
            "-k",
            "3",
            "-o",
            "/dev/stdout",
            "--format",
            "csv",
        ];
        if force {
            args.push("--force");
        }
        let out = seqpoint_in(dir.path())
            .args(&args)
            .stdout(OpenOptions::new().append(true).open(&log).unwrap())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    }
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.starts_with("earlier line\nid,iteration,"), "{text}");
    assert_eq!(text.matches("id,iteration,").count(), 2, "{text}");
    // app.log is the same file, not a new one renamed over it.
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        2,
        "only r.csv and app.log"
    );

    // The same for standard error.
    let err_log = dir.path().join("err.log");
    std::fs::write(&err_log, "before\n").unwrap();
    let out = seqpoint_in(dir.path())
        .args([
            "select",
            "r.csv",
            "-k",
            "3",
            "-o",
            "/dev/stderr",
            "--format",
            "json",
            "--force",
        ])
        .stderr(OpenOptions::new().append(true).open(&err_log).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = std::fs::read_to_string(&err_log).unwrap();
    assert!(text.starts_with("before\n{"), "{text}");
    let json: serde_json::Value = serde_json::from_str(&text["before\n".len()..]).unwrap();
    assert_eq!(json["seqpoints"].as_array().unwrap().len(), 3);
}

#[test]
fn dev_stdout_that_is_an_input_is_still_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = write_run(dir.path(), "r.csv");
    let out = seqpoint_in(dir.path())
        .args(["select", "r.csv", "-k", "3", "-o", "/dev/stdout", "--force"])
        .stdout(
            OpenOptions::new()
                .append(true)
                .open(dir.path().join("r.csv"))
                .unwrap(),
        )
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("loaded input log"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("r.csv")).unwrap(),
        run
    );
}

/// A writer that never stops (`yes 'not,a,header'`): the error must come from the first
/// line, and the reader must stop without taking the stream to its end. The pipe's writer
/// counts what it managed to write before the reader closed it.
#[test]
fn an_endless_stream_that_is_not_a_log_is_refused_at_its_first_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = seqpoint_in(dir.path())
        .args(["select", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let line = b"not,a,header\n".repeat(4096);
        let mut sent: u64 = 0;
        // At most 4 GiB: a reader that reads everything would be caught by the count.
        while sent < 4 << 30 {
            if stdin.write_all(&line).is_err() {
                return (sent, true);
            }
            sent += line.len() as u64;
        }
        (sent, false)
    });
    let out = child.wait_with_output().unwrap();
    let (sent, closed) = writer.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with("error: <stdin>:1:"), "{stderr}");
    assert!(closed, "the reader took all {sent} bytes");
    // Far less than the whole stream: the check comes within the first chunks read.
    assert!(sent < 256 << 20, "{sent} bytes were read before the error");
}

/// A named pipe of bytes that are not text is refused at its start too.
#[test]
fn a_fifo_of_binary_bytes_is_refused_without_reading_it_all() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("run.csv");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let child = seqpoint_in(dir.path())
        .args(["select", "run.csv"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let writer = std::thread::spawn(move || {
        let mut pipe = OpenOptions::new().write(true).open(&fifo).unwrap();
        // Bytes of every value, newlines among them, as /dev/urandom gives.
        let block: Vec<u8> = (0..1 << 16)
            .map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let mut sent: u64 = 0;
        while sent < 4 << 30 {
            if pipe.write_all(&block).is_err() {
                return sent;
            }
            sent += block.len() as u64;
        }
        sent
    });
    let out = child.wait_with_output().unwrap();
    let sent = writer.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.starts_with("error: run.csv:"), "{stderr}");
    assert!(sent < 256 << 20, "{sent} bytes were read before the error");
}

/// A valid log of `rows` rows, about 20 bytes a row.
fn write_big_run(dir: &Path, rows: u64) -> std::path::PathBuf {
    let path = dir.join("big.csv");
    let mut out = std::io::BufWriter::new(File::create(&path).unwrap());
    writeln!(out, "iteration,seq_len,time_ms").unwrap();
    for i in 0..rows {
        writeln!(out, "{i},{},{}.5", 5 + i % 500, 3 + i % 500).unwrap();
    }
    out.flush().unwrap();
    path
}

/// `seqpoint ARGS` under an address-space limit of `kib` KiB (`ulimit -v`), standard input
/// from `stdin`.
fn under_ulimit(dir: &Path, kib: u64, args: &str, stdin: Stdio) -> std::process::Output {
    Command::new("sh")
        .current_dir(dir)
        .arg("-c")
        .arg(format!("ulimit -v {kib} && exec \"$0\" {args}",))
        .arg(env!("CARGO_BIN_EXE_seqpoint"))
        .env("SEQPOINT_STATUS_AFTER_MS", "600000")
        .stdin(stdin)
        .output()
        .unwrap()
}

/// Under `ulimit -v`, a log larger than the memory left is an error line with status 1 (by
/// the load's own limit, or when an allocation is refused later), never an abort (134).
#[test]
fn an_address_space_limit_is_an_error_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    let big = write_big_run(dir.path(), 1_500_000);
    let cases = [
        ("select - -k 5", Stdio::from(File::open(&big).unwrap())),
        ("select big.csv -k 5", Stdio::null()),
        ("report big.csv", Stdio::null()),
        ("select big.csv --target-error 1", Stdio::null()),
    ];
    let mut refused = Vec::new();
    for (args, stdin) in cases {
        let out = under_ulimit(dir.path(), 50_000, args, stdin);
        let stderr = String::from_utf8_lossy(&out.stderr);
        // What fits is done; what does not is one error line. Never Rust's abort.
        match out.status.code() {
            Some(0) => assert!(!out.stdout.is_empty(), "{args}"),
            Some(1) => {
                assert!(
                    stderr.starts_with("error: ") && stderr.contains("memory"),
                    "{args}: {stderr}"
                );
                refused.push(args);
            }
            other => panic!("{args}: status {other:?}: {stderr}"),
        }
        assert!(!stderr.contains("memory allocation of"), "{args}: {stderr}");
    }
    // Standard input is read into memory whole: 30 MB of text cannot fit in 50 MB with the
    // binary itself, and the load's own limit names it.
    assert!(refused.contains(&"select - -k 5"), "{refused:?}");
}

/// A SeqPoints document written by `select`, and measurements of its three SeqPoints.
fn project_case(dir: &Path) -> String {
    write_run(dir, "r.csv");
    let out = seqpoint_in(dir)
        .args(["select", "r.csv", "-k", "3", "-o", "sp.json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(dir.join("m.csv"), "seqpoint,time_ms\n0,10\n1,13\n2,16\n").unwrap();
    std::fs::read_to_string(dir.join("sp.json")).unwrap()
}

#[test]
fn the_seqpoints_document_is_read_within_the_limits_and_from_standard_input() {
    let dir = tempfile::tempdir().unwrap();
    let text = project_case(dir.path());
    // Padded to 2 MiB with spaces (valid JSON): over --max-input 1M and --max-memory 4M.
    let padded = text.replacen('{', &format!("{{{}", " ".repeat(2 << 20)), 1);
    std::fs::write(dir.path().join("big.json"), &padded).unwrap();
    let project = |args: &[&str], stdin: Stdio| {
        let out = seqpoint_in(dir.path())
            .arg("project")
            .args(args)
            .stdin(stdin)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, _, stderr) = project(&["big.json", "m.csv", "--max-input", "1M"], Stdio::null());
    assert_eq!(code, Some(1));
    assert_eq!(
        stderr,
        "error: big.json: holds more than 1 MiB (the --max-input limit); stopped reading there \
         (raise the limit with --max-input)\n"
    );
    let (code, _, stderr) = project(&["big.json", "m.csv", "--max-memory", "4M"], Stdio::null());
    assert_eq!(code, Some(1));
    assert!(stderr.contains("the --max-memory limit"), "{stderr}");
    let big = || Stdio::from(File::open(dir.path().join("big.json")).unwrap());
    let (code, _, stderr) = project(&["-", "m.csv", "--max-input", "1M"], big());
    assert_eq!(code, Some(1));
    assert!(
        stderr.starts_with("error: <stdin>: holds more than 1 MiB"),
        "{stderr}"
    );
    // Within the limits the same document projects, from a file or standard input alike.
    let (code, from_file, stderr) = project(&["big.json", "m.csv"], Stdio::null());
    assert_eq!(code, Some(0), "{stderr}");
    let (code, from_stdin, stderr) = project(&["-", "m.csv"], big());
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        from_file.replacen("big.json", "<stdin>", 1),
        from_stdin,
        "the same projection, the document named as read"
    );
    assert!(from_file.contains("time_ms"), "{from_file}");
    // Both from standard input cannot be.
    let (code, _, stderr) = project(&["-", "-"], big());
    assert_eq!(code, Some(1));
    assert!(stderr.contains("both standard input"), "{stderr}");
}

#[test]
fn a_key_repeated_in_the_document_is_refused_where_it_stands() {
    let dir = tempfile::tempdir().unwrap();
    let text = project_case(dir.path());
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let metrics = doc["seqpoints"][0]["metrics"].as_object().unwrap();
    let (name, value) = metrics.iter().next().unwrap();
    // The first SeqPoint's metric named twice, the second time with another value.
    let once = format!("\"{name}\": {value}");
    assert!(text.contains(&once), "{text}");
    let twice = text.replacen(&once, &format!("{once}, \"{name}\": 1e9"), 1);
    std::fs::write(dir.path().join("dup.json"), &twice).unwrap();
    let line = twice[..twice.find(&once).unwrap()].matches('\n').count() + 1;
    let out = seqpoint_in(dir.path())
        .args(["project", "dup.json", "m.csv"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(&format!("error: dup.json:{line}:"))
            && stderr.contains(&format!("the key \"{name}\" appears twice in one object")),
        "{stderr}"
    );
}
