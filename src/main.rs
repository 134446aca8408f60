//! The `seqpoint` binary: parse arguments, dispatch, map errors to exit codes.

mod cli;

use std::process::ExitCode;

use clap::Parser;
use cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Some(Command::Select(cmd)) => cli::select::run(cmd),
        Some(Command::Project(cmd)) => cli::project::run(cmd),
        Some(Command::Plot(cmd)) => cli::plot::run(cmd),
        Some(Command::Completions(cmd)) => cli::completions::run_completions(cmd),
        Some(Command::Man(cmd)) => cli::completions::run_man(cmd),
        Some(Command::Report(cmd)) => cli::report::run(cmd),
        Some(Command::Tui(cmd)) => cli::tui::run(cmd),
        None => explore(&cli),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// `seqpoint [RUN]`: the explorer on a terminal that can draw it (keys from `/dev/tty` when
/// the log comes through a pipe), the selection table otherwise (TERM=dumb, redirected).
fn explore(cli: &Cli) -> anyhow::Result<()> {
    use seqpoint::tui::terminal::{screen_support, ScreenSupport};
    if screen_support() == ScreenSupport::Yes {
        return cli::tui::open(&cli.run, &cli.select);
    }
    let text = cli::select::render(&cli.run, &cli.select, cli::OutputFormat::Table)?;
    print!("{text}");
    Ok(())
}
