//! Command-line interface: argument definitions shared by every subcommand, and dispatch.
//! Each subcommand lives in its own file with a `run` entry point.

pub mod completions;
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
use seqpoint::pick::Pick;
use seqpoint::runlog::sample::{SAMPLE_COMPARE_NAME, SAMPLE_NAME};
use seqpoint::runlog::{InputFormat, InputLimits};
use seqpoint::select::plan::{PlanAsk, PlanRule};
use seqpoint::select::{
    parse_iteration_range, BinCount, Exclusion, IterationRange, SelectOptions, Strata, TargetRule,
    DEFAULT_MAX_BINS, DEFAULT_TARGET_PCT,
};
use seqpoint::{Cost, LoadOptions};

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
    /// A second configuration's log over the same iterations (aligned by iteration)
    #[arg(long, value_name = "FILE")]
    pub compare: Option<String>,
    /// Key column(s): one length, or two for translation (src_len,tgt_len)
    #[arg(long, value_delimiter = ',', value_name = "COL[,COL2]")]
    pub key: Vec<String>,
    /// Metric column (repeatable); default time_ms and energy_j where present
    #[arg(long, value_name = "COL")]
    pub metric: Vec<String>,
    /// Input format, overriding the file extension
    #[arg(long, value_enum)]
    pub input_format: Option<InputFormat>,
    /// Skip bad rows (and report them) instead of stopping at the first
    #[arg(long)]
    pub skip_bad: bool,
    /// Proxy cost when the log has no metric: linear, quadratic or power:P
    #[arg(long, default_value = "linear", value_parser = parse_cost)]
    pub cost: Cost,
    #[command(flatten)]
    pub limits: LimitArgs,
}

/// What reading one input may cost; the defaults are far above any real log.
#[derive(Debug, Clone, Args)]
pub struct LimitArgs {
    /// Longest line (or quoted field) an input may have, e.g. 4M
    #[arg(long, value_name = "SIZE", default_value = "1M", value_parser = parse_size)]
    pub max_line: u64,
    /// Most bytes an input may hold once decompressed, e.g. 256G
    #[arg(long, value_name = "SIZE", default_value = "64G", value_parser = parse_size)]
    pub max_input: u64,
    /// Most memory a load may need (default: what the machine has available), e.g. 16G
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
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

fn parse_cost(s: &str) -> Result<Cost, String> {
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
            skip_bad: self.skip_bad,
            compare,
            cost: self.cost,
            limits: self.limits.limits(),
        }
    }

    pub fn load(&self) -> anyhow::Result<seqpoint::RunLog> {
        self.check_key()?;
        let (path, _) = self.paths();
        let log = progress::load_with_bar(&path, &self.load_options())?;
        refuse_all_zero_metrics(&log)?;
        if let (Some(cost), [name, ..]) = (log.proxy, log.configs[0].measurement_like.as_slice()) {
            eprintln!(
                "note: {}: no time_ms or energy_j column, so a proxy cost ({cost}) stands in; \
                 '{name}' looks measured: pass --metric {name}",
                seqpoint::output::shown::shown_path(&log.source)
            );
        }
        Ok(log)
    }

    /// One key column, or two for translation, each named once.
    fn check_key(&self) -> anyhow::Result<()> {
        if self.key.len() > 2 {
            bail!(
                "--key {}: one or two key columns (a length, or src_len,tgt_len), not {}",
                self.key.join(","),
                self.key.len()
            );
        }
        if let [a, b] = self.key.as_slice() {
            if a == b {
                bail!("--key {a},{b}: names the same column twice; give it once, or two different columns");
            }
        }
        if self.key.iter().any(String::is_empty) {
            bail!("--key: an empty column name; expected --key COL or --key COL1,COL2");
        }
        Ok(())
    }
}

/// A metric that is 0 in every iteration has nothing to bin or project: every error would
/// read 0 and every ratio infinite. Refused, naming the column, rather than reported as a
/// perfect selection.
fn refuse_all_zero_metrics(log: &seqpoint::RunLog) -> anyhow::Result<()> {
    if log.proxy.is_some() || log.is_empty() {
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
                    seqpoint::output::shown::shown_path(&config.source),
                    seqpoint::output::shown::shown_path(&metric.name),
                );
            }
        }
    }
    Ok(())
}

/// How SeqPoints are chosen.
#[derive(Debug, Clone, Args)]
pub struct SelectArgs {
    /// Binning method (default: optimal for one length, kmeans for two)
    #[arg(long, value_enum)]
    pub method: Option<Method>,
    /// Representative per bin (default: nearest-mean with a metric, median without)
    #[arg(long, value_enum)]
    pub pick: Option<Pick>,
    /// Number of bins (overrides --target-error)
    #[arg(long, short = 'k', value_name = "K")]
    pub bins: Option<usize>,
    /// Error target in percent (0.01 to 100): the smallest K that meets it is chosen
    #[arg(long, value_name = "PCT", default_value_t = DEFAULT_TARGET_PCT)]
    pub target_error: f64,
    /// What must meet the target: error and 95% interval, or the measured error alone
    #[arg(long, value_enum, default_value = "interval")]
    pub target_by: TargetRule,
    /// Largest K tried for the error target (at least 1)
    #[arg(long, default_value_t = DEFAULT_MAX_BINS)]
    pub max_bins: usize,
    /// The first N iterations are never chosen (they still count in totals)
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub warmup: u64,
    /// Leave iterations A-B (inclusive, the run's iteration numbers) out: in no total, never
    /// picked; repeatable, overlapping ranges merge (e.g. a window slowed by another process)
    #[arg(long, value_name = "A-B", value_parser = parse_iteration_range)]
    pub exclude: Vec<IterationRange>,
    /// Seed for k-means (and any random draw)
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Profiled iterations per SeqPoint: the intervals assume M, and M > 1 lists the
    /// iterations to profile (the SeqPoint, its alternates, then seeded draws from its bin).
    /// Default with --target-error: the least profiling that meets it (one per SeqPoint
    /// where that suffices, else a plan); --samples 1 forces one per SeqPoint
    #[arg(long, value_name = "M")]
    pub samples: Option<u64>,
    /// Profile B iterations in all, spread over the bins by Neyman allocation (m_b ~ w_b s_b)
    #[arg(long, value_name = "B", conflicts_with_all = ["samples", "plan"])]
    pub budget: Option<u64>,
    /// With --target-error: the cheapest plan (bins and samples per bin) whose 95% interval
    /// meets the target
    #[arg(long, conflicts_with_all = ["bins", "samples"])]
    pub plan: bool,
    /// Bin training phases separately: none, epoch, phases:P
    #[arg(long, default_value = "none", value_parser = parse_strata)]
    pub strata: Strata,
}

impl SelectArgs {
    /// The profiling plan asked for, if any (the rule is the library's, shared with the
    /// explorer).
    pub fn plan_rule(&self) -> Option<PlanRule> {
        self.plan_ask()
            .rule(self.bins, self.target_error, self.target_by)
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
        Ok(SelectOptions {
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
            samples: self.samples.unwrap_or(1),
            strata: self.strata,
            error_curve: false,
        })
    }

    fn check(&self) -> anyhow::Result<()> {
        let t = self.target_error;
        if !(t.is_finite() && (MIN_TARGET_PCT..=100.0).contains(&t)) {
            // As typed, near enough: 1e-320 rather than 0.000...0001.
            let t = if t != 0.0 && !(1e-4..1e6).contains(&t.abs()) {
                format!("{t:e}")
            } else {
                t.to_string()
            };
            bail!(
                "--target-error {t}: expected a percentage from {MIN_TARGET_PCT} to 100; a \
                 target finer than {MIN_TARGET_PCT}% is below the run-to-run noise of any \
                 measured time, and no K or number of samples would be computed to meet it"
            );
        }
        if self.max_bins == 0 {
            bail!("--max-bins 0: expected at least 1 (the largest K the error target may use)");
        }
        Ok(())
    }

    /// Say so when `--bins K` asked for more bins than the run has distinct keys, which is
    /// the most bins there can be.
    pub fn note_fewer_bins(&self, selection: &seqpoint::Selection) {
        if let Some(k) = self.bins {
            if k > selection.unique_keys {
                eprintln!(
                    "note: --bins {k}: the run has {} distinct keys, so there are {} bins",
                    selection.unique_keys,
                    selection.bins()
                );
            }
        }
    }
}

/// The finest `--target-error` accepted, in percent.
pub const MIN_TARGET_PCT: f64 = 0.01;

/// Output format for tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Table,
    Json,
    Csv,
    /// For simulators: -o NAME writes NAME.simpoints, NAME.weights and NAME.json
    Simpoints,
}
