//! Reading MEASURED's rows, CSV or JSON Lines, into samples per SeqPoint, with what was left
//! out.

use crate::doc::SelectDoc;
use crate::options::{Surface, METRIC};
use crate::runlog::columns::check_header_unambiguous;
use crate::runlog::error::{printable, shown_value};
use crate::runlog::jsonl::JsonlTable;
use crate::runlog::parse::{
    check_quotes, csv_error, csv_error_text, delimited_records, header_names, is_blank,
    missing_field, named, parse_count, parse_length, parse_metric, width_error,
};
use crate::runlog::{InputFormat, LoadError};

use super::columns::{resolve, wanted_names, Columns, SeqPointIndex};
use super::{Identified, MeasuredNotes, MeasuredOptions, Measurements, Sample};

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

/// Parse MEASURED, or the start of it (`whole` false: rows of the listed iterations may
/// still come).
pub(super) fn parse_measured_part(
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
