//! `seqpoint completions SHELL` and `seqpoint man`: shell completions and a man page,
//! generated from the same clap definitions that parse the arguments.

use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::output::{write_stdout, ReplaceArgs};
use super::Cli;
use seqpoint::output::atomic::write_all_or_none;
use seqpoint::text::shown::shown_path;

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
            if dir.exists() && !dir.is_dir() {
                anyhow::bail!(
                    "{shown}: is a file, not a folder; expected a folder to write the man pages \
                     in (it is made when missing)"
                );
            }
            // The folders made here, outermost first: removed again when no page is written.
            let made: Vec<PathBuf> = dir
                .ancestors()
                .take_while(|a| !a.as_os_str().is_empty() && !a.exists())
                .map(Path::to_path_buf)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            std::fs::create_dir_all(dir)
                .with_context(|| format!("{shown}: cannot make the folder"))?;
            let paths: Vec<PathBuf> = pages.iter().map(|(name, _)| dir.join(name)).collect();
            let files: Vec<(&Path, &[u8])> = paths
                .iter()
                .zip(&pages)
                .map(|(path, (_, text))| (path.as_path(), text.as_slice()))
                .collect();
            if let Err(e) = write_all_or_none(&files, cmd.replace.replace()) {
                for folder in made.iter().rev() {
                    // Only an empty folder is removed: nothing of anyone else's goes.
                    let _ = std::fs::remove_dir(folder);
                }
                anyhow::bail!("{e}; no man page was written");
            }
            eprintln!("wrote {} man pages to {shown}", pages.len());
            Ok(())
        }
    }
}
