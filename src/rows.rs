//! Some rows of a run log, held as ascending, disjoint ranges: the whole log, what `--exclude`
//! keeps, one stratum (a phase, an epoch). A list of every row would cost 4 bytes a row (40 MB
//! at 10M rows, as much as the row index grouping builds); the ranges of a run cut by a few
//! exclusions and phases cost next to nothing.

use std::ops::Range;

/// Ascending, disjoint, non-empty row ranges read as one list of rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowRanges {
    ranges: Vec<Range<usize>>,
    /// Rows in the ranges before each.
    before: Vec<usize>,
}

impl RowRanges {
    /// The rows of `ranges`, which must be ascending and disjoint; empty ones are dropped and
    /// touching ones joined.
    pub fn new(ranges: impl IntoIterator<Item = Range<usize>>) -> Self {
        let mut joined: Vec<Range<usize>> = Vec::new();
        for range in ranges.into_iter().filter(|r| !r.is_empty()) {
            match joined.last_mut() {
                Some(last) if last.end == range.start => last.end = range.end,
                last => {
                    assert!(
                        last.is_none_or(|last| last.end < range.start),
                        "row ranges must ascend without overlapping"
                    );
                    joined.push(range);
                }
            }
        }
        let before = joined
            .iter()
            .scan(0, |rows, range| {
                let before = *rows;
                *rows += range.len();
                Some(before)
            })
            .collect();
        RowRanges {
            ranges: joined,
            before,
        }
    }

    /// Every row of a log of `rows` rows.
    pub fn all(rows: usize) -> Self {
        Self::span(0..rows)
    }

    /// The rows of one range.
    pub fn span(rows: Range<usize>) -> Self {
        Self::new(std::iter::once(rows))
    }

    /// The given rows, which must be ascending (runs of consecutive rows become one range).
    pub fn listed(rows: &[u32]) -> Self {
        Self::new(rows.iter().map(|&r| r as usize..r as usize + 1))
    }

    pub fn len(&self) -> usize {
        match (self.before.last(), self.ranges.last()) {
            (Some(before), Some(last)) => before + last.len(),
            _ => 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    pub fn ranges(&self) -> &[Range<usize>] {
        &self.ranges
    }

    /// The `i`-th row (from 0).
    pub fn get(&self, i: usize) -> usize {
        let range = self.before.partition_point(|&before| before <= i) - 1;
        self.ranges[range].start + (i - self.before[range])
    }

    /// Every row, ascending.
    pub fn iter(&self) -> impl Iterator<Item = usize> + Clone + '_ {
        self.ranges.iter().flat_map(Range::clone)
    }

    /// The rows from row `start` of the log on.
    pub fn starting_at(&self, start: usize) -> RowRanges {
        self.intersection(&RowRanges::span(start..usize::MAX))
    }

    /// The rows in both.
    pub fn intersection(&self, other: &RowRanges) -> RowRanges {
        let (mut mine, mut theirs) = (
            self.ranges.iter().peekable(),
            other.ranges.iter().peekable(),
        );
        let mut both = Vec::new();
        while let (Some(a), Some(b)) = (mine.peek(), theirs.peek()) {
            both.push(a.start.max(b.start)..a.end.min(b.end));
            // The range that ends first can meet no later range of the other.
            if a.end <= b.end {
                mine.next();
            } else {
                theirs.next();
            }
        }
        RowRanges::new(both)
    }

    /// The rows at positions `positions` of the list (the `i`-th to the `j`-th row), as row
    /// ranges, each with the position of its first row: a pass over part of the rows reads the
    /// log's columns a slice at a time.
    pub fn slices(
        &self,
        positions: Range<usize>,
    ) -> impl Iterator<Item = (usize, Range<usize>)> + '_ {
        let first = self
            .before
            .partition_point(|&before| before <= positions.start);
        let ranges = self
            .ranges
            .iter()
            .zip(&self.before)
            .skip(first.saturating_sub(1));
        ranges
            .take_while(move |&(_, &before)| before < positions.end)
            .filter_map(move |(range, &before)| {
                let from = positions.start.max(before);
                let to = positions.end.min(before + range.len());
                let start = range.start + (from - before);
                (from < to).then(|| (from, start..start + (to - from)))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_join_and_read_as_a_list() {
        let rows = RowRanges::new([2..4, 4..5, 5..5, 8..10]);
        assert_eq!(rows.ranges(), [2..5, 8..10]);
        assert_eq!(rows.iter().collect::<Vec<_>>(), [2, 3, 4, 8, 9]);
        assert_eq!(rows.len(), 5);
        assert_eq!(
            (rows.get(0), rows.get(2), rows.get(3), rows.get(4)),
            (2, 4, 8, 9)
        );
        assert_eq!(RowRanges::listed(&[2, 3, 4, 8, 9]), rows);
        assert!(RowRanges::span(3..3).is_empty());
        assert_eq!(RowRanges::all(3).iter().collect::<Vec<_>>(), [0, 1, 2]);
    }

    #[test]
    #[should_panic(expected = "ascend")]
    fn overlapping_ranges_are_refused() {
        RowRanges::new([2..5, 4..6]);
    }

    proptest::proptest! {
        /// Intersections, `starting_at` and slices equal what the listed rows give.
        #[test]
        fn set_operations_equal_those_on_the_listed_rows(
            a in proptest::collection::vec(proptest::bool::ANY, 0..60),
            b in proptest::collection::vec(proptest::bool::ANY, 0..60),
            start in 0usize..70,
            from in 0usize..70,
            span in 0usize..70,
        ) {
            let list = |mask: &[bool]| -> Vec<u32> {
                (0..mask.len() as u32).filter(|&r| mask[r as usize]).collect()
            };
            let (list_a, list_b) = (list(&a), list(&b));
            let (rows_a, rows_b) = (RowRanges::listed(&list_a), RowRanges::listed(&list_b));
            let as_list = |rows: &RowRanges| rows.iter().map(|r| r as u32).collect::<Vec<_>>();
            proptest::prop_assert_eq!(as_list(&rows_a), list_a.clone());
            let both: Vec<u32> = list_a.iter().copied().filter(|r| list_b.contains(r)).collect();
            proptest::prop_assert_eq!(as_list(&rows_a.intersection(&rows_b)), both);
            let later: Vec<u32> = list_a.iter().copied().filter(|&r| r as usize >= start).collect();
            proptest::prop_assert_eq!(as_list(&rows_a.starting_at(start)), later);
            for (i, &row) in list_a.iter().enumerate() {
                proptest::prop_assert_eq!(rows_a.get(i), row as usize);
            }
            // Slices of positions from..to: the listed rows there, each slice's first position
            // right.
            let to = (from + span).min(list_a.len());
            let mut sliced = Vec::new();
            for (position, range) in rows_a.slices(from..to) {
                proptest::prop_assert!(!range.is_empty());
                proptest::prop_assert_eq!(list_a[position] as usize, range.start);
                proptest::prop_assert_eq!(position, from + sliced.len());
                sliced.extend(range.map(|r| r as u32));
            }
            let want = if from < to { list_a[from..to].to_vec() } else { Vec::new() };
            proptest::prop_assert_eq!(sliced, want);
        }
    }
}
