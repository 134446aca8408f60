//! Which iterations a plan lists: each bin's rows, the candidates beyond its SeqPoint (after
//! warm-up, within the kept strata), the seeded draws among them, and the caps they set.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::groups::KeyGroups;
use crate::pick::SeqPoint;
use crate::runlog::RunLog;
use crate::select::{kept_strata_rows, SelectError, SelectOptions, Selection};

/// Every row of each SeqPoint's bin (ascending), in SeqPoint order.
pub fn bin_rows(log: &RunLog, selection: &Selection) -> Result<Vec<Vec<u32>>, SelectError> {
    Ok(bin_rows_in(
        &strata_groups(log, &selection.options)?,
        selection,
    ))
}

/// The key groups of each stratum a selection with `options` is made on (its kept rows).
pub(super) fn strata_groups(
    log: &RunLog,
    options: &SelectOptions,
) -> Result<Vec<KeyGroups>, SelectError> {
    Ok(kept_strata_rows(log, options.strata, &options.exclude)?
        .iter()
        .map(|(_, rows)| KeyGroups::from_rows(log, rows))
        .collect())
}

/// `bin_rows` from the key groups of each stratum the selection was made on.
pub(super) fn bin_rows_in(groups: &[KeyGroups], selection: &Selection) -> Vec<Vec<u32>> {
    selection
        .seqpoints
        .iter()
        .map(|sp| rows_of_bin(&groups[sp.stratum.unwrap_or(0)], sp))
        .collect()
}

pub(super) fn rows_of_bin(groups: &KeyGroups, sp: &SeqPoint) -> Vec<u32> {
    let mut rows: Vec<u32> = sp
        .bin
        .groups
        .iter()
        .flat_map(|&g| groups.rows_of(g).iter().copied())
        .collect();
    rows.sort_unstable();
    rows
}

/// How many iterations of a SeqPoint's bin can be profiled: its own and those after warm-up,
/// counted per key group without listing rows (the search over K stays O(groups) per K).
pub(super) fn cap_of(groups: &KeyGroups, sp: &SeqPoint, warmup: u64) -> u64 {
    let eligible: usize = sp
        .bin
        .groups
        .iter()
        .map(|&g| {
            let rows = groups.rows_of(g);
            rows.len() - rows.partition_point(|&r| u64::from(r) < warmup)
        })
        .sum();
    let own_is_eligible = sp.row as u64 >= warmup;
    (eligible - usize::from(own_is_eligible)) as u64 + 1
}

/// Rows that may be profiled besides the SeqPoint's own: after warm-up (by row, as the pick).
pub(super) fn extra_candidates(rows: &[u32], sp: &SeqPoint, warmup: u64) -> Vec<u32> {
    rows.iter()
        .copied()
        .filter(|&r| u64::from(r) >= warmup && r as usize != sp.row)
        .collect()
}

/// The rows a SeqPoint's bin may profile besides its own (`extra_candidates` of its bin's
/// rows), counted and tested through the key groups the SeqPoint was picked from, and listed
/// only for a bin that seeded draws reach: listing every bin's rows held a copy of the run's
/// row index, twice, and sorted it.
pub(super) struct BinCandidates<'a> {
    log: &'a RunLog,
    pub(super) groups: &'a KeyGroups,
    pub(super) sp: &'a SeqPoint,
    warmup: u64,
}

impl<'a> BinCandidates<'a> {
    /// Each SeqPoint's candidates, from the key groups of each stratum it was picked in.
    pub(super) fn of_each(
        log: &'a RunLog,
        groups: &'a [KeyGroups],
        seqpoints: &'a [SeqPoint],
        warmup: u64,
    ) -> Vec<Self> {
        seqpoints
            .iter()
            .map(|sp| BinCandidates {
                log,
                groups: &groups[sp.stratum.unwrap_or(0)],
                sp,
                warmup,
            })
            .collect()
    }

    pub(super) fn count(&self) -> usize {
        (cap_of(self.groups, self.sp, self.warmup) - 1) as usize
    }

    /// Whether `row` is one of them: after warm-up, not the SeqPoint's own, and in one of the
    /// bin's key groups (of the stratum's rows).
    pub(super) fn contains(&self, row: u32) -> bool {
        let index = row as usize;
        u64::from(row) >= self.warmup
            && index != self.sp.row
            && index < self.log.len()
            && self.groups.group_of(self.log.key(index)).is_some_and(|g| {
                self.sp.bin.groups.contains(&g)
                    && self.groups.rows_of(g).binary_search(&row).is_ok()
            })
    }

    /// All of them, ascending.
    pub(super) fn list(&self) -> Vec<u32> {
        extra_candidates(&rows_of_bin(self.groups, self.sp), self.sp, self.warmup)
    }
}

/// The SeqPoint's row, then its alternates (the picked key's iterations nearest its centre,
/// then the next-best keys'), then seeded draws without replacement from the rest of its bin:
/// `samples` rows in all (at most the candidates). The alternates keep the profiled
/// iterations representative, which is the design the interval describes.
pub(super) fn draw_rows(
    log: &RunLog,
    candidates: &BinCandidates,
    samples: u64,
    seed: u64,
) -> Vec<u32> {
    let sp = candidates.sp;
    let extra = (samples.saturating_sub(1) as usize).min(candidates.count());
    let mut rows = vec![sp.row as u32];
    for &alternate in &sp.alternates {
        if rows.len() > extra {
            break;
        }
        let row = log.iterations.row_of(alternate).map(|r| r as u32);
        if let Some(r) = row.filter(|&r| candidates.contains(r)) {
            if !rows.contains(&r) {
                rows.push(r);
            }
        }
    }
    if rows.len() <= extra {
        let mut rest = candidates.list();
        rest.retain(|r| !rows.contains(r));
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(
            seed ^ (sp.id as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        let more = extra + 1 - rows.len();
        let mut drawn: Vec<u32> = rand::seq::index::sample(&mut rng, rest.len(), more)
            .iter()
            .map(|i| rest[i])
            .collect();
        drawn.sort_unstable();
        rows.extend(drawn);
    }
    rows
}

/// The least a SeqPoint's bin holds in reserve beyond its plan's (where the bin has them):
/// a SeqPoint planned at one or two samples still shows its noise and can be topped up.
pub const RESERVE_MIN: u64 = 32;

/// The iterations a bin holds in reserve per iteration its plan lists. `project
/// --target-error` tops a plan up from the iterations the SeqPoints file lists only. The plan
/// assumes the new configuration's noise is the baseline's; one `r` times as noisy needs
/// about `r^2` times the plan, and more (`RESERVE_SLACK`). On the redraw example's new
/// configuration 4x as noisy as the baseline (200 runs of the timed flow at 1%), a reserve of
/// as many again as the plan (at least 32) left 76.5% of the runs short, every one because
/// the listed iterations were spent; 15 per planned iteration (16x the plan) 12%; 24 none.
pub const RESERVE_PER_ROW: u64 = 24;

/// The reserve rows a plan lists in all, beyond each bin's `RESERVE_MIN`, before it takes
/// fewer per planned iteration (never fewer than one): each row is 130-280 bytes of the
/// SeqPoints file, and a plan of thousands of iterations at 24 each would list most of a
/// large run (the 500,000-row, 490-key plan at 0.01% profiles 114,365 iterations; its file
/// is 33 MB with one reserve row per planned one).
pub const RESERVE_ROWS: u64 = 20_000;

/// Reserve rows per planned iteration for a plan of `planned` iterations (`RESERVE_PER_ROW`,
/// fewer past `RESERVE_ROWS` in all, at least one).
pub fn reserve_per_row(planned: u64) -> u64 {
    (RESERVE_ROWS / planned.max(1)).clamp(1, RESERVE_PER_ROW)
}

/// A bin's reserve for its `samples` planned iterations at `per_row` each (at least
/// `RESERVE_MIN`); the bin may hold fewer.
pub fn reserve_count(samples: u64, per_row: u64) -> u64 {
    samples.saturating_mul(per_row).max(RESERVE_MIN)
}

/// What a noisier new configuration asks beyond the square of its noise ratio: Student's t
/// at the first measurements' few degrees of freedom, and a plan allocated by the baseline's
/// noise. Measured as the reserve that met every run of the 4x noisier flow (25x the plan,
/// `RESERVE_PER_ROW`) over `4^2`.
const RESERVE_SLACK: f64 = 25.0 / 16.0;

/// How noisy, against the baseline's noise the plan assumes, a new configuration may be for a
/// top-up to reach the plan's target from `per_row` reserve rows per planned iteration:
/// variance goes with the square of the noise and down with the iterations, less the slack.
pub fn reserve_reaches_noise(per_row: u64) -> f64 {
    ((1 + per_row) as f64 / RESERVE_SLACK).sqrt()
}

/// The bin's reserve: up to `count` rows it may profile beyond `listed` (its plan's rows),
/// drawn at random without replacement from the bin's rows after warm-up that `listed` does
/// not hold, the SeqPoint's own among them where it is not listed (seeded by the SeqPoint,
/// as `draw_rows`'s draws). Rows are addressed through the bin's key groups (a running count
/// over them), so no bin's rows are listed or sorted: O(groups + count) per bin. In the
/// order drawn: a top-up takes them first to last.
pub(super) fn reserve_rows(
    candidates: &BinCandidates,
    listed: &[u32],
    count: u64,
    seed: u64,
) -> Vec<u32> {
    let sp = candidates.sp;
    let groups = candidates.groups;
    // Each group's eligible rows (after warm-up), as a slice, and the running count.
    let eligible: Vec<&[u32]> = sp
        .bin
        .groups
        .iter()
        .map(|&g| {
            let rows = groups.rows_of(g);
            &rows[rows.partition_point(|&r| u64::from(r) < candidates.warmup)..]
        })
        .collect();
    let mut ends = Vec::with_capacity(eligible.len());
    let mut total = 0usize;
    for rows in &eligible {
        total += rows.len();
        ends.push(total);
    }
    let row_at = |i: usize| -> u32 {
        let g = ends.partition_point(|&end| end <= i);
        let start = if g == 0 { 0 } else { ends[g - 1] };
        eligible[g][i - start]
    };
    let wanted = (count as usize).min(total.saturating_sub(listed.len()));
    if wanted == 0 {
        return Vec::new();
    }
    let mut rng = bin_draws_rng(seed, sp.id, 0xD1B5_4A32_D192_ED03, row_at(0), total);
    // Enough draws that the listed rows among them still leave `wanted`.
    let drawn = (wanted + listed.len()).min(total);
    let mut reserve = Vec::with_capacity(wanted);
    for i in rand::seq::index::sample(&mut rng, total, drawn) {
        let row = row_at(i);
        if reserve.len() < wanted && !listed.contains(&row) {
            reserve.push(row);
        }
    }
    reserve
}

/// A target's plan profiles a SeqPoint's own iteration and its alternates only: the interval
/// describes representative iterations, not draws from anywhere in the bin. A bin of one key
/// is all representative.
pub(super) fn representative_caps(seqpoints: &[SeqPoint], caps: &[u64]) -> Vec<u64> {
    seqpoints
        .iter()
        .zip(caps)
        .map(|(sp, &cap)| {
            if sp.bin.groups.len() == 1 {
                cap
            } else {
                cap.min(1 + sp.alternates.len() as u64)
            }
        })
        .collect()
}

/// A bin's rows in the order of their proxy cost (key groups by the first metric's value at
/// their key, a group's rows by row), the SeqPoint's own among them (where its key sorts,
/// ahead of its group's rows after warm-up if it is itself in warm-up): what a systematic
/// plan (`PlanDesign::Systematic`) spreads its draws over. Addressed through the key groups
/// as `reserve_rows`'s, no row listed.
struct ProxyOrder<'a> {
    slices: Vec<&'a [u32]>,
    ends: Vec<usize>,
    own: u32,
    /// Where the SeqPoint's own row stands in the order, and whether the slices hold it.
    own_at: usize,
    own_listed: bool,
}

impl<'a> ProxyOrder<'a> {
    fn of(log: &RunLog, candidates: &'a BinCandidates) -> ProxyOrder<'a> {
        let sp = candidates.sp;
        let groups = candidates.groups;
        let proxy = &log.configs[0].metrics[0].values;
        let mut order: Vec<(f64, usize)> = sp
            .bin
            .groups
            .iter()
            .filter_map(|&g| groups.rows_of(g).first().map(|&r| (proxy[r as usize], g)))
            .collect();
        order.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let own = sp.row as u32;
        let own_group = groups.group_of(log.key(sp.row));
        let (mut slices, mut ends) = (Vec::with_capacity(order.len()), Vec::new());
        let (mut total, mut own_at, mut own_listed) = (0usize, None, false);
        for &(_, g) in &order {
            let rows = groups.rows_of(g);
            let eligible = &rows[rows.partition_point(|&r| u64::from(r) < candidates.warmup)..];
            if Some(g) == own_group && own_at.is_none() {
                match eligible.binary_search(&own) {
                    Ok(i) => {
                        own_at = Some(total + i);
                        own_listed = true;
                    }
                    Err(_) => own_at = Some(total),
                }
            }
            total += eligible.len();
            slices.push(eligible);
            ends.push(total);
        }
        ProxyOrder {
            slices,
            ends,
            own,
            own_at: own_at.unwrap_or(0),
            own_listed,
        }
    }

    /// How many rows the order holds, the SeqPoint's own counted once.
    fn len(&self) -> usize {
        self.ends.last().copied().unwrap_or(0) + usize::from(!self.own_listed)
    }

    fn row_at(&self, i: usize) -> u32 {
        let i = if self.own_listed || i < self.own_at {
            i
        } else if i == self.own_at {
            return self.own;
        } else {
            i - 1
        };
        let g = self.ends.partition_point(|&end| end <= i);
        let start = if g == 0 { 0 } else { self.ends[g - 1] };
        self.slices[g][i - start]
    }
}

/// `0..count` in the order of their bit-reversed indices (van der Corput's): every prefix
/// of it is spread evenly over `0..count`, so a top-up that takes the first few of a round's
/// draws still measures the whole bin, not one end of it.
fn spread_order(count: usize) -> Vec<usize> {
    let bits = usize::BITS - count.saturating_sub(1).leading_zeros();
    let mut order: Vec<usize> = (0..count).collect();
    order.sort_by_key(|&i| {
        if bits == 0 {
            0
        } else {
            i.reverse_bits() >> (usize::BITS - bits)
        }
    });
    order
}

/// The generator of one bin's draws (`stream` tells a design's apart): the user's seed, the
/// SeqPoint, and the bin's own rows (the first and how many). Seeded by the first two alone,
/// a seed drew at the same places of every run's bins in key order, and the default seed is
/// everyone's: where the ratio drifts with the key within a bin, every run leaned the same
/// way. On generated packed runs keyed by `--key fit` (K = 7-8, about 37 iterations), seed 0
/// in every run leaned the new total +0.32% over 120 runs (4 standard errors) and its
/// intervals held 111; each run with its own seed, -0.01% and 116.
fn bin_draws_rng(
    seed: u64,
    seqpoint: usize,
    stream: u64,
    first_row: u32,
    rows: usize,
) -> Xoshiro256PlusPlus {
    let bin = (u64::from(first_row) << 32 | rows as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    Xoshiro256PlusPlus::seed_from_u64(seed ^ (seqpoint as u64 + 1).wrapping_mul(stream) ^ bin)
}

/// A systematic plan's rows (`PlanDesign::Systematic`) and its reserve, in proxy order
/// (`ProxyOrder`): the bin's rows split into `samples` strata of equal count and a seeded
/// draw at a random place in each (one stratum: the SeqPoint's own, the method's SeqPoint);
/// then the reserve, round by round, each round halving every stratum's cells and
/// drawing once in each half that holds no row yet (one row per cell after each round), the
/// cells of a round taken in `spread_order`. The rows profiled and any prefix of the reserve
/// a top-up takes so measure each part of the bin's proxy order in proportion to its share:
/// a cost that steps where the proxy does not is measured at each step as often as the bin
/// holds it, which the successive differences `project --baseline` takes its noise from then
/// see only where two neighbouring draws straddle a step.
pub(super) fn systematic_rows(
    log: &RunLog,
    candidates: &BinCandidates,
    samples: u64,
    reserve: u64,
    seed: u64,
) -> (Vec<u32>, Vec<u32>) {
    let sp = candidates.sp;
    let order = ProxyOrder::of(log, candidates);
    let n = order.len();
    let strata = (samples.max(1) as usize).min(n.max(1));
    let first = if n > 0 { order.row_at(0) } else { 0 };
    let mut rng = bin_draws_rng(seed, sp.id, 0xA24B_AED4_963E_E407, first, n);
    let bound = |h: usize, cells: usize| h * n / cells;
    // Positions in the order taken so far, ascending.
    let mut taken: Vec<usize> = if strata == 1 {
        vec![order.own_at]
    } else {
        (0..strata)
            .map(|h| (bound(h, strata), bound(h + 1, strata)))
            .filter(|(lo, hi)| lo < hi)
            .map(|(lo, hi)| rng.gen_range(lo..hi))
            .collect()
    };
    let rows: Vec<u32> = taken.iter().map(|&i| order.row_at(i)).collect();
    let wanted = (reserve as usize).min(n.saturating_sub(rows.len()));
    let mut more = Vec::with_capacity(wanted);
    let mut cells = strata;
    while more.len() < wanted && cells < 2 * n.max(1) {
        cells *= 2;
        let empty: Vec<(usize, usize)> = (0..cells)
            .map(|c| (bound(c, cells), bound(c + 1, cells)))
            .filter(|&(lo, hi)| {
                lo < hi && {
                    let first = taken.partition_point(|&t| t < lo);
                    first == taken.len() || taken[first] >= hi
                }
            })
            .collect();
        let mut round = Vec::new();
        for i in spread_order(empty.len()) {
            if more.len() + round.len() >= wanted {
                break;
            }
            let (lo, hi) = empty[i];
            round.push(rng.gen_range(lo..hi));
        }
        more.extend(round.iter().map(|&i| order.row_at(i)));
        taken.extend(round);
        taken.sort_unstable();
    }
    (rows, more)
}

#[cfg(test)]
mod tests {
    use super::{reserve_count, reserve_per_row, reserve_reaches_noise, spread_order};

    /// By hand: 24 per planned iteration up to 833 planned (20,000 / 24), then 20,000 shared:
    /// 2,000 planned take 10 each, 114,365 one; a bin takes 32 at least.
    #[test]
    fn the_reserve_is_24_per_planned_iteration_until_20000_in_all() {
        assert_eq!(reserve_per_row(0), 24);
        assert_eq!(reserve_per_row(59), 24);
        assert_eq!(reserve_per_row(833), 24);
        assert_eq!(reserve_per_row(834), 23);
        assert_eq!(reserve_per_row(2_000), 10);
        assert_eq!(reserve_per_row(20_000), 1);
        assert_eq!(reserve_per_row(114_365), 1);
        assert_eq!(reserve_count(1, 24), 32);
        assert_eq!(reserve_count(2, 24), 48);
        assert_eq!(reserve_count(300, 1), 300);
        assert_eq!(reserve_count(u64::MAX, 24), u64::MAX);
        // 25x the plan over the slack of 25 / 16 is 16x: 4x the noise; 2x the plan, 1.13x.
        assert!((reserve_reaches_noise(24) - 4.0).abs() < 1e-12);
        assert!((reserve_reaches_noise(1) - (2.0f64 * 16.0 / 25.0).sqrt()).abs() < 1e-12);
    }

    /// Bit-reversed order, by hand: 8 -> 0 4 2 6 1 5 3 7 (each prefix of length 2^j one per
    /// cell of 8 / 2^j); 5 sorts 0 1 2 3 4 by 0 4 2 6 1 (their 3-bit reversals).
    #[test]
    fn the_spread_order_is_the_bit_reversed_one() {
        assert_eq!(spread_order(8), vec![0, 4, 2, 6, 1, 5, 3, 7]);
        assert_eq!(spread_order(5), vec![0, 4, 2, 1, 3]);
        assert_eq!(spread_order(1), vec![0]);
        assert!(spread_order(0).is_empty());
    }
}
