//! Which iterations of a bin a plan profiles: one rule, read by the plan's rows, its search
//! and its projection alike.
//!
//! **At the pick's key** (`AtKey`): the SeqPoint's own iteration, its alternates (the picked
//! key's iterations nearest its centre, then the next-best keys'), then draws. The interval is
//! `estimate`'s: the picks' known offsets from their bins' means as a bias, their noise within
//! the key.
//!
//! **Over the bin** (`OverBin`): seeded draws from its whole bin (after warm-up, within the
//! kept strata, the SeqPoint's own drawn as any other), at least two per bin; its reserve is
//! more draws. One row is the SeqPoint's own (the method's SeqPoint).
//! - Why: `project` divides each measured value by the baseline's curve at its key
//!   (`pick::BaselineCurve`, which sums to the bin's baseline total). At the pick's key the
//!   curve's error there is shared by every iteration measured, so no residual shows it and
//!   no interval held it: on the redraw example's smooth case it took the first stage's
//!   error from sd 0.52% (every key's mean known) to 0.57%. Over the bin, the draws' keys'
//!   curve errors average out, and a speedup that drifts within the bin is measured, not
//!   carried from one key.
//! - The projection reads each draw's baseline value over the curve's value at its key,
//!   scaled to the bin's mean (`baseline_values`): the ratio estimate `project` makes.
//! - Its interval is still `estimate`'s with what the log says of the picked key: the noise
//!   within a key, and the pick's offset from its bin as a bias. Over the bin the offset is no
//!   error of the draws (the curve takes their keys out); it stands for what the baseline
//!   cannot show, how far a new configuration's speedup may drift across the bin, and keeps
//!   the bins as narrow as the at-key plans'. Read without it (a residual about the curve,
//!   no bias), plans took 3-5 wide bins on the smooth and stepwise cases, and the
//!   speedup-by-length case's two-stage flow held its intervals 90% of the time.
//! - Measured by the redraw example's two-stage flow, 200 runs each (top-ups aimed at 0.97),
//!   at the key -> over the bin: smooth 43.0 -> 42.8 iterations, intervals held 91% -> 96.5%;
//!   stepwise 48.5 -> 47.2, 91% -> 95.5%, lean -0.27% -> -0.04%; speedup by length 49.8 ->
//!   64.1, 89.5% -> 94.5%, lean +0.29% -> +0.20% (the drift within bins the at-key plan
//!   carried unseen now measured, at its price); heavy-tailed 92% -> 93%, noisier new 154.7
//!   -> 151.2 iterations, 92.5% -> 93%.
//!
//! **Systematic in the proxy order** (`Systematic`): one seeded draw at a random place in each
//! of `samples` strata of equal count of the bin's iterations ordered by their proxy cost
//! (`rows::systematic_rows`; one stratum, the SeqPoint's own); the reserve goes on
//! round by round, each round halving the cells and drawing once in each half that holds no
//! row yet, a round's cells in bit-reversed order, so that any prefix a top-up takes is
//! spread over the order too.
//! - Why: on a proxy cost the time may step where the proxy does not (a kernel switching tile
//!   sizes every 64 of length). At the key, a bin that straddles a step is measured at one
//!   key, its ratio to the proxy is not the bin's, and no residual shows it: over fresh
//!   drawings of the lengths the redraw example's lengths-only stepwise flow held its totals'
//!   intervals 48-49% of the time (on one drawing, 85.5-86%, leaning -0.33%). Spread evenly
//!   over the proxy order, each step is measured in proportion to its share of the bin.
//! - `project --baseline` takes its residual variance from successive differences in the
//!   proxy order (`PairedBin::successive_residuals`), the classic variance of a systematic
//!   sample: where the ratio to the proxy drifts or steps along the order, only neighbours'
//!   differences count; for pure noise it is the random sample's. Drawn at random over the
//!   bin (`OverBin`), a draw and the SeqPoint's own often fall on the same side of a step.
//! - The search reads the SeqPoints as at the key (its sample counts are the at-key plan's).
//! - Measured by the redraw example's lengths-only flow (the SeqPoint's own then standing
//!   for its share), 400 runs each on its own drawing of the run's lengths (at the key: 100
//!   runs), figures held baseline / new / speedup: stepwise 95.8 / 96.8 / 94.8% at 160.1
//!   iterations (2.31x the limit), at the key 49 / 48 / 95% at 72.8, random draws over the
//!   bin 89 / 87.5 / 93.2% at 212.5; the other cases 93-96% at 1.05-1.07x (at the key
//!   1.02-1.05x). With the bending cost line (`project::trend::CostLine`), every figure of
//!   every case 94-97.2% over 400 runs, width ratios 0.96-1.11, leaning at most 0.03%;
//!   stepwise 154.5 iterations (2.23x). The top-ups take the reserve before the SeqPoint's
//!   own and the alternates (`project::target::candidates`): taking the alternates first
//!   measured the picked key again, and the stepwise totals held 69-73.5% (one drawing of
//!   the lengths).
//!
//! **Why the SeqPoint's own is drawn as any other** (over the bin and systematic, from two
//! rows): a plan that listed it in every bin, standing for its share, measured the same
//! iterations whatever the seed, so on a given run their noise leaned every plan the same
//! way. On the bundled logs over 200 plan seeds, the timed two-stage flow's new total leaned
//! +0.42% (speedup -0.42%), and the lengths-only flow's speedup +0.43%, holding 83%. With
//! each row drawn at its share's chance (the plan tests count it over seeds), they lean
//! +0.02% / -0.02% (held 98.5%), and the lengths-only figures hold 93.2% / 93.2% / 94.3% over
//! 600 seeds, leaning at most 0.05%. The redraw example draws each run's noise afresh, the
//! SeqPoints' own iterations' too, so it could not show this. What it costs there (200 runs,
//! one drawing of the lengths): the timed smooth case 41.6 -> 42.7 iterations, stepwise 44.4
//! -> 43.2, speedup by length 43.2 -> 45.3; lengths only, stepwise 160.3 -> 208.1, the other
//! cases within 1%. That stepwise first stage had leaned -1.09% with the own in every plan
//! (±1.77%); drawn, it leans -0.06% at ±2.07%, its neighbour differences reading the steps
//! wider than they err at that spacing, and the top-ups are sized from them.
//!
//! Which design: a timed baseline without a logged new configuration draws over the bin.
//! - A proxy cost (a lengths-only log) draws systematically in the proxy order (above).
//! - A logged new configuration (`select --compare`) keeps the key: its interval is read off
//!   both logs at the picked key (`estimate::LoggedNew`).

use std::borrow::Cow;

use super::rows::{draw_rows, reserve_rows, systematic_rows, BinCandidates};
use crate::pick::SeqPoint;
use crate::runlog::RunLog;

/// Salt for the draws a plan takes beyond `over_bin_draws` (a budget asking more).
const MORE_DRAWS: u64 = 0x6d6f_7265_2064_7261;

/// The draws an over-the-bin plan lists for a bin of one key, which a plan may profile
/// whole: as many as a reserve holds at least. A plan asking more takes more draws, which a
/// search reads as these taken round again.
const ONE_KEY_DRAWS: usize = super::rows::RESERVE_MIN as usize;

/// The seeded draws over a bin, the SeqPoint's own row among the rows drawn from: the rows an
/// over-the-bin plan of two or more profiles, in order, and what its search reads. As many
/// as the pick and its alternates (a target's plan profiles at most that many in a bin of
/// several keys, `rows::representative_caps`), or `ONE_KEY_DRAWS` in a bin of one key.
/// Empty where the bin holds no row after warm-up.
fn over_bin_draws(candidates: &BinCandidates, seed: u64) -> Vec<u32> {
    let sp = candidates.sp;
    let count = if sp.bin.groups.len() > 1 {
        1 + sp.alternates.len()
    } else {
        ONE_KEY_DRAWS
    };
    reserve_rows(candidates, &[], count as u64, seed)
}

/// Where a plan's rows stand in their bins (see the module's comment).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanDesign {
    AtKey,
    OverBin,
    Systematic,
}

impl PlanDesign {
    /// The design a plan on `log` uses: at the key with a logged new configuration,
    /// systematic in the proxy order on a proxy cost, else over the bin.
    pub fn of(log: &RunLog) -> PlanDesign {
        if log.configs.len() > 1 {
            PlanDesign::AtKey
        } else if log.proxy.is_some() {
            PlanDesign::Systematic
        } else {
            PlanDesign::OverBin
        }
    }

    /// The SeqPoints as this design's search and projection read them (`candidates`, one per
    /// SeqPoint, with the selection's `seed`): over the bin, a bin of several keys lists its
    /// draws (`over_bin_draws`) where the pick's alternates stood, so that the search reads
    /// the rows the plan will profile. What the log says of the picked key (`key_noise`) is
    /// read as it is (see the module's comment).
    pub(super) fn seqpoints<'a>(
        self,
        log: &RunLog,
        candidates: &[BinCandidates],
        seqpoints: &'a [SeqPoint],
        seed: u64,
    ) -> Cow<'a, [SeqPoint]> {
        if self != PlanDesign::OverBin {
            return Cow::Borrowed(seqpoints);
        }
        let read = candidates
            .iter()
            .map(|c| {
                let sp = c.sp;
                let alternates = over_bin_draws(c, seed)
                    .iter()
                    .map(|&r| log.iteration(r as usize))
                    .collect();
                sp.with_alternates(alternates)
            })
            .collect();
        Cow::Owned(read)
    }

    /// A target's `samples` per bin raised to the least this design profiles (within `caps`):
    /// over the bin, two. Each bin's ratio is then measured against its own spread, and the
    /// pooled noise `project` bounds the new configuration by has a degree of freedom per
    /// bin. (A plan of one draw per bin at K = 30, 36 iterations, on the redraw example's
    /// smooth case, came out of `project` at ±2.4% for a 1% target.) On the flows, measured
    /// while this floor was applied after the search, it also held the heavy-tailed case's
    /// intervals 91.5% of the time (88.5% without) and took the noisier new configuration in
    /// 149.3 iterations (160.8).
    pub(super) fn at_least(self, mut samples: Vec<u64>, caps: &[u64]) -> Vec<u64> {
        if self == PlanDesign::OverBin {
            for (s, &cap) in samples.iter_mut().zip(caps) {
                *s = (*s).max(2).min(cap.max(1));
            }
        }
        samples
    }

    /// A bin's `samples` rows to profile and `reserve` more it may profile, none twice. One
    /// row is the SeqPoint's own (the method's SeqPoint). At the key the SeqPoint's own comes
    /// first, then its alternates. Over the bin two or more rows are its first seeded draws
    /// (`over_bin_draws`, what the search reads), the SeqPoint's own among the rows drawn
    /// from, and the reserve draws again from the rest of the bin; systematic, both are
    /// spread over the proxy order (`rows::systematic_rows`).
    pub(super) fn rows(
        self,
        log: &RunLog,
        candidates: &BinCandidates,
        samples: u64,
        reserve: u64,
        seed: u64,
    ) -> (Vec<u32>, Vec<u32>) {
        match self {
            PlanDesign::AtKey => {
                let rows = draw_rows(log, candidates, samples, seed);
                let reserve = reserve_rows(candidates, &rows, reserve, seed);
                (rows, reserve)
            }
            PlanDesign::Systematic => systematic_rows(log, candidates, samples, reserve, seed),
            PlanDesign::OverBin => {
                let sp = candidates.sp;
                let draws = over_bin_draws(candidates, seed);
                let mut rows: Vec<u32> = if samples <= 1 || draws.is_empty() {
                    vec![sp.row as u32]
                } else {
                    draws.iter().copied().take(samples as usize).collect()
                };
                // A budget or `--samples` may ask more than the draws a search reads.
                let more = (samples as usize).saturating_sub(rows.len()) as u64;
                if more > 0 {
                    rows.extend(reserve_rows(candidates, &rows, more, seed ^ MORE_DRAWS));
                }
                let reserve = reserve_rows(candidates, &rows, reserve, seed);
                (rows, reserve)
            }
        }
    }

    /// The baseline values of `sp`'s profiled `rows` on `metric` as the projection reads them.
    /// Over the bin each is scaled by the bin's baseline mean over the curve's mean at the
    /// rows' keys (`curve_scale`): the ratio estimate `project` makes, whose mean is the bin's
    /// mean up to the rows' noise about the curve (their plain mean would carry where the
    /// draws fell). The search reads the same off its running sums.
    pub fn baseline_values(
        self,
        log: &RunLog,
        sp: &SeqPoint,
        metric: usize,
        rows: &[u32],
    ) -> Vec<f64> {
        let logged = &log.configs[0].metrics[metric].values;
        let values: Vec<f64> = rows.iter().map(|&r| logged[r as usize]).collect();
        if self != PlanDesign::OverBin || rows.is_empty() {
            return values;
        }
        let curve: f64 = rows.iter().map(|&r| curve_at(log, sp, r, metric)).sum();
        let scale = curve_scale(sp.bin.moments[0][metric].mean, curve / rows.len() as f64);
        values.iter().map(|v| v * scale).collect()
    }
}

/// The baseline's curve (`pick::BaselineCurve`) at log row `row`'s key in `sp`'s bin, on
/// `metric`; the row's own logged value where the curve does not hold its key.
pub(super) fn curve_at(log: &RunLog, sp: &SeqPoint, row: u32, metric: usize) -> f64 {
    let logged = log.configs[0].metrics[metric].values[row as usize];
    sp.bin
        .curve
        .at(log.key(row as usize), metric)
        .unwrap_or(logged)
}

/// What an over-the-bin plan multiplies its rows' baseline values by: the bin's baseline
/// mean over the curve's mean at the rows' keys (1 where that mean is not positive).
pub(super) fn curve_scale(bin_mean: f64, curve_mean: f64) -> f64 {
    if curve_mean > 0.0 {
        bin_mean / curve_mean
    } else {
        1.0
    }
}
