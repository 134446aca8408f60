//! `select`'s question, answered in one place: given a run log and what the user asked, the
//! SeqPoints and, when the ask calls for it, the profiling plan. `seqpoint select` and the
//! explorer both call [`answer_with`], so the default policy is written here only: an error
//! target met by its interval gets the cheapest plan meeting it (K and samples searched
//! together); otherwise K is chosen (fixed, or by the target), then the plan its rule asks for
//! (`--samples`, `--budget`) is made, or none (one profiled iteration per SeqPoint).

use std::ops::ControlFlow;

use super::plan::{
    cheapest_plan, plan_selection_on, searched_options, PlanAsk, PlanRule, ProfilePlan,
};
use super::{
    check_options, select_on, BinCount, CurvePoint, SelectError, SelectOptions, Selection,
    Selectors, StrataGroups, CHOOSING_K, DEFAULT_TARGET_PCT,
};
use crate::runlog::RunLog;

/// What the cheapest plan's search is doing, for a progress display.
pub const CHEAPEST_PLAN: &str = "cheapest plan";
/// What making a selection's plan (`--samples`, `--budget`) is doing.
pub const PROFILING_PLAN: &str = "profiling plan";

/// Told `(stage, done, total)` as the work goes (stages: `PREPARING_BINS`, `ERROR_CURVE`,
/// `CHOOSING_K`, `CHEAPEST_PLAN`, `PROFILING_PLAN`); `Break` stops it.
pub type StageProgress<'p> = &'p mut dyn FnMut(&'static str, usize, usize) -> ControlFlow<()>;

/// What the user asked: the selection's options and how much to profile.
#[derive(Debug, Clone, PartialEq)]
pub struct SelectRequest {
    pub options: SelectOptions,
    /// How many iterations each SeqPoint profiles; `None`: one each, no plan.
    pub plan: Option<PlanRule>,
}

impl SelectRequest {
    /// The request `select`'s flags (or the explorer's `:` commands) make: `ask` resolved
    /// against the options' K and `target_pct` by `PlanAsk::rule`, the one rule for both.
    pub fn asked(options: SelectOptions, ask: PlanAsk, target_pct: f64) -> Self {
        let fixed = match options.bins {
            BinCount::Fixed(k) => Some(k),
            BinCount::Target(_) => None,
        };
        let plan = ask.rule(fixed, target_pct, options.target_by);
        SelectRequest { options, plan }
    }

    /// The options checked against the log before any work: a target's plan searches K.
    fn checked_options(&self) -> SelectOptions {
        match self.plan {
            Some(PlanRule::Target(target)) => searched_options(&self.options, target),
            _ => self.options.clone(),
        }
    }
}

impl Default for SelectRequest {
    /// What `seqpoint select RUN` does with no flags.
    fn default() -> Self {
        // `select` draws no error curve unless a figure asks for it (`plot`, the explorer).
        let options = SelectOptions {
            error_curve: false,
            ..SelectOptions::default()
        };
        SelectRequest::asked(options, PlanAsk::default(), DEFAULT_TARGET_PCT)
    }
}

/// The SeqPoints and, when the request asked for one, their profiling plan.
#[derive(Debug, Clone)]
pub struct Answer {
    pub selection: Selection,
    pub plan: Option<ProfilePlan>,
}

impl Answer {
    /// Iterations to profile: the plan's, else one per SeqPoint.
    pub fn iterations(&self) -> u64 {
        self.plan
            .as_ref()
            .map_or(self.selection.bins() as u64, ProfilePlan::iterations)
    }
}

/// What an answer may reuse, and whom it tells how far it is: all optional.
#[derive(Default)]
pub struct Answering<'p> {
    /// Key groups prepared earlier for the request's options (same strata, warm-up and
    /// exclusion): no pass over the rows, and a DP table kept there is reused.
    pub strata: Option<&'p StrataGroups>,
    /// Selectors and their error curve, made earlier over `strata` with the request's method
    /// and pick (the explorer keeps them between keys): only K is chosen again.
    pub prepared: Option<(&'p Selectors<'p>, &'p [CurvePoint])>,
    pub progress: Option<StageProgress<'p>>,
}

/// What `seqpoint select` gives for `request`.
pub fn answer(log: &RunLog, request: &SelectRequest) -> Result<Answer, SelectError> {
    let answered = answer_with(log, request, Answering::default())?;
    Ok(answered.expect("never stopped"))
}

/// `answer`, reusing what `answering` holds and telling its progress; `None` when the
/// progress stopped the work (the explorer's cancel).
pub fn answer_with(
    log: &RunLog,
    request: &SelectRequest,
    answering: Answering,
) -> Result<Option<Answer>, SelectError> {
    let mut go_on = |_: &'static str, _, _| ControlFlow::Continue(());
    let progress = answering.progress.unwrap_or(&mut go_on);
    let grouped;
    let strata = match answering.strata {
        Some(strata) => strata,
        None => {
            // Settings first (cheap); the metric values are checked while grouping.
            check_options(log, &request.checked_options())?;
            grouped = StrataGroups::for_options(log, &request.options)?;
            &grouped
        }
    };
    let options = &request.options;
    if let Some(PlanRule::Target(target)) = request.plan {
        if progress(CHEAPEST_PLAN, 0, 0).is_break() {
            return Ok(None);
        }
        let found = cheapest_plan(log, strata, options, target, &mut |done, total| {
            progress(CHEAPEST_PLAN, done, total)
        })?;
        return Ok(found.map(|(selection, plan)| Answer {
            selection,
            plan: Some(plan),
        }));
    }
    check_options(log, options)?;
    let selection = match answering.prepared {
        Some((selectors, curve)) => {
            selectors.choose(options, curve.to_vec(), &mut |done, total| {
                progress(CHOOSING_K, done, total)
            })?
        }
        None => select_on(log, strata, options, progress)?,
    };
    let Some(selection) = selection else {
        return Ok(None);
    };
    let plan = match request.plan {
        Some(rule) => {
            if progress(PROFILING_PLAN, 0, 0).is_break() {
                return Ok(None);
            }
            Some(plan_selection_on(log, strata, &selection, rule)?)
        }
        None => None,
    };
    Ok(Some(Answer { selection, plan }))
}
