//! The interactive explorer: `App` (state) <- `update` (actions) <- `input` (keys, bound in
//! `keymap`), drawn by `ui`; slow recomputation (`compute`) and the making of an export's
//! documents (`save`) run on worker threads, the terminal in `terminal`.
//!
//! `App` works over a `Session` (the run and the options fixed while it runs, `session`);
//! `update` hands `:` commands to `commands`, the export prompt's steps to `export_prompt`,
//! and starts or takes in the work it hands out in `recompute`.
//!
//! `run` is the event loop; `press` and `settle` drive the same state without a terminal
//! (tests, examples, benchmarks).

pub mod app;
pub mod command_line;
pub mod commands;
pub mod compute;
pub mod export_prompt;
pub mod input;
pub mod keymap;
pub mod measured;
pub mod palette;
pub mod recompute;
pub mod save;
pub mod search;
pub mod session;
pub mod terminal;
pub mod ui;
pub mod update;

use std::io;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::{self, Event, KeyEvent};

pub use app::{App, Session};
use compute::{Done, Job};
use save::ExportJob;
use terminal::{TerminalGuard, WORKER_THREAD};
use update::Effect;

/// How the explorer ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Quit,
    /// Ended by a signal (the terminal is restored); exit with 128 + the signal.
    Signal(i32),
}

/// No colour at all when `NO_COLOR` is set to anything but the empty string, and none on a
/// terminal without colours (`TERM=vt100`).
pub fn colour_enabled() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        && palette::palette() != palette::Palette::None
}

/// Longest wait for a key before checking signals and the worker again.
const TICK: Duration = Duration::from_millis(100);
/// Progress reports more often than this are dropped: the screen cannot show them anyway.
const PROGRESS_EVERY: Duration = Duration::from_millis(50);

enum Message<'a> {
    Progress {
        id: u64,
        label: &'static str,
        done: usize,
        total: usize,
    },
    // Boxed: a selection is large and progress messages are many.
    Done(Box<Done<'a>>),
    /// A selection shown before its job ends (the job goes on with the error curve).
    Interim {
        id: u64,
        settings: app::Settings,
        selection: Box<crate::select::Selection>,
        plan: Option<Box<crate::select::plan::ProfilePlan>>,
    },
    /// More of the curve's naive baselines were computed: draw them.
    Filled,
    /// A restart's new session, built (or why not).
    Built {
        id: u64,
        next: Box<Result<Session, String>>,
    },
    /// `:measured`'s judgement (or why there is none).
    Judged {
        id: u64,
        judged: Box<Result<app::Judged, String>>,
    },
    /// An export's documents, ready to write (or why not).
    ExportMade {
        id: u64,
        made: Box<Result<save::ExportSet, String>>,
    },
}

/// Open the explorer on the terminal until the user quits or a signal ends it.
pub fn run(session: Session) -> io::Result<Ended> {
    let mut owner = Arc::new(session);
    let mut app = App::new(lend(&owner), colour_enabled());
    app.ascii = !ui::ascii::locale_is_utf8();
    let mut guard = TerminalGuard::enter()?;
    // One channel per session: a restart drops what the old session's workers still send.
    let (mut sender, mut receiver) = outbox(&owner);
    let mut effect = update::recompute(&mut app);
    let mut dirty = true;
    // An event read while a storm of resizes was drained: handled on the next turn.
    let mut stashed: Option<Event> = None;
    loop {
        if let Some((base, ask)) = app.restart.take() {
            // A session option changed (`:samples 2` …): the new session is built on a worker
            // (grouping a large run again takes seconds); the screen answers keys meanwhile.
            if let Some(filling) = app.filling.take() {
                filling.store(true, Ordering::Relaxed);
            }
            let id = app.next_job_id();
            app.building = Some(id);
            let reload = app.reload.take();
            let reading = reload.as_ref().map(|_| crate::runlog::LoadProgress::new());
            app.reading = reading.clone();
            build_session(Arc::clone(&owner), reload, reading, base, ask, id, &sender);
            dirty = true;
        }
        if let Some(e) = effect.take() {
            carry_out(&mut app, e, &sender);
            dirty = true;
        }
        let (received, next) = receive(&mut app, &receiver);
        dirty |= received.any;
        if let Some(built) = received.session {
            // The new session replaces the old: once the old one's workers have stopped (they
            // are cancelled), nothing holds it and its memory goes.
            let previous = app.options_in_force();
            let next_owner = Arc::new(built);
            let mut fresh = App::new(lend(&next_owner), app.colour);
            fresh.carry_from(&app);
            if !next_owner.notes.is_empty() {
                // What the new reading says of itself (`:key fit`: its fitted formula).
                fresh.status = Some(app::Status {
                    text: next_owner.notes.join("; "),
                    error: false,
                });
            }
            fresh.fallback = (!std::mem::take(&mut app.reverting)).then_some(previous);
            if let Some(pending) = app.pending.take() {
                pending.cancel();
            }
            drop(next);
            let (new_sender, new_receiver) = outbox(&next_owner);
            // The old session goes on another thread: freeing a run's rows (after `:metric`,
            // 60 ms for 10M rows) and handing the pages back would otherwise hold the keys.
            bury(Buried {
                _app: std::mem::replace(&mut app, fresh),
                _receiver: std::mem::replace(&mut receiver, new_receiver),
                _sender: std::mem::replace(&mut sender, new_sender),
                _owner: std::mem::replace(&mut owner, next_owner),
            });
            effect = update::recompute(&mut app);
            dirty = true;
            continue;
        }
        if next.is_some() {
            effect = next;
            continue;
        }
        if let Some(signal) = guard.signal() {
            return Ok(Ended::Signal(signal));
        }
        if app.quit {
            return Ok(Ended::Quit);
        }
        if std::mem::take(&mut app.suspend) || guard.stop_requested() {
            guard.suspend()?;
            dirty = true;
        }
        // After `fg` (or a SIGCONT after SIGSTOP): raw mode again, and a full redraw.
        dirty |= guard.resume_if_needed()?;
        if guard.suspended() {
            // In the background: the terminal is the shell's; neither draw nor read it.
            std::thread::sleep(TICK);
            continue;
        }
        if std::mem::take(&mut app.redraw) {
            // Ctrl-L: whatever else wrote on the terminal goes; every cell is drawn again.
            guard.screen.clear()?;
            dirty = true;
        }
        // The log read again (`:metric`) shows how far it has got, a frame a tick.
        dirty |= app.reading.is_some();
        if dirty {
            guard.screen.draw(|frame| ui::draw(frame, &mut app))?;
            dirty = false;
        }
        let next = match stashed.take() {
            Some(event) => Some(event),
            None if event::poll(TICK)? => Some(event::read()?),
            None => None,
        };
        match next {
            Some(Event::Key(key)) => {
                effect = press(&mut app, key);
                dirty = true;
            }
            Some(Event::Resize(width, height)) => {
                // Only the last size of a storm is drawn: a frame per size on the way would
                // show the old size for as long as those frames take.
                let (size, after) = last_size((width, height), || {
                    Ok(if event::poll(Duration::ZERO)? {
                        Some(event::read()?)
                    } else {
                        None
                    })
                })?;
                stashed = after;
                app.size = Some(size);
                dirty = true;
            }
            _ => {}
        }
    }
}

/// The size a resize storm ends at: resizes are read while they come at once (`more` gives
/// the next event waiting, `None` when none is), and the first other event is given back.
fn last_size(
    first: (u16, u16),
    mut more: impl FnMut() -> io::Result<Option<Event>>,
) -> io::Result<((u16, u16), Option<Event>)> {
    let mut size = first;
    while let Some(event) = more()? {
        match event {
            Event::Resize(width, height) => size = (width, height),
            other => return Ok((size, Some(other))),
        }
    }
    Ok((size, None))
}

/// What a restart leaves of the old session, dropped in this order (field order): the state
/// and the messages borrowing the session before the session itself.
struct Buried {
    _app: App<'static>,
    _receiver: Receiver<Sent>,
    _sender: Outbox,
    _owner: Arc<Session>,
}

/// Drop what is no longer needed off the UI thread, then give the freed memory back. A
/// session's rows take tens of milliseconds to free on a 10M-row run; with no thread to be
/// had, they are freed here.
fn bury<T: Send + 'static>(dead: T) {
    // When no thread can be had, `spawn` drops the closure, and so what it holds, here.
    let _ = std::thread::Builder::new()
        .name(WORKER_THREAD.into())
        .spawn(move || {
            drop(dead);
            give_back_freed_memory();
        });
}

/// Hand the memory freed by old sessions back to the system. The allocator keeps freed
/// blocks in the arena of the thread that freed them (each worker thread may have one), so
/// without this the resident size creeps up by a session's worth per arena over restarts.
fn give_back_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of the allocator's own arenas.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The session as the explorer's state and workers borrow it.
///
/// SAFETY: the reference outlives `owner`'s borrow, so everything holding it (or anything
/// borrowed through it) must also hold the `Arc`: the run loop's `owner` for the state, each
/// worker's own clone for its thread, and each `Sent` for a message in the channel. The state
/// over the old session is dropped before `owner` moves on, and prepared selectors carry over
/// a restart only when they borrow the log and key groups that the new session shares (the
/// heap data of `Arc`s it holds, not the old session itself: `App::carry_from`).
fn lend(owner: &Arc<Session>) -> &'static Session {
    unsafe { &*Arc::as_ptr(owner) }
}

/// A message with the session it may borrow from, kept alive until the message is dropped.
/// Field order matters: the message is dropped first.
struct Sent {
    message: Message<'static>,
    _session: Arc<Session>,
}

/// Sends messages holding their session; a worker takes a clone (and so holds it too).
#[derive(Clone)]
struct Outbox {
    sender: Sender<Sent>,
    session: Arc<Session>,
}

impl Outbox {
    fn send(&self, message: Message<'static>) {
        let _ = self.sender.send(Sent {
            message,
            _session: Arc::clone(&self.session),
        });
    }
}

fn outbox(owner: &Arc<Session>) -> (Outbox, Receiver<Sent>) {
    let (sender, receiver) = mpsc::channel();
    (
        Outbox {
            sender,
            session: Arc::clone(owner),
        },
        receiver,
    )
}

/// Build the session for new options on a worker (the log read again first for `:metric`);
/// it comes back as `Message::Built`.
fn build_session(
    old: Arc<Session>,
    reload: Option<crate::runlog::LoadOptions>,
    reading: Option<crate::runlog::LoadProgress>,
    base: crate::select::SelectOptions,
    ask: crate::select::plan::PlanAsk,
    id: u64,
    outbox: &Outbox,
) {
    let out = outbox.clone();
    let work = move || {
        let made = caught(|| match reload {
            Some(load) => old.reloaded(load, base, ask, &reading.unwrap_or_default()),
            None => old
                .with_options(base, ask)
                .map_err(|e| e.worded(crate::options::Surface::Explorer)),
        })
        .and_then(|made| made);
        drop(old);
        out.send(Message::Built {
            id,
            next: Box::new(made),
        });
    };
    start_worker(outbox, work, |reason| Message::Built {
        id,
        next: Box::new(Err(reason)),
    });
}

/// One key press: its action, if the key means anything here, applied to the state.
/// While the terminal is too small to show anything but the message, only quitting works:
/// a key must never act on a screen the user cannot see.
pub fn press<'a>(app: &mut App<'a>, key: KeyEvent) -> Option<Effect<'a>> {
    let mut effect = None;
    for key in input::keys_pressed(key) {
        // Only the last key can have work to carry out: the Esc before it closes or goes
        // back, and neither has any.
        debug_assert!(effect.is_none(), "a key before the last left work: {key:?}");
        effect = press_one(app, key);
    }
    effect
}

fn press_one<'a>(app: &mut App<'a>, key: KeyEvent) -> Option<Effect<'a>> {
    if app.too_small() {
        let quits = input::action_for(key, &app::Overlay::None) == Some(keymap::Action::Quit);
        return quits
            .then(|| update::update(app, keymap::Action::Quit))
            .flatten();
    }
    let action = input::action_for(key, &app.overlay)?;
    update::update(app, action)
}

/// Carry out effects on this thread until none is left (no terminal, no worker).
pub fn settle<'a>(app: &mut App<'a>, effect: Option<Effect<'a>>) {
    let mut next = effect;
    while let Some(effect) = next.take() {
        match effect {
            Effect::Compute(job) => {
                let cancel = job.cancel.clone();
                if let Some(done) = job.run(app.session, &mut |_, _, _| {}) {
                    let budgets = shown_budgets(app.session, &done);
                    next = update::finished(app, done);
                    // As the worker does once the result is shown.
                    compute::fill_baselines(app.session, &budgets, &cancel, &mut || {});
                    compute::warm_detail_medians(app.session, &cancel);
                }
            }
            Effect::MakeExport(job) => {
                let id = job.id;
                let made = job.make(app.session);
                next = update::export_made(app, id, made);
            }
            Effect::Export(set) => update::exported(app, save::write_set(set)),
            Effect::Measure(job) => {
                let id = job.id;
                let judged = job.judge(app.session);
                update::measured(app, id, judged);
            }
            // No terminal here: the popup shows the command.
            Effect::Clipboard(_) => {}
            Effect::FillBaselines(budgets) => {
                let cancel = AtomicBool::new(false);
                compute::fill_baselines(app.session, &budgets, &cancel, &mut || {});
                compute::warm_detail_medians(app.session, &cancel);
            }
        }
    }
}

fn carry_out(app: &mut App<'static>, effect: Effect<'static>, sender: &Outbox) {
    match effect {
        Effect::Compute(job) => spawn(job, app.session, sender.clone()),
        Effect::MakeExport(job) => spawn_export(job, app.session, sender.clone()),
        Effect::Measure(job) => {
            let (id, session, out) = (job.id, app.session, sender.clone());
            start_worker(
                sender,
                move || {
                    let judged = caught(|| job.judge(session)).and_then(|j| j);
                    out.send(Message::Judged {
                        id,
                        judged: Box::new(judged),
                    });
                },
                |reason| Message::Judged {
                    id,
                    judged: Box::new(Err(reason)),
                },
            );
        }
        Effect::FillBaselines(budgets) => {
            let cancel = Arc::new(AtomicBool::new(false));
            if let Some(filling) = app.filling.replace(cancel.clone()) {
                filling.store(true, Ordering::Relaxed);
            }
            let (session, sender) = (app.session, sender.clone());
            let failure = sender.clone();
            start_worker(
                &failure,
                move || {
                    let _ = caught(|| {
                        compute::fill_baselines(session, &budgets, &cancel, &mut || {
                            sender.send(Message::Filled);
                        });
                        compute::warm_detail_medians(session, &cancel);
                    });
                },
                |_| Message::Filled,
            );
        }
        // The documents are made: writing them is quick, and stays here so that quitting
        // never cuts a write short.
        Effect::Export(set) => update::exported(app, save::write_set(set)),
        Effect::Clipboard(text) => {
            use std::io::Write;
            let mut out = io::stdout();
            // A terminal without OSC 52 ignores it; the popup shows the command anyway.
            let _ = out
                .write_all(ui::command::osc52(&text).as_bytes())
                .and_then(|()| out.flush());
        }
    }
}

/// What the worker sent, applied: whether the screen needs redrawing, and a restart's new
/// session when it is ready.
struct Received {
    any: bool,
    session: Option<Session>,
}

/// Apply what the worker sent: what it changed, and the work a finished job left to do (the
/// settings moved on while it ran).
fn receive(
    app: &mut App<'static>,
    receiver: &Receiver<Sent>,
) -> (Received, Option<Effect<'static>>) {
    let mut received = Received {
        any: false,
        session: None,
    };
    let mut next = None;
    while let Ok(sent) = receiver.try_recv() {
        received.any = true;
        match sent.message {
            Message::Progress {
                id,
                label,
                done,
                total,
            } => update::progressed(app, id, label, done, total),
            Message::Interim {
                id,
                settings,
                selection,
                plan,
            } => update::interim(app, id, settings, *selection, plan.map(|p| *p)),
            Message::Done(done) => {
                if let Some(effect) = update::finished(app, *done) {
                    next = Some(effect);
                }
            }
            Message::Filled => {}
            Message::Built { id, next: built } => {
                if app.building != Some(id) {
                    // Superseded by newer options while it was built: freed elsewhere.
                    bury(built);
                    continue;
                }
                app.building = None;
                app.reading = None;
                match *built {
                    Ok(session) => {
                        // The swap happens in the run loop; what else came is the old session's.
                        received.session = Some(session);
                        return (received, None);
                    }
                    Err(e) => next = update::refused_restart(app, e),
                }
            }
            Message::Judged { id, judged } => update::measured(app, id, *judged),
            Message::ExportMade { id, made } => {
                if let Some(effect) = update::export_made(app, id, *made) {
                    next = Some(effect);
                }
            }
        }
    }
    (received, next)
}

fn spawn(job: Job<'static>, session: &'static Session, sender: Outbox) {
    let (id, settings) = (job.id, job.settings);
    let failure = sender.clone();
    // What the loop is told when the job cannot finish.
    let failed = move |reason| Done {
        id,
        settings,
        prepared: None,
        selection: Err(reason),
        plan: None,
    };
    let worker = move || {
        let mut last = Instant::now();
        let progress_sender = sender.clone();
        let mut report = |label, done, total| {
            if last.elapsed() >= PROGRESS_EVERY || done == total {
                last = Instant::now();
                progress_sender.send(Message::Progress {
                    id,
                    label,
                    done,
                    total,
                });
            }
        };
        let interim_sender = sender.clone();
        let mut interim = |selection, plan: Option<_>| {
            interim_sender.send(Message::Interim {
                id,
                settings,
                selection: Box::new(selection),
                plan: plan.map(Box::new),
            });
        };
        let cancel = job.cancel.clone();
        let done = match caught(|| job.run_with_interim(session, &mut report, &mut interim)) {
            Ok(Some(done)) => done,
            Ok(None) => return,
            Err(reason) => failed(reason),
        };
        let budgets = shown_budgets(session, &done);
        sender.send(Message::Done(Box::new(done)));
        // The result is on screen: its naive baselines follow, one redraw each, then the
        // medians a detail shows.
        let _ = caught(|| {
            compute::fill_baselines(session, &budgets, &cancel, &mut || {
                sender.send(Message::Filled);
            });
            compute::warm_detail_medians(session, &cancel);
        });
    };
    start_worker(&failure, worker, |reason| {
        Message::Done(Box::new(failed(reason)))
    });
}

/// The budgets whose naive baselines a finished job's result shows.
fn shown_budgets(session: &Session, done: &Done) -> Vec<usize> {
    let curve = done.prepared.as_ref().map(|p| p.curve.as_slice());
    compute::shown_budgets(session, done.plan.as_ref(), curve)
}

/// Make an export's documents on a worker; they come back as `Message::ExportMade`.
fn spawn_export(job: Box<ExportJob>, session: &'static Session, sender: Outbox) {
    let id = job.id;
    let failure = sender.clone();
    let worker = move || {
        let made = caught(|| job.make(session)).and_then(|made| made);
        sender.send(Message::ExportMade {
            id,
            made: Box::new(made),
        });
    };
    start_worker(&failure, worker, |reason| Message::ExportMade {
        id,
        made: Box::new(Err(reason)),
    });
}

/// Run `work` on a worker thread. When no thread can be had, send `failed(reason)` instead,
/// so that the loop is not left waiting for a result that never comes.
fn start_worker(
    sender: &Outbox,
    work: impl FnOnce() + Send + 'static,
    failed: impl FnOnce(String) -> Message<'static>,
) {
    if let Err(e) = std::thread::Builder::new()
        .name(WORKER_THREAD.into())
        .spawn(work)
    {
        sender.send(failed(format!("cannot start a worker thread: {e}")));
    }
}

/// `work`'s result, or a panic inside it as an error to show (the explorer keeps running).
fn caught<T>(work: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(AssertUnwindSafe(work))
        .map_err(|payload| format!("internal error: {}", panic_text(&payload)))
}

fn panic_text(payload: &Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a computation failed".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::crossterm::event::{KeyCode, KeyEvent};

    #[test]
    fn a_storm_of_resizes_is_drawn_once_at_its_last_size() {
        let key = Event::Key(KeyEvent::from(KeyCode::Char('l')));
        let mut waiting = vec![
            Event::Resize(100, 30),
            Event::Resize(90, 28),
            key.clone(),
            Event::Resize(70, 20),
        ]
        .into_iter();
        let (size, after) = last_size((120, 40), || Ok(waiting.next())).unwrap();
        // The key after the storm is kept for the next turn; the resize after it waits.
        assert_eq!((size, after), ((90, 28), Some(key)));
        assert_eq!(waiting.next(), Some(Event::Resize(70, 20)));
        let (size, after) = last_size((60, 16), || Ok(None)).unwrap();
        assert_eq!((size, after), ((60, 16), None));
    }
}
