//! Atomic file output: a temporary file in the same folder, then a rename; never overwrites
//! unless asked, and leaves the old file untouched on any failure.
//!
//! Only regular files are written. A device, named pipe or socket at the output path (or a
//! symbolic link to one, such as `/dev/stdout` or `/proc/self/fd/1`) is refused even with
//! `--force`: a rename would replace the node itself, and as root that destroys `/dev/null`.
//! A path that names an open descriptor (`/dev/stdout` even when the shell redirected it to a
//! file) is a stream and is never renamed over either: `stream::write_file_or_stream` writes
//! to it in place. A symbolic link to a regular file is followed: the file it points to is replaced and the
//! link kept. A replaced file keeps its owner and mode. A read-only file is replaced only when
//! asked for explicitly ([`Replace::ReadOnlyToo`]) and only in a folder the user owns.
//!
//! While a temporary file exists its name is registered, so that a signal handler can remove
//! it ([`remove_pending_temporaries`]) before the process ends.

use std::fs::Metadata;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use crate::options::{Surface, FORCE, REPLACE_READ_ONLY};
use crate::text::shown::shown_path;

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{0}: already exists; pass {force} to overwrite it",
            force = FORCE.typed(Surface::CommandLine, ""))]
    Exists(String),
    #[error(
        "{path}: is {kind}, not a regular file; seqpoint writes only regular files and never \
         replaces one that is not (nothing was changed)"
    )]
    NotRegular { path: String, kind: String },
    #[error(
        "{path}: is read-only; pass {replace} as well as {force} to replace it \
         (nothing was changed)",
        replace = REPLACE_READ_ONLY.typed(Surface::CommandLine, ""),
        force = FORCE.typed(Surface::CommandLine, "")
    )]
    ReadOnly { path: String },
    #[error(
        "{path}: is read-only and its folder is not yours; seqpoint replaces a read-only file \
         only in a folder you own (nothing was changed)"
    )]
    ReadOnlyElsewhere { path: String },
    #[error("{path}: cannot write: {reason} (nothing was changed)")]
    Io { path: String, reason: String },
    #[error("{0}: not written: interrupted by a signal (nothing was changed)")]
    Interrupted(String),
}

/// What an existing output file may be replaced with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Replace {
    /// Keep any existing file (the default).
    #[default]
    Never,
    /// `--force`: replace a regular file the user may write.
    Writable,
    /// `--force --replace-read-only`: also a read-only regular file, in a folder the user owns.
    ReadOnlyToo,
}

impl From<bool> for Replace {
    /// `overwrite` as the explorer's confirmation gives it: a writable file may be replaced.
    fn from(overwrite: bool) -> Self {
        if overwrite {
            Replace::Writable
        } else {
            Replace::Never
        }
    }
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

/// What a file system node is, in words, for a refusal.
fn kind_of(meta: &Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "a folder"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_fifo() {
        "a named pipe"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

/// Whether `meta`'s file counts as writable: its permission bits let this user write it, or,
/// for root (whom the kernel lets write anything), some write bit is set at all. A file made
/// read-only (`chmod a-w`) is not replaced by a `--force` meant for ordinary files.
fn writable_by_user(meta: &Metadata) -> bool {
    // SAFETY: geteuid only reads the process's credentials.
    let euid = unsafe { libc::geteuid() };
    let mode = meta.mode();
    if euid == 0 {
        return mode & 0o222 != 0;
    }
    if meta.uid() == euid {
        return mode & 0o200 != 0;
    }
    if in_group(meta.gid()) {
        return mode & 0o020 != 0;
    }
    mode & 0o002 != 0
}

fn in_group(gid: u32) -> bool {
    // SAFETY: as above; the buffer is sized by the first call.
    unsafe {
        if libc::getegid() == gid {
            return true;
        }
        let n = libc::getgroups(0, std::ptr::null_mut());
        if n <= 0 {
            return false;
        }
        let mut groups = vec![0 as libc::gid_t; n as usize];
        let got = libc::getgroups(n, groups.as_mut_ptr());
        got > 0 && groups[..got as usize].contains(&gid)
    }
}

/// Where the bytes go and what is there now.
struct Target {
    /// The file to create or replace: `path`, or the regular file a symbolic link points to.
    path: PathBuf,
    /// The file being replaced, whose owner and mode the new one keeps.
    existing: Option<Metadata>,
}

/// Check that `path` may be written under `replace`, before anything is created.
fn check_target(path: &Path, replace: Replace) -> Result<Target, WriteError> {
    let shown = shown_path(path);
    let io = |e: std::io::Error| WriteError::Io {
        path: shown.clone(),
        reason: io_reason(&e),
    };
    let link = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Target {
                path: path.to_path_buf(),
                existing: None,
            })
        }
        Err(e) => return Err(io(e)),
    };
    let meta = if link.file_type().is_symlink() {
        match std::fs::metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(WriteError::NotRegular {
                    path: shown,
                    kind: "a symbolic link to a missing file".into(),
                })
            }
            Err(e) => return Err(io(e)),
        }
    } else {
        link.clone()
    };
    if !meta.is_file() {
        let kind = if link.file_type().is_symlink() {
            format!("a symbolic link to {}", kind_of(&meta))
        } else {
            kind_of(&meta).to_string()
        };
        return Err(WriteError::NotRegular { path: shown, kind });
    }
    // A regular file reached through a descriptor (`/dev/stdout >> app.log`) is the shell's
    // redirect target: renaming over it would replace what the shell only appends to.
    if let Some(fd) = super::descriptor::descriptor_behind(path) {
        let which = match fd {
            0 => "standard input".to_string(),
            1 => "standard output".to_string(),
            2 => "standard error".to_string(),
            n => format!("descriptor {n}"),
        };
        return Err(WriteError::NotRegular {
            path: shown,
            kind: format!("a symbolic link to a stream ({which}, open on a file)"),
        });
    }
    if replace == Replace::Never {
        return Err(WriteError::Exists(shown));
    }
    if !writable_by_user(&meta) {
        if replace != Replace::ReadOnlyToo {
            return Err(WriteError::ReadOnly { path: shown });
        }
        let folder = folder_of(path);
        let folder_owner = std::fs::metadata(&folder).map_err(io)?.uid();
        // SAFETY: geteuid only reads the process's credentials.
        if folder_owner != unsafe { libc::geteuid() } {
            return Err(WriteError::ReadOnlyElsewhere { path: shown });
        }
    }
    let path = if link.file_type().is_symlink() {
        std::fs::canonicalize(path).map_err(io)?
    } else {
        path.to_path_buf()
    };
    Ok(Target {
        path,
        existing: Some(meta),
    })
}

fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Set (non-zero) by a signal handler: no file is renamed into place after it.
static STOP: OnceLock<Arc<AtomicUsize>> = OnceLock::new();

/// From now on, once `flag` is non-zero no temporary file is renamed into place: a signal
/// that arrives while a file is being written abandons it, whichever thread runs first.
/// `signal_hook::flag::register_usize` sets such a flag inside the signal handler itself.
pub fn stop_writes_when_set(flag: Arc<AtomicUsize>) {
    let _ = STOP.set(flag);
}

fn stop_requested() -> bool {
    STOP.get().is_some_and(|f| f.load(Ordering::SeqCst) != 0)
}

/// Temporary files written but not yet renamed into place.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn pending() -> MutexGuard<'static, Vec<PathBuf>> {
    PENDING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Remove every temporary file not yet renamed into place, and keep any new one from being
/// created or renamed until the process ends: call it from a signal-handling thread just
/// before exiting, so that an interrupted export leaves no `.seqpoint-XXXXXX` file.
pub fn remove_pending_temporaries() -> MutexGuard<'static, Vec<PathBuf>> {
    let mut list = pending();
    for path in list.drain(..) {
        let _ = std::fs::remove_file(path);
    }
    list
}

/// A complete temporary file beside its target, not yet renamed into place. Dropping it
/// removes the temporary file; [`Staged::commit`] renames it.
pub struct Staged {
    temp: Option<tempfile::NamedTempFile>,
    target: PathBuf,
    shown: String,
    replace: Replace,
}

/// Check the target and write `contents` to a temporary file beside it, made durable: the
/// first half of an atomic write. Several files staged first and committed together are
/// written all or (nearly) nothing: any refusal or disk error comes before the first rename.
pub fn stage(path: &Path, contents: &[u8], replace: Replace) -> Result<Staged, WriteError> {
    let shown = shown_path(path);
    let target = check_target(path, replace)?;
    let io = |e: std::io::Error| WriteError::Io {
        path: shown.clone(),
        reason: io_reason(&e),
    };
    let folder = folder_of(&target.path);
    let mut builder = tempfile::Builder::new();
    builder.prefix(".seqpoint-");
    // Temporary files are owner-only by default; the file the user keeps should get the
    // usual mode (0666 less the umask), like any file their shell creates.
    builder.permissions(std::fs::Permissions::from_mode(0o666));
    let mut temp = {
        // Created and registered under the lock, so a signal handler sees every file.
        let mut list = pending();
        let temp = builder.tempfile_in(&folder).map_err(io)?;
        list.push(temp.path().to_path_buf());
        temp
    };
    let staged_path = temp.path().to_path_buf();
    let forget = |result: Result<(), WriteError>| {
        if result.is_err() {
            pending().retain(|p| p != &staged_path);
        }
        result
    };
    forget(temp.write_all(contents).map_err(io))?;
    if let Some(old) = &target.existing {
        forget(keep_owner_and_mode(temp.as_file(), old, &shown))?;
    }
    forget(temp.as_file().sync_all().map_err(io))?;
    Ok(Staged {
        temp: Some(temp),
        target: target.path,
        shown,
        replace,
    })
}

/// Give the new file the replaced file's owner, group and mode (in that order: a change of
/// owner clears the set-id bits).
fn keep_owner_and_mode(
    file: &std::fs::File,
    old: &Metadata,
    shown: &str,
) -> Result<(), WriteError> {
    let now = file.metadata().map_err(|e| WriteError::Io {
        path: shown.to_string(),
        reason: io_reason(&e),
    })?;
    if (now.uid(), now.gid()) != (old.uid(), old.gid()) {
        std::os::unix::fs::fchown(file, Some(old.uid()), Some(old.gid())).map_err(|e| {
            WriteError::Io {
                path: shown.to_string(),
                reason: format!(
                    "the new file cannot keep the owner {}:{} of the one it replaces ({})",
                    old.uid(),
                    old.gid(),
                    io_reason(&e)
                ),
            }
        })?;
    }
    file.set_permissions(std::fs::Permissions::from_mode(old.mode() & 0o7777))
        .map_err(|e| WriteError::Io {
            path: shown.to_string(),
            reason: io_reason(&e),
        })
}

impl Staged {
    /// Rename the temporary file into place: the second half of an atomic write.
    pub fn commit(mut self) -> Result<(), WriteError> {
        let temp = self.temp.take().expect("a staged file is committed once");
        let shown = self.shown.clone();
        let io = |e: std::io::Error| WriteError::Io {
            path: shown.clone(),
            reason: io_reason(&e),
        };
        let mut list = pending();
        let staged_path = temp.path().to_path_buf();
        list.retain(|p| p != &staged_path);
        // On the way out without a rename, the file goes while the list is still held: the
        // signal thread waits for the list, and once the file is off it, only this thread
        // removes the file. Released first, the process could end (by the signal, on the
        // other thread) between the two and leave it: seen under load, a SIGHUP during an
        // export left a `.seqpoint-XXXXXX` file.
        if stop_requested() {
            drop(temp);
            drop(list);
            return Err(WriteError::Interrupted(shown));
        }
        // The target may have changed since it was checked: check again, as late as possible.
        if let Err(e) = check_target(&self.target, self.replace) {
            drop(temp);
            drop(list);
            return Err(e);
        }
        if self.replace == Replace::Never {
            temp.persist_noclobber(&self.target).map_err(|e| {
                if e.error.kind() == std::io::ErrorKind::AlreadyExists {
                    WriteError::Exists(shown.clone())
                } else {
                    io(e.error)
                }
            })?;
        } else {
            temp.persist(&self.target).map_err(|e| io(e.error))?;
        }
        drop(list);
        // Make the rename itself durable, so a crash or power cut right after leaves either the
        // earlier file or the new one. Best effort: not every file system can sync a folder.
        if let Ok(dir) = std::fs::File::open(folder_of(&self.target)) {
            let _ = dir.sync_all();
        }
        Ok(())
    }

    /// The file this will become.
    pub fn target(&self) -> &Path {
        &self.target
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(temp) = self.temp.take() {
            let path = temp.path().to_path_buf();
            let mut list = pending();
            drop(temp);
            list.retain(|p| p != &path);
        }
    }
}

/// Write `contents` to `path` atomically: a temporary file in the same folder, then a rename.
/// An existing file is kept unless `overwrite`; on any failure the old file is untouched.
/// The explorer's export calls this; the CLI calls [`write_replacing`] with its flags.
pub fn write_atomically(path: &Path, contents: &[u8], overwrite: bool) -> Result<(), WriteError> {
    write_replacing(path, contents, overwrite.into())
}

/// [`write_atomically`] with the full choice of what may be replaced.
pub fn write_replacing(path: &Path, contents: &[u8], replace: Replace) -> Result<(), WriteError> {
    stage(path, contents, replace)?.commit()
}

/// Write several files all or none: each is checked and written to a temporary file first,
/// and only then are they renamed into place, so a file in the way, a special file or a full
/// disk leaves every target as it was. (Should a rename fail after others succeeded, which
/// the checks make rare, the files this call created are removed again.) The renames hold
/// an exclusive lock on the files' folders, so two processes writing the same set at once
/// (`--format simpoints -o s --force` twice) leave one complete set, never a mix.
pub fn write_all_or_none(files: &[(&Path, &[u8])], replace: Replace) -> Result<(), WriteError> {
    let staged: Vec<Staged> = files
        .iter()
        .map(|&(path, contents)| stage(path, contents, replace))
        .collect::<Result<_, _>>()?;
    let _locks = lock_folders(staged.iter().map(Staged::target));
    // Whether each file exists is read under the lock: another writer may have made it.
    let staged: Vec<(Staged, bool)> = staged
        .into_iter()
        .map(|s| {
            let existed = std::fs::symlink_metadata(s.target()).is_ok();
            (s, existed)
        })
        .collect();
    let mut created: Vec<PathBuf> = Vec::new();
    for (file, existed) in staged {
        let target = file.target().to_path_buf();
        if let Err(e) = file.commit() {
            for path in &created {
                let _ = std::fs::remove_file(path);
            }
            return Err(match e {
                WriteError::Io { path, reason } if !created.is_empty() => WriteError::Io {
                    path,
                    reason: format!(
                        "{reason}; the {} files written before it were removed again",
                        created.len()
                    ),
                },
                other => other,
            });
        }
        if !existed {
            created.push(target);
        }
    }
    Ok(())
}

/// Exclusive advisory locks (`flock`) on the folders of `targets`, taken in a fixed order so
/// two writers never wait on each other in a circle; released when dropped. Best effort: a
/// folder that cannot be opened or locked (a file system without locks) is written unlocked.
fn lock_folders<'a>(targets: impl Iterator<Item = &'a Path>) -> Vec<std::fs::File> {
    use std::os::fd::AsRawFd;
    let mut folders: Vec<PathBuf> = targets
        .map(|t| std::fs::canonicalize(folder_of(t)).unwrap_or_else(|_| folder_of(t)))
        .collect();
    folders.sort();
    folders.dedup();
    folders
        .into_iter()
        .filter_map(|folder| {
            let dir = std::fs::File::open(&folder).ok()?;
            // SAFETY: flock on a descriptor this function owns; the lock ends with the file.
            (unsafe { libc::flock(dir.as_raw_fd(), libc::LOCK_EX) } == 0).then_some(dir)
        })
        .collect()
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

    #[test]
    fn written_files_get_the_mode_of_any_new_file() {
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

    #[test]
    fn a_named_pipe_is_never_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe.json");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        for overwrite in [false, true] {
            let err = write_atomically(&fifo, b"x", overwrite).unwrap_err();
            assert!(
                matches!(&err, WriteError::NotRegular { kind, .. } if kind == "a named pipe"),
                "{err}"
            );
        }
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        let err = write_replacing(&link, b"x", Replace::ReadOnlyToo).unwrap_err();
        assert!(
            matches!(&err, WriteError::NotRegular { kind, .. } if kind == "a symbolic link to a named pipe"),
            "{err}"
        );
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn a_link_to_a_regular_file_replaces_the_file_and_keeps_the_link() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.json");
        let link = dir.path().join("link.json");
        std::fs::write(&real, b"old").unwrap();
        std::os::unix::fs::symlink("real.json", &link).unwrap();
        write_atomically(&link, b"new", true).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
    }

    #[test]
    fn a_replaced_file_keeps_its_mode_and_a_read_only_one_needs_asking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.csv");
        std::fs::write(&path, b"old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_atomically(&path, b"new", true).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().mode() & 0o7777;
        assert_eq!(mode(&path), 0o640);

        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
        let err = write_atomically(&path, b"newer", true).unwrap_err();
        assert!(matches!(err, WriteError::ReadOnly { .. }), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        // The temp dir is ours: replacing it there when asked works, and keeps it read-only.
        write_replacing(&path, b"newer", Replace::ReadOnlyToo).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"newer");
        assert_eq!(mode(&path), 0o444);
    }

    #[test]
    fn several_files_are_written_all_or_none() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("c"),
        );
        std::fs::write(&c, b"mine").unwrap();
        let files = [
            (a.as_path(), &b"1"[..]),
            (b.as_path(), b"2"),
            (c.as_path(), b"3"),
        ];
        let err = write_all_or_none(&files, Replace::Never).unwrap_err();
        assert!(matches!(err, WriteError::Exists(_)), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        assert_eq!(std::fs::read(&c).unwrap(), b"mine");
        write_all_or_none(&files, Replace::Writable).unwrap();
        for (path, contents) in files {
            assert_eq!(std::fs::read(path).unwrap(), contents);
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
    }

    #[test]
    fn a_staged_file_is_registered_until_dropped_and_then_gone() {
        let dir = tempfile::tempdir().unwrap();
        let staged = stage(&dir.path().join("a.json"), b"x", Replace::Never).unwrap();
        let temp = staged.temp.as_ref().unwrap().path().to_path_buf();
        assert!(pending().contains(&temp));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        drop(staged);
        assert!(!pending().contains(&temp));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
