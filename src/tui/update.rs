//! Actions to new state. No terminal and no files here: work that is slow or touches the
//! disk comes back as an `Effect` for the run loop (or a test) to carry out.

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::app::{
    App, ExportPlan, ExportPrompt, Exporting, Measure, Overlay, Overwrite, Pending, Settings,
    Shown, SortBy, Status, View, TARGETS,
};
use super::command_line::{self, Command};
use super::compute::{self, Done, Job};
use super::keymap::Action;
use super::save::{ExportJob, ExportOutcome};
use crate::output::protect::refuse_input_target;
use crate::pick::Pick;
use crate::select::plan::{PlanAsk, ProfilePlan};
use crate::select::Selection;

/// Work the run loop carries out for `update`.
pub enum Effect<'a> {
    /// Recompute off the UI thread; the result comes back through `finished`.
    Compute(Job<'a>),
    /// Make the export's documents off the UI thread; they come back through `export_made`.
    /// Boxed: it carries a selection, and effects are moved around often.
    MakeExport(Box<ExportJob>),
    /// Write the export; the outcome comes back through `exported`.
    Export(ExportPlan),
    /// Put this text on the terminal's clipboard (OSC 52).
    Clipboard(String),
    /// Compute the naive baselines of these budgets not kept yet, off the UI thread (a curve
    /// shown without a job: prepared earlier, or carried over a restart).
    FillBaselines(Vec<usize>),
}

/// Rows a page key moves before the table has been drawn (then: its visible height).
const PAGE: usize = 10;
/// Characters ← → scroll a command line wider than the screen.
const SIDEWAYS: usize = 20;

/// Settings changes kept for `u`.
const UNDO_KEPT: usize = 100;

/// Apply an action; a change of the settings can be undone with `u`.
pub fn update<'a>(app: &mut App<'a>, action: Action) -> Option<Effect<'a>> {
    if action == Action::Undo {
        if let Some(status) = app.status.take() {
            app.last_message = Some(status.text);
        }
        let Some(previous) = app.history.pop() else {
            say_error(app, "nothing to undo");
            return None;
        };
        app.settings = previous;
        return recompute(app);
    }
    let before = app.settings;
    let effect = apply(app, action);
    if app.settings != before {
        app.history.push(before);
        if app.history.len() > UNDO_KEPT {
            app.history.remove(0);
        }
    }
    effect
}

fn apply<'a>(app: &mut App<'a>, action: Action) -> Option<Effect<'a>> {
    // A message stays until the next key, so it is read before it goes; `i` shows it again.
    if let Some(status) = app.status.take() {
        app.last_message = Some(status.text);
    }
    match action {
        Action::Quit => {
            if let Some(pending) = app.pending.take() {
                pending.cancel();
            }
            app.quit = true;
            None
        }
        Action::Back => {
            if app.view == View::SeqPoints {
                app.view = View::Overview;
            } else {
                app.status = Some(Status {
                    text: "Esc goes back (closes a popup, leaves the table); q quits".into(),
                    error: false,
                });
            }
            None
        }
        Action::Suspend => {
            app.suspend = true;
            None
        }
        Action::FewerBins => change_k(app, -1),
        Action::MoreBins => change_k(app, 1),
        Action::FewerBinsTen => change_k(app, -10),
        Action::MoreBinsTen => change_k(app, 10),
        Action::CommandLine => {
            app.overlay = Overlay::CommandLine(Default::default());
            None
        }
        Action::Search => {
            app.overlay = Overlay::Search(Default::default());
            None
        }
        Action::CycleSort => {
            let selected = app.selected_seqpoint();
            app.sort = next_after(&SortBy::ALL, app.sort);
            // The same SeqPoint stays selected in its new row.
            let row = selected.and_then(|s| app.row_order().iter().position(|&i| i == s));
            app.table.select(Some(row.unwrap_or(0)));
            app.status = Some(Status {
                text: format!("table ordered by {}", app.sort.name()),
                error: false,
            });
            None
        }
        Action::LowerTarget | Action::RaiseTarget => {
            app.settings.target_pct =
                step_target(app.settings.target_pct, action == Action::RaiseTarget);
            // Without auto-K the target only judges the errors: nothing to recompute.
            app.settings.auto.then(|| recompute(app)).flatten()
        }
        Action::ToggleAuto => {
            if app.settings.auto {
                app.settings.k = app.shown_k().unwrap_or(app.settings.k).max(1);
            }
            app.settings.auto = !app.settings.auto;
            recompute(app)
        }
        Action::CycleMethod => {
            let methods = app.session.methods();
            app.settings.method = next_after(&methods, app.settings.method);
            recompute(app)
        }
        Action::CyclePick => {
            app.settings.pick = next_after(&Pick::ALL, app.settings.pick);
            recompute(app)
        }
        Action::ToggleLogScale => {
            app.log_scale = !app.log_scale;
            None
        }
        Action::CycleMeasure => {
            let metrics = app.session.log.metric_names().len();
            app.measure = match app.measure {
                Measure::Iterations if metrics > 0 => Measure::Metric(0),
                Measure::Metric(m) if m + 1 < metrics => Measure::Metric(m + 1),
                _ => Measure::Iterations,
            };
            None
        }
        Action::NextView | Action::PreviousView => {
            app.view = match app.view {
                View::Overview => View::SeqPoints,
                View::SeqPoints => View::Overview,
            };
            None
        }
        Action::Export => {
            if app.current().is_some() {
                let input = app.session.default_export_path().display().to_string();
                app.overlay = Overlay::Export(ExportPrompt {
                    cursor: input.chars().count(),
                    input,
                    confirm: None,
                });
            } else {
                say_error(app, "still computing: export once the new result is shown");
            }
            None
        }
        Action::ShowCommand => {
            app.overlay = Overlay::Command { scroll: 0 };
            Some(Effect::Clipboard(app.session.command(&app.settings)))
        }
        Action::About => {
            app.overlay = Overlay::About { scroll: 0 };
            None
        }
        Action::Help => {
            app.overlay = Overlay::Help { scroll: 0 };
            None
        }
        Action::Close => {
            if let Overlay::Export(_) = app.overlay {
                // Leaving the prompt while the documents are made cancels the export.
                app.exporting = None;
            }
            app.overlay = Overlay::None;
            None
        }
        Action::Up
        | Action::Down
        | Action::PageUp
        | Action::PageDown
        | Action::First
        | Action::Last => {
            move_selection(app, action);
            None
        }
        Action::Open => {
            if app.selected_seqpoint().is_some() {
                app.overlay = Overlay::Detail { scroll: 0 };
            }
            None
        }
        Action::Undo => None,
        Action::Type(_)
        | Action::Erase
        | Action::EraseForward
        | Action::CursorLeft
        | Action::CursorRight
        | Action::CursorStart
        | Action::CursorEnd
        | Action::ClearInput => {
            match &mut app.overlay {
                Overlay::Command { scroll } => match action {
                    Action::CursorLeft => *scroll = scroll.saturating_sub(SIDEWAYS),
                    // The popup clamps the scroll to the line's end.
                    Action::CursorRight => *scroll = scroll.saturating_add(SIDEWAYS),
                    _ => {}
                },
                Overlay::Export(prompt) => edit(&mut prompt.input, &mut prompt.cursor, action),
                Overlay::CommandLine(prompt) | Overlay::Search(prompt) => {
                    edit(&mut prompt.input, &mut prompt.cursor, action);
                    prompt.error = None;
                }
                _ => {}
            }
            None
        }
        Action::Complete => {
            if let Overlay::CommandLine(prompt) = &mut app.overlay {
                match command_line::complete(&prompt.input) {
                    Some(line) => {
                        prompt.cursor = line.chars().count();
                        prompt.input = line;
                        prompt.error = None;
                    }
                    None => prompt.error = Some(format!("no command starts {:?}", prompt.input)),
                }
            }
            None
        }
        Action::Submit => match app.overlay {
            Overlay::CommandLine(_) => submit_command(app),
            Overlay::Search(_) => {
                submit_search(app);
                None
            }
            _ => submit_export(app),
        },
        Action::ConfirmOverwrite => match &mut app.overlay {
            Overlay::Export(prompt) => prompt.confirm.take().map(|asked| {
                let mut plan = asked.plan;
                plan.overwrite = true;
                Effect::Export(plan)
            }),
            _ => None,
        },
        Action::DeclineOverwrite => {
            if let Overlay::Export(prompt) = &mut app.overlay {
                prompt.confirm = None;
            }
            None
        }
    }
}

/// Start the recomputation the settings need: at once when the prepared selectors answer
/// them in O(groups), else as a job. A running job is cancelled (its result is stale) unless
/// it is building the very selectors these settings need.
pub fn recompute<'a>(app: &mut App<'a>) -> Option<Effect<'a>> {
    let settings = app.settings;
    if !settings.auto && app.session.ask.plan {
        // `--plan` chooses K itself: a K set by hand (h/l, :k, a, u) leaves it, as `--bins`
        // conflicts with `--plan`; the session starts again without it.
        let ask = PlanAsk {
            plan: false,
            ..app.session.ask
        };
        return restart(app, app.session.base.clone(), ask);
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
            let options = app.session.options(&settings);
            let mut go_on = |_, _| ControlFlow::Continue(());
            match prepared
                .selectors
                .choose(&options, prepared.curve.to_vec(), &mut go_on)
            {
                Ok(Some(selection)) => show(app, settings, selection, None),
                Ok(None) => {}
                Err(e) => say_error(app, &e.to_string()),
            }
            // A curve no worker is filling in (prepared before a restart) gets its baselines.
            let budgets = compute::shown_budgets(app.session, None, Some(&prepared.curve));
            let unfilled = app.filling.is_none() && compute::lacks_baselines(app.session, &budgets);
            return unfilled.then_some(Effect::FillBaselines(budgets));
        }
    }
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
    Some(Effect::Compute(job))
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
        Ok(selection) => show(app, done.settings, selection, done.plan),
        Err(e) => say_error(app, &e),
    }
    if done.settings.same_selection(&app.settings) {
        None
    } else {
        recompute(app)
    }
}

/// The export's documents were made (or could not be): write them, unless the prompt was
/// left meanwhile.
pub fn export_made<'a>(
    app: &mut App<'a>,
    id: u64,
    made: Result<ExportPlan, String>,
) -> Option<Effect<'a>> {
    if app.exporting.as_ref().is_none_or(|e| e.id != id) {
        return None;
    }
    app.exporting = None;
    match made {
        Ok(plan) => Some(Effect::Export(plan)),
        Err(e) => {
            say_error(app, &e);
            None
        }
    }
}

/// The export was written, refused or failed.
pub fn exported(app: &mut App, outcome: ExportOutcome) {
    match outcome {
        ExportOutcome::Written { json, csv } => {
            app.overlay = Overlay::None;
            app.status = Some(Status {
                text: format!("wrote {} and {}", json.display(), csv.display()),
                error: false,
            });
        }
        ExportOutcome::Exists { plan, existing } => {
            if let Overlay::Export(prompt) = &mut app.overlay {
                prompt.confirm = Some(Overwrite { plan, existing });
            }
        }
        ExportOutcome::Failed(e) => say_error(app, &e),
    }
}

fn show(app: &mut App, settings: Settings, selection: Selection, plan: Option<ProfilePlan>) {
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

fn say_error(app: &mut App, text: &str) {
    app.status = Some(Status {
        text: text.to_string(),
        error: true,
    });
}

fn change_k<'a>(app: &mut App<'a>, by: isize) -> Option<Effect<'a>> {
    let from = if app.settings.auto {
        app.shown_k().unwrap_or(app.settings.k)
    } else {
        app.settings.k
    };
    set_k(app, from.saturating_add_signed(by), by > 0)
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
fn restart<'a>(
    app: &mut App<'a>,
    base: crate::select::SelectOptions,
    ask: PlanAsk,
) -> Option<Effect<'a>> {
    if let Some(pending) = app.pending.take() {
        pending.cancel();
    }
    app.restart = Some((base, ask));
    None
}

/// The next error target down or up; a target between steps goes to its neighbour.
pub fn step_target(current: f64, up: bool) -> f64 {
    if up {
        TARGETS
            .iter()
            .copied()
            .find(|&t| t > current * (1.0 + 1e-9))
            .unwrap_or(current)
    } else {
        TARGETS
            .iter()
            .rev()
            .copied()
            .find(|&t| t < current * (1.0 - 1e-9))
            .unwrap_or(current)
    }
}

fn next_after<T: Copy + PartialEq>(all: &[T], current: T) -> T {
    let at = all
        .iter()
        .position(|&x| x == current)
        .unwrap_or(all.len() - 1);
    all[(at + 1) % all.len()]
}

fn move_selection(app: &mut App, action: Action) {
    let page = app.page_rows.unwrap_or(PAGE);
    if let Overlay::Detail { scroll } | Overlay::About { scroll } | Overlay::Help { scroll } =
        &mut app.overlay
    {
        // The detail view clamps the scroll to what it can show.
        *scroll = moved(*scroll, action, usize::MAX, page);
        return;
    }
    let count = app
        .shown
        .as_ref()
        .map_or(0, |s| s.selection.seqpoints.len());
    if count == 0 {
        return;
    }
    let at = app.table.selected().unwrap_or(0);
    app.table.select(Some(moved(at, action, count - 1, page)));
}

fn moved(at: usize, action: Action, last: usize, page: usize) -> usize {
    let page = page.max(1);
    match action {
        Action::Up => at.saturating_sub(1),
        Action::Down => at.saturating_add(1).min(last),
        Action::PageUp => at.saturating_sub(page),
        Action::PageDown => at.saturating_add(page).min(last),
        Action::First => 0,
        Action::Last => last,
        _ => at,
    }
}

/// Enter on `/`: select the SeqPoint profiling that iteration (or with it as an alternate),
/// else the first whose key reads as typed, else the first whose key contains it.
fn submit_search(app: &mut App) {
    let Overlay::Search(prompt) = &app.overlay else {
        return;
    };
    let wanted = prompt.input.trim().to_string();
    let Some(shown) = &app.shown else {
        return;
    };
    let seqpoints = &shown.selection.seqpoints;
    let order = app.row_order();
    let found = |test: &dyn Fn(&crate::pick::SeqPoint) -> bool| {
        order.iter().position(|&i| test(&seqpoints[i]))
    };
    let iteration = wanted.parse::<u64>().ok();
    let text = |sp: &crate::pick::SeqPoint| crate::groups::key_text(&sp.key);
    let row = iteration
        .and_then(|n| found(&|sp| sp.iteration == n))
        .or_else(|| iteration.and_then(|n| found(&|sp| sp.alternates.contains(&n))))
        .or_else(|| found(&|sp| text(sp) == wanted))
        .or_else(|| found(&|sp| !wanted.is_empty() && text(sp).contains(&wanted)));
    match row {
        Some(row) => {
            app.table.select(Some(row));
            app.overlay = Overlay::None;
        }
        None => {
            if let Overlay::Search(prompt) = &mut app.overlay {
                prompt.error = Some(format!(
                    "no SeqPoint profiles iteration {wanted:?} or has a key like it"
                ));
            }
        }
    }
}

/// Enter on the command line: apply it and close, or say in place what is wrong.
fn submit_command<'a>(app: &mut App<'a>) -> Option<Effect<'a>> {
    let Overlay::CommandLine(prompt) = &mut app.overlay else {
        return None;
    };
    let command = match command_line::parse(&prompt.input) {
        Ok(command) => command,
        Err(e) => {
            prompt.error = Some(e);
            return None;
        }
    };
    if let Err(e) = check_command(app, &command) {
        if let Overlay::CommandLine(prompt) = &mut app.overlay {
            prompt.error = Some(e);
        }
        return None;
    }
    app.overlay = Overlay::None;
    apply_command(app, command)
}

/// What the session itself refuses (a method its key cannot use, a K beyond its keys).
fn check_command(app: &App, command: &Command) -> Result<(), String> {
    let session = app.session;
    match command {
        Command::Method(m) if !session.methods().contains(m) => Err(format!(
            ":method {}: needs a one-length key; this run has {}",
            m.name(),
            session.log.key_names.join(",")
        )),
        Command::K(k) if *k > session.max_k() => Err(format!(
            ":k {k}: this run has {} key groups, so K = {} is the most that changes anything",
            session.max_k(),
            session.max_k()
        )),
        Command::Metric(name) if session.run == "-" => Err(format!(
            ":metric {name}: the log came from standard input and cannot be read again; \
             start the explorer again with --metric {name}"
        )),
        Command::Exclude(range) => {
            // Leaving everything out, or a whole stratum, is said in place.
            let options = crate::select::SelectOptions {
                exclude: session.base.exclude.with(*range),
                ..session.base.clone()
            };
            crate::select::check_options(&session.log, &options)
                .and_then(|()| crate::select::StrataGroups::for_options(&session.log, &options))
                .map(|_| ())
                .map_err(|e| format!(":exclude {}-{}: {e}", range.first, range.last))
        }
        Command::Strata(s) => {
            crate::select::StrataGroups::new(&session.log, *s, session.base.warmup)
                .map(|_| ())
                .map_err(|e| format!(":strata {s}: {e}"))
        }
        _ => Ok(()),
    }
}

/// Apply a parsed command: a setting changes here; an option fixed for the session asks the
/// run loop to start the session again with it.
pub fn apply_command<'a>(app: &mut App<'a>, command: Command) -> Option<Effect<'a>> {
    let mut base = app.session.base.clone();
    let mut ask = app.session.ask;
    match command {
        Command::K(k) => return set_k(app, k, k > app.settings.k),
        Command::Target(pct) => {
            app.settings.target_pct = pct;
            return app.settings.auto.then(|| recompute(app)).flatten();
        }
        Command::Auto => {
            app.settings.auto = true;
            return recompute(app);
        }
        Command::Method(m) => {
            app.settings.method = m;
            return recompute(app);
        }
        Command::Pick(p) => {
            app.settings.pick = p;
            return recompute(app);
        }
        Command::Samples(m) => {
            // `--samples M` alone: it replaces a plan or a budget.
            base.samples = m;
            ask = PlanAsk {
                samples: Some(m),
                ..PlanAsk::default()
            };
        }
        Command::Plan => {
            base.samples = 1;
            ask = PlanAsk {
                plan: true,
                ..PlanAsk::default()
            };
            // The plan chooses K for the target (as the session's own option too).
            app.settings.auto = true;
            base.bins = crate::select::BinCount::Target(app.settings.target_pct);
        }
        Command::Exclude(range) => base.exclude = base.exclude.with(range),
        Command::Budget(b) => {
            base.samples = 1;
            ask = PlanAsk {
                budget: Some(b),
                ..PlanAsk::default()
            };
        }
        Command::MaxBins(n) => base.max_bins = n,
        Command::Strata(s) => base.strata = s,
        Command::Warmup(n) => base.warmup = n,
        Command::Seed(n) => base.seed = n,
        Command::Metric(name) => {
            let mut load = app.session.load.clone();
            load.metrics = vec![name];
            app.reload = Some(load);
        }
    }
    restart(app, base, ask)
}

fn edit(input: &mut String, cursor: &mut usize, action: Action) {
    let mut chars: Vec<char> = input.chars().collect();
    let at = (*cursor).min(chars.len());
    *cursor = match action {
        Action::Type(c) => {
            chars.insert(at, c);
            at + 1
        }
        Action::Erase if at > 0 => {
            chars.remove(at - 1);
            at - 1
        }
        Action::EraseForward if at < chars.len() => {
            chars.remove(at);
            at
        }
        Action::CursorLeft => at.saturating_sub(1),
        Action::CursorRight => (at + 1).min(chars.len()),
        Action::CursorStart => 0,
        Action::CursorEnd => chars.len(),
        Action::ClearInput => {
            chars.clear();
            0
        }
        _ => at,
    };
    *input = chars.into_iter().collect();
}

/// The CSV list goes beside the JSON document, same name with `.csv`.
pub fn export_paths(input: &str) -> Result<(PathBuf, PathBuf), String> {
    let input = input.trim();
    if input.is_empty() {
        return Err("type a path for the JSON file".into());
    }
    let json = PathBuf::from(input);
    let csv = json.with_extension("csv");
    if csv == json {
        return Err(format!(
            "{input}: give the JSON file's path; the CSV list is written beside it as .csv"
        ));
    }
    Ok((json, csv))
}

fn submit_export<'a>(app: &mut App<'a>) -> Option<Effect<'a>> {
    let Overlay::Export(prompt) = &app.overlay else {
        return None;
    };
    if app.exporting.is_some() {
        // Already making the documents; the footer says so.
        return None;
    }
    let (json_path, csv_path) = match export_paths(&prompt.input) {
        Ok(paths) => paths,
        Err(e) => {
            say_error(app, &e);
            return None;
        }
    };
    // The loaded logs are never written over, whatever the answer to "overwrite?" would be:
    // the question is not even asked.
    let inputs = app.inputs();
    for path in [&json_path, &csv_path] {
        if let Err(e) = refuse_input_target(path, &inputs) {
            say_error(app, &e.to_string());
            return None;
        }
    }
    let Some(shown) = app.current_shown() else {
        say_error(app, "still computing: export once the new result is shown");
        return None;
    };
    let (selection, plan) = (shown.selection.clone(), shown.plan.clone());
    let job = ExportJob {
        id: app.next_job_id(),
        json_path,
        csv_path,
        selection,
        plan,
        command: app.session.command(&app.settings),
        judged_by: (!app.settings.auto).then_some(app.settings.target_pct),
    };
    app.exporting = Some(Exporting {
        id: job.id,
        json_path: job.json_path.clone(),
    });
    Some(Effect::MakeExport(Box::new(job)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runlog::sample::SAMPLE_NAME;
    use crate::select::{BinCount, SelectOptions};
    use crate::tui::app::Session;
    use crate::{load_run, LoadOptions};

    fn session() -> Session {
        let load = LoadOptions::default();
        let log = load_run(SAMPLE_NAME, &load).unwrap();
        let base = SelectOptions {
            bins: BinCount::Fixed(4),
            ..SelectOptions::default()
        };
        Session::new(SAMPLE_NAME.into(), load, log, base).unwrap()
    }

    /// Opens the export prompt at `path` and presses Enter: the job that makes the documents.
    fn submit(app: &mut App, path: &std::path::Path) -> ExportJob {
        assert!(update(app, Action::Export).is_none());
        if let Overlay::Export(prompt) = &mut app.overlay {
            prompt.input = path.display().to_string();
        }
        match update(app, Action::Submit) {
            Some(Effect::MakeExport(job)) => *job,
            _ => panic!("no export job"),
        }
    }

    #[test]
    fn the_documents_are_made_off_the_ui_thread_then_written() {
        let session = session();
        let mut app = App::new(&session, false);
        let effect = recompute(&mut app);
        crate::tui::settle(&mut app, effect);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");

        let job = submit(&mut app, &path);
        assert_eq!(app.exporting.as_ref().map(|e| e.id), Some(job.id));
        // A second Enter while the documents are made starts nothing.
        assert!(update(&mut app, Action::Submit).is_none());
        let want = crate::output::json::select_json(
            &session.log,
            app.current().unwrap(),
            None,
            Some(session.command(&app.settings)),
            &crate::project::baselines::Baselines::new(&session.log),
        );
        // A fixed K is judged against the target on screen: the document records it.
        let want = want.replacen(
            "\"target_error_pct\": null",
            &format!("\"target_error_pct\": {:?}", app.settings.target_pct),
            1,
        );
        let id = job.id;
        match export_made(&mut app, id, job.make(&session)) {
            Some(Effect::Export(plan)) => {
                assert_eq!(plan.json, want);
                assert!(!plan.overwrite, "the overwrite question still comes first");
            }
            _ => panic!("the made documents are not written"),
        }
        assert!(app.exporting.is_none());

        // Leaving the prompt while they are made cancels the export: nothing is written.
        let job = submit(&mut app, &path);
        update(&mut app, Action::Close);
        assert!(app.exporting.is_none());
        let id = job.id;
        assert!(export_made(&mut app, id, job.make(&session)).is_none());
        assert!(!path.exists());
    }
}
