//! Shared by the integration tests: explorer sessions over the bundled sample and a two-length
//! run, key presses and frames drawn into a test backend; the real `seqpoint` binary and the
//! bad-input corpus folder for the CLI tests.
#![allow(dead_code)]

use std::path::PathBuf;

use assert_cmd::Command;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;

use seqpoint::runlog::sample::{SAMPLE_COMPARE_NAME, SAMPLE_NAME};
use seqpoint::tui::{self, App, Session};
use seqpoint::{load_run, LoadOptions, SelectOptions};

pub const TRANSLATION: &str = "tests/data/translation_2d.csv";

pub fn sample_session(base: SelectOptions) -> Session {
    let load = LoadOptions {
        compare: Some(SAMPLE_COMPARE_NAME.into()),
        ..LoadOptions::default()
    };
    let log = load_run(SAMPLE_NAME, &load).unwrap();
    Session::new(SAMPLE_NAME.into(), load, log, base).unwrap()
}

/// A translation-like run keyed by (src_len, tgt_len): k-means bins it.
pub fn translation_session(base: SelectOptions) -> Session {
    let load = LoadOptions {
        key: vec!["src_len".into(), "tgt_len".into()],
        ..LoadOptions::default()
    };
    let log = load_run(TRANSLATION, &load).unwrap();
    Session::new(TRANSLATION.into(), load, log, base).unwrap()
}

/// An app with its first result computed, as the screen shows it after start-up.
pub fn started(session: &Session) -> App<'_> {
    let mut app = App::new(session, false);
    let effect = tui::update::recompute(&mut app);
    tui::settle(&mut app, effect);
    app
}

pub fn key(code: KeyCode) -> KeyEvent {
    KeyEvent::new(code, KeyModifiers::NONE)
}

pub fn ch(c: char) -> KeyEvent {
    key(KeyCode::Char(c))
}

/// Press a key and let any recomputation or export finish.
pub fn press(app: &mut App, event: KeyEvent) {
    let effect = tui::press(app, event);
    tui::settle(app, effect);
}

pub fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, ch(c));
    }
}

pub fn frame(app: &mut App, width: u16, height: u16) -> String {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| tui::ui::draw(f, app)).unwrap();
    format!("{}", terminal.backend())
}

pub fn terminal(app: &mut App, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
    terminal.draw(|f| tui::ui::draw(f, app)).unwrap();
    terminal
}

/// The `seqpoint` binary built for these tests, run from `dir`. Its progress status lines
/// (written off a terminal once a selection passes two seconds, as an unoptimised build on
/// a loaded machine can) are put off, so that tests comparing standard error whole see only
/// what they check; the tests of those lines set the delay again.
pub fn seqpoint_in(dir: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_seqpoint"));
    cmd.current_dir(dir)
        .env("SEQPOINT_STATUS_AFTER_MS", "600000");
    cmd
}

/// Require that a finished command succeeded, showing its standard error when not.
pub fn assert_succeeded(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Each SeqPoint's rows in `top_up` (rows naming `iteration` and `seqpoint`, a target's
/// `top_up` or a top-up document's plan) are the head of its reserve in `doc`, in order: a
/// top-up takes the plan's further draws before the SeqPoint's own (drawn as any other row,
/// it would be measured whatever the seed if taken first) and its alternates.
pub fn assert_top_up_heads_the_reserve(doc: &serde_json::Value, top_up: &[serde_json::Value]) {
    for sp in doc["seqpoints"].as_array().unwrap() {
        let of_sp = |rows: &[serde_json::Value]| -> Vec<u64> {
            rows.iter()
                .filter(|r| r["seqpoint"] == sp["id"])
                .map(|r| r["iteration"].as_u64().unwrap())
                .collect()
        };
        let taken = of_sp(top_up);
        let reserve = of_sp(doc["plan"]["reserve"].as_array().unwrap());
        assert!(
            taken.len() <= reserve.len() && taken[..] == reserve[..taken.len()],
            "SeqPoint {}: top-up {taken:?}, reserve {reserve:?}",
            sp["id"]
        );
    }
}

/// Run `seqpoint ARGS` (from the repository root), require success, and read its standard
/// output as JSON.
pub fn json_output(args: &[&str]) -> serde_json::Value {
    serde_json::from_slice(&success_output(args)).expect("JSON on standard output")
}

/// Run `seqpoint ARGS` (from the repository root), require success, and read its standard
/// output as text.
pub fn text_output(args: &[&str]) -> String {
    String::from_utf8(success_output(args)).expect("UTF-8 on standard output")
}

fn success_output(args: &[&str]) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_seqpoint"))
        .args(args)
        .output()
        .expect("the binary runs");
    assert!(
        out.status.success(),
        "seqpoint {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `tests/bad_inputs/`: one small file per kind of bad (or merely unusual) input.
pub fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/bad_inputs")
}

/// Run `seqpoint select ARGS` in the corpus folder; return (exit code, stdout, stderr).
pub fn select_in_corpus(args: &[&str]) -> (i32, String, String) {
    let output = seqpoint_in(&corpus())
        .arg("select")
        .args(args)
        .output()
        .expect("the binary runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// True when this process can read a file whose permission bits forbid it (root can).
pub fn permissions_do_not_bite() -> bool {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("probe");
    std::fs::write(&path, b"x").expect("write probe");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    std::fs::read(&path).is_ok()
}

/// The unprivileged user (and group) the permission tests run `seqpoint` as where this
/// process is root: `nobody`/`nogroup` on Linux.
pub const UNPRIVILEGED: u32 = 65534;

/// `seqpoint_in(dir)` as a user whom permission bits bind, so that a permission test runs
/// everywhere instead of skipping as root (CI runs as root). A normal user runs the binary as
/// it is. As root, `dir` and everything in it are given to `UNPRIVILEGED` (as a normal user
/// owns their own folder), the binary is linked or copied into `dir` (the build folder's path
/// need not be open to that user), and the process runs as that user and group, with no
/// supplementary groups. Call it once the files are laid out, modes included.
pub fn seqpoint_bound_by_permissions(dir: &std::path::Path) -> Command {
    use std::os::unix::process::CommandExt;
    if !permissions_do_not_bite() {
        return seqpoint_in(dir);
    }
    fn give_away(path: &std::path::Path) {
        std::os::unix::fs::lchown(path, Some(UNPRIVILEGED), Some(UNPRIVILEGED))
            .unwrap_or_else(|e| panic!("chown {}: {e}", path.display()));
        if std::fs::symlink_metadata(path).unwrap().is_dir() {
            for entry in std::fs::read_dir(path).unwrap() {
                give_away(&entry.unwrap().path());
            }
        }
    }
    give_away(dir);
    let binary = dir.join(".seqpoint-under-test");
    if std::fs::hard_link(env!("CARGO_BIN_EXE_seqpoint"), &binary).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_seqpoint"), &binary).expect("copy the binary");
    }
    let mut cmd = std::process::Command::new(&binary);
    cmd.current_dir(dir)
        .env("SEQPOINT_STATUS_AFTER_MS", "600000")
        .uid(UNPRIVILEGED)
        .gid(UNPRIVILEGED);
    Command::from_std(cmd)
}

/// True on CI (`CI=true`), where every tool `.ci/run` installs (tmux, Python, torch) must be
/// present: a test that would skip without one fails there instead.
pub fn on_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// One line in the test log even when the test passes: the harness captures what `print!`
/// and `eprint!` write from a passing test, not what is written to standard error directly.
pub fn note(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Report that `test` skips because `why` (a tool `.ci/run` installs is missing): a `SKIP`
/// line in the log, or, on CI, a failure.
pub fn skip(test: &str, why: &str) {
    assert!(
        !on_ci(),
        "{test}: {why}; CI requires it (.ci/run installs it)"
    );
    note(&format!("SKIP {test}: {why}"));
}

/// True where the end-to-end test must run on real torch: on CI (`.ci/run` installs it) or
/// when `SEQPOINT_REQUIRE_TORCH=1` asks for it.
pub fn torch_required() -> bool {
    on_ci() || std::env::var("SEQPOINT_REQUIRE_TORCH").is_ok_and(|v| v == "1")
}
