//! Output paths that name one of the process's open descriptors (`/dev/stdout`, `/dev/stderr`,
//! `/dev/fd/N`, `/proc/self/fd/N`): streams, written to in place and never renamed over. When
//! the shell redirected standard output to a file (`-o /dev/stdout >> app.log`), a rename
//! would replace that file with the output alone; a write appends to it, as the shell's
//! redirect promised. Only the path as typed makes a stream: a file name such as `out.json`
//! that is a symbolic link to a descriptor is asked for as a file, and `atomic` refuses it
//! (`descriptor::descriptor_behind`) rather than rename over whatever the descriptor is.

use std::io::Write;
use std::path::Path;

use super::atomic::{write_replacing, Replace, WriteError};
use super::descriptor::stream_descriptor;
use crate::text::shown::shown_path;

/// Where [`write_file_or_stream`] put the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// A regular file, written atomically.
    File,
    /// An open descriptor, written in place (appended where the shell opened it so).
    Stream(i32),
}

/// Write `contents` to `path`: to the descriptor it names when it is a stream path (no
/// `--force` is needed, nothing is replaced), else atomically under `replace`.
pub fn write_file_or_stream(
    path: &Path,
    contents: &[u8],
    replace: Replace,
) -> Result<Written, WriteError> {
    match stream_descriptor(path) {
        Some(fd) => {
            write_descriptor(fd, contents).map_err(|e| WriteError::Io {
                path: shown_path(path),
                reason: e.to_string(),
            })?;
            Ok(Written::Stream(fd))
        }
        None => write_replacing(path, contents, replace).map(|()| Written::File),
    }
}

/// Write all of `contents` to descriptor `fd`, which stays open. Standard output and error go
/// through Rust's handles, so nothing buffered there is reordered.
fn write_descriptor(fd: i32, contents: &[u8]) -> std::io::Result<()> {
    match fd {
        1 => {
            let mut out = std::io::stdout().lock();
            out.write_all(contents)?;
            out.flush()
        }
        2 => std::io::stderr().lock().write_all(contents),
        _ => {
            use std::os::fd::FromRawFd;
            // SAFETY: the descriptor is borrowed for this write only; ManuallyDrop keeps it open.
            let mut file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
            file.write_all(contents)?;
            file.flush()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn a_stream_descriptor_is_appended_to_and_kept_open() {
        use std::os::fd::AsRawFd;
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("app.log");
        std::fs::write(&log, b"earlier\n").unwrap();
        let file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        let path = PathBuf::from(format!("/dev/fd/{}", file.as_raw_fd()));
        let written = write_file_or_stream(&path, b"new\n", Replace::Never).unwrap();
        assert_eq!(written, Written::Stream(file.as_raw_fd()));
        write_file_or_stream(&path, b"again\n", Replace::Never).unwrap();
        assert_eq!(std::fs::read(&log).unwrap(), b"earlier\nnew\nagain\n");
        // A plain file is written atomically as before.
        let out = dir.path().join("out.json");
        assert_eq!(
            write_file_or_stream(&out, b"{}", Replace::Never).unwrap(),
            Written::File
        );
        drop(file);
    }
}
