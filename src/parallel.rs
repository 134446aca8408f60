//! Small helpers for splitting work over the machine's cores on rayon's pool: jobs with results
//! in order, results streamed in order with an early stop, an index range cut into one
//! contiguous part per thread, or one slice filled by several threads at once.

use std::marker::PhantomData;
use std::ops::ControlFlow;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rayon::prelude::*;

/// Threads worth using: those of the pool that runs the work (one per core this process may
/// run on, unless `RAYON_NUM_THREADS` says otherwise).
pub fn threads() -> usize {
    rayon::current_num_threads()
}

/// Run `work` over `jobs`, results in job order: on the calling thread when `threads` is 1,
/// else on the pool's threads. Each run of jobs a thread takes keeps one scratch buffer.
/// Stops early and returns `None` as soon as a job does.
pub fn run_jobs<J: Send, R: Send>(
    jobs: Vec<J>,
    threads: usize,
    work: impl Fn(J, &mut Vec<u8>) -> Option<R> + Sync,
) -> Option<Vec<R>> {
    if threads <= 1 || jobs.len() <= 1 {
        let mut buf = Vec::new();
        return jobs.into_iter().map(|j| work(j, &mut buf)).collect();
    }
    jobs.into_par_iter()
        .map_init(Vec::new, |buf, job| work(job, buf))
        .collect()
}

/// Hands `visit` the result of `compute(i)` for each `i` in `0..len`, in order, until it
/// answers `Break`; `Ok(false)` when it did, the first error `compute` returns otherwise.
/// Results are computed on every core: workers take the next index from a counter, the
/// calling thread puts them in order (so `visit` may report progress and stop the work).
/// Called from one of the pool's own threads (work inside work), it computes in order on that
/// thread: waiting there for the other workers could leave the pool with no thread to run them.
pub fn visit_in_order<T: Send, E: Send>(
    len: usize,
    compute: impl Fn(usize) -> Result<T, E> + Sync,
    visit: &mut dyn FnMut(T) -> ControlFlow<()>,
) -> Result<bool, E> {
    let workers = threads().min(len);
    if workers <= 1 || rayon::current_thread_index().is_some() {
        return visit_sequentially(len, compute, visit);
    }
    let next_index = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    rayon::in_place_scope(|scope| {
        let (sender, receiver) = std::sync::mpsc::channel();
        for _ in 0..workers {
            let sender = sender.clone();
            let (next_index, stop, compute) = (&next_index, &stop, &compute);
            scope.spawn(move |_| loop {
                let i = next_index.fetch_add(1, Ordering::Relaxed);
                if i >= len || stop.load(Ordering::Relaxed) {
                    return;
                }
                if sender.send((i, compute(i))).is_err() {
                    return;
                }
            });
        }
        drop(sender);
        // Results arrive in any order; `waiting` holds them until their turn.
        let mut waiting: Vec<Option<T>> = (0..len).map(|_| None).collect();
        let mut next = 0;
        while next < len {
            let (i, result) = receiver
                .recv()
                .expect("a worker sends every index it takes");
            match result {
                Ok(value) => waiting[i] = Some(value),
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            }
            while let Some(value) = waiting.get_mut(next).and_then(Option::take) {
                next += 1;
                if visit(value).is_break() {
                    stop.store(true, Ordering::Relaxed);
                    return Ok(false);
                }
            }
        }
        Ok(true)
    })
}

/// `visit_in_order` on the calling thread alone: for work that takes a lock and, holding it,
/// runs parallel work of its own (k-means' fits). On the pool's threads such work deadlocks:
/// a thread waiting inside the parallel part steals the next index's job, which blocks on the
/// lock its own thread (or the thread it waits for) holds.
pub fn visit_sequentially<T, E>(
    len: usize,
    compute: impl Fn(usize) -> Result<T, E>,
    visit: &mut dyn FnMut(T) -> ControlFlow<()>,
) -> Result<bool, E> {
    for i in 0..len {
        if visit(compute(i)?).is_break() {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `0..n` cut into up to `parts` contiguous ranges of near-equal length (none empty).
pub fn split_range(n: usize, parts: usize) -> Vec<Range<usize>> {
    let parts = parts.clamp(1, n.max(1));
    (0..parts)
        .map(|p| p * n / parts..(p + 1) * n / parts)
        .filter(|r| !r.is_empty())
        .collect()
}

/// `work` on each of `parts` (e.g. ranges of rows) on the pool's threads (on the calling
/// thread when there is only one), results in order.
pub fn map_parts<P: Send, R: Send>(parts: Vec<P>, work: impl Fn(P) -> R + Sync) -> Vec<R> {
    if parts.len() <= 1 {
        return parts.into_iter().map(work).collect();
    }
    parts.into_par_iter().map(&work).collect()
}

/// A slice that several threads fill at once, each writing slots that no other thread reads
/// or writes (e.g. the parts of a counting sort that each thread's own cursors hand out).
pub struct DisjointSlots<'a, T> {
    start: *mut T,
    len: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: sharing it only lets threads write values into the slice it borrows mutably, through
// `write`, whose contract keeps the threads' slots disjoint.
unsafe impl<T: Send> Sync for DisjointSlots<'_, T> {}

impl<'a, T: Copy> DisjointSlots<'a, T> {
    pub fn new(slots: &'a mut [T]) -> Self {
        DisjointSlots {
            start: slots.as_mut_ptr(),
            len: slots.len(),
            _borrow: PhantomData,
        }
    }

    /// Put `value` in `slot` (checked against the length: a wrong slot panics).
    ///
    /// # Safety
    /// No other thread reads or writes `slot` while the `DisjointSlots` lives.
    #[inline]
    pub unsafe fn write(&self, slot: usize, value: T) {
        assert!(slot < self.len, "slot {slot} of {}", self.len);
        // SAFETY: `slot` is in bounds (checked above) of a slice borrowed mutably for 'a, and
        // the caller guarantees no other thread touches it meanwhile; `T: Copy` has nothing to
        // drop in the value overwritten.
        unsafe { self.start.add(slot).write(value) }
    }
}

/// A zero-filled column of `len` numbers for the cores to fill: fresh, untouched pages from
/// calloc, each zeroed by the kernel on first write. Not advised to huge pages: where memory
/// is fragmented, a huge page fault compacts memory first, and on a shared 2-core machine a
/// 10M-row load took 9% longer with the advice than without it.
pub fn zeroed_column<T: Copy + Default>(len: usize) -> Vec<T> {
    vec![T::default(); len]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_columns_are_zero_and_writable_small_or_huge() {
        for len in [0, 7, 3 << 20] {
            let mut column = zeroed_column::<f64>(len);
            assert_eq!(column.len(), len);
            assert!(column.iter().all(|&v| v == 0.0));
            if let Some(last) = column.last_mut() {
                *last = 1.5;
                assert_eq!(column.iter().sum::<f64>(), 1.5);
            }
        }
    }

    #[test]
    fn ranges_cover_everything_once() {
        assert_eq!(split_range(10, 3), vec![0..3, 3..6, 6..10]);
        assert_eq!(split_range(2, 5), vec![0..1, 1..2]);
        assert_eq!(split_range(0, 2), Vec::<Range<usize>>::new());
        let sums = map_parts(split_range(1000, 7), |r| r.sum::<usize>());
        assert_eq!(sums.iter().sum::<usize>(), 999 * 1000 / 2);
    }

    #[test]
    fn threads_fill_their_own_slots_of_one_slice() {
        let mut filled = vec![0u32; 1001];
        let slots = DisjointSlots::new(&mut filled);
        // Part `p` writes the slots `i` with `i % 3 == p`: every slot once, by one thread.
        map_parts(vec![0usize, 1, 2], |part| {
            for i in (part..1001).step_by(3) {
                // SAFETY: no two parts share a residue modulo 3.
                unsafe { slots.write(i, i as u32 * 2) };
            }
        });
        assert_eq!(filled, (0..1001).map(|i| i * 2).collect::<Vec<u32>>());
    }

    #[test]
    #[should_panic(expected = "slot 3 of 3")]
    fn a_slot_past_the_end_panics() {
        let mut filled = vec![0u8; 3];
        let slots = DisjointSlots::new(&mut filled);
        // SAFETY: one thread only.
        unsafe { slots.write(3, 1) };
    }

    #[test]
    fn jobs_keep_their_order_and_stop_on_failure() {
        let out = run_jobs((0..50).collect(), 2, |j: u32, _| Some(j * 2)).unwrap();
        assert_eq!(out, (0..50).map(|j| j * 2).collect::<Vec<_>>());
        assert!(run_jobs((0..50).collect(), 2, |j: u32, _| (j != 30).then_some(j)).is_none());
    }
}
