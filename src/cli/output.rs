//! Where a command's output goes: standard output (no `-o`, or `-o -`), or a file written
//! atomically whose format follows its extension (`.json`, `.csv`, `.txt` or none for a
//! table; a final `.gz` compresses it), and what `--force` may replace there.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::Args;

use seqpoint::options::{FORCE, REPLACE_READ_ONLY};
use seqpoint::output::atomic::Replace;
use seqpoint::output::gzipped;
use seqpoint::output::protect::refuse_input_target;
use seqpoint::output::stream::{write_file_or_stream, Written};
use seqpoint::text::shown::shown_path;

/// What an existing output file may be replaced with.
#[derive(Debug, Clone, Copy, Args)]
pub struct ReplaceArgs {
    #[arg(long = FORCE.flag, help = FORCE.help)]
    pub force: bool,
    #[arg(long = REPLACE_READ_ONLY.flag, help = REPLACE_READ_ONLY.help, requires = "force")]
    pub replace_read_only: bool,
}

impl ReplaceArgs {
    pub fn replace(&self) -> Replace {
        match (self.force, self.replace_read_only) {
            (false, _) => Replace::Never,
            (true, false) => Replace::Writable,
            (true, true) => Replace::ReadOnlyToo,
        }
    }
}

/// Where a command writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    Stdout,
    File {
        path: PathBuf,
        /// The name ends in `.gz`: the bytes are gzip-compressed.
        gzip: bool,
        /// The extension that names the format (`csv` in `x.csv.gz`), lower case.
        extension: Option<String>,
    },
}

impl Destination {
    /// `-o OUT` as typed: none or `-` is standard output, never a file named `-`.
    pub fn of(output: Option<&Path>) -> Destination {
        let Some(path) = output.filter(|p| p.as_os_str() != "-") else {
            return Destination::Stdout;
        };
        let lower = |s: &std::ffi::OsStr| s.to_string_lossy().to_ascii_lowercase();
        let gzip = path.extension().map(lower).as_deref() == Some("gz");
        let named = if gzip {
            Path::new(path.file_stem().unwrap_or_default())
        } else {
            path
        };
        Destination::File {
            path: path.to_path_buf(),
            gzip,
            extension: named.extension().map(lower),
        }
    }

    /// Refuse a file that is one of the command's inputs (`--force` or not): the logs and
    /// documents a command reads are never its output.
    pub fn not_onto<P: AsRef<Path>>(self, inputs: &[P]) -> anyhow::Result<Self> {
        if let Destination::File { path, .. } = &self {
            refuse_input_target(path, inputs)?;
        }
        Ok(self)
    }

    /// The output format: `--format` if given, else the file's extension (a table on standard
    /// output, for a `.txt` file or a name without one). An extension the command does not
    /// write is refused rather than filled with something else.
    pub fn format<F: Copy>(
        &self,
        explicit: Option<F>,
        table: F,
        by_extension: &[(&str, F)],
    ) -> anyhow::Result<F> {
        if let Some(format) = explicit {
            return Ok(format);
        }
        let Destination::File {
            path, extension, ..
        } = self
        else {
            return Ok(table);
        };
        let Some(extension) = extension.as_deref().filter(|e| *e != "txt") else {
            return Ok(table);
        };
        if let Some((_, format)) = by_extension.iter().find(|(e, _)| *e == extension) {
            return Ok(*format);
        }
        let known: Vec<String> = by_extension
            .iter()
            .map(|(e, _)| format!(".{e}"))
            .chain(["a text table as .txt or no extension".to_string()])
            .collect();
        bail!(
            "{}: cannot tell the format from '.{}'; name the file {} (each optionally .gz), \
             or pass --format",
            shown_path(path),
            shown_path(extension),
            known.join(", ")
        )
    }

    /// Write `text` here: to standard output, or atomically to the file (compressed for
    /// `.gz`), saying where on standard error; a stream path such as `/dev/stdout` is written
    /// in place, never renamed over.
    pub fn write(&self, text: &[u8], replace: Replace) -> anyhow::Result<()> {
        match self {
            Destination::Stdout => write_stdout(text),
            Destination::File { path, gzip, .. } => {
                let bytes = if *gzip {
                    gzipped(text).context("compressing the output")?
                } else {
                    text.to_vec()
                };
                // A stream (`-o /dev/stdout`) is written in place: no "wrote" line in it.
                if write_file_or_stream(path, &bytes, replace)? == Written::File {
                    eprintln!("wrote {}", shown_path(path));
                }
                Ok(())
            }
        }
    }
}

/// Write to standard output. A reader that went away (`| head`) ends the process quietly by
/// SIGPIPE, as the default action would (the binary restores it at start, and a command that
/// writes files handles it to remove its temporary files first: this is the same end).
pub fn write_stdout(bytes: &[u8]) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            super::signals::end_by(libc::SIGPIPE)
        }
        result => result.context("writing to standard output"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq)]
    enum F {
        Table,
        Json,
        Csv,
    }
    const EXTENSIONS: &[(&str, F)] = &[("json", F::Json), ("csv", F::Csv)];

    fn format_of(out: &str, explicit: Option<F>) -> anyhow::Result<F> {
        Destination::of(Some(Path::new(out))).format(explicit, F::Table, EXTENSIONS)
    }

    #[test]
    fn a_dash_is_standard_output() {
        assert_eq!(Destination::of(Some(Path::new("-"))), Destination::Stdout);
        assert_eq!(Destination::of(None), Destination::Stdout);
        // A file called `-` in a folder is still a file.
        assert!(matches!(
            Destination::of(Some(Path::new("./-"))),
            Destination::File { .. }
        ));
    }

    #[test]
    fn the_extension_names_the_format_under_gz_too() {
        assert_eq!(format_of("a.json", None).unwrap(), F::Json);
        assert_eq!(format_of("a.CSV", None).unwrap(), F::Csv);
        assert_eq!(format_of("a.csv.gz", None).unwrap(), F::Csv);
        assert_eq!(format_of("a.txt", None).unwrap(), F::Table);
        assert_eq!(format_of("a.txt.gz", None).unwrap(), F::Table);
        assert_eq!(format_of("seqpoints", None).unwrap(), F::Table);
        assert_eq!(format_of("a.xlsx", Some(F::Csv)).unwrap(), F::Csv);
        assert!(matches!(
            Destination::of(Some(Path::new("a.csv.gz"))),
            Destination::File { gzip: true, .. }
        ));
        let err = format_of("a.xlsx", None).unwrap_err().to_string();
        assert_eq!(
            err,
            "a.xlsx: cannot tell the format from '.xlsx'; name the file .json, .csv, a text \
             table as .txt or no extension (each optionally .gz), or pass --format"
        );
    }
}
