//! The `seqpoint` binary: parse arguments, dispatch, map errors to exit codes.

mod cli;

use std::process::ExitCode;

use clap::Parser;
use cli::{Cli, Command};
use std::io::{IsTerminal, Write};

fn main() -> ExitCode {
    // Rust ignores SIGPIPE, so a closed pipe (`seqpoint select | head -c 10`) would surface as
    // an error: restore the default, so the process ends quietly as other tools do.
    // SAFETY: setting a signal's disposition to its default before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_exit(e),
    };
    let writes_files = matches!(
        &cli.command,
        Some(
            Command::Select(_)
                | Command::Project(_)
                | Command::Plot(_)
                | Command::Man(_)
                | Command::Report(_)
        )
    );
    if writes_files {
        if let Err(e) = cli::signals::remove_temporaries_on_signals() {
            eprintln!("error: {e:#}");
            return ExitCode::FAILURE;
        }
    }
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
    // A signal that arrived while the command ran ends the process by that signal, whether
    // the command finished first or gave up its write because of it.
    if let Some(signal) = cli::signals::received() {
        cli::signals::end_by(signal);
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // The last guard against terminal injection: whatever a message quotes, no escape
            // sequence reaches the terminal raw.
            let message = seqpoint::text::shown::terminal_text(&format!("{e:#}"));
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

/// A usage error, or `--help`/`--version`: printed as clap prints them, except that help or a
/// version that cannot be written (`--help > /dev/full`) is an error, not exit status 0.
fn usage_exit(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    let to_stdout = matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion);
    if !to_stdout || std::io::stdout().is_terminal() {
        e.exit();
    }
    let text = e.render().to_string();
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: cannot write to standard output: {err}");
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
    let text = cli::select::render(&cli.run, &cli.select, cli::OutputFormat::Table)?.text();
    print!("{text}");
    Ok(())
}
