//! Iterations left out of a selection (`--exclude A-B`): inclusive ranges in the run's own
//! iteration numbering, such as a window slowed by another process. Excluded iterations are
//! removed before grouping: they are in no key group, no total and no pick. This module owns
//! the parsing ("0-420"), the merging, the checks against a run and the row filter (the kept
//! rows for `select`, the kept log for `report`, the kept samples for `project`).

use crate::options::{Surface, EXCLUDE};
use std::fmt;
use std::ops::Range;
use std::str::FromStr;

use super::SelectError;
use crate::rows::RowRanges;
use crate::runlog::measured::Measurements;
use crate::runlog::RunLog;

/// One inclusive range of iteration numbers, `first-last`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IterationRange {
    pub first: u64,
    pub last: u64,
}

impl IterationRange {
    pub fn contains(&self, iteration: u64) -> bool {
        (self.first..=self.last).contains(&iteration)
    }

    /// How many iteration numbers it spans.
    pub fn len(&self) -> u64 {
        self.last - self.first + 1
    }

    pub fn is_empty(&self) -> bool {
        false
    }
}

impl fmt::Display for IterationRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.first, self.last)
    }
}

/// Parse "A-B" (inclusive, A <= B) or a single iteration "A", as `--exclude` and the
/// explorer take them.
pub fn parse_iteration_range(text: &str) -> Result<IterationRange, String> {
    let text = text.trim();
    let number = |part: &str| -> Result<u64, String> {
        part.trim().parse::<u64>().map_err(|_| {
            format!(
                "cannot read {text:?} as an iteration range: expected A-B with A and B \
                 iteration numbers (whole numbers from 0), e.g. 0-420"
            )
        })
    };
    let (first, last) = match text.split_once('-') {
        Some((a, b)) => (number(a)?, number(b)?),
        None => {
            let n = number(text)?;
            (n, n)
        }
    };
    if first > last {
        return Err(format!(
            "the iteration range {text:?} is reversed: write the first iteration first \
             ({last}-{first})"
        ));
    }
    Ok(IterationRange { first, last })
}

impl FromStr for IterationRange {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_iteration_range(s)
    }
}

/// The excluded ranges of a selection, sorted and merged (overlapping or touching ranges
/// become one). Empty means nothing is excluded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Exclusion {
    ranges: Vec<IterationRange>,
}

impl Exclusion {
    pub fn new(ranges: impl IntoIterator<Item = IterationRange>) -> Exclusion {
        let mut ranges: Vec<IterationRange> = ranges.into_iter().collect();
        ranges.sort_unstable();
        let mut merged: Vec<IterationRange> = Vec::with_capacity(ranges.len());
        for r in ranges {
            match merged.last_mut() {
                Some(last) if r.first <= last.last.saturating_add(1) => {
                    last.last = last.last.max(r.last)
                }
                _ => merged.push(r),
            }
        }
        Exclusion { ranges: merged }
    }

    /// This exclusion and one more range, merged (what an explorer command adds).
    pub fn with(&self, range: IterationRange) -> Exclusion {
        Exclusion::new(self.ranges.iter().copied().chain([range]))
    }

    /// Parse each text as `parse_iteration_range` does, then merge.
    pub fn parse<S: AsRef<str>>(texts: &[S]) -> Result<Exclusion, String> {
        let ranges: Result<Vec<_>, _> = texts
            .iter()
            .map(|t| parse_iteration_range(t.as_ref()))
            .collect();
        Ok(Exclusion::new(ranges?))
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The merged ranges, ascending.
    pub fn ranges(&self) -> &[IterationRange] {
        &self.ranges
    }

    /// The merged ranges as "A-B" texts, as the JSON records them and the command repeats them.
    pub fn texts(&self) -> Vec<String> {
        self.ranges.iter().map(ToString::to_string).collect()
    }

    pub fn contains(&self, iteration: u64) -> bool {
        let at = self.ranges.partition_point(|r| r.last < iteration);
        self.ranges.get(at).is_some_and(|r| r.contains(iteration))
    }

    /// Whether row `row` of `log` is excluded.
    pub fn excludes_row(&self, log: &RunLog, row: usize) -> bool {
        !self.is_empty() && self.contains(log.iterations.get(row))
    }

    /// How many rows of `log` are excluded (a few binary searches, not a pass over the rows).
    pub fn excluded_rows(&self, log: &RunLog) -> u64 {
        self.excluded_row_ranges(log)
            .iter()
            .map(|rows| rows.len() as u64)
            .sum()
    }

    /// The rows of `log` excluded, as ascending, disjoint, non-empty ranges of rows: rows are
    /// in ascending iteration order, so each excluded range of iterations is a run of rows.
    pub fn excluded_row_ranges(&self, log: &RunLog) -> Vec<Range<usize>> {
        let iterations = &log.iterations;
        self.ranges
            .iter()
            .map(|r| {
                let end = match r.last.checked_add(1) {
                    Some(after) => iterations.first_row_from(after),
                    None => log.len(),
                };
                iterations.first_row_from(r.first)..end
            })
            .filter(|rows| !rows.is_empty())
            .collect()
    }

    /// The rows of `log` kept (the `kept_rows` of the whole log without listing each row).
    pub fn kept_row_ranges(&self, log: &RunLog) -> RowRanges {
        let mut kept = Vec::new();
        let mut start = 0;
        for excluded in self.excluded_row_ranges(log) {
            kept.push(start..excluded.start);
            start = excluded.end;
        }
        kept.push(start..log.len());
        RowRanges::new(kept)
    }

    /// Refuse ranges that reach outside the run's iterations, and an exclusion that leaves
    /// nothing, naming the range and the run's first and last iteration.
    pub fn check(&self, log: &RunLog) -> Result<(), SelectError> {
        if self.is_empty() {
            return Ok(());
        }
        let (lowest, highest) = (0..log.len())
            .map(|r| log.iterations.get(r))
            .fold((u64::MAX, 0), |(lo, hi), i| (lo.min(i), hi.max(i)));
        if log.is_empty() {
            return Err(EXCLUDE
                .error(&self.texts().join(","), "the run has no iterations".into())
                .into());
        }
        for r in &self.ranges {
            if r.first < lowest || r.last > highest {
                return Err(EXCLUDE
                    .error(
                        &r.to_string(),
                        format!("reaches outside the run: its iterations are {lowest}-{highest}"),
                    )
                    .into());
            }
        }
        if self.excluded_rows(log) == log.len() as u64 {
            // Every range together leaves nothing: named as typed, one option per range.
            let ranges = self
                .texts()
                .join(&format!(" {} ", EXCLUDE.typed(Surface::CommandLine, "")));
            return Err(EXCLUDE
                .error(
                    &ranges,
                    format!("leaves no iteration of the run ({lowest}-{highest})"),
                )
                .into());
        }
        Ok(())
    }

    /// The rows of `log` kept, listed one by one, ascending.
    pub fn kept_rows(&self, log: &RunLog) -> Vec<u32> {
        self.kept_row_ranges(log).iter().map(|r| r as u32).collect()
    }

    /// The run less the excluded iterations, as a log of its own (what `report --exclude`
    /// checks): `kept_rows` through `RunLog::subset`.
    pub fn kept_log(&self, log: &RunLog) -> RunLog {
        log.subset(&self.kept_rows(log))
    }

    /// Drop measured samples of excluded iterations (`project --exclude`): a window of the new
    /// configuration's run slowed by another process. Returns how many were dropped; refuses
    /// measurements that do not say which iteration each row measured.
    pub fn drop_samples(&self, measured: &mut Measurements) -> Result<usize, String> {
        if self.is_empty() {
            return Ok(0);
        }
        if measured
            .samples
            .iter()
            .flatten()
            .any(|s| s.iteration.is_none())
        {
            return Err(format!(
                "{}: --exclude needs an 'iteration' column saying which iteration each row \
                 measured",
                measured.source
            ));
        }
        let before = measured.rows();
        for samples in &mut measured.samples {
            samples.retain(|s| !s.iteration.is_some_and(|i| self.contains(i)));
        }
        Ok(before - measured.rows())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runlog::test_log as log;

    #[test]
    fn ranges_parse_and_bad_ones_say_why() {
        let r = parse_iteration_range("0-420").unwrap();
        assert_eq!((r.first, r.last, r.len()), (0, 420, 421));
        assert_eq!(r.to_string(), "0-420");
        assert_eq!(" 7 ".parse::<IterationRange>().unwrap().to_string(), "7-7");
        let reversed = parse_iteration_range("420-10").unwrap_err();
        assert!(
            reversed.contains("reversed") && reversed.contains("10-420"),
            "{reversed}"
        );
        for bad in ["", "-5", "a-b", "1-2-3", "5-", "1.5-2"] {
            let e = parse_iteration_range(bad).unwrap_err();
            assert!(e.contains("expected A-B"), "{bad}: {e}");
        }
    }

    proptest::proptest! {
        #[test]
        fn row_ranges_are_the_rows_excluded_one_by_one(
            gaps in proptest::collection::vec(1u64..4, 1..60),
            first in 0u64..3,
            ranges in proptest::collection::vec((0u64..200, 0u64..30), 0..4),
            to_the_end in proptest::bool::ANY,
        ) {
            // Iterations with gaps (a listed column), excluded ranges anywhere.
            let mut text = "iteration,seq_len,time_ms\n".to_string();
            let mut iteration = first;
            for gap in &gaps {
                text.push_str(&format!("{iteration},5,1\n"));
                iteration += gap;
            }
            let log = log(&text);
            let mut ranges: Vec<IterationRange> = ranges
                .iter()
                .map(|&(first, span)| IterationRange { first, last: first + span })
                .collect();
            if to_the_end {
                ranges.push(IterationRange { first: 150, last: u64::MAX });
            }
            let exclusion = Exclusion::new(ranges);
            let well_formed = |ranges: &[Range<usize>]| {
                ranges.iter().all(|r| !r.is_empty())
                    && ranges.windows(2).all(|w| w[0].end <= w[1].start)
            };
            let listed = |ranges: &[Range<usize>]| -> Vec<usize> {
                ranges.iter().cloned().flatten().collect()
            };
            let excluded: Vec<usize> =
                (0..log.len()).filter(|&r| exclusion.excludes_row(&log, r)).collect();
            let kept: Vec<usize> =
                (0..log.len()).filter(|&r| !exclusion.excludes_row(&log, r)).collect();
            let (excluded_ranges, kept_ranges) =
                (exclusion.excluded_row_ranges(&log), exclusion.kept_row_ranges(&log));
            proptest::prop_assert!(well_formed(&excluded_ranges));
            proptest::prop_assert_eq!(listed(&excluded_ranges), excluded.clone());
            proptest::prop_assert_eq!(kept_ranges.iter().collect::<Vec<_>>(), kept.clone());
            let kept_list: Vec<usize> =
                exclusion.kept_rows(&log).into_iter().map(|r| r as usize).collect();
            proptest::prop_assert_eq!(kept_list, kept);
            proptest::prop_assert_eq!(exclusion.excluded_rows(&log), excluded.len() as u64);
        }
    }

    #[test]
    fn overlapping_and_touching_ranges_merge() {
        let e = Exclusion::parse(&["10-20", "0-4", "15-30", "5-6", "40-40"]).unwrap();
        assert_eq!(e.texts(), ["0-6", "10-30", "40-40"]);
        for (i, inside) in [(0, true), (6, true), (7, false), (9, false), (30, true)] {
            assert_eq!(e.contains(i), inside, "{i}");
        }
        assert!(!e.contains(31) && e.contains(40) && !e.contains(41));
        assert!(Exclusion::default().is_empty());
        let more = e.with(parse_iteration_range("7-9").unwrap());
        assert_eq!(more.texts(), ["0-30", "40-40"]);
    }

    #[test]
    fn checks_against_the_run_and_keeps_the_other_rows() {
        // Iterations numbered 100-105.
        let log = log(
            "iteration,seq_len,time_ms\n100,1,1\n101,1,1\n102,2,2\n103,2,2\n104,1,1\n105,2,2\n",
        );
        let e = Exclusion::parse(&["101-102", "105"]).unwrap();
        e.check(&log).unwrap();
        assert_eq!(e.excluded_rows(&log), 3);
        assert_eq!(e.kept_rows(&log), [0, 3, 4]);
        let outside = Exclusion::parse(&["0-101"])
            .unwrap()
            .check(&log)
            .unwrap_err();
        assert!(
            outside.to_string().contains("iterations are 100-105"),
            "{outside}"
        );
        let past = Exclusion::parse(&["104-106"])
            .unwrap()
            .check(&log)
            .unwrap_err();
        assert!(
            past.to_string()
                .contains("--exclude 104-106: reaches outside"),
            "{past}"
        );
        let all = Exclusion::parse(&["100-102", "103-105"])
            .unwrap()
            .check(&log)
            .unwrap_err();
        assert!(all.to_string().contains("leaves no iteration"), "{all}");
    }

    #[test]
    fn naive_baselines_profile_and_stand_for_the_kept_iterations_only() {
        use crate::select::naive::Baselines;
        // One key costing 10, except iterations 0-19 (1000: a slowed window).
        let rows: String = (0..100)
            .map(|i| format!("{i},1,{}\n", if i < 20 { 1000 } else { 10 }))
            .collect();
        let log = log(&format!("iteration,seq_len,time_ms\n{rows}"));
        let e = Exclusion::parse(&["0-19"]).unwrap();
        let kept = Baselines::excluding(&log, &e);
        for b in kept.all(5, 0, 1) {
            assert_eq!(b.worst_error_pct(), 0.0, "{}", b.method);
        }
        // Without the exclusion the first five are the slowed ones.
        let all = Baselines::new(&log);
        assert!(all.first_n(5, 0).worst_error_pct() > 100.0);
        // A warm-up counts rows of the log, before or inside the excluded range alike.
        assert_eq!(kept.first_n(3, 30).worst_error_pct(), 0.0);
    }
}
