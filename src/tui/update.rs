//! Actions to new state. No terminal and no files here: work that is slow or touches the
//! disk comes back as an `Effect` for the run loop (or a test) to carry out.

use super::app::{App, Measure, Overlay, SortBy, Status, Undo, View, TARGETS};
use super::command_line;
use super::commands::submit_command;
use super::export_prompt::{export_key, submit_export};
use super::keymap::Action;
use super::recompute::say_error;
use crate::pick::Pick;

// Recomputation, the `:` commands and the export prompt have their own files; their entry
// points keep their paths here.
pub use super::commands::apply_command;
pub use super::export_prompt::{export_made, export_targets_of, exported};
pub use super::recompute::{
    finished, interim, measured, progressed, recompute, refused_restart, set_k, Effect,
};

/// Rows a page key moves before the table has been drawn (then: its visible height).
const PAGE: usize = 10;
/// Characters ← → scroll a command line wider than the screen.
const SIDEWAYS: usize = 20;

/// Settings changes kept for `u`.
const UNDO_KEPT: usize = 100;

/// Apply an action; a change of the settings can be undone with `u`.
pub fn update<'a>(app: &mut App<'a>, action: Action) -> Option<Effect<'a>> {
    if action == Action::Undo {
        app.restart_line = None;
        if let Some(status) = app.status.take() {
            app.last_message = Some(status.text);
        }
        return match app.history.pop() {
            None => {
                say_error(app, "nothing to undo");
                None
            }
            Some(Undo::Settings(previous)) => {
                app.settings = previous;
                recompute(app)
            }
            Some(Undo::Options(previous)) => {
                let (options, settings) = *previous;
                app.settings = settings;
                super::recompute::restart_with(app, options)
            }
        };
    }
    if action == Action::Back && app.building.is_some() && app.view == View::Overview {
        // Esc while new session options are built: back to the session in force (this is
        // an undo of its own, not a change to undo).
        return super::recompute::cancel_restart(app);
    }
    let before = app.settings;
    let options = app.options_now();
    let effect = apply(app, action);
    if app.restart.is_some() {
        // A `:` command starts the session again: `u` starts it again as it was.
        remember(app, Undo::Options(Box::new((options, before))));
        if action != Action::Submit {
            // Not a `:` line's restart (a K set by hand under `--plan`): none to reopen.
            app.restart_line = None;
        }
    } else if app.settings != before {
        remember(app, Undo::Settings(before));
        // Steps waiting for auto-K belong to the settings they were pressed in.
        app.auto_then = 0;
    }
    effect
}

fn remember(app: &mut App, undo: Undo) {
    app.history.push(undo);
    if app.history.len() > UNDO_KEPT {
        app.history.remove(0);
    }
}

/// Hands the action to its family's function.
fn apply<'a>(app: &mut App<'a>, action: Action) -> Option<Effect<'a>> {
    // A message stays until the next key, so it is read before it goes; `i` shows it again.
    if let Some(status) = app.status.take() {
        app.last_message = Some(status.text);
    }
    use Action as A;
    match action {
        A::Quit | A::Back | A::Suspend => leave(app, action),
        A::Redraw => {
            app.redraw = true;
            None
        }
        A::FewerBins | A::MoreBins | A::FewerBinsTen | A::MoreBinsTen => step_k(app, action),
        A::LowerTarget | A::RaiseTarget | A::ToggleAuto => tune_target(app, action),
        A::CycleMethod | A::CyclePick => cycle_method_or_pick(app, action),
        A::NextView | A::PreviousView | A::CycleSort | A::CycleMeasure | A::ToggleLogScale => {
            arrange(app, action);
            None
        }
        A::Up | A::Down | A::PageUp | A::PageDown | A::First | A::Last => {
            move_selection(app, action);
            None
        }
        A::CommandLine | A::Search | A::ShowCommand | A::About | A::Help | A::Open | A::Close => {
            open_or_close(app, action)
        }
        A::Type(_)
        | A::Erase
        | A::EraseForward
        | A::CursorLeft
        | A::CursorRight
        | A::CursorStart
        | A::CursorEnd
        | A::ClearInput => {
            type_in(app, action);
            None
        }
        A::Complete => {
            complete_command(app);
            None
        }
        A::RecallOlder | A::RecallNewer => {
            recall(app, action == A::RecallOlder);
            None
        }
        A::SearchNext | A::SearchPrevious => {
            super::search::step(app, action == A::SearchNext);
            None
        }
        A::Submit => submit(app),
        A::Export | A::ConfirmOverwrite | A::DeclineOverwrite => export_key(app, action),
        // `update` takes it back itself.
        A::Undo => None,
    }
}

/// `q` quits (cancelling the running job), Esc leaves the table, Ctrl-Z suspends.
fn leave<'a>(app: &mut App<'a>, action: Action) -> Option<Effect<'a>> {
    match action {
        Action::Quit => {
            if let Some(pending) = app.pending.take() {
                pending.cancel();
            }
            app.quit = true;
        }
        Action::Back if app.view == View::SeqPoints => app.view = View::Overview,
        Action::Back => {
            app.status = Some(Status {
                text: "Esc goes back (closes a popup, leaves the table); q quits".into(),
                error: false,
            });
        }
        Action::Suspend => app.suspend = true,
        _ => {}
    }
    None
}

/// `h` / `l` (and by ten): K from the one on screen, leaving auto-K.
fn step_k<'a>(app: &mut App<'a>, action: Action) -> Option<Effect<'a>> {
    let by: isize = match action {
        Action::FewerBins => -1,
        Action::MoreBins => 1,
        Action::FewerBinsTen => -10,
        Action::MoreBinsTen => 10,
        _ => return None,
    };
    if app.settings.auto && app.current_shown().is_none() && app.pending.is_some() {
        // Auto-K is still searching: the steps count from the K it finds, once it lands.
        app.auto_then += by;
        app.status = Some(Status {
            text: format!("K {:+} from the K auto-K finds", app.auto_then),
            error: false,
        });
        return None;
    }
    let from = if app.settings.auto {
        app.shown_k().unwrap_or(app.settings.k)
    } else {
        app.settings.k
    };
    set_k(app, from.saturating_add_signed(by), by > 0)
}

/// `t` / `T` step the error target; `a` switches auto-K (leaving it at the K it found).
fn tune_target<'a>(app: &mut App<'a>, action: Action) -> Option<Effect<'a>> {
    if action == Action::ToggleAuto {
        if app.settings.auto {
            app.settings.k = app.shown_k().unwrap_or(app.settings.k).max(1);
        }
        app.settings.auto = !app.settings.auto;
        return recompute(app);
    }
    app.settings.target_pct = step_target(app.settings.target_pct, action == Action::RaiseTarget);
    // Without auto-K the target only judges the errors: nothing to recompute.
    app.settings.auto.then(|| recompute(app)).flatten()
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

/// `m` / `p`: the next method this run's key can use, or the next pick.
fn cycle_method_or_pick<'a>(app: &mut App<'a>, action: Action) -> Option<Effect<'a>> {
    if action == Action::CycleMethod {
        let methods = app.session.methods();
        app.settings.method = next_after(&methods, app.settings.method);
    } else {
        app.settings.pick = next_after(&Pick::ALL, app.settings.pick);
    }
    recompute(app)
}

fn next_after<T: Copy + PartialEq>(all: &[T], current: T) -> T {
    let at = all
        .iter()
        .position(|&x| x == current)
        .unwrap_or(all.len() - 1);
    all[(at + 1) % all.len()]
}

/// What is on screen and how, never the selection: the view, the table's order, the
/// distribution's measure and scale.
fn arrange(app: &mut App, action: Action) {
    match action {
        Action::NextView | Action::PreviousView => {
            app.view = match app.view {
                View::Overview => View::SeqPoints,
                View::SeqPoints => View::Overview,
            };
        }
        Action::CycleSort => cycle_sort(app),
        Action::CycleMeasure => {
            let metrics = app.session.log.metric_names().len();
            app.measure = match app.measure {
                Measure::Iterations if metrics > 0 => Measure::Metric(0),
                Measure::Metric(m) if m + 1 < metrics => Measure::Metric(m + 1),
                _ => Measure::Iterations,
            };
        }
        Action::ToggleLogScale => app.log_scale = !app.log_scale,
        _ => {}
    }
}

/// `o`: the table's next order; the same SeqPoint stays selected in its new row.
fn cycle_sort(app: &mut App) {
    let selected = app.selected_seqpoint();
    app.sort = next_after(&SortBy::ALL, app.sort);
    let row = selected.and_then(|s| app.row_order().iter().position(|&i| i == s));
    app.table.select(Some(row.unwrap_or(0)));
    app.status = Some(Status {
        text: format!("table ordered by {}", app.sort.name()),
        error: false,
    });
}

fn move_selection(app: &mut App, action: Action) {
    let page = app.page_rows.unwrap_or(PAGE);
    let popup_page = app.popup_rows.unwrap_or(PAGE);
    if let Overlay::Detail { scroll } | Overlay::About { scroll } | Overlay::Help { scroll } =
        &mut app.overlay
    {
        // A page of the popup, as drawn: not the table's.
        let page = popup_page;
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

/// Open a popup (`y` also copies the command to the clipboard), or close the one open.
fn open_or_close<'a>(app: &mut App<'a>, action: Action) -> Option<Effect<'a>> {
    app.overlay = match action {
        Action::CommandLine => Overlay::CommandLine(Default::default()),
        Action::Search => Overlay::Search(Default::default()),
        Action::ShowCommand => {
            app.overlay = Overlay::Command { scroll: 0 };
            return Some(Effect::Clipboard(app.session.copied_command(&app.settings)));
        }
        Action::About => Overlay::About { scroll: 0 },
        Action::Help => Overlay::Help { scroll: 0 },
        Action::Open if app.selected_seqpoint().is_some() => Overlay::Detail { scroll: 0 },
        Action::Close => {
            if let Overlay::Export(_) = app.overlay {
                // Leaving the prompt while the documents are made cancels the export.
                app.exporting = None;
            }
            Overlay::None
        }
        _ => return None,
    };
    None
}

/// A key typed in a prompt; in the command popup ← → scroll a line wider than the screen.
fn type_in(app: &mut App, action: Action) {
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

/// Tab on the command line: the one command the typed start names, or why there is none.
fn complete_command(app: &mut App) {
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
}

/// Up / Down on the `:` line: the line entered before (or after) the one shown; Down past
/// the latest gives back what was being typed.
fn recall(app: &mut App, older: bool) {
    let Overlay::CommandLine(prompt) = &mut app.overlay else {
        return;
    };
    let lines = &app.commands;
    let next = match (&prompt.recalled, older) {
        (None, true) if !lines.is_empty() => Some(0),
        (Some((back, _)), true) => Some((back + 1).min(lines.len() - 1)),
        (Some((0, _)), false) => None,
        (Some((back, _)), false) => Some(back - 1),
        (None, _) => return,
    };
    match next {
        Some(back) => {
            let draft = match prompt.recalled.take() {
                Some((_, draft)) => draft,
                None => prompt.input.clone(),
            };
            prompt.input = lines[lines.len() - 1 - back].clone();
            prompt.recalled = Some((back, draft));
        }
        None => {
            if let Some((_, draft)) = prompt.recalled.take() {
                prompt.input = draft;
            }
        }
    }
    prompt.cursor = prompt.input.chars().count();
    prompt.error = None;
}

/// Enter in a prompt: run the command, find the SeqPoint, or start the export.
fn submit<'a>(app: &mut App<'a>) -> Option<Effect<'a>> {
    match app.overlay {
        Overlay::CommandLine(_) => submit_command(app),
        Overlay::Search(_) => {
            super::search::submit(app);
            None
        }
        _ => submit_export(app),
    }
}
