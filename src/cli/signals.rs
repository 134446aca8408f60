//! SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGPIPE while a command writes a file: the temporary
//! file is removed
//! before the process ends the way the signal would have ended it, so an interrupted export
//! leaves neither a partial output nor a stray `.seqpoint-XXXXXX` file.
//!
//! Two paths, whichever comes first: a thread that waits for the signal (the main thread may
//! be busy for minutes choosing SeqPoints), and a flag set inside the signal handler, which
//! keeps the main thread from renaming a file into place after the signal and makes it end
//! by the signal too when it gets there first.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use signal_hook::consts::{SIGHUP, SIGINT, SIGPIPE, SIGQUIT, SIGTERM};
use signal_hook::iterator::Signals;

use seqpoint::output::atomic::{remove_pending_temporaries, stop_writes_when_set};

/// Every signal whose default action ends the process and that can be caught (SIGKILL cannot:
/// a temporary file it leaves has the `.seqpoint-` prefix and is never taken for an output).
const HANDLED: [i32; 5] = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE];

/// The signal received, 0 for none.
static RECEIVED: OnceLock<Arc<AtomicUsize>> = OnceLock::new();

/// Handle the three signals for the rest of the process (not for the explorer, which restores
/// the terminal on them itself).
pub fn remove_temporaries_on_signals() -> anyhow::Result<()> {
    let received = RECEIVED.get_or_init(|| Arc::new(AtomicUsize::new(0)));
    for signal in HANDLED {
        signal_hook::flag::register_usize(signal, Arc::clone(received), signal as usize)?;
    }
    stop_writes_when_set(Arc::clone(received));
    let mut signals = Signals::new(HANDLED)?;
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            end_by(signal);
        }
    });
    Ok(())
}

/// The signal received so far, if any.
pub fn received() -> Option<i32> {
    let signal = RECEIVED.get()?.load(Ordering::SeqCst);
    (signal != 0).then_some(signal as i32)
}

/// Remove every temporary file, then end as the signal's default action would, so the parent
/// sees the signal (an interactive shell prints nothing for SIGINT, and `$?` is 128 + N).
pub fn end_by(signal: i32) -> ! {
    // Held until the end: no temporary file is created or renamed after this.
    let _pending = remove_pending_temporaries();
    let _ = signal_hook::low_level::emulate_default_handler(signal);
    std::process::exit(128 + signal);
}
