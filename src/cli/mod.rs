//! Command-line interface: argument definitions shared by every subcommand, and dispatch.
//! Each subcommand lives in its own file with a `run` entry point.

pub mod completions;
mod memory;
mod output;
pub mod plot;
mod progress;
pub mod project;
pub mod report;
pub mod select;
pub mod signals;
pub mod tui;

use anyhow::bail;
use clap::{Args, Parser, Subcommand};

use seqpoint::binning::Method;
use seqpoint::options::{
    parse_percent, BINS, BUDGET, COMPARE, COST, EXCLUDE, INPUT_FORMAT, KEY, MAX_BINS, MAX_INPUT,
    MAX_LINE, MAX_MEMORY, METHOD, METRIC, MODEL, PICK, PLAN, SAMPLES, SEED, SKIP_BAD, STRATA,
    TARGET_BY, TARGET_ERROR, WARMUP,
};
use seqpoint::pick::Pick;
use seqpoint::runlog::packed::ModelShape;
use seqpoint::runlog::sample::{SAMPLE_COMPARE_NAME, SAMPLE_NAME};
use seqpoint::runlog::{InputFormat, InputLimits};
use seqpoint::select::plan::PlanAsk;
use seqpoint::select::SelectRequest;
use seqpoint::select::{
    parse_iteration_range, BinCount, Exclusion, IterationRange, SelectOptions, Strata, TargetRule,
    DEFAULT_MAX_BINS, DEFAULT_TARGET_PCT,
};
use seqpoint::{Cost, LoadOptions};

/// Memory the system refuses ends the process with an error line, not an abort.
#[global_allocator]
static ALLOCATOR: memory::ErrorOnFailure = memory::ErrorOnFailure;

#[derive(Debug, Parser)]
#[command(
    name = "seqpoint",
    version,
    about = "Find the few training iterations worth profiling in a sequence-model training run",
    long_about = "seqpoint reads a training run's per-iteration log (sequence length, optional \
                  time/energy), bins the sequence lengths, and picks one representative \
                  iteration per bin (a SeqPoint) whose weighted measurements project the whole \
                  run. With no subcommand it opens the interactive explorer (or prints the \
                  selection when not on a terminal).",
    after_help = "Examples:\n  seqpoint                          explore the bundled sample run\n  seqpoint run.csv --compare new.csv\n  seqpoint select run.csv --target-error 1 -o seqpoints.json"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub select: SelectArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Choose SeqPoints and project whole-run totals
    #[command(
        after_help = "Examples:\n  seqpoint select run.csv --compare run_new.csv --target-error 1\n  seqpoint select run.jsonl.gz --bins 12 --method quantile --format csv -o seqpoints.csv"
    )]
    Select(select::SelectCommand),
    /// Project whole-run totals and speedups from the SeqPoints' measurements
    #[command(
        after_help = "Examples:\n  seqpoint select run.csv -o seqpoints.json\n  seqpoint project seqpoints.json measured_new.csv\n  seqpoint project seqpoints.json measured.jsonl --format json --run-epochs 90"
    )]
    Project(project::ProjectCommand),
    /// Draw the selection as an SVG figure: length histogram and error-versus-K curve
    #[command(
        after_help = "Examples:\n  seqpoint plot run.jsonl -o figure.svg\n  seqpoint plot run.csv --compare run_new.csv --target-error 0.5 --what error-curve -o curve.svg\n  rsvg-convert figure.svg -o figure.png     # a PNG to look at"
    )]
    Plot(plot::PlotCommand),
    /// Print a shell completion script (bash, zsh or fish)
    #[command(
        after_help = "Examples:\n  seqpoint completions bash > ~/.local/share/bash-completion/completions/seqpoint\n  seqpoint completions zsh > ~/.zfunc/_seqpoint\n  seqpoint completions fish > ~/.config/fish/completions/seqpoint.fish"
    )]
    Completions(completions::CompletionsCommand),
    /// Print the man page, or write one page per subcommand with --dir
    #[command(
        after_help = "Examples:\n  seqpoint man | man -l -\n  seqpoint man --dir ~/.local/share/man/man1"
    )]
    Man(completions::ManCommand),
    /// Sanity checks before profiling: does the key decide the cost, noise, warm-up, drift
    #[command(
        after_help = "Examples:\n  seqpoint report run.csv --compare run_new.csv\n  seqpoint report run.csv --metric time_ms --metric energy_j --format json\n  seqpoint report mt.csv --key src_len,tgt_len"
    )]
    Report(report::ReportCommand),
    /// Explore the run interactively: tune K, target, method and pick live, then export
    #[command(
        after_help = "Examples:\n  seqpoint tui\n  seqpoint tui run.csv --compare run_new.csv --target-error 0.5"
    )]
    Tui(tui::TuiCommand),
}

/// Which run to read and how.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Run log: CSV, TSV or JSON Lines, optionally .gz; `-` reads standard input.
    /// Without it, the bundled sample run (real measurements) is used.
    #[arg(global = false)]
    pub run: Option<String>,
    #[arg(long = COMPARE.flag, value_name = COMPARE.value_name, help = COMPARE.help)]
    pub compare: Option<String>,
    #[arg(long = KEY.flag, value_delimiter = ',', value_name = KEY.value_name, help = KEY.help)]
    pub key: Vec<String>,
    #[arg(long = METRIC.flag, value_name = METRIC.value_name, help = METRIC.help)]
    pub metric: Vec<String>,
    #[arg(long = INPUT_FORMAT.flag, help = INPUT_FORMAT.help, value_enum)]
    pub input_format: Option<InputFormat>,
    #[arg(long = SKIP_BAD.flag, help = SKIP_BAD.help, value_name = "PCT", num_args = 0..=1,
          require_equals = true, default_missing_value = "50%", value_parser = parse_skip_share)]
    pub skip_bad: Option<f64>,
    #[arg(long = COST.flag, help = COST.help, default_value = "linear", value_parser = parse_cost)]
    pub cost: Cost,
    #[arg(long = MODEL.flag, value_name = MODEL.value_name, help = MODEL.help,
          value_parser = parse_model)]
    pub model: Option<ModelShape>,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// What reading one input may cost; the defaults are far above any real log.
#[derive(Debug, Clone, Args)]
pub struct LimitArgs {
    #[arg(long = MAX_LINE.flag, value_name = MAX_LINE.value_name, help = MAX_LINE.help,
          default_value = "1M", value_parser = parse_size)]
    pub max_line: u64,
    #[arg(long = MAX_INPUT.flag, value_name = MAX_INPUT.value_name, help = MAX_INPUT.help,
          default_value = "64G", value_parser = parse_size)]
    pub max_input: u64,
    #[arg(long = MAX_MEMORY.flag, value_name = MAX_MEMORY.value_name, help = MAX_MEMORY.help,
          value_parser = parse_size)]
    pub max_memory: Option<u64>,
}

impl LimitArgs {
    pub fn limits(&self) -> InputLimits {
        InputLimits {
            max_line: self.max_line,
            max_input: self.max_input,
            max_memory: self.max_memory,
        }
    }
}

fn parse_size(s: &str) -> Result<u64, String> {
    seqpoint::runlog::limits::parse_size(s)
}

/// `--skip-bad=PCT`: the share of rows that may be bad, 0% to 100%, as a fraction.
fn parse_skip_share(s: &str) -> Result<f64, String> {
    let digits = s.trim().strip_suffix('%').unwrap_or(s.trim());
    match digits.parse::<f64>() {
        Ok(pct) if (0.0..=100.0).contains(&pct) => Ok(pct / 100.0),
        _ => Err(format!(
            "expected the share of rows that may be skipped, from 0% to 100% (e.g. \
             --skip-bad=20%), found '{s}'"
        )),
    }
}

fn parse_cost(s: &str) -> Result<Cost, String> {
    s.parse()
}

fn parse_model(s: &str) -> Result<ModelShape, String> {
    s.parse()
}

fn parse_strata(s: &str) -> Result<Strata, String> {
    s.parse()
}

impl RunArgs {
    /// The run log path (or the bundled sample) and its compare log.
    pub fn paths(&self) -> (String, Option<String>) {
        match &self.run {
            Some(run) => (run.clone(), self.compare.clone()),
            None => (
                SAMPLE_NAME.to_string(),
                Some(
                    self.compare
                        .clone()
                        .unwrap_or_else(|| SAMPLE_COMPARE_NAME.to_string()),
                ),
            ),
        }
    }

    /// The files given on the command line (the bundled sample is none): never an output.
    pub fn input_files(&self) -> Vec<&str> {
        self.run
            .iter()
            .chain(&self.compare)
            .map(String::as_str)
            .collect()
    }

    pub fn load_options(&self) -> LoadOptions {
        let (_, compare) = self.paths();
        LoadOptions {
            key: self.key.clone(),
            metrics: self.metric.clone(),
            format: self.input_format,
            skip_bad: self.skip_bad.is_some(),
            skip_bad_share: self.skip_bad,
            compare,
            cost: self.cost,
            model: self.model,
            limits: self.limits.limits(),
        }
    }

    pub fn load(&self) -> anyhow::Result<seqpoint::RunLog> {
        self.check_key()?;
        let (path, _) = self.paths();
        let log = if seqpoint::runlog::packed::mentions_packed(&self.key) {
            // Keys derived from doc_lens come with notes to show (the fit made, a log's own
            // column read instead); such loads show no progress bar.
            let progress = seqpoint::runlog::LoadProgress::default();
            let (log, notes) =
                seqpoint::runlog::load_run_noted(&path, &self.load_options(), &progress)?;
            for note in notes {
                eprintln!("note: {note}");
            }
            log
        } else {
            progress::load_with_bar(&path, &self.load_options())?
        };
        refuse_all_zero_metrics(&log)?;
        // Unless the first reason given (the skipped rows' note) says it already.
        if let Some(line) = log
            .skipped
            .cut_line
            .filter(|&line| log.skipped.first_lines.first() != Some(&line))
        {
            eprintln!(
                "note: {}:{line}: the last line has no line end and was left out with \
                 --skip-bad: the log looks cut off mid-row (is the run still writing it?)",
                seqpoint::text::shown::shown_path(&log.source)
            );
        }
        if let Some(note) = seqpoint::output::table::iteration_note(&log) {
            eprintln!("note: {note}");
        }
        if let (Some(cost), [name, ..]) = (log.proxy, log.configs[0].measurement_like.as_slice()) {
            eprintln!(
                "note: {}: no time_ms or energy_j column, so a proxy cost ({cost}) stands in; \
                 '{name}' looks measured: pass --metric {name}",
                seqpoint::text::shown::shown_path(&log.source)
            );
        }
        Ok(log)
    }

    /// The rows `--skip-bad` left out, as a note on standard error: for outputs that do not
    /// say it themselves (every one but the selection table).
    pub fn note_skipped(log: &seqpoint::RunLog) {
        if let Some(note) = seqpoint::output::table::skipped_note(log) {
            eprintln!("note: {note}");
        }
    }

    /// One key column, or two for translation, each named once.
    fn check_key(&self) -> anyhow::Result<()> {
        if !self.key.is_empty() {
            seqpoint::options::key_columns(&self.key.join(","))?;
        }
        // The model's shape only counts FLOPs: with any other key it would be read and
        // silently do nothing, so the user could believe the key was costed by it.
        let flops = seqpoint::runlog::packed::FLOPS_KEY;
        if self.model.is_some()
            && !self
                .key
                .iter()
                .any(|k| k.trim().eq_ignore_ascii_case(flops))
        {
            return Err(MODEL
                .error(
                    "",
                    "the model's shape is used only to count a step's FLOPs for the key \
                     flops, which is not the key here"
                        .to_string(),
                )
                .instead(&KEY, flops)
                .into());
        }
        Ok(())
    }
}

/// A metric that is 0 in every iteration has nothing to bin or project: every error would
/// read 0 and every ratio infinite. Refused, naming the column, rather than reported as a
/// perfect selection.
fn refuse_all_zero_metrics(log: &seqpoint::RunLog) -> anyhow::Result<()> {
    if log.is_empty() {
        return Ok(());
    }
    if log.proxy.is_some() {
        // A proxy cost of the lengths that is 0 everywhere: every length is 0, which no
        // padded batch has; a wrong column, most likely.
        let all_zero = log.configs[0]
            .metrics
            .first()
            .is_some_and(|m| m.values.iter().all(|&v| v == 0.0));
        if all_zero {
            bail!(
                "{}: every iteration's {} is 0, so its cost of the lengths is 0 throughout: \
                 there is nothing to bin or project; expected the padded lengths (--key COL \
                 names their column)",
                seqpoint::text::shown::shown_path(&log.source),
                log.key_names
                    .iter()
                    .map(seqpoint::text::shown::shown_path)
                    .collect::<Vec<_>>()
                    .join(" and "),
            );
        }
        return Ok(());
    }
    for config in &log.configs {
        let names: Vec<&str> = config.metrics.iter().map(|m| m.name.as_str()).collect();
        for metric in &config.metrics {
            if metric.values.iter().all(|&v| v == 0.0) {
                let others: Vec<&str> = names
                    .iter()
                    .copied()
                    .filter(|n| *n != metric.name)
                    .collect();
                let choice = if others.is_empty() {
                    "log a metric that was measured, or leave the metric columns out for a proxy \
                     cost (--cost)"
                        .to_string()
                } else {
                    format!("choose another with --metric ({})", others.join(", "))
                };
                bail!(
                    "{}: metric '{}' is 0 in every iteration: there is nothing to bin or \
                     project; {choice}",
                    seqpoint::text::shown::shown_path(&config.source),
                    seqpoint::text::shown::shown_path(&metric.name),
                );
            }
        }
    }
    Ok(())
}

/// How SeqPoints are chosen. Every flag's name, value, help and range is the library's
/// (`options`), shared with the explorer's `:` commands.
#[derive(Debug, Clone, Args)]
pub struct SelectArgs {
    #[arg(long = METHOD.flag, help = METHOD.help, value_enum)]
    pub method: Option<Method>,
    #[arg(long = PICK.flag, help = PICK.help, value_enum)]
    pub pick: Option<Pick>,
    #[arg(long = BINS.flag, short = 'k', value_name = BINS.value_name, help = BINS.help)]
    pub bins: Option<usize>,
    #[arg(long = TARGET_ERROR.flag, value_name = TARGET_ERROR.value_name, help = TARGET_ERROR.help,
          default_value_t = DEFAULT_TARGET_PCT, value_parser = parse_percent)]
    pub target_error: f64,
    #[arg(long = TARGET_BY.flag, help = TARGET_BY.help, value_enum, default_value = "interval")]
    pub target_by: TargetRule,
    #[arg(long = MAX_BINS.flag, value_name = MAX_BINS.value_name, help = MAX_BINS.help,
          default_value_t = DEFAULT_MAX_BINS)]
    pub max_bins: usize,
    #[arg(long = WARMUP.flag, value_name = WARMUP.value_name, help = WARMUP.help, default_value_t = 0)]
    pub warmup: u64,
    #[arg(long = EXCLUDE.flag, value_name = EXCLUDE.value_name, help = EXCLUDE.help,
          value_parser = parse_iteration_range)]
    pub exclude: Vec<IterationRange>,
    #[arg(long = SEED.flag, value_name = SEED.value_name, help = SEED.help, default_value_t = 0)]
    pub seed: u64,
    #[arg(long = SAMPLES.flag, value_name = SAMPLES.value_name, help = SAMPLES.help)]
    pub samples: Option<u64>,
    #[arg(long = BUDGET.flag, value_name = BUDGET.value_name, help = BUDGET.help,
          conflicts_with_all = [SAMPLES.flag, PLAN.flag])]
    pub budget: Option<u64>,
    #[arg(long = PLAN.flag, help = PLAN.help, conflicts_with_all = [BINS.flag, SAMPLES.flag])]
    pub plan: bool,
    #[arg(long = STRATA.flag, value_name = STRATA.value_name, help = STRATA.help,
          default_value = "none", value_parser = parse_strata)]
    pub strata: Strata,
}

impl SelectArgs {
    /// What the flags ask `select` for: the options and the profiling plan (the rule is the
    /// library's, shared with the explorer).
    pub fn request(&self) -> anyhow::Result<SelectRequest> {
        Ok(SelectRequest::asked(
            self.options()?,
            self.plan_ask(),
            self.target_error,
        ))
    }

    /// The `--samples`, `--plan` and `--budget` flags as given.
    pub fn plan_ask(&self) -> PlanAsk {
        PlanAsk {
            samples: self.samples,
            plan: self.plan,
            budget: self.budget,
        }
    }

    /// The selection options, once the flags make sense.
    pub fn options(&self) -> anyhow::Result<SelectOptions> {
        self.check()?;
        Ok(self.unchecked_options())
    }

    fn unchecked_options(&self) -> SelectOptions {
        self.plan_ask().shape(SelectOptions {
            method: self.method,
            pick: self.pick,
            bins: match self.bins {
                Some(k) => BinCount::Fixed(k),
                None => BinCount::Target(self.target_error),
            },
            max_bins: self.max_bins,
            target_by: self.target_by,
            warmup: self.warmup,
            exclude: Exclusion::new(self.exclude.iter().copied()),
            seed: self.seed,
            strata: self.strata,
            error_curve: false,
            ..SelectOptions::default()
        })
    }

    /// Every value within its option's range, before the log is read (the target too when
    /// `--bins` makes it unused, as the explorer's `:target` always checks it).
    fn check(&self) -> anyhow::Result<()> {
        TARGET_ERROR.check_percent(self.target_error)?;
        if let Some(budget) = self.budget {
            BUDGET.check_count(budget)?;
        }
        let options = self.unchecked_options();
        seqpoint::select::check_values(&options)?;
        Ok(())
    }

    /// Say so when `--bins K` asked for more bins than the run has distinct keys, which is
    /// the most bins there can be.
    pub fn note_fewer_bins(&self, selection: &seqpoint::Selection) {
        if let Some(k) = self.bins {
            if let Some(note) = fewer_bins_note(k, selection.unique_keys, selection.bins()) {
                eprintln!("note: {note}");
            }
        }
    }
}

/// `--bins K` beyond the run's distinct keys: how many there can be and how many were made
/// (fewer than the keys is the binning's doing, not the keys': it is not said to follow).
fn fewer_bins_note(k: usize, unique_keys: usize, bins: usize) -> Option<String> {
    if k <= unique_keys {
        return None;
    }
    Some(if bins == unique_keys {
        format!("--bins {k}: the run has {unique_keys} distinct keys, so there are {bins} bins")
    } else {
        format!(
            "--bins {k}: the run has {unique_keys} distinct keys, so at most {unique_keys} bins; \
             the binning made {bins}"
        )
    })
}

/// Output format for tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Table,
    Json,
    Csv,
    /// For simulators: -o NAME writes NAME.simpoints, NAME.weights and NAME.json
    Simpoints,
}

#[cfg(test)]
mod tests {
    use super::*;
    use seqpoint::tui::command_line::{parse, Command as Typed};

    #[test]
    fn the_fewer_bins_note_says_so_only_when_it_follows() {
        assert_eq!(fewer_bins_note(10, 38, 10), None);
        assert_eq!(
            fewer_bins_note(50, 38, 38).unwrap(),
            "--bins 50: the run has 38 distinct keys, so there are 38 bins"
        );
        // 33 bins do not follow from 38 keys.
        assert_eq!(
            fewer_bins_note(50, 38, 33).unwrap(),
            "--bins 50: the run has 38 distinct keys, so at most 38 bins; the binning made 33"
        );
    }

    #[test]
    fn skip_bad_takes_an_optional_share_only_with_equals() {
        let share = |args: &[&str]| {
            let mut all = vec!["seqpoint", "select"];
            all.extend(args);
            match Cli::try_parse_from(all).map(|cli| cli.command) {
                Ok(Some(Command::Select(cmd))) => Ok((cmd.run.run.clone(), cmd.run.skip_bad)),
                Ok(_) => Err("another command".to_string()),
                Err(e) => Err(e.kind().to_string()),
            }
        };
        assert_eq!(share(&["r.csv"]), Ok((Some("r.csv".into()), None)));
        assert_eq!(
            share(&["--skip-bad", "r.csv"]),
            Ok((Some("r.csv".into()), Some(0.5)))
        );
        assert_eq!(
            share(&["r.csv", "--skip-bad=20%"]),
            Ok((Some("r.csv".into()), Some(0.2)))
        );
        assert_eq!(
            share(&["r.csv", "--skip-bad=100"]),
            Ok((Some("r.csv".into()), Some(1.0)))
        );
        assert!(share(&["r.csv", "--skip-bad=-1%"]).is_err());
        assert!(share(&["r.csv", "--skip-bad=x"]).is_err());
    }

    /// What `seqpoint select --FLAG VALUE` makes of a value: the options, or the error.
    fn flag_accepts(flag: &str, value: &str) -> bool {
        Cli::try_parse_from(["seqpoint", "select", flag, value])
            .map_err(|e| e.to_string())
            .and_then(|cli| match cli.command {
                Some(Command::Select(select)) => select
                    .select
                    .options()
                    .map(|_| ())
                    .map_err(|e| e.to_string()),
                _ => unreachable!("select parses as select"),
            })
            .is_ok()
    }

    #[test]
    fn the_explorer_takes_exactly_the_values_the_flags_take() {
        let values = [
            "1",
            "0.01",
            "0.00999",
            "0.001",
            "0",
            "-0",
            "-1",
            "100",
            "100.0001",
            "1e2",
            "1e-3",
            "0.5%",
            "%",
            "",
            " 1",
            "inf",
            "-inf",
            "NaN",
            "one",
            "1e400",
            "5e-324",
            "64",
            "65",
            "18446744073709551615",
            "18446744073709551616",
            "2.5",
        ];
        for (flag, command) in [
            ("--target-error", "target"),
            ("--bins", "k"),
            ("--samples", "samples"),
            ("--max-bins", "max-bins"),
            ("--budget", "budget"),
            ("--warmup", "warmup"),
            ("--seed", "seed"),
        ] {
            for value in values {
                // A value the shell passes as one word; the `:` line splits on spaces.
                if value.contains(' ') || value.is_empty() {
                    continue;
                }
                let typed = parse(&format!("{command} {value}"));
                assert_eq!(
                    flag_accepts(flag, value),
                    typed.is_ok(),
                    "{flag} {value} against :{command} {value}: {typed:?}"
                );
            }
        }
        // The same value reads the same on both.
        assert_eq!(parse("target 0.5%"), Ok(Typed::Target(0.5)));
        assert!(flag_accepts("--target-error", "0.5%"));
    }
}
