//! What projecting measurements is asked for (the run's length, whether SeqPoints may be
//! missing) and how it fails: shared by the document's reading, its checks and the command.

use crate::runlog::LoadError;

/// How long the projected run is, against the logged part the SeqPoints were chosen from.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum RunLength {
    /// As logged.
    #[default]
    Logged,
    /// `--run-epochs E`: the log covers its own epochs of an E-epoch run.
    Epochs(f64),
    /// `--run-iterations N`.
    Iterations(u64),
}

#[derive(Debug, Clone, Default)]
pub struct ProjectOptions {
    pub allow_missing: bool,
    pub run_length: RunLength,
    /// `--target-error PCT`: judge every projected figure and list the top-up.
    pub target_error_pct: Option<f64>,
}

#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error("{}: {message}", crate::text::shown::shown_path(path))]
    Document { path: String, message: String },
    #[error("{0}")]
    Missing(String),
    #[error("{0}")]
    Invalid(String),
}
