//! Progress bars on stderr while a large run log loads and while a slow selection runs.
//! indicatif draws nothing when stderr is not a terminal, and quick work shows no bar.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use seqpoint::runlog::{load_run_with_progress, LoadProgress};
use seqpoint::select::{run_selection_with_progress, SelectError};
use seqpoint::{LoadError, LoadOptions, RunLog, SelectOptions, Selection};

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
    bar.set_message(seqpoint::output::shown::shown_path(path));
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

/// Selections that finish sooner than this show no bar (most do: key groups are few).
const SELECT_BAR_AFTER: Duration = Duration::from_millis(500);

/// `run_selection` with a progress bar on stderr once it has taken a moment: k-means fits and
/// the exact DP over many thousand key groups can take seconds.
pub fn select_with_bar(log: &RunLog, options: &SelectOptions) -> Result<Selection, SelectError> {
    let stage: Mutex<(&'static str, usize, usize)> = Mutex::new(("", 0, 0));
    std::thread::scope(|scope| {
        let selecting = scope.spawn(|| {
            run_selection_with_progress(log, options, &mut |label, done, total| {
                if let Ok(mut stage) = stage.lock() {
                    *stage = (label, done, total);
                }
            })
        });
        let started = Instant::now();
        let mut bar: Option<ProgressBar> = None;
        while !selecting.is_finished() {
            std::thread::sleep(Duration::from_millis(50));
            if bar.is_none()
                && started.elapsed() >= SELECT_BAR_AFTER
                && std::io::stderr().is_terminal()
            {
                let new = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
                if let Ok(style) =
                    ProgressStyle::with_template("{msg:>14} [{bar:30}] {pos}/{len} ({elapsed})")
                {
                    new.set_style(style.progress_chars("=> "));
                }
                bar = Some(new);
            }
            if let (Some(bar), Ok(stage)) = (&bar, stage.lock()) {
                let (label, done, total) = *stage;
                bar.set_message(label);
                bar.set_length(total as u64);
                bar.set_position(done as u64);
            }
        }
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        selecting
            .join()
            .expect("the selection thread does not panic")
    })
}
