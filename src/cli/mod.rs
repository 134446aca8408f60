//! Command-line interface: argument definitions shared by every subcommand, and dispatch.
//! Each subcommand lives in its own file with a `run` entry point.

pub mod completions;
pub mod plot;
mod progress;
pub mod project;
pub mod report;
pub mod select;
pub mod tui;

use clap::{Args, Parser, Subcommand};

use seqpoint::binning::Method;
use seqpoint::pick::Pick;
use seqpoint::runlog::sample::{SAMPLE_COMPARE_NAME, SAMPLE_NAME};
use seqpoint::runlog::InputFormat;
use seqpoint::select::plan::PlanRule;
use seqpoint::select::{
    BinCount, SelectOptions, Strata, TargetRule, DEFAULT_MAX_BINS, DEFAULT_TARGET_PCT,
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

    pub fn load_options(&self) -> LoadOptions {
        let (_, compare) = self.paths();
        LoadOptions {
            key: self.key.clone(),
            metrics: self.metric.clone(),
            format: self.input_format,
            skip_bad: self.skip_bad,
            compare,
            cost: self.cost,
        }
    }

    pub fn load(&self) -> anyhow::Result<seqpoint::RunLog> {
        let (path, _) = self.paths();
        Ok(progress::load_with_bar(&path, &self.load_options())?)
    }
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
    /// Error target in percent: the smallest K that meets it is chosen
    #[arg(long, value_name = "PCT", default_value_t = DEFAULT_TARGET_PCT)]
    pub target_error: f64,
    /// What must meet the target: error and 95% interval, or the measured error alone
    #[arg(long, value_enum, default_value = "interval")]
    pub target_by: TargetRule,
    /// Largest K tried for the error target
    #[arg(long, default_value_t = DEFAULT_MAX_BINS)]
    pub max_bins: usize,
    /// The first N iterations are never chosen (they still count in totals)
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub warmup: u64,
    /// Seed for k-means (and any random draw)
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Profiled iterations per SeqPoint: the intervals assume M, and M > 1 lists the
    /// iterations to profile (the SeqPoint and seeded draws from its bin)
    #[arg(long, default_value_t = 1, value_name = "M")]
    pub samples: u64,
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
    /// The profiling plan asked for, if any.
    pub fn plan_rule(&self) -> Option<PlanRule> {
        if let Some(b) = self.budget {
            Some(PlanRule::Budget(b))
        } else if self.plan {
            Some(PlanRule::Target(self.target_error))
        } else {
            (self.samples > 1).then_some(PlanRule::Samples(self.samples))
        }
    }

    pub fn options(&self) -> SelectOptions {
        SelectOptions {
            method: self.method,
            pick: self.pick,
            bins: match self.bins {
                Some(k) => BinCount::Fixed(k),
                None => BinCount::Target(self.target_error),
            },
            max_bins: self.max_bins,
            target_by: self.target_by,
            warmup: self.warmup,
            seed: self.seed,
            samples: self.samples,
            strata: self.strata,
            error_curve: false,
        }
    }
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

/// Write a command's output to OUT (atomically, never over an existing file without
/// `--force`) and say where, or to standard output.
pub fn emit(text: &str, output: Option<&std::path::Path>, force: bool) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::io::Write;
    match output {
        Some(path) => {
            seqpoint::output::atomic::write_atomically(path, text.as_bytes(), force)?;
            eprintln!("wrote {}", path.display());
        }
        None => std::io::stdout()
            .write_all(text.as_bytes())
            .context("writing to standard output")?,
    }
    Ok(())
}
