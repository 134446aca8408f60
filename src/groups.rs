//! Key groups: every iteration with the same key, summarised once (count, per-metric sum,
//! mean, spread, extremes, cross-moment between configurations) so that binning, selection and
//! projection work on groups, never on rows. Medians, which only the checks and the
//! explorer's detail show, are worked out when first asked for.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::OnceLock;

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
}

impl Moments {
    pub fn sample_variance(&self) -> f64 {
        if self.count > 1 {
            self.m2 / (self.count - 1) as f64
        } else {
            0.0
        }
    }

    /// Pool groups into one summary (exact for count, sum, mean, m2).
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

    /// Pooled squared coefficient of variation of one iteration over these groups,
    /// `sum (n_u - 1) s_u^2 / mu_u^2 / sum (n_u - 1)`, and its degrees of freedom, the
    /// denominator; `None` when no group has two iterations.
    pub fn pooled_cv2<'a>(groups: impl IntoIterator<Item = &'a Moments>) -> Option<(f64, f64)> {
        let (mut squares, mut dof) = (0.0, 0.0);
        for m in groups {
            if m.count >= 2 && m.mean != 0.0 {
                squares += m.m2 / (m.mean * m.mean);
                dof += (m.count - 1) as f64;
            }
        }
        (dof > 0.0).then(|| (squares / dof, dof))
    }

    /// Values summarised in two passes: `parts` gives each part's (count, sum, min, max),
    /// then `squares_around(mean)` their squared deviations from the mean.
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
        }
    }
}

/// The key groups of a run log (or of one stratum of it), sorted by key.
#[derive(Debug, Clone)]
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
    /// `[config][metric]`: the within-key noise of one iteration pooled over every group
    /// (`Moments::pooled_cv2`), `None` when no group has two iterations.
    pub run_cv2: Vec<Vec<Option<f64>>>,
    /// `[metric][group]`: sum over rows of (baseline - mean)(compare - mean); empty without compare.
    pub cross: Vec<Vec<f64>>,
    /// `[config][metric]`: the compensated sum of the grouped rows' values in row order (when
    /// every row is grouped, the run's actual total exactly as `project::actual_totals` sums
    /// it, without a pass of its own).
    pub row_order_totals: Vec<Vec<f64>>,
    /// `[config][metric]`: each group's median, once asked for (`medians`).
    medians: Vec<Vec<OnceLock<Vec<f64>>>>,
    lookup: KeyLookup,
}

/// From a key to its group: a table by length for one-length keys, else a binary search.
#[derive(Debug, Clone, PartialEq)]
enum KeyLookup {
    /// `table[length]` is the group, `u32::MAX` when no row has that length.
    ByLength(Vec<u32>),
    Search,
}

/// Rows of the log one median job gathers (consecutive groups): enough jobs for every core to
/// stay busy to the end. A job's only scratch is its largest group's values.
const JOB_ROWS: usize = 1 << 19;
/// Rows below which grouping stays on one thread.
const PARALLEL_ROWS: usize = 1 << 16;

/// The threads a pass over `rows` rows is worth.
fn threads_for(rows: usize) -> usize {
    if rows >= PARALLEL_ROWS {
        parallel::threads()
    } else {
        1
    }
}

impl KeyGroups {
    /// Group every row of the log.
    pub fn from_log(log: &RunLog) -> Self {
        Self::from_rows(log, &RowRanges::all(log.len()))
    }

    /// Group the given rows.
    ///
    /// O(rows): counting by length (or hashing for two-length keys), then on every core at
    /// once a counting sort that puts the rows in the row index by group (one job per range of
    /// rows) and each metric column's moments (one job per column: two passes over the rows in
    /// order, each row adding to its group's figures). A group's values are added in the order
    /// of its rows, as a loop over the group's rows would add them, so every figure is that
    /// loop's to the bit; and no pass gathers values by group.
    pub fn from_rows(log: &RunLog, rows: &RowRanges) -> Self {
        Self::build(log, rows, None)
    }

    /// `from_rows` with the thread count fixed, for tests.
    fn build(log: &RunLog, rows: &RowRanges, threads: Option<usize>) -> Self {
        let dims = log.dims();
        let row_count = rows.len();
        let threads = threads.unwrap_or_else(|| threads_for(row_count));
        // The selected rows cut into one range per thread: each range is counted, then placed,
        // as a job of its own.
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
        let (keys, counts, range_counts, lookup, ids) = if by_length {
            let (keys, counts, table, range_counts) = count_by_length(log, rows, &ranges, max_key);
            let lookup = KeyLookup::ByLength(table);
            (keys, counts, range_counts, lookup, Vec::new())
        } else {
            let (keys, counts, ids) = count_by_hash(log, rows);
            let range_counts = parallel::map_parts(ranges.clone(), |range| {
                let mut counts = vec![0u32; counts.len()];
                for &g in &ids[range] {
                    counts[g as usize] += 1;
                }
                counts
            });
            (keys, counts, range_counts, KeyLookup::Search, ids)
        };
        let offsets = offsets_of(&counts);
        let placements = ranges.into_iter().zip(first_slots(range_counts, &offsets));
        let summary = match &lookup {
            KeyLookup::ByLength(table) => RowGroups {
                rows,
                group_of: |_, row: usize| table[log.keys[row] as usize],
            }
            .summarise(log, &counts, placements.collect(), threads),
            KeyLookup::Search => RowGroups {
                rows,
                group_of: |position, _| ids[position],
            }
            .summarise(log, &counts, placements.collect(), threads),
        };
        KeyGroups {
            dims,
            keys,
            counts,
            offsets,
            rows: summary.grouped_rows,
            run_cv2: summary
                .moments
                .iter()
                .map(|config| {
                    config
                        .iter()
                        .map(|m| Moments::pooled_cv2(m).map(|(cv2, _)| cv2))
                        .collect()
                })
                .collect(),
            moments: summary.moments,
            cross: summary.cross,
            row_order_totals: summary.totals,
            medians: log
                .configs
                .iter()
                .map(|c| c.metrics.iter().map(|_| OnceLock::new()).collect())
                .collect(),
            lookup,
        }
    }

    /// Each group's median of one metric of one configuration. Only the checks and the
    /// explorer's detail show medians, so they are worked out the first time they are asked
    /// for (every value gathered by group) and kept. `log` is the log the groups were made of.
    pub fn medians(&self, log: &RunLog, config: usize, metric: usize) -> &[f64] {
        self.medians[config][metric].get_or_init(|| {
            let values = &log.configs[config].metrics[metric].values;
            self.gather_medians(values, JOB_ROWS, threads_for(self.rows.len()))
        })
    }

    /// Whether `medians` of this metric are worked out already (asking for them is then free).
    pub fn has_medians(&self, config: usize, metric: usize) -> bool {
        self.medians[config][metric].get().is_some()
    }

    /// `medians` of one column of values, in jobs of consecutive groups of about `job_rows`
    /// rows on `threads` threads.
    fn gather_medians(&self, values: &[f64], job_rows: usize, threads: usize) -> Vec<f64> {
        let limit = job_rows.max(1);
        let mut jobs: Vec<Range<usize>> = Vec::new();
        let mut start = 0;
        for g in 0..self.len() {
            if g > start && self.offsets[g + 1] - self.offsets[start] > limit {
                jobs.push(start..g);
                start = g;
            }
        }
        if start < self.len() {
            jobs.push(start..self.len());
        }
        let parts = parallel::run_jobs(jobs, threads, |batch, _| {
            let largest = batch.clone().map(|g| self.rows_of(g).len()).max();
            let mut scratch = vec![0.0; largest.unwrap_or(0)];
            let medians: Vec<f64> = batch
                .map(|g| {
                    let rows = self.rows_of(g);
                    let group_values = &mut scratch[..rows.len()];
                    for (i, (slot, &row)) in group_values.iter_mut().zip(rows).enumerate() {
                        // A group's rows are spread over the whole log: ask for the value a
                        // few rows ahead so that the reads overlap instead of each waiting.
                        if let Some(&ahead) = rows.get(i + PREFETCH_AHEAD) {
                            prefetch(values, ahead as usize);
                        }
                        *slot = values[row as usize];
                    }
                    median_in_place(group_values)
                })
                .collect();
            Some(medians)
        });
        parts.expect("median jobs do not fail").concat()
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

/// Each range's first slot in the row index for each group, from each range's count per
/// group: a range's rows of group `g` go right after the earlier ranges' rows of `g`, so the
/// ranges fill disjoint slots and every group's rows stay ascending.
fn first_slots(mut range_counts: Vec<Vec<u32>>, offsets: &[usize]) -> Vec<Vec<u32>> {
    for g in 0..offsets.len() - 1 {
        let mut next = offsets[g];
        for counts in &mut range_counts {
            let n = counts[g] as usize;
            counts[g] = next as u32;
            next += n;
        }
        debug_assert_eq!(next, offsets[g + 1]);
    }
    range_counts
}

/// The selected rows of a log and the group of each: what the passes over the rows share.
struct RowGroups<'a, G> {
    rows: &'a RowRanges,
    /// The group of a row, given its position among the selected rows and the row.
    group_of: G,
}

/// What grouping makes of the rows: the row index and every figure but the medians.
struct Summary {
    grouped_rows: Vec<u32>,
    moments: Vec<Vec<Vec<Moments>>>,
    cross: Vec<Vec<f64>>,
    totals: Vec<Vec<f64>>,
}

/// A job of grouping: one column's moments, or one range of rows put in the row index from its
/// first slot per group.
enum Job<'v> {
    Column(&'v [f64]),
    Place(Range<usize>, Vec<u32>),
}

impl<G: Fn(usize, usize) -> u32 + Sync> RowGroups<'_, G> {
    /// `visit(group, row)` for each selected row at `positions`, in row order.
    #[inline(always)]
    fn for_each(&self, positions: Range<usize>, mut visit: impl FnMut(usize, usize)) {
        for (first, rows) in self.rows.slices(positions) {
            for (position, row) in (first..).zip(rows) {
                visit((self.group_of)(position, row) as usize, row);
            }
        }
    }

    /// The row index and each column's moments, all as jobs on `threads` threads (the columns
    /// first: a column's two passes take longer than placing a range), then the
    /// cross-moments of each metric between the configurations.
    fn summarise(
        &self,
        log: &RunLog,
        counts: &[u64],
        placements: Vec<(Range<usize>, Vec<u32>)>,
        threads: usize,
    ) -> Summary {
        let columns = (log.configs.iter()).flat_map(|c| c.metrics.iter());
        let jobs: Vec<Job> = columns
            .map(|metric| Job::Column(&metric.values))
            .chain(
                placements
                    .into_iter()
                    .map(|(range, first)| Job::Place(range, first)),
            )
            .collect();
        let mut grouped_rows = parallel::zeroed_column::<u32>(self.rows.len());
        let slots = parallel::DisjointSlots::new(&mut grouped_rows);
        let done = parallel::run_jobs(jobs, threads, |job, _| {
            Some(match job {
                Job::Column(values) => Some(self.moments(values, counts)),
                Job::Place(range, first) => {
                    self.place(&slots, range, first);
                    None
                }
            })
        })
        .expect("grouping jobs do not fail");
        let mut flat = done.into_iter().flatten();
        let (moments, totals): (Vec<Vec<Vec<Moments>>>, Vec<Vec<f64>>) = log
            .configs
            .iter()
            .map(|c| c.metrics.iter().map(|_| flat.next().unwrap()).unzip())
            .unzip();
        let cross = match log.compare() {
            None => Vec::new(),
            Some(compare) => {
                let pairs: Vec<usize> = (0..compare.metrics.len()).collect();
                parallel::run_jobs(pairs, threads, |m, _| {
                    let (a, b) = (&log.configs[0].metrics[m], &compare.metrics[m]);
                    Some(self.cross(&a.values, &b.values, &moments[0][m], &moments[1][m]))
                })
                .expect("cross-moment jobs do not fail")
            }
        };
        Summary {
            grouped_rows,
            moments,
            cross,
            totals,
        }
    }

    /// One column's moments per group: a pass over the rows for the count, the (compensated)
    /// sum and the extremes, then one for the squared deviations from each group's mean. With
    /// them, the total of every row's value in row order (the first pass reads them all).
    fn moments(&self, values: &[f64], counts: &[u64]) -> (Vec<Moments>, f64) {
        let every = 0..self.rows.len();
        let mut total = CompensatedSum::default();
        // A group's running figures side by side: one cache line per row, not one per figure.
        let mut running =
            vec![(CompensatedSum::default(), f64::INFINITY, f64::NEG_INFINITY); counts.len()];
        self.for_each(every.clone(), |g, row| {
            let v = values[row];
            total.add(v);
            let (sum, min, max) = &mut running[g];
            sum.add(v);
            *min = min.min(v);
            *max = max.max(v);
        });
        let mut spread: Vec<(f64, f64)> = running
            .iter()
            .zip(counts)
            .map(|((sum, _, _), &n)| (sum.value() / n as f64, 0.0))
            .collect();
        self.for_each(every, |g, row| {
            let (mean, m2) = &mut spread[g];
            *m2 += (values[row] - *mean).powi(2);
        });
        let moments = running
            .iter()
            .zip(&spread)
            .zip(counts)
            .map(|(((sum, min, max), &(mean, m2)), &count)| Moments {
                count,
                sum: sum.value(),
                mean,
                m2,
                min: *min,
                max: *max,
            })
            .collect();
        (moments, total.value())
    }

    /// Per group, the sum over its rows of (a - a's mean)(b - b's mean).
    fn cross(&self, a: &[f64], b: &[f64], of_a: &[Moments], of_b: &[Moments]) -> Vec<f64> {
        let mut cross = vec![0.0; of_a.len()];
        self.for_each(0..self.rows.len(), |g, row| {
            cross[g] += (a[row] - of_a[g].mean) * (b[row] - of_b[g].mean);
        });
        cross
    }

    /// The rows at `positions` put in their groups' parts of the row index, from `first`
    /// (this range's first slot for each group).
    fn place(
        &self,
        slots: &parallel::DisjointSlots<u32>,
        positions: Range<usize>,
        first: Vec<u32>,
    ) {
        let mut next = first;
        self.for_each(positions, |g, row| {
            // SAFETY: this range's slots for a group run from its first slot for `count` of
            // them, `count` being its rows of that group; the next range's slots start after
            // them (and the next group's after the last range's). So no two jobs, and no two
            // rows, ever get the same slot.
            unsafe { slots.write(next[g] as usize, row as u32) };
            next[g] += 1;
        });
    }
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
        assert_eq!((m.sum, m.mean, m.min, m.max), (12.0, 4.0, 2.0, 6.0));
        assert_eq!(groups.medians(&log, 0, 0), [2.0, 4.0, 9.0]);
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

    /// Keys, each group's rows, moments, cross-moments and medians, as the plain definition
    /// gives them.
    type Reference = (
        Vec<u32>,
        Vec<Vec<u32>>,
        Vec<Vec<Vec<Moments>>>,
        Vec<Vec<f64>>,
        Vec<Vec<Vec<f64>>>,
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
        let summarise = |values: &[f64]| -> (Vec<Moments>, Vec<f64>) {
            members
                .iter()
                .map(|rows| {
                    let mut scratch: Vec<f64> = rows.iter().map(|&r| values[r as usize]).collect();
                    let mut sum = CompensatedSum::default();
                    scratch.iter().for_each(|&v| sum.add(v));
                    let sum = sum.value();
                    let mean = sum / rows.len() as f64;
                    let moments = Moments {
                        count: rows.len() as u64,
                        sum,
                        mean,
                        m2: scratch.iter().map(|v| (v - mean).powi(2)).sum(),
                        min: scratch.iter().copied().fold(f64::INFINITY, f64::min),
                        max: scratch.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    };
                    (moments, median_in_place(&mut scratch))
                })
                .unzip()
        };
        let (moments, medians): (Vec<Vec<Vec<Moments>>>, Vec<_>) = log
            .configs
            .iter()
            .map(|c| c.metrics.iter().map(|m| summarise(&m.values)).unzip())
            .unzip();
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
        (keys, members, moments, cross, medians)
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
                iteration_like: Vec::new(),
            };
            let all: Vec<u32> = (0..n as u32).collect();
            let subset: Vec<u32> = all.iter().copied().filter(|&r| subset_mask[r as usize]).collect();
            let (every, some) = (RowRanges::all(n), RowRanges::listed(&subset));
            for (selected, groups, threads) in [
                (&all, KeyGroups::from_log(&log), 1),
                (&subset, KeyGroups::from_rows(&log, &some), 1),
                (&all, KeyGroups::build(&log, &every, Some(2)), 2),
                (&subset, KeyGroups::build(&log, &some, Some(3)), 3),
                (&all, KeyGroups::build(&log, &every, Some(7)), 7),
            ] {
                let (keys, members, moments, cross, medians) = reference(&log, selected);
                proptest::prop_assert_eq!(&groups.keys, &keys);
                for (g, rows) in members.iter().enumerate() {
                    proptest::prop_assert_eq!(groups.rows_of(g), rows.as_slice());
                    proptest::prop_assert_eq!(groups.counts[g], rows.len() as u64);
                    proptest::prop_assert_eq!(groups.group_of(groups.key(g)), Some(g));
                }
                proptest::prop_assert_eq!(&groups.moments, &moments);
                proptest::prop_assert_eq!(&groups.cross, &cross);
                for (c, config) in log.configs.iter().enumerate() {
                    for (m, metric) in config.metrics.iter().enumerate() {
                        let want = &medians[c][m];
                        proptest::prop_assert_eq!(groups.medians(&log, c, m), want.as_slice());
                        let in_jobs = groups.gather_medians(&metric.values, job_rows, threads);
                        proptest::prop_assert_eq!(&in_jobs, want);
                        let in_order = selected.iter().map(|&r| metric.values[r as usize]);
                        let total = crate::stats::compensated_sum(in_order);
                        proptest::prop_assert_eq!(groups.row_order_totals[c][m], total);
                    }
                }
            }
        }
    }
}
