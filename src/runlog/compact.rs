//! Compact per-row columns: iteration numbers kept as a formula when evenly spaced (the usual
//! 0..N-1), epochs kept as runs (they change a few times per run), so 10M rows cost no memory here.

use std::ops::Index;

/// The iteration number of every row, ascending.
#[derive(Debug, Clone)]
pub enum Iterations {
    /// Row `r` is iteration `start + r * step`.
    Spaced { start: u64, step: u64, len: usize },
    /// Any other ascending sequence.
    Listed(Vec<u64>),
}

impl Default for Iterations {
    fn default() -> Self {
        Iterations::Spaced {
            start: 0,
            step: 1,
            len: 0,
        }
    }
}

impl Iterations {
    /// `0..len`: what a log without an iteration column gets.
    pub fn dense(len: usize) -> Self {
        Iterations::Spaced {
            start: 0,
            step: 1,
            len,
        }
    }

    /// Store a list compactly when it is evenly spaced.
    pub fn from_vec(values: Vec<u64>) -> Self {
        match values.as_slice() {
            [] => Iterations::dense(0),
            [only] => Iterations::Spaced {
                start: *only,
                step: 1,
                len: 1,
            },
            [first, second, ..] => {
                let step = second.wrapping_sub(*first);
                let spaced = step > 0
                    && values
                        .windows(2)
                        .all(|w| w[1] > w[0] && w[1] - w[0] == step);
                if spaced {
                    Iterations::Spaced {
                        start: *first,
                        step,
                        len: values.len(),
                    }
                } else {
                    Iterations::Listed(values)
                }
            }
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Iterations::Spaced { len, .. } => *len,
            Iterations::Listed(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The iteration of row `row` (panics when out of range, as slice indexing does).
    pub fn get(&self, row: usize) -> u64 {
        match self {
            Iterations::Spaced { start, step, len } => {
                assert!(row < *len, "row {row} out of range for {len} iterations");
                start + row as u64 * step
            }
            Iterations::Listed(v) => v[row],
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.len()).map(move |r| self.get(r))
    }

    pub fn to_vec(&self) -> Vec<u64> {
        self.iter().collect()
    }

    /// The row holding `iteration`, if any (binary search: rows are ascending).
    pub fn row_of(&self, iteration: u64) -> Option<usize> {
        match self {
            Iterations::Spaced { start, step, len } => {
                let offset = iteration.checked_sub(*start)?;
                (offset % step == 0 && offset / step < *len as u64)
                    .then(|| (offset / step) as usize)
            }
            Iterations::Listed(v) => v.binary_search(&iteration).ok(),
        }
    }

    /// The first row whose iteration is `iteration` or later (`len()` when none is): a binary
    /// search, rows being ascending.
    pub fn first_row_from(&self, iteration: u64) -> usize {
        let (mut low, mut high) = (0, self.len());
        while low < high {
            let middle = low + (high - low) / 2;
            if self.get(middle) < iteration {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        low
    }

    /// Bytes of memory the column holds (for benchmarks).
    pub fn heap_bytes(&self) -> usize {
        match self {
            Iterations::Spaced { .. } => 0,
            Iterations::Listed(v) => v.capacity() * 8,
        }
    }
}

impl PartialEq for Iterations {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (
                Iterations::Spaced { start, step, len },
                Iterations::Spaced {
                    start: s2,
                    step: t2,
                    len: l2,
                },
            ) if len == l2 => *len == 0 || (start == s2 && (*len == 1 || step == t2)),
            _ => self.len() == other.len() && self.iter().eq(other.iter()),
        }
    }
}

/// The epoch of every row, as runs of equal values.
#[derive(Debug, Clone, Default)]
pub struct Epochs {
    /// `(first row, epoch)` of each run, rows ascending; a run lasts until the next one starts.
    runs: Vec<(u32, u32)>,
    len: usize,
}

impl Epochs {
    pub fn from_vec(values: &[u32]) -> Self {
        let mut epochs = Epochs::default();
        for &e in values {
            epochs.push_run(e, 1);
        }
        epochs
    }

    /// Append `count` rows of epoch `epoch`.
    pub fn push_run(&mut self, epoch: u32, count: usize) {
        if count == 0 {
            return;
        }
        if self.runs.last().is_none_or(|&(_, e)| e != epoch) {
            self.runs.push((self.len as u32, epoch));
        }
        self.len += count;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many runs (changes of epoch + 1).
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    pub fn get(&self, row: usize) -> u32 {
        self[row]
    }

    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.runs
            .iter()
            .enumerate()
            .flat_map(move |(i, &(start, e))| {
                let end = self.runs.get(i + 1).map_or(self.len, |r| r.0 as usize);
                std::iter::repeat_n(e, end - start as usize)
            })
    }

    /// Each run as `(rows, epoch)`: cheap whole-column passes (strata, checks).
    pub fn run_ranges(&self) -> impl Iterator<Item = (std::ops::Range<usize>, u32)> + '_ {
        self.runs.iter().enumerate().map(move |(i, &(start, e))| {
            let end = self.runs.get(i + 1).map_or(self.len, |r| r.0 as usize);
            (start as usize..end, e)
        })
    }

    pub fn to_vec(&self) -> Vec<u32> {
        self.iter().collect()
    }

    pub fn max(&self) -> Option<u32> {
        self.runs.iter().map(|r| r.1).max()
    }

    /// Bytes of memory the column holds (for benchmarks).
    pub fn heap_bytes(&self) -> usize {
        self.runs.capacity() * 8
    }
}

impl Index<usize> for Epochs {
    type Output = u32;

    fn index(&self, row: usize) -> &u32 {
        assert!(
            row < self.len,
            "row {row} out of range for {} epochs",
            self.len
        );
        let run = self.runs.partition_point(|r| r.0 as usize <= row) - 1;
        &self.runs[run].1
    }
}

impl PartialEq for Epochs {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.runs == other.runs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn evenly_spaced_iterations_store_no_list() {
        let it = Iterations::from_vec(vec![10, 20, 30]);
        assert_eq!(
            it,
            Iterations::Spaced {
                start: 10,
                step: 10,
                len: 3
            }
        );
        assert_eq!(it.get(2), 30);
        assert_eq!(it.row_of(20), Some(1));
        assert_eq!(it.row_of(25), None);
        assert_eq!(it.row_of(40), None);
        let listed = Iterations::from_vec(vec![0, 1, 5]);
        assert!(matches!(listed, Iterations::Listed(_)));
        assert_eq!(listed.row_of(5), Some(2));
        assert_eq!(Iterations::dense(3), Iterations::Listed(vec![0, 1, 2]));
    }

    #[test]
    fn epochs_by_hand() {
        let e = Epochs::from_vec(&[0, 0, 1, 1, 1, 0]);
        assert_eq!(e.runs(), 3);
        assert_eq!((e[0], e[1], e[2], e[4], e[5]), (0, 0, 1, 1, 0));
        assert_eq!(e.max(), Some(1));
        let ranges: Vec<_> = e.run_ranges().collect();
        assert_eq!(ranges, vec![(0..2, 0), (2..5, 1), (5..6, 0)]);
    }

    proptest! {
        #[test]
        fn round_trips(values in prop::collection::vec(0u32..4, 0..60), gaps in prop::collection::vec(1u64..3, 0..60)) {
            let e = Epochs::from_vec(&values);
            prop_assert_eq!(e.to_vec(), values.clone());
            for (r, &v) in values.iter().enumerate() {
                prop_assert_eq!(e[r], v);
            }
            let mut acc = 0;
            let its: Vec<u64> = gaps.iter().map(|g| { acc += g; acc }).collect();
            let compact = Iterations::from_vec(its.clone());
            prop_assert_eq!(compact.to_vec(), its.clone());
            for (r, &it) in its.iter().enumerate() {
                prop_assert_eq!(compact.row_of(it), Some(r));
            }
        }
    }
}
