//! Writing an export: the JSON document and the CSV list, each atomically, and neither when
//! one of them exists and overwriting was not confirmed.

use std::path::{Path, PathBuf};

use super::app::ExportPlan;
use super::update::ExportOutcome;
use crate::export::write_atomically;

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
    for (path, text) in [(&plan.json_path, &plan.json), (&plan.csv_path, &plan.csv)] {
        if let Err(e) = write_atomically(path, text.as_bytes(), plan.overwrite) {
            return ExportOutcome::Failed(e.to_string());
        }
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
