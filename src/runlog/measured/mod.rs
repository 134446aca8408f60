//! Reading MEASURED: the profiled iterations' measurements on a new configuration (CSV, TSV or
//! JSON Lines, optionally gzip); each row names its SeqPoint by id, iteration or key.
//!
//! Several rows for one SeqPoint are repeated samples (repeats of one iteration, or other
//! iterations of its bin). Errors name file, line, column, the value found and what was
//! expected, with the run-log reader's error type and field parsers. The columns follow the
//! run-log reader's rules, from its own code: JSON Lines columns are every line's keys, a key
//! twice in one object and two columns that answer one name are errors naming both, and an
//! unterminated CSV quote is refused.
//!
//! A full timed log (every iteration of a run) is read as the rows of the iterations the
//! SeqPoints file lists; the other rows are left out and counted (`MeasuredNotes`). A
//! `traced` column (1/0, as `profile_seqpoints` writes it) says which rows were timed with
//! the profiler on.
//!
//! One job per file: `columns` (which column holds what, and finding a row's SeqPoint),
//! `reader` (the rows, CSV or JSON Lines, into samples); this file holds the types and the
//! entry points.

mod columns;
mod reader;
#[cfg(test)]
mod tests;

use std::collections::HashSet;

use crate::doc::SelectDoc;
use crate::runlog::input::{input_name, read_input};
use crate::runlog::{InputFormat, InputLimits, LoadError};
use reader::parse_measured_part;

/// Column names that hold a SeqPoint's id.
pub const SEQPOINT_ALIASES: &[&str] = &["seqpoint", "seqpoint_id"];

/// The column that says a row was timed with the profiler on (`1`) or off (`0`).
pub const TRACED_COLUMN: &str = "traced";

#[derive(Debug, Clone, Default)]
pub struct MeasuredOptions {
    /// Metric columns to read; empty means the SEQPOINTS.json metrics present in the file.
    pub metrics: Vec<String>,
    pub format: Option<InputFormat>,
    /// Longest line, largest input and memory reading MEASURED may use.
    pub limits: InputLimits,
}

/// How the rows name their SeqPoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identified {
    SeqPoint,
    Iteration,
    Key,
}

impl Identified {
    pub fn name(self) -> &'static str {
        match self {
            Identified::SeqPoint => "seqpoint id",
            Identified::Iteration => "iteration",
            Identified::Key => "key",
        }
    }
}

/// One measured row.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub iteration: Option<u64>,
    pub line: u64,
    /// In the order of `Measurements::metric_names`.
    pub values: Vec<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Measurements {
    pub source: String,
    pub metric_names: Vec<String>,
    pub identified_by: Identified,
    /// Samples per SeqPoint, indexed like the document's `seqpoints`.
    pub samples: Vec<Vec<Sample>>,
}

impl Measurements {
    pub fn rows(&self) -> usize {
        self.samples.iter().map(Vec::len).sum()
    }

    /// Distinct iterations among a SeqPoint's samples; when a row does not say which
    /// iteration it measured, its samples count as repeats of one iteration (conservative).
    pub fn distinct_iterations(&self, seqpoint: usize) -> usize {
        let samples = &self.samples[seqpoint];
        if samples.is_empty() {
            return 0;
        }
        if samples.iter().any(|s| s.iteration.is_none()) {
            return 1;
        }
        samples
            .iter()
            .filter_map(|s| s.iteration)
            .collect::<HashSet<_>>()
            .len()
    }
}

/// What reading one MEASURED file left out, and what it says of how the rows were timed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MeasuredNotes {
    /// The file, as named in messages.
    pub source: String,
    /// Rows read as measurements.
    pub rows: usize,
    /// Rows of iterations the SeqPoints file does not list (a full timed log's other
    /// iterations): left out.
    pub ignored_rows: usize,
    /// The first row left out: its line and iteration.
    pub first_ignored: Option<(u64, u64)>,
    /// Whether the file has a `traced` column.
    pub traced_column: bool,
    /// Each row read that was timed with the profiler on (`traced` 1): its iteration, when
    /// the file names one.
    pub traced: Vec<Option<u64>>,
}

/// Read MEASURED for the SeqPoints of `doc` (a file, `-` for standard input, `.gz` allowed).
pub fn read_measured(
    path: &str,
    doc: &SelectDoc,
    options: &MeasuredOptions,
) -> Result<Measurements, LoadError> {
    read_measured_noted(path, doc, options).map(|(measured, _)| measured)
}

/// `read_measured`, with what reading left out and which rows were traced.
pub fn read_measured_noted(
    path: &str,
    doc: &SelectDoc,
    options: &MeasuredOptions,
) -> Result<(Measurements, MeasuredNotes), LoadError> {
    // The start of a stream is parsed as it arrives: a wrong header is an error at once. A
    // start with no listed iteration is no error yet: a full log may list them later.
    let probe = |name: &str, lines: &[u8], format| {
        parse_measured_part(name, lines, format, doc, options, false).map(|_| ())
    };
    let (bytes, format) = read_input(path, options.format, &options.limits, &probe)?;
    parse_measured_noted(input_name(path), &bytes, format, doc, options)
}

/// Parse MEASURED from bytes in memory; `path` is used in messages only.
pub fn parse_measured(
    path: &str,
    bytes: &[u8],
    format: InputFormat,
    doc: &SelectDoc,
    options: &MeasuredOptions,
) -> Result<Measurements, LoadError> {
    parse_measured_noted(path, bytes, format, doc, options).map(|(measured, _)| measured)
}

/// `parse_measured`, with what reading left out and which rows were traced.
pub fn parse_measured_noted(
    path: &str,
    bytes: &[u8],
    format: InputFormat,
    doc: &SelectDoc,
    options: &MeasuredOptions,
) -> Result<(Measurements, MeasuredNotes), LoadError> {
    parse_measured_part(path, bytes, format, doc, options, true)
}
