//! Where the excluded iterations stand among the bins, so that a projection of the whole run
//! keeps their lengths (`--exclude` distrusts a window's *measurements*, such as a stretch
//! slowed by another process; the window's iterations still ran and still count).
//!
//! Each excluded iteration is counted in the bin of its own stratum that holds its key (the
//! nearest bin where none does: a length seen only inside the window), and valued on the
//! baseline at its key's mean over the kept iterations of that stratum, or at the bin's mean
//! where no kept iteration has its key. Its own logged value is never used: that is what the
//! exclusion left out. `project` adds these iterations to their bins' weights, so a window
//! whose length mix differs from the rest of the run is projected at its own mix, not at the
//! run's (which `--run-iterations` rescaling would do).

use std::collections::HashMap;

use crate::pick::SeqPoint;
use crate::rows::RowRanges;
use crate::runlog::RunLog;
use crate::select::strata::{kept_strata_rows, strata_rows};
use crate::select::{SelectError, Selection};

/// The excluded iterations one SeqPoint's bin stands for.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ExcludedShare {
    pub iterations: u64,
    /// `[metric]`: the mean baseline value they are counted at.
    pub baseline_mean: Vec<f64>,
}

/// `[seqpoint]`: the excluded iterations each SeqPoint's bin stands for (all zero without
/// `--exclude`).
pub fn excluded_shares(
    log: &RunLog,
    selection: &Selection,
) -> Result<Vec<ExcludedShare>, SelectError> {
    let metrics = log.metric_names().len();
    let mut shares = vec![ExcludedShare::default(); selection.seqpoints.len()];
    let exclude = &selection.options.exclude;
    if exclude.is_empty() || selection.seqpoints.is_empty() {
        return Ok(shares);
    }
    let strata = selection.options.strata;
    let kept_strata = kept_strata_rows(log, strata, exclude)?;
    let excluded_rows = RowRanges::new(exclude.excluded_row_ranges(log));
    let mut sums = vec![vec![0.0; metrics]; shares.len()];
    for (name, rows) in strata_rows(log, strata)? {
        let excluded = rows.intersection(&excluded_rows);
        if excluded.is_empty() {
            continue;
        }
        // The SeqPoints of this stratum; all of them when the exclusion emptied it.
        let stratum = kept_strata.iter().position(|(kept, _)| *kept == name);
        let candidates: Vec<usize> = (0..selection.seqpoints.len())
            .filter(|&i| stratum.is_none_or(|s| selection.seqpoints[i].stratum.unwrap_or(0) == s))
            .collect();
        let means = match stratum {
            Some(s) => key_means(log, &kept_strata[s].1, &excluded, metrics),
            None => HashMap::new(),
        };
        for row in excluded.iter() {
            let key = log.key(row);
            let sp = nearest_bin(&selection.seqpoints, &candidates, key);
            let value = match means.get(key) {
                Some((sum, n)) if *n > 0 => sum.iter().map(|s| s / *n as f64).collect(),
                _ => bin_means(&selection.seqpoints[sp]),
            };
            shares[sp].iterations += 1;
            for (total, v) in sums[sp].iter_mut().zip(value) {
                *total += v;
            }
        }
    }
    for (share, sum) in shares.iter_mut().zip(sums) {
        share.baseline_mean = sum
            .iter()
            .map(|s| {
                if share.iterations > 0 {
                    s / share.iterations as f64
                } else {
                    0.0
                }
            })
            .collect();
    }
    Ok(shares)
}

/// The bin (of `candidates`) whose key range holds `key`, else the nearest by the summed
/// distance to its range; ties go to the SeqPoint whose own key is nearer, then the first.
fn nearest_bin(seqpoints: &[SeqPoint], candidates: &[usize], key: &[u32]) -> usize {
    let distance = |i: usize| {
        let sp = &seqpoints[i];
        let to_range: u64 = key
            .iter()
            .zip(sp.bin_min.iter().zip(&sp.bin_max))
            .map(|(&k, (&lo, &hi))| {
                u64::from(lo.saturating_sub(k)) + u64::from(k.saturating_sub(hi))
            })
            .sum();
        let to_key: u64 = key
            .iter()
            .zip(&sp.key)
            .map(|(&k, &s)| u64::from(k.abs_diff(s)))
            .sum();
        (to_range, to_key)
    };
    *candidates
        .iter()
        .min_by_key(|&&i| distance(i))
        .expect("a selection has a SeqPoint in every stratum it keeps")
}

/// The summed baseline metrics and count over the kept `rows` of each key that an
/// `excluded` row has (only those: one pass, no entry per kept key).
fn key_means(
    log: &RunLog,
    rows: &RowRanges,
    excluded: &RowRanges,
    metrics: usize,
) -> HashMap<Vec<u32>, (Vec<f64>, u64)> {
    let mut means: HashMap<Vec<u32>, (Vec<f64>, u64)> = excluded
        .iter()
        .map(|row| (log.key(row).to_vec(), (vec![0.0; metrics], 0)))
        .collect();
    let baseline = &log.configs[0].metrics;
    for row in rows.iter() {
        if let Some((sums, count)) = means.get_mut(log.key(row)) {
            for (sum, metric) in sums.iter_mut().zip(baseline) {
                *sum += metric.values[row];
            }
            *count += 1;
        }
    }
    means
}

/// The bin's baseline mean of every metric.
fn bin_means(sp: &SeqPoint) -> Vec<f64> {
    sp.bin.moments[0].iter().map(|m| m.mean).collect()
}
