//! What stays fixed while the explorer runs (the run, its key groups, the session's options)
//! and the settings the user tunes over it, resolved as `seqpoint select` resolves them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::binning::Method;
use crate::groups::KeyGroups;
use crate::pick::Pick;
use crate::runlog::sample::sample_bytes;
use crate::runlog::{LoadOptions, RunLog};
use crate::select::command::select_command;
use crate::select::naive::Baselines;
use crate::select::plan::{PlanAsk, PlanRule};
use crate::select::{
    check_options, method_and_pick, BinCount, CurvePoint, SelectError, SelectOptions,
    SelectRequest, StrataGroups, DEFAULT_TARGET_PCT,
};

/// What stays fixed while the explorer runs: the run, its key groups and the command line's
/// options (warm-up, seed, samples, strata, target rule) that no key changes.
pub struct Session {
    /// The run as named on the command line (or the bundled sample's name).
    pub run: String,
    pub load: LoadOptions,
    /// Shared by the sessions a restart makes (`:samples 2` …): a restart copies no rows.
    pub log: Arc<RunLog>,
    /// Shared, like the log, by a restart that changes only what is profiled (`:plan`,
    /// `:budget`): the prepared selectors borrow these, so they carry over to it.
    pub strata: Arc<StrataGroups>,
    /// The whole run's key groups when strata split it; otherwise the one stratum's serve.
    whole_run: Option<Arc<KeyGroups>>,
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
    /// What reading the log again noted (`:key fit`: the fitted formula), said once the
    /// session is shown.
    pub notes: Vec<String>,
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
            whole_run: (strata.groups.len() > 1).then(|| {
                Arc::new(KeyGroups::from_rows(
                    &log,
                    &base.exclude.kept_row_ranges(&log),
                ))
            }),
            run,
            load,
            log,
            strata: Arc::new(strata),
            base,
            export_dir,
            baselines_by_budget: Default::default(),
            notes: Vec::new(),
        })
    }

    /// The same run with other session options (a `:samples`, `:strata` … command): the
    /// log is shared, not read again, so a run read from a pipe can be restarted too.
    pub fn with_options(&self, base: SelectOptions, ask: PlanAsk) -> Result<Session, SelectError> {
        if same_key_groups(&base, &self.base) {
            // Only what is profiled changed: the key groups are these, shared (no second
            // grouping pass, and the prepared selectors over them still hold).
            check_options(&self.log, &base)?;
            return Ok(Session {
                run: self.run.clone(),
                load: self.load.clone(),
                log: Arc::clone(&self.log),
                strata: Arc::clone(&self.strata),
                whole_run: self.whole_run.clone(),
                base,
                export_dir: self.export_dir.clone(),
                ask,
                // Kept per session: a session makes its own (filled after its first result).
                baselines_by_budget: Default::default(),
                baseline_cap: self.baseline_cap,
                notes: Vec::new(),
            });
        }
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
    /// How far it has got is told through `progress` (the footer's bar).
    pub fn reloaded(
        &self,
        load: LoadOptions,
        base: SelectOptions,
        ask: PlanAsk,
        progress: &crate::runlog::LoadProgress,
    ) -> Result<Session, String> {
        // Notes are kept per thread: those of an earlier load on this worker go first.
        crate::runlog::packed::take_notes();
        let log = crate::runlog::load_run_with_progress(&self.run, &load, progress)
            .map_err(|e| e.to_string())?;
        let notes = crate::runlog::packed::take_notes();
        Session::new(self.run.clone(), load, log, base)
            .map(|s| Session {
                notes,
                ..s.asking(ask)
            })
            .map_err(|e| e.worded(crate::options::Surface::Explorer))
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

    /// What `select` is asked for these settings: the same request its flags make.
    pub fn request(&self, settings: &Settings) -> SelectRequest {
        SelectRequest::asked(self.options(settings), self.ask, settings.target_pct)
    }

    /// How much is profiled for these settings: `select`'s rule for the same flags.
    pub fn rule(&self, settings: &Settings) -> Option<PlanRule> {
        self.request(settings).plan
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
        self.whole_run.as_deref().unwrap_or(&self.strata.groups[0])
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
        select_command(
            &self.run,
            &self.load,
            &self.options(settings),
            &self.ask,
            settings.method,
            settings.pick,
        )
    }

    /// What `y` shows and copies: the equivalent command, runnable as pasted. A log read
    /// from standard input cannot be named, so the command reads it from a pipe whose start
    /// names where to put its path (`LOG`): pasted unedited, it fails at once on a missing
    /// file instead of waiting for a log typed on the terminal.
    pub fn copied_command(&self, settings: &Settings) -> String {
        let command = self.command(settings);
        if self.run == "-" {
            format!("cat {STDIN_PLACEHOLDER} | {command}")
        } else {
            command
        }
    }

    /// Methods that work on this run's key (`optimal` needs a one-length key).
    pub fn methods(&self) -> Vec<Method> {
        Method::ALL
            .into_iter()
            .filter(|&m| m != Method::Optimal || self.log.dims() == 1)
            .collect()
    }
}

/// In the command `y` copies for a log read from standard input: where its path goes.
pub const STDIN_PLACEHOLDER: &str = "LOG";

/// Whether two sessions' options give the same key groups and baselines: they differ at most
/// in the bins (`Settings` decide those) and so in what is profiled (`PlanAsk`).
pub fn same_key_groups(a: &SelectOptions, b: &SelectOptions) -> bool {
    let bins_aside = |o: &SelectOptions| SelectOptions {
        bins: BinCount::Target(0.0),
        ..o.clone()
    };
    bins_aside(a) == bins_aside(b)
}

/// Whether two load options read the same columns (the ones a `:` command changes: `:metric`,
/// `:key`), so that a restart shares the log instead of reading it again.
pub fn same_reading(a: &LoadOptions, b: &LoadOptions) -> bool {
    a.metrics == b.metrics && a.key == b.key
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

/// A naive baseline's worst error per profiling budget (K iterations), drawn with `glyph`.
/// `name` is short (`first-N`): the legend adds the error at the current K.
#[derive(Debug, Clone, PartialEq)]
pub struct BaselineSeries {
    pub name: String,
    pub glyph: char,
    /// `(K, worst error %)`.
    pub points: Vec<(usize, f64)>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runlog::load_run;
    use crate::runlog::sample::{SAMPLE_COMPARE_NAME, SAMPLE_NAME};
    use crate::select::exclude::{Exclusion, IterationRange};
    use crate::select::{run_selection, Strata};

    // Counted by hand in assets/speech_t1.csv (450 iterations, key seq_len): 133 distinct
    // lengths, 130 from iteration 100 on, 105 / 107 / 106 in epochs 0 / 1 / 2.
    const SAMPLE_ITERATIONS: usize = 450;
    const SAMPLE_LENGTHS: usize = 133;

    fn sample_log() -> Arc<RunLog> {
        Arc::new(load_run(SAMPLE_NAME, &LoadOptions::default()).unwrap())
    }

    fn on(run: &str, base: SelectOptions) -> Session {
        Session::new(run.into(), LoadOptions::default(), sample_log(), base).unwrap()
    }

    fn fixed(k: usize) -> SelectOptions {
        SelectOptions {
            bins: BinCount::Fixed(k),
            ..SelectOptions::default()
        }
    }

    #[test]
    fn the_largest_useful_k_is_one_bin_per_key_group_left_in() {
        assert_eq!(on(SAMPLE_NAME, fixed(4)).max_k(), SAMPLE_LENGTHS);
        let excluded = SelectOptions {
            exclude: Exclusion::default().with(IterationRange { first: 0, last: 99 }),
            ..fixed(4)
        };
        let session = on(SAMPLE_NAME, excluded);
        assert_eq!(session.max_k(), 130);
        assert_eq!(session.groups().iterations(), 350);
        // With strata, K is per stratum (the largest), while the panels show the whole run.
        let by_epoch = on(
            SAMPLE_NAME,
            SelectOptions {
                strata: Strata::Epoch,
                ..fixed(4)
            },
        );
        assert_eq!(by_epoch.max_k(), 107);
        assert_eq!(by_epoch.groups().len(), SAMPLE_LENGTHS);
    }

    #[test]
    fn settings_start_where_select_would() {
        // The defaults: a target, so auto-K; `select` resolves the method and pick itself.
        let session = on(SAMPLE_NAME, SelectOptions::default());
        let settings = Settings::initial(&session);
        assert!(settings.auto);
        assert_eq!(settings.target_pct, DEFAULT_TARGET_PCT);
        let selected = run_selection(&session.log, &session.base).unwrap();
        assert_eq!(
            (settings.method, settings.pick),
            (selected.method, selected.pick)
        );
        // A one-length key without a proxy column: optimal binning, the nearest-mean pick.
        assert_eq!(
            (settings.method, settings.pick),
            (Method::Optimal, Pick::NearestMean)
        );

        // `--bins` beyond the key groups starts at the largest K that changes anything.
        let settings = Settings::initial(&on(SAMPLE_NAME, fixed(1000)));
        assert!(!settings.auto);
        assert_eq!(settings.k, SAMPLE_LENGTHS);
        assert_eq!(settings.target_pct, DEFAULT_TARGET_PCT);

        // A method and pick given are kept.
        let given = SelectOptions {
            method: Some(Method::Uniform),
            pick: Some(Pick::Median),
            ..fixed(4)
        };
        let settings = Settings::initial(&on(SAMPLE_NAME, given));
        assert_eq!(
            (settings.method, settings.pick),
            (Method::Uniform, Pick::Median)
        );
        assert_eq!(settings.k, 4);
    }

    #[test]
    fn the_options_and_command_say_the_settings() {
        let session = on(SAMPLE_NAME, fixed(4));
        let mut settings = Settings::initial(&session);
        assert_eq!(
            session.command(&settings),
            "seqpoint select sample:speech_t1.csv --bins 4 --method optimal --pick nearest-mean"
        );
        let options = session.options(&settings);
        assert_eq!(options.bins, BinCount::Fixed(4));
        assert_eq!(options.method, Some(Method::Optimal));

        // Auto-K: the target, not K, is what `select` is given.
        settings.auto = true;
        settings.k = 9;
        settings.target_pct = 2.0;
        settings.method = Method::Uniform;
        assert_eq!(session.options(&settings).bins, BinCount::Target(2.0));
        assert_eq!(
            session.command(&settings),
            "seqpoint select sample:speech_t1.csv --target-error 2 --method uniform \
             --pick nearest-mean"
        );
    }

    #[test]
    fn the_command_adds_the_profiling_asked_for() {
        let session = on(SAMPLE_NAME, fixed(4));
        let settings = Settings::initial(&session);
        let plain = session.command(&settings);
        let asking = |ask: PlanAsk| on(SAMPLE_NAME, fixed(4)).asking(ask).command(&settings);
        let one = asking(PlanAsk {
            samples: Some(1),
            ..PlanAsk::default()
        });
        assert_eq!(one, format!("{plain} --samples 1"));
        let budget = asking(PlanAsk {
            budget: Some(12),
            ..PlanAsk::default()
        });
        assert_eq!(budget, format!("{plain} --budget 12"));
        // `--samples M > 1` is one of the options, said once.
        let three = on(
            SAMPLE_NAME,
            SelectOptions {
                samples: 3,
                ..fixed(4)
            },
        );
        let command = three.command(&settings);
        assert_eq!(command.matches("--samples 3").count(), 1, "{command}");
        assert_eq!(three.ask.samples, Some(3));
    }

    #[test]
    fn the_plan_rule_is_selects_for_the_same_flags() {
        let session = on(SAMPLE_NAME, SelectOptions::default());
        let mut settings = Settings::initial(&session);
        // A target alone: its cheapest plan.
        assert_eq!(
            session.rule(&settings),
            Some(PlanRule::Target(DEFAULT_TARGET_PCT))
        );
        // A fixed K: one iteration per SeqPoint, no plan.
        settings.auto = false;
        assert_eq!(session.rule(&settings), None);
        let budget = on(SAMPLE_NAME, SelectOptions::default()).asking(PlanAsk {
            budget: Some(40),
            ..PlanAsk::default()
        });
        assert_eq!(budget.rule(&settings), Some(PlanRule::Budget(40)));
        let three = on(
            SAMPLE_NAME,
            SelectOptions {
                samples: 3,
                ..fixed(4)
            },
        );
        assert_eq!(three.rule(&settings), Some(PlanRule::Samples(3)));
    }

    #[test]
    fn exports_go_beside_the_run_else_here() {
        let beside = on("runs/a.csv", fixed(4));
        assert_eq!(
            beside.default_export_path(),
            PathBuf::from("runs/seqpoints.json")
        );
        for here in [SAMPLE_NAME, "-", "a.csv"] {
            assert_eq!(
                on(here, fixed(4)).default_export_path(),
                PathBuf::from("seqpoints.json"),
                "{here}"
            );
        }
        let load = LoadOptions {
            compare: Some(SAMPLE_COMPARE_NAME.into()),
            ..LoadOptions::default()
        };
        let log = load_run(SAMPLE_NAME, &load).unwrap();
        let both = Session::new(SAMPLE_NAME.into(), load, log, fixed(4)).unwrap();
        assert_eq!(
            both.inputs(),
            [
                PathBuf::from(SAMPLE_NAME),
                PathBuf::from(SAMPLE_COMPARE_NAME)
            ]
        );
    }

    #[test]
    fn a_restart_shares_the_log_and_checks_the_new_options() {
        let session = on(SAMPLE_NAME, fixed(4));
        let ask = PlanAsk {
            samples: Some(2),
            ..PlanAsk::default()
        };
        let base = SelectOptions {
            samples: 2,
            ..fixed(4)
        };
        let next = session.with_options(base, ask).unwrap();
        assert!(Arc::ptr_eq(&session.log, &next.log));
        assert_eq!(next.ask, ask);
        assert_eq!(next.base.samples, 2);
        let zero = SelectOptions {
            samples: 0,
            ..fixed(4)
        };
        let refused = session.with_options(zero, PlanAsk::default());
        assert!(refused.is_err());
    }

    #[test]
    fn optimal_binning_is_offered_for_a_one_length_key_only() {
        let one = on(SAMPLE_NAME, fixed(4));
        assert_eq!(one.methods(), Method::ALL);
        let load = LoadOptions {
            key: vec!["seq_len".into(), "batch_size".into()],
            ..LoadOptions::default()
        };
        let log = load_run(SAMPLE_NAME, &load).unwrap();
        let two = Session::new(SAMPLE_NAME.into(), load, log, fixed(4)).unwrap();
        assert!(!two.methods().contains(&Method::Optimal));
        assert_eq!(two.methods().len(), Method::ALL.len() - 1);
    }

    #[test]
    fn baselines_are_kept_by_the_iterations_they_profile() {
        let session = on(SAMPLE_NAME, fixed(4));
        assert_eq!(session.baseline_budget(0), 1);
        assert_eq!(session.baseline_budget(7), 7);
        // Beyond the run every budget profiles all of it: one entry serves them all.
        assert_eq!(session.baseline_budget(usize::MAX), SAMPLE_ITERATIONS);
        assert_eq!(session.kept_baseline_errors(7), None);
        session
            .baselines_by_budget
            .lock()
            .unwrap()
            .insert(SAMPLE_ITERATIONS, (1.5, 2.5));
        assert_eq!(session.kept_baseline_errors(10_000), Some((1.5, 2.5)));
        let point = |k, bins| CurvePoint {
            k,
            bins,
            worst_error_pct: 0.0,
            worst_half_width_pct: 0.0,
        };
        // Only the point whose budget reaches the whole run has its baselines yet.
        let series = session.baseline_curves(&[point(3, 3), point(500, 500)]);
        assert_eq!(series[0].points, [(500, 1.5)]);
        assert_eq!(series[1].points, [(500, 2.5)]);
        assert_eq!(session.curve_budget(&point(5, 5)), 5);
    }
}
