//! Journeys through the real binary on a real terminal (tmux) that once broke the session: a
//! `:budget` below the SeqPoints is refused and the session goes on, Ctrl+letter never acts
//! as the letter (Ctrl-L redraws), and restarts of the session (`:seed`) do not grow resident
//! memory. The pane and its waits are `tui_tmux`'s; without tmux each test says it skips.

use std::path::Path;
use std::time::{Duration, Instant};

use super::tui_tmux::{proc_available, tmux_available, Pane, BIN};

/// Type a `:` command and press Enter.
fn command(pane: &Pane, line: &str) {
    pane.keys(&[":"]);
    pane.tmux(&["send-keys", "-t", "0", "-l", line]);
    pane.keys(&["Enter"]);
}

#[test]
fn a_budget_below_the_seqpoints_is_refused_in_place_and_the_session_goes_on() {
    if !tmux_available("a_budget_below_the_seqpoints_is_refused_in_place_and_the_session_goes_on") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pane = Pane::start(100, 30, dir.path());
    pane.run(&format!("{BIN} --bins 6"));
    pane.wait_for("the first result", |s| {
        s.contains("K = 6 ·") && s.contains("6 of 450") && !s.contains("⟳")
    });
    command(&pane, "budget 3");
    // Said under the prompt, in select's words, and nothing changed.
    let screen = pane.wait_for("the refusal", |s| {
        s.contains(":budget 3: fewer than the 6 SeqPoints")
    });
    assert!(screen.contains(":budget 3"), "{screen}");
    pane.keys(&["Escape"]);
    pane.wait_for("the prompt closed", |s| !s.contains("fewer than the"));
    // K still steps by one from the K on screen, and `u` takes that step back.
    pane.keys(&["l"]);
    pane.wait_for("K = 7", |s| s.contains("K = 7 ·") && s.contains("7 of 450"));
    pane.keys(&["u"]);
    pane.wait_for("K = 6 again", |s| {
        s.contains("K = 6 ·") && s.contains("6 of 450")
    });
    // A budget the SeqPoints can take is applied, and undone like any setting.
    command(&pane, "budget 12");
    pane.wait_for("the budget's plan", |s| s.contains("plan 12 iterations"));
    pane.keys(&["u"]);
    pane.wait_for("no plan again", |s| {
        !s.contains("plan 12 iterations") && s.contains("K = 6 ·") && !s.contains("⟳")
    });
    pane.keys(&["q"]);
    pane.assert_restored();
}

#[test]
fn ctrl_and_a_letter_never_act_as_the_letter_and_ctrl_l_redraws() {
    if !tmux_available("ctrl_and_a_letter_never_act_as_the_letter_and_ctrl_l_redraws") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pane = Pane::start(100, 30, dir.path());
    pane.run(&format!("{BIN} --bins 6"));
    pane.wait_for("the explorer", |s| s.contains("K = 6 ·"));
    // Each of these letters alone changes K, the target, auto-K, the view or copies: with
    // Ctrl held, none may.
    for key in [
        "C-l", "C-h", "C-t", "C-a", "C-e", "C-y", "C-m", "C-p", "C-j", "C-k",
    ] {
        if key == "C-m" || key == "C-j" {
            // Enter and Ctrl-J are the same byte on a terminal (Enter opens the detail).
            continue;
        }
        pane.keys(&[key]);
    }
    // Then one plain `l`: K = 7, not 8 (Ctrl-L) or 5 (Ctrl-H), and still a fixed K.
    pane.keys(&["l"]);
    pane.wait_until_typed_keys_are_read();
    let screen = pane.wait_for("K = 7", |s| s.contains("K = 7 ·"));
    let header: String = screen.lines().take(3).collect();
    assert!(!header.contains("auto-K"), "Ctrl-A left K fixed:\n{screen}");
    assert!(
        !screen.contains("path:"),
        "Ctrl-E opened no export:\n{screen}"
    );
    // Ctrl-L draws every cell again: what another program wrote over the screen goes. The
    // stray text is written to the terminal itself, behind the explorer's back, so only a
    // full redraw removes it (a redraw of changed cells leaves it).
    let stray = "STRAY-TEXT-FROM-ANOTHER-PROGRAM";
    let tty = pane.flag("pane_tty");
    std::io::Write::write_all(
        &mut std::fs::OpenOptions::new().write(true).open(&tty).unwrap(),
        format!("\x1b[2;60H{stray}").as_bytes(),
    )
    .unwrap();
    pane.wait_for("the stray text", |s| s.contains(stray));
    // Nothing else takes it away: the header's second row does not change on its own.
    std::thread::sleep(Duration::from_millis(500));
    assert!(pane.screen().contains(stray), "{}", pane.screen());
    pane.keys(&["C-l"]);
    pane.wait_for("the redrawn screen", |s| {
        s.contains("K = 7 ·") && !s.contains(stray)
    });
    pane.keys(&["q"]);
    pane.assert_restored();
}

/// A generated run of `rows` iterations, as `examples/gen_run.rs` writes it.
fn generated_log(dir: &Path, rows: u64) -> std::path::PathBuf {
    generated_log_with(dir, rows, false)
}

/// The same, with a second metric (`energy_j`) when `energy`.
fn generated_log_with(dir: &Path, rows: u64, energy: bool) -> std::path::PathBuf {
    use seqpoint::testkit::scale::{write_log, GenFormat, GenSpec};
    let path = dir.join("run.csv");
    let spec = GenSpec {
        rows,
        energy,
        ..GenSpec::default()
    };
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    write_log(&spec, 0, GenFormat::Csv, &mut out).unwrap();
    std::io::Write::flush(&mut out).unwrap();
    path
}

fn resident_kb(pid: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/PID/status")
}

#[test]
fn restarting_the_session_does_not_grow_resident_memory() {
    let test = "restarting_the_session_does_not_grow_resident_memory";
    if !tmux_available(test) || !proc_available(test) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Large enough that a session's key groups (row lists, several MB) dwarf the allocator's
    // per-thread noise: each restart kept them all before (about 7 MB a restart here).
    let log = generated_log(dir.path(), 1_000_000);
    let pid_file = dir.path().join("pid");
    let pane = Pane::start(120, 40, dir.path());
    // One malloc arena: each restart's worker threads would otherwise each be given an arena
    // of their own (up to 8 per core), whose freed pages stay resident; under a loaded
    // machine that alone grew the count by up to 8.5 MB over 8 restarts, a leak's size.
    pane.run(&format!(
        "sh -c 'echo $$ > {}; MALLOC_ARENA_MAX=1 exec {BIN} {} --bins 8'",
        pid_file.display(),
        log.display()
    ));
    pane.wait_for("the explorer", |s| {
        s.contains("K = 8 ·") && !s.contains("⟳")
    });
    let pid = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .to_string();
    // Each restart: `:seed N`, then `y` shows the command of the session on screen; it
    // names the new seed once the new session has replaced the old one.
    let restart = |seed: u64| {
        command(&pane, &format!("seed {seed}"));
        pane.keys(&["y"]);
        let flag = format!("--seed {seed}");
        pane.wait_for("the new session", |s| s.contains(&flag) && !s.contains("⟳"));
        pane.keys(&["y"]);
        pane.wait_for("the popup closed", |s| !s.contains(&flag));
    };
    // The first restart warms what any restart uses (worker threads' allocator arenas).
    restart(11);
    let before = resident_kb(&pid);
    for seed in 12..20 {
        restart(seed);
    }
    let after = resident_kb(&pid);
    crate::common::note(&format!(
        "resident memory over 8 restarts of a 1M-row session: {before} kB -> {after} kB"
    ));
    assert!(
        after * 4 < before * 5,
        "8 restarts grew resident memory from {before} kB to {after} kB (25% allowed)"
    );
    pane.keys(&["q"]);
    pane.assert_restored();
}

/// Rows of the run `a_key_is_answered_while_metric_reads_a_large_run_again` reads: enough
/// that reading it again takes several times a key's answer, few enough for CI. Set
/// `SEQPOINT_TUI_ROWS=10000000` for the 10M-row figure.
const METRIC_ROWS: u64 = 2_000_000;
/// Presses timed; the median is judged.
const METRIC_PRESSES: usize = 5;
/// What a key's answer should take at most (the figure noted beside the median).
const ANSWER_GOAL: Duration = Duration::from_millis(100);
/// The median answer allowed: ten times the goal, for a loaded 2-core machine. A key held
/// until the run is read again (the bug) takes the whole reading, and fails the other check.
const ANSWER_BOUND: Duration = Duration::from_millis(1000);

#[test]
fn a_key_is_answered_while_metric_reads_a_large_run_again() {
    let test = "a_key_is_answered_while_metric_reads_a_large_run_again";
    if !tmux_available(test) {
        return;
    }
    let rows = std::env::var("SEQPOINT_TUI_ROWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(METRIC_ROWS);
    let dir = tempfile::tempdir().unwrap();
    let log = generated_log_with(dir.path(), rows, true);
    let pane = Pane::start(120, 40, dir.path());
    pane.run(&format!("{BIN} {} --bins 8", log.display()));
    let idle = |s: &str| s.contains("K = 8 ·") && !s.contains("⟳");
    pane.wait_for("the explorer", idle);
    let mut answers = Vec::new();
    let mut during = 0;
    for press in 0..METRIC_PRESSES {
        let metric = ["energy_j", "time_ms"][press % 2];
        command(&pane, &format!("metric {metric}"));
        let shown = format!("metrics {metric}");
        // The footer's bar shows for as long as the reading takes (or, on a machine fast
        // enough to read it between two looks, the new metric is on screen already: that
        // press is then not counted as during it).
        pane.wait_for("the log read again", |s| {
            s.contains("reading the log again") || s.contains(&shown)
        });
        // Tab: the SeqPoints table (or back to the overview), drawn at once when keys are
        // answered while the log is read.
        let table = press % 2 == 0;
        let start = Instant::now();
        pane.keys(&["Tab"]);
        let screen =
            pane.wait_for_quickly("the other view", |s| s.contains(" SeqPoints: ") == table);
        answers.push(start.elapsed());
        // Answered while the run was still being read: the build is off the UI thread.
        during += usize::from(screen.contains("reading the log again"));
        pane.wait_for("the new metric", |s| s.contains(&shown) && !s.contains("⟳"));
    }
    answers.sort();
    let median = answers[METRIC_PRESSES / 2];
    let ms = |d: &Duration| format!("{:.0}", d.as_secs_f64() * 1e3);
    crate::common::note(&format!(
        "a key during :metric on {rows} rows: answered in {} ms (median {} ms; goal {} ms); \
         {during} of {METRIC_PRESSES} while the log was still read",
        answers.iter().map(ms).collect::<Vec<_>>().join(", "),
        ms(&median),
        ms(&ANSWER_GOAL),
    ));
    // The median of five fails only when three presses do: each is a few ms against a read
    // of hundreds, so a pass by luck needs the UI thread freed and a fail needs three
    // stalls of a full second.
    assert!(
        during > METRIC_PRESSES / 2,
        "a key waited for the log to be read again: {during} of {METRIC_PRESSES} answered during it"
    );
    assert!(
        median < ANSWER_BOUND,
        "a key during :metric took {} ms (median; goal {} ms)",
        ms(&median),
        ms(&ANSWER_GOAL)
    );
    pane.keys(&["q"]);
    pane.assert_restored();
}
