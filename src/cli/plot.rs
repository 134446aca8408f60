//! `seqpoint plot`: draw the selection as a publication-ready SVG (histogram with bins and
//! SeqPoints, error-versus-K curve), written atomically or to standard output with `-o -`.

use std::path::PathBuf;

use clap::Args;

use super::output::{write_stdout, ReplaceArgs};
use super::{RunArgs, SelectArgs};
use seqpoint::output::protect::refuse_input_target;
use seqpoint::plot::{check_svg_name, figure_svg, write_figure, Figure};

use seqpoint::text::shown::{shell_path, shown_path};
use seqpoint::{run_selection, SelectOptions};

#[derive(Debug, Args)]
pub struct PlotCommand {
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub select: SelectArgs,
    /// The SVG file to write (atomically); `-` writes the SVG to standard output
    #[arg(short = 'o', long, value_name = "FIG.svg")]
    pub output: PathBuf,
    /// Which panels: the length histogram, the error-versus-K curve, or both side by side
    #[arg(long, value_enum, default_value = "both")]
    pub what: Figure,
    #[command(flatten)]
    pub replace: ReplaceArgs,
}

pub fn run(cmd: &PlotCommand) -> anyhow::Result<()> {
    let to_stdout = cmd.output.as_os_str() == "-";
    if !to_stdout {
        // Before the work: a .png name is refused at once, not after the selection.
        check_svg_name(&cmd.output)?;
        refuse_input_target(&cmd.output, &cmd.run.input_files())?;
    }
    let options = SelectOptions {
        error_curve: true,
        ..cmd.select.options()?
    };
    let log = cmd.run.load()?;
    RunArgs::note_skipped(&log);
    let selection = run_selection(&log, &options)?;
    cmd.select.note_fewer_bins(&selection);
    if to_stdout {
        return write_stdout(figure_svg(&log, &selection, cmd.what)?.as_bytes());
    }
    write_figure(
        &cmd.output,
        &log,
        &selection,
        cmd.what,
        cmd.replace.replace(),
    )?;
    let svg = shell_path(&cmd.output);
    let png = shell_path(cmd.output.with_extension("png"));
    eprintln!(
        "wrote {} ({} SeqPoints); as a PNG: rsvg-convert {svg} -o {png}",
        shown_path(&cmd.output),
        selection.bins(),
    );
    Ok(())
}
