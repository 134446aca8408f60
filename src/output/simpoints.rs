//! SimPoint files for simulators: `NAME.simpoints` (`<iteration> <id>` per line) and
//! `NAME.weights` (`<weight fraction> <id>`), the two-file format SimPoint 3 writes and
//! simulator tooling reads, with the `seqpoint/1` document as `NAME.json` beside them so
//! `project` still works on what the simulator measures.
//!
//! Both files are made from the document itself, so the three always agree. A SimPoint is
//! one interval per cluster: the files list each SeqPoint's own iteration; a plan's further
//! iterations per SeqPoint are in the JSON only.

use std::path::{Path, PathBuf};

use super::atomic::{write_all_or_none, Replace, WriteError};
use super::json::document_text;
use crate::doc::SelectDoc;

/// The three files of one SimPoint set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimPointPaths {
    pub simpoints: PathBuf,
    pub weights: PathBuf,
    pub json: PathBuf,
}

impl SimPointPaths {
    /// `NAME.simpoints`, `NAME.weights` and `NAME.json`; a NAME that already ends in one of
    /// these extensions names the set it belongs to (`-o run.json` writes `run.simpoints`).
    pub fn of(name: &Path) -> Self {
        let known = ["simpoints", "weights", "json"];
        let base = match name.extension().and_then(|e| e.to_str()) {
            Some(ext) if known.iter().any(|k| k.eq_ignore_ascii_case(ext)) => {
                name.with_extension("")
            }
            _ => name.to_path_buf(),
        };
        let with = |ext: &str| {
            let mut path = base.clone().into_os_string();
            path.push(".");
            path.push(ext);
            PathBuf::from(path)
        };
        SimPointPaths {
            simpoints: with("simpoints"),
            weights: with("weights"),
            json: with("json"),
        }
    }

    fn all(&self) -> [&Path; 3] {
        [&self.simpoints, &self.weights, &self.json]
    }
}

/// `<iteration> <id>` per SeqPoint, in id order.
pub fn simpoints_text(doc: &SelectDoc) -> String {
    doc.seqpoints
        .iter()
        .map(|sp| format!("{} {}\n", sp.iteration, sp.id))
        .collect()
}

/// `<weight fraction> <id>` per SeqPoint, in the order of `simpoints_text`. Each fraction is
/// the SeqPoint's iterations over the run's, written with the shortest digits that read back
/// as the same double, so the fractions sum to 1 to the last bit a reader can tell.
pub fn weights_text(doc: &SelectDoc) -> String {
    let total: u64 = doc.seqpoints.iter().map(|sp| sp.weight).sum();
    doc.seqpoints
        .iter()
        .map(|sp| format!("{} {}\n", sp.weight as f64 / total as f64, sp.id))
        .collect()
}

/// Write the set for the `seqpoint/1` document `doc`, all three files or none
/// (`atomic::write_all_or_none`): a file in the way that `replace` does not allow replacing,
/// or a failed write, leaves every target as it was.
pub fn write_simpoint_set(
    name: &Path,
    doc: &SelectDoc,
    replace: impl Into<Replace>,
) -> Result<SimPointPaths, WriteError> {
    let paths = SimPointPaths::of(name);
    let contents = [simpoints_text(doc), weights_text(doc), document_text(doc)];
    let files: Vec<(&Path, &[u8])> = paths
        .all()
        .into_iter()
        .zip(contents.iter().map(|c| c.as_bytes()))
        .collect();
    write_all_or_none(&files, replace.into())?;
    Ok(paths)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::json::select_document;
    use crate::runlog::LoadOptions;
    use crate::select::{run_selection, BinCount, SelectOptions, Strata};

    /// A document for a generated run of `rows` iterations with keys cycling over `keys`.
    fn doc(rows: usize, keys: u32, bins: usize, strata: Strata) -> SelectDoc {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.csv");
        let mut text = String::from("iteration,epoch,seq_len,time_ms\n");
        for i in 0..rows {
            let key = 10 + (i as u32 * 7) % keys;
            text.push_str(&format!(
                "{i},{},{key},{}\n",
                i * 2 / rows,
                key as f64 * 1.5
            ));
        }
        std::fs::write(&path, text).unwrap();
        let log = crate::runlog::load_run(path.to_str().unwrap(), &LoadOptions::default()).unwrap();
        let options = SelectOptions {
            bins: BinCount::Fixed(bins),
            strata,
            ..SelectOptions::default()
        };
        select_document(&log, &run_selection(&log, &options).unwrap(), None)
    }

    fn parse(text: &str) -> Vec<(String, usize)> {
        text.lines()
            .map(|line| {
                let (value, id) = line.split_once(' ').expect("two fields");
                (value.to_string(), id.parse().unwrap())
            })
            .collect()
    }

    #[test]
    fn lines_pair_each_seqpoint_with_its_iteration_and_share() {
        // Keys 10..=12 cycle over 9 iterations; 3 bins: one key each, 3 iterations each.
        let doc = doc(9, 3, 3, Strata::None);
        let simpoints = parse(&simpoints_text(&doc));
        let weights = parse(&weights_text(&doc));
        assert_eq!(simpoints.len(), 3);
        for ((iteration, id), sp) in simpoints.iter().zip(&doc.seqpoints) {
            assert_eq!(
                (iteration.parse::<u64>().unwrap(), *id),
                (sp.iteration, sp.id)
            );
        }
        // Equal thirds, written so that they read back as 1/3 exactly.
        for (fraction, _) in &weights {
            assert_eq!(fraction.parse::<f64>().unwrap(), 1.0 / 3.0);
        }
        let ids: Vec<usize> = weights.iter().map(|w| w.1).collect();
        assert_eq!(ids, simpoints.iter().map(|s| s.1).collect::<Vec<_>>());
    }

    #[test]
    fn fractions_read_back_to_the_weights_and_sum_to_one() {
        // Uneven bins and a prime number of iterations: no fraction is a short decimal.
        for (rows, keys, bins, strata) in [
            (997, 61, 7, Strata::None),
            (4001, 113, 23, Strata::None),
            (1201, 37, 5, Strata::Epoch),
        ] {
            let doc = doc(rows, keys, bins, strata);
            let total: u64 = doc.seqpoints.iter().map(|sp| sp.weight).sum();
            assert_eq!(total, rows as u64);
            let weights = parse(&weights_text(&doc));
            let mut sum = 0.0;
            for ((fraction, id), sp) in weights.iter().zip(&doc.seqpoints) {
                let fraction: f64 = fraction.parse().unwrap();
                assert_eq!(*id, sp.id);
                // Enough digits: the fraction gives the bin's iterations back exactly.
                assert_eq!((fraction * total as f64).round() as u64, sp.weight);
                assert_eq!(fraction, sp.weight as f64 / total as f64);
                sum += fraction;
            }
            assert!((sum - 1.0).abs() < 1e-12, "{sum}");
            // Ids are unique, so a simulator can join the two files on them.
            let mut ids: Vec<usize> = weights.iter().map(|w| w.1).collect();
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(ids.len(), doc.seqpoints.len());
        }
    }

    #[test]
    fn names_with_a_known_extension_name_the_set() {
        for name in [
            "out/run",
            "out/run.json",
            "out/run.simpoints",
            "out/run.WEIGHTS",
        ] {
            let paths = SimPointPaths::of(Path::new(name));
            assert_eq!(paths.simpoints, Path::new("out/run.simpoints"), "{name}");
            assert_eq!(paths.weights, Path::new("out/run.weights"), "{name}");
            assert_eq!(paths.json, Path::new("out/run.json"), "{name}");
        }
        // Any other extension is part of the name.
        let paths = SimPointPaths::of(Path::new("run.v2"));
        assert_eq!(paths.simpoints, Path::new("run.v2.simpoints"));
    }

    #[test]
    fn an_existing_file_stops_the_whole_set() {
        let doc = doc(60, 9, 3, Strata::None);
        let json = document_text(&doc);
        let dir = tempfile::tempdir().unwrap();
        let name = dir.path().join("sp");
        std::fs::write(dir.path().join("sp.weights"), "keep").unwrap();
        let err = write_simpoint_set(&name, &doc, false).unwrap_err();
        assert!(err
            .to_string()
            .ends_with("sp.weights: already exists; pass --force to overwrite it"));
        assert!(!dir.path().join("sp.simpoints").exists());
        assert!(!dir.path().join("sp.json").exists());
        assert_eq!(
            std::fs::read_to_string(dir.path().join("sp.weights")).unwrap(),
            "keep"
        );

        let paths = write_simpoint_set(&name, &doc, true).unwrap();
        assert_eq!(
            std::fs::read_to_string(&paths.weights).unwrap(),
            weights_text(&doc)
        );
        assert_eq!(
            std::fs::read_to_string(&paths.simpoints).unwrap(),
            simpoints_text(&doc)
        );
        assert_eq!(std::fs::read_to_string(&paths.json).unwrap(), json);
        // Nothing but the three files (no temporary file left behind).
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 3);
    }

    #[test]
    fn a_failed_write_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let first = dir.path().join("sp.simpoints");
        let second = dir.path().join("sp.weights");
        // The third file's folder does not exist: the first two are written, then removed.
        let third = dir.path().join("missing/sp.json");
        let files: Vec<(&Path, &[u8])> =
            vec![(&first, b"0 0\n"), (&second, b"1 0\n"), (&third, b"{}")];
        let err = write_all_or_none(&files, Replace::Never).unwrap_err();
        assert!(err.to_string().contains("missing/sp.json"), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
