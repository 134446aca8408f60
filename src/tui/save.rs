//! An export: its documents made off the UI thread (`ExportJob`), then its files written, all
//! atomically and all or none, and none when one of them exists and overwriting was not
//! confirmed. The name typed is read as `select -o` reads it (`ExportTargets`).

use std::path::{Path, PathBuf};

use super::app::{ExportPlan, Session};
use crate::doc::SelectDoc;
use crate::output::atomic::write_all_or_none;
use crate::output::csv::select_csv;
use crate::output::gzipped;
use crate::output::json::{document_text, select_file_document};
use crate::output::simpoints::{simpoints_text, weights_text, SimPointPaths};
use crate::select::plan::ProfilePlan;
use crate::select::Selection;

/// The files an export's name stands for, read as `seqpoint select -o` reads it.
#[derive(Debug, Clone, PartialEq)]
pub enum ExportTargets {
    /// `NAME.json` or `NAME.csv`: the JSON document and its CSV list beside it (the explorer
    /// writes both where `select -o` writes the one named); `gzip` for a final `.gz`, which
    /// compresses both as `select -o` compresses its file.
    Pair {
        json: PathBuf,
        csv: PathBuf,
        gzip: bool,
    },
    /// `NAME.simpoints` or `NAME.weights`: the SimPoint set `select -o` writes there.
    SimPoints(SimPointPaths),
}

impl ExportTargets {
    /// Every file written, the one the name chose first.
    pub fn paths(&self) -> Vec<PathBuf> {
        match self {
            ExportTargets::Pair { json, csv, .. } => vec![json.clone(), csv.clone()],
            ExportTargets::SimPoints(set) => {
                vec![set.simpoints.clone(), set.weights.clone(), set.json.clone()]
            }
        }
    }

    /// The files with their contents: the texts `select -o` writes for this name.
    pub fn files(&self, doc: &SelectDoc) -> Result<Vec<(PathBuf, Vec<u8>)>, String> {
        Ok(match self {
            ExportTargets::Pair { json, csv, gzip } => {
                let bytes = |text: String| {
                    if *gzip {
                        gzipped(text.as_bytes()).map_err(|e| format!("compressing the export: {e}"))
                    } else {
                        Ok(text.into_bytes())
                    }
                };
                vec![
                    (json.clone(), bytes(document_text(doc))?),
                    (csv.clone(), bytes(select_csv(doc))?),
                ]
            }
            ExportTargets::SimPoints(set) => vec![
                (set.simpoints.clone(), simpoints_text(doc).into_bytes()),
                (set.weights.clone(), weights_text(doc).into_bytes()),
                (set.json.clone(), document_text(doc).into_bytes()),
            ],
        })
    }
}

pub use super::app::ExportSet;

impl From<ExportPlan> for ExportSet {
    fn from(plan: ExportPlan) -> Self {
        ExportSet {
            files: vec![
                (plan.json_path, plan.json.into_bytes()),
                (plan.csv_path, plan.csv.into_bytes()),
            ],
            overwrite: plan.overwrite,
        }
    }
}

/// How writing an export went.
#[derive(Debug, Clone, PartialEq)]
pub enum ExportOutcome {
    Written(Vec<PathBuf>),
    /// Nothing was written: these files exist and overwriting was not confirmed.
    Exists {
        set: ExportSet,
        existing: Vec<PathBuf>,
    },
    Failed(String),
}

/// The documents of an export, to make on a worker: the naive baselines and a plan's draws
/// still take a moment on a large run, though both reuse the session's key groups and totals.
pub struct ExportJob {
    pub id: u64,
    pub targets: ExportTargets,
    /// The selection on screen when the user asked (the prompt keeps the settings fixed).
    pub selection: Selection,
    /// Its profiling plan, as shown (`select`'s for the same flags).
    pub plan: Option<ProfilePlan>,
    /// The `seqpoint select` line the JSON records.
    pub command: String,
    /// The target a fixed K is judged against on screen: recorded too, though `select --bins
    /// K` has none to record (with auto-K or a plan the document has it already).
    pub judged_by: Option<f64>,
}

impl ExportJob {
    /// The files, as `select -o` writes them for the name; nothing is written yet.
    pub fn make(self, session: &Session) -> Result<ExportSet, String> {
        let doc = self.document(session);
        set_of(&doc, &self.targets)
    }
}

impl ExportJob {
    /// The JSON document, as `select` makes it (`:measured` judges measurements against it).
    pub fn document(&self, session: &Session) -> crate::doc::SelectDoc {
        // What is shown is written: the plan lists every iteration to profile.
        let mut doc = select_file_document(
            &session.log,
            &self.selection,
            self.plan.as_ref(),
            Some(self.command.clone()),
            Some(&session.baselines()),
        );
        // The target the screen judges by, when the document records none.
        if doc.selection.target_error_pct.is_none() {
            doc.selection.target_error_pct = self.judged_by;
        }
        doc
    }
}

/// The export of a document already made (`:top-up`'s list), not yet written.
pub fn set_of(doc: &SelectDoc, targets: &ExportTargets) -> Result<ExportSet, String> {
    Ok(ExportSet {
        files: targets.files(doc)?,
        overwrite: false,
    })
}

/// Write both files of a JSON document and its CSV list.
pub fn write_export(plan: ExportPlan) -> ExportOutcome {
    write_set(plan.into())
}

/// Write every file of `set`, or none; reports where they went as absolute paths.
pub fn write_set(set: ExportSet) -> ExportOutcome {
    if !set.overwrite {
        let existing: Vec<PathBuf> = set
            .files
            .iter()
            .map(|(path, _)| path)
            .filter(|p| p.exists())
            .cloned()
            .collect();
        if !existing.is_empty() {
            return ExportOutcome::Exists { set, existing };
        }
    }
    let files: Vec<(&Path, &[u8])> = set
        .files
        .iter()
        .map(|(path, bytes)| (path.as_path(), bytes.as_slice()))
        .collect();
    if let Err(e) = write_all_or_none(&files, set.overwrite.into()) {
        return ExportOutcome::Failed(e.to_string());
    }
    ExportOutcome::Written(set.files.iter().map(|(p, _)| absolute(p)).collect())
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(dir: &Path, overwrite: bool) -> ExportPlan {
        ExportPlan {
            json_path: dir.join("s.json"),
            csv_path: dir.join("s.csv"),
            json: "{}\n".into(),
            csv: "id\n".into(),
            overwrite,
        }
    }

    #[test]
    fn writes_both_then_refuses_until_confirmed() {
        let dir = tempfile::tempdir().unwrap();
        let written = write_export(plan(dir.path(), false));
        assert!(matches!(written, ExportOutcome::Written(_)), "{written:?}");
        std::fs::write(dir.path().join("s.csv"), "kept").unwrap();
        match write_export(plan(dir.path(), false)) {
            ExportOutcome::Exists { existing, .. } => assert_eq!(existing.len(), 2),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            std::fs::read_to_string(dir.path().join("s.csv")).unwrap(),
            "kept"
        );
        let again = write_export(plan(dir.path(), true));
        assert!(matches!(again, ExportOutcome::Written(_)), "{again:?}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("s.csv")).unwrap(),
            "id\n"
        );
    }

    #[test]
    fn a_missing_folder_is_a_readable_failure() {
        let outcome = write_export(plan(Path::new("/nonexistent-folder"), false));
        match outcome {
            ExportOutcome::Failed(e) => assert!(e.contains("cannot write"), "{e}"),
            other => panic!("{other:?}"),
        }
    }
}
