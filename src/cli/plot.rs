//! `seqpoint plot`: draw the selection as a publication-ready SVG (histogram with bins and
//! SeqPoints, error-versus-K curve), written atomically.

use std::path::PathBuf;

use clap::Args;

use super::{RunArgs, SelectArgs};
use seqpoint::plot::{write_figure, Figure};
use seqpoint::{run_selection, SelectOptions};

#[derive(Debug, Args)]
pub struct PlotCommand {
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub select: SelectArgs,
    /// The SVG file to write (atomically)
    #[arg(short = 'o', long, value_name = "FIG.svg")]
    pub output: PathBuf,
    /// Which panels: the length histogram, the error-versus-K curve, or both side by side
    #[arg(long, value_enum, default_value = "both")]
    pub what: Figure,
    /// Overwrite FIG.svg if it exists
    #[arg(long)]
    pub force: bool,
}

pub fn run(cmd: &PlotCommand) -> anyhow::Result<()> {
    let log = cmd.run.load()?;
    let options = SelectOptions {
        error_curve: true,
        ..cmd.select.options()
    };
    let selection = run_selection(&log, &options)?;
    write_figure(&cmd.output, &log, &selection, cmd.what, cmd.force)?;
    eprintln!(
        "wrote {} ({} SeqPoints); as a PNG: rsvg-convert {} -o {}",
        cmd.output.display(),
        selection.bins(),
        cmd.output.display(),
        cmd.output.with_extension("png").display()
    );
    Ok(())
}
