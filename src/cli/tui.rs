//! `seqpoint tui [RUN]` (and `seqpoint [RUN]` on a terminal): the interactive explorer.
//! The run is loaded and the options checked first, so errors read as the CLI's.

use anyhow::bail;
use clap::Args;

use super::{RunArgs, SelectArgs};
use seqpoint::tui::terminal::{screen_support, ScreenSupport};
use seqpoint::tui::{self, Ended, Session};

#[derive(Debug, Args)]
pub struct TuiCommand {
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub select: SelectArgs,
}

pub fn run(cmd: &TuiCommand) -> anyhow::Result<()> {
    match screen_support() {
        ScreenSupport::Yes => {}
        ScreenSupport::NoTerminal => bail!(
            "seqpoint tui needs a terminal; `seqpoint select` prints the same selection as a table"
        ),
        ScreenSupport::NoCursorAddressing => bail!(
            "seqpoint tui needs a terminal that can move its cursor (TERM is {:?}); \
             `seqpoint select` prints the same selection as a table",
            std::env::var("TERM").unwrap_or_default()
        ),
    }
    open(&cmd.run, &cmd.select)
}

/// Load, check, then open the explorer; a signal that ended it ends the process the same way.
pub fn open(run: &RunArgs, select: &SelectArgs) -> anyhow::Result<()> {
    let options = select.options()?;
    let (path, _) = run.paths();
    let log = run.load()?;
    let session = Session::new(path, run.load_options(), log, options)?.asking(select.plan_ask());
    match tui::run(session)? {
        Ended::Quit => Ok(()),
        Ended::Signal(signal) => std::process::exit(128 + signal),
    }
}
