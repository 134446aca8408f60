//! The way out of the tool from the command line: `plot`, shell completions, the man page,
//! help with examples, and errors that suggest the likely fix.

use assert_cmd::Command;
use predicates::prelude::*;

fn seqpoint() -> Command {
    Command::cargo_bin("seqpoint").unwrap()
}

const SUBCOMMANDS: [&str; 4] = ["select", "plot", "completions", "man"];

#[test]
fn plot_writes_an_svg_and_never_overwrites_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let fig = dir.path().join("fig.svg");
    seqpoint()
        .args(["plot", "--bins", "6", "-o"])
        .arg(&fig)
        .assert()
        .success()
        .stderr(predicate::str::contains("wrote"));
    let svg = std::fs::read_to_string(&fig).unwrap();
    let doc = roxmltree::Document::parse(&svg).expect("well-formed SVG");
    let markers = doc
        .descendants()
        .filter(|n| n.has_tag_name("polygon") && n.attribute("fill") == Some("#D55E00"))
        .count();
    // Six SeqPoint markers in the plot plus the legend's key.
    assert_eq!(markers, 7);

    seqpoint()
        .args(["plot", "--bins", "6", "--what", "error-curve", "-o"])
        .arg(&fig)
        .assert()
        .failure()
        .stderr(predicate::str::contains("--force"));
    assert_eq!(
        std::fs::read_to_string(&fig).unwrap(),
        svg,
        "kept as it was"
    );

    seqpoint()
        .args([
            "plot",
            "--bins",
            "6",
            "--what",
            "error-curve",
            "--force",
            "-o",
        ])
        .arg(&fig)
        .assert()
        .success();
    let curve = std::fs::read_to_string(&fig).unwrap();
    assert!(curve.contains("Worst projection error (%)"));
    assert!(!curve.contains("Padded sequence length"));
}

#[test]
fn completions_name_every_subcommand() {
    for shell in ["bash", "zsh", "fish"] {
        let out = seqpoint().args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.len() > 500, "{shell} script is too short");
        for sub in SUBCOMMANDS {
            assert!(text.contains(sub), "{shell} completions lack {sub}");
        }
        assert!(
            text.contains("target-error"),
            "{shell} completions lack options"
        );
    }
    seqpoint()
        .args(["completions", "powershell"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("bash"));
}

#[test]
fn man_page_lists_subcommands_and_dir_writes_one_page_each() {
    let out = seqpoint().arg("man").output().unwrap();
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains(".TH seqpoint 1"), "{page}");
    for sub in SUBCOMMANDS {
        // The SUBCOMMANDS section points at each subcommand's own page.
        let reference = format!("seqpoint\\-{sub}(1)");
        assert!(page.contains(&reference), "man page lacks {reference}");
    }

    let dir = tempfile::tempdir().unwrap();
    seqpoint()
        .args(["man", "--dir"])
        .arg(dir.path())
        .assert()
        .success();
    for name in [
        "seqpoint.1",
        "seqpoint-select.1",
        "seqpoint-plot.1",
        "seqpoint-completions.1",
        "seqpoint-man.1",
    ] {
        let text = std::fs::read_to_string(dir.path().join(name)).unwrap();
        assert!(text.contains(".TH"), "{name}");
    }
    let plot = std::fs::read_to_string(dir.path().join("seqpoint-plot.1")).unwrap();
    assert!(plot.contains("what"), "the plot page documents --what");
    // Existing pages are kept unless --force.
    seqpoint()
        .args(["man", "--dir"])
        .arg(dir.path())
        .assert()
        .failure()
        .stderr(predicate::str::contains("--force"));
}

#[test]
fn every_subcommand_help_shows_an_example() {
    for sub in SUBCOMMANDS {
        seqpoint()
            .args([sub, "--help"])
            .assert()
            .success()
            .stdout(predicate::str::contains("Examples:"))
            .stdout(predicate::str::contains(format!("seqpoint {sub}")));
    }
}

#[test]
fn misspelled_key_and_metric_suggest_the_column() {
    seqpoint()
        .args(["select", "--key", "seq_lne"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("no key column 'seq_lne'"))
        .stderr(predicate::str::contains("did you mean 'seq_len'?"));
    let dir = tempfile::tempdir().unwrap();
    let fig = dir.path().join("fig.svg");
    seqpoint()
        .args(["plot", "--metric", "time_sm", "-o"])
        .arg(&fig)
        .assert()
        .failure()
        .stderr(predicate::str::contains("no metric column 'time_sm'"))
        .stderr(predicate::str::contains("did you mean 'time_ms'?"));
    assert!(!fig.exists(), "nothing written on a bad column");
}
