//! Key groups: every iteration with the same key, summarised once (count, per-metric sum,
//! mean, spread, median, cross-moment between configurations) so that binning, selection and
//! projection work on groups, never on rows.

use std::collections::HashMap;
use std::ops::Range;

use crate::parallel;
use crate::rows::RowRanges;
use crate::runlog::RunLog;
use crate::stats::{median_in_place, CompensatedSum};

/// One metric of one configuration, summarised over one key group (or one bin).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Moments {
    pub count: u64,
    pub sum: f64,
    pub mean: f64,
    /// Sum of squared deviations from the mean (so the sample variance is `m2 / (count - 1)`).
    pub m2: f64,
    pub min: f64,
    pub max: f64,
    pub median: f64,
}

impl Moments {
    pub fn sample_variance(&self) -> f64 {
        if self.count > 1 {
            self.m2 / (self.count - 1) as f64
        } else {
            0.0
        }
    }

    /// Pool groups into one summary (exact for count, sum, mean, m2; median left at 0).
    pub fn pooled<'a>(parts: impl IntoIterator<Item = &'a Moments> + Clone) -> Moments {
        let totals = parts
            .clone()
            .into_iter()
            .map(|p| (p.count, p.sum, p.min, p.max));
        Moments::summed(totals, |mean| {
            parts
                .into_iter()
                .map(|p| p.m2 + p.count as f64 * (p.mean - mean).powi(2))
                .sum()
        })
    }

    /// Values summarised in two passes: `parts` gives each part's (count, sum, min, max),
    /// then `squares_around(mean)` their squared deviations from the mean (median left at 0).
    fn summed(
        parts: impl Iterator<Item = (u64, f64, f64, f64)>,
        squares_around: impl FnOnce(f64) -> f64,
    ) -> Moments {
        let mut count = 0u64;
        let mut sum = CompensatedSum::default();
        let mut min = f64::INFINITY;
        let mut max = f64::NEG_INFINITY;
        for (n, part_sum, part_min, part_max) in parts {
            count += n;
            sum.add(part_sum);
            min = min.min(part_min);
            max = max.max(part_max);
        }
        let sum = sum.value();
        let mean = if count > 0 { sum / count as f64 } else { 0.0 };
        Moments {
            count,
            sum,
            mean,
            m2: squares_around(mean),
            min,
            max,
            median: 0.0,
        }
    }
}

/// The key groups of a run log (or of one stratum of it), sorted by key.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyGroups {
    pub dims: usize,
    /// Row-major sorted unique keys.
    pub keys: Vec<u32>,
    pub counts: Vec<u64>,
    /// Rows of group `g`: `rows[offsets[g]..offsets[g + 1]]`, ascending.
    offsets: Vec<usize>,
    rows: Vec<u32>,
    /// `[config][metric][group]`.
    pub moments: Vec<Vec<Vec<Moments>>>,
    /// `[metric][group]`: sum over rows of (baseline - mean)(compare - mean); empty without compare.
    pub cross: Vec<Vec<f64>>,
    lookup: KeyLookup,
}

/// From a key to its group: a table by length for one-length keys, else a binary search.
#[derive(Debug, Clone, PartialEq)]
enum KeyLookup {
    /// `table[length]` is the group, `u32::MAX` when no row has that length.
    ByLength(Vec<u32>),
    Search,
}

/// Rows of the log one grouping job summarises (consecutive groups): enough jobs for every
/// core to stay busy to the end. A job's only scratch is its largest group's values, so the
/// memory grouping needs above the log is the row index and, per thread, one group.
const JOB_ROWS: usize = 1 << 19;
/// Rows below which grouping stays on one thread.
const PARALLEL_ROWS: usize = 1 << 16;

/// The statistics of a contiguous range of groups.
struct BatchStats {
    /// `[column][group]`, columns being every (config, metric) in order.
    moments: Vec<Vec<Moments>>,
    /// `[metric][group]`.
    cross: Vec<Vec<f64>>,
}

impl KeyGroups {
    /// Group every row of the log.
    pub fn from_log(log: &RunLog) -> Self {
        Self::from_rows(log, &RowRanges::all(log.len()))
    }

    /// Group the given rows.
    ///
    /// O(rows): counting by length (or hashing for two-length keys), a counting sort that puts
    /// the rows in the row index by group (one range of rows per core), then, on every core,
    /// each group's values gathered by its rows and every statistic computed exactly as a
    /// per-group loop would.
    pub fn from_rows(log: &RunLog, rows: &RowRanges) -> Self {
        Self::build(log, rows, None, None)
    }

    /// `from_rows` with the rows per job and the thread count fixed, for tests.
    fn build(
        log: &RunLog,
        rows: &RowRanges,
        job_rows: Option<usize>,
        threads: Option<usize>,
    ) -> Self {
        let dims = log.dims();
        let row_count = rows.len();
        let threads = threads.unwrap_or(if row_count >= PARALLEL_ROWS {
            parallel::threads()
        } else {
            1
        });
        // The selected rows cut into one range per thread: each range is counted, then placed,
        // on its own thread.
        let ranges = parallel::split_range(row_count, threads);
        let max_key = if dims == 1 {
            parallel::map_parts(ranges.clone(), |range| {
                rows.slices(range)
                    .filter_map(|(_, rows)| log.keys[rows].iter().copied().max())
                    .max()
                    .unwrap_or(0)
            })
            .into_iter()
            .max()
            .unwrap_or(0)
        } else {
            0
        };
        // A table by length costs 4 bytes per possible length: worth it unless lengths are huge.
        let by_length = dims == 1 && (max_key as usize) < (1 << 22).max(4 * row_count);
        let (keys, counts, offsets, lookup, grouped_rows) = if by_length {
            let (keys, counts, table, range_counts) = count_by_length(log, rows, &ranges, max_key);
            let offsets = offsets_of(&counts);
            let grouped_rows = place_rows(ranges, range_counts, &offsets, rows, |_, row| {
                table[log.keys[row as usize] as usize]
            });
            (
                keys,
                counts,
                offsets,
                KeyLookup::ByLength(table),
                grouped_rows,
            )
        } else {
            let (keys, counts, ids) = count_by_hash(log, rows);
            let range_counts = parallel::map_parts(ranges.clone(), |range| {
                let mut counts = vec![0u32; counts.len()];
                for &g in &ids[range] {
                    counts[g as usize] += 1;
                }
                counts
            });
            let offsets = offsets_of(&counts);
            let grouped_rows = place_rows(ranges, range_counts, &offsets, rows, |i, _| ids[i]);
            (keys, counts, offsets, KeyLookup::Search, grouped_rows)
        };

        let columns: Vec<&[f64]> = log
            .configs
            .iter()
            .flat_map(|c| c.metrics.iter().map(|m| m.values.as_slice()))
            .collect();
        let per_config = log.configs[0].metrics.len();
        let pairs: Vec<(usize, usize)> = if log.compare().is_some() {
            (0..per_config).map(|m| (m, per_config + m)).collect()
        } else {
            Vec::new()
        };

        // Jobs: consecutive groups of about `JOB_ROWS` rows together.
        let limit = job_rows.unwrap_or(JOB_ROWS).max(1);
        let mut jobs: Vec<std::ops::Range<usize>> = Vec::new();
        let mut start = 0;
        for g in 0..counts.len() {
            if g > start && offsets[g + 1] - offsets[start] > limit {
                jobs.push(start..g);
                start = g;
            }
        }
        if start < counts.len() {
            jobs.push(start..counts.len());
        }
        let stats = parallel::run_jobs(jobs, threads, |batch, _| {
            Some(summarise_groups(
                batch,
                &offsets,
                &grouped_rows,
                &columns,
                &pairs,
            ))
        })
        .expect("grouping jobs do not fail");

        let mut flat: Vec<Vec<Moments>> = vec![Vec::with_capacity(counts.len()); columns.len()];
        let mut cross: Vec<Vec<f64>> = vec![Vec::with_capacity(counts.len()); pairs.len()];
        for batch in stats {
            for (all, part) in flat.iter_mut().zip(batch.moments) {
                all.extend(part);
            }
            for (all, part) in cross.iter_mut().zip(batch.cross) {
                all.extend(part);
            }
        }
        let mut flat = flat.into_iter();
        let moments = log
            .configs
            .iter()
            .map(|c| (0..c.metrics.len()).map(|_| flat.next().unwrap()).collect())
            .collect();
        KeyGroups {
            dims,
            keys,
            counts,
            offsets,
            rows: grouped_rows,
            moments,
            cross,
            lookup,
        }
    }

    /// For one-length keys: the group of each length (`u32::MAX` where none), for passes over
    /// rows that look up every row's group.
    pub fn length_table(&self) -> Option<&[u32]> {
        match &self.lookup {
            KeyLookup::ByLength(table) => Some(table),
            KeyLookup::Search => None,
        }
    }

    /// The group holding `key`, if any row has it.
    pub fn group_of(&self, key: &[u32]) -> Option<usize> {
        match &self.lookup {
            KeyLookup::ByLength(table) => match key {
                [length] => table
                    .get(*length as usize)
                    .filter(|&&g| g != u32::MAX)
                    .map(|&g| g as usize),
                _ => None,
            },
            KeyLookup::Search => {
                let (mut lo, mut hi) = (0, self.len());
                while lo < hi {
                    let mid = (lo + hi) / 2;
                    if self.key(mid) < key {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                (lo < self.len() && self.key(lo) == key).then_some(lo)
            }
        }
    }

    pub fn len(&self) -> usize {
        self.counts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    pub fn key(&self, group: usize) -> &[u32] {
        &self.keys[group * self.dims..(group + 1) * self.dims]
    }

    /// Sum of a group's lengths: the order used by uniform/quantile binning on 2-D keys.
    pub fn total_length(&self, group: usize) -> u64 {
        self.key(group).iter().map(|&k| u64::from(k)).sum()
    }

    pub fn rows_of(&self, group: usize) -> &[u32] {
        &self.rows[self.offsets[group]..self.offsets[group + 1]]
    }

    pub fn iterations(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// Mean of the baseline's first metric per group: what binning makes homogeneous.
    pub fn binning_values(&self) -> Vec<f64> {
        self.moments[0][0].iter().map(|m| m.mean).collect()
    }
}

/// Counts by length, one range of the selected rows per thread: the sorted lengths present,
/// their counts, the group of each length (`u32::MAX` where none), and each range's count per
/// group.
fn count_by_length(
    log: &RunLog,
    rows: &RowRanges,
    ranges: &[Range<usize>],
    max_key: u32,
) -> (Vec<u32>, Vec<u64>, Vec<u32>, Vec<Vec<u32>>) {
    let size = max_key as usize + 1;
    let tables = parallel::map_parts(ranges.to_vec(), |range| {
        let mut table = vec![0u32; size];
        for (_, rows) in rows.slices(range) {
            for &k in &log.keys[rows] {
                table[k as usize] += 1;
            }
        }
        table
    });
    let mut keys = Vec::new();
    let mut counts = Vec::new();
    let mut group_of_length = vec![u32::MAX; size];
    for (length, group) in group_of_length.iter_mut().enumerate() {
        let n: u64 = tables.iter().map(|t| u64::from(t[length])).sum();
        if n > 0 {
            *group = keys.len() as u32;
            keys.push(length as u32);
            counts.push(n);
        }
    }
    let range_counts = tables
        .iter()
        .map(|table| keys.iter().map(|&k| table[k as usize]).collect())
        .collect();
    (keys, counts, group_of_length, range_counts)
}

/// Where each group's rows start in the row index, and where the last one's end.
fn offsets_of(counts: &[u64]) -> Vec<usize> {
    let mut offsets = Vec::with_capacity(counts.len() + 1);
    offsets.push(0usize);
    for &c in counts {
        offsets.push(offsets.last().unwrap() + c as usize);
    }
    offsets
}

/// The row index (a counting sort by group): every selected row in its group's part
/// (`offsets`), ascending within a group. Each range of the selected rows is placed on its own
/// thread: its rows of group `g` (`range_counts[r][g]` of them, counted by the same
/// `group_of(position, row)`) go right after the earlier ranges' rows of `g`, so the threads
/// fill disjoint slots and every group stays ascending.
fn place_rows(
    ranges: Vec<Range<usize>>,
    mut range_counts: Vec<Vec<u32>>,
    offsets: &[usize],
    rows: &RowRanges,
    group_of: impl Fn(usize, u32) -> u32 + Sync,
) -> Vec<u32> {
    let groups = offsets.len() - 1;
    // Each range's count per group becomes its first slot for that group.
    for g in 0..groups {
        let mut next = offsets[g];
        for counts in &mut range_counts {
            let n = counts[g] as usize;
            counts[g] = next as u32;
            next += n;
        }
        debug_assert_eq!(next, offsets[g + 1]);
    }
    let mut grouped_rows = parallel::zeroed_column::<u32>(offsets[groups]);
    let slots = parallel::DisjointSlots::new(&mut grouped_rows);
    let parts: Vec<_> = ranges.into_iter().zip(range_counts).collect();
    parallel::map_parts(parts, |(range, mut cursor)| {
        let mut place = |position: usize, row: u32| {
            let slot = &mut cursor[group_of(position, row) as usize];
            // SAFETY: this range's slots for a group run from its first slot for `count` of
            // them, `count` being its rows of that group; the next range's slots start after
            // them (and the next group's after the last range's). So no two threads, and no
            // two rows, ever get the same slot.
            unsafe { slots.write(*slot as usize, row) };
            *slot += 1;
        };
        for (first, rows) in rows.slices(range) {
            for (position, row) in (first..).zip(rows) {
                place(position, row as u32);
            }
        }
    });
    grouped_rows
}

/// Groups of any key by hashing: sorted unique keys, counts, and the group of each selected row.
fn count_by_hash(log: &RunLog, rows: &RowRanges) -> (Vec<u32>, Vec<u64>, Vec<u32>) {
    let mut provisional: Vec<u32> = Vec::with_capacity(rows.len());
    let mut first_row_of: Vec<usize> = Vec::new();
    let mut id_of_key: HashMap<&[u32], u32> = HashMap::new();
    for row in rows.iter() {
        let next = first_row_of.len() as u32;
        let id = *id_of_key.entry(log.key(row)).or_insert_with(|| {
            first_row_of.push(row);
            next
        });
        provisional.push(id);
    }
    let group_count = first_row_of.len();
    let mut by_key: Vec<usize> = (0..group_count).collect();
    by_key.sort_by(|&a, &b| log.key(first_row_of[a]).cmp(log.key(first_row_of[b])));
    let mut rank = vec![0u32; group_count];
    for (position, &g) in by_key.iter().enumerate() {
        rank[g] = position as u32;
    }
    let mut counts = vec![0u64; group_count];
    for id in provisional.iter_mut() {
        *id = rank[*id as usize];
        counts[*id as usize] += 1;
    }
    let keys = by_key
        .iter()
        .flat_map(|&g| log.key(first_row_of[g]).iter().copied())
        .collect();
    (keys, counts, provisional)
}

/// The statistics of consecutive groups: each group's values gathered by its rows (ascending)
/// into one scratch buffer per column, then every statistic computed as a per-group loop over
/// its rows would.
fn summarise_groups(
    batch: std::ops::Range<usize>,
    offsets: &[usize],
    grouped_rows: &[u32],
    columns: &[&[f64]],
    pairs: &[(usize, usize)],
) -> BatchStats {
    let largest = batch
        .clone()
        .map(|g| offsets[g + 1] - offsets[g])
        .max()
        .unwrap_or(0);
    let mut values: Vec<Vec<f64>> = columns.iter().map(|_| vec![0.0; largest]).collect();
    let groups = batch.len();
    let mut moments: Vec<Vec<Moments>> = vec![Vec::with_capacity(groups); columns.len()];
    let mut cross: Vec<Vec<f64>> = vec![Vec::with_capacity(groups); pairs.len()];
    for g in batch.clone() {
        let rows = &grouped_rows[offsets[g]..offsets[g + 1]];
        for (scratch, all) in values.iter_mut().zip(columns) {
            for (i, (slot, &row)) in scratch.iter_mut().zip(rows).enumerate() {
                // A group's rows are spread over the whole log: ask for the value a few rows
                // ahead so that the reads overlap instead of each waiting for memory.
                if let Some(&ahead) = rows.get(i + PREFETCH_AHEAD) {
                    prefetch(all, ahead as usize);
                }
                *slot = all[row as usize];
            }
        }
        let span = 0..rows.len();
        for (c, column) in values.iter().enumerate() {
            let part = &column[span.clone()];
            moments[c].push(Moments::summed(
                part.iter().map(|&v| (1, v, v, v)),
                |mean| part.iter().map(|v| (v - mean).powi(2)).sum(),
            ));
        }
        for (p, &(a, b)) in pairs.iter().enumerate() {
            let (mean_a, mean_b) = (
                moments[a].last().unwrap().mean,
                moments[b].last().unwrap().mean,
            );
            let co: f64 = values[a][span.clone()]
                .iter()
                .zip(&values[b][span.clone()])
                .map(|(x, y)| (x - mean_a) * (y - mean_b))
                .sum();
            cross[p].push(co);
        }
        // Last: the median reorders the values.
        for (c, column) in values.iter_mut().enumerate() {
            moments[c].last_mut().unwrap().median = median_in_place(&mut column[span.clone()]);
        }
    }
    BatchStats { moments, cross }
}

/// How many rows ahead of the one read the gather asks for.
pub(crate) const PREFETCH_AHEAD: usize = 16;

/// Ask the processor to bring `values[index]` into cache (a hint: nothing is read).
#[inline(always)]
pub(crate) fn prefetch(values: &[f64], index: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing and cannot fault; the address is inside `values` anyway.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(values.as_ptr().wrapping_add(index) as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (values, index);
}

/// A key as people read it in tables and messages: `312`, or `312x48` for two lengths.
pub fn key_text(key: &[u32]) -> String {
    key.iter().map(u32::to_string).collect::<Vec<_>>().join("x")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runlog::{load_bytes, InputFormat, LoadOptions};

    use crate::runlog::test_log as log;

    #[test]
    fn groups_by_hand() {
        let log = log("seq_len,time_ms\n20,2\n10,1\n20,4\n10,3\n30,9\n20,6\n");
        let groups = KeyGroups::from_log(&log);
        assert_eq!(groups.keys, vec![10, 20, 30]);
        assert_eq!(groups.counts, vec![2, 3, 1]);
        assert_eq!(groups.rows_of(1), &[0, 2, 5]);
        let m = &groups.moments[0][0][1];
        assert_eq!(
            (m.sum, m.mean, m.median, m.min, m.max),
            (12.0, 4.0, 4.0, 2.0, 6.0)
        );
        assert_eq!(m.m2, 8.0);
        assert_eq!(m.sample_variance(), 4.0);
    }

    #[test]
    fn pooled_moments_equal_direct_ones() {
        let log = log("seq_len,time_ms\n20,2\n10,1\n20,4\n10,3\n30,9\n20,6\n");
        let groups = KeyGroups::from_log(&log);
        let pooled = Moments::pooled(groups.moments[0][0].iter());
        let values = [2.0, 1.0, 4.0, 3.0, 9.0, 6.0];
        let mean = values.iter().sum::<f64>() / 6.0;
        let m2: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
        assert_eq!(pooled.count, 6);
        assert!((pooled.mean - mean).abs() < 1e-12);
        assert!((pooled.m2 - m2).abs() < 1e-9);
    }

    #[test]
    fn subsets_and_two_dim_keys() {
        let text = "src_len,tgt_len,time_ms\n5,7,1\n5,6,2\n5,7,3\n4,9,4\n";
        let options = LoadOptions {
            key: vec!["src_len".into(), "tgt_len".into()],
            ..LoadOptions::default()
        };
        let log = load_bytes("t.csv", text.as_bytes(), InputFormat::Csv, &options).unwrap();
        let groups = KeyGroups::from_log(&log);
        assert_eq!(groups.keys, vec![4, 9, 5, 6, 5, 7]);
        assert_eq!(groups.counts, vec![1, 1, 2]);
        let subset = KeyGroups::from_rows(&log, &RowRanges::listed(&[1, 2, 3]));
        assert_eq!(subset.counts, vec![1, 1, 1]);
        assert_eq!(subset.rows_of(2), &[2]);
    }

    /// Keys, each group's rows, moments and cross-moments, as the plain definition gives them.
    type Reference = (
        Vec<u32>,
        Vec<Vec<u32>>,
        Vec<Vec<Vec<Moments>>>,
        Vec<Vec<f64>>,
    );
    type Row = (u32, u32, f64, f64);

    /// The plain definition: per group (sorted by key), its rows ascending, each statistic.
    fn reference(log: &RunLog, rows: &[u32]) -> Reference {
        let mut by_key: std::collections::BTreeMap<Vec<u32>, Vec<u32>> = Default::default();
        for &r in rows {
            by_key
                .entry(log.key(r as usize).to_vec())
                .or_default()
                .push(r);
        }
        let keys: Vec<u32> = by_key.keys().flatten().copied().collect();
        let members: Vec<Vec<u32>> = by_key.into_values().collect();
        let summarise = |values: &[f64]| -> Vec<Moments> {
            members
                .iter()
                .map(|rows| {
                    let mut scratch: Vec<f64> = rows.iter().map(|&r| values[r as usize]).collect();
                    let mut sum = CompensatedSum::default();
                    scratch.iter().for_each(|&v| sum.add(v));
                    let sum = sum.value();
                    let mean = sum / rows.len() as f64;
                    Moments {
                        count: rows.len() as u64,
                        sum,
                        mean,
                        m2: scratch.iter().map(|v| (v - mean).powi(2)).sum(),
                        min: scratch.iter().copied().fold(f64::INFINITY, f64::min),
                        max: scratch.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                        median: median_in_place(&mut scratch),
                    }
                })
                .collect()
        };
        let moments: Vec<Vec<Vec<Moments>>> = log
            .configs
            .iter()
            .map(|c| c.metrics.iter().map(|m| summarise(&m.values)).collect())
            .collect();
        let cross = match log.compare() {
            None => Vec::new(),
            Some(compare) => log.configs[0]
                .metrics
                .iter()
                .zip(&compare.metrics)
                .enumerate()
                .map(|(m, (a, b))| {
                    members
                        .iter()
                        .enumerate()
                        .map(|(g, rows)| {
                            let (ma, mb) = (moments[0][m][g].mean, moments[1][m][g].mean);
                            rows.iter()
                                .map(|&r| (a.values[r as usize] - ma) * (b.values[r as usize] - mb))
                                .sum()
                        })
                        .collect()
                })
                .collect(),
        };
        (keys, members, moments, cross)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        #[test]
        fn grouping_equals_the_plain_definition(
            rows in proptest::collection::vec((0u32..40, 0u32..3, 0.0f64..100.0, 0.0f64..100.0), 1..400),
            two_dims in proptest::bool::ANY,
            compare in proptest::bool::ANY,
            subset_mask in proptest::collection::vec(proptest::bool::ANY, 400),
            job_rows in 1usize..80,
        ) {
            use crate::runlog::{Configuration, ConfigRole, Iterations, MetricColumn};
            let n = rows.len();
            let dims = if two_dims { 2 } else { 1 };
            let keys: Vec<u32> = rows.iter().flat_map(|r| if two_dims { vec![r.0, r.1] } else { vec![r.0 * 1000] }).collect();
            let metric = |name: &str, f: &dyn Fn(&Row) -> f64| MetricColumn {
                name: name.into(),
                values: rows.iter().map(f).collect(),
            };
            let mut configs = vec![Configuration {
                role: ConfigRole::Baseline,
                source: "a".into(),
                metrics: vec![metric("time_ms", &|r| r.2), metric("energy_j", &|r| r.3)],
                measurement_like: Vec::new(),
            }];
            if compare {
                configs.push(Configuration {
                    role: ConfigRole::Compare,
                    source: "b".into(),
                    metrics: vec![metric("time_ms", &|r| r.3 * 0.5), metric("energy_j", &|r| r.2 + 1.0)],
                    measurement_like: Vec::new(),
                });
            }
            let log = RunLog {
                source: "t".into(),
                key_names: (0..dims).map(|d| format!("k{d}")).collect(),
                iterations: Iterations::dense(n),
                epochs: None,
                keys,
                configs,
                skipped: Default::default(),
                proxy: None,
            };
            let all: Vec<u32> = (0..n as u32).collect();
            let subset: Vec<u32> = all.iter().copied().filter(|&r| subset_mask[r as usize]).collect();
            let (every, some) = (RowRanges::all(n), RowRanges::listed(&subset));
            for (selected, groups) in [
                (&all, KeyGroups::from_log(&log)),
                (&subset, KeyGroups::from_rows(&log, &some)),
                (&all, KeyGroups::build(&log, &every, Some(job_rows), Some(2))),
                (&subset, KeyGroups::build(&log, &some, Some(job_rows), Some(3))),
                (&all, KeyGroups::build(&log, &every, Some(job_rows), Some(7))),
            ] {
                let (keys, members, moments, cross) = reference(&log, selected);
                proptest::prop_assert_eq!(&groups.keys, &keys);
                for (g, rows) in members.iter().enumerate() {
                    proptest::prop_assert_eq!(groups.rows_of(g), rows.as_slice());
                    proptest::prop_assert_eq!(groups.counts[g], rows.len() as u64);
                    proptest::prop_assert_eq!(groups.group_of(groups.key(g)), Some(g));
                }
                proptest::prop_assert_eq!(&groups.moments, &moments);
                proptest::prop_assert_eq!(&groups.cross, &cross);
            }
        }
    }
}
