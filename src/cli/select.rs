//! `seqpoint select`: choose SeqPoints, print or write them.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;

use super::{OutputFormat, RunArgs, SelectArgs};
use seqpoint::export::{select_document, seqpoints_csv, write_atomically};
use seqpoint::run_selection;
use seqpoint::text::{selection_table, skipped_note};

#[derive(Debug, Args)]
pub struct SelectCommand {
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub select: SelectArgs,
    /// Write to this file (atomically) instead of standard output
    #[arg(short = 'o', long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Output format (default: json for .json files, csv for .csv, else table)
    #[arg(long, value_enum)]
    pub format: Option<OutputFormat>,
    /// Overwrite OUT if it exists
    #[arg(long)]
    pub force: bool,
}

fn default_format(output: Option<&PathBuf>) -> OutputFormat {
    let ext = output
        .and_then(|p| p.extension())
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    match ext.as_deref() {
        Some("json") => OutputFormat::Json,
        Some("csv") => OutputFormat::Csv,
        _ if output.is_none() && !std::io::stdout().is_terminal() => OutputFormat::Table,
        _ => OutputFormat::Table,
    }
}

/// Render a selection in the requested format.
pub fn render(run: &RunArgs, select: &SelectArgs, format: OutputFormat) -> anyhow::Result<String> {
    let log = run.load()?;
    let selection = run_selection(&log, &select.options())?;
    if format != OutputFormat::Table {
        // The table reports skipped rows itself; JSON and CSV must stay clean for scripts.
        if let Some(note) = skipped_note(&log) {
            eprintln!("note: {note}");
        }
    }
    Ok(match format {
        OutputFormat::Table => selection_table(&log, &selection),
        OutputFormat::Json => {
            let doc = select_document(&log, &selection, None);
            serde_json::to_string_pretty(&doc)? + "\n"
        }
        OutputFormat::Csv => seqpoints_csv(&log, &selection),
    })
}

pub fn run(cmd: &SelectCommand) -> anyhow::Result<()> {
    let format = cmd
        .format
        .unwrap_or_else(|| default_format(cmd.output.as_ref()));
    let text = render(&cmd.run, &cmd.select, format)?;
    match &cmd.output {
        Some(path) => {
            write_atomically(path, text.as_bytes(), cmd.force)?;
            eprintln!("wrote {}", path.display());
        }
        None => {
            use std::io::Write;
            std::io::stdout()
                .write_all(text.as_bytes())
                .context("writing to standard output")?;
        }
    }
    Ok(())
}
