//! Key groups: every iteration with the same key, summarised once (count, per-metric sum,
//! mean, spread, median, cross-moment between configurations) so that binning, selection and
//! projection work on groups, never on rows.

use std::collections::HashMap;

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
        let mut count = 0u64;
        let mut sum = CompensatedSum::default();
        let mut min = f64::INFINITY;
        let mut max = f64::NEG_INFINITY;
        for p in parts.clone() {
            count += p.count;
            sum.add(p.sum);
            min = min.min(p.min);
            max = max.max(p.max);
        }
        let sum = sum.value();
        let mean = if count > 0 { sum / count as f64 } else { 0.0 };
        let m2 = parts
            .into_iter()
            .map(|p| p.m2 + p.count as f64 * (p.mean - mean).powi(2))
            .sum();
        Moments {
            count,
            sum,
            mean,
            m2,
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
}

impl KeyGroups {
    /// Group every row of the log.
    pub fn from_log(log: &RunLog) -> Self {
        Self::from_rows(log, None)
    }

    /// Group the given rows (ascending row indices), or all rows with `None`.
    pub fn from_rows(log: &RunLog, rows: Option<&[u32]>) -> Self {
        let dims = log.dims();
        let row_count = rows.map_or(log.len(), <[u32]>::len);
        let row_at = |i: usize| rows.map_or(i, |r| r[i] as usize);

        // Assign a provisional group id per row, then renumber groups in key order.
        let mut provisional: Vec<u32> = Vec::with_capacity(row_count);
        let mut first_row_of: Vec<usize> = Vec::new();
        if dims == 1 && log.keys.iter().all(|&k| k < (1 << 24)) {
            let max_key = log.keys.iter().copied().max().unwrap_or(0) as usize;
            let mut id_of_key = vec![u32::MAX; max_key + 1];
            for i in 0..row_count {
                let row = row_at(i);
                let slot = &mut id_of_key[log.keys[row] as usize];
                if *slot == u32::MAX {
                    *slot = first_row_of.len() as u32;
                    first_row_of.push(row);
                }
                provisional.push(*slot);
            }
        } else {
            let mut id_of_key: HashMap<&[u32], u32> = HashMap::new();
            for i in 0..row_count {
                let row = row_at(i);
                let next = first_row_of.len() as u32;
                let id = *id_of_key.entry(log.key(row)).or_insert_with(|| {
                    first_row_of.push(row);
                    next
                });
                provisional.push(id);
            }
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
        let mut offsets = Vec::with_capacity(group_count + 1);
        offsets.push(0usize);
        for &c in &counts {
            offsets.push(offsets.last().unwrap() + c as usize);
        }
        let mut cursor = offsets.clone();
        let mut grouped_rows = vec![0u32; row_count];
        for (i, &g) in provisional.iter().enumerate() {
            grouped_rows[cursor[g as usize]] = row_at(i) as u32;
            cursor[g as usize] += 1;
        }
        drop(provisional);

        let keys: Vec<u32> = by_key
            .iter()
            .flat_map(|&g| log.key(first_row_of[g]).iter().copied())
            .collect();
        let mut groups = KeyGroups {
            dims,
            keys,
            counts,
            offsets,
            rows: grouped_rows,
            moments: Vec::new(),
            cross: Vec::new(),
        };
        groups.moments = log
            .configs
            .iter()
            .map(|config| {
                config
                    .metrics
                    .iter()
                    .map(|metric| groups.summarise(&metric.values))
                    .collect()
            })
            .collect();
        if let Some(compare) = log.compare() {
            groups.cross = log.configs[0]
                .metrics
                .iter()
                .zip(&compare.metrics)
                .enumerate()
                .map(|(m, (a, b))| groups.cross_moments(&a.values, &b.values, m))
                .collect();
        }
        groups
    }

    fn summarise(&self, values: &[f64]) -> Vec<Moments> {
        let mut scratch = Vec::new();
        (0..self.len())
            .map(|g| {
                let rows = self.rows_of(g);
                let mut sum = CompensatedSum::default();
                let mut min = f64::INFINITY;
                let mut max = f64::NEG_INFINITY;
                scratch.clear();
                for &r in rows {
                    let v = values[r as usize];
                    sum.add(v);
                    min = min.min(v);
                    max = max.max(v);
                    scratch.push(v);
                }
                let sum = sum.value();
                let mean = sum / rows.len() as f64;
                let m2 = scratch.iter().map(|v| (v - mean).powi(2)).sum();
                Moments {
                    count: rows.len() as u64,
                    sum,
                    mean,
                    m2,
                    min,
                    max,
                    median: median_in_place(&mut scratch),
                }
            })
            .collect()
    }

    fn cross_moments(&self, a: &[f64], b: &[f64], metric: usize) -> Vec<f64> {
        (0..self.len())
            .map(|g| {
                let mean_a = self.moments[0][metric][g].mean;
                let mean_b = self.moments[1][metric][g].mean;
                self.rows_of(g)
                    .iter()
                    .map(|&r| (a[r as usize] - mean_a) * (b[r as usize] - mean_b))
                    .sum()
            })
            .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runlog::{load_bytes, InputFormat, LoadOptions};

    fn log(text: &str) -> RunLog {
        load_bytes(
            "t.csv",
            text.as_bytes(),
            InputFormat::Csv,
            &LoadOptions::default(),
        )
        .unwrap()
    }

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
        let subset = KeyGroups::from_rows(&log, Some(&[1, 2, 3]));
        assert_eq!(subset.counts, vec![1, 1, 1]);
        assert_eq!(subset.rows_of(2), &[2]);
    }
}
