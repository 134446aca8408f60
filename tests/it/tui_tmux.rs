//! The real binary on a real terminal (tmux): keys change K and export, the export equals
//! what `seqpoint select` writes, an export onto a loaded log is refused, Esc goes back
//! (also when the next key arrives with it), 80x23 and 60x16 fit, Ctrl-Z and `fg` give the
//! terminal back and take it again, and quitting, SIGTERM, SIGHUP and SIGQUIT all leave the
//! terminal restored (main screen, cursor shown, cooked mode with echo). Without tmux each test
//! says it skips; on CI, which installs tmux, it fails instead.

use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_seqpoint");
const PROMPT: &str = "sp-test$ ";
/// How long a wait for the screen or a process may take before the test gives up: a deadline
/// for a machine under heavy load, never a measure (a quiet machine is done in a fraction).
pub(crate) const PATIENCE: Duration = Duration::from_secs(120);
/// How often the screen is read while waiting: each read is one short tmux command.
const POLL: Duration = Duration::from_millis(25);

/// Whether tmux runs here; when not, `test` says it skips (on CI, where `.ci/run` installs
/// tmux, it fails instead).
pub(crate) fn tmux_available(test: &str) -> bool {
    let found = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        crate::common::skip(&format!("tui_tmux::{test}"), "tmux not found");
    }
    found
}

/// Whether `/proc` describes processes (Linux); when not, `test` says it skips (on CI, whose
/// machines are Linux, it fails instead).
pub(crate) fn proc_available(test: &str) -> bool {
    let found = Path::new("/proc/self/stat").exists();
    if !found {
        crate::common::skip(&format!("tui_tmux::{test}"), "no /proc");
    }
    found
}

/// A tmux server of its own (own socket), running a plain shell in one pane.
pub(crate) struct Pane {
    socket: PathBuf,
    _dir: tempfile::TempDir,
}

impl Pane {
    pub(crate) fn start(width: u16, height: u16, cwd: &Path) -> Pane {
        let dir = tempfile::tempdir().unwrap();
        let pane = Pane {
            socket: dir.path().join("tmux.sock"),
            _dir: dir,
        };
        // A UTF-8 locale whatever the machine's (an ASCII one has its own test).
        let shell = format!(
            "env PS1='{PROMPT}' TERM=xterm-256color LC_ALL=C.UTF-8 bash --norc --noprofile"
        );
        pane.tmux(&[
            "new-session",
            "-d",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
            "-c",
            cwd.to_str().unwrap(),
            &shell,
        ]);
        pane.wait_for("the shell prompt", |s| s.contains(PROMPT.trim()));
        pane
    }

    pub(crate) fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    pub(crate) fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "0"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    /// Type a shell line and run it.
    pub(crate) fn run(&self, line: &str) {
        self.tmux(&["send-keys", "-t", "0", "-l", line]);
        self.keys(&["Enter"]);
    }

    pub(crate) fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "0"])
    }

    pub(crate) fn flag(&self, name: &str) -> String {
        self.tmux(&["display-message", "-p", "-t", "0", &format!("#{{{name}}}")])
            .trim()
            .to_string()
    }

    pub(crate) fn wait_for(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if ok(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() < PATIENCE,
                "waited for {what}; the screen is:\n{screen}"
            );
            std::thread::sleep(POLL);
        }
    }

    /// `wait_for`, reading the screen as often as tmux answers: for timing an answer.
    pub(crate) fn wait_for_quickly(&self, what: &str, ok: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if ok(&screen) {
                return screen;
            }
            assert!(
                start.elapsed() < PATIENCE,
                "waited for {what}; the screen is:\n{screen}"
            );
        }
    }

    /// Wait until the program in the pane has read every byte typed so far (the terminal's
    /// input queue is empty): what it does with them comes after, in order, before anything
    /// sent later, such as a resize.
    pub(crate) fn wait_until_typed_keys_are_read(&self) {
        use std::os::fd::AsRawFd;
        let tty = self.flag("pane_tty");
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOCTTY | libc::O_NONBLOCK)
            .open(&tty)
            .unwrap_or_else(|e| panic!("{tty}: {e}"));
        let start = Instant::now();
        loop {
            let mut waiting: libc::c_int = 0;
            // SAFETY: FIONREAD writes one c_int through the pointer, which lives past the call.
            let rc = unsafe { libc::ioctl(file.as_raw_fd(), libc::FIONREAD, &mut waiting) };
            assert_eq!(rc, 0, "FIONREAD on {tty}");
            if waiting == 0 {
                return;
            }
            assert!(
                start.elapsed() < PATIENCE,
                "{waiting} typed bytes still unread"
            );
            std::thread::sleep(POLL);
        }
    }

    /// After the explorer ends: main screen, cursor shown, and a shell in cooked mode.
    pub(crate) fn assert_restored(&self) {
        self.wait_for("the main screen", |_| self.flag("alternate_on") == "0");
        assert_eq!(self.flag("cursor_flag"), "1", "the cursor is visible again");
        // Each answer line carries a mark of this call's own, made by the shell (the typed
        // line holds `$n`, not the number): an earlier call's answer still on the screen
        // before `clear` runs is never read as this one's. Reading a stale answer once let
        // the next keys reach the terminal while the shell still ran stty.
        static ASKED: AtomicUsize = AtomicUsize::new(0);
        let n = ASKED.fetch_add(1, Ordering::Relaxed);
        self.run(&format!(
            "clear; n={n}; stty -a | tr ' ;' '\\n\\n' | grep -xE -- '-?(icanon|echo)' \
             | sed \"s/^/mode$n: /\""
        ));
        let mark = format!("mode{n}: ");
        let answer = |s: &str| -> Vec<String> {
            s.lines()
                .filter_map(|l| l.strip_prefix(mark.as_str()))
                .map(|l| l.trim().to_string())
                .collect()
        };
        // Both lines, not just the first: the pane may be read between them.
        let screen = self.wait_for("stty's answer", |s| answer(s).len() == 2);
        assert_eq!(
            answer(&screen),
            ["icanon", "echo"],
            "cooked mode with echo:\n{screen}"
        );
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

#[test]
fn keys_change_k_export_confirm_and_quit() {
    if !tmux_available("keys_change_k_export_confirm_and_quit") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pane = Pane::start(80, 24, dir.path());
    pane.run(&format!("{BIN} --bins 6"));
    pane.wait_for("the explorer", |s| {
        s.contains("K = 6 ·") && s.contains("6 of 450")
    });
    pane.keys(&["l"]);
    pane.wait_for("K = 7", |s| s.contains("K = 7 ·") && s.contains("7 of 450"));

    pane.keys(&["e"]);
    pane.wait_for("the export prompt", |s| s.contains("path: seqpoints.json"));
    pane.keys(&["Enter"]);
    let screen = pane.wait_for("the export", |s| s.contains("wrote"));
    let json_path = dir.path().join("seqpoints.json");
    let where_shown = json_path.canonicalize().unwrap();
    assert!(
        screen
            .replace('\n', "")
            .contains(&where_shown.display().to_string()[..20]),
        "the footer says where it wrote:\n{screen}"
    );
    let first = std::fs::read_to_string(&json_path).unwrap();
    assert!(first.contains("\"command\": \"seqpoint select sample:speech_t1.csv --compare sample:speech_t2.csv --bins 7 "));

    // Again at K = 8: the files exist, so it asks; "y" overwrites.
    pane.keys(&["l"]);
    pane.wait_for("K = 8", |s| s.contains("K = 8 ·"));
    pane.keys(&["e"]);
    pane.wait_for("the export prompt", |s| s.contains("path: seqpoints.json"));
    pane.keys(&["Enter"]);
    pane.wait_for("the overwrite question", |s| s.contains("Overwrite?"));
    assert_eq!(std::fs::read_to_string(&json_path).unwrap(), first);
    pane.keys(&["y"]);
    pane.wait_for("the export", |s| s.contains("wrote"));
    let json = std::fs::read_to_string(&json_path).unwrap();
    let csv = std::fs::read_to_string(dir.path().join("seqpoints.csv")).unwrap();

    pane.keys(&["q"]);
    pane.assert_restored();

    // What the explorer wrote is what `seqpoint select` writes for its recorded command.
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let command = doc["command"].as_str().unwrap().to_string();
    assert!(command.contains("--bins 8"), "{command}");
    let args: Vec<&str> = command.split(' ').skip(1).collect();
    let select = |format: &str| {
        let out = Command::new(BIN)
            .args(&args)
            .args(["--format", format])
            .output()
            .unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let line = format!(
        ",\n  \"command\": {}",
        serde_json::to_string(&command).unwrap()
    );
    // K = 8 by hand is judged against the 1% target on screen, and the document records it
    // (`select --bins 8` has no target to record); every other byte is select's.
    let recorded = "\"target_error_pct\": 1.0,";
    assert_eq!(json.matches(recorded).count(), 1, "{json}");
    assert_eq!(
        json.replace(&line, "")
            .replace(recorded, "\"target_error_pct\": null,"),
        select("json")
    );
    assert_eq!(csv, select("csv"));
}

/// The shell printed `exit=N` (not just the typed command that will print it).
fn printed_exit(screen: &str) -> bool {
    screen.lines().any(|l| l.starts_with("exit="))
}

/// Start the explorer so its process id is known (the shell execs it in a subshell); the
/// shell prints its exit status when it ends.
fn start_with_pid(pane: &Pane, dir: &Path) -> u32 {
    launch_with_pid(pane, dir, "; echo \"exit=$?\"")
}

/// Start the explorer as `start_with_pid` does, with `after` run by the shell once it ends
/// (or stops: job control keeps the rest of the line).
fn launch_with_pid(pane: &Pane, dir: &Path, after: &str) -> u32 {
    let pid_file = dir.join("pid");
    pane.run(&format!(
        "sh -c 'echo $$ > {}; exec {BIN} --bins 5'{after}",
        pid_file.display()
    ));
    pane.wait_for("the explorer", |s| s.contains("K = 5 ·"));
    assert_eq!(pane.flag("alternate_on"), "1");
    std::fs::read_to_string(pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn sigterm_sighup_and_sigquit_restore_the_terminal() {
    if !tmux_available("sigterm_sighup_and_sigquit_restore_the_terminal") {
        return;
    }
    for (signal, code) in [("TERM", 143), ("HUP", 129), ("QUIT", 131)] {
        let dir = tempfile::tempdir().unwrap();
        let pane = Pane::start(100, 30, dir.path());
        let pid = start_with_pid(&pane, dir.path());
        let killed = Command::new("kill")
            .args([format!("-{signal}"), pid.to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let screen = pane.wait_for("the exit status", printed_exit);
        assert!(
            screen.contains(&format!("exit={code}")),
            "SIG{signal} ends with {code}:\n{screen}"
        );
        pane.assert_restored();
    }
}

/// True while the process runs (a zombie has ended; it only waits to be reaped).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

#[test]
fn a_terminal_that_hangs_up_without_sighup_still_ends_the_explorer() {
    if !tmux_available("a_terminal_that_hangs_up_without_sighup_still_ends_the_explorer")
        || !proc_available("a_terminal_that_hangs_up_without_sighup_still_ends_the_explorer")
    {
        return;
    }
    // The pane's first process is a plain `sh` that dies on the hang-up without passing
    // SIGHUP on: only the terminal itself tells the explorer that nobody is there.
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let pane = Pane {
        socket: dir.path().join("tmux.sock"),
        _dir: tempfile::tempdir().unwrap(),
    };
    let command = format!(
        "sh -c 'echo $$ > {}; exec {BIN} --bins 5'; sleep 600",
        pid_file.display()
    );
    pane.tmux(&["new-session", "-d", "-x", "100", "-y", "30", &command]);
    pane.wait_for("the explorer", |s| s.contains("K = 5 ·"));
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(running(pid));
    // Let it settle into waiting for keys: a hang-up that lands while it draws fails the
    // draw, which ends it anyway; the case that spun forever was the idle wait.
    std::thread::sleep(Duration::from_secs(1));
    pane.tmux(&["kill-server"]);
    let start = Instant::now();
    while running(pid) && start.elapsed() < PATIENCE {
        std::thread::sleep(POLL);
    }
    let still = running(pid);
    if still {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    }
    assert!(
        !still,
        "the explorer kept running after its terminal hung up"
    );
}

#[test]
fn a_load_error_reads_like_the_cli_and_never_opens_the_screen() {
    if !tmux_available("a_load_error_reads_like_the_cli_and_never_opens_the_screen") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.csv"),
        "seq_len,time_ms\n10,1\n12,oops\n",
    )
    .unwrap();
    let pane = Pane::start(80, 24, dir.path());
    pane.run(&format!("{BIN} bad.csv; echo \"exit=$?\""));
    let screen = pane.wait_for("the error", printed_exit);
    assert!(screen.contains("error: "), "{screen}");
    assert!(screen.contains("bad.csv"), "{screen}");
    assert!(screen.contains("exit=1"), "{screen}");
    let cli = Command::new(BIN)
        .args(["select", "bad.csv"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let message = String::from_utf8(cli.stderr).unwrap();
    let first_line = message.lines().next().unwrap();
    assert!(
        screen.contains(&first_line[..first_line.len().min(70)]),
        "the same message as `seqpoint select`:\n{message}\n---\n{screen}"
    );
    pane.assert_restored();

    // A bad option is reported the same way, before any screen opens.
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/translation_2d.csv");
    pane.run(&format!(
        "clear; {BIN} {} --key src_len,tgt_len --method optimal; echo \"exit=$?\"",
        data.display()
    ));
    let screen = pane.wait_for("the error", printed_exit);
    assert!(
        screen.contains("error: --method optimal: needs a one-length key"),
        "{screen}"
    );
    assert!(screen.contains("exit=1"), "{screen}");
    pane.assert_restored();
}

#[test]
fn without_a_terminal_seqpoint_prints_the_select_table() {
    let out = Command::new(BIN).args(["--bins", "4"]).output().unwrap();
    assert!(out.status.success());
    let table = String::from_utf8(out.stdout).unwrap();
    let select = Command::new(BIN)
        .args(["select", "--bins", "4"])
        .output()
        .unwrap();
    assert_eq!(table, String::from_utf8(select.stdout).unwrap());
    assert!(table.contains("4 SeqPoints"), "{table}");
}

#[test]
fn tui_without_a_terminal_says_what_to_use_instead() {
    let out = Command::new(BIN)
        .args(["tui", "--bins", "4"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let message = String::from_utf8(out.stderr).unwrap();
    assert!(message.contains("needs a terminal"), "{message}");
    assert!(message.contains("seqpoint select"), "{message}");
}

/// Run by `a_panic_restores_the_terminal` inside tmux (this test binary, re-executed):
/// the explorer's screen up, then a panic.
#[test]
fn panic_helper() {
    if std::env::var_os("SEQPOINT_PANIC_HELPER").is_none() {
        return;
    }
    let mut guard = seqpoint::tui::terminal::TerminalGuard::enter().unwrap();
    guard
        .screen
        .draw(|f| f.render_widget("explorer up", f.area()))
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    panic!("deliberate panic while the explorer is on screen");
}

#[test]
fn a_panic_restores_the_terminal_and_prints_its_message() {
    if !tmux_available("a_panic_restores_the_terminal_and_prints_its_message") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pane = Pane::start(100, 30, dir.path());
    let me = std::env::current_exe().unwrap();
    pane.run(&format!(
        "SEQPOINT_PANIC_HELPER=1 {} --exact tui_tmux::panic_helper --nocapture --test-threads 1; echo \"exit=$?\"",
        me.display()
    ));
    let screen = pane.wait_for("the exit status", printed_exit);
    assert!(screen.contains("deliberate panic"), "{screen}");
    pane.assert_restored();
}

/// The shared speech logs as `run.csv` and `run_new.csv` in `dir`.
/// What `seqpoint select --format json` gives: iterations to profile, K and the first total.
struct SelectFigures {
    iterations: u64,
    bins: u64,
    projected: String,
    actual: String,
}

impl SelectFigures {
    fn of(dir: &Path, args: &[&str]) -> Self {
        let out = Command::new(BIN)
            .current_dir(dir)
            .arg("select")
            .args(args)
            .args(["--format", "json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let total = &doc["projection"][0];
        let readable =
            |v: &serde_json::Value| seqpoint::text::numbers::readable(v.as_f64().unwrap());
        SelectFigures {
            iterations: doc["iterations_to_profile"].as_u64().unwrap(),
            bins: doc["selection"]["bins"].as_u64().unwrap(),
            projected: readable(&total["projected"]),
            actual: readable(&total["actual"]),
        }
    }
}

#[test]
fn the_default_explorer_profiles_what_select_prints() {
    if !tmux_available("the_default_explorer_profiles_what_select_prints") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pane = Pane::start(120, 40, dir.path());
    // No arguments: the bundled sample and its compare log, with select's defaults.
    pane.run(BIN);
    let select = Command::new(BIN)
        .current_dir(dir.path())
        .arg("select")
        .output()
        .unwrap();
    assert!(select.status.success());
    let printed = String::from_utf8_lossy(&select.stdout);
    // `select`'s own line, e.g. "profile 95 of 450 iterations (4.7x fewer), 25% of the run's time".
    let line = printed
        .lines()
        .find(|l| l.starts_with("profile ") && l.contains(" iterations ("))
        .unwrap_or_else(|| panic!("no cost line in select's table:\n{printed}"))
        .to_string();
    let figure = line.split(" of ").next().unwrap().to_string();
    let screen = pane.wait_for("the explorer's cost line", |s| {
        s.contains(&figure) && !s.contains("computing")
    });
    // The same figures: iterations to profile of the run, and how many times fewer.
    let (start, _) = line.split_once(" fewer)").unwrap();
    let row = screen
        .lines()
        .find(|l| l.contains(&figure))
        .unwrap()
        .replace('│', " ");
    let fits = row.contains(start);
    let wrapped = row.contains(start.split(" (").next().unwrap());
    assert!(
        fits || wrapped,
        "select prints {line:?}; the explorer shows:\n{screen}"
    );
    pane.keys(&["q"]);
    pane.assert_restored();
}

fn copy_logs(dir: &Path) {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    std::fs::copy(data.join("speech_t1.csv"), dir.join("run.csv")).unwrap();
    std::fs::copy(data.join("speech_t2.csv"), dir.join("run_new.csv")).unwrap();
}

#[test]
fn esc_goes_back_and_the_command_line_sets_k() {
    if !tmux_available("esc_goes_back_and_the_command_line_sets_k") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pane = Pane::start(80, 24, dir.path());
    pane.run(&format!("{BIN} --bins 6; echo \"exit=$?\""));
    pane.wait_for("the explorer", |s| s.contains("K = 6 ·"));
    pane.keys(&["Tab"]);
    pane.wait_for("the table", |s| s.contains("SeqPoints: 6 to profile"));
    pane.keys(&["Escape"]);
    pane.wait_for("the overview again", |s| {
        s.contains("SL distribution") && !s.contains("SeqPoints: 6 to profile")
    });
    pane.keys(&["Escape"]);
    pane.wait_for("how to quit", |s| s.contains("q quits"));
    assert_eq!(pane.flag("alternate_on"), "1", "Esc quit the explorer");
    pane.keys(&[":"]);
    pane.tmux(&["send-keys", "-t", "0", "-l", "k 8"]);
    pane.keys(&["Enter"]);
    pane.wait_for("K = 8", |s| s.contains("K = 8 ·") && s.contains("8 of 450"));
    // Esc and q in one write (M-q is those two bytes): the popup closes and q quits.
    pane.keys(&["?"]);
    pane.wait_for("the keys overlay", |s| s.contains(" Keys "));
    pane.keys(&["M-q"]);
    let screen = pane.wait_for("the exit status", printed_exit);
    assert!(screen.contains("exit=0"), "{screen}");
    pane.assert_restored();
}

#[test]
fn an_export_onto_a_loaded_log_is_refused_whatever_the_answer() {
    if !tmux_available("an_export_onto_a_loaded_log_is_refused_whatever_the_answer") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    copy_logs(dir.path());
    let before = std::fs::read(dir.path().join("run.csv")).unwrap();
    let pane = Pane::start(80, 24, dir.path());
    pane.run(&format!("{BIN} run.csv --compare run_new.csv --bins 6"));
    pane.wait_for("the explorer", |s| {
        s.contains("K = 6 ·") && s.contains("6 of 450")
    });
    // `run` as the JSON's name makes the CSV list `run.csv`: the run log itself.
    pane.keys(&["e"]);
    pane.wait_for("the export prompt", |s| s.contains("path: "));
    pane.keys(&["C-u"]);
    pane.tmux(&["send-keys", "-t", "0", "-l", "run"]);
    pane.keys(&["Enter"]);
    let screen = pane.wait_for("the refusal", |s| s.contains("loaded input log"));
    assert!(!screen.contains("Overwrite?"), "{screen}");
    assert!(screen.contains("run.csv"), "{screen}");
    pane.keys(&["y", "Enter", "y"]);
    // Read, then a moment to act on them: a write that would happen has had its chance.
    pane.wait_until_typed_keys_are_read();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(std::fs::read(dir.path().join("run.csv")).unwrap(), before);
    assert!(!dir.path().join("run").exists());
    pane.keys(&["Escape", "q"]);
    pane.assert_restored();
}

#[test]
fn eighty_by_twenty_three_and_sixty_by_sixteen_fit_and_smaller_ignores_keys() {
    if !tmux_available("eighty_by_twenty_three_and_sixty_by_sixteen_fit_and_smaller_ignores_keys") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    copy_logs(dir.path());
    // tmux's status line takes a row of an 80x24 terminal: the pane is 80x23.
    let pane = Pane::start(80, 23, dir.path());
    pane.run(&format!("{BIN} run.csv --compare run_new.csv"));
    // The figures `select` gives for the same flags.
    let want = SelectFigures::of(dir.path(), &["run.csv", "--compare", "run_new.csv"]);
    let profile = format!("profile {} of 450", want.iterations);
    let k = format!("K = {}", want.bins);
    let screen = pane.wait_for("the explorer at 80x23", |s| {
        s.contains(&profile) && s.contains("Error vs K")
    });
    for shown in [
        "Projection",
        &want.projected,
        &want.actual,
        "speedup",
        &profile,
    ] {
        assert!(screen.contains(shown), "80x23 lacks {shown:?}:\n{screen}");
    }
    assert!(!screen.contains("too small"), "{screen}");
    pane.tmux(&["resize-window", "-t", "0", "-x", "60", "-y", "16"]);
    let screen = pane.wait_for("the explorer at 60x16", |s| {
        s.contains("error curve from 80 columns")
    });
    for shown in [&k, &want.projected, &want.actual, "speedup", &profile] {
        assert!(screen.contains(shown), "60x16 lacks {shown:?}:\n{screen}");
    }
    // Below 60x16: the message, and keys other than quit wait.
    pane.tmux(&["resize-window", "-t", "0", "-x", "59", "-y", "16"]);
    pane.wait_for("the too-small message", |s| s.contains("too small"));
    pane.keys(&["Tab", "?", "l"]);
    // Read (and so handled) while the terminal is still too small: the resize comes after.
    pane.wait_until_typed_keys_are_read();
    pane.tmux(&["resize-window", "-t", "0", "-x", "60", "-y", "16"]);
    let screen = pane.wait_for("the explorer again", |s| s.contains("Projection"));
    assert!(screen.contains(&k), "l acted while hidden:\n{screen}");
    assert!(!screen.contains("Keys"), "? acted while hidden:\n{screen}");
    assert!(
        screen.contains("SL distribution"),
        "Tab acted while hidden:\n{screen}"
    );
    pane.keys(&["q"]);
    pane.assert_restored();
}

#[test]
fn ctrl_z_and_sigtstp_give_the_terminal_back_and_fg_resumes_in_raw_mode() {
    if !tmux_available("ctrl_z_and_sigtstp_give_the_terminal_back_and_fg_resumes_in_raw_mode") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pane = Pane::start(100, 30, dir.path());
    let pid = launch_with_pid(&pane, dir.path(), "");
    for (k, stop) in [(6, "ctrl-z"), (7, "sigtstp")] {
        match stop {
            "ctrl-z" => pane.keys(&["C-z"]),
            _ => {
                let sent = Command::new("kill")
                    .args(["-TSTP", &pid.to_string()])
                    .status()
                    .unwrap();
                assert!(sent.success());
            }
        }
        // Stopped: the shell has a restored terminal.
        pane.wait_for("the shell", |s| s.contains("Stopped"));
        pane.assert_restored();
        pane.run("fg");
        // Resumed: the whole screen is drawn again without a resize.
        pane.wait_for("the explorer again", |s| {
            s.contains("SL distribution") && s.contains("Projection") && s.contains("Error vs K")
        });
        assert_eq!(pane.flag("alternate_on"), "1", "{stop}");
        // Raw mode: a key acts at once, without Enter, and is not echoed.
        pane.keys(&["l"]);
        pane.wait_for(&format!("K = {k} after {stop}"), |s| {
            s.contains(&format!("K = {k} ·"))
        });
    }
    // A SIGTERM after a resume ends it at once, terminal restored.
    let killed = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    pane.wait_for("the main screen", |_| pane.flag("alternate_on") == "0");
    pane.run("echo \"exit=$?\"");
    let screen = pane.wait_for("the exit status", printed_exit);
    assert!(screen.contains("exit=143"), "{screen}");
    pane.assert_restored();
}

#[test]
fn a_dumb_terminal_gets_the_table_and_a_piped_log_opens_the_explorer() {
    if !tmux_available("a_dumb_terminal_gets_the_table_and_a_piped_log_opens_the_explorer") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    copy_logs(dir.path());
    let pane = Pane::start(100, 30, dir.path());
    // No cursor addressing: the select table, never the screen.
    pane.run(&format!(
        "TERM=dumb {BIN} run.csv --bins 4; echo \"exit=$?\""
    ));
    let screen = pane.wait_for("the table", printed_exit);
    assert!(screen.contains("4 SeqPoints"), "{screen}");
    assert!(screen.contains("exit=0"), "{screen}");
    assert!(!screen.contains("SL distribution"), "{screen}");
    // The log through a pipe: read first, then the keys come from the terminal.
    pane.run(&format!(
        "clear; cat run.csv | {BIN} - --bins 5; echo \"exit=$?\""
    ));
    pane.wait_for("the explorer", |s| {
        s.contains("K = 5 ·") && s.contains("5 of 450")
    });
    pane.keys(&["l"]);
    pane.wait_for("K = 6", |s| s.contains("K = 6 ·"));
    pane.keys(&["q"]);
    let screen = pane.wait_for("the exit status", printed_exit);
    assert!(screen.contains("exit=0"), "{screen}");
    pane.assert_restored();
}

#[test]
fn a_locale_that_is_not_utf8_gets_ascii_borders_and_bars() {
    if !tmux_available("a_locale_that_is_not_utf8_gets_ascii_borders_and_bars") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pane = Pane::start(100, 30, dir.path());
    pane.run(&format!("LC_ALL=C LANG=C {BIN} --bins 5"));
    let screen = pane.wait_for("the explorer", |s| {
        s.contains("K = 5 .") && s.contains("5 of 450")
    });
    assert!(screen.contains("+-"), "ASCII corners and lines:\n{screen}");
    assert!(screen.is_ascii(), "only ASCII on screen:\n{screen}");
    pane.keys(&["q"]);
    pane.assert_restored();
}

#[test]
fn y_copies_the_command_to_the_clipboard_with_osc52() {
    if !tmux_available("y_copies_the_command_to_the_clipboard_with_osc52") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pane = Pane::start(160, 30, dir.path());
    // tmux keeps what an application sends with OSC 52 as a paste buffer.
    pane.tmux(&["set-option", "-g", "set-clipboard", "on"]);
    pane.run(&format!("{BIN} --bins 6"));
    pane.wait_for("the explorer", |s| {
        s.contains("K = 6 ·") && s.contains("6 of 450")
    });
    pane.keys(&["y"]);
    let screen = pane.wait_for("the command", |s| s.contains("The same selection"));
    let want = "seqpoint select sample:speech_t1.csv --compare sample:speech_t2.csv --bins 6";
    // On one line of its own, whole.
    let line = screen
        .lines()
        .find(|l| l.contains("seqpoint select"))
        .unwrap();
    assert!(line.trim().starts_with(want), "{screen}");
    let start = Instant::now();
    let copied = loop {
        let buffers = pane.tmux(&["list-buffers", "-F", "#{buffer_name}"]);
        if !buffers.trim().is_empty() {
            break pane.tmux(&["show-buffer"]);
        }
        assert!(start.elapsed() < PATIENCE, "nothing copied");
        std::thread::sleep(POLL);
    };
    assert_eq!(
        copied.trim(),
        line.trim(),
        "the clipboard holds the command shown"
    );
    pane.keys(&["y", "q"]);
    pane.assert_restored();
}

#[test]
fn resumed_in_the_background_it_leaves_the_terminal_alone_and_sigterm_ends_it() {
    if !tmux_available("resumed_in_the_background_it_leaves_the_terminal_alone_and_sigterm_ends_it")
        || !proc_available(
            "resumed_in_the_background_it_leaves_the_terminal_alone_and_sigterm_ends_it",
        )
    {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pane = Pane::start(100, 30, dir.path());
    let pid = launch_with_pid(&pane, dir.path(), "");
    pane.keys(&["C-z"]);
    pane.wait_for("the shell", |s| s.contains("Stopped"));
    pane.run("clear; bg");
    // Running again, but in the background: the shell keeps its screen and its modes.
    std::thread::sleep(Duration::from_millis(800));
    assert!(running(pid), "bg resumed it");
    assert_eq!(pane.flag("alternate_on"), "0", "drew over the shell");
    pane.assert_restored();
    // SIGTERM now: it ends at once, never waiting for the terminal (SIGTTOU).
    let killed = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let start = Instant::now();
    while running(pid) && start.elapsed() < PATIENCE {
        std::thread::sleep(POLL);
    }
    let still = running(pid);
    if still {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    }
    assert!(
        !still,
        "SIGTERM after a resume in the background did not end it"
    );
    pane.assert_restored();
}

#[test]
fn a_huge_samples_plan_is_shown_and_keys_work_meanwhile() {
    if !tmux_available("a_huge_samples_plan_is_shown_and_keys_work_meanwhile") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // 30,000 iterations over 400 lengths: profiling 20,000 per SeqPoint is most of the run,
    // the largest plan there can be.
    let rows: String = (0..30_000u32)
        .map(|i| {
            let key = 20 + (i.wrapping_mul(2_654_435_761) >> 11) % 400;
            format!(
                "{key},{}\n",
                f64::from(key) * (1.0 + f64::from(i % 7) / 30.0)
            )
        })
        .collect();
    std::fs::write(
        dir.path().join("run.csv"),
        format!("seq_len,time_ms\n{rows}"),
    )
    .unwrap();
    let pane = Pane::start(120, 40, dir.path());
    pane.run(&format!("{BIN} run.csv --samples 20000; echo \"exit=$?\""));
    pane.wait_for("the explorer", |s| s.contains("SL distribution"));
    // A key while the plan is made is handled at once.
    pane.keys(&["?"]);
    pane.wait_for("the keys overlay", |s| s.contains(" Keys "));
    pane.keys(&["Escape"]);
    let screen = pane.wait_for("the plan", |s| {
        !s.contains(" Keys ")
            && s.contains("plan ")
            && s.contains(" iterations")
            && !s.contains("⟳")
    });
    assert!(screen.contains("K = "), "{screen}");
    // A new K makes a new plan, shown as the first was.
    pane.keys(&["l"]);
    pane.wait_for("the new K's plan", |s| {
        s.contains("K = 2 ·") && s.contains("plan ") && !s.contains("⟳")
    });
    pane.keys(&["q"]);
    let screen = pane.wait_for("the exit status", printed_exit);
    assert!(screen.contains("exit=0"), "{screen}");
    pane.assert_restored();
}

/// The SGR parameters on a captured screen (`capture-pane -e`): tmux writes each cell's
/// colour as the application set it, `38;5;N` for one set in 256-colour form.
fn sgr_params(coded: &str) -> Vec<Vec<String>> {
    coded
        .split("\x1b[")
        .skip(1)
        .filter_map(|s| s.split_once('m'))
        .filter(|(params, _)| params.chars().all(|c| c.is_ascii_digit() || c == ';'))
        .map(|(params, _)| params.split(';').map(str::to_string).collect())
        .collect()
}

#[test]
fn eight_colour_terminals_get_eight_colour_codes_and_vt100_none() {
    if !tmux_available("eight_colour_terminals_get_eight_colour_codes_and_vt100_none") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    for (term, coloured) in [("screen", true), ("vt100", false)] {
        let pane = Pane::start(100, 30, dir.path());
        pane.run(&format!("TERM={term} {BIN} --bins 5"));
        pane.wait_for("the explorer", |s| {
            s.contains("K = 5 ·") && s.contains("5 of 450")
        });
        let coded = pane.tmux(&["capture-pane", "-p", "-e", "-t", "0"]);
        let params: Vec<String> = sgr_params(&coded).into_iter().flatten().collect();
        assert!(
            !params.iter().any(|p| p == "38" || p == "48"),
            "{term}: a 256-colour code: {coded:?}"
        );
        let colour = |p: &String| {
            p.parse::<u32>()
                .is_ok_and(|n| (31..=37).contains(&n) || (41..=47).contains(&n))
        };
        assert_eq!(params.iter().any(colour), coloured, "{term}: {coded:?}");
        pane.keys(&["q"]);
        pane.assert_restored();
    }
}
