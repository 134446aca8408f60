//! The explorer's state: the loaded run (fixed for the session), what the user tunes, what is
//! on screen, and the prepared selectors that keep a key press O(groups).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ratatui::widgets::TableState;

use crate::binning::Method;
use crate::groups::KeyGroups;
use crate::output::command::select_command;
use crate::pick::Pick;
use crate::project::baselines::Baselines;
use crate::project::Projection;
use crate::runlog::sample::sample_bytes;
use crate::runlog::{LoadOptions, RunLog};
use crate::select::plan::{PlanAsk, PlanRule, ProfilePlan};
use crate::select::{
    check_options, method_and_pick, BinCount, CurvePoint, SelectError, SelectOptions, Selection,
    Selectors, StrataGroups, DEFAULT_TARGET_PCT,
};

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

/// What stays fixed while the explorer runs: the run, its key groups and the command line's
/// options (warm-up, seed, samples, strata, target rule) that no key changes.
pub struct Session {
    /// The run as named on the command line (or the bundled sample's name).
    pub run: String,
    pub load: LoadOptions,
    /// Shared by the sessions a restart makes (`:samples 2` …): a restart copies no rows.
    pub log: Arc<RunLog>,
    pub strata: StrataGroups,
    /// The whole run's key groups when strata split it; otherwise the one stratum's serve.
    whole_run: Option<KeyGroups>,
    pub base: SelectOptions,
    /// Where an export goes by default: beside the run, or here for the sample and stdin.
    pub export_dir: PathBuf,
    /// What the user asked to profile (`--samples`, `--plan`, `--budget`); `rule` resolves
    /// it for the settings as `select` does.
    pub ask: PlanAsk,
    /// First-N and random-N worst errors by profiled iterations: they depend on the budget
    /// alone, not on the method or pick, so a new method's curve reuses them.
    pub baselines_by_budget: std::sync::Mutex<std::collections::HashMap<usize, (f64, f64)>>,
    /// The most iterations a baseline can profile: every larger budget gives its baselines.
    baseline_cap: usize,
}

/// The naive baselines as `select` makes them: over the kept iterations when some are left
/// out (`--exclude`), else from the key groups' totals without another pass.
fn baselines_of<'l>(log: &'l RunLog, strata: &StrataGroups, base: &SelectOptions) -> Baselines<'l> {
    if base.exclude.is_empty() {
        Baselines::with_actual(log, strata.actual().to_vec())
    } else {
        Baselines::excluding(log, &base.exclude)
    }
}

impl Session {
    /// Checks the options before the terminal opens, so a bad option reads like the CLI's error.
    pub fn new(
        run: String,
        load: LoadOptions,
        log: impl Into<Arc<RunLog>>,
        base: SelectOptions,
    ) -> Result<Self, SelectError> {
        let log = log.into();
        check_options(&log, &base)?;
        // The session's key groups leave out `--exclude`'s iterations, as `select`'s do.
        let strata = StrataGroups::for_options(&log, &base)?;
        let export_dir = if run == "-" || sample_bytes(&run).is_some() {
            PathBuf::new()
        } else {
            Path::new(&run)
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default()
        };
        let baseline_cap = baselines_of(&log, &strata, &base).budget(usize::MAX, base.warmup);
        Ok(Session {
            baseline_cap,
            ask: PlanAsk {
                samples: (base.samples > 1).then_some(base.samples),
                ..PlanAsk::default()
            },
            // Without strata the one stratum is the whole run: no second grouping pass. The
            // whole run is the run less `--exclude`'s iterations, as the strata are.
            whole_run: (strata.groups.len() > 1)
                .then(|| KeyGroups::from_rows(&log, &base.exclude.kept_row_ranges(&log))),
            run,
            load,
            log,
            strata,
            base,
            export_dir,
            baselines_by_budget: Default::default(),
        })
    }

    /// The same run with other session options (a `:samples`, `:strata` … command): the
    /// log is shared, not read again, so a run read from a pipe can be restarted too.
    pub fn with_options(&self, base: SelectOptions, ask: PlanAsk) -> Result<Session, SelectError> {
        Ok(Session::new(
            self.run.clone(),
            self.load.clone(),
            Arc::clone(&self.log),
            base,
        )?
        .asking(ask))
    }

    /// The run read again with other load options (`:metric NAME`), then these options.
    /// Errors read as the command line's would (a missing column is named with the file's).
    pub fn reloaded(
        &self,
        load: LoadOptions,
        base: SelectOptions,
        ask: PlanAsk,
    ) -> Result<Session, String> {
        let log = crate::runlog::load_run(&self.run, &load).map_err(|e| e.to_string())?;
        Session::new(self.run.clone(), load, log, base)
            .map(|s| s.asking(ask))
            .map_err(|e| e.to_string())
    }

    /// The profiling budget of a curve point: its SeqPoints times the session's samples.
    pub fn curve_budget(&self, point: &CurvePoint) -> usize {
        (point.bins as u64 * self.base.samples) as usize
    }

    /// The naive baselines beside the curve, as far as computed (`compute::fill_baselines`):
    /// at each K, first-N and random-N (mean error over seeded draws) profiling as many
    /// iterations as the SeqPoints of that K would, with the warm-up and seed `select` uses.
    pub fn baseline_curves(&self, curve: &[CurvePoint]) -> Vec<BaselineSeries> {
        let errors: Vec<(usize, (f64, f64))> = curve
            .iter()
            .filter_map(|p| {
                self.kept_baseline_errors(self.curve_budget(p))
                    .map(|e| (p.k, e))
            })
            .collect();
        vec![
            BaselineSeries {
                name: "first-N".into(),
                glyph: 'f',
                points: errors.iter().map(|&(k, (first, _))| (k, first)).collect(),
            },
            BaselineSeries {
                name: "random-N".into(),
                glyph: 'r',
                points: errors.iter().map(|&(k, (_, random))| (k, random)).collect(),
            },
        ]
    }

    /// First-N and random-N worst errors at `budget` profiled iterations, when already
    /// computed (the screen reads them without computing).
    pub fn kept_baseline_errors(&self, budget: usize) -> Option<(f64, f64)> {
        self.baselines_by_budget
            .lock()
            .ok()
            .and_then(|kept| kept.get(&self.baseline_budget(budget)).copied())
    }

    /// The iterations the naive baselines of `budget` profile (see `Baselines::budget`): what
    /// their errors are kept by.
    pub fn baseline_budget(&self, budget: usize) -> usize {
        budget.clamp(1, self.baseline_cap.max(1))
    }

    /// The same session with the profiling the command line asked for (`--samples 1` forces
    /// one per SeqPoint; `--plan`, `--budget B`).
    pub fn asking(self, ask: PlanAsk) -> Session {
        Session { ask, ..self }
    }

    /// How much is profiled for these settings: `select`'s rule for the same flags.
    pub fn rule(&self, settings: &Settings) -> Option<PlanRule> {
        self.ask.rule(
            (!settings.auto).then_some(settings.k),
            settings.target_pct,
            self.base.target_by,
        )
    }

    /// The loaded logs as named on the command line (the run, and `--compare`'s).
    pub fn inputs(&self) -> Vec<PathBuf> {
        std::iter::once(&self.run)
            .chain(self.load.compare.as_ref())
            .map(PathBuf::from)
            .collect()
    }

    /// The naive baselines as `select` makes them: over the kept iterations when some are
    /// left out (`--exclude`), else from the session's totals without another pass.
    pub fn baselines(&self) -> Baselines<'_> {
        baselines_of(&self.log, &self.strata, &self.base)
    }

    /// The whole run's key groups (less `--exclude`'s iterations): what the distribution
    /// panels draw.
    pub fn groups(&self) -> &KeyGroups {
        self.whole_run.as_ref().unwrap_or(&self.strata.groups[0])
    }

    /// The largest K that still changes anything: one bin per key group.
    pub fn max_k(&self) -> usize {
        self.strata.largest().max(1)
    }

    pub fn default_export_path(&self) -> PathBuf {
        self.export_dir.join("seqpoints.json")
    }

    /// The options `seqpoint select` would be given for these settings.
    pub fn options(&self, settings: &Settings) -> SelectOptions {
        SelectOptions {
            method: Some(settings.method),
            pick: Some(settings.pick),
            bins: if settings.auto {
                BinCount::Target(settings.target_pct)
            } else {
                BinCount::Fixed(settings.k)
            },
            ..self.base.clone()
        }
    }

    /// The equivalent `seqpoint select ...` line.
    pub fn command(&self, settings: &Settings) -> String {
        let mut command = select_command(
            &self.run,
            &self.load,
            &self.options(settings),
            settings.method,
            settings.pick,
        );
        // What the options cannot say: the profiling asked for beyond `--samples M > 1`.
        if self.ask.samples == Some(1) {
            command.push_str(" --samples 1");
        }
        if self.ask.plan {
            command.push_str(" --plan");
        }
        if let Some(budget) = self.ask.budget {
            command.push_str(&format!(" --budget {budget}"));
        }
        command
    }

    /// Methods that work on this run's key (`optimal` needs a one-length key).
    pub fn methods(&self) -> Vec<Method> {
        Method::ALL
            .into_iter()
            .filter(|&m| m != Method::Optimal || self.log.dims() == 1)
            .collect()
    }
}

/// What the user tunes; every change recomputes the selection from the key groups.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    pub method: Method,
    pub pick: Pick,
    /// Bins per stratum when not in auto mode.
    pub k: usize,
    pub target_pct: f64,
    /// Auto-K: the smallest K that meets the target.
    pub auto: bool,
}

impl Settings {
    /// Whether two settings give the same selection (the target only matters in auto mode).
    pub fn same_selection(&self, other: &Settings) -> bool {
        self.method == other.method
            && self.pick == other.pick
            && self.auto == other.auto
            && if self.auto {
                self.target_pct == other.target_pct
            } else {
                self.k == other.k
            }
    }

    /// The command line's choices, with its defaults resolved as `select` resolves them.
    pub fn initial(session: &Session) -> Self {
        let base = &session.base;
        let (k, target_pct, auto) = match base.bins {
            BinCount::Fixed(k) => (k.clamp(1, session.max_k()), DEFAULT_TARGET_PCT, false),
            BinCount::Target(t) => (1, t, true),
        };
        let (method, pick) = method_and_pick(&session.log, base);
        Settings {
            method,
            pick,
            k,
            target_pct,
            auto,
        }
    }
}

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
    pub plan: ExportPlan,
    pub existing: Vec<PathBuf>,
}

/// The `:` command line being typed; an error stays under it until the next key.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CommandPrompt {
    pub input: String,
    /// Cursor position in characters.
    pub cursor: usize,
    pub error: Option<String>,
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

/// An export ready to be written: both files and their contents.
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

    /// Whether the target is met, when a target decides: the plan's verdict, else auto-K's.
    pub fn target_met(&self) -> Option<bool> {
        match &self.plan {
            Some(plan) if matches!(plan.rule, PlanRule::Target(_)) => plan.met,
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

/// A naive baseline's worst error per profiling budget (K iterations), drawn with `glyph`.
/// `name` is short (`first-N`): the legend adds the error at the current K.
#[derive(Debug, Clone, PartialEq)]
pub struct BaselineSeries {
    pub name: String,
    pub glyph: char,
    /// `(K, worst error %)`.
    pub points: Vec<(usize, f64)>,
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
    /// Settings before each change, the latest last (`u` goes back one).
    pub history: Vec<Settings>,
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
    /// The terminal's size when last drawn or resized (`None` before the first draw).
    pub size: Option<(u16, u16)>,
    /// Rows the SeqPoints table showed when last drawn: what a page key moves.
    pub page_rows: Option<usize>,
    /// A `:` command changed an option fixed for the session: the run loop starts the
    /// session again over the same log with these options, keeping the settings.
    pub restart: Option<(SelectOptions, PlanAsk)>,
    /// With `restart`: read the log again with these options first (`:metric NAME`).
    pub reload: Option<LoadOptions>,
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
            size: None,
            page_rows: None,
            restart: None,
            reload: None,
            prepared: Vec::new(),
            next_job: 0,
        }
    }

    /// After a restart over new session options: what the user was looking at and had
    /// tuned carries over (K within what the new session allows).
    pub fn carry_from(&mut self, old: &App<'a>) {
        self.settings = Settings {
            k: old.settings.k.clamp(1, self.session.max_k()),
            ..old.settings
        };
        self.view = old.view;
        self.ascii = old.ascii;
        self.measure = old.measure;
        self.log_scale = old.log_scale;
        self.table = old.table;
        self.sort = old.sort;
        self.history = old.history.clone();
        self.size = old.size;
        self.page_rows = old.page_rows;
        self.next_job = old.next_job;
        // Only what to profile changed (`:plan`, `:budget`, `:samples` with the same M): the
        // same log's key groups and options, so the prepared selectors and curves still hold.
        let same_bins = |o: &SelectOptions| SelectOptions {
            bins: BinCount::Target(0.0),
            ..o.clone()
        };
        if same_bins(&self.session.base) == same_bins(&old.session.base)
            && self.session.load.metrics == old.session.load.metrics
        {
            self.prepared = old.prepared.clone();
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
