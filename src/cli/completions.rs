//! `seqpoint completions SHELL` and `seqpoint man`: shell completions and a man page,
//! generated from the same clap definitions that parse the arguments.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::Cli;
use seqpoint::output::atomic::write_atomically;

#[derive(Debug, Args)]
pub struct CompletionsCommand {
    /// The shell to complete for
    #[arg(value_enum)]
    pub shell: CompletionShell,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
}

#[derive(Debug, Args)]
pub struct ManCommand {
    /// Write seqpoint.1 and one page per subcommand (seqpoint-select.1, ...) into DIR
    /// instead of printing the main page
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Overwrite pages that exist in DIR
    #[arg(long)]
    pub force: bool,
}

/// The completion script for `shell`, as text.
pub fn completions(shell: CompletionShell) -> Vec<u8> {
    let shell = match shell {
        CompletionShell::Bash => Shell::Bash,
        CompletionShell::Zsh => Shell::Zsh,
        CompletionShell::Fish => Shell::Fish,
    };
    let mut command = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command, "seqpoint", &mut out);
    out
}

/// Man pages as (file name, roff text): the main page first, then one per subcommand.
pub fn man_pages() -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let mut command = Cli::command().disable_help_subcommand(true);
    // Building names the subcommands `seqpoint-NAME`, which titles their pages.
    command.build();
    let mut pages = Vec::new();
    for page in std::iter::once(&command).chain(command.get_subcommands()) {
        if page.is_hide_set() {
            continue;
        }
        let man = clap_mangen::Man::new(page.clone());
        let mut text = Vec::new();
        man.render(&mut text).context("rendering a man page")?;
        pages.push((man.get_filename(), text));
    }
    Ok(pages)
}

pub fn run_completions(cmd: &CompletionsCommand) -> anyhow::Result<()> {
    std::io::stdout()
        .write_all(&completions(cmd.shell))
        .context("writing to standard output")
}

pub fn run_man(cmd: &ManCommand) -> anyhow::Result<()> {
    let pages = man_pages()?;
    match &cmd.dir {
        None => std::io::stdout()
            .write_all(&pages[0].1)
            .context("writing to standard output"),
        Some(dir) => {
            std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            for (name, text) in &pages {
                write_atomically(&dir.join(name), text, cmd.force)?;
            }
            eprintln!("wrote {} man pages to {}", pages.len(), dir.display());
            Ok(())
        }
    }
}
