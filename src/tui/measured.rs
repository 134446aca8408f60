//! The two-stage flow in the explorer: `:measured FILES` reads measurements of the listed
//! iterations on the new configuration (each round's file) and judges the target on them,
//! and `:top-up FILE` writes the iterations still to measure. Each step is `seqpoint
//! project`'s own library call on the document an export of the screen would write, so the
//! figures are its figures.

use super::app::{Judged, Session};
use super::save::ExportJob;
use crate::output::table::projection_table;
use crate::project::document::{ProjectOptions, RunLength};
use crate::project::merge::{merge_measurements, top_up_document};
use crate::project::project_measured;
use crate::runlog::measured::{read_measured_noted, MeasuredOptions};

/// What the projection table calls the SeqPoints it projects from (no file: the screen's).
pub const ON_SCREEN: &str = "the SeqPoints on screen";

/// Measurements to judge, with the result on screen they measure (as its export).
pub struct MeasureJob {
    pub id: u64,
    /// Each round's file, merged as `project` merges its MEASURED files.
    pub paths: Vec<String>,
    /// The document of what is shown, made as an export makes it.
    pub export: ExportJob,
    /// The target the screen judges by.
    pub target_pct: f64,
}

impl MeasureJob {
    /// Read and judge the measurements; an error reads as `project`'s would.
    pub fn judge(self, session: &Session) -> Result<Judged, String> {
        let doc = self.export.document(session);
        let options = MeasuredOptions {
            metrics: Vec::new(),
            format: None,
            limits: session.load.limits,
        };
        let files = self
            .paths
            .iter()
            .map(|path| read_measured_noted(path, &doc, &options).map(|(file, _)| file))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        let measured = merge_measurements(files).map_err(|e| e.to_string())?;
        let options = ProjectOptions {
            allow_missing: false,
            run_length: RunLength::Logged,
            target_error_pct: Some(self.target_pct),
        };
        // No SeqPoints file: the document is the screen's, named as such in the table.
        let report = project_measured(ON_SCREEN, &doc, None, &measured, &options)
            .map_err(|e| e.to_string())?;
        let met = report.target.as_ref().is_some_and(|t| t.met);
        let top_up = report
            .target
            .as_ref()
            .filter(|t| !t.top_up.is_empty())
            .map(|t| top_up_document(&doc, &t.top_up, t.target_error_pct));
        Ok(Judged {
            path: self.paths.join(", "),
            table: projection_table(&report),
            met,
            top_up,
        })
    }
}
