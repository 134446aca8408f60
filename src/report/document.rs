//! The `seqpoint-report/1` document: the checks a report made, as written and read back.

use serde::{Deserialize, Serialize};

use super::Finding;

pub const REPORT_SCHEMA: &str = "seqpoint-report/1";

/// The input a report was made on, as recorded in its JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportInput {
    pub path: String,
    pub compare: Option<String>,
    /// Iterations checked: the log's rows less the excluded ones.
    pub iterations: u64,
    /// Rows of the log left out by `--exclude` (0, and not written, without it).
    #[serde(default, skip_serializing_if = "crate::doc::is_zero")]
    pub excluded_iterations: u64,
    /// The `--exclude` ranges, merged, as "A-B" (not written without them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    pub epochs: Option<u32>,
    pub key: Vec<String>,
    pub metrics: Vec<String>,
    /// Rows `--skip-bad` left out of the log (absent when none were).
    #[serde(default, skip_serializing_if = "crate::doc::is_zero")]
    pub skipped_rows: u64,
}

/// The `seqpoint-report/1` JSON document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportDoc {
    pub schema: String,
    pub input: ReportInput,
    pub findings: Vec<Finding>,
}
