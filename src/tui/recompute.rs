//! Recomputation: the work `update` hands the run loop (`Effect`), starting what the settings
//! need (at once, as a job, or as a restart of the session) and taking in what a job sends back.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::app::{App, Options, Overlay, Pending, Prepared, Settings, Shown, Status};
use super::compute::{self, Done, Job};
use super::save::ExportJob;
use crate::options::Surface;
use crate::select::plan::{PlanAsk, ProfilePlan};
use crate::select::Selection;

/// Work the run loop carries out for `update`.
pub enum Effect<'a> {
    /// Recompute off the UI thread; the result comes back through `finished`.
    Compute(Job<'a>),
    /// Make the export's documents off the UI thread; they come back through `export_made`.
    /// Boxed: it carries a selection, and effects are moved around often.
    MakeExport(Box<ExportJob>),
    /// Judge measurements off the UI thread; the result comes back through `measured`.
    Measure(Box<super::measured::MeasureJob>),
    /// Write the export; the outcome comes back through `exported`.
    Export(super::save::ExportSet),
    /// Put this text on the terminal's clipboard (OSC 52).
    Clipboard(String),
    /// Compute the naive baselines of these budgets not kept yet, off the UI thread (a curve
    /// shown without a job: prepared earlier, or carried over a restart).
    FillBaselines(Vec<usize>),
}

/// Start the recomputation the settings need: at once when the prepared selectors answer
/// them in O(groups), else as a job. A running job is cancelled (its result is stale) unless
/// it is building the very selectors these settings need.
pub fn recompute<'a>(app: &mut App<'a>) -> Option<Effect<'a>> {
    let settings = app.settings;
    if !settings.auto && app.session.ask.plan {
        // `--plan` chooses K itself: a K set by hand (h/l, :k, a, u) leaves it, as `--bins`
        // conflicts with `--plan`; the session starts again without it.
        let asked = app.options_now();
        let ask = PlanAsk {
            plan: false,
            ..asked.ask
        };
        return restart(app, asked.base, ask);
    }
    let prepared = app.prepared(settings.method, settings.pick).cloned();
    let wanted = Some((settings.method, settings.pick));
    let building = |p: &Pending| p.prepares == wanted && p.label != compute::PLANNING;
    if prepared.is_none() && app.pending.as_ref().is_some_and(building) {
        // The running job builds exactly the selectors these settings need (k-means fits,
        // the exact DP table: seconds on large runs). Cancelling it would start that work
        // over; it runs on, and `finished` recomputes for the settings of that moment.
        // While it is still making the target's plan (before those selectors; the DP table
        // it builds is kept with the key groups) it is superseded like any other job.
        return None;
    }
    if let Some(pending) = app.pending.take() {
        pending.cancel();
    }
    if let Some(prepared) = &prepared {
        // A plan (samples, budget, the target's cheapest) is made on the worker.
        let planned = app.session.rule(&settings).is_some();
        if !planned && prepared.instant(&settings) {
            return answer_at_once(app, prepared, settings);
        }
    }
    Some(Effect::Compute(start_job(app, prepared, settings)))
}

/// Choose from selectors already prepared, in O(groups): shown before the next key.
fn answer_at_once<'a>(
    app: &mut App<'a>,
    prepared: &Prepared<'a>,
    settings: Settings,
) -> Option<Effect<'a>> {
    let options = app.session.options(&settings);
    let mut go_on = |_, _| ControlFlow::Continue(());
    match prepared
        .selectors
        .choose(&options, prepared.curve.to_vec(), &mut go_on)
    {
        Ok(Some(selection)) => show(app, settings, selection, None),
        Ok(None) => {}
        Err(e) => say_error(app, &e.worded(Surface::Explorer)),
    }
    // A curve no worker is filling in (prepared before a restart) gets its baselines.
    let budgets = compute::shown_budgets(app.session, None, Some(&prepared.curve));
    let unfilled = app.filling.is_none() && compute::lacks_baselines(app.session, &budgets);
    unfilled.then_some(Effect::FillBaselines(budgets))
}

/// The job for these settings, pending until it finishes; the worker still filling in the
/// last curve's naive baselines stops, so that it never competes with it.
fn start_job<'a>(app: &mut App<'a>, prepared: Option<Prepared<'a>>, settings: Settings) -> Job<'a> {
    if let Some(filling) = app.filling.take() {
        filling.store(true, Ordering::Relaxed);
    }
    let job = Job {
        id: app.next_job_id(),
        settings,
        prepared,
        cancel: Arc::new(AtomicBool::new(false)),
    };
    app.pending = Some(Pending {
        id: job.id,
        prepares: job
            .prepared
            .is_none()
            .then_some((settings.method, settings.pick)),
        label: job.label(app.session),
        done: 0,
        total: 0,
        cancel: job.cancel.clone(),
    });
    job
}

/// A job reported progress.
pub fn progressed(app: &mut App, id: u64, label: &'static str, done: usize, total: usize) {
    if let Some(pending) = app.pending.as_mut().filter(|p| p.id == id) {
        pending.label = label;
        pending.done = done;
        pending.total = total;
    }
}

/// A job sent a selection before finishing (k-means at a fixed K, ahead of its curve): show
/// it if it is still what the settings ask for; the job stays pending for the curve.
pub fn interim(
    app: &mut App,
    id: u64,
    settings: Settings,
    selection: Selection,
    plan: Option<ProfilePlan>,
) {
    let current =
        app.pending.as_ref().is_some_and(|p| p.id == id) && settings.same_selection(&app.settings);
    if current {
        show(app, settings, selection, plan);
    }
}

/// A job finished: keep its selectors; show its result unless newer settings superseded it.
/// When the settings moved on while it ran (K or target changed during the preparation it
/// was left to finish), the result is shown and the current settings recomputed from it.
pub fn finished<'a>(app: &mut App<'a>, done: Done<'a>) -> Option<Effect<'a>> {
    if let Some(prepared) = done.prepared {
        app.remember(prepared);
    }
    if app.pending.as_ref().is_none_or(|p| p.id != done.id) {
        return None;
    }
    app.filling = app.pending.take().map(|p| p.cancel);
    match done.selection {
        Ok(selection) => {
            app.fallback = None;
            show(app, done.settings, selection, done.plan)
        }
        Err(e) => {
            if let Some(previous) = app.fallback.take() {
                // The new session options cannot give a result: back to the ones before,
                // saying why; the refused change is not kept (nor left to undo).
                if let Some(super::app::Undo::Options(_)) = app.history.last() {
                    app.history.pop();
                }
                say_error(app, &format!("{e} (the options before are kept)"));
                app.reverting = true;
                return restart_with(app, previous);
            }
            say_error(app, &e)
        }
    }
    if app.auto_then != 0 && app.settings.auto && done.settings.same_selection(&app.settings) {
        // K steps waited for this auto-K result: they count from its K (and `u` goes back
        // to auto-K).
        let by = std::mem::take(&mut app.auto_then);
        let found = app.shown_k().unwrap_or(app.settings.k);
        app.history.push(super::app::Undo::Settings(app.settings));
        return set_k(app, found.saturating_add_signed(by), by > 0);
    }
    if done.settings.same_selection(&app.settings) {
        None
    } else {
        recompute(app)
    }
}

pub(super) fn show(
    app: &mut App,
    settings: Settings,
    selection: Selection,
    plan: Option<ProfilePlan>,
) {
    let count = selection.seqpoints.len();
    app.shown = Some(Shown {
        settings,
        selection,
        plan,
    });
    let selected = app
        .table
        .selected()
        .unwrap_or(0)
        .min(count.saturating_sub(1));
    app.table.select(Some(selected));
    if let Overlay::Detail { .. } = app.overlay {
        app.overlay = Overlay::Detail { scroll: 0 };
    }
}

pub(super) fn say_error(app: &mut App, text: &str) {
    app.status = Some(Status {
        text: text.to_string(),
        error: true,
    });
}

/// Set K (clamped to 1..=the largest useful K), leaving auto-K; says why when nothing moves.
pub fn set_k<'a>(app: &mut App<'a>, wanted: usize, up: bool) -> Option<Effect<'a>> {
    let max = app.session.max_k();
    let k = wanted.clamp(1, max);
    if k == app.settings.k && !app.settings.auto {
        let why = if wanted == k {
            format!("K = {k} already")
        } else if up {
            format!("K = {max} already gives every key group its own bin")
        } else {
            "K = 1 is the fewest bins".to_string()
        };
        say_error(app, &why);
        return None;
    }
    app.settings.auto = false;
    app.settings.k = k;
    recompute(app)
}

/// Start the session again over the same log with these options (the run loop does it).
pub(super) fn restart<'a>(
    app: &mut App<'a>,
    base: crate::select::SelectOptions,
    ask: PlanAsk,
) -> Option<Effect<'a>> {
    if let Some(pending) = app.pending.take() {
        pending.cancel();
    }
    // What to profile shapes the options (`select`'s flags do the same).
    let base = ask.shape(base);
    // The new session is built from the one in force: it reads the log again whenever the
    // options asked for read it otherwise (this `:metric`, or one still being built).
    let load = app.reload.take().unwrap_or_else(|| app.options_now().load);
    app.reload = (!super::session::same_reading(&load, &app.session.load)).then(|| load.clone());
    app.asked = Some(Options {
        base: base.clone(),
        ask,
        load,
    });
    app.restart = Some((base, ask));
    None
}

/// Start the session again with these options, reading the log again when they read it
/// otherwise (`u` after `:metric`, or a fallback after a refused option).
pub(super) fn restart_with<'a>(app: &mut App<'a>, options: Options) -> Option<Effect<'a>> {
    app.reload = Some(options.load);
    restart(app, options.base, options.ask)
}

/// Whether these options are the ones the session in force was made with.
fn in_force(app: &App, options: &Options) -> bool {
    let now = app.options_in_force();
    options.base == now.base
        && options.ask == now.ask
        && super::session::same_reading(&options.load, &now.load)
}

/// Esc while new session options are built: the build is dropped (its result, when it
/// comes, is freed unseen) and every option asked for since the session in force goes,
/// with its undo entry; the settings go back to those before the first of them.
pub fn cancel_restart<'a>(app: &mut App<'a>) -> Option<Effect<'a>> {
    app.building = None;
    app.reading = None;
    app.asked = None;
    app.restart_line = None;
    while let Some(super::app::Undo::Options(entry)) = app.history.last() {
        let back_to_force = in_force(app, &entry.0);
        app.settings = entry.1;
        app.history.pop();
        if back_to_force {
            break;
        }
    }
    app.status = Some(Status {
        text: "new session options cancelled; the options in force are kept".into(),
        error: false,
    });
    // The restart cancelled the job of the session that stays: it starts again.
    recompute(app)
}

/// A restart's new session could not be made (a `:metric` column missing, …): the session
/// goes on with the options it had, and the error is said; the refused change is not undone
/// by `u`, it never happened.
pub fn refused_restart<'a>(app: &mut App<'a>, error: String) -> Option<Effect<'a>> {
    app.asked = None;
    app.reading = None;
    let mut earlier = None;
    if let Some(super::app::Undo::Options(entry)) = app.history.last() {
        // Options asked for before the refused one, still not in force (typed while their
        // session was built), are built again without it.
        earlier = (!in_force(app, &entry.0)).then(|| entry.0.clone());
        app.history.pop();
    }
    match app.restart_line.take() {
        // The `:` line that asked for it opens again, the reason under it, as a line
        // refused before it closed would be (unless another popup is open by now).
        Some(line) if app.overlay == Overlay::None => {
            app.last_message = Some(error.clone());
            app.overlay = Overlay::CommandLine(super::app::CommandPrompt {
                cursor: line.chars().count(),
                input: line,
                error: Some(error),
                recalled: None,
            });
        }
        _ => say_error(app, &error),
    }
    if let Some(options) = earlier {
        return restart_with(app, options);
    }
    // The job the restart cancelled is started again for the session that stays.
    recompute(app)
}

/// `:measured`'s judgement came back: shown in full (`i`), or its error said.
pub fn measured(app: &mut App, id: u64, judged: Result<super::app::Judged, String>) {
    if app.measuring != Some(id) {
        return;
    }
    app.measuring = None;
    match judged {
        Ok(judged) => {
            let text = match (&judged.top_up, judged.met) {
                (_, true) => format!("{}: the target is met on these measurements", judged.path),
                (Some(doc), false) => format!(
                    "{}: not met yet; {} more iterations to measure (:top-up FILE writes them)",
                    judged.path,
                    doc.plan_rows().count()
                ),
                (None, false) => format!("{}: the target is not met", judged.path),
            };
            app.judged = Some(judged);
            app.status = Some(Status { text, error: false });
            app.overlay = Overlay::About { scroll: 0 };
        }
        Err(e) => say_error(app, &e),
    }
}
