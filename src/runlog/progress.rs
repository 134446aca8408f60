//! How far a load has got, readable from another thread while it runs: the CLI's progress bar
//! and the TUI's progress line poll it; the loader only adds to two atomic counters.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

#[derive(Debug, Default)]
struct Counters {
    done: AtomicU64,
    total: AtomicU64,
    finished: AtomicBool,
}

/// A shared progress counter for one load. Clones share the same counters.
///
/// ```
/// use seqpoint::runlog::{load_run_with_progress, LoadOptions, LoadProgress};
/// let progress = LoadProgress::new();
/// let watcher = progress.clone();
/// let handle = std::thread::spawn(move || {
///     load_run_with_progress("sample:speech_t1.csv", &LoadOptions::default(), &progress)
/// });
/// // A UI thread would draw `watcher.fraction()` until `watcher.is_finished()`.
/// let log = handle.join().unwrap().unwrap();
/// assert!(watcher.is_finished());
/// assert_eq!(log.len(), 450);
/// ```
#[derive(Debug, Clone, Default)]
pub struct LoadProgress {
    counters: Arc<Counters>,
}

impl LoadProgress {
    pub fn new() -> Self {
        Self::default()
    }

    /// Units (bytes of work) done so far.
    pub fn done(&self) -> u64 {
        self.counters.done.load(Ordering::Relaxed)
    }

    /// Units of work expected in all; 0 until the loader knows.
    pub fn total(&self) -> u64 {
        self.counters.total.load(Ordering::Relaxed)
    }

    /// Share done, 0 to 1 (0 while the total is unknown).
    pub fn fraction(&self) -> f64 {
        let total = self.total();
        if total == 0 {
            0.0
        } else {
            (self.done() as f64 / total as f64).min(1.0)
        }
    }

    /// True once the load has returned (successfully or not).
    pub fn is_finished(&self) -> bool {
        self.counters.finished.load(Ordering::Acquire)
    }

    /// Add work to the total: each file as it is found, and any second pass it needs.
    pub(crate) fn add_total(&self, more: u64) {
        self.counters.total.fetch_add(more, Ordering::Relaxed);
    }

    pub(crate) fn advance(&self, units: u64) {
        self.counters.done.fetch_add(units, Ordering::Relaxed);
    }

    pub(crate) fn finish(&self) {
        let total = self.total();
        self.counters.done.store(total, Ordering::Relaxed);
        self.counters.finished.store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fraction_follows_the_counters() {
        let p = LoadProgress::new();
        assert_eq!(p.fraction(), 0.0);
        p.add_total(200);
        p.clone().advance(50);
        assert_eq!(p.fraction(), 0.25);
        p.add_total(200);
        assert_eq!(p.fraction(), 0.125);
        assert!(!p.is_finished());
        p.finish();
        assert!(p.is_finished());
        assert_eq!(p.fraction(), 1.0);
    }
}
