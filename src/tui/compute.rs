//! Recomputation too slow for a key press (building selectors and their DP table, the
//! error-versus-K curve, the auto-K search, k-means): a `Job` run on a worker thread.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::app::{Prepared, Session, Settings};
use crate::options::Surface;
use crate::select::naive::{Baseline, RANDOM_DRAWS};
use crate::select::plan::{PlanRule, ProfilePlan};
use crate::select::{
    answer_with, Answer, Answering, BinCount, CurvePoint, SelectError, SelectOptions, Selection,
    Selectors, CHEAPEST_PLAN, CHOOSING_K, PROFILING_PLAN,
};

/// One recomputation: everything missing for `settings`, reusing `prepared` when given.
pub struct Job<'a> {
    pub id: u64,
    pub settings: Settings,
    pub prepared: Option<Prepared<'a>>,
    pub cancel: Arc<AtomicBool>,
}

/// What a finished job hands back to the UI thread.
pub struct Done<'a> {
    pub id: u64,
    pub settings: Settings,
    /// The selectors used, to keep for later key presses (even when the job is stale).
    pub prepared: Option<Prepared<'a>>,
    pub selection: Result<Selection, String>,
    /// The profiling plan `select` gives for these settings, when it gives one.
    pub plan: Option<ProfilePlan>,
}

/// What the job is doing, for the progress line (the stages it shares with `select` are
/// named there).
pub const PREPARING: &str = crate::select::PREPARING_BINS;
pub const CURVE: &str = crate::select::ERROR_CURVE;
pub const SEARCH: &str = "auto-K search";
pub const SELECTING: &str = "selecting";
pub const PLANNING: &str = CHEAPEST_PLAN;
pub const PLAN: &str = PROFILING_PLAN;

impl<'a> Job<'a> {
    /// The label shown before the first progress report.
    pub fn label(&self, session: &Session) -> &'static str {
        let target_plan = matches!(session.rule(&self.settings), Some(PlanRule::Target(_)));
        match (&self.prepared, self.settings.auto) {
            // The target's plan comes first when the selectors are to be built too.
            (None, _) if target_plan => PLANNING,
            (None, _) => PREPARING,
            (Some(_), true) => SEARCH,
            (Some(_), false) => SELECTING,
        }
    }

    /// Run to the end, reporting `(label, done, total)`; `None` once cancelled.
    pub fn run(
        self,
        session: &'a Session,
        report: &mut dyn FnMut(&'static str, usize, usize),
    ) -> Option<Done<'a>> {
        self.run_with_interim(session, report, &mut |_, _| {})
    }

    /// `run`, handing `interim` the selection for a fixed K that is slow to make (a k-means
    /// fit) as soon as it is made, before the error curve's fits (seconds on large runs): the
    /// screen shows the new selection meanwhile, and only the curve waits.
    pub fn run_with_interim(
        self,
        session: &'a Session,
        report: &mut dyn FnMut(&'static str, usize, usize),
        interim: &mut dyn FnMut(Selection, Option<ProfilePlan>),
    ) -> Option<Done<'a>> {
        let cancel = self.cancel.clone();
        let go_on = move || {
            if cancel.load(Ordering::Relaxed) {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let (id, settings) = (self.id, self.settings);
        let fail = |prepared: Option<Prepared<'a>>, e: SelectError| Done {
            id,
            settings,
            prepared,
            selection: Err(e.worded(Surface::Explorer)),
            plan: None,
        };
        let request = session.request(&settings);
        // `select`'s stages under the explorer's labels: the choice of K says whether it
        // searches (auto) or takes K as set.
        let mut told = |stage: &'static str, done, total| {
            let label = match stage {
                CHOOSING_K if settings.auto => SEARCH,
                CHOOSING_K => SELECTING,
                CHEAPEST_PLAN => PLANNING,
                PROFILING_PLAN => PLAN,
                other => other,
            };
            report(label, done, total);
            go_on()
        };
        let answered = |answered: Result<Option<Answer>, SelectError>,
                        prepared: Option<Prepared<'a>>| {
            Some(match answered {
                Ok(None) => return None,
                Ok(Some(answer)) => Done {
                    id,
                    settings,
                    prepared,
                    selection: Ok(answer.selection),
                    plan: answer.plan,
                },
                Err(e) => fail(prepared, e),
            })
        };
        let target_plan = matches!(request.plan, Some(PlanRule::Target(_)));
        // The target's cheapest plan needs no curve: when the selectors must be built too, it
        // is made first and shown as soon as `select` would print it; only the curve waits.
        let mut planned: Option<Answer> = None;
        let prepared = match self.prepared {
            Some(prepared) => prepared,
            None => {
                if target_plan {
                    let answering = Answering {
                        strata: Some(&session.strata),
                        progress: Some(&mut told),
                        ..Answering::default()
                    };
                    match answer_with(&session.log, &request, answering) {
                        Ok(Some(answer)) => {
                            interim(answer.selection.clone(), answer.plan.clone());
                            planned = Some(answer);
                        }
                        Ok(None) => return None,
                        Err(e) => return Some(fail(None, e)),
                    }
                    if go_on().is_break() {
                        return None;
                    }
                }
                let _ = told(PREPARING, 0, 0);
                let options = table_options(session, &settings);
                let selectors = Selectors::new(
                    &session.log,
                    &session.strata,
                    &options,
                    &mut |done, total| told(PREPARING, done, total),
                );
                let selectors = match selectors {
                    Ok(Some(s)) => s,
                    Ok(None) => return None,
                    Err(e) => return Some(fail(None, e)),
                };
                // A K the selectors cannot answer at once (a k-means fit) is shown as soon as
                // it is made; the curve's many such fits follow.
                // (Not when a plan is to come: the one-sample projection would mislead.)
                if request.plan.is_none() && !settings.auto && !selectors.ready(settings.k) {
                    let early = selectors.choose(&request.options, Vec::new(), &mut |_, _| go_on());
                    if let Ok(Some(selection)) = early {
                        interim(selection, None);
                    }
                }
                let curve = selectors.curve(&options, &mut |done, total| told(CURVE, done, total));
                let curve = match curve {
                    Ok(Some(curve)) => curve,
                    Ok(None) => return None,
                    Err(e) => return Some(fail(None, e)),
                };
                // The naive baselines beside the curve are filled in after the result is
                // shown (`fill_baselines`): with many samples per SeqPoint they take seconds.
                Prepared {
                    selectors: Arc::new(selectors),
                    curve: Arc::new(curve),
                }
            }
        };
        if let Some(answer) = planned {
            return answered(Ok(Some(answer)), Some(prepared));
        }
        let answering = Answering {
            strata: Some(&session.strata),
            prepared: Some((&*prepared.selectors, &prepared.curve[..])),
            progress: Some(&mut told),
        };
        let answer = answer_with(&session.log, &request, answering);
        answered(answer, Some(prepared))
    }
}

/// Options that size the prepared table and the curve: the command line's `--max-bins`,
/// whatever K is set now (K beyond it still works, from a table built for that K).
pub fn table_options(session: &Session, settings: &Settings) -> SelectOptions {
    SelectOptions {
        bins: BinCount::Target(settings.target_pct),
        error_curve: true,
        ..session.options(settings)
    }
}

/// The budgets whose naive baselines a result shows: the plan's (the curve's legend), then
/// each K's of the curve.
pub fn shown_budgets(
    session: &Session,
    plan: Option<&ProfilePlan>,
    curve: Option<&[CurvePoint]>,
) -> Vec<usize> {
    let plan = plan.map(|p| p.iterations() as usize);
    let curve = curve.unwrap_or_default().iter();
    plan.into_iter()
        .chain(curve.map(|p| session.curve_budget(p)))
        .collect()
}

/// Whether some of these budgets has no naive baselines kept yet.
pub fn lacks_baselines(session: &Session, budgets: &[usize]) -> bool {
    budgets
        .iter()
        .any(|&b| session.kept_baseline_errors(b).is_none())
}

/// The key groups' medians a SeqPoint's detail shows (a gather of the first metric by group:
/// 161 ms on 10M rows), worked out ahead on a worker after the first result, so that
/// opening a detail does not hold the UI thread for them. Stops when `cancel` is set.
pub fn warm_detail_medians(session: &Session, cancel: &AtomicBool) {
    let log = &session.log;
    if log.configs.first().is_none_or(|c| c.metrics.is_empty()) {
        return;
    }
    for groups in &session.strata.groups {
        if cancel.load(Ordering::Relaxed) {
            return;
        }
        groups.medians(log, 0, 0);
    }
}

/// Compute the naive baselines of each budget not kept yet, in order, telling `filled`
/// after each; stops early once `cancel` is set (the settings moved on). They are made after
/// the result is shown: at large budgets they take longer than the plan itself.
pub fn fill_baselines(
    session: &Session,
    budgets: &[usize],
    cancel: &AtomicBool,
    filled: &mut dyn FnMut(),
) {
    for &budget in budgets {
        if cancel.load(Ordering::Relaxed) {
            return;
        }
        if session.kept_baseline_errors(budget).is_none() {
            baseline_errors(session, budget);
            filled();
        }
    }
}

/// First-N's and random-N's worst errors profiling `budget` iterations, with the warm-up and
/// seed `select` uses; kept in the session by budget (they depend on nothing else).
pub fn baseline_errors(session: &Session, budget: usize) -> (f64, f64) {
    if let Some(kept) = session.kept_baseline_errors(budget) {
        return kept;
    }
    // Every budget past what can be profiled gives the same baselines: kept once.
    let budget = session.baseline_budget(budget);
    let baselines = session.baselines();
    let (warmup, seed) = (session.base.warmup, session.base.seed);
    let worst = |b: Baseline| {
        b.errors
            .iter()
            .chain(&b.speedup_errors)
            .map(|e| e.error_pct)
            .fold(0.0, f64::max)
    };
    let errors = (
        worst(baselines.first_n(budget, warmup)),
        worst(baselines.random_n(budget, warmup, RANDOM_DRAWS, seed)),
    );
    if let Ok(mut kept) = session.baselines_by_budget.lock() {
        kept.insert(budget, errors);
    }
    errors
}
