//! The loaded logs are never an output target: a path that names the same file as an input
//! (the same device and inode when it exists, or the same canonical path) is refused before
//! anything is written, whatever the user answers to an overwrite question. Standard input
//! (`-`) is an input too: when the shell redirected it from a regular file (`- < run.csv`),
//! that file is refused by its device and inode.

use std::path::{Path, PathBuf};

use crate::text::shown::shown_path;

/// An output path that is one of the loaded inputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputTarget {
    /// The output path as given.
    pub target: PathBuf,
    /// The input it names, as it was given when loaded.
    pub input: PathBuf,
}

impl std::fmt::Display for InputTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (target, input) = (shown_path(&self.target), shown_path(&self.input));
        if input == "-" {
            write!(
                f,
                "{target} is the file standard input reads (the loaded input log)"
            )?;
        } else if target == input {
            write!(f, "{target} is a loaded input log")?;
        } else {
            write!(f, "{target} is the loaded input log {input}")?;
        }
        write!(f, ": an input is never overwritten; choose another path")
    }
}

impl std::error::Error for InputTarget {}

/// `Err` when `target` is the same file as one of `inputs`: a named file, or for `-` the file
/// standard input reads (a pipe, a terminal or a bundled sample never match).
pub fn refuse_input_target<P: AsRef<Path>>(target: &Path, inputs: &[P]) -> Result<(), InputTarget> {
    for input in inputs {
        let input = input.as_ref();
        let same = if input.as_os_str() == "-" {
            is_standard_input(target)
        } else {
            same_file(target, input)
        };
        if same {
            return Err(InputTarget {
                target: target.to_path_buf(),
                input: input.to_path_buf(),
            });
        }
    }
    Ok(())
}

/// Whether `target` exists and is the regular file standard input was redirected from.
fn is_standard_input(target: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let Some(stdin) = standard_input_file() else {
            return false;
        };
        if let Ok(meta) = std::fs::metadata(target) {
            return meta.dev() == stdin.dev() && meta.ino() == stdin.ino();
        }
    }
    false
}

/// The metadata of standard input when it is a regular file (fstat on descriptor 0, which is
/// left open).
#[cfg(unix)]
pub fn standard_input_file() -> Option<std::fs::Metadata> {
    use std::os::fd::AsFd;
    let fd = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    let meta = std::fs::File::from(fd).metadata().ok()?;
    meta.is_file().then_some(meta)
}

/// The same file: the same device and inode (hard links, symlinks, `./` and `..` spellings),
/// or, when the target does not exist yet, the same canonical folder and name.
fn same_file(target: &Path, input: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(a), Ok(b)) = (std::fs::metadata(target), std::fs::metadata(input)) {
            return a.dev() == b.dev() && a.ino() == b.ino();
        }
    }
    match (canonical(target), canonical(input)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// The canonical path of a file that may not exist: its folder canonicalised, then its name.
fn canonical(path: &Path) -> Option<PathBuf> {
    if let Ok(full) = path.canonicalize() {
        return Some(full);
    }
    let name = path.file_name()?;
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.canonicalize().ok()?,
        _ => std::env::current_dir().ok()?,
    };
    Some(folder.join(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_file_by_any_spelling_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run.csv");
        std::fs::write(&run, "seq_len\n1\n").unwrap();
        let other = dir.path().join("other.csv");
        let inputs = [run.clone()];
        assert!(refuse_input_target(&run, &inputs).is_err());
        let dotted = dir.path().join(".").join("run.csv");
        assert!(refuse_input_target(&dotted, &inputs).is_err());
        let err = refuse_input_target(&dotted, &inputs).unwrap_err();
        assert!(err.to_string().contains("loaded input log"), "{err}");
        assert!(err.to_string().contains("run.csv"), "{err}");
        assert!(refuse_input_target(&other, &inputs).is_ok());
        #[cfg(unix)]
        {
            let link = dir.path().join("link.csv");
            std::os::unix::fs::symlink(&run, &link).unwrap();
            assert!(refuse_input_target(&link, &inputs).is_err());
            let hard = dir.path().join("hard.csv");
            std::fs::hard_link(&run, &hard).unwrap();
            assert!(refuse_input_target(&hard, &inputs).is_err());
        }
    }

    #[test]
    fn inputs_that_are_not_files_never_match() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("s.json");
        assert!(refuse_input_target(&target, &["-", "sample:speech_t1.csv"]).is_ok());
        let none: [&str; 0] = [];
        assert!(refuse_input_target(&target, &none).is_ok());
    }
}
