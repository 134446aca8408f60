//! Which iterations a plan lists: each bin's rows, the candidates beyond its SeqPoint (after
//! warm-up, within the kept strata), the seeded draws among them, and the caps they set.

use rand::SeedableRng;
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

/// How many iterations a SeqPoint's bin holds in reserve beyond its plan's: as many again as
/// the plan lists, and at least this many. `project --target-error` tops a plan up from the
/// iterations the SeqPoints file lists; sized for the baseline's noise, a plan measured on a
/// new configuration 2-3x noisier needs 4-9x its samples, which this reserve gives the
/// SeqPoints planned at a few samples each (most of them). A plan of hundreds per SeqPoint
/// doubles its file (the 500,000-row, 490-key plan at 0.01%: 18 -> 36 MB).
pub const RESERVE_MIN: u64 = 32;

/// The bin's reserve: up to `count` rows it may profile beyond `listed` (its plan's rows,
/// the SeqPoint's own first), drawn at random without replacement from the bin's other rows
/// after warm-up (seeded by the SeqPoint, as `draw_rows`'s draws). Rows are addressed through
/// the bin's key groups (a running count over them), so no bin's rows are listed or sorted:
/// O(groups + count) per bin. In the order drawn: a top-up takes them first to last.
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
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(
        seed ^ (sp.id as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03),
    );
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
