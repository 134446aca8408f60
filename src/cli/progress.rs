//! A progress bar on stderr while a large run log loads. indicatif draws nothing when stderr
//! is not a terminal, and small files load too fast to need one.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use seqpoint::runlog::{load_run_with_progress, LoadProgress};
use seqpoint::{LoadError, LoadOptions, RunLog};

/// Inputs smaller than this load in well under a second: no bar.
const BAR_FROM_BYTES: u64 = 32 << 20;

pub fn load_with_bar(path: &str, options: &LoadOptions) -> Result<RunLog, LoadError> {
    let progress = LoadProgress::new();
    let bytes: u64 = std::iter::once(path)
        .chain(options.compare.as_deref())
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    if bytes < BAR_FROM_BYTES || !std::io::stderr().is_terminal() {
        return load_run_with_progress(path, options, &progress);
    }
    let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "loading {msg} [{bar:30}] {percent:>3}% {binary_bytes_per_sec} ({elapsed})",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(path.to_string());
    std::thread::scope(|scope| {
        let loading = scope.spawn(|| load_run_with_progress(path, options, &progress));
        while !loading.is_finished() {
            // Progress counts two units per input byte (two passes over the file).
            bar.set_length(progress.total() / 2);
            bar.set_position(progress.done() / 2);
            std::thread::sleep(Duration::from_millis(50));
        }
        bar.finish_and_clear();
        loading.join().expect("the loading thread does not panic")
    })
}
