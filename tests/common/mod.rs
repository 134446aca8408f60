//! Shared by the CLI tests: the real `seqpoint` binary, and the bad-input corpus folder.
#![allow(dead_code)]

use std::path::PathBuf;

use assert_cmd::Command;

/// The `seqpoint` binary built for these tests, run from `dir`.
pub fn seqpoint_in(dir: &std::path::Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_seqpoint"));
    cmd.current_dir(dir);
    cmd
}

/// `tests/bad_inputs/`: one small file per kind of bad (or merely unusual) input.
pub fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/bad_inputs")
}

/// Run `seqpoint select ARGS` in the corpus folder; return (exit code, stdout, stderr).
pub fn select_in_corpus(args: &[&str]) -> (i32, String, String) {
    let output = seqpoint_in(&corpus())
        .arg("select")
        .args(args)
        .output()
        .expect("the binary runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// True when this process can read a file whose permission bits forbid it (root can).
pub fn permissions_do_not_bite() -> bool {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("probe");
    std::fs::write(&path, b"x").expect("write probe");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    std::fs::read(&path).is_ok()
}
