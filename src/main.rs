//! The `seqpoint` binary: parse arguments, dispatch, map errors to exit codes.

mod cli;

use std::io::IsTerminal;
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

/// `seqpoint [RUN]`: the explorer on a terminal, the selection table otherwise.
fn explore(cli: &Cli) -> anyhow::Result<()> {
    if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() {
        // The interactive explorer is not built yet; fall through to the table.
    }
    let text = cli::select::render(&cli.run, &cli.select, cli::OutputFormat::Table)?;
    print!("{text}");
    Ok(())
}
