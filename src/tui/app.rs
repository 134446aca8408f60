//! The explorer's state: the loaded run (fixed for the session), what the user tunes, what is
//! on screen, and the prepared selectors that keep a key press O(groups).

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ratatui::widgets::TableState;

use crate::binning::Method;
use crate::pick::Pick;
use crate::project::Projection;
use crate::runlog::LoadOptions;
use crate::select::plan::{PlanAsk, ProfilePlan};
use crate::select::{CurvePoint, SelectOptions, Selection, Selectors};

// The session and the settings live in `session`; their old paths keep working.
pub use super::session::{BaselineSeries, Session, Settings};

/// Error targets that `t` / `T` step through, in percent.
pub const TARGETS: [f64; 12] = [
    0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 20.0,
];

/// Prepared selectors kept at once (each may hold an exact DP table).
const PREPARED_KEPT: usize = 4;

/// The smallest terminal the explorer lays out; below it only the too-small message shows
/// and only quitting acts (the state needs it for that, the layout for drawing).
pub const MIN_WIDTH: u16 = 60;
pub const MIN_HEIGHT: u16 = 16;

/// Which main view is shown; Tab switches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// Distribution, projection and error-versus-K curve.
    Overview,
    /// The SeqPoints table.
    SeqPoints,
}

/// The SeqPoints table's order (`o` cycles it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SortBy {
    #[default]
    Id,
    Iteration,
    Key,
    /// Largest weight first.
    Weight,
    /// Largest first metric (baseline) first.
    Metric,
}

impl SortBy {
    pub const ALL: [SortBy; 5] = [
        SortBy::Id,
        SortBy::Iteration,
        SortBy::Key,
        SortBy::Weight,
        SortBy::Metric,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SortBy::Id => "id",
            SortBy::Iteration => "iteration",
            SortBy::Key => "key",
            SortBy::Weight => "weight ↓",
            SortBy::Metric => "metric ↓",
        }
    }
}

/// What the distribution panel measures per key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    Iterations,
    /// Total of a baseline metric (by index).
    Metric(usize),
}

/// The export prompt: the path being typed, then the overwrite question if files exist.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportPrompt {
    pub input: String,
    /// Cursor position in characters.
    pub cursor: usize,
    /// Set when the files exist: the plan waiting for "overwrite? y/n".
    pub confirm: Option<Overwrite>,
}

/// An export refused because these files exist, waiting for the user's yes.
#[derive(Debug, Clone, PartialEq)]
pub struct Overwrite {
    pub set: ExportSet,
    pub existing: Vec<PathBuf>,
}

/// The `:` command line being typed; an error stays under it until the next key.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CommandPrompt {
    pub input: String,
    /// Cursor position in characters.
    pub cursor: usize,
    pub error: Option<String>,
    /// Up/Down on the `:` line: how far back the shown line is in the history (0 the
    /// latest), and the line typed before the first Up, which Down past the latest restores.
    pub recalled: Option<(usize, String)>,
}

/// The options fixed for a session (a `:` command that changes one starts it again).
#[derive(Debug, Clone)]
pub struct Options {
    pub base: SelectOptions,
    pub ask: PlanAsk,
    pub load: LoadOptions,
}

/// What `u` goes back to: the settings before a key changed them, or the session options
/// (and the settings) before a `:` command started the session again.
#[derive(Debug, Clone)]
pub enum Undo {
    Settings(Settings),
    Options(Box<(Options, Settings)>),
}

/// A popup over the current view.
#[derive(Debug, Clone, PartialEq)]
pub enum Overlay {
    None,
    CommandLine(CommandPrompt),
    /// `/`: an iteration or a key to find among the SeqPoints.
    Search(CommandPrompt),
    /// The keys; `scroll` is the first row shown on a short terminal.
    Help {
        scroll: usize,
    },
    /// The equivalent command (`y`), scrolled sideways by `scroll` characters when wider
    /// than the screen.
    Command {
        scroll: usize,
    },
    /// The result in full (`i`): summary, verdict, advice, the last message, the marks.
    About {
        scroll: usize,
    },
    /// A SeqPoint's alternates and its bin's key groups; `scroll` is the first group shown.
    Detail {
        scroll: usize,
    },
    Export(ExportPrompt),
}

/// An export ready to be written: its files and their contents (app state, so that the
/// export's steps and the writer it goes to both read it without importing each other).
#[derive(Debug, Clone, PartialEq)]
pub struct ExportSet {
    pub files: Vec<(PathBuf, Vec<u8>)>,
    pub overwrite: bool,
}

/// A JSON document and its CSV list ready to be written; an export of any name the prompt
/// reads is an `ExportSet`.
#[derive(Debug, Clone, PartialEq)]
pub struct ExportPlan {
    pub json_path: PathBuf,
    pub csv_path: PathBuf,
    pub json: String,
    pub csv: String,
    pub overwrite: bool,
}

/// An export whose documents a worker is making; the footer says so until they are written.
#[derive(Debug, Clone, PartialEq)]
pub struct Exporting {
    pub id: u64,
    pub json_path: PathBuf,
}

/// A message in the footer until the next key.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    pub text: String,
    pub error: bool,
}

/// The result on screen and the settings it was computed for.
#[derive(Debug, Clone)]
pub struct Shown {
    pub settings: Settings,
    pub selection: Selection,
    /// The profiling plan `select` gives for these settings, when it gives one.
    pub plan: Option<ProfilePlan>,
}

impl Shown {
    /// What profiling the listed iterations projects: the plan's, else the SeqPoints'.
    pub fn projection(&self) -> &Projection {
        self.plan
            .as_ref()
            .map_or(&self.selection.projection, |p| &p.projection)
    }

    /// The iterations to profile: the plan's, else one per SeqPoint.
    pub fn iterations(&self) -> u64 {
        self.plan
            .as_ref()
            .map_or(self.selection.iterations_to_profile(), |p| p.iterations())
    }

    /// The iterations the plan profiles for one SeqPoint (in the plan's order), when a plan
    /// profiles more than one per SeqPoint somewhere; `None` without a plan.
    pub fn planned_iterations(
        &self,
        log: &crate::runlog::RunLog,
        seqpoint: usize,
    ) -> Option<Vec<u64>> {
        let plan = self.plan.as_ref()?;
        let bin = plan.bins.iter().find(|b| b.seqpoint == seqpoint)?;
        Some(
            bin.rows
                .iter()
                .map(|&r| log.iteration(r as usize))
                .collect(),
        )
    }

    /// The epochs of `planned_iterations`, in its order (when the log has epochs).
    pub fn planned_epochs(&self, log: &crate::runlog::RunLog, seqpoint: usize) -> Option<Vec<u32>> {
        let plan = self.plan.as_ref()?;
        let bin = plan.bins.iter().find(|b| b.seqpoint == seqpoint)?;
        bin.rows.iter().map(|&r| log.epoch(r as usize)).collect()
    }

    /// Whether the target is met, when a target decides: the plan's verdict, else auto-K's.
    pub fn target_met(&self) -> Option<bool> {
        match &self.plan {
            // A plan judged on the target (`:plan`'s, or a budget's) speaks for it.
            Some(plan) if plan.met.is_some() => plan.met,
            _ => self.selection.target.as_ref().map(|t| t.met),
        }
    }
}

/// Work running off the UI thread.
#[derive(Debug, Clone)]
pub struct Pending {
    pub id: u64,
    /// The method and pick whose selectors the job is building, when it builds them: a
    /// later change of K or target needs them too, so it lets the job run on.
    pub prepares: Option<(Method, Pick)>,
    pub label: &'static str,
    pub done: usize,
    pub total: usize,
    pub cancel: Arc<AtomicBool>,
}

impl Pending {
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

/// Selectors for one method and pick, built once, with their error-versus-K curve.
#[derive(Clone)]
pub struct Prepared<'a> {
    pub selectors: Arc<Selectors<'a>>,
    pub curve: Arc<Vec<CurvePoint>>,
}

impl Prepared<'_> {
    /// Whether these settings are answered at once (O(groups)); otherwise they go to the
    /// worker. k-means fits per K, too slow between two key presses on large runs: only K
    /// fitted already (the curve fits 1..=max) is instant. Auto-K is instant for a run
    /// without strata: its K is read off the error curve.
    pub fn instant(&self, settings: &Settings) -> bool {
        if settings.auto {
            self.selectors.strata() == 1
                && !self.curve.is_empty()
                && self.curve.iter().all(|p| self.selectors.ready(p.k))
        } else {
            self.selectors.ready(settings.k)
        }
    }
}

/// The explorer's whole state. `'a` is the session's lifetime (the run outlives the screen).
pub struct App<'a> {
    pub session: &'a Session,
    pub settings: Settings,
    pub view: View,
    pub overlay: Overlay,
    pub measure: Measure,
    pub log_scale: bool,
    /// The SeqPoints table's selected row and scroll (rows in `sort` order).
    pub table: TableState,
    pub sort: SortBy,
    /// What each change replaced, the latest last (`u` goes back one).
    pub history: Vec<Undo>,
    pub status: Option<Status>,
    /// The last footer message, kept for the full view (`i`) after the next key clears it.
    pub last_message: Option<String>,
    pub shown: Option<Shown>,
    pub pending: Option<Pending>,
    /// The finished job's worker still filling in the curve's naive baselines: cancelled
    /// when a new job starts, so that it never competes with it.
    pub filling: Option<Arc<AtomicBool>>,
    pub exporting: Option<Exporting>,
    /// False under NO_COLOR: no colour at all, only characters and bold/reverse.
    pub colour: bool,
    /// A locale that is not UTF-8: every drawn character in ASCII.
    pub ascii: bool,
    pub quit: bool,
    /// Ctrl-Z: the run loop gives the terminal back and stops the process.
    pub suspend: bool,
    /// Ctrl-L: the run loop clears the terminal and draws every cell again.
    pub redraw: bool,
    /// The terminal's size when last drawn or resized (`None` before the first draw).
    pub size: Option<(u16, u16)>,
    /// Rows the SeqPoints table showed when last drawn: what a page key moves.
    pub page_rows: Option<usize>,
    /// Rows the scrolling popup (help, detail, the result in full) showed when last drawn:
    /// what a page key scrolls it by.
    pub popup_rows: Option<usize>,
    /// A `:` command changed an option fixed for the session: the run loop starts the
    /// session again over the same log with these options, keeping the settings.
    pub restart: Option<(SelectOptions, PlanAsk)>,
    /// With `restart`: read the log again with these options first (`:metric NAME`).
    pub reload: Option<LoadOptions>,
    /// The `:` line that asked for the restart being built: if the new session cannot be
    /// made (`:metric` naming a column the log lacks), the line opens again with the reason.
    pub restart_line: Option<String>,
    /// The session options before the restart that made this session: if its first result
    /// fails (a `:budget` below the SeqPoints …), the session starts again with them, so a
    /// refused option never sticks.
    pub fallback: Option<Options>,
    /// The restart asked for goes back to the options before (a fallback): it gets none.
    pub reverting: bool,
    /// K steps pressed while auto-K searched (`a` then `l l l`): applied to the K it finds.
    pub auto_then: isize,
    /// The id of the new session being built off the UI thread (a restart), if any.
    pub building: Option<u64>,
    /// The session options asked for and not yet in force (their session is being built):
    /// the next `:` command changes these, so that commands typed while a large run is
    /// grouped again add up instead of the later one dropping the earlier.
    pub asked: Option<Options>,
    /// How far reading the log again (`:metric`) has got, while it runs.
    pub reading: Option<crate::runlog::LoadProgress>,
    /// The `:measured` job running, by id.
    pub measuring: Option<u64>,
    /// What `:measured` said of the last measurements (shown by `i`; `:top-up` writes its list).
    pub judged: Option<Judged>,
    /// The `:` lines entered, the latest last (Up/Down on the `:` line recall them).
    pub commands: Vec<String>,
    /// The last search that found something: what `n` / `N` step through.
    pub search: Option<String>,
    prepared: Vec<Prepared<'a>>,
    next_job: u64,
}

impl<'a> App<'a> {
    pub fn new(session: &'a Session, colour: bool) -> Self {
        App {
            session,
            settings: Settings::initial(session),
            view: View::Overview,
            overlay: Overlay::None,
            measure: Measure::Iterations,
            log_scale: false,
            table: TableState::default().with_selected(Some(0)),
            sort: SortBy::Id,
            history: Vec::new(),
            status: None,
            last_message: None,
            shown: None,
            pending: None,
            filling: None,
            exporting: None,
            colour,
            ascii: false,
            quit: false,
            suspend: false,
            redraw: false,
            size: None,
            page_rows: None,
            popup_rows: None,
            restart: None,
            reload: None,
            restart_line: None,
            fallback: None,
            reverting: false,
            building: None,
            asked: None,
            reading: None,
            measuring: None,
            judged: None,
            auto_then: 0,
            commands: Vec::new(),
            search: None,
            prepared: Vec::new(),
            next_job: 0,
        }
    }

    /// After a restart over new session options: what the user was looking at and had
    /// tuned carries over (K within what the new session allows). Returns whether the
    /// prepared selectors carried over (they do when the key groups are shared).
    pub fn carry_from(&mut self, old: &App<'a>) -> bool {
        self.settings = Settings {
            k: old.settings.k.clamp(1, self.session.max_k()),
            ..old.settings
        };
        if !self.session.methods().contains(&old.settings.method) {
            // A key of two lengths now (`:key tokens,attn`): its own default method and pick,
            // as `select` resolves them, instead of one it cannot use.
            let initial = Settings::initial(self.session);
            (self.settings.method, self.settings.pick) = (initial.method, initial.pick);
        }
        self.view = old.view;
        // A popup open while the new session was built stays open over it.
        self.overlay = old.overlay.clone();
        self.ascii = old.ascii;
        self.measure = old.measure;
        self.log_scale = old.log_scale;
        self.table = old.table;
        self.sort = old.sort;
        self.history = old.history.clone();
        self.commands = old.commands.clone();
        self.search = old.search.clone();
        self.judged = old.judged.clone();
        self.size = old.size;
        self.page_rows = old.page_rows;
        self.next_job = old.next_job;
        // Only what to profile changed, not how it bins (`:plan`, `:samples 1`, a `:budget`
        // after another, `:samples` with the same M): the very key groups and log, shared,
        // so the prepared selectors and curves still hold (they borrow those, not the old
        // session).
        let shared = Arc::ptr_eq(&self.session.strata, &old.session.strata)
            && Arc::ptr_eq(&self.session.log, &old.session.log)
            && super::session::same_key_groups(&self.session.base, &old.session.base)
            && super::session::same_reading(&self.session.load, &old.session.load);
        if shared {
            self.prepared = old.prepared.clone();
        }
        shared
    }

    /// The session options in force, or those asked for while their session is built: what
    /// the next `:` command changes, and what `u` goes back to after it.
    pub fn options_now(&self) -> Options {
        match &self.asked {
            Some(asked) => asked.clone(),
            None => self.options_in_force(),
        }
    }

    /// The options the session in force was made with.
    pub fn options_in_force(&self) -> Options {
        Options {
            base: self.session.base.clone(),
            ask: self.session.ask,
            load: self.session.load.clone(),
        }
    }

    /// Whether the terminal is below the smallest layout (only the message shows).
    pub fn too_small(&self) -> bool {
        self.size
            .is_some_and(|(w, h)| w < MIN_WIDTH || h < MIN_HEIGHT)
    }

    /// The run and compare logs as given: never an export target.
    pub fn inputs(&self) -> Vec<PathBuf> {
        self.session.inputs()
    }

    /// The prepared selectors for a method and pick, if built (most recent first).
    pub fn prepared(&self, method: Method, pick: Pick) -> Option<&Prepared<'a>> {
        self.prepared
            .iter()
            .find(|p| p.selectors.method() == method && p.selectors.pick() == pick)
    }

    /// Keep prepared selectors, the newest first, dropping the oldest beyond a few.
    pub fn remember(&mut self, prepared: Prepared<'a>) {
        let (method, pick) = (prepared.selectors.method(), prepared.selectors.pick());
        self.prepared
            .retain(|p| p.selectors.method() != method || p.selectors.pick() != pick);
        self.prepared.insert(0, prepared);
        self.prepared.truncate(PREPARED_KEPT);
    }

    pub fn next_job_id(&mut self) -> u64 {
        self.next_job += 1;
        self.next_job
    }

    /// The curve of the current method and pick, when built.
    pub fn curve(&self) -> Option<&[CurvePoint]> {
        self.prepared(self.settings.method, self.settings.pick)
            .map(|p| p.curve.as_slice())
    }

    /// The naive baselines beside the current curve, as far as computed (they are filled in
    /// after the result is shown).
    pub fn baselines(&self) -> Vec<BaselineSeries> {
        self.curve()
            .map_or_else(Vec::new, |curve| self.session.baseline_curves(curve))
    }

    /// The shown selection when it matches the current settings (an export needs that).
    pub fn current(&self) -> Option<&Selection> {
        self.shown
            .as_ref()
            .filter(|s| s.settings.same_selection(&self.settings))
            .map(|s| &s.selection)
    }

    /// The shown result when it matches the current settings, with its plan.
    pub fn current_shown(&self) -> Option<&Shown> {
        self.shown
            .as_ref()
            .filter(|s| s.settings.same_selection(&self.settings))
    }

    /// The K on screen: the chosen K (auto) or the set K; with strata, the largest stratum K.
    pub fn shown_k(&self) -> Option<usize> {
        self.shown
            .as_ref()
            .map(|s| s.selection.strata.iter().map(|o| o.k).max().unwrap_or(0))
    }

    /// Index of the selected SeqPoint in the shown selection.
    pub fn selected_seqpoint(&self) -> Option<usize> {
        let row = self.table.selected()?;
        self.row_order().get(row).copied()
    }

    /// The shown SeqPoints' indices in the table's order.
    pub fn row_order(&self) -> Vec<usize> {
        let Some(shown) = &self.shown else {
            return Vec::new();
        };
        let seqpoints = &shown.selection.seqpoints;
        let mut order: Vec<usize> = (0..seqpoints.len()).collect();
        let first_metric = |i: usize| {
            seqpoints[i]
                .values
                .first()
                .and_then(|c| c.first())
                .copied()
                .unwrap_or(0.0)
        };
        match self.sort {
            SortBy::Id => {}
            SortBy::Iteration => order.sort_by_key(|&i| seqpoints[i].iteration),
            SortBy::Key => order.sort_by(|&a, &b| seqpoints[a].key.cmp(&seqpoints[b].key)),
            SortBy::Weight => order.sort_by_key(|&i| std::cmp::Reverse(seqpoints[i].weight)),
            SortBy::Metric => order.sort_by(|&a, &b| first_metric(b).total_cmp(&first_metric(a))),
        }
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runlog::load_run;
    use crate::runlog::sample::SAMPLE_NAME;
    use crate::select::BinCount;
    use crate::select::{Exclusion, IterationRange};
    use crate::tui::keymap::Action;
    use crate::tui::settle;
    use crate::tui::update::{recompute, update, Effect};

    fn session(base: SelectOptions) -> Session {
        let load = LoadOptions::default();
        let log = load_run(SAMPLE_NAME, &load).unwrap();
        Session::new(SAMPLE_NAME.into(), load, log, base).unwrap()
    }

    fn fixed(k: usize) -> SelectOptions {
        SelectOptions {
            bins: BinCount::Fixed(k),
            ..SelectOptions::default()
        }
    }

    /// An app with its first result computed, as the screen shows it after start-up.
    fn started(session: &Session) -> App<'_> {
        let mut app = App::new(session, false);
        let effect = recompute(&mut app);
        settle(&mut app, effect);
        app
    }

    /// Press an action and let its work finish.
    fn act(app: &mut App, action: Action) {
        let effect = update(app, action);
        settle(app, effect);
    }

    #[test]
    fn a_result_is_current_only_while_its_settings_stand() {
        let session = session(fixed(4));
        let mut app = App::new(&session, false);
        assert!(app.shown.is_none() && app.current().is_none());
        assert!(matches!(recompute(&mut app), Some(Effect::Compute(_))));
        assert!(
            app.pending.is_some(),
            "the first result is computed off the UI thread"
        );

        let app = &mut started(&session);
        assert!(app.pending.is_none());
        assert_eq!(app.shown_k(), Some(4));
        assert_eq!(app.current().map(|s| s.seqpoints.len()), Some(4));
        // Another K: what is on screen is stale until it is recomputed (no export of it).
        app.settings.k = 5;
        assert!(app.current().is_none() && app.current_shown().is_none());
        assert_eq!(app.shown_k(), Some(4));
        // At a fixed K the target only judges the errors: the result still stands.
        app.settings.k = 4;
        app.settings.target_pct = 20.0;
        assert!(app.current().is_some());
        // One iteration per SeqPoint, no plan, and no target that decides.
        let shown = app.current_shown().unwrap();
        assert!(shown.plan.is_none());
        assert_eq!(shown.iterations(), 4);
        assert_eq!(shown.target_met(), None);
    }

    #[test]
    fn the_table_lists_the_seqpoints_in_its_order_and_keeps_the_selected_one() {
        let session = session(fixed(6));
        let mut app = started(&session);
        let seqpoints = app.shown.as_ref().unwrap().selection.seqpoints.clone();
        assert_eq!(app.row_order(), [0, 1, 2, 3, 4, 5]);
        // A SeqPoint whose row moves when the table is ordered by iteration.
        let mut by_iteration: Vec<usize> = (0..seqpoints.len()).collect();
        by_iteration.sort_by_key(|&i| seqpoints[i].iteration);
        let moves = (0..seqpoints.len())
            .find(|&i| by_iteration[i] != i)
            .expect("ids are not in iteration order");
        app.table.select(Some(moves));
        assert_eq!(app.selected_seqpoint(), Some(moves));

        act(&mut app, Action::CycleSort);
        assert_eq!(app.sort, SortBy::Iteration);
        let status = app.status.as_ref().unwrap();
        assert_eq!(status.text, "table ordered by iteration");
        let iterations: Vec<u64> = app
            .row_order()
            .iter()
            .map(|&i| seqpoints[i].iteration)
            .collect();
        let mut sorted: Vec<u64> = seqpoints.iter().map(|sp| sp.iteration).collect();
        sorted.sort_unstable();
        assert_eq!(iterations, sorted);
        // The SeqPoint selected before is still the one selected, in its new row.
        assert_eq!(app.selected_seqpoint(), Some(moves));
        assert_ne!(app.table.selected(), Some(moves));

        act(&mut app, Action::CycleSort);
        act(&mut app, Action::CycleSort);
        assert_eq!(app.sort, SortBy::Weight);
        let weights: Vec<u64> = app
            .row_order()
            .iter()
            .map(|&i| seqpoints[i].weight)
            .collect();
        assert!(weights.windows(2).all(|w| w[0] >= w[1]), "{weights:?}");
        act(&mut app, Action::CycleSort);
        act(&mut app, Action::CycleSort);
        assert_eq!(app.sort, SortBy::Id, "five orders, then the first again");
    }

    #[test]
    fn the_newest_four_prepared_selectors_are_kept() {
        let session = session(fixed(4));
        let mut app = started(&session);
        assert_eq!(app.settings.method, Method::Optimal);
        // Every pick of optimal binning, then another method: five preparations.
        for _ in 1..Pick::ALL.len() {
            act(&mut app, Action::CyclePick);
        }
        for pick in Pick::ALL {
            assert!(app.prepared(Method::Optimal, pick).is_some(), "{pick:?}");
        }
        act(&mut app, Action::CycleMethod);
        assert_eq!(app.settings.method, Method::Uniform);
        assert!(app.prepared(Method::Uniform, Pick::Mode).is_some());
        assert!(app.prepared(Method::Optimal, Pick::NearestMean).is_none());
        assert!(app.prepared(Method::Optimal, Pick::Median).is_some());
        // The dropped one is built again: a job, not an answer at once.
        app.settings.method = Method::Optimal;
        app.settings.pick = Pick::NearestMean;
        assert!(matches!(recompute(&mut app), Some(Effect::Compute(_))));
    }

    #[test]
    fn undo_keeps_the_last_hundred_changes() {
        let session = session(fixed(4));
        let mut app = started(&session);
        for _ in 0..60 {
            act(&mut app, Action::MoreBins);
            act(&mut app, Action::FewerBins);
        }
        assert_eq!(app.history.len(), 100);
        assert_eq!(app.settings.k, 4);
        act(&mut app, Action::Undo);
        assert_eq!(app.settings.k, 5);
        assert_eq!(app.history.len(), 99);
    }

    #[test]
    fn a_restart_carries_the_settings_and_the_selectors_that_still_hold() {
        let first = session(fixed(4));
        let mut old = started(&first);
        act(&mut old, Action::NextView);
        act(&mut old, Action::CycleSort);
        act(&mut old, Action::ToggleLogScale);

        // A budget changes what is profiled, not the key groups: the selectors still hold.
        let budget = first
            .with_options(
                first.base.clone(),
                PlanAsk {
                    budget: Some(12),
                    ..PlanAsk::default()
                },
            )
            .unwrap();
        let mut next = App::new(&budget, false);
        next.carry_from(&old);
        assert_eq!(next.settings, old.settings);
        assert_eq!((next.view, next.sort), (View::SeqPoints, SortBy::Iteration));
        assert!(next.log_scale);
        assert!(next.curve().is_some());

        // Iterations left out: other key groups, selectors built again, K within the new run.
        old.settings.k = 133;
        let excluded = SelectOptions {
            exclude: Exclusion::default().with(IterationRange { first: 0, last: 99 }),
            ..first.base.clone()
        };
        let excluded = first.with_options(excluded, first.ask).unwrap();
        let mut next = App::new(&excluded, false);
        next.carry_from(&old);
        assert_eq!(next.settings.k, 130);
        assert!(next.curve().is_none());
    }

    #[test]
    fn quitting_cancels_the_running_job() {
        let session = session(fixed(4));
        let mut app = App::new(&session, false);
        let Some(Effect::Compute(job)) = recompute(&mut app) else {
            panic!("no job");
        };
        assert!(update(&mut app, Action::Quit).is_none());
        assert!(app.quit);
        assert!(app.pending.is_none());
        assert!(job.cancel.load(Ordering::Relaxed));
    }

    #[test]
    fn the_distribution_measures_iterations_then_each_metric() {
        let session = session(fixed(4));
        let mut app = started(&session);
        assert_eq!(session.log.metric_names().len(), 1);
        act(&mut app, Action::CycleMeasure);
        assert_eq!(app.measure, Measure::Metric(0));
        act(&mut app, Action::CycleMeasure);
        assert_eq!(app.measure, Measure::Iterations);
    }

    #[test]
    fn too_small_below_the_minimum_size_only() {
        let session = session(fixed(4));
        let mut app = App::new(&session, false);
        assert!(
            !app.too_small(),
            "before the first draw the size is unknown"
        );
        for (size, small) in [
            ((59, 16), true),
            ((60, 15), true),
            ((60, 16), false),
            ((200, 60), false),
        ] {
            app.size = Some(size);
            assert_eq!(app.too_small(), small, "{size:?}");
        }
    }
}

/// What `project --target-error` says of the measurements.
#[derive(Debug, Clone, PartialEq)]
pub struct Judged {
    pub path: String,
    /// `project`'s table: totals, speedup, intervals and the verdict.
    pub table: String,
    /// Met on the measurements given.
    pub met: bool,
    /// The iterations to measure next, as a SeqPoints file (none when met).
    pub top_up: Option<crate::doc::SelectDoc>,
}
