//! Output files users can trust: `select -o` never overwrites without `--force`, and a
//! read-only folder or a full disk is a clear error that leaves the earlier file intact and no
//! temporary file behind. Runs the real binary on the bundled sample.

use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use crate::common::{seqpoint_bound_by_permissions, seqpoint_in};

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
    let doc: seqpoint::doc::SelectDoc = serde_json::from_str(&text).unwrap();
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

/// A read-only folder by permissions (`read_only_and_full_filesystems` covers real mounts).
/// As root, where a mode-555 folder is still writable, `seqpoint` runs as an unprivileged
/// user who owns the folder, as a normal user would.
#[test]
fn a_read_only_folder_by_permissions() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("seqpoints.json"), EARLIER).unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o555)).unwrap();
    let assert = seqpoint_bound_by_permissions(dir.path())
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
        crate::common::skip(
            "export_safety::read_only_and_full_filesystems",
            "cannot mount a private tmpfs here (needs root and unshare)",
        );
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

/// `select -o NODE --force`: the error names what NODE is; NODE is still there, unchanged in
/// kind, and no temporary file is left beside it.
fn refuses_to_replace(dir: &std::path::Path, node: &str, kind: &str) {
    let before = std::fs::symlink_metadata(dir.join(node)).unwrap();
    for force in [
        &[][..],
        &["--force"][..],
        &["--force", "--replace-read-only"][..],
    ] {
        seqpoint_in(dir)
            .args(["select", "-k", "2", "-o", node])
            .args(force)
            .assert()
            .code(1)
            .stdout("")
            .stderr(format!(
                "error: {node}: is {kind}, not a regular file; seqpoint writes only regular \
                 files and never replaces one that is not (nothing was changed)\n"
            ));
    }
    let after = std::fs::symlink_metadata(dir.join(node)).unwrap();
    assert_eq!(before.file_type(), after.file_type());
    assert!(!files_in(dir).iter().any(|n| n.starts_with(".seqpoint-")));
}

fn mkfifo(path: &std::path::Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
}

#[test]
fn force_never_replaces_a_named_pipe() {
    let dir = tempfile::tempdir().unwrap();
    mkfifo(&dir.path().join("pipe.json"));
    refuses_to_replace(dir.path(), "pipe.json", "a named pipe");
}

/// `/proc/self/fd/1` seen by the writer is its own standard output, a pipe here.
#[test]
fn force_never_replaces_a_link_to_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/proc/self/fd/1", dir.path().join("out.json")).unwrap();
    refuses_to_replace(dir.path(), "out.json", "a symbolic link to a named pipe");
    assert_eq!(
        std::fs::read_link(dir.path().join("out.json")).unwrap(),
        std::path::Path::new("/proc/self/fd/1")
    );
}

/// As root: a copy of /dev/null's node (major 1, minor 3) in a scratch folder survives.
#[test]
fn force_never_replaces_a_character_device() {
    // SAFETY: geteuid only reads the process's credentials.
    if unsafe { libc::geteuid() } != 0 {
        crate::common::skip(
            "export_safety::force_never_replaces_a_character_device",
            "making a device node needs root",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let node = dir.path().join("null.csv");
    let c = std::ffi::CString::new(node.to_str().unwrap()).unwrap();
    // SAFETY: a valid path; makedev(1, 3) is the null device.
    let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
    if made != 0 {
        crate::common::skip(
            "export_safety::force_never_replaces_a_character_device",
            "mknod is not allowed here",
        );
        return;
    }
    refuses_to_replace(dir.path(), "null.csv", "a character device");
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&node)
        .unwrap()
        .file_type()
        .is_char_device());
}

/// A read-only file is kept by --force alone; --replace-read-only (in a folder this user owns)
/// replaces it, and the new file keeps the old one's mode.
#[test]
fn a_read_only_file_needs_its_own_flag() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seqpoints.json");
    std::fs::write(&path, EARLIER).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    seqpoint_in(dir.path())
        .args(["select", "-k", "2", "-o", "seqpoints.json", "--force"])
        .assert()
        .code(1)
        .stderr(
            "error: seqpoints.json: is read-only; pass --replace-read-only as well as --force \
             to replace it (nothing was changed)\n",
        );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), EARLIER);
    // The flag alone means nothing without --force.
    seqpoint_in(dir.path())
        .args([
            "select",
            "-k",
            "2",
            "-o",
            "seqpoints.json",
            "--replace-read-only",
        ])
        .assert()
        .code(2);
    seqpoint_in(dir.path())
        .args(["select", "-k", "2", "-o", "seqpoints.json"])
        .args(["--force", "--replace-read-only"])
        .assert()
        .success()
        .stderr("wrote seqpoints.json\n");
    let doc: seqpoint::doc::SelectDoc =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(doc.seqpoints.len(), 2);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o444);
    assert_eq!(files_in(dir.path()), ["seqpoints.json"]);
}

#[test]
fn force_never_replaces_a_socket() {
    let dir = tempfile::tempdir().unwrap();
    let _listener = std::os::unix::net::UnixListener::bind(dir.path().join("sock.json")).unwrap();
    refuses_to_replace(dir.path(), "sock.json", "a socket");
}

/// As root: a read-only file in a folder that belongs to another user is not replaced, even
/// with --replace-read-only.
#[test]
fn a_read_only_file_in_someone_elses_folder_is_kept() {
    // SAFETY: geteuid only reads the process's credentials.
    if unsafe { libc::geteuid() } != 0 {
        crate::common::skip(
            "export_safety::a_read_only_file_in_someone_elses_folder_is_kept",
            "giving a folder to another user needs root",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let theirs = dir.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::write(theirs.join("seqpoints.json"), EARLIER).unwrap();
    std::fs::set_permissions(
        theirs.join("seqpoints.json"),
        std::fs::Permissions::from_mode(0o444),
    )
    .unwrap();
    std::os::unix::fs::chown(&theirs, Some(4321), Some(4321)).unwrap();
    seqpoint_in(dir.path())
        .args(["select", "-k", "2", "-o", "theirs/seqpoints.json"])
        .args(["--force", "--replace-read-only"])
        .assert()
        .code(1)
        .stderr(
            "error: theirs/seqpoints.json: is read-only and its folder is not yours; seqpoint \
             replaces a read-only file only in a folder you own (nothing was changed)\n",
        );
    assert_eq!(
        std::fs::read_to_string(theirs.join("seqpoints.json")).unwrap(),
        EARLIER
    );
    assert_eq!(files_in(&theirs), ["seqpoints.json"]);
}

/// As root: a replaced file keeps its owner and group (another user's) and its mode.
#[test]
fn a_replaced_file_keeps_its_owner_and_mode() {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid only reads the process's credentials.
    if unsafe { libc::geteuid() } != 0 {
        crate::common::skip(
            "export_safety::a_replaced_file_keeps_its_owner_and_mode",
            "giving a file to another user needs root",
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("list.csv");
    std::fs::write(&path, "earlier\n").unwrap();
    std::os::unix::fs::chown(&path, Some(4321), Some(4322)).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o664)).unwrap();
    seqpoint_in(dir.path())
        .args(["select", "-k", "2", "-o", "list.csv", "--force"])
        .assert()
        .success();
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(
        (meta.uid(), meta.gid(), meta.mode() & 0o7777),
        (4321, 4322, 0o664)
    );
    assert!(std::fs::read_to_string(&path)
        .unwrap()
        .starts_with("id,iteration,"));
}

/// A symbolic link to a regular file: the file is replaced, the link kept.
#[test]
fn force_through_a_link_replaces_the_file_it_points_to() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("real")).unwrap();
    std::fs::write(dir.path().join("real/list.csv"), "earlier\n").unwrap();
    std::os::unix::fs::symlink("real/list.csv", dir.path().join("list.csv")).unwrap();
    seqpoint_in(dir.path())
        .args(["select", "-k", "2", "-o", "list.csv", "--force"])
        .assert()
        .success();
    assert!(std::fs::symlink_metadata(dir.path().join("list.csv"))
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(dir.path().join("real/list.csv"))
        .unwrap()
        .starts_with("id,iteration,"));
    assert_eq!(files_in(&dir.path().join("real")), ["list.csv"]);
}

/// The explorer's export, after the user confirms overwriting with `y`, calls the same writer:
/// a named pipe where its CSV would go is refused and kept, and the JSON is not written either
/// (an export is both files or neither).
#[test]
fn the_explorers_confirmed_export_never_replaces_a_named_pipe() {
    use seqpoint::tui::app::ExportPlan;
    use seqpoint::tui::save::{write_export, ExportOutcome};
    let dir = tempfile::tempdir().unwrap();
    mkfifo(&dir.path().join("s.csv"));
    let plan = ExportPlan {
        json_path: dir.path().join("s.json"),
        csv_path: dir.path().join("s.csv"),
        json: "{}\n".into(),
        csv: "id\n".into(),
        overwrite: true,
    };
    match write_export(plan) {
        ExportOutcome::Failed(e) => assert!(e.ends_with("s.csv: is a named pipe, not a regular file; seqpoint writes only regular files and never replaces one that is not (nothing was changed)"), "{e}"),
        other => panic!("{other:?}"),
    }
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(dir.path().join("s.csv"))
        .unwrap()
        .file_type()
        .is_fifo());
    assert!(!dir.path().join("s.json").exists());
}

/// The logs and documents a command reads are never its output, `--force` or not, under any
/// spelling of their name: each command is refused before it writes, and the input is intact.
#[test]
fn no_command_writes_onto_its_own_input() {
    let dir = tempfile::tempdir().unwrap();
    let run = "iteration,seq_len,time_ms\n0,10,1.5\n1,20,2.5\n2,10,1.25\n3,30,4\n";
    std::fs::write(dir.path().join("run.csv"), run).unwrap();
    std::fs::write(dir.path().join("new.csv"), run).unwrap();
    let lines = "{\"seq_len\": 10, \"time_ms\": 1.5}\n{\"seq_len\": 20, \"time_ms\": 2.5}\n";
    std::fs::write(dir.path().join("log.json"), lines).unwrap();
    seqpoint_in(dir.path())
        .args(["select", "run.csv", "-k", "2", "-o", "sp.json"])
        .assert()
        .success();
    let measured = "iteration,time_ms\n0,1.5\n1,2.5\n3,4\n";
    std::fs::write(dir.path().join("measured.csv"), measured).unwrap();
    let document = std::fs::read_to_string(dir.path().join("sp.json")).unwrap();
    let runs: [&[&str]; 6] = [
        &["select", "run.csv", "-k", "2", "-o", "run.csv", "--force"],
        &[
            "select",
            "run.csv",
            "--compare",
            "new.csv",
            "-k",
            "2",
            "-o",
            "./new.csv",
            "--force",
        ],
        &[
            "select",
            "log.json",
            "-k",
            "2",
            "--format",
            "simpoints",
            "-o",
            "log",
            "--force",
        ],
        &["report", "run.csv", "-o", "../{dir}/run.csv", "--force"],
        &[
            "project",
            "sp.json",
            "measured.csv",
            "-o",
            "measured.csv",
            "--force",
        ],
        &[
            "project",
            "sp.json",
            "measured.csv",
            "-o",
            "sp.json",
            "--force",
        ],
    ];
    let folder = dir
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    for args in runs {
        let args: Vec<String> = args.iter().map(|a| a.replace("{dir}", &folder)).collect();
        let out = seqpoint_in(dir.path()).args(&args).assert().code(1);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(
            stderr.contains("an input is never overwritten"),
            "{args:?}: {stderr}"
        );
    }
    for name in ["run.csv", "new.csv"] {
        assert_eq!(std::fs::read_to_string(dir.path().join(name)).unwrap(), run);
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("log.json")).unwrap(),
        lines
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("measured.csv")).unwrap(),
        measured
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("sp.json")).unwrap(),
        document
    );
    assert_eq!(
        files_in(dir.path()),
        ["log.json", "measured.csv", "new.csv", "run.csv", "sp.json"]
    );
}

/// Two `--format simpoints -o s --force` at once, with different numbers of SeqPoints, many
/// times over: each time the three files are one run's complete set (the same SeqPoints in
/// `s.simpoints`, `s.weights` and `s.json`), never a mix of both, and both runs succeed.
#[test]
fn concurrent_simpoint_sets_leave_one_complete_set() {
    let dir = tempfile::tempdir().unwrap();
    let lines = |name: &str| {
        std::fs::read_to_string(dir.path().join(name))
            .unwrap()
            .lines()
            .count()
    };
    for round in 0..30 {
        let children: Vec<_> = ["3", "5"]
            .into_iter()
            .map(|k| {
                Command::new(env!("CARGO_BIN_EXE_seqpoint"))
                    .current_dir(dir.path())
                    .env("SEQPOINT_STATUS_AFTER_MS", "600000")
                    .args([
                        "select",
                        "-k",
                        k,
                        "--format",
                        "simpoints",
                        "-o",
                        "s",
                        "--force",
                    ])
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "round {round}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("s.json")).unwrap())
                .unwrap();
        let in_json = json["seqpoints"].as_array().unwrap().len();
        assert!(in_json == 3 || in_json == 5, "round {round}: {in_json}");
        assert_eq!(lines("s.simpoints"), in_json, "round {round}");
        assert_eq!(lines("s.weights"), in_json, "round {round}");
        assert_eq!(
            files_in(dir.path()),
            ["s.json", "s.simpoints", "s.weights"],
            "round {round}"
        );
    }
}
