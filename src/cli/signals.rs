//! SIGINT, SIGTERM and SIGHUP while a command writes a file: the temporary file is removed
//! before the process ends the way the signal would have ended it, so an interrupted export
//! leaves neither a partial output nor a stray `.seqpoint-XXXXXX` file.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use seqpoint::output::atomic::remove_pending_temporaries;

/// Handle the three signals on a thread of their own for the rest of the process (not for the
/// explorer, which restores the terminal on them itself).
pub fn remove_temporaries_on_signals() -> anyhow::Result<()> {
    let mut signals = Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            // Held until the end: no temporary file is created or renamed after this.
            let _pending = remove_pending_temporaries();
            // End as the signal's default action would, so the parent sees the signal.
            let _ = signal_hook::low_level::emulate_default_handler(signal);
            std::process::exit(128 + signal);
        }
    });
    Ok(())
}
