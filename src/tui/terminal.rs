//! The terminal while the explorer runs: raw mode and the alternate screen on entry, and the
//! terminal given back on quit, on error (guard drop), on panic (hook), on SIGTERM, SIGHUP,
//! SIGINT and SIGQUIT, and while suspended (Ctrl-Z or SIGTSTP): `fg` (SIGCONT) takes it back
//! in raw mode and the screen is drawn again in full.
//! A watchdog thread ends the process when the terminal hangs up without a SIGHUP reaching
//! the explorer, or when an ending signal is not acted on in time.

use std::io::{self, Stdout};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Once};
use std::time::{Duration, Instant};

use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::cursor::{Hide, Show};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use ratatui::Terminal;
use signal_hook::consts::{SIGCONT, SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGTSTP, SIGTTOU};
use signal_hook::SigId;

use super::palette::EightColours;

/// The screen, its colours kept to what the terminal shows (`palette`).
pub type Screen = Terminal<CrosstermBackend<EightColours<Stdout>>>;

/// Worker threads are named so the panic hook leaves the screen to the UI thread.
pub const WORKER_THREAD: &str = "seqpoint-worker";
const WATCHDOG_THREAD: &str = "seqpoint-watchdog";

/// How often the watchdog looks at the terminal when nothing happens.
const WATCH_EVERY: Duration = Duration::from_millis(200);
/// How long the event loop gets to notice an ending signal or a hang-up itself (it looks
/// every 100 ms) before the watchdog restores what it can and ends the process.
const GRACE: Duration = Duration::from_secs(1);

/// Set while the terminal is in the explorer's mode, so it is restored exactly once.
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Set from entry to drop: the watchdog keeps watching while the explorer is suspended.
static WATCHING: AtomicBool = AtomicBool::new(false);

/// Signals that end the explorer: the terminal's own hang-up (a dropped SSH session), a
/// polite kill, and an interrupt or quit sent from outside (Ctrl-C itself arrives as a key).
const ENDING_SIGNALS: [i32; 4] = [SIGTERM, SIGHUP, SIGINT, SIGQUIT];

/// The terminal in the explorer's mode; dropping it gives the terminal back.
pub struct TerminalGuard {
    pub screen: Screen,
    ending: Arc<Ending>,
    /// SIGTSTP from outside (`kill -TSTP`; Ctrl-Z itself arrives as a key in raw mode).
    stop: Arc<AtomicBool>,
    /// SIGCONT: the process went on after a stop it may not have seen coming (SIGSTOP);
    /// the shell may have put the terminal back in cooked mode meanwhile.
    resumed: Arc<AtomicBool>,
    /// Whether the terminal is given back to the shell (stopped, or resumed in the
    /// background and waiting to be brought to the foreground).
    suspended: bool,
    hooks: Vec<SigId>,
}

/// What can end the explorer from outside: signal flags, set by the handlers, and the
/// terminal hanging up, set by the watchdog.
struct Ending {
    signals: Vec<(i32, Arc<AtomicBool>)>,
    hung_up: AtomicBool,
}

impl Ending {
    /// The signal to end with, if any: a hang-up counts as SIGHUP.
    fn signal(&self) -> Option<i32> {
        let received = self
            .signals
            .iter()
            .find(|(_, flag)| flag.load(Ordering::Relaxed))
            .map(|(signal, _)| *signal);
        received.or_else(|| self.hung_up.load(Ordering::Relaxed).then_some(SIGHUP))
    }
}

impl TerminalGuard {
    /// Registers the signal flags first, so a signal during setup still restores.
    pub fn enter() -> io::Result<Self> {
        install_panic_hook();
        let mut signals = Vec::new();
        let mut hooks = Vec::new();
        for signal in ENDING_SIGNALS {
            let flag = Arc::new(AtomicBool::new(false));
            // A second signal while the first is being handled ends the process at once,
            // should the explorer ever fail to notice the first.
            hooks.push(signal_hook::flag::register_conditional_shutdown(
                signal,
                128 + signal,
                flag.clone(),
            )?);
            hooks.push(signal_hook::flag::register(signal, flag.clone())?);
            signals.push((signal, flag));
        }
        let ending = Arc::new(Ending {
            signals,
            hung_up: AtomicBool::new(false),
        });
        let stop = Arc::new(AtomicBool::new(false));
        let resumed = Arc::new(AtomicBool::new(false));
        hooks.push(signal_hook::flag::register(SIGTSTP, stop.clone())?);
        hooks.push(signal_hook::flag::register(SIGCONT, resumed.clone())?);
        // Giving the terminal back must never stop the process: after a resume in the
        // background, a mode change or a write would raise SIGTTOU and an ending signal would
        // then wait for a `fg` that may never come. The explorer only takes the terminal
        // while in the foreground (`resume`).
        // SAFETY: setting a signal's disposition to "ignore" has no preconditions.
        unsafe {
            libc::signal(SIGTTOU, libc::SIG_IGN);
        }
        let screen = (|| {
            ACTIVE.store(true, Ordering::SeqCst);
            WATCHING.store(true, Ordering::SeqCst);
            enable_raw_mode()?;
            execute!(io::stdout(), EnterAlternateScreen, Hide)?;
            let out = EightColours::for_palette(io::stdout(), super::palette::palette());
            let screen = Terminal::new(CrosstermBackend::new(out))?;
            let watched = ending.clone();
            std::thread::Builder::new()
                .name(WATCHDOG_THREAD.into())
                .spawn(move || watch(&watched))?;
            Ok(screen)
        })();
        match screen {
            Ok(screen) => Ok(TerminalGuard {
                screen,
                ending,
                stop,
                resumed,
                suspended: false,
                hooks,
            }),
            Err(e) => {
                WATCHING.store(false, Ordering::SeqCst);
                restore();
                for id in hooks {
                    signal_hook::low_level::unregister(id);
                }
                Err(e)
            }
        }
    }

    /// The first ending signal received (a hang-up counts as SIGHUP), if any.
    pub fn signal(&self) -> Option<i32> {
        self.ending.signal()
    }

    /// Whether a SIGTSTP came from outside since the last call.
    pub fn stop_requested(&self) -> bool {
        self.stop.swap(false, Ordering::SeqCst)
    }

    /// Whether the terminal is the shell's (suspended, or resumed in the background).
    pub fn suspended(&self) -> bool {
        self.suspended
    }

    /// Ctrl-Z: give the terminal back (cooked mode, main screen, cursor shown) and stop the
    /// process as SIGTSTP would. Returns once continued, with the terminal taken back when
    /// in the foreground (else `resume` is tried again on each tick).
    pub fn suspend(&mut self) -> io::Result<()> {
        restore();
        self.suspended = true;
        signal_hook::low_level::emulate_default_handler(SIGTSTP)?;
        // Continued: the SIGCONT is this very resume.
        self.resumed.store(false, Ordering::SeqCst);
        self.resume()
    }

    /// After a SIGCONT, or while waiting in the background: take the terminal back in raw
    /// mode with the alternate screen, and clear it so the next draw is a full one.
    /// Returns whether the screen is the explorer's again.
    pub fn resume_if_needed(&mut self) -> io::Result<bool> {
        let continued = self.resumed.swap(false, Ordering::SeqCst);
        if continued || self.suspended {
            self.suspended = true;
            self.resume()?;
            return Ok(!self.suspended);
        }
        Ok(false)
    }

    fn resume(&mut self) -> io::Result<()> {
        if !in_foreground() {
            return Ok(());
        }
        ACTIVE.store(true, Ordering::SeqCst);
        // The shell may have set cooked mode while the process was stopped, unknown to the
        // terminal library: leave its raw mode (restoring what it saved), then enter again.
        let _ = disable_raw_mode();
        enable_raw_mode()?;
        execute!(io::stdout(), EnterAlternateScreen, Hide)?;
        self.screen.clear()?;
        self.suspended = false;
        Ok(())
    }
}

/// Whether the explorer can draw here, and if not why (the caller prints the table then).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScreenSupport {
    Yes,
    /// Output is not a terminal, or no terminal to read keys from (no `/dev/tty`).
    NoTerminal,
    /// `TERM` is unset, empty or `dumb`: no cursor addressing.
    NoCursorAddressing,
}

/// What this terminal allows. Keys may come from `/dev/tty` when standard input is a pipe
/// (`cat run.csv | seqpoint -`): the log is read first, then the keys from the terminal.
pub fn screen_support() -> ScreenSupport {
    use std::io::IsTerminal;
    if !io::stdout().is_terminal() {
        return ScreenSupport::NoTerminal;
    }
    let keys = io::stdin().is_terminal()
        || std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open("/dev/tty")
            .is_ok();
    if !keys {
        return ScreenSupport::NoTerminal;
    }
    support_for_term(std::env::var("TERM").ok().as_deref())
}

/// `TERM` alone: a terminal that cannot move its cursor gets the table instead.
pub fn support_for_term(term: Option<&str>) -> ScreenSupport {
    match term.map(str::trim) {
        None | Some("") | Some("dumb") | Some("unknown") => ScreenSupport::NoCursorAddressing,
        Some(_) => ScreenSupport::Yes,
    }
}

/// Whether this process group owns the terminal (`fg`), so taking it back is the user's wish.
fn in_foreground() -> bool {
    // SAFETY: tcgetpgrp and getpgrp only read the process's and the terminal's state.
    unsafe {
        let owner = libc::tcgetpgrp(libc::STDOUT_FILENO);
        owner == -1 || owner == libc::getpgrp()
    }
}

/// Runs while the explorer has the terminal. A terminal can hang up without SIGHUP reaching
/// the explorer (a shell that does not forward it dies first); reads then fail at once and
/// the terminal library's event wait never returns, so the event loop would spin forever.
/// The watchdog sees the hang-up, gives the loop `GRACE` to end by itself, then ends the
/// process with 128 + the signal. The same backstop covers a signal the loop misses.
fn watch(ending: &Ending) {
    let terminal = terminal_fds();
    let mut noticed: Option<Instant> = None;
    while WATCHING.load(Ordering::SeqCst) {
        if hung_up(&terminal, WATCH_EVERY) {
            ending.hung_up.store(true, Ordering::Relaxed);
            // poll(2) returns at once on a hung-up terminal: keep the loop's pace.
            std::thread::sleep(WATCH_EVERY);
        }
        let Some(signal) = ending.signal() else {
            continue;
        };
        let since = *noticed.get_or_insert_with(Instant::now);
        if since.elapsed() >= GRACE && WATCHING.load(Ordering::SeqCst) {
            restore();
            std::process::exit(128 + signal);
        }
    }
}

/// The explorer's terminal: standard input and output, where they are terminals.
fn terminal_fds() -> Vec<RawFd> {
    [libc::STDIN_FILENO, libc::STDOUT_FILENO]
        .into_iter()
        // SAFETY: isatty only inspects the descriptor.
        .filter(|&fd| unsafe { libc::isatty(fd) } == 1)
        .collect()
}

/// Waits up to `timeout` for the terminal to hang up (or its descriptor to fail).
fn hung_up(fds: &[RawFd], timeout: Duration) -> bool {
    if fds.is_empty() {
        std::thread::sleep(timeout);
        return false;
    }
    // No events asked for: poll(2) reports only hang-ups and errors, which are the point.
    let mut polled: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: 0,
            revents: 0,
        })
        .collect();
    let millis = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
    // SAFETY: `polled` is a valid, exclusively borrowed array of `polled.len()` entries.
    let ready = unsafe { libc::poll(polled.as_mut_ptr(), polled.len() as libc::nfds_t, millis) };
    ready > 0
        && polled
            .iter()
            .any(|p| p.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0)
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        WATCHING.store(false, Ordering::SeqCst);
        restore();
        for id in self.hooks.drain(..) {
            signal_hook::low_level::unregister(id);
        }
    }
}

/// Give the terminal back: cooked mode, the main screen, a visible cursor. Errors are
/// ignored: after a hang-up there may be no terminal left to write to.
pub fn restore() {
    if ACTIVE.swap(false, Ordering::SeqCst) {
        let _ = disable_raw_mode();
        let _ = execute!(io::stdout(), LeaveAlternateScreen, Show);
    }
}

/// Restore before the panic message prints, so it lands on the main screen, readable.
/// A worker's panic is caught by its job and shown as an error; the screen stays.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().name() == Some(WORKER_THREAD) && ACTIVE.load(Ordering::SeqCst)
            {
                return;
            }
            restore();
            previous(info);
        }));
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dumb_and_unset_terminals_cannot_draw() {
        for term in [None, Some(""), Some("dumb"), Some("unknown")] {
            assert_eq!(
                support_for_term(term),
                ScreenSupport::NoCursorAddressing,
                "{term:?}"
            );
        }
        for term in [
            "xterm-256color",
            "screen",
            "vt100",
            "tmux-256color",
            "linux",
        ] {
            assert_eq!(support_for_term(Some(term)), ScreenSupport::Yes, "{term}");
        }
    }
}
