//! `seqpoint select`: choose SeqPoints, print or write them.

use std::path::PathBuf;

use clap::Args;

use super::output::{Destination, ReplaceArgs};
use super::{OutputFormat, RunArgs, SelectArgs};
use seqpoint::doc::SelectDoc;
use seqpoint::output::atomic::Replace;
use seqpoint::output::csv::select_csv;
use seqpoint::output::json::{document_text, select_file_document};
use seqpoint::output::protect::refuse_input_target;
use seqpoint::output::simpoints::{write_simpoint_set, SimPointPaths};
use seqpoint::output::table::selection_table_planned;
use seqpoint::output::table::{baselines_table, plan_table};
use seqpoint::select::naive::{Baselines, RANDOM_DRAWS};
use seqpoint::text::shown::shown_path;

#[derive(Debug, Args)]
pub struct SelectCommand {
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub select: SelectArgs,
    /// Write to this file (atomically) instead of standard output (`-`: standard output)
    #[arg(short = 'o', long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Output format (default: from OUT's extension: .json, .csv, .simpoints, else a table; a
    /// final .gz compresses the file)
    #[arg(long, value_enum)]
    pub format: Option<OutputFormat>,
    #[command(flatten)]
    pub replace: ReplaceArgs,
}

/// A selection made ready for the writer of its format: the table's text, or the `seqpoint/1`
/// document, made once, that the JSON, CSV and SimPoint writers take as it is.
pub enum Rendered {
    Table(String),
    Json(Box<SelectDoc>),
    Csv(Box<SelectDoc>),
    /// The three files of a SimPoint set, written by `write_simpoints`.
    Simpoints(Box<SelectDoc>),
}

impl Rendered {
    /// The text of the output (a SimPoint set's is its JSON file).
    pub fn text(&self) -> String {
        match self {
            Rendered::Table(text) => text.clone(),
            Rendered::Json(doc) | Rendered::Simpoints(doc) => document_text(doc.as_ref()),
            Rendered::Csv(doc) => select_csv(doc),
        }
    }
}

/// Render a selection (with its profiling plan and the naive baselines beside it).
pub fn render(
    run: &RunArgs,
    select: &SelectArgs,
    format: OutputFormat,
) -> anyhow::Result<Rendered> {
    let request = select.request()?;
    let options = &request.options;
    let log = run.load()?;
    let answer = super::progress::answer_with_bar(&log, &request)?;
    let profiled = answer.iterations();
    let (selection, plan) = (answer.selection, answer.plan);
    select.note_fewer_bins(&selection);
    if format != OutputFormat::Table {
        // The table reports skipped rows itself; JSON and CSV must stay clean for scripts.
        RunArgs::note_skipped(&log);
    }
    let baselines = Baselines::beside(&log, &selection);
    Ok(match format {
        OutputFormat::Table => Rendered::Table({
            let baselines = baselines.all(profiled as usize, options.warmup, options.seed);
            let mut text = selection_table_planned(&log, &selection, plan.as_ref());
            // One sample per SeqPoint: the SeqPoints above are the list.
            if let Some(plan) = plan
                .as_ref()
                .filter(|p| p.bins.iter().any(|b| b.samples() > 1))
            {
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
        }),
        OutputFormat::Json | OutputFormat::Simpoints => {
            let doc = Box::new(select_file_document(
                &log,
                &selection,
                plan.as_ref(),
                None,
                Some(&baselines),
            ));
            if format == OutputFormat::Json {
                Rendered::Json(doc)
            } else {
                Rendered::Simpoints(doc)
            }
        }
        // The CSV lists hold no baselines: they are not drawn for it.
        OutputFormat::Csv => Rendered::Csv(Box::new(select_file_document(
            &log,
            &selection,
            plan.as_ref(),
            None,
            None,
        ))),
    })
}

pub fn run(cmd: &SelectCommand) -> anyhow::Result<()> {
    let destination = Destination::of(cmd.output.as_deref()).not_onto(&cmd.run.input_files())?;
    let format = destination.format(
        cmd.format,
        OutputFormat::Table,
        &[
            ("json", OutputFormat::Json),
            ("csv", OutputFormat::Csv),
            ("simpoints", OutputFormat::Simpoints),
        ],
    )?;
    if format == OutputFormat::Simpoints {
        let Some(name) = cmd
            .output
            .as_deref()
            .filter(|_| destination != Destination::Stdout)
        else {
            anyhow::bail!(
                "--format simpoints writes NAME.simpoints, NAME.weights and NAME.json: pass -o NAME"
            );
        };
        let set = SimPointPaths::of(name);
        for path in [&set.simpoints, &set.weights, &set.json] {
            refuse_input_target(path, &cmd.run.input_files())?;
        }
        return match render(&cmd.run, &cmd.select, format)? {
            Rendered::Simpoints(doc) => write_simpoints(name, &doc, cmd.replace.replace()),
            _ => unreachable!("the simpoints format renders a SimPoint set"),
        };
    }
    let text = render(&cmd.run, &cmd.select, format)?.text();
    destination.write(text.as_bytes(), cmd.replace.replace())
}

/// The SimPoint set, and a note when the plan profiles more than the SeqPoints themselves.
fn write_simpoints(
    name: &std::path::Path,
    doc: &SelectDoc,
    replace: Replace,
) -> anyhow::Result<()> {
    let paths = write_simpoint_set(name, doc, replace)?;
    for path in [&paths.simpoints, &paths.weights, &paths.json] {
        eprintln!("wrote {}", shown_path(path));
    }
    if let Some(plan) = doc
        .plan
        .as_ref()
        .filter(|p| p.iterations > doc.seqpoints.len() as u64)
    {
        eprintln!(
            "note: {} lists each SeqPoint's own iteration; the plan's {} iterations in all are in {}",
            shown_path(&paths.simpoints),
            plan.iterations,
            shown_path(&paths.json)
        );
    }
    Ok(())
}
