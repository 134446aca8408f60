//! Each key's iterations worth profiling: spread over its distribution of baseline values,
//! the median first, kept once worked out.

use crate::groups::{prefetch, KeyGroups, PREFETCH_AHEAD};
use crate::runlog::RunLog;
use crate::stats::compensated_sum;

use super::ALTERNATES;

/// Per key group, the eligible rows to profile (at most 1 + ALTERNATES): spread over the key's
/// distribution of baseline values, the median first (`SPREAD`). Made for one warm-up setting
/// and one set of key groups, and asked with the same log and groups. A group's rows are
/// worked out the first time it is asked for and kept: most groups are never picked, and
/// spreading every group's rows would read every value of the log once more.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidates {
    /// Rows before this one are warm-up, never picked.
    first: usize,
    spread: Vec<std::sync::OnceLock<Vec<u32>>>,
}

/// Quantiles of a key's baseline values that break ties among equal values, in the order the
/// samples are taken: the median, then the middles of the gaps left (van der Corput), so that
/// iterations of one value (a proxy cost gives every iteration of a key the same) spread over
/// the run instead of taking the key's first iterations, which run slow in real training.
const SPREAD: [f64; 1 + ALTERNATES] = [0.5, 0.25, 0.75, 0.125, 0.625, 0.375, 0.875, 0.0625, 0.5625];

/// `f64::total_cmp`'s order as an unsigned integer (the same bit flip it makes): negative
/// values reversed below the positive ones.
pub(crate) fn total_order_bits(v: f64) -> u64 {
    let bits = v.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    }
}

/// The value `total_order_bits` was made from.
pub(super) fn from_total_order_bits(bits: u64) -> f64 {
    if bits >> 63 == 1 {
        f64::from_bits(bits & !(1 << 63))
    } else {
        f64::from_bits(!bits)
    }
}

/// The rows of one key to profile, given its eligible `(value, row)` pairs (values as
/// `total_order_bits`, so that sorting compares plain integers): the median first (of two
/// middles, the earlier iteration), then one at a time the iteration whose value brings the
/// mean of those taken nearest the key's mean.
///
/// Why balanced: the mean of the first `s` is what a plan of `s` samples measures, and the
/// new configuration's time follows the baseline's within a key (a slow iteration is slow on
/// both). Samples taken at fixed quantiles (the median, then the lower quartile, ...) sit
/// below a key's mean for most `s` (the median and lower quantiles come first; skewed noise
/// puts the median below the mean), and the projection carried that lean to the new
/// configuration and the speedup. Balanced on the baseline, the samples' mean is the key's
/// at every `s` of two or more, as far as the values allow. Among equal values the
/// `SPREAD` quantile decides.
pub(super) fn spread_rows(eligible: &mut [(u64, u32)]) -> Vec<u32> {
    let n = eligible.len();
    if n == 0 {
        return Vec::new();
    }
    eligible.sort_unstable();
    let values: Vec<f64> = eligible
        .iter()
        .map(|&(bits, _)| from_total_order_bits(bits))
        .collect();
    let mean = compensated_sum(values.iter().copied()) / n as f64;
    let mut taken = vec![false; n];
    let mut ranks = Vec::with_capacity(n.min(SPREAD.len()));
    // An even count has two middles, equally near its median: the one whose value is nearer
    // the key's mean, as the balanced order goes on; of two equal values the earlier
    // iteration (both sit mid-run: equal values are in run order). When both are as near
    // (always so for two rows), a coin that neither value nor run order moves. Never the
    // earlier iteration of two values: that rule put the picks a third of the way into the
    // run on average (the earlier of two random rows), and a new configuration whose speedup
    // drifts over training was projected 5-8% off; nor the lower value, which leans low.
    let mut first = n / 2;
    if n >= 2 && n.is_multiple_of(2) {
        let (lower, upper) = (n / 2 - 1, n / 2);
        let (below, above) = (mean - values[lower], values[upper] - mean);
        let take_lower = if values[lower] == values[upper] {
            eligible[lower].1 < eligible[upper].1
        } else if (below - above).abs() > 1e-9 * below.abs().max(above.abs()) {
            below < above
        } else {
            fair_coin(eligible[lower].1, eligible[upper].1)
        };
        if take_lower {
            first = lower;
        }
    }
    // Among equal values the place in the run decides: every key's at the same quantile (its
    // middle iteration first) put every pick of a proxy cost mid-run, and a run whose speedup
    // drifts over training was projected off by it (the bundled logs, lengths only, one
    // iteration per SeqPoint: the speedup 1.7-2.8% low at K = 6-32, the picks at iterations
    // 170-300 of 450). The quantiles are turned by a fixed amount per key (the low bits of a
    // hash of its first row: `rotation`), which keeps them evenly spread within the key and
    // puts the keys' picks anywhere in the run.
    let turn = rotation(eligible.iter().map(|e| e.1).min().unwrap_or(0));
    let tied = |rank: usize| {
        let bits = eligible[rank].0;
        (
            eligible.partition_point(|e| e.0 < bits),
            eligible.partition_point(|e| e.0 <= bits),
        )
    };
    let (lo, hi) = tied(first);
    if hi - lo > 1 {
        first = lo + (((0.5 + turn).fract() * (hi - lo) as f64) as usize).min(hi - lo - 1);
    }
    taken[first] = true;
    ranks.push(first);
    let mut sum = values[first];
    for (j, q) in SPREAD.iter().enumerate().skip(1).take(n - 1) {
        // The value that would make the mean of the `j + 1` taken exactly the key's.
        let wanted = (j + 1) as f64 * mean - sum;
        // The ranks holding the nearest free value (compared as bits: a NaN mean finds some).
        let (lo, hi) = tied(nearest_free_rank(&values, &taken, wanted));
        let at = (((q + turn).fract() * n as f64).floor() as usize).clamp(lo, hi - 1);
        let rank = (0..n)
            .flat_map(|d| [at.checked_sub(d), Some(at + d)])
            .flatten()
            .find(|&r| (lo..hi).contains(&r) && !taken[r])
            .expect("a free rank holds the nearest free value");
        taken[rank] = true;
        ranks.push(rank);
        sum += values[rank];
    }
    ranks.iter().map(|&r| eligible[r].1).collect()
}

/// A fixed coin flip for a pair of rows: the low bit of a hash of both, so that over many
/// keys it falls either way half the time, whatever the rows' values and places in the run.
fn fair_coin(a: u32, b: u32) -> bool {
    splitmix(u64::from(a) << 32 | u64::from(b)) & 1 == 1
}

/// splitmix64's step and finaliser: a fixed, well-mixed hash of `x`.
fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A fixed turn in [0, 1) for the key whose first row is `row`: splitmix64's finaliser, its
/// top 53 bits as a fraction.
fn rotation(row: u32) -> f64 {
    (splitmix(u64::from(row)) >> 11) as f64 / (1u64 << 53) as f64
}

/// Of the sorted `values` not `taken`, the rank of one nearest `wanted` (the lower on a tie).
fn nearest_free_rank(values: &[f64], taken: &[bool], wanted: f64) -> usize {
    let split = values.partition_point(|&v| v < wanted);
    let below = (0..split).rev().find(|&r| !taken[r]);
    let above = (split..values.len()).find(|&r| !taken[r]);
    match (below, above) {
        (Some(b), Some(a)) if values[a] - wanted < wanted - values[b] => a,
        (Some(b), _) => b,
        (None, Some(a)) => a,
        (None, None) => unreachable!("fewer ranks taken than rows"),
    }
}

impl Candidates {
    pub fn new(log: &RunLog, groups: &KeyGroups, warmup: u64) -> Self {
        Candidates {
            first: usize::try_from(warmup).unwrap_or(usize::MAX).min(log.len()),
            spread: vec![std::sync::OnceLock::new(); groups.len()],
        }
    }

    /// A group's rows after the warm-up (a group's rows ascend: the warm-up's are a prefix).
    fn eligible<'g>(&self, groups: &'g KeyGroups, group: usize) -> &'g [u32] {
        let rows = groups.rows_of(group);
        &rows[rows.partition_point(|&r| (r as usize) < self.first)..]
    }

    /// Whether the group has an iteration past the warm-up (without spreading its rows).
    pub fn any(&self, groups: &KeyGroups, group: usize) -> bool {
        !self.eligible(groups, group).is_empty()
    }

    /// The group's rows to profile, in order; `log` and `groups` are the ones it was made for.
    pub fn rows(&self, log: &RunLog, groups: &KeyGroups, group: usize) -> &[u32] {
        self.spread[group].get_or_init(|| {
            let values = &log.configs[0].metrics[0].values;
            let eligible = self.eligible(groups, group);
            let mut keyed: Vec<(u64, u32)> = eligible
                .iter()
                .enumerate()
                .map(|(i, &r)| {
                    // The rows are spread over the log: overlap the reads (as the gather of
                    // the medians does).
                    if let Some(&ahead) = eligible.get(i + PREFETCH_AHEAD) {
                        prefetch(values, ahead as usize);
                    }
                    (total_order_bits(values[r as usize]), r)
                })
                .collect();
            spread_rows(&mut keyed)
        })
    }
}
