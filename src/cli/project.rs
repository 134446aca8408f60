//! `seqpoint project`: whole-run totals, speedups and intervals from the SeqPoints'
//! measurements on a new configuration.

use std::path::PathBuf;

use clap::Args;

use super::output::{Destination, ReplaceArgs};
use seqpoint::output::table::projection_table;
use seqpoint::project::document::{
    project_measurements, read_select_doc, ProjectOptions, RunLength,
};
use seqpoint::project::measured::{read_measured, MeasuredOptions};
use seqpoint::runlog::InputFormat;
use seqpoint::select::{parse_iteration_range, Exclusion, IterationRange};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProjectFormat {
    Table,
    Json,
}

#[derive(Debug, Args)]
pub struct ProjectCommand {
    /// The SeqPoints file written by `seqpoint select -o seqpoints.json`
    #[arg(value_name = "SEQPOINTS.json")]
    pub seqpoints: String,
    /// Measurements of the profiled iterations on the new configuration: CSV, TSV or JSON
    /// Lines (optionally .gz, `-` for standard input), with a metric column and `seqpoint`
    /// (the id), `iteration` or the key column(s); several rows per SeqPoint are samples
    #[arg(value_name = "MEASURED")]
    pub measured: String,
    /// Metric column to project (repeatable); default: the SeqPoints file's metrics present
    #[arg(long, value_name = "COL")]
    pub metric: Vec<String>,
    /// Output format (default: from OUT's extension: .json, else a table; a final .gz
    /// compresses the file)
    #[arg(long, value_enum)]
    pub format: Option<ProjectFormat>,
    /// Project even when some SeqPoints were not measured, saying which and their share
    #[arg(long)]
    pub allow_missing: bool,
    /// The whole run has E epochs (the log covers its own epochs of them): scales the weights
    #[arg(long, value_name = "E", conflicts_with = "run_iterations")]
    pub run_epochs: Option<f64>,
    /// The whole run has N iterations: scales the weights
    #[arg(long, value_name = "N")]
    pub run_iterations: Option<u64>,
    /// Leave MEASURED's rows of iterations A-B out (inclusive; repeatable), e.g. measurements
    /// taken while another process slowed the machine; needs an `iteration` column
    #[arg(long, value_name = "A-B", value_parser = parse_iteration_range)]
    pub exclude: Vec<IterationRange>,
    /// MEASURED's format, overriding the file extension
    #[arg(long, value_enum)]
    pub input_format: Option<InputFormat>,
    /// Write to this file (atomically) instead of standard output (`-`: standard output)
    #[arg(short = 'o', long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub replace: ReplaceArgs,
    #[command(flatten)]
    pub limits: super::LimitArgs,
}

pub fn run(cmd: &ProjectCommand) -> anyhow::Result<()> {
    // A name the format cannot be told from is refused before any work.
    let destination =
        Destination::of(cmd.output.as_deref()).not_onto(&[&cmd.seqpoints, &cmd.measured])?;
    let format = destination.format(
        cmd.format,
        ProjectFormat::Table,
        &[("json", ProjectFormat::Json)],
    )?;
    let doc = read_select_doc(&cmd.seqpoints)?;
    let mut measured = read_measured(
        &cmd.measured,
        &doc,
        &MeasuredOptions {
            metrics: cmd.metric.clone(),
            format: cmd.input_format,
            limits: cmd.limits.limits(),
        },
    )?;
    let exclude = Exclusion::new(cmd.exclude.iter().copied());
    let dropped = exclude
        .drop_samples(&mut measured)
        .map_err(anyhow::Error::msg)?;
    if !exclude.is_empty() {
        eprintln!(
            "note: --exclude {} left out {dropped} measured row(s)",
            exclude.texts().join(" --exclude ")
        );
    }
    let run_length = match (cmd.run_epochs, cmd.run_iterations) {
        (Some(e), _) => RunLength::Epochs(e),
        (None, Some(n)) => RunLength::Iterations(n),
        (None, None) => RunLength::Logged,
    };
    let mut report = project_measurements(
        &cmd.seqpoints,
        &doc,
        &measured,
        &ProjectOptions {
            allow_missing: cmd.allow_missing,
            run_length,
        },
    )?;
    report.excluded = exclude.texts();
    let text = match format {
        ProjectFormat::Table => projection_table(&report),
        ProjectFormat::Json => serde_json::to_string_pretty(&report)? + "\n",
    };
    destination.write(text.as_bytes(), cmd.replace.replace())
}
