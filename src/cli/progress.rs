//! Progress bars on stderr while a large run log loads and while a slow selection runs.
//! indicatif draws nothing when stderr is not a terminal, and quick work shows no bar.

use std::io::IsTerminal;
use std::ops::ControlFlow;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use seqpoint::runlog::{load_run_with_progress, LoadProgress};
use seqpoint::select::{answer_with, Answer, Answering, SelectError, SelectRequest, CHEAPEST_PLAN};
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
    bar.set_message(seqpoint::text::shown::shown_path(path));
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
/// Off a terminal, a long selection writes a plain status line after this long, then again
/// at each stage change or this often.
const STATUS_LINE_AFTER: Duration = Duration::from_secs(2);
/// Overrides `STATUS_LINE_AFTER`, in milliseconds: how the tests see the status lines of a
/// selection that takes less than two seconds.
const STATUS_LINE_AFTER_VAR: &str = "SEQPOINT_STATUS_AFTER_MS";
const STATUS_LINE_EVERY: Duration = Duration::from_secs(10);

/// What the selection is doing; a stage whose total is not known yet shows no count.
fn stage_text(label: &str, done: usize, total: usize) -> String {
    let label = if label.is_empty() { "selecting" } else { label };
    if total == 0 {
        label.to_string()
    } else {
        format!("{label} {done}/{total}")
    }
}

/// `answer` with progress on stderr once it has taken a moment (`with_bar`): the DP table
/// over many key groups, the error curve, the choice of K, or the plan of each K.
pub fn answer_with_bar(log: &RunLog, request: &SelectRequest) -> Result<Answer, SelectError> {
    let answered = with_bar(|report| {
        let mut told = |stage, done, total| {
            // The cheapest plan's search is one stage here, whatever it is doing inside.
            let stage = if stage == CHEAPEST_PLAN {
                PLANNING
            } else {
                stage
            };
            report(stage, done, total);
            ControlFlow::Continue(())
        };
        let answering = Answering {
            progress: Some(&mut told),
            ..Answering::default()
        };
        answer_with(log, request, answering)
    })?;
    Ok(answered.expect("never stopped"))
}

/// What the cheapest plan's search is doing, for the bar.
const PLANNING: &str = "planning";

/// Runs `job` on its own thread and shows its progress on stderr once it has taken a moment:
/// k-means fits and the exact DP over many key groups can take seconds. On a terminal a bar
/// (a spinner while a stage's total is unknown); otherwise a plain status line now and then.
fn with_bar<T: Send>(
    job: impl FnOnce(&mut dyn FnMut(&'static str, usize, usize)) -> T + Send,
) -> T {
    let stage: Mutex<(&'static str, usize, usize)> = Mutex::new(("", 0, 0));
    let terminal = std::io::stderr().is_terminal();
    std::thread::scope(|scope| {
        let selecting = scope.spawn(|| {
            job(&mut |label, done, total| {
                if let Ok(mut stage) = stage.lock() {
                    *stage = (label, done, total);
                }
            })
        });
        let started = Instant::now();
        let first_line_after = std::env::var(STATUS_LINE_AFTER_VAR)
            .ok()
            .and_then(|ms| ms.parse().ok())
            .map_or(STATUS_LINE_AFTER, Duration::from_millis);
        let mut bar: Option<(ProgressBar, bool)> = None;
        let mut last_line: Option<(Instant, &'static str)> = None;
        while !selecting.is_finished() {
            std::thread::sleep(Duration::from_millis(50));
            let Ok((label, done, total)) = stage.lock().map(|s| *s) else {
                continue;
            };
            if !terminal {
                let due = match last_line {
                    None => started.elapsed() >= first_line_after,
                    Some((at, was)) => was != label || at.elapsed() >= STATUS_LINE_EVERY,
                };
                if due {
                    let secs = started.elapsed().as_secs();
                    eprintln!("seqpoint: {} ({secs}s)", stage_text(label, done, total));
                    last_line = Some((Instant::now(), label));
                }
                continue;
            }
            if bar.is_none() && started.elapsed() >= SELECT_BAR_AFTER {
                bar = Some((
                    ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
                    false,
                ));
            }
            if let Some((bar, counted)) = &mut bar {
                // The style follows whether the stage's total is known: a spinner, not `0/0`.
                if bar.length().is_none() || *counted != (total > 0) {
                    *counted = total > 0;
                    let template = if *counted {
                        "{msg:>14} [{bar:30}] {pos}/{len} ({elapsed})"
                    } else {
                        "{msg:>14} {spinner} ({elapsed})"
                    };
                    if let Ok(style) = ProgressStyle::with_template(template) {
                        bar.set_style(style.progress_chars("=> "));
                    }
                }
                bar.set_message(stage_text(label, 0, 0));
                bar.set_length(total as u64);
                bar.set_position(done as u64);
                bar.tick();
            }
        }
        if let Some((bar, _)) = bar {
            bar.finish_and_clear();
        }
        if last_line.is_some() {
            eprintln!(
                "seqpoint: selection done ({}s)",
                started.elapsed().as_secs()
            );
        }
        selecting
            .join()
            .expect("the selection thread does not panic")
    })
}

#[cfg(test)]
mod tests {
    use super::stage_text;

    #[test]
    fn a_stage_without_a_total_shows_no_count() {
        assert_eq!(stage_text("", 0, 0), "selecting");
        assert_eq!(stage_text("error curve", 0, 0), "error curve");
        assert_eq!(stage_text("preparing bins", 3, 64), "preparing bins 3/64");
    }
}
