//! `seqpoint project`: whole-run totals, speedups and intervals from the SeqPoints'
//! measurements on a new configuration.

use std::path::PathBuf;

use clap::Args;

use super::output::{Destination, ReplaceArgs};
use seqpoint::doc::ProjectionReport;
use seqpoint::options::{
    parse_percent, Surface, ALLOW_MISSING, RUN_EPOCHS, RUN_ITERATIONS, TARGET_ERROR,
};
use seqpoint::output::table::projection_table;
use seqpoint::project::document::{read_select_doc_within, ProjectOptions, RunLength};
use seqpoint::project::merge::{merge_measurements, top_up_document};
use seqpoint::project::project_measured;
use seqpoint::runlog::measured::{read_measured_noted, MeasuredNotes, MeasuredOptions};
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
    /// (the id), `iteration` or the key column(s); several rows per SeqPoint are samples.
    /// Several files (the first measurements, then each top-up) are projected together
    #[arg(value_name = "MEASURED", required = true, num_args = 1..)]
    pub measured: Vec<String>,
    /// The same iterations measured on the baseline configuration (repeatable: the first
    /// measurements, then each top-up), for SeqPoints selected from a lengths-only log: the
    /// baseline total, the new total and the speedup are then projected from the pairs, each
    /// with its interval. Rows need an `iteration` column; every iteration measured must be
    /// in both
    #[arg(long = "baseline", value_name = "MEASURED")]
    pub baseline: Vec<String>,
    /// Judge every projected figure (each metric's new total and speedup) against this 95%
    /// error target in percent (0.01 to 100), and list the fewest iterations not yet measured
    /// that are expected to meet it
    #[arg(long = TARGET_ERROR.flag, value_name = TARGET_ERROR.value_name,
          value_parser = parse_percent)]
    pub target_error: Option<f64>,
    /// With --target-error: write the iterations to measure next as a SeqPoints file whose
    /// plan lists only them (what `profile_seqpoints` measures); atomically, never over a
    /// file unless --force
    #[arg(long, value_name = "NEXT.json", requires = "target_error")]
    pub top_up: Option<PathBuf>,
    /// Metric column to project (repeatable); default: the SeqPoints file's metrics present
    #[arg(long, value_name = "COL")]
    pub metric: Vec<String>,
    /// Output format (default: from OUT's extension: .json, else a table; a final .gz
    /// compresses the file)
    #[arg(long, value_enum)]
    pub format: Option<ProjectFormat>,
    #[arg(long = ALLOW_MISSING.flag, help = ALLOW_MISSING.help)]
    pub allow_missing: bool,
    #[arg(long = RUN_EPOCHS.flag, value_name = RUN_EPOCHS.value_name, help = RUN_EPOCHS.help,
          conflicts_with = "run_iterations")]
    pub run_epochs: Option<f64>,
    #[arg(long = RUN_ITERATIONS.flag, value_name = RUN_ITERATIONS.value_name,
          help = RUN_ITERATIONS.help)]
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
    let mut inputs: Vec<&str> = vec![&cmd.seqpoints];
    inputs.extend(cmd.measured.iter().map(String::as_str));
    inputs.extend(cmd.baseline.iter().map(String::as_str));
    let destination = Destination::of(cmd.output.as_deref()).not_onto(&inputs)?;
    let top_up_destination = match &cmd.top_up {
        Some(path) => Some(Destination::of(Some(path)).not_onto(&inputs)?),
        None => None,
    };
    if let Some(t) = cmd.target_error {
        TARGET_ERROR
            .check_percent(t)
            .map_err(|e| anyhow::anyhow!(e.worded(Surface::CommandLine)))?;
    }
    let format = destination.format(
        cmd.format,
        ProjectFormat::Table,
        &[("json", ProjectFormat::Json)],
    )?;
    let stdin_files = cmd
        .measured
        .iter()
        .chain(&cmd.baseline)
        .filter(|m| m.as_str() == "-")
        .count()
        + usize::from(cmd.seqpoints == "-");
    if stdin_files > 1 {
        anyhow::bail!(
            "<stdin>: the SeqPoints file and the measurements are both standard input \
             ({stdin_files} times), which can be read only once; expected a file for all but one"
        );
    }
    let doc = read_select_doc_within(&cmd.seqpoints, &cmd.limits.limits())?;
    let mut notes: Vec<MeasuredNotes> = Vec::new();
    let mut read_all = |paths: &[String]| -> anyhow::Result<_> {
        let mut files = Vec::new();
        for path in paths {
            let options = MeasuredOptions {
                metrics: cmd.metric.clone(),
                format: cmd.input_format,
                limits: cmd.limits.limits(),
            };
            let (file, file_notes) = read_measured_noted(path, &doc, &options)?;
            files.push(file);
            notes.push(file_notes);
        }
        Ok(merge_measurements(files)?)
    };
    let mut measured = read_all(&cmd.measured)?;
    let mut baseline = if cmd.baseline.is_empty() {
        None
    } else {
        if cmd.allow_missing {
            anyhow::bail!(
                "--allow-missing cannot be used with --baseline: with no baseline total known, a \
                 SeqPoint not measured leaves its share of both totals unknown; measure every \
                 SeqPoint on both configurations"
            );
        }
        Some(read_all(&cmd.baseline)?)
    };
    let exclude = Exclusion::new(cmd.exclude.iter().copied());
    let mut dropped = exclude
        .drop_samples(&mut measured)
        .map_err(anyhow::Error::msg)?;
    if let Some(baseline) = &mut baseline {
        dropped += exclude.drop_samples(baseline).map_err(anyhow::Error::msg)?;
    }
    if !exclude.is_empty() {
        eprintln!(
            "note: --exclude {} left out {dropped} measured row(s)",
            exclude.texts().join(" --exclude ")
        );
    }
    let rows_used = measured.rows() + baseline.as_ref().map_or(0, |b| b.rows());
    let input = InputNotes::of(&notes, &exclude, rows_used);
    for line in &input.notes {
        eprintln!("note: {line}");
    }
    let run_length = match (cmd.run_epochs, cmd.run_iterations) {
        (Some(e), _) => RunLength::Epochs(e),
        (None, Some(n)) => RunLength::Iterations(n),
        (None, None) => RunLength::Logged,
    };
    // Standard input is named as in every message about it.
    let doc_name = if cmd.seqpoints == "-" {
        "<stdin>"
    } else {
        cmd.seqpoints.as_str()
    };
    let options = ProjectOptions {
        allow_missing: cmd.allow_missing,
        run_length,
        target_error_pct: cmd.target_error,
    };
    let mut report = project_measured(doc_name, &doc, baseline.as_ref(), &measured, &options)?;
    report.excluded = exclude.texts();
    // The input checks keep every figure finite; should one still not be, it is an error,
    // never `inf` in a table or `null` in JSON with exit status 0.
    if let Some(figure) = seqpoint::output::json::non_finite_figure(&report) {
        anyhow::bail!(
            "{}: the projection overflowed ({figure}); expected measurements of ordinary \
             magnitude: rescale the metric",
            cmd.measured
                .iter()
                .chain(&cmd.baseline)
                .map(seqpoint::text::shown::shown_path)
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if cmd.measured.len() > 1 {
        report.measured_files = cmd.measured.clone();
    }
    if cmd.baseline.len() > 1 {
        report.baseline_measured = Some(cmd.baseline.join(", "));
    }
    if let (Some(next), Some(target)) = (top_up_destination, &report.target) {
        let next_doc = top_up_document(&doc, &target.top_up, target.target_error_pct);
        let text = serde_json::to_string_pretty(&next_doc)? + "\n";
        next.write(text.as_bytes(), cmd.replace.replace())?;
    }
    let text = match format {
        ProjectFormat::Table => input.in_table(&projection_table(&report)),
        ProjectFormat::Json => {
            serde_json::to_string_pretty(&Written {
                report: &report,
                input: &input,
            })? + "\n"
        }
    };
    destination.write(text.as_bytes(), cmd.replace.replace())
}

/// What reading the measurement files left out, and whether their times were taken with the
/// profiler on: counted for the report's JSON, worded for the table and standard error.
#[derive(Debug, Default, serde::Serialize)]
struct InputNotes {
    /// Rows of iterations the SeqPoints file does not list (a full timed log's other
    /// iterations), left out, over every measurement file.
    #[serde(skip_serializing_if = "is_zero")]
    ignored_rows: usize,
    /// Measured rows used that were timed with the profiler on (`traced` 1).
    #[serde(skip_serializing_if = "is_zero")]
    traced_rows: usize,
    /// The same, worded as the table's notes.
    #[serde(rename = "input_notes", skip_serializing_if = "Vec::is_empty")]
    notes: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl InputNotes {
    /// The notes of every file read, `rows_used` rows being projected after `--exclude`.
    fn of(files: &[MeasuredNotes], exclude: &Exclusion, rows_used: usize) -> InputNotes {
        let mut input = InputNotes::default();
        for file in files.iter().filter(|f| f.ignored_rows > 0) {
            input.ignored_rows += file.ignored_rows;
            let first = file
                .first_ignored
                .map(|(line, it)| format!(" (the first: iteration {it}, line {line})"))
                .unwrap_or_default();
            input.notes.push(format!(
                "{}: left out {} row(s) of iterations the SeqPoints file does not list{first}; \
                 read the {} row(s) of listed iterations",
                seqpoint::text::shown::shown_path(&file.source),
                file.ignored_rows,
                file.rows
            ));
        }
        input.traced_rows = files
            .iter()
            .flat_map(|f| &f.traced)
            .filter(|it| it.is_none_or(|it| !exclude.contains(it)))
            .count();
        if input.traced_rows > 0 {
            input.notes.push(format!(
                "{} of the {rows_used} measured row(s) were timed with the profiler on (column \
                 'traced'): their times include the profiler's overhead, so the projection \
                 reads high by about that overhead (recorded steps often run a few percent \
                 slower); times of untraced runs of the same iterations (traced 0) project \
                 without it",
                input.traced_rows
            ));
        }
        input
    }

    /// The table with the notes after its first line (what was read).
    fn in_table(&self, table: &str) -> String {
        if self.notes.is_empty() {
            return table.to_string();
        }
        let (first, rest) = table.split_at(table.find('\n').map_or(table.len(), |at| at + 1));
        let mut out = first.to_string();
        for line in &self.notes {
            out.push_str(&format!("note: {line}\n"));
        }
        out.push_str(rest);
        out
    }
}

/// The report as written in JSON: the document, then what reading its inputs noted.
#[derive(serde::Serialize)]
struct Written<'a> {
    #[serde(flatten)]
    report: &'a ProjectionReport,
    #[serde(flatten)]
    input: &'a InputNotes,
}
