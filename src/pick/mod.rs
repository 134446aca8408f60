//! The pick: a representative key per bin, one concrete iteration of
//! that key to profile, alternates, and the bin's pooled statistics for projection.

//! One job per file: `candidates` (each key's iterations worth profiling, spread over its
//! values), `curve` (each key's expected baseline value in its bin); this file holds the pick's rules, the SeqPoint and the picker that makes them.

mod candidates;
mod curve;
#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::binning::{Binner, BinningError, Bins, Method};
use crate::groups::{KeyGroups, Moments};
use crate::runlog::RunLog;

pub(crate) use candidates::total_order_bits;
pub use candidates::Candidates;
pub use curve::BaselineCurve;

/// Concrete iterations kept per key group: one to profile plus alternates.
pub const ALTERNATES: usize = 8;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum Pick {
    NearestMean,
    Median,
    Centroid,
    Mode,
}

impl Pick {
    pub const ALL: [Pick; 4] = [Pick::NearestMean, Pick::Median, Pick::Centroid, Pick::Mode];

    pub fn name(self) -> &'static str {
        match self {
            Pick::NearestMean => "nearest-mean",
            Pick::Median => "median",
            Pick::Centroid => "centroid",
            Pick::Mode => "mode",
        }
    }
}

/// A bin's pooled statistics: what the projection's interval is computed from.
#[derive(Debug, Clone, PartialEq)]
pub struct BinSummary {
    pub weight: u64,
    /// `[config][metric]`.
    pub moments: Vec<Vec<Moments>>,
    /// `[metric]`: within-bin co-moment of baseline and compare (empty without compare).
    pub cross: Vec<f64>,
    pub groups: Vec<usize>,
    /// Each member key's expected baseline value (`project`'s ratio divides by it).
    pub curve: BaselineCurve,
}

impl BinSummary {
    fn new(groups: &KeyGroups, members: &[usize]) -> Self {
        let moments: Vec<Vec<Moments>> = groups
            .moments
            .iter()
            .map(|config| {
                config
                    .iter()
                    .map(|metric| Moments::pooled(members.iter().map(|&g| &metric[g])))
                    .collect()
            })
            .collect();
        let cross = (0..groups.cross.len())
            .map(|m| {
                let (a, b) = (&moments[0][m], &moments[1][m]);
                members
                    .iter()
                    .map(|&g| {
                        let (ga, gb) = (&groups.moments[0][m][g], &groups.moments[1][m][g]);
                        groups.cross[m][g]
                            + ga.count as f64 * (ga.mean - a.mean) * (gb.mean - b.mean)
                    })
                    .sum()
            })
            .collect();
        BinSummary {
            weight: members.iter().map(|&g| groups.counts[g]).sum(),
            moments,
            cross,
            groups: members.to_vec(),
            curve: BaselineCurve::of(groups, members),
        }
    }
}

/// One bin's representative: the iteration to profile and what it stands for. Its id is its
/// bin's place in its K's bins; the rest (`Picked`, read through `Deref`: `sp.row`,
/// `sp.bin`) depends on the bin alone and is shared, so a SeqPoint clones in a reference
/// count. The plan's search asks for every bin of every K it costs (485,000 SeqPoints over
/// 5,949 distinct bins with `--strata phases:4` at `--max-bins 500`), and a picker hands out
/// a bin it made at an earlier K again (`PickCache`), its id the new K's.
#[derive(Debug, Clone, PartialEq)]
pub struct SeqPoint {
    pub id: usize,
    picked: Arc<Picked>,
}

impl SeqPoint {
    /// SeqPoint `id` of the bin `picked` describes.
    pub fn new(id: usize, picked: Picked) -> Self {
        SeqPoint {
            id,
            picked: Arc::new(picked),
        }
    }

    /// The same SeqPoint listing `alternates` after its own iteration.
    pub fn with_alternates(&self, alternates: Vec<u64>) -> Self {
        SeqPoint::new(
            self.id,
            Picked {
                alternates,
                listed: Vec::new(),
                ..(*self.picked).clone()
            },
        )
    }
}

impl std::ops::Deref for SeqPoint {
    type Target = Picked;

    fn deref(&self) -> &Picked {
        &self.picked
    }
}

/// What a SeqPoint says of its bin, whatever its id: the same for the same bin at any K.
#[derive(Debug, Clone, PartialEq)]
pub struct Picked {
    pub stratum: Option<usize>,
    pub iteration: u64,
    pub row: usize,
    pub epoch: Option<u32>,
    pub key: Vec<u32>,
    pub weight: u64,
    pub bin_min: Vec<u32>,
    pub bin_max: Vec<u32>,
    pub alternates: Vec<u64>,
    /// `[config][metric]` at the chosen iteration.
    pub values: Vec<Vec<f64>>,
    pub bin: BinSummary,
    /// `[metric]`: the picked key's noise and offset from its bin on the baseline (what the
    /// projection's interval is computed from).
    pub key_noise: Vec<crate::estimate::KeyNoise>,
    /// The values at the rows the pick lists (`listed_values`), `[config][metric]`, then row
    /// by row; empty where the alternates were replaced.
    listed: Vec<f64>,
}

impl Picked {
    /// `config`'s values of `metric` at the rows the pick lists: its own, then each
    /// alternate's, in order (what a plan at the key profiles first); `None` where the
    /// alternates were replaced (`SeqPoint::with_alternates`). Why held here: the plan's search
    /// reads them for every bin of every K it costs, and off the log, whose rows lie scattered
    /// over the run, those reads missed the CPU's caches (60% of building its running sums
    /// with `--strata phases:4` at `--max-bins 500`).
    pub fn listed_values(&self, config: usize, metric: usize) -> Option<&[f64]> {
        let rows = 1 + self.alternates.len();
        let metrics = self.values.first().map_or(0, Vec::len);
        let at = (config * metrics + metric) * rows;
        self.listed.get(at..at + rows)
    }
}

/// The bins a picker has made, by their members, each as `Picked` (a bin's SeqPoint but its
/// id): what makes the plan's search over K cheap where the bins of one K recur at the next
/// (with `--strata phases:4` at `--max-bins 500`, 98.8% of the bins asked for had been made
/// at one of the two Ks before; building each whole was a third of the search's time). A bin's
/// `Picked` is a function of its members and the picker, so a bin handed out from here is
/// the one made afresh, to the bit, and so are the plans read off it.
///
/// Two generations bound its memory: bins go into the current one; when it holds more than
/// `CACHE_MEMBERS_PER_GROUP` times the picker's key groups in members (two Ks' bins at
/// least, as one K's hold each group once), it becomes the previous one and the one before
/// is dropped. A bin found in the previous generation moves to the current one. (Four Ks'
/// bins a generation held 7 MB more at that run's peak of 58 MB, and gained nothing.)
#[derive(Default)]
struct PickCache {
    current: HashMap<Box<[usize]>, Arc<Picked>, MembersHash>,
    previous: HashMap<Box<[usize]>, Arc<Picked>, MembersHash>,
    /// Members (at least one per bin) held by `current`.
    held: usize,
    /// Members `current` may hold before it becomes the previous generation.
    budget: usize,
}

/// `PickCache`'s hash of a bin's members: a multiply and rotate per word (after FxHash).
/// The default hasher, proof against keys chosen to collide, was 3% of the plan's search
/// (a lookup per bin per K); a bin's members are group indices, nobody's input to attack.
type MembersHash = std::hash::BuildHasherDefault<WordHasher>;

#[derive(Default)]
struct WordHasher(u64);

impl std::hash::Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    // A slice of integers hashes as its bytes in one call: taken a word at a time.
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            self.write_u64(u64::from_le_bytes(word.try_into().expect("8 bytes")));
        }
        for &byte in words.remainder() {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn write_usize(&mut self, word: usize) {
        self.write_u64(word as u64);
    }
}

/// A `PickCache` generation's size in members, per key group of the picker: two Ks' bins.
const CACHE_MEMBERS_PER_GROUP: usize = 2;

impl PickCache {
    fn new(groups: usize) -> Self {
        PickCache {
            budget: CACHE_MEMBERS_PER_GROUP * groups.max(1),
            ..PickCache::default()
        }
    }

    fn get(&mut self, members: &[usize]) -> Option<Arc<Picked>> {
        if let Some(picked) = self.current.get(members) {
            return Some(Arc::clone(picked));
        }
        let (members, picked) = self.previous.remove_entry(members)?;
        self.insert(members, Arc::clone(&picked));
        Some(picked)
    }

    fn insert(&mut self, members: Box<[usize]>, picked: Arc<Picked>) {
        self.held += members.len().max(1);
        self.current.insert(members, picked);
        if self.held > self.budget {
            self.previous = std::mem::take(&mut self.current);
            self.held = 0;
        }
    }

    /// Members held over both generations (the bound a test holds it to).
    #[cfg(test)]
    fn members(&self) -> usize {
        self.current
            .keys()
            .chain(self.previous.keys())
            .map(|m| m.len().max(1))
            .sum()
    }
}

/// Bin members ordered by how well each represents the bin under `pick`.
fn ranked_members(groups: &KeyGroups, members: &[usize], pick: Pick) -> Vec<usize> {
    let score = member_scores(groups, members, pick);
    let mut order: Vec<usize> = (0..members.len()).collect();
    order.sort_by(|&a, &b| {
        score[a]
            .total_cmp(&score[b])
            .then(members[a].cmp(&members[b]))
    });
    order.into_iter().map(|i| members[i]).collect()
}

/// How far each member is from representing the bin under `pick` (lower is better).
fn member_scores(groups: &KeyGroups, members: &[usize], pick: Pick) -> Vec<f64> {
    let weight = |g: usize| groups.counts[g] as f64;
    let total: f64 = members.iter().map(|&g| weight(g)).sum();
    let score: Vec<f64> = match pick {
        Pick::NearestMean => {
            let means = &groups.moments[0][0];
            let bin_mean = members
                .iter()
                .map(|&g| weight(g) * means[g].mean)
                .sum::<f64>()
                / total;
            members
                .iter()
                .map(|&g| (means[g].mean - bin_mean).abs())
                .collect()
        }
        Pick::Median => {
            let mut by_length: Vec<usize> = members.to_vec();
            by_length.sort_by_key(|&g| (groups.total_length(g), g));
            let mut seen = 0.0;
            let median = *by_length
                .iter()
                .find(|&&g| {
                    seen += weight(g);
                    seen >= total / 2.0
                })
                .unwrap_or(&by_length[0]);
            let at = groups.total_length(median) as f64;
            members
                .iter()
                .map(|&g| (groups.total_length(g) as f64 - at).abs())
                .collect()
        }
        Pick::Centroid => {
            let centre: Vec<f64> = (0..groups.dims)
                .map(|d| {
                    members
                        .iter()
                        .map(|&g| weight(g) * f64::from(groups.key(g)[d]))
                        .sum::<f64>()
                        / total
                })
                .collect();
            members
                .iter()
                .map(|&g| {
                    groups
                        .key(g)
                        .iter()
                        .zip(&centre)
                        .map(|(&k, c)| (f64::from(k) - c).powi(2))
                        .sum()
                })
                .collect()
        }
        Pick::Mode => members.iter().map(|&g| -weight(g)).collect(),
    };
    score
}

/// Bins none of whose iterations may be picked (all in warm-up) join the nearest bin that has
/// a candidate, by the distance between the bins' weighted mean keys: their iterations still
/// count, through that bin's SeqPoint, and no warm-up iteration is ever picked. Fewer bins
/// than asked is then the truth (as with empty bins). When no bin has a candidate the bins
/// are left as they are; `StrataGroups` refuses such a warm-up before any binning.
pub fn merge_bins_without_candidates(
    bins: Bins,
    groups: &KeyGroups,
    candidates: &Candidates,
) -> Bins {
    let pickable = |members: &[usize]| members.iter().any(|&g| candidates.any(groups, g));
    if bins.iter().all(|b| pickable(b)) || !bins.iter().any(|b| pickable(b)) {
        return bins;
    }
    let centre = |members: &[usize]| -> Vec<f64> {
        let total: f64 = members.iter().map(|&g| groups.counts[g] as f64).sum();
        (0..groups.dims)
            .map(|d| {
                members
                    .iter()
                    .map(|&g| groups.counts[g] as f64 * f64::from(groups.key(g)[d]))
                    .sum::<f64>()
                    / total.max(1.0)
            })
            .collect()
    };
    let (mut kept, orphans): (Bins, Bins) = bins.into_iter().partition(|b| pickable(b));
    let centres: Vec<Vec<f64>> = kept.iter().map(|b| centre(b)).collect();
    for orphan in orphans {
        let at = centre(&orphan);
        let distance =
            |c: &Vec<f64>| -> f64 { c.iter().zip(&at).map(|(a, b)| (a - b).powi(2)).sum() };
        let nearest = (0..kept.len())
            .min_by(|&a, &b| distance(&centres[a]).total_cmp(&distance(&centres[b])))
            .expect("a pickable bin exists");
        kept[nearest].extend(orphan);
    }
    for members in &mut kept {
        members.sort_unstable();
    }
    kept
}

/// How a `BinPicker` bins and picks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PickSettings {
    pub method: Method,
    pub pick: Pick,
    /// The first `warmup` iterations are never chosen.
    pub warmup: u64,
    pub seed: u64,
    /// The largest K that will be asked for (the exact DP precomputes up to it).
    pub max_bins: usize,
}

/// Chooses SeqPoints over one set of key groups for any K; built once, asked many times.
pub struct BinPicker<'a> {
    log: &'a RunLog,
    groups: &'a KeyGroups,
    candidates: Cow<'a, Candidates>,
    binner: Binner<'a>,
    pick: Pick,
    stratum: Option<usize>,
    /// The bins made so far (a `Mutex`: the plan's search asks for Ks on every core).
    cache: Mutex<PickCache>,
}

impl<'a> BinPicker<'a> {
    pub fn new(
        log: &'a RunLog,
        groups: &'a KeyGroups,
        settings: PickSettings,
        stratum: Option<usize>,
    ) -> Result<Self, BinningError> {
        let candidates = Cow::Owned(Candidates::new(log, groups, settings.warmup));
        Self::build(log, groups, candidates, None, settings, stratum)
    }

    /// A picker over candidates built earlier (for `settings.warmup`) and, for `optimal`,
    /// an exact DP table built earlier: no pass over the rows, so it is cheap to rebuild when
    /// the method, pick or K changes.
    pub fn prepared(
        log: &'a RunLog,
        groups: &'a KeyGroups,
        candidates: &'a Candidates,
        table: Option<std::sync::Arc<crate::binning::OptimalTable>>,
        settings: PickSettings,
        stratum: Option<usize>,
    ) -> Result<Self, BinningError> {
        Self::build(
            log,
            groups,
            Cow::Borrowed(candidates),
            table,
            settings,
            stratum,
        )
    }

    fn build(
        log: &'a RunLog,
        groups: &'a KeyGroups,
        candidates: Cow<'a, Candidates>,
        table: Option<std::sync::Arc<crate::binning::OptimalTable>>,
        settings: PickSettings,
        stratum: Option<usize>,
    ) -> Result<Self, BinningError> {
        Ok(BinPicker {
            log,
            groups,
            candidates,
            binner: Binner::with_table(
                groups,
                settings.method,
                settings.seed,
                settings.max_bins,
                table,
            )?,
            pick: settings.pick,
            stratum,
            cache: Mutex::new(PickCache::new(groups.len())),
        })
    }

    /// The exact DP table this picker bins with, if its method is `optimal`.
    pub fn table(&self) -> Option<std::sync::Arc<crate::binning::OptimalTable>> {
        self.binner.table()
    }

    pub fn groups(&self) -> &KeyGroups {
        self.groups
    }

    pub fn bins(&self, k: usize) -> Result<Bins, BinningError> {
        self.binner.bins(k)
    }

    /// Whether K is answered in O(groups) (see `Binner::ready`).
    pub fn ready(&self, k: usize) -> bool {
        self.binner.ready(k)
    }

    /// The SeqPoints of K bins, each bin's made once and handed out again at any later K
    /// that has it (`PickCache`).
    pub fn select(&self, k: usize) -> Result<Vec<SeqPoint>, BinningError> {
        let bins =
            merge_bins_without_candidates(self.binner.bins(k)?, self.groups, &self.candidates);
        let mut picked: Vec<Option<Arc<Picked>>> = {
            let mut cache = self.cache();
            bins.iter().map(|members| cache.get(members)).collect()
        };
        // The bins not made yet, made outside the lock (another K's search goes on meanwhile).
        let mut made = Vec::new();
        for (members, slot) in bins.iter().zip(&mut picked) {
            if slot.is_none() {
                let fresh = Arc::new(self.picked(members));
                made.push((members, Arc::clone(&fresh)));
                *slot = Some(fresh);
            }
        }
        if !made.is_empty() {
            let mut cache = self.cache();
            for (members, fresh) in made {
                cache.insert(members.clone().into_boxed_slice(), fresh);
            }
        }
        Ok(picked
            .into_iter()
            .enumerate()
            .map(|(id, picked)| SeqPoint {
                id,
                picked: picked.expect("every bin made or found"),
            })
            .collect())
    }

    /// The cache, whatever a panic elsewhere left it in: it holds only whole bins.
    fn cache(&self) -> std::sync::MutexGuard<'_, PickCache> {
        self.cache.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The rows to profile for a bin: the best-ranked key's candidates, then the next keys'
    /// as alternates.
    fn chosen_rows(&self, members: &[usize]) -> Vec<u32> {
        let groups = self.groups;
        // Usually the best key alone has enough candidates: find it in one pass, without
        // ranking the whole bin.
        let score = member_scores(groups, members, self.pick);
        let best = (0..members.len())
            .filter(|&i| self.candidates.any(groups, members[i]))
            .min_by(|&a, &b| {
                score[a]
                    .total_cmp(&score[b])
                    .then(members[a].cmp(&members[b]))
            });
        if let Some(i) = best {
            let rows = self.candidates.rows(self.log, groups, members[i]);
            if rows.len() > ALTERNATES {
                return rows.to_vec();
            }
        }
        let ranked = ranked_members(groups, members, self.pick);
        // The best-ranked key with an iteration after warm-up; if every iteration of the bin is
        // in warm-up, warm-up is ignored for this bin rather than leaving it without a SeqPoint.
        let chosen = ranked
            .iter()
            .copied()
            .find(|&g| self.candidates.any(groups, g));
        let mut rows: Vec<u32> = Vec::new();
        match chosen {
            Some(g) => {
                rows.extend_from_slice(self.candidates.rows(self.log, groups, g));
                for &other in ranked.iter().filter(|&&o| o != g) {
                    if rows.len() > ALTERNATES {
                        break;
                    }
                    rows.extend(
                        self.candidates
                            .rows(self.log, groups, other)
                            .iter()
                            .take(ALTERNATES + 1 - rows.len()),
                    );
                }
            }
            None => rows.push(groups.rows_of(ranked[0])[0]),
        }
        rows
    }

    /// Bin `members`' SeqPoint but its id.
    fn picked(&self, members: &[usize]) -> Picked {
        let groups = self.groups;
        let rows = self.chosen_rows(members);
        let row = rows[0] as usize;
        let dims = groups.dims;
        let bin_min = (0..dims)
            .map(|d| members.iter().map(|&g| groups.key(g)[d]).min().unwrap_or(0))
            .collect();
        let bin_max = (0..dims)
            .map(|d| members.iter().map(|&g| groups.key(g)[d]).max().unwrap_or(0))
            .collect();
        Picked {
            stratum: self.stratum,
            iteration: self.log.iteration(row),
            row,
            epoch: self.log.epoch(row),
            key: self.log.key(row).to_vec(),
            weight: members.iter().map(|&g| groups.counts[g]).sum(),
            bin_min,
            bin_max,
            alternates: rows[1..]
                .iter()
                .map(|&r| self.log.iteration(r as usize))
                .collect(),
            values: self
                .log
                .configs
                .iter()
                .map(|c| c.metrics.iter().map(|m| m.values[row]).collect())
                .collect(),
            bin: BinSummary::new(groups, members),
            key_noise: {
                let picked = groups.group_of(self.log.key(row)).unwrap_or(members[0]);
                // A proxy cost is exact per key; the measurements that will replace it are not.
                // (A timed metric that is exact per key stays so: a simulator's cycle counts
                // are, and planning them for noise they do not have would cost days.)
                let assumed = if self.log.proxy.is_some() {
                    crate::estimate::ASSUMED_PROXY_CV
                } else {
                    0.0
                };
                // The rows a plan lists first are the picked key's own, then other keys'.
                let own_rows = if members.len() == 1 {
                    u64::MAX
                } else {
                    rows.iter()
                        .take_while(|&&r| self.log.key(r as usize) == self.log.key(row))
                        .count() as u64
                };
                (0..groups.moments[0].len())
                    .map(|m| {
                        crate::estimate::KeyNoise::of(groups, members, picked, m)
                            .at_least(assumed)
                            .with_own_rows(own_rows)
                    })
                    .collect()
            },
            listed: self
                .log
                .configs
                .iter()
                .flat_map(|c| &c.metrics)
                .flat_map(|m| rows.iter().map(|&r| m.values[r as usize]))
                .collect(),
        }
    }
}
