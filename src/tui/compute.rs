//! Recomputation too slow for a key press (building selectors and their DP table, the
//! error-versus-K curve, the auto-K search, k-means): a `Job` run on a worker thread.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::app::{Prepared, Session, Settings};
use crate::options::Surface;
use crate::select::naive::{Baseline, RANDOM_DRAWS};
use crate::select::plan::{cheapest_plan_with_progress, plan_selection_on, PlanRule, ProfilePlan};
use crate::select::{BinCount, CurvePoint, SelectError, SelectOptions, Selection, Selectors};

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
pub const PLANNING: &str = "cheapest plan";
pub const PLAN: &str = "profiling plan";

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
        let rule = session.rule(&settings);
        // The target's cheapest plan, made first when the selectors must be built too: it is
        // shown as soon as `select` would print it, and only the curve waits.
        let mut planned: Option<(Selection, ProfilePlan)> = None;
        let prepared = match self.prepared {
            Some(prepared) => prepared,
            None => {
                if let Some(PlanRule::Target(target)) = rule {
                    report(PLANNING, 0, 0);
                    match cheapest_plan_with_progress(
                        &session.log,
                        &session.strata,
                        &session.options(&settings),
                        target,
                        &mut |done, total| {
                            report(PLANNING, done, total);
                            go_on()
                        },
                    ) {
                        Ok(Some((selection, plan))) => {
                            interim(selection.clone(), Some(plan.clone()));
                            planned = Some((selection, plan));
                        }
                        Ok(None) => return None,
                        Err(e) => return Some(fail(None, e)),
                    }
                    if go_on().is_break() {
                        return None;
                    }
                }
                report(PREPARING, 0, 0);
                let options = table_options(session, &settings);
                let selectors = Selectors::new_with_progress(
                    &session.log,
                    &session.strata,
                    &options,
                    &mut |done, total| {
                        report(PREPARING, done, total);
                        go_on()
                    },
                );
                let selectors = match selectors {
                    Ok(Some(s)) => s,
                    Ok(None) => return None,
                    Err(e) => return Some(fail(None, e)),
                };
                // A K the selectors cannot answer at once (a k-means fit) is shown as soon as
                // it is made; the curve's many such fits follow.
                // (Not when a plan is to come: the one-sample projection would mislead.)
                let rule = session.rule(&settings);
                if rule.is_none() && !settings.auto && !selectors.ready(settings.k) {
                    let early =
                        selectors
                            .choose(&session.options(&settings), Vec::new(), &mut |_, _| go_on());
                    if let Ok(Some(selection)) = early {
                        interim(selection, None);
                    }
                }
                let curve = selectors.curve(&options, &mut |done, total| {
                    report(CURVE, done, total);
                    go_on()
                });
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
        if let Some(PlanRule::Target(target)) = rule {
            // The least profiling meeting the target, exactly as `select` finds it.
            report(PLANNING, 0, 0);
            if go_on().is_break() {
                return None;
            }
            let options = session.options(&settings);
            let made = match planned {
                Some(made) => Ok(Some(made)),
                None => cheapest_plan_with_progress(
                    &session.log,
                    &session.strata,
                    &options,
                    target,
                    &mut |done, total| {
                        report(PLANNING, done, total);
                        go_on()
                    },
                ),
            };
            return Some(match made {
                Ok(None) => return None,
                Ok(Some((selection, plan))) => Done {
                    id,
                    settings,
                    prepared: Some(prepared),
                    selection: Ok(selection),
                    plan: Some(plan),
                },
                Err(e) => fail(Some(prepared), e),
            });
        }
        let label = if settings.auto { SEARCH } else { SELECTING };
        let selection = prepared.selectors.choose(
            &session.options(&settings),
            prepared.curve.to_vec(),
            &mut |done, total| {
                report(label, done, total);
                go_on()
            },
        );
        match selection {
            Ok(Some(selection)) => {
                if rule.is_some() {
                    report(PLAN, 0, 0);
                }
                let plan = rule
                    .map(|rule| plan_selection_on(&session.log, &session.strata, &selection, rule))
                    .transpose();
                Some(match plan {
                    Ok(plan) => Done {
                        id,
                        settings,
                        prepared: Some(prepared),
                        selection: Ok(selection),
                        plan,
                    },
                    Err(e) => fail(Some(prepared), e),
                })
            }
            Ok(None) => None,
            Err(e) => Some(fail(Some(prepared), e)),
        }
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
