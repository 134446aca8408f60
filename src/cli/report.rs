//! `seqpoint report`: sanity checks before profiling, as a table or `seqpoint-report/1` JSON.

use std::path::PathBuf;

use clap::Args;

use super::output::{Destination, ReplaceArgs};
use super::RunArgs;
use seqpoint::output::json::report_document;
use seqpoint::report::{findings_table, run_checks, Check, Finding, ReportOptions, Verdict};
use seqpoint::select::{parse_iteration_range, Exclusion, IterationRange};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    Table,
    Json,
}

#[derive(Debug, Args)]
pub struct ReportCommand {
    #[command(flatten)]
    pub run: RunArgs,
    /// Output format (default: from OUT's extension: .json, else a table; a final .gz
    /// compresses the file)
    #[arg(long, value_enum)]
    pub format: Option<ReportFormat>,
    /// Weighted drift (percent) above which the drift check warns
    #[arg(long, value_name = "PCT", default_value_t = 1.0)]
    pub drift_threshold: f64,
    /// Contiguous phases compared for drift when the log has fewer than two epochs
    #[arg(long, value_name = "P", default_value_t = 4)]
    pub phases: usize,
    /// Leave iterations A-B (inclusive, the run's iteration numbers) out of every check, as
    /// `select --exclude` leaves them out (repeatable), e.g. a window another process slowed
    #[arg(long, value_name = "A-B", value_parser = parse_iteration_range)]
    pub exclude: Vec<IterationRange>,
    /// Write to this file (atomically) instead of standard output (`-`: standard output)
    #[arg(short = 'o', long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub replace: ReplaceArgs,
}

impl ReportCommand {
    fn options(&self) -> anyhow::Result<ReportOptions> {
        if !(self.drift_threshold >= 0.0 && self.drift_threshold.is_finite()) {
            anyhow::bail!(
                "--drift-threshold must be a non-negative percentage, got {}",
                self.drift_threshold
            );
        }
        if self.phases == 0 {
            anyhow::bail!("--phases must be at least 1");
        }
        Ok(ReportOptions {
            drift_max: self.drift_threshold / 100.0,
            phases: self.phases,
            exclude: Exclusion::new(self.exclude.iter().copied()),
            ..ReportOptions::default()
        })
    }
}

/// The report as text in the requested format.
pub fn render(cmd: &ReportCommand, format: ReportFormat) -> anyhow::Result<String> {
    let options = cmd.options()?;
    let log = cmd.run.load()?;
    RunArgs::note_skipped(&log);
    options.exclude.check(&log)?;
    let mut findings = run_checks(&log, &options);
    suggest_derived_key(cmd, &log, &mut findings);
    let doc = report_document(&log, &options.exclude, findings);
    Ok(match format {
        ReportFormat::Table => findings_table(&doc),
        ReportFormat::Json => serde_json::to_string_pretty(&doc)? + "\n",
    })
}

/// Where the key explains little of the cost and the log lists each step's documents (packed
/// batches: a padded length that is the same in every step), the derived key that explains
/// most, computed, joins the `explained` finding's advice and suggestion.
fn suggest_derived_key(cmd: &ReportCommand, log: &seqpoint::RunLog, findings: &mut [Finding]) {
    use seqpoint::runlog::packed::{derived_shares, mentions_packed};
    let Some(finding) = findings
        .iter_mut()
        .find(|f| f.check == Check::Explained && f.verdict == Verdict::Warn)
    else {
        return;
    };
    if mentions_packed(&log.key_names) {
        return;
    }
    let (path, _) = cmd.run.paths();
    if let Some(shares) = derived_shares(&path, &cmd.run.load_options()) {
        finding.advice.push_str(&format!("; {}", shares.advice()));
        finding.suggest = Some(format!("--key {}", shares.best_key().0));
    }
}

pub fn run(cmd: &ReportCommand) -> anyhow::Result<()> {
    let destination = Destination::of(cmd.output.as_deref()).not_onto(&cmd.run.input_files())?;
    let format = destination.format(
        cmd.format,
        ReportFormat::Table,
        &[("json", ReportFormat::Json)],
    )?;
    let text = render(cmd, format)?;
    destination.write(text.as_bytes(), cmd.replace.replace())
}
