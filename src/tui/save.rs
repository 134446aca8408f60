//! An export: its documents made off the UI thread (`ExportJob`), then the JSON document and
//! the CSV list written, each atomically, and neither when one of them exists and overwriting
//! was not confirmed.

use std::path::{Path, PathBuf};

use super::app::{ExportPlan, Session};
use crate::output::atomic::write_all_or_none;
use crate::output::csv::select_csv;
use crate::output::json::{document_text, select_file_document};
use crate::select::plan::ProfilePlan;
use crate::select::Selection;

/// How writing an export went.
#[derive(Debug, Clone, PartialEq)]
pub enum ExportOutcome {
    Written {
        json: PathBuf,
        csv: PathBuf,
    },
    /// Nothing was written: these files exist and overwriting was not confirmed.
    Exists {
        plan: ExportPlan,
        existing: Vec<PathBuf>,
    },
    Failed(String),
}

/// The documents of an export, to make on a worker: the naive baselines and a plan's draws
/// still take a moment on a large run, though both reuse the session's key groups and totals.
pub struct ExportJob {
    pub id: u64,
    pub json_path: PathBuf,
    pub csv_path: PathBuf,
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
    /// Both documents, as `select` writes them; nothing is written yet.
    pub fn make(self, session: &Session) -> Result<ExportPlan, String> {
        let doc = self.document(session);
        Ok(ExportPlan {
            json: document_text(&doc),
            csv: select_csv(&doc),
            json_path: self.json_path,
            csv_path: self.csv_path,
            overwrite: false,
        })
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

/// An export plan for a document already made (`:top-up`'s list).
pub fn plan_of(doc: &crate::doc::SelectDoc, json_path: PathBuf, csv_path: PathBuf) -> ExportPlan {
    ExportPlan {
        json: document_text(doc),
        csv: select_csv(doc),
        json_path,
        csv_path,
        overwrite: false,
    }
}

/// Write both files of `plan`; reports where they went as absolute paths.
pub fn write_export(plan: ExportPlan) -> ExportOutcome {
    if !plan.overwrite {
        let existing: Vec<PathBuf> = [&plan.json_path, &plan.csv_path]
            .into_iter()
            .filter(|p| p.exists())
            .cloned()
            .collect();
        if !existing.is_empty() {
            return ExportOutcome::Exists { plan, existing };
        }
    }
    let files = [
        (plan.json_path.as_path(), plan.json.as_bytes()),
        (plan.csv_path.as_path(), plan.csv.as_bytes()),
    ];
    if let Err(e) = write_all_or_none(&files, plan.overwrite.into()) {
        return ExportOutcome::Failed(e.to_string());
    }
    ExportOutcome::Written {
        json: absolute(&plan.json_path),
        csv: absolute(&plan.csv_path),
    }
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
        assert!(
            matches!(written, ExportOutcome::Written { .. }),
            "{written:?}"
        );
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
        assert!(matches!(again, ExportOutcome::Written { .. }), "{again:?}");
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
