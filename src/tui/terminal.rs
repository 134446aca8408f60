//! The terminal while the explorer runs: raw mode and the alternate screen on entry, and the
//! terminal given back on quit, on error (guard drop), on panic (hook) and on SIGTERM/SIGHUP.

use std::io::{self, Stdout};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Once};

use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::cursor::{Hide, Show};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use ratatui::Terminal;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::SigId;

pub type Screen = Terminal<CrosstermBackend<Stdout>>;

/// Worker threads are named so the panic hook leaves the screen to the UI thread.
pub const WORKER_THREAD: &str = "seqpoint-worker";

/// Set while the terminal is in the explorer's mode, so it is restored exactly once.
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Signals that end the explorer: the terminal's own hang-up (a dropped SSH session), a
/// polite kill, and an interrupt sent from outside (Ctrl-C itself arrives as a key).
const ENDING_SIGNALS: [i32; 3] = [SIGTERM, SIGHUP, SIGINT];

/// The terminal in the explorer's mode; dropping it gives the terminal back.
pub struct TerminalGuard {
    pub screen: Screen,
    signals: Vec<(i32, Arc<AtomicBool>)>,
    hooks: Vec<SigId>,
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
        let screen = (|| {
            ACTIVE.store(true, Ordering::SeqCst);
            enable_raw_mode()?;
            execute!(io::stdout(), EnterAlternateScreen, Hide)?;
            Terminal::new(CrosstermBackend::new(io::stdout()))
        })();
        match screen {
            Ok(screen) => Ok(TerminalGuard {
                screen,
                signals,
                hooks,
            }),
            Err(e) => {
                restore();
                for id in hooks {
                    signal_hook::low_level::unregister(id);
                }
                Err(e)
            }
        }
    }

    /// The first ending signal received, if any.
    pub fn signal(&self) -> Option<i32> {
        self.signals
            .iter()
            .find(|(_, flag)| flag.load(Ordering::Relaxed))
            .map(|(signal, _)| *signal)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
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
