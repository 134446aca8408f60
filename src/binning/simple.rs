//! `uniform` (equal-width ranges of the key) and `quantile` (equal iteration mass).
//! For a two-length key both work along the total length (src + tgt).

use super::Bins;
use crate::groups::KeyGroups;

/// Groups in order of total length (ties by key): the axis both methods cut.
fn by_total_length(groups: &KeyGroups) -> Vec<usize> {
    let mut order: Vec<usize> = (0..groups.len()).collect();
    if groups.dims > 1 {
        order.sort_by_key(|&g| (groups.total_length(g), groups.key(g).to_vec()));
    }
    order
}

/// Turn a bin index per group into non-empty bins, in bin order.
fn collect(assignment: &[(usize, usize)], k: usize) -> Bins {
    let mut bins: Bins = vec![Vec::new(); k];
    for &(group, bin) in assignment {
        bins[bin].push(group);
    }
    bins.retain(|b| !b.is_empty());
    for b in &mut bins {
        b.sort_unstable();
    }
    bins
}

/// K equal-width ranges between the shortest and longest key; empty ranges are dropped.
pub fn uniform_bins(groups: &KeyGroups, k: usize) -> Bins {
    let order = by_total_length(groups);
    let lengths: Vec<f64> = order
        .iter()
        .map(|&g| groups.total_length(g) as f64)
        .collect();
    let (lo, hi) = (lengths[0], lengths[lengths.len() - 1]);
    let width = (hi - lo) / k as f64;
    let assignment: Vec<(usize, usize)> = order
        .iter()
        .zip(&lengths)
        .map(|(&g, &len)| {
            let bin = if width > 0.0 {
                (((len - lo) / width) as usize).min(k - 1)
            } else {
                0
            };
            (g, bin)
        })
        .collect();
    collect(&assignment, k)
}

/// K ranges of about equal iteration count; a group is never split, so heavy groups may
/// leave fewer than K bins.
pub fn quantile_bins(groups: &KeyGroups, k: usize) -> Bins {
    let order = by_total_length(groups);
    let total = groups.iterations() as f64;
    let mut before = 0.0;
    let assignment: Vec<(usize, usize)> = order
        .iter()
        .map(|&g| {
            let n = groups.counts[g] as f64;
            // A group belongs to the quantile its mass midpoint falls in.
            let bin = ((k as f64 * (before + n / 2.0) / total) as usize).min(k - 1);
            before += n;
            (g, bin)
        })
        .collect();
    collect(&assignment, k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(keys: &[u32]) -> KeyGroups {
        let mut text = String::from("seq_len\n");
        for k in keys {
            text.push_str(&format!("{k}\n"));
        }
        let log = crate::runlog::test_log(&text);
        KeyGroups::from_log(&log)
    }

    #[test]
    fn uniform_by_hand() {
        // Keys 0..=100, width 25 for K=4: 0,10,20 | 30,40 | 60 | 100
        let g = groups(&[0, 10, 20, 30, 40, 60, 100]);
        assert_eq!(
            uniform_bins(&g, 4),
            vec![vec![0, 1, 2], vec![3, 4], vec![5], vec![6]]
        );
        // An empty middle range is dropped.
        let g = groups(&[0, 1, 100]);
        assert_eq!(uniform_bins(&g, 3), vec![vec![0, 1], vec![2]]);
    }

    #[test]
    fn quantile_by_hand() {
        // Eight iterations over four keys, two each: K=2 puts two keys in each bin.
        let g = groups(&[1, 1, 2, 2, 3, 3, 4, 4]);
        assert_eq!(quantile_bins(&g, 2), vec![vec![0, 1], vec![2, 3]]);
        // One heavy key cannot be split: fewer bins than asked.
        let g = groups(&[5, 5, 5, 5, 5, 5, 9]);
        assert_eq!(quantile_bins(&g, 4), vec![vec![0], vec![1]]);
    }
}
