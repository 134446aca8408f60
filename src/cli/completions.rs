//! `seqpoint completions SHELL` and `seqpoint man`: shell completions and a man page,
//! generated from the same clap definitions that parse the arguments.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::output::{write_stdout, ReplaceArgs};
use super::Cli;
use seqpoint::output::atomic::{stage, Staged};
use seqpoint::output::shown::shown_path;

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
    /// With --force, pages that exist in DIR are overwritten; all pages are written or none
    #[command(flatten)]
    pub replace: ReplaceArgs,
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
    write_stdout(&completions(cmd.shell))
}

pub fn run_man(cmd: &ManCommand) -> anyhow::Result<()> {
    let pages = man_pages()?;
    match &cmd.dir {
        None => write_stdout(&pages[0].1),
        Some(dir) => {
            let shown = shown_path(dir);
            std::fs::create_dir_all(dir).with_context(|| format!("creating {shown}"))?;
            write_all_or_none(dir, &pages, cmd)?;
            eprintln!("wrote {} man pages to {shown}", pages.len());
            Ok(())
        }
    }
}

/// Every page is checked and written to a temporary file first; only then are they renamed
/// into place, so an existing page (without --force), a special file or a full disk leaves
/// the folder as it was.
fn write_all_or_none(
    dir: &std::path::Path,
    pages: &[(String, Vec<u8>)],
    cmd: &ManCommand,
) -> anyhow::Result<()> {
    let staged: Vec<(Staged, bool)> = pages
        .iter()
        .map(|(name, text)| {
            let path = dir.join(name);
            let existed = std::fs::symlink_metadata(&path).is_ok();
            stage(&path, text, cmd.replace.replace()).map(|s| (s, existed))
        })
        .collect::<Result<_, _>>()
        .map_err(|e| anyhow::anyhow!("{e}; no man page was written"))?;
    let mut created = Vec::new();
    for (page, existed) in staged {
        let target = page.target().to_path_buf();
        if let Err(e) = page.commit() {
            // A rename failed after others succeeded (rare: the checks and writes are done).
            // Take back the pages this run created; a replaced page cannot be restored.
            for path in &created {
                let _ = std::fs::remove_file(path);
            }
            anyhow::bail!("{e}; the pages this run had added were removed again");
        }
        if !existed {
            created.push(target);
        }
    }
    Ok(())
}
