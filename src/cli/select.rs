//! `seqpoint select`: choose SeqPoints, print or write them.

use std::io::IsTerminal;
use std::path::PathBuf;

use clap::Args;

use super::{OutputFormat, RunArgs, SelectArgs};
use seqpoint::output::simpoints::write_simpoint_set;
use seqpoint::output::table::{baselines_table, plan_table};
use seqpoint::output::table::{selection_table, skipped_note};
use seqpoint::output::{csv::select_csv, json::select_json};
use seqpoint::project::baselines::{Baselines, RANDOM_DRAWS};
use seqpoint::select::plan::{cheapest_plan, plan_selection, PlanRule};

#[derive(Debug, Args)]
pub struct SelectCommand {
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub select: SelectArgs,
    /// Write to this file (atomically) instead of standard output
    #[arg(short = 'o', long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Output format (default: json for .json files, csv for .csv, simpoints for .simpoints, else table)
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
        Some("simpoints") => OutputFormat::Simpoints,
        _ if output.is_none() && !std::io::stdout().is_terminal() => OutputFormat::Table,
        _ => OutputFormat::Table,
    }
}

/// Render a selection (with its profiling plan and the naive baselines beside it).
pub fn render(run: &RunArgs, select: &SelectArgs, format: OutputFormat) -> anyhow::Result<String> {
    let log = run.load()?;
    let options = select.options();
    let (selection, plan) = match select.plan_rule() {
        Some(PlanRule::Target(target)) => {
            let (selection, plan) = cheapest_plan(&log, &options, target)?;
            (selection, Some(plan))
        }
        Some(rule) => {
            let selection = super::progress::select_with_bar(&log, &options)?;
            let plan = plan_selection(&log, &selection, rule)?;
            (selection, Some(plan))
        }
        None => (super::progress::select_with_bar(&log, &options)?, None),
    };
    let profiled = plan
        .as_ref()
        .map_or(selection.bins() as u64, |p| p.iterations());
    if format != OutputFormat::Table {
        // The table reports skipped rows itself; JSON and CSV must stay clean for scripts.
        if let Some(note) = skipped_note(&log) {
            eprintln!("note: {note}");
        }
    }
    let baselines = Baselines::new(&log);
    Ok(match format {
        OutputFormat::Table => {
            let baselines = baselines.all(profiled as usize, options.warmup, options.seed);
            let mut text = selection_table(&log, &selection);
            if let Some(plan) = &plan {
                text.push_str(&plan_table(&log, &selection, plan));
            }
            let projection = plan
                .as_ref()
                .map_or(&selection.projection, |p| &p.projection);
            text.push_str(&baselines_table(
                projection,
                profiled,
                &baselines,
                RANDOM_DRAWS,
            ));
            text
        }
        OutputFormat::Json | OutputFormat::Simpoints => {
            select_json(&log, &selection, plan.as_ref(), None, &baselines)
        }
        OutputFormat::Csv => select_csv(&log, &selection, plan.as_ref()),
    })
}

pub fn run(cmd: &SelectCommand) -> anyhow::Result<()> {
    let format = cmd
        .format
        .unwrap_or_else(|| default_format(cmd.output.as_ref()));
    if format == OutputFormat::Simpoints && cmd.output.is_none() {
        anyhow::bail!(
            "--format simpoints writes NAME.simpoints, NAME.weights and NAME.json: pass -o NAME"
        );
    }
    let text = render(&cmd.run, &cmd.select, format)?;
    match (format, cmd.output.as_deref()) {
        (OutputFormat::Simpoints, Some(name)) => write_simpoints(name, &text, cmd.force),
        _ => super::emit(&text, cmd.output.as_deref(), cmd.force),
    }
}

/// The SimPoint set, and a note when the plan profiles more than the SeqPoints themselves.
fn write_simpoints(name: &std::path::Path, json: &str, force: bool) -> anyhow::Result<()> {
    let paths = write_simpoint_set(name, json, force)?;
    for path in [&paths.simpoints, &paths.weights, &paths.json] {
        eprintln!("wrote {}", path.display());
    }
    let doc: seqpoint::output::doc::SelectDoc = serde_json::from_str(json)?;
    if let Some(plan) = doc
        .plan
        .filter(|p| p.iterations > doc.seqpoints.len() as u64)
    {
        eprintln!(
            "note: {} lists each SeqPoint's own iteration; the plan's {} iterations in all are in {}",
            paths.simpoints.display(),
            plan.iterations,
            paths.json.display()
        );
    }
    Ok(())
}
