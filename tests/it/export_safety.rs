//! Output files users can trust: `select -o` never overwrites without `--force`, and a
//! read-only folder or a full disk is a clear error that leaves the earlier file intact and no
//! temporary file behind. Runs the real binary on the bundled sample.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use crate::common::{permissions_do_not_bite, seqpoint_in};

const EARLIER: &str = "{\"earlier\": true}\n";

fn files_in(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn an_existing_file_is_kept_without_force() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("seqpoints.json"), EARLIER).unwrap();
    seqpoint_in(dir.path())
        .args(["select", "-k", "2", "-o", "seqpoints.json"])
        .assert()
        .code(1)
        .stdout("")
        .stderr("error: seqpoints.json: already exists; pass --force to overwrite it\n");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("seqpoints.json")).unwrap(),
        EARLIER
    );
    assert_eq!(files_in(dir.path()), ["seqpoints.json"]);

    // With --force it is replaced, by a complete document, and nothing else is left.
    seqpoint_in(dir.path())
        .args(["select", "-k", "2", "-o", "seqpoints.json", "--force"])
        .assert()
        .success()
        .stderr("wrote seqpoints.json\n");
    let text = std::fs::read_to_string(dir.path().join("seqpoints.json")).unwrap();
    let doc: seqpoint::output::doc::SelectDoc = serde_json::from_str(&text).unwrap();
    assert_eq!(doc.seqpoints.len(), 2);
    assert_eq!(files_in(dir.path()), ["seqpoints.json"]);
}

#[test]
fn a_csv_list_is_kept_without_force_too() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("list.csv"), "earlier\n").unwrap();
    seqpoint_in(dir.path())
        .args(["select", "-k", "2", "-o", "list.csv"])
        .assert()
        .code(1)
        .stderr("error: list.csv: already exists; pass --force to overwrite it\n");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("list.csv")).unwrap(),
        "earlier\n"
    );
}

/// An output path whose folder is a regular file: no one can write there, root included.
#[test]
fn an_output_under_a_file_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "mine\n").unwrap();
    seqpoint_in(dir.path())
        .args(["select", "-k", "2", "-o", "notes.txt/seqpoints.json"])
        .assert()
        .code(1)
        .stdout("")
        .stderr(
            "error: notes.txt/seqpoints.json: cannot write: Not a directory (os error 20) \
             (nothing was changed)\n",
        );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
        "mine\n"
    );
}

/// A read-only folder by permissions: only meaningful for a user root's permissions do not
/// override (as root, `read_only_and_full_filesystems` covers the case with real mounts).
#[test]
fn a_read_only_folder_by_permissions() {
    if permissions_do_not_bite() {
        eprintln!("skipped: running as root, where a mode-555 folder is still writable");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("seqpoints.json"), EARLIER).unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o555)).unwrap();
    let assert = seqpoint_in(dir.path())
        .args(["select", "-k", "2", "-o", "out/seqpoints.json", "--force"])
        .assert()
        .code(1);
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert.stderr(
        "error: out/seqpoints.json: cannot write: Permission denied (os error 13) \
         (nothing was changed)\n",
    );
    assert_eq!(
        std::fs::read_to_string(out.join("seqpoints.json")).unwrap(),
        EARLIER
    );
    assert_eq!(files_in(&out), ["seqpoints.json"]);
}

/// As root, with a private mount namespace: a tmpfs remounted read-only, then a full one.
/// Each time `select -o ... --force` fails with the OS's reason, the earlier file is intact
/// and no temporary file is left. Skipped (with a note) where mounts are not allowed.
#[test]
fn read_only_and_full_filesystems() {
    let probe = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c"])
        .arg("d=$(mktemp -d) && mount -t tmpfs -o size=16k tmpfs \"$d\" && umount \"$d\" && rmdir \"$d\"")
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: cannot mount a private tmpfs here (needs root and unshare)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = r#"
set -e
mount -t tmpfs -o size=16k tmpfs "$OUT"
cd "$OUT"
printf '%s' "$EARLIER" > seqpoints.json
mount -o remount,ro "$OUT"
"$SEQPOINT" select -k 2 -o seqpoints.json --force 2>&1 && exit 90 || echo "exit $?"
cat seqpoints.json
ls -A
mount -o remount,rw "$OUT"
dd if=/dev/zero of=filler bs=1k count=64 2>/dev/null || true
"$SEQPOINT" select -k 2 -o seqpoints.json --force 2>&1 && exit 91 || echo "exit $?"
"$SEQPOINT" select -k 2 -o new.json 2>&1 && exit 92 || echo "exit $?"
cat seqpoints.json
ls -A
"#;
    let output = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", script])
        .env("OUT", dir.path())
        .env("EARLIER", EARLIER)
        .env("SEQPOINT", env!("CARGO_BIN_EXE_seqpoint"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let expected = format!(
        "error: seqpoints.json: cannot write: Read-only file system (os error 30) (nothing was changed)\n\
         exit 1\n\
         {EARLIER}\
         seqpoints.json\n\
         error: seqpoints.json: cannot write: No space left on device (os error 28) (nothing was changed)\n\
         exit 1\n\
         error: new.json: cannot write: No space left on device (os error 28) (nothing was changed)\n\
         exit 1\n\
         {EARLIER}\
         filler\n\
         seqpoints.json\n"
    );
    assert_eq!(stdout, expected);
}
