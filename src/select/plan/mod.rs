//! Profiling plans: how many iterations to profile per SeqPoint (M each, a budget spread by
//! Neyman allocation, or the cheapest plan meeting an error target) and which iterations.
//!
//! One job per file: `allocation` (how many per bin: Neyman, fewest samples), `rows` (which
//! rows a bin lists and draws), `search` (the cheapest counts at one K); this file holds the
//! plan's types and the entry points that run them over K.

mod allocation;
mod design;
mod rows;
mod running;
mod search;
#[cfg(test)]
mod tests;

use std::ops::ControlFlow;

use super::{
    check_options, BinCount, CurvePoint, Progress, SelectError, SelectOptions, Selection,
    Selectors, StrataGroups, TargetRule,
};
use crate::groups::KeyGroups;
use crate::options::SAMPLES;
use crate::pick::SeqPoint;
use crate::project::{project_bins, PickedBin, Projection};
use crate::runlog::RunLog;
use allocation::spreads;
pub use allocation::{fewest_samples, neyman_allocation};
pub use design::PlanDesign;
pub use rows::bin_rows;
use rows::{cap_of, representative_caps, reserve_count, BinCandidates};
pub use rows::{reserve_per_row, reserve_reaches_noise};
use search::{
    counted_samples_for_target, samples_for_target, within_target, SearchWork, TargetSearch,
    POLISHED_KS,
};

/// What decides the number of profiled iterations per SeqPoint.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PlanRule {
    /// M per SeqPoint (`--samples M`).
    Samples(u64),
    /// B in all, spread by Neyman allocation (`--budget B`).
    Budget(u64),
    /// The fewest in all whose 95% interval is within +- the target percent (`--plan`).
    Target(f64),
}

/// What the user asked to profile, before it is resolved against K and the target: the
/// `--samples`, `--plan` and `--budget` flags of `select` (and the explorer's `:samples`,
/// `:plan`, `:budget`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PlanAsk {
    /// `--samples M`; `None` when not given.
    pub samples: Option<u64>,
    /// `--plan`.
    pub plan: bool,
    /// `--budget B`.
    pub budget: Option<u64>,
}

impl PlanAsk {
    /// The selection's options as this ask shapes them, for `select` and the explorer alike:
    /// the iterations per SeqPoint its intervals assume (one unless `--samples` says more),
    /// and whether a budget's plan will draw over each bin (which bins the picks).
    pub fn shape(&self, options: SelectOptions) -> SelectOptions {
        SelectOptions {
            samples: self.samples.unwrap_or(1),
            drawn_over_bins: self.budget.is_some(),
            ..options
        }
    }

    /// The one rule deciding how much is profiled, for `select` and the explorer alike:
    /// a budget or an explicit plan wins; `--samples M` with M > 1 profiles M per SeqPoint
    /// and `--samples 1` one; with nothing asked, an error target met by its interval gets
    /// the least profiling that meets it (one per SeqPoint where that suffices, else a plan).
    /// A fixed K (`bins`) or a target on the measured error alone keeps one per SeqPoint.
    /// `None`: one profiled iteration per SeqPoint, no plan.
    pub fn rule(
        &self,
        bins: Option<usize>,
        target_pct: f64,
        target_by: TargetRule,
    ) -> Option<PlanRule> {
        if let Some(b) = self.budget {
            return Some(PlanRule::Budget(b));
        }
        if self.plan {
            return Some(PlanRule::Target(target_pct));
        }
        match self.samples {
            Some(m) if m > 1 => Some(PlanRule::Samples(m)),
            Some(_) => None,
            None if bins.is_none() && target_by == TargetRule::Interval => {
                Some(PlanRule::Target(target_pct))
            }
            None => None,
        }
    }
}

/// One SeqPoint's profiled iterations, as its design lists them (`PlanDesign::rows`).
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedBin {
    /// Index into the selection's SeqPoints (equal to the SeqPoint's id).
    pub seqpoint: usize,
    pub rows: Vec<u32>,
    /// More rows of the bin, not profiled by the plan: what `project --target-error` may list
    /// for a top-up when the new configuration's noise asks for more (`rows::reserve_count`).
    pub reserve: Vec<u32>,
}

impl PlannedBin {
    pub fn samples(&self) -> u64 {
        self.rows.len() as u64
    }
}

/// A plan: the iterations to profile and the projection they give.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfilePlan {
    pub rule: PlanRule,
    pub bins: Vec<PlannedBin>,
    /// Projected from the planned iterations' logged values; intervals for this plan.
    pub projection: Projection,
    /// For a target (`--plan`'s, or the one K was chosen for under a budget): whether the
    /// plan's figures meet it. `None` for `--samples`, whose selection's own verdict is at
    /// its samples.
    pub met: Option<bool>,
    /// A budget that misses its target: the budget at the same K found to meet it (`Some`
    /// of it), or `Some(None)` when none does with every listed iteration of each bin.
    pub meeting_budget: Option<Option<u64>>,
}

impl ProfilePlan {
    pub fn iterations(&self) -> u64 {
        self.bins.iter().map(PlannedBin::samples).sum()
    }

    pub fn samples(&self) -> Vec<u64> {
        self.bins.iter().map(PlannedBin::samples).collect()
    }
}

/// The plan for a selection under `rule`. Budgets are allocated on the first metric of the
/// baseline (the one the pick uses); a target must hold for every configuration and metric.
pub fn plan_selection(
    log: &RunLog,
    selection: &Selection,
    rule: PlanRule,
) -> Result<ProfilePlan, SelectError> {
    // Grouped once: the groups and totals the selection was made on.
    let strata = StrataGroups::for_options(log, &selection.options)?;
    plan_selection_on(log, &strata, selection, rule)
}

/// `plan_selection` over the key groups the selection was made on: no pass over the rows
/// (the explorer keeps them).
pub(super) fn plan_selection_on(
    log: &RunLog,
    strata: &StrataGroups,
    selection: &Selection,
    rule: PlanRule,
) -> Result<ProfilePlan, SelectError> {
    plan_bins(log, selection, &strata.groups, strata.actual(), rule)
}

/// `plan_selection` given the key groups of each stratum the selection was made on and the
/// run's actual totals (`[config][metric]`); a budget that misses its target says which
/// budget meets it (`meeting_budget`).
fn plan_bins(
    log: &RunLog,
    selection: &Selection,
    groups: &[KeyGroups],
    actual: &[Vec<f64>],
    rule: PlanRule,
) -> Result<ProfilePlan, SelectError> {
    let plan = plan_of_rule(log, selection, groups, actual, rule)?;
    let PlanRule::Budget(asked) = rule else {
        return Ok(plan);
    };
    if plan.met != Some(false) || log.len() < 2 {
        return Ok(plan);
    }
    let meets = |budget: u64| -> Result<bool, SelectError> {
        let plan = plan_of_rule(log, selection, groups, actual, PlanRule::Budget(budget))?;
        Ok(plan.met == Some(true))
    };
    let warmup = selection.options.warmup;
    let candidates = BinCandidates::of_each(log, groups, &selection.seqpoints, warmup);
    let most = caps_of(&candidates).iter().sum();
    let meeting_budget = Some(least_meeting_budget(asked, most, meets)?);
    Ok(ProfilePlan {
        meeting_budget,
        ..plan
    })
}

/// The least budget above `asked` (which misses) found to meet the target, up to `most`:
/// doubling, then halving the gap. A plan's figures narrow with its budget but not strictly
/// (each budget draws its own rows), so the budget returned is one that was made and met,
/// not a proof that none below it does.
fn least_meeting_budget(
    asked: u64,
    most: u64,
    mut meets: impl FnMut(u64) -> Result<bool, SelectError>,
) -> Result<Option<u64>, SelectError> {
    let (mut missed, mut step) = (asked, asked.max(1));
    let met = loop {
        if missed >= most {
            return Ok(None);
        }
        let next = missed.saturating_add(step).min(most);
        if meets(next)? {
            break next;
        }
        missed = next;
        step = step.saturating_mul(2);
    };
    let mut met = met;
    while met - missed > 1 {
        let middle = missed + (met - missed) / 2;
        if meets(middle)? {
            met = middle;
        } else {
            missed = middle;
        }
    }
    Ok(Some(met))
}

/// The most iterations each bin can profile: its candidates and its SeqPoint's own.
fn caps_of(candidates: &[BinCandidates]) -> Vec<u64> {
    candidates.iter().map(|c| c.count() as u64 + 1).collect()
}

/// The plan `rule` makes over the selection's bins, judged on its target where it has one.
fn plan_of_rule(
    log: &RunLog,
    selection: &Selection,
    groups: &[KeyGroups],
    actual: &[Vec<f64>],
    rule: PlanRule,
) -> Result<ProfilePlan, SelectError> {
    let design = PlanDesign::of(log);
    let seqpoints = &selection.seqpoints;
    let candidates = BinCandidates::of_each(log, groups, seqpoints, selection.options.warmup);
    let caps = caps_of(&candidates);
    let read = design.seqpoints(log, &candidates, seqpoints, selection.options.seed);
    let samples: Vec<u64> = match rule {
        PlanRule::Samples(m) => {
            SAMPLES.check_count(m)?;
            caps.iter().map(|&cap| m.min(cap)).collect()
        }
        PlanRule::Budget(b) => {
            let weights: Vec<f64> = seqpoints.iter().map(|sp| sp.weight as f64).collect();
            neyman_allocation(&weights, &spreads(&read), &caps, b)?
        }
        PlanRule::Target(t) => {
            let caps = representative_caps(seqpoints, &caps);
            // No plan can meet it at this K: profile every candidate, and say it is not met.
            samples_for_target(log, &read, &caps, t, TargetSearch::Polished).unwrap_or(caps)
        }
    };
    let per_row = reserve_per_row(samples.iter().sum());
    let bins: Vec<PlannedBin> = candidates
        .iter()
        .zip(&samples)
        .map(|(candidates, &m)| {
            let seed = selection.options.seed;
            let reserve = reserve_count(m, per_row);
            let (rows, reserve) = design.rows(log, candidates, m, reserve, seed);
            PlannedBin {
                seqpoint: candidates.sp.id,
                rows,
                reserve,
            }
        })
        .collect();
    let projection = plan_projection(log, actual, design, &read, &bins);
    let met = match rule {
        // One iteration cannot give an interval: nothing to measure its noise against.
        PlanRule::Target(_) if log.len() < 2 => Some(false),
        PlanRule::Target(t) => Some(meets(&projection, t)),
        // A budget spread over bins chosen for a target is judged on that target by its own
        // figures, as K was at one iteration per SeqPoint.
        PlanRule::Budget(_) => selection.target.as_ref().map(|target| {
            let point = CurvePoint::of_projection(selection.bins(), selection.bins(), &projection);
            log.len() >= 2 && point.meets(target.target_pct, target.rule)
        }),
        PlanRule::Samples(_) => None,
    };
    Ok(ProfilePlan {
        rule,
        bins,
        projection,
        met,
        meeting_budget: None,
    })
}

/// Whether every total's and speedup's 95% half-width is within `target_pct`.
fn meets(projection: &Projection, target_pct: f64) -> bool {
    within_target(projection.worst_half_width_pct(), target_pct)
}

/// Project from the planned iterations' logged values: each SeqPoint's values are those of
/// its planned iterations, on every configuration, read as the plan's design reads them
/// (`seqpoints` as `PlanDesign::seqpoints` gives them).
fn plan_projection(
    log: &RunLog,
    actual: &[Vec<f64>],
    design: PlanDesign,
    seqpoints: &[SeqPoint],
    bins: &[PlannedBin],
) -> Projection {
    let metric_bins: Vec<Vec<PickedBin>> = (0..log.metric_names().len())
        .map(|m| {
            seqpoints
                .iter()
                .zip(bins)
                .map(|(sp, bin)| {
                    let at = |c: usize| -> Vec<f64> {
                        bin.rows
                            .iter()
                            .map(|&r| log.configs[c].metrics[m].values[r as usize])
                            .collect()
                    };
                    PickedBin {
                        weight: sp.weight as f64,
                        baseline: design.baseline_values(log, sp, m, &bin.rows),
                        new: if log.configs.len() > 1 {
                            at(1)
                        } else {
                            Vec::new()
                        },
                        distinct: bin.samples(),
                        key: sp.key_noise[m],
                        stratum: sp.stratum.unwrap_or(0),
                    }
                })
                .collect()
        })
        .collect();
    let profiled: f64 = bins
        .iter()
        .flat_map(|b| b.rows.iter())
        .map(|&r| log.configs[0].metrics[0].values[r as usize])
        .sum();
    project_bins(log, actual, &metric_bins, profiled)
}

/// The options the cheapest plan searches K with: the error target, K up to `--max-bins`.
pub(super) fn searched_options(options: &SelectOptions, target_pct: f64) -> SelectOptions {
    SelectOptions {
        bins: BinCount::Target(target_pct),
        ..options.clone()
    }
}

/// The cheapest plan whose 95% interval meets `target_pct` on every configuration and
/// metric: for each K up to `--max-bins`, the samples per bin it needs; the K needing the
/// fewest profiled iterations in all wins (ties: fewer bins). No pass over the rows: the key
/// groups in `strata`, the selectors and the DP table serve every K and the chosen selection.
/// `progress` is told `(done, total)` as the DP table is built and as each K is costed;
/// `None` when it answered `Break` (the explorer's cancel).
pub(super) fn cheapest_plan(
    log: &RunLog,
    strata: &StrataGroups,
    options: &SelectOptions,
    target_pct: f64,
    progress: Progress,
) -> Result<Option<(Selection, ProfilePlan)>, SelectError> {
    cheapest_plan_counted(
        log,
        strata,
        options,
        target_pct,
        progress,
        &mut SearchWork::default(),
    )
}

/// `cheapest_plan`, adding what its searches over K cost to `work` (the final plan at the
/// chosen K repeats one polished search, not counted): what bounds the search's cost in a
/// test, where a time would depend on the machine.
fn cheapest_plan_counted(
    log: &RunLog,
    strata: &StrataGroups,
    options: &SelectOptions,
    target_pct: f64,
    progress: Progress,
    work: &mut SearchWork,
) -> Result<Option<(Selection, ProfilePlan)>, SelectError> {
    let searched = searched_options(options, target_pct);
    check_options(log, &searched)?;
    let Some(selectors) = Selectors::for_plans(log, strata, &searched, progress)? else {
        return Ok(None);
    };
    let largest = options.max_bins.max(1).min(strata.largest());
    // Each K's greedy cost on every core; then the `POLISHED_KS` cheapest of them polished
    // (the polish lowers a cost by a few samples and costs too much for every K): the first K
    // of the least polished cost wins.
    type Costed = (Option<u64>, SearchWork);
    let cost_at = |k: usize, search: TargetSearch| -> Result<Costed, SelectError> {
        let seqpoints = selectors.seqpoints(k)?;
        let caps: Vec<u64> = seqpoints
            .iter()
            .map(|sp| cap_of(&strata.groups[sp.stratum.unwrap_or(0)], sp, options.warmup))
            .collect();
        let caps = representative_caps(&seqpoints, &caps);
        let candidates = BinCandidates::of_each(log, &strata.groups, &seqpoints, options.warmup);
        let design = PlanDesign::of(log);
        let read = design.seqpoints(log, &candidates, &seqpoints, options.seed);
        let (samples, cost) = counted_samples_for_target(log, &read, &caps, target_pct, search);
        Ok((samples.map(|s| s.iter().sum()), cost))
    };
    let mut greedy: Vec<Option<u64>> = Vec::with_capacity(largest);
    let finished = selectors.visit_in_order(
        largest,
        |i| cost_at(i + 1, TargetSearch::Greedy),
        &mut |(cost, spent): Costed| {
            *work += spent;
            greedy.push(cost);
            progress(greedy.len(), largest)
        },
    )?;
    if !finished {
        return Ok(None);
    }
    let mut near: Vec<usize> = (1..=largest).filter(|&k| greedy[k - 1].is_some()).collect();
    near.sort_by_key(|&k| (greedy[k - 1], k));
    near.truncate(POLISHED_KS);
    near.sort_unstable();
    let mut best: Option<(u64, usize)> = None;
    let mut at = near.iter();
    selectors.visit_in_order(
        near.len(),
        |i| cost_at(near[i], TargetSearch::Polished),
        &mut |(cost, spent): Costed| {
            *work += spent;
            let k = *at.next().expect("one cost per K");
            if let Some(cost) = cost {
                if best.is_none_or(|(c, _)| cost < c) {
                    best = Some((cost, k));
                }
            }
            ControlFlow::Continue(())
        },
    )?;
    // No K can meet it: the largest K, whose plan then says it is not met.
    let k = best.map_or(largest, |(_, k)| k);
    let selection = selection_at(&selectors, options, k)?;
    let plan = plan_selection_on(log, strata, &selection, PlanRule::Target(target_pct))?;
    Ok(Some((selection, plan)))
}

/// The selection of `selectors` at `k` bins, with `options`.
fn selection_at(
    selectors: &Selectors,
    options: &SelectOptions,
    k: usize,
) -> Result<Selection, SelectError> {
    let fixed = SelectOptions {
        bins: BinCount::Fixed(k),
        ..options.clone()
    };
    let mut go_on = |_, _| ControlFlow::Continue(());
    let curve = selectors.curve(&fixed, &mut go_on)?.expect("never stopped");
    Ok(selectors
        .choose(&fixed, curve, &mut go_on)?
        .expect("never stopped"))
}

/// The selection at `k` bins that the cheapest plan's search costs: its bins for plans that
/// size each bin by its noise (`Selectors::for_plans`), not `run_selection`'s.
#[cfg(test)]
pub(super) fn plans_selection_at(log: &RunLog, options: &SelectOptions, k: usize) -> Selection {
    let strata = StrataGroups::for_options(log, options).unwrap();
    let selectors =
        Selectors::for_plans(log, &strata, options, &mut |_, _| ControlFlow::Continue(()))
            .unwrap()
            .expect("never stopped");
    selection_at(&selectors, options, k).unwrap()
}
