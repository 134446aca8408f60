//! Which open descriptor a path names (`/dev/stdout`, `/dev/stderr`, `/dev/fd/N`,
//! `/proc/self/fd/N`), as typed or through its symbolic links: what both the stream writer
//! (`stream`, which writes such paths in place) and the atomic writer (`atomic`, which refuses
//! to rename over a file reached through one) ask.

use std::path::{Component, Path, PathBuf};

/// Symbolic links followed before giving up (the kernel's own limit).
const MAX_LINKS: usize = 40;

/// The descriptor `path` names when it is a stream path as typed (descriptor 0, standard
/// input, is never an output and is not one): `/dev/stdout` is 1, `/dev/fd/3` is 3, whatever
/// the descriptor is open on.
pub fn stream_descriptor(path: &Path) -> Option<i32> {
    descriptor_named(path).filter(|&fd| fd > 0)
}

/// The descriptor a path leads to through its chain of symbolic links, each link read by
/// name (`out.json -> /proc/self/fd/1`), if any.
pub fn descriptor_behind(path: &Path) -> Option<i32> {
    let mut current = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        if let Some(fd) = descriptor_named(&current) {
            return Some(fd);
        }
        let next = std::fs::read_link(&current).ok()?;
        current = if next.is_absolute() {
            next
        } else {
            current
                .parent()
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
                .join(next)
        };
    }
    None
}

/// The descriptor number a path spells out, read from its components alone.
fn descriptor_named(path: &Path) -> Option<i32> {
    let parts: Vec<String> = path
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    let number = |s: &str| s.parse::<i32>().ok().filter(|&n| n >= 0);
    let pid = std::process::id().to_string();
    match parts.as_slice() {
        ["/", "dev", "stdin"] => Some(0),
        ["/", "dev", "stdout"] => Some(1),
        ["/", "dev", "stderr"] => Some(2),
        ["/", "dev", "fd", n] => number(n),
        ["/", "proc", who, "fd", n] if *who == "self" || *who == "thread-self" || *who == pid => {
            number(n)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_paths_are_streams_by_name_and_through_links() {
        let pid = std::process::id();
        for (path, fd) in [
            ("/dev/stdout", Some(1)),
            ("/dev/stderr", Some(2)),
            ("/dev//stdout", Some(1)),
            ("/dev/fd/1", Some(1)),
            ("/dev/fd/7", Some(7)),
            ("/proc/self/fd/2", Some(2)),
            (&format!("/proc/{pid}/fd/1"), Some(1)),
            ("/dev/stdin", None),
            ("/proc/self/fd/0", None),
            ("/dev/null", None),
            ("/proc/1/fd/1", None),
            ("out.json", None),
            ("/dev/fd/x", None),
        ] {
            assert_eq!(stream_descriptor(Path::new(path)), fd, "{path}");
        }
        // A file name that links to a descriptor is not a stream, but is known to lead to one.
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("log.json");
        std::os::unix::fs::symlink("/dev/stderr", &link).unwrap();
        assert_eq!(stream_descriptor(&link), None);
        assert_eq!(descriptor_behind(&link), Some(2));
        let relative = dir.path().join("again.json");
        std::os::unix::fs::symlink("log.json", &relative).unwrap();
        assert_eq!(descriptor_behind(&relative), Some(2));
        assert_eq!(descriptor_behind(Path::new("/dev/stdin")), Some(0));
        let plain = dir.path().join("plain.json");
        std::fs::write(&plain, b"x").unwrap();
        assert_eq!(stream_descriptor(&plain), None);
        assert_eq!(descriptor_behind(&plain), None);
    }
}
