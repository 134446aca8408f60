//! Atomic file output: a temporary file in the same folder, then a rename; never overwrites
//! unless asked, and leaves the old file untouched on any failure.

use std::io::Write;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{0}: already exists; pass --force to overwrite it")]
    Exists(String),
    #[error("{path}: cannot write: {reason} (nothing was changed)")]
    Io { path: String, reason: String },
}

/// The OS's reason alone: tempfile appends ` at path "<random temporary name>"`, a file the
/// user never asked for; the message names the output file instead.
fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" at path \"") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// Write `contents` to `path` atomically: a temporary file in the same folder, then a rename.
/// An existing file is kept unless `overwrite`; on any failure the old file is untouched.
pub fn write_atomically(path: &Path, contents: &[u8], overwrite: bool) -> Result<(), WriteError> {
    let shown = path.display().to_string();
    if !overwrite && path.exists() {
        return Err(WriteError::Exists(shown));
    }
    let io = |e: std::io::Error| WriteError::Io {
        path: shown.clone(),
        reason: io_reason(&e),
    };
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".seqpoint-");
    // Temporary files are owner-only by default; the file the user keeps should get the
    // usual mode (0666 less the umask), like any file their shell creates.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut temp = builder.tempfile_in(&folder).map_err(io)?;
    temp.write_all(contents).map_err(io)?;
    temp.as_file().sync_all().map_err(io)?;
    if overwrite {
        temp.persist(path).map_err(|e| io(e.error))?;
    } else {
        temp.persist_noclobber(path).map_err(|e| {
            if e.error.kind() == std::io::ErrorKind::AlreadyExists {
                WriteError::Exists(shown.clone())
            } else {
                io(e.error)
            }
        })?;
    }
    // Make the rename itself durable, so a crash or power cut right after leaves either the
    // earlier file or the new one. Best effort: not every file system can sync a folder.
    if let Ok(dir) = std::fs::File::open(&folder) {
        let _ = dir.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_overwrites_without_asking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        write_atomically(&path, b"first", false).unwrap();
        let err = write_atomically(&path, b"second", false).unwrap_err();
        assert!(err
            .to_string()
            .ends_with("already exists; pass --force to overwrite it"));
        assert_eq!(std::fs::read(&path).unwrap(), b"first");
        write_atomically(&path, b"second", true).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        // No temporary files are left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn written_files_get_the_mode_of_any_new_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let ours = dir.path().join("ours.svg");
        let plain = dir.path().join("plain.svg");
        write_atomically(&ours, b"x", false).unwrap();
        std::fs::write(&plain, b"x").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&ours), mode(&plain));
    }

    #[test]
    fn missing_folder_is_a_clear_error() {
        let err = write_atomically(Path::new("/nonexistent-dir/x.json"), b"x", false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "/nonexistent-dir/x.json: cannot write: No such file or directory (os error 2) \
             (nothing was changed)"
        );
    }
}
