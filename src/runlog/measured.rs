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

use std::collections::{HashMap, HashSet};

use crate::doc::SelectDoc;
use crate::options::{Surface, METRIC};
use crate::runlog::columns::{
    check_header_unambiguous, column_list, missing_column, DEFAULT_METRICS, ITERATION_ALIASES,
};
use crate::runlog::error::{printable, shown_value};
use crate::runlog::input::{input_name, read_input};
use crate::runlog::jsonl::JsonlTable;
use crate::runlog::parse::{
    check_quotes, csv_error, csv_error_text, delimited_records, header_names, is_blank,
    missing_field, named, parse_count, parse_length, parse_metric, width_error,
};
use crate::runlog::{InputFormat, InputLimits, LoadError, KEY_ALIASES};

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

/// Where each SeqPoint of a document can be found: by id, by iteration, by key.
struct SeqPointIndex<'a> {
    doc: &'a SelectDoc,
    by_id: HashMap<usize, usize>,
    /// The SeqPoint's own iteration, its planned iterations and its alternates.
    by_iteration: HashMap<u64, usize>,
}

impl<'a> SeqPointIndex<'a> {
    fn new(doc: &'a SelectDoc) -> Self {
        let by_id = doc
            .seqpoints
            .iter()
            .enumerate()
            .map(|(i, sp)| (sp.id, i))
            .collect();
        let mut by_iteration = HashMap::new();
        // Earlier entries win: the SeqPoint's own iteration, then the plan, then alternates.
        for (i, sp) in doc.seqpoints.iter().enumerate() {
            by_iteration.entry(sp.iteration).or_insert(i);
        }
        if let Some(plan) = &doc.plan {
            let index_of: HashMap<usize, usize> = doc
                .seqpoints
                .iter()
                .enumerate()
                .map(|(i, sp)| (sp.id, i))
                .collect();
            for row in &plan.profile {
                if let Some(&i) = index_of.get(&row.seqpoint) {
                    by_iteration.entry(row.iteration).or_insert(i);
                }
            }
        }
        for (i, sp) in doc.seqpoints.iter().enumerate() {
            for &alt in &sp.alternates {
                by_iteration.entry(alt).or_insert(i);
            }
        }
        SeqPointIndex {
            doc,
            by_id,
            by_iteration,
        }
    }

    fn by_id(&self, id: u64) -> Result<usize, String> {
        usize::try_from(id)
            .ok()
            .and_then(|id| self.by_id.get(&id).copied())
            .ok_or_else(|| {
                format!(
                    "found SeqPoint {id}, expected one of the {} SeqPoint ids in the SeqPoints file ({})",
                    self.doc.seqpoints.len(),
                    self.ids_text()
                )
            })
    }

    /// The document's ids for a message: `0-3` when they are 0 to N-1, else as listed
    /// (`0, 1, 2, 99`), the first few of many.
    fn ids_text(&self) -> String {
        const SHOWN: usize = 8;
        let mut ids: Vec<usize> = self.by_id.keys().copied().collect();
        ids.sort_unstable();
        match ids.as_slice() {
            [] => "none".to_string(),
            [only] => only.to_string(),
            [first, .., last] if *first == 0 && *last == ids.len() - 1 => format!("{first}-{last}"),
            _ => {
                let mut text: Vec<String> = ids.iter().take(SHOWN).map(usize::to_string).collect();
                if ids.len() > SHOWN {
                    text.push(format!("... {}", ids[ids.len() - 1]));
                }
                text.join(", ")
            }
        }
    }

    /// The SeqPoint an iteration the file lists belongs to (its own, a planned or an
    /// alternate one); `None` for any other iteration.
    fn by_iteration(&self, iteration: u64) -> Option<usize> {
        self.by_iteration.get(&iteration).copied()
    }

    /// The first few iterations the file lists, for a message.
    fn listed_text(&self) -> String {
        const SHOWN: usize = 6;
        let mut listed: Vec<u64> = self.by_iteration.keys().copied().collect();
        listed.sort_unstable();
        let mut text: Vec<String> = listed.iter().take(SHOWN).map(u64::to_string).collect();
        if listed.len() > SHOWN {
            text.push(format!("... {}", listed[listed.len() - 1]));
        }
        text.join(", ")
    }

    /// The SeqPoint whose key this is, else the only bin that holds the key.
    fn by_key(&self, key: &[u32]) -> Result<usize, String> {
        let exact: Vec<usize> = (0..self.doc.seqpoints.len())
            .filter(|&i| self.doc.seqpoints[i].key == key)
            .collect();
        let holding: Vec<usize> = (0..self.doc.seqpoints.len())
            .filter(|&i| {
                let bin = &self.doc.seqpoints[i].bin;
                key.iter()
                    .zip(bin.min.iter().zip(&bin.max))
                    .all(|(k, (lo, hi))| lo <= k && k <= hi)
            })
            .collect();
        let candidates = if exact.len() == 1 { exact } else { holding };
        match candidates.as_slice() {
            [one] => Ok(*one),
            [] => Err(format!(
                "found key {key:?}, expected a key inside one of the SeqPoints' bins"
            )),
            many => Err(format!(
                "key {key:?} lies in the bins of SeqPoints {:?}; add a 'seqpoint' or \
                 'iteration' column to say which",
                many.iter()
                    .map(|&i| self.doc.seqpoints[i].id)
                    .collect::<Vec<_>>()
            )),
        }
    }
}

/// Columns of MEASURED, resolved against its header.
struct Columns {
    seqpoint: Option<usize>,
    iteration: Option<usize>,
    keys: Vec<usize>,
    metrics: Vec<usize>,
    metric_names: Vec<String>,
    identified_by: Identified,
    /// `traced`: 1 when the row was timed with the profiler on.
    traced: Option<usize>,
}

fn find(header: &[String], names: &[&str]) -> Option<usize> {
    names
        .iter()
        .find_map(|n| header.iter().position(|h| super::columns::same_name(h, n)))
}

/// The names a key column of the document is looked up by: its aliases for the default key.
fn key_names(name: &str) -> Vec<&str> {
    if KEY_ALIASES.iter().any(|a| a.eq_ignore_ascii_case(name)) {
        KEY_ALIASES.to_vec()
    } else {
        vec![name]
    }
}

/// The metric names to read: those asked for, else the document's metrics when the header has
/// any of them, else the default metrics.
fn metric_names_wanted(
    header: &[String],
    doc: &SelectDoc,
    options: &MeasuredOptions,
) -> Vec<String> {
    if !options.metrics.is_empty() {
        return options.metrics.clone();
    }
    let doc_metrics: Vec<&str> = doc.input.metrics.iter().map(String::as_str).collect();
    let chosen = [doc_metrics.as_slice(), DEFAULT_METRICS]
        .into_iter()
        .find(|names| names.iter().any(|n| find(header, &[n]).is_some()))
        .unwrap_or_default();
    chosen.iter().map(|n| n.to_string()).collect()
}

/// Every name MEASURED's columns are looked up by, with what it is for, in the form the
/// run-log reader's ambiguity rule takes (`columns::ambiguity`).
fn wanted_names(
    header: &[String],
    doc: &SelectDoc,
    options: &MeasuredOptions,
) -> Vec<(&'static str, String)> {
    let mut wanted: Vec<(&'static str, String)> = Vec::new();
    let mut add = |what: &'static str, names: &[&str]| {
        wanted.extend(names.iter().map(|n| (what, n.to_string())));
    };
    add("seqpoint", SEQPOINT_ALIASES);
    add("iteration", ITERATION_ALIASES);
    add("traced", &[TRACED_COLUMN]);
    for name in &doc.input.key {
        add("key", &key_names(name));
    }
    for name in metric_names_wanted(header, doc, options) {
        add("metric", &[name.as_str()]);
    }
    wanted
}

/// Resolve the columns against a header already checked for ambiguous names.
fn resolve(
    path: &str,
    header: &[String],
    doc: &SelectDoc,
    options: &MeasuredOptions,
) -> Result<Columns, LoadError> {
    let seqpoint = find(header, SEQPOINT_ALIASES);
    let iteration = find(header, ITERATION_ALIASES);
    let keys: Vec<usize> = doc
        .input
        .key
        .iter()
        .map(|name| find(header, &key_names(name)))
        .collect::<Option<_>>()
        .unwrap_or_default();
    let identified_by = if seqpoint.is_some() {
        Identified::SeqPoint
    } else if iteration.is_some() {
        Identified::Iteration
    } else if !keys.is_empty() {
        Identified::Key
    } else {
        return Err(LoadError::at(
            path,
            1,
            None,
            format!(
                "no column names the SeqPoint of a row; expected 'seqpoint' (the id), \
                 'iteration' or the key column{} '{}'; the columns are: {}",
                if doc.input.key.len() > 1 { "s" } else { "" },
                printable(&doc.input.key.join(",")),
                column_list(header)
            ),
        ));
    };
    let mut metrics = Vec::new();
    let mut metric_names = Vec::new();
    for name in metric_names_wanted(header, doc, options) {
        let col = match find(header, &[name.as_str()]) {
            Some(col) => col,
            None if options.metrics.is_empty() => continue,
            None => return Err(missing_column(path, "metric", &name, header)),
        };
        if !metrics.contains(&col) {
            metrics.push(col);
            metric_names.push(printable(header[col].trim()));
        }
    }
    if metrics.is_empty() {
        return Err(LoadError::at(
            path,
            1,
            None,
            format!(
                "no metric column; expected one of the SeqPoints file's metrics ({}) or \
                 --metric COL; the columns are: {}",
                printable(&doc.input.metrics.join(", ")),
                column_list(header)
            ),
        ));
    }
    Ok(Columns {
        seqpoint,
        iteration,
        keys,
        metrics,
        metric_names,
        identified_by,
        traced: find(header, &[TRACED_COLUMN]),
    })
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

/// A row's fields by column, and where a column sits on the row's line (for messages).
trait Row {
    fn field(&self, col: usize) -> Option<&[u8]>;
    fn column(&self, col: usize) -> Option<u64>;
    /// Why column `col` is absent from this row.
    fn missing(&self, names: &[String], col: usize) -> String {
        missing_field(names, col)
    }
}

struct CsvRow<'a>(&'a csv::ByteRecord);

impl Row for CsvRow<'_> {
    fn field(&self, col: usize) -> Option<&[u8]> {
        self.0.get(col)
    }
    fn column(&self, col: usize) -> Option<u64> {
        Some(col as u64 + 1)
    }
}

struct JsonRow<'a> {
    line_no: u64,
    line: &'a [u8],
    table: &'a JsonlTable<'a>,
    values: Vec<Option<String>>,
}

impl Row for JsonRow<'_> {
    fn field(&self, col: usize) -> Option<&[u8]> {
        self.values[col].as_deref().map(str::as_bytes)
    }
    fn column(&self, col: usize) -> Option<u64> {
        self.table.column(self.line, col)
    }
    fn missing(&self, names: &[String], col: usize) -> String {
        let mut message = missing_field(names, col);
        message.extend(self.table.late_key_note(self.line_no, col));
        message
    }
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

/// Parse MEASURED, or the start of it (`whole` false: rows of the listed iterations may
/// still come).
fn parse_measured_part(
    path: &str,
    bytes: &[u8],
    format: InputFormat,
    doc: &SelectDoc,
    options: &MeasuredOptions,
    whole: bool,
) -> Result<(Measurements, MeasuredNotes), LoadError> {
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(LoadError::file(
            path,
            "the file is empty; expected a header row and one row per profiled iteration",
        ));
    }
    let index = SeqPointIndex::new(doc);
    let mut reader = Reader {
        path,
        doc,
        index: &index,
        columns: None,
        header: Vec::new(),
        samples: vec![Vec::new(); doc.seqpoints.len()],
        notes: MeasuredNotes {
            source: path.to_string(),
            ..MeasuredNotes::default()
        },
        first_ignored: None,
    };
    match format {
        InputFormat::Csv => reader.delimited(body, b',', options)?,
        InputFormat::Tsv => reader.delimited(body, b'\t', options)?,
        InputFormat::Jsonl => reader.jsonl(body, options)?,
    }
    let Some(columns) = reader.columns else {
        return Err(LoadError::file(
            path,
            "the file is empty; expected JSON objects, one per profiled iteration",
        ));
    };
    if reader.samples.iter().all(Vec::is_empty) {
        if let Some(first) = reader.first_ignored {
            if !whole {
                return Err(LoadError::file(path, "no listed iteration yet"));
            }
            // Not one row is of an iteration the SeqPoints file lists: the wrong file, or
            // the wrong SeqPoints file; the first row is where to look.
            return Err(first);
        }
        return Err(LoadError::file(
            path,
            "the file has a header but no rows; expected one row per profiled iteration",
        ));
    }
    refuse_all_zero(path, &columns.metric_names, &reader.samples)?;
    reader.notes.traced_column = columns.traced.is_some();
    Ok((
        Measurements {
            source: path.to_string(),
            metric_names: columns.metric_names,
            identified_by: columns.identified_by,
            samples: reader.samples,
        },
        reader.notes,
    ))
}

/// A `traced` field: `1` (or `true`) when the row was timed with the profiler on, `0` (or
/// `false`) when not.
fn parse_traced(raw: &[u8]) -> Result<bool, String> {
    let text = std::str::from_utf8(raw).map(str::trim).unwrap_or("");
    match text.to_ascii_lowercase().as_str() {
        "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err(format!(
            "found {}, expected 1 (timed with the profiler on) or 0 (off)",
            shown_value(raw)
        )),
    }
}

/// A metric measured as 0 in every row projects a total of 0 and a speedup that is no number
/// ("-"): refused, naming the column, as `select` refuses such a column in a run log.
fn refuse_all_zero(path: &str, names: &[String], samples: &[Vec<Sample>]) -> Result<(), LoadError> {
    let rows = samples.iter().map(Vec::len).sum::<usize>();
    for (m, name) in names.iter().enumerate() {
        if samples
            .iter()
            .flatten()
            .all(|sample| sample.values[m] == 0.0)
        {
            let others = if names.len() > 1 {
                format!(
                    ": project the other metrics with {}",
                    METRIC.typed(Surface::CommandLine, "")
                )
            } else {
                String::new()
            };
            return Err(LoadError::file(
                path,
                format!(
                    "column '{}' is 0 in all {rows} rows; expected the profiled iterations' \
                     measurements (a total of 0 has no speedup or interval): is it the right \
                     column, and did the profiler record it?{others}",
                    printable(name)
                ),
            ));
        }
    }
    Ok(())
}

struct Reader<'a> {
    path: &'a str,
    doc: &'a SelectDoc,
    index: &'a SeqPointIndex<'a>,
    columns: Option<Columns>,
    header: Vec<String>,
    samples: Vec<Vec<Sample>>,
    notes: MeasuredNotes,
    /// What the first row left out would be as an error: the error when no row is listed.
    first_ignored: Option<LoadError>,
}

/// The line a CSV record starts on, counted from its byte offset. The csv crate's own line
/// number is one short after a CRLF line end (it ends the record at the `\r` and counts the
/// `\n` with the record after it), which would name the line before the one at fault.
struct LineNumbers<'a> {
    body: &'a [u8],
    /// Newlines before `at`.
    newlines: u64,
    at: usize,
}

impl<'a> LineNumbers<'a> {
    fn new(body: &'a [u8]) -> Self {
        LineNumbers {
            body,
            newlines: 0,
            at: 0,
        }
    }

    /// The line of the record at `position` (positions come in order).
    fn at(&mut self, position: &csv::Position) -> u64 {
        let mut start = (position.byte() as usize).min(self.body.len());
        // A record starts after its line end: a position left on it is the line before.
        while start < self.body.len() && matches!(self.body[start], b'\r' | b'\n') {
            start += 1;
        }
        if start < self.at {
            return position.line();
        }
        self.newlines += memchr::memchr_iter(b'\n', &self.body[self.at..start]).count() as u64;
        self.at = start;
        self.newlines + 1
    }
}

/// One row as read: a measurement of a SeqPoint, or a row of an iteration the SeqPoints
/// file does not list (left out).
enum Parsed {
    Sample {
        seqpoint: usize,
        sample: Sample,
        traced: bool,
    },
    Unlisted {
        iteration: u64,
        /// The iteration's column, and where it sits on the line.
        col: usize,
        column: Option<u64>,
    },
}

impl Reader<'_> {
    /// Keep a row's measurement, or count it as left out.
    fn take(&mut self, line: u64, parsed: Parsed) {
        match parsed {
            Parsed::Sample {
                seqpoint,
                sample,
                traced,
            } => {
                if traced {
                    self.notes.traced.push(sample.iteration);
                }
                self.notes.rows += 1;
                self.samples[seqpoint].push(sample);
            }
            Parsed::Unlisted {
                iteration,
                col,
                column,
            } => {
                self.notes.ignored_rows += 1;
                if self.first_ignored.is_none() {
                    self.notes.first_ignored = Some((line, iteration));
                    let message = format!(
                        "found iteration {iteration}, expected an iteration the SeqPoints file \
                         lists (a SeqPoint's, a planned or an alternate one: {}), and no row \
                         of the file is one: are these the measurements of these SeqPoints? \
                         Add a 'seqpoint' column to name the SeqPoint of other iterations",
                        self.index.listed_text()
                    );
                    self.first_ignored = Some(LoadError::at(
                        self.path,
                        line,
                        column,
                        named(&self.header, col, message),
                    ));
                }
            }
        }
    }

    fn delimited(
        &mut self,
        body: &[u8],
        delimiter: u8,
        options: &MeasuredOptions,
    ) -> Result<(), LoadError> {
        if delimiter == b',' {
            check_quotes(self.path, body, &options.limits)?;
        }
        let mut records = delimited_records(body, delimiter);
        let header = match records.next() {
            Some(Ok(record)) => record,
            Some(Err(e)) => return Err(csv_error(self.path, &e)),
            None => return Ok(()),
        };
        self.header = header_names(self.path, &header)?;
        let wanted = wanted_names(&self.header, self.doc, options);
        check_header_unambiguous(self.path, &self.header, &wanted)?;
        self.columns = Some(resolve(self.path, &self.header, self.doc, options)?);
        let mut lines = LineNumbers::new(body);
        for record in records {
            let record = record.map_err(|e| {
                let line = e.position().map_or(0, |p| lines.at(p));
                LoadError::at(self.path, line, None, csv_error_text(&e))
            })?;
            let line = record.position().map_or(0, |p| lines.at(p));
            if is_blank(&record) {
                continue;
            }
            if record.len() != self.header.len() {
                let (column, message) = width_error(record.len(), self.header.len());
                return Err(LoadError::at(self.path, line, Some(column), message));
            }
            let parsed = self.parse_row(line, &CsvRow(&record))?;
            self.take(line, parsed);
        }
        Ok(())
    }

    /// JSON Lines as the run-log reader reads it: the columns are every line's keys.
    fn jsonl(&mut self, body: &[u8], options: &MeasuredOptions) -> Result<(), LoadError> {
        let Some(table) = JsonlTable::scan(self.path, body)? else {
            return Ok(());
        };
        table.check_unambiguous(self.path, &wanted_names(&table.names, self.doc, options))?;
        self.header = table.names.clone();
        let columns = resolve(self.path, &self.header, self.doc, options)?;
        let used: Vec<usize> = columns
            .seqpoint
            .iter()
            .chain(&columns.iteration)
            .chain(&columns.keys)
            .chain(&columns.metrics)
            .chain(&columns.traced)
            .copied()
            .collect();
        self.columns = Some(columns);
        for (line_no, line) in table.lines() {
            let values = table
                .row(line, &used)
                .map_err(|(message, column)| LoadError::at(self.path, line_no, column, message))?;
            let row = JsonRow {
                line_no,
                line,
                table: &table,
                values,
            };
            let parsed = self.parse_row(line_no, &row)?;
            self.take(line_no, parsed);
        }
        Ok(())
    }

    /// Parse one row: its SeqPoint (index) and the sample, or a row of an iteration the
    /// SeqPoints file does not list.
    fn parse_row(&self, line: u64, row: &dyn Row) -> Result<Parsed, LoadError> {
        let columns = self.columns.as_ref().expect("header resolved first");
        let header = &self.header;
        let at = |col: usize, message: String| {
            LoadError::at(
                self.path,
                line,
                row.column(col),
                named(header, col, message),
            )
        };
        let get = |col: usize| {
            row.field(col)
                .ok_or_else(|| LoadError::at(self.path, line, None, row.missing(header, col)))
        };
        let iteration = match columns.iteration {
            Some(col) => Some(parse_count(get(col)?).map_err(|m| at(col, m))?),
            None => None,
        };
        let seqpoint = match columns.identified_by {
            Identified::SeqPoint => {
                let col = columns.seqpoint.expect("seqpoint column");
                let id = parse_count(get(col)?).map_err(|m| at(col, m))?;
                let found = self.index.by_id(id).map_err(|m| at(col, m))?;
                // A listed iteration must belong to the SeqPoint the row names.
                if let (Some(it), Some(it_col)) = (iteration, columns.iteration) {
                    if let Some(other) = self.index.by_iteration(it) {
                        if other != found {
                            return Err(at(
                                it_col,
                                format!(
                                    "iteration {it} belongs to SeqPoint {}, but the row names SeqPoint {id}",
                                    self.doc.seqpoints[other].id
                                ),
                            ));
                        }
                    }
                }
                found
            }
            Identified::Iteration => {
                let col = columns.iteration.expect("iteration column");
                let it = iteration.expect("parsed above");
                match self.index.by_iteration(it) {
                    Some(found) => found,
                    // Another iteration of a full timed log: left out, its other fields
                    // unread. Should no row be listed, the first is the error.
                    None => {
                        return Ok(Parsed::Unlisted {
                            iteration: it,
                            col,
                            column: row.column(col),
                        })
                    }
                }
            }
            Identified::Key => {
                let mut key = Vec::with_capacity(columns.keys.len());
                for &col in &columns.keys {
                    key.push(parse_length(get(col)?).map_err(|m| at(col, m))?);
                }
                self.index
                    .by_key(&key)
                    .map_err(|m| at(columns.keys[0], m))?
            }
        };
        let mut values = Vec::with_capacity(columns.metrics.len());
        for &col in &columns.metrics {
            values.push(parse_metric(get(col)?).map_err(|m| at(col, m))?);
        }
        let traced = match columns.traced {
            Some(col) => parse_traced(get(col)?).map_err(|m| at(col, m))?,
            None => false,
        };
        Ok(Parsed::Sample {
            seqpoint,
            sample: Sample {
                iteration,
                line,
                values,
            },
            traced,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::json::select_document;
    use crate::runlog::{load_bytes, LoadOptions};
    use crate::select::{run_selection, BinCount, SelectOptions};

    /// Keys 10 (rows 0, 3), 20 (rows 1, 4), 30 (rows 2, 5): three SeqPoints, one per key.
    fn doc() -> SelectDoc {
        let text =
            "iteration,seq_len,time_ms\n0,10,1\n1,20,2\n2,30,3\n3,10,1.5\n4,20,2.5\n5,30,3.5\n";
        let log = load_bytes(
            "run.csv",
            text.as_bytes(),
            InputFormat::Csv,
            &LoadOptions::default(),
        )
        .unwrap();
        let options = SelectOptions {
            bins: BinCount::Fixed(3),
            ..SelectOptions::default()
        };
        select_document(&log, &run_selection(&log, &options).unwrap(), None)
    }

    fn parse(text: &str, format: InputFormat) -> Result<Measurements, LoadError> {
        parse_measured(
            "m.csv",
            text.as_bytes(),
            format,
            &doc(),
            &MeasuredOptions::default(),
        )
    }

    #[test]
    fn unknown_ids_are_told_the_ids_there_are() {
        let mut doc = doc();
        let index = SeqPointIndex::new(&doc);
        let n = doc.seqpoints.len();
        assert_eq!(index.ids_text(), format!("0-{}", n - 1));
        let last = doc.seqpoints.len() - 1;
        doc.seqpoints[last].id = 99;
        let index = SeqPointIndex::new(&doc);
        let listed: Vec<String> = (0..last)
            .map(|i| i.to_string())
            .chain(["99".into()])
            .collect();
        assert_eq!(index.ids_text(), listed.join(", "));
        let err = index.by_id(last as u64).unwrap_err();
        assert!(
            err.ends_with(&format!("SeqPoints file ({})", listed.join(", "))),
            "{err}"
        );
    }

    #[test]
    fn rows_find_their_seqpoint_by_id_iteration_or_key() {
        let doc = doc();
        let own: Vec<u64> = doc.seqpoints.iter().map(|s| s.iteration).collect();
        let alternates: Vec<u64> = doc.seqpoints.iter().map(|s| s.alternates[0]).collect();
        let by_iteration = format!(
            "iteration,time_ms\n{},0.5\n{},0.7\n{},1\n{},1.5\n",
            own[0], alternates[0], own[1], own[2]
        );
        let m = parse(&by_iteration, InputFormat::Csv).unwrap();
        assert_eq!(m.identified_by, Identified::Iteration);
        assert_eq!(m.samples[0].len(), 2);
        assert_eq!(m.distinct_iterations(0), 2);
        assert_eq!(m.samples[0][1].values, vec![0.7]);
        assert_eq!(m.samples[0][1].line, 3);

        let m = parse("seqpoint\ttime_ms\n2\t1\n2\t1.2\n0\t3\n", InputFormat::Tsv).unwrap();
        assert_eq!(m.identified_by, Identified::SeqPoint);
        assert_eq!(
            m.samples.iter().map(Vec::len).collect::<Vec<_>>(),
            [1, 0, 2]
        );
        // No iteration column: the two samples may repeat one iteration.
        assert_eq!(m.distinct_iterations(2), 1);

        let m = parse("sl,time_ms\n20,1\n30,2\n10,3\n", InputFormat::Csv).unwrap();
        assert_eq!(m.identified_by, Identified::Key);
        assert_eq!(m.samples[1][0].values, vec![1.0]);
        assert_eq!(m.rows(), 3);

        let jsonl = "{\"seqpoint\": 1, \"time_ms\": 2.5}\n\n{\"seqpoint\": 1, \"time_ms\": 2.25}\n";
        let m = parse(jsonl, InputFormat::Jsonl).unwrap();
        assert_eq!(m.samples[1].len(), 2);
    }

    #[test]
    fn errors_name_file_line_column_value_and_expectation() {
        let err = |text: &str, format| parse(text, format).unwrap_err().to_string();
        assert_eq!(
            err("seqpoint,time_ms\n0,1\n7,2\n", InputFormat::Csv),
            "m.csv:3:1: column 'seqpoint': found SeqPoint 7, expected one of the 3 SeqPoint ids in the SeqPoints file (0-2)"
        );
        assert_eq!(
            err("seqpoint,time_ms\n0,fast\n", InputFormat::Csv),
            "m.csv:2:2: column 'time_ms': found \"fast\", expected a number"
        );
        assert!(err("iteration,time_ms\n99,1\n", InputFormat::Csv).starts_with(
            "m.csv:2:1: column 'iteration': found iteration 99, expected an iteration the SeqPoints file lists"
        ));
        assert_eq!(
            err("seq_len,time_ms\n40,1\n", InputFormat::Csv),
            "m.csv:2:1: column 'seq_len': found key [40], expected a key inside one of the SeqPoints' bins"
        );
        assert!(err("step_no,time_ms\n1,1\n", InputFormat::Csv)
            .starts_with("m.csv:1: no column names the SeqPoint of a row; expected 'seqpoint'"));
        assert!(err("seqpoint,energy\n1,1\n", InputFormat::Csv).starts_with(
            "m.csv:1: no metric column; expected one of the SeqPoints file's metrics (time_ms)"
        ));
        assert_eq!(
            err("seqpoint,time_ms\n0\n", InputFormat::Csv),
            "m.csv:2:2: expected 2 fields as in the header, found 1"
        );
        assert_eq!(
            err("{\"seqpoint\": 0, \"time_ms\": -1}\n", InputFormat::Jsonl),
            "m.csv:1:28: column 'time_ms': found \"-1\", expected a non-negative number"
        );
        assert!(err("{\"seqpoint\": 0,\n", InputFormat::Jsonl).starts_with("m.csv:1:"));
        assert_eq!(
            err("seqpoint,time_ms\n", InputFormat::Csv),
            "m.csv: the file has a header but no rows; expected one row per profiled iteration"
        );
        assert!(err("  \n", InputFormat::Csv).contains("the file is empty"));
    }

    fn parse_noted(text: &str, format: InputFormat) -> (Measurements, MeasuredNotes) {
        parse_measured_noted(
            "m.csv",
            text.as_bytes(),
            format,
            &doc(),
            &MeasuredOptions::default(),
        )
        .unwrap()
    }

    /// A full timed log (every iteration of the run) is read as the rows of the iterations
    /// the SeqPoints file lists; the others are left out and counted.
    #[test]
    fn a_full_timed_log_gives_the_listed_rows_and_counts_the_others() {
        let doc = doc();
        let listed: HashSet<u64> = doc
            .seqpoints
            .iter()
            .flat_map(|sp| std::iter::once(sp.iteration).chain(sp.alternates.iter().copied()))
            .collect();
        let mut text = "iteration,seq_len,time_ms\n".to_string();
        for it in 0..40u64 {
            text.push_str(&format!("{it},{},{}.5\n", 10 + 10 * (it % 3), it));
        }
        let (m, notes) = parse_noted(&text, InputFormat::Csv);
        let unlisted = (0..40).filter(|it| !listed.contains(it)).count();
        assert!(unlisted > 30, "{listed:?}");
        assert_eq!(notes.ignored_rows, unlisted);
        assert_eq!(notes.rows, 40 - unlisted);
        assert_eq!(m.rows(), notes.rows);
        let first = (0..40).find(|it| !listed.contains(it)).unwrap();
        assert_eq!(notes.first_ignored, Some((first + 2, first)));
        // The rows kept are exactly the listed ones, each with its own value.
        for sample in m.samples.iter().flatten() {
            let it = sample.iteration.unwrap();
            assert!(listed.contains(&it));
            assert_eq!(sample.values, vec![it as f64 + 0.5]);
        }
        // A file of listed rows only leaves nothing out, and has no traced column.
        let (_, notes) = parse_noted(
            &format!("iteration,time_ms\n{},1\n", doc.seqpoints[0].iteration),
            InputFormat::Csv,
        );
        assert_eq!((notes.ignored_rows, notes.traced_column), (0, false));
        // JSON Lines alike; an unlisted row's other fields are not read.
        let jsonl = format!(
            "{{\"iteration\": 999, \"time_ms\": \"n/a\"}}\n{{\"iteration\": {}, \"time_ms\": 2}}\n",
            doc.seqpoints[1].iteration
        );
        let (m, notes) = parse_noted(&jsonl, InputFormat::Jsonl);
        assert_eq!((m.rows(), notes.ignored_rows), (1, 1));
        assert_eq!(notes.first_ignored, Some((1, 999)));
    }

    /// Not one row of a listed iteration: the first row is the error, saying what is listed.
    #[test]
    fn a_file_without_one_listed_iteration_is_an_error_at_its_first_row() {
        let err = parse("iteration,time_ms\n99,1\n98,2\n", InputFormat::Csv)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with(
                "m.csv:2:1: column 'iteration': found iteration 99, expected an iteration the \
                 SeqPoints file lists (a SeqPoint's, a planned or an alternate one: 0, 1, 2, 3, \
                 4, 5), and no row of the file is one"
            ),
            "{err}"
        );
        // The start of a stream with no listed row yet is no error (later rows may be).
        let part = parse_measured_part(
            "m.csv",
            b"iteration,time_ms\n99,1\n98,2\n",
            InputFormat::Csv,
            &doc(),
            &MeasuredOptions::default(),
            false,
        )
        .unwrap_err();
        assert_eq!(part.line(), None);
    }

    /// A `traced` column (as `profile_seqpoints` writes it) says which rows were timed with the
    /// profiler on; any other value is an error at its field.
    #[test]
    fn the_traced_column_marks_rows_timed_with_the_profiler_on() {
        let doc = doc();
        let its: Vec<u64> = doc.seqpoints.iter().map(|sp| sp.iteration).collect();
        let text = format!(
            "iteration,seqpoint,time_ms,traced\n{},0,1,1\n{},1,2,0\n{},2,3,true\n",
            its[0], its[1], its[2]
        );
        let (m, notes) = parse_noted(&text, InputFormat::Csv);
        assert_eq!(m.rows(), 3);
        assert!(notes.traced_column);
        assert_eq!(notes.traced, vec![Some(its[0]), Some(its[2])]);
        let jsonl = "{\"seqpoint\": 0, \"time_ms\": 1, \"traced\": false}\n\
                     {\"seqpoint\": 1, \"time_ms\": 1, \"traced\": 1}\n";
        let (_, notes) = parse_noted(jsonl, InputFormat::Jsonl);
        assert_eq!(notes.traced, vec![None]);
        let err = |text: &str| parse(text, InputFormat::Csv).unwrap_err().to_string();
        assert_eq!(
            err("seqpoint,time_ms,traced\n0,1,yes\n"),
            "m.csv:2:3: column 'traced': found \"yes\", expected 1 (timed with the profiler on) \
             or 0 (off)"
        );
        assert!(err("seqpoint,time_ms,traced\n0,1,\n").starts_with("m.csv:2:3: column 'traced'"));
        // Two columns that answer to 'traced' are ambiguous, as any other column's names.
        assert!(
            err("seqpoint,time_ms,traced,Traced\n0,1,0,0\n").contains("traced"),
            "{}",
            err("seqpoint,time_ms,traced,Traced\n0,1,0,0\n")
        );
    }

    /// Line numbers are the lines' own whatever the line ends (LF, CRLF, a lone CR in a
    /// quoted field), blank lines counted.
    #[test]
    fn errors_name_the_line_after_crlf_line_ends() {
        let err = |text: &str| parse(text, InputFormat::Csv).unwrap_err().to_string();
        for (text, line) in [
            ("seqpoint,time_ms\r\n0,1\r\n1,x\r\n", 3),
            ("seqpoint,time_ms\n0,1\n1,x\n", 3),
            ("seqpoint,time_ms\r\n\r\n0,1\r\n\r\n1,x\r\n", 5),
            ("seqpoint,time_ms\r\n0,\"1\"\r\n1,x", 3),
        ] {
            assert!(
                err(text).starts_with(&format!("m.csv:{line}:2: column 'time_ms'")),
                "{text:?}: {}",
                err(text)
            );
        }
        let (_, notes) = parse_noted("iteration,time_ms\r\n99,1\r\n0,1\r\n", InputFormat::Csv);
        assert_eq!(notes.first_ignored, Some((2, 99)));
    }

    #[test]
    fn named_metrics_must_exist_and_an_iteration_must_match_its_seqpoint() {
        let options = MeasuredOptions {
            metrics: vec!["time_mss".into()],
            ..MeasuredOptions::default()
        };
        let err = parse_measured(
            "m.csv",
            b"seqpoint,time_ms\n0,1\n",
            InputFormat::Csv,
            &doc(),
            &options,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("no metric column 'time_mss'") && err.contains("did you mean 'time_ms'?"),
            "{err}"
        );
        let doc = doc();
        let text = format!(
            "seqpoint,iteration,time_ms\n1,{},1\n",
            doc.seqpoints[0].iteration
        );
        let err = parse(&text, InputFormat::Csv).unwrap_err().to_string();
        assert!(
            err.starts_with("m.csv:2:2: column 'iteration': iteration"),
            "{err}"
        );
        assert!(
            err.contains("belongs to SeqPoint 0, but the row names SeqPoint 1"),
            "{err}"
        );
    }
}
