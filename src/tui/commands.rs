//! The `:` command line's commands: checked against the session, then applied (a setting
//! changes at once; an option fixed for the session restarts it).

use super::app::{App, Overlay};
use super::command_line::{self, Command};
use super::recompute::{recompute, restart, set_k, Effect};
use crate::options::Surface;
use crate::select::plan::PlanAsk;
use crate::select::SelectError;

/// `:` lines kept for Up/Down.
const COMMANDS_KEPT: usize = 100;

/// Enter on the command line: apply it and close, or say in place what is wrong.
pub(super) fn submit_command<'a>(app: &mut App<'a>) -> Option<Effect<'a>> {
    let Overlay::CommandLine(prompt) = &mut app.overlay else {
        return None;
    };
    // Every line entered, refused ones too (to be mended), is recalled by Up.
    let entered = prompt.input.trim();
    if !entered.is_empty() && app.commands.last().map(String::as_str) != Some(entered) {
        app.commands.push(entered.to_string());
        if app.commands.len() > COMMANDS_KEPT {
            app.commands.remove(0);
        }
    }
    prompt.recalled = None;
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
    let line = prompt_line(app);
    app.overlay = Overlay::None;
    let effect = apply_command(app, command);
    // A restart is checked by building its session: a refusal then reopens this line.
    app.restart_line = app.restart.is_some().then_some(line).flatten();
    effect
}

fn prompt_line(app: &App) -> Option<String> {
    match &app.overlay {
        Overlay::CommandLine(prompt) => Some(prompt.input.clone()),
        _ => None,
    }
}

/// What the session itself refuses (a method its key cannot use, a K beyond its keys).
fn check_command(app: &App, command: &Command) -> Result<(), String> {
    let session = app.session;
    // The exclusions and strata of the options asked for last (a session may be building).
    let asked = app.options_now().base;
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
        Command::Key(names) if session.run == "-" => Err(format!(
            ":key {0}: the log came from standard input and cannot be read again; \
             start the explorer again with --key {0}",
            names.join(",")
        )),
        Command::Exclude(range) => {
            // Leaving everything out, or the strata's own rows wrong, is said in place. Only
            // what is quick to check here: grouping a large run again (which finds a stratum
            // left with nothing to pick) is the new session's work, on a worker, and its
            // refusal reopens this line with the reason.
            let options = crate::select::SelectOptions {
                exclude: asked.exclude.with(*range),
                ..asked.clone()
            };
            crate::select::check_options(&session.log, &options)
                .and_then(|()| {
                    crate::select::kept_strata_rows(&session.log, options.strata, &options.exclude)
                })
                .map(|_| ())
                .map_err(|e| match e {
                    // The option it names is the one typed: say it once, as typed here.
                    SelectError::Option(_) => e.worded(Surface::Explorer),
                    _ => format!(":exclude {}-{}: {e}", range.first, range.last),
                })
        }
        Command::Budget(b) => {
            // At least one iteration per SeqPoint, in `select`'s words: here against the
            // count on screen; the budget's session, whose bins are drawn over (they may
            // number otherwise), checks its own.
            let shown = app.current_shown().map(|s| s.selection.seqpoints.len());
            match shown {
                Some(n) => {
                    let (ones, none) = (vec![1.0; n], vec![0.0; n]);
                    crate::select::plan::neyman_allocation(&ones, &none, &vec![*b; n], *b)
                        .map(|_| ())
                        .map_err(|e| e.worded(Surface::Explorer))
                }
                // Not known yet: the session checks it, and keeps its options if refused.
                None => Ok(()),
            }
        }
        Command::Strata(s) => {
            // The strata's rows (an epoch column, phases within the run) here; their key
            // groups are the new session's work, on a worker (see `:exclude`).
            crate::select::kept_strata_rows(&session.log, *s, &asked.exclude)
                .map(|_| ())
                .map_err(|e| match e {
                    SelectError::Option(_) => e.worded(Surface::Explorer),
                    _ => format!(":strata {s}: {e}"),
                })
        }
        _ => Ok(()),
    }
}

/// Apply a parsed command: a setting changes here; an option fixed for the session asks the
/// run loop to start the session again with it.
pub fn apply_command<'a>(app: &mut App<'a>, command: Command) -> Option<Effect<'a>> {
    // Over the options asked for last: those of a session still being built count.
    let asked = app.options_now();
    let mut base = asked.base;
    let mut ask = asked.ask;
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
            ask = PlanAsk {
                samples: Some(m),
                ..PlanAsk::default()
            };
        }
        Command::Plan => {
            ask = PlanAsk {
                plan: true,
                ..PlanAsk::default()
            };
            // The plan chooses K for the target (as the session's own option too).
            app.settings.auto = true;
            base.bins = crate::select::BinCount::Target(app.settings.target_pct);
        }
        Command::Exclude(range) => base.exclude = base.exclude.with(range),
        Command::IncludeAll => base.exclude = Default::default(),
        Command::Budget(b) => {
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
            let mut load = asked.load;
            load.metrics = vec![name];
            app.reload = Some(load);
        }
        Command::Key(names) => {
            let mut load = asked.load;
            load.key = names;
            app.reload = Some(load);
        }
        Command::Measured(paths) => return measure(app, paths),
        Command::TopUp(path) => return top_up(app, &path),
    }
    restart(app, base, ask)
}

/// `:measured FILES`: judge the measurements (each round's file) against the result on
/// screen, on a worker.
fn measure<'a>(app: &mut App<'a>, paths: Vec<String>) -> Option<Effect<'a>> {
    let Some(shown) = app.current_shown() else {
        super::recompute::say_error(app, "still computing: judge once the new result is shown");
        return None;
    };
    let export = super::save::ExportJob {
        id: 0,
        // Judging writes nothing: the document is what counts.
        targets: super::save::ExportTargets::Pair {
            json: Default::default(),
            csv: Default::default(),
            gzip: false,
        },
        selection: shown.selection.clone(),
        plan: shown.plan.clone(),
        command: app.session.command(&app.settings),
        judged_by: (!app.settings.auto).then_some(app.settings.target_pct),
    };
    let id = app.next_job_id();
    app.measuring = Some(id);
    Some(Effect::Measure(Box::new(super::measured::MeasureJob {
        id,
        paths,
        export,
        target_pct: app.settings.target_pct,
    })))
}

/// `:top-up FILE`: write the iterations `:measured` says to measure next, as an export is
/// written (JSON and CSV, named as `select -o` names them, never over a loaded log).
fn top_up<'a>(app: &mut App<'a>, path: &str) -> Option<Effect<'a>> {
    let doc = match &app.judged {
        Some(judged) => match &judged.top_up {
            Some(doc) => doc.clone(),
            None => {
                super::recompute::say_error(app, ":top-up: the target is met; nothing to add");
                return None;
            }
        },
        None => {
            super::recompute::say_error(app, ":top-up: judge measurements first (:measured FILES)");
            return None;
        }
    };
    let set = super::export_prompt::export_targets(app, path)
        .and_then(|targets| super::save::set_of(&doc, &targets));
    match set {
        Ok(set) => Some(Effect::Export(set)),
        Err(e) => {
            super::recompute::say_error(app, &format!(":top-up {path}: {e}"));
            None
        }
    }
}
