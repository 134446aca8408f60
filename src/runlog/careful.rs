//! The careful reader: rows sorted by iteration, duplicates found, every bad field reported by
//! line and column (or skipped under `--skip-bad`). Slower, so it reads what the fast one declines.

use super::columns::{wanted_names, ColumnPlan};
use super::error::LoadError;
use super::format::InputFormat;
use super::jsonl::JsonlTable;
use super::packed::{parse_doc_lens, DocStats};
use super::parse::{
    check_quotes, csv_error, csv_error_text, delimited_records, header_names, is_blank,
    missing_field, named, parse_count, parse_length, parse_metric, width_error,
};
use super::{
    ConfigRole, Configuration, Epochs, Iterations, LoadOptions, MetricColumn, RunLog, SkippedRows,
};
use crate::options::{Surface, INPUT_FORMAT, SKIP_BAD};

/// How many skipped rows `--skip-bad` lists by line.
const SKIPPED_LINES_SHOWN: usize = 5;

/// The careful reader: record by record through the csv crate or serde_json, with exact error
/// locations and `--skip-bad`. The fast reader falls back to it on anything unusual.
pub(super) fn load_bytes_careful(
    path: &str,
    bytes: &[u8],
    format: InputFormat,
    options: &LoadOptions,
) -> Result<RunLog, LoadError> {
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    if body.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(LoadError::file(
            path,
            "the file is empty; expected a header row and one row per iteration",
        ));
    }
    let mut sink = RowSink {
        cut_line: cut_last_line(body),
        ..RowSink::default()
    };
    let plan = match format {
        InputFormat::Csv => read_delimited(path, body, b',', options, &mut sink)?,
        InputFormat::Tsv => read_delimited(path, body, b'\t', options, &mut sink)?,
        InputFormat::Jsonl => read_jsonl(path, body, options, &mut sink)?,
    };
    let share = options
        .skip_bad_share
        .unwrap_or(super::SKIP_BAD_SHARE)
        .clamp(0.0, 1.0);
    sink.finish(path, plan, share)
}

/// The number of the body's last line when it has no line end (a row still being written), if
/// it holds anything.
fn cut_last_line(body: &[u8]) -> Option<u64> {
    let last = body.iter().rposition(|&b| b == b'\n' || b == b'\r');
    let tail = last.map_or(body, |i| &body[i + 1..]);
    if tail.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    Some(memchr::memchr_iter(b'\n', body).count() as u64 + 1)
}

/// Said of a bad row that is the file's last line and has no line end.
const CUT_LINE: &str = "this is the last line and it has no line end: the log looks cut off \
                        mid-row (is the run still writing it?)";

/// Parsed columns, grown row by row. A row is pushed whole or not at all.
#[derive(Default)]
struct RowSink {
    iterations: Vec<u64>,
    epochs: Vec<u32>,
    keys: Vec<u32>,
    metrics: Vec<Vec<f64>>,
    lines: Vec<u64>,
    data_rows_seen: u64,
    skipped: SkippedRows,
    /// The body's last line when it has no line end (see `cut_last_line`).
    cut_line: Option<u64>,
}

/// A bad field: its 0-based column and the message.
type FieldError = (usize, String);

impl RowSink {
    fn push<'a>(
        &mut self,
        plan: &ColumnPlan,
        line: u64,
        field: impl Fn(usize) -> Option<&'a [u8]>,
        names: &[String],
    ) -> Result<(), FieldError> {
        let ordinal = self.data_rows_seen;
        self.data_rows_seen += 1;
        let get = |col: usize| field(col).ok_or_else(|| (col, missing_field(names, col)));
        let iteration = match plan.iteration {
            Some(col) => parse_count(get(col)?).map_err(|m| (col, named(names, col, m)))?,
            None => ordinal,
        };
        let epoch = match plan.epoch {
            Some(col) => Some(
                parse_count(get(col)?)
                    .and_then(|v| {
                        u32::try_from(v).map_err(|_| "expected an epoch below 2^32".into())
                    })
                    .map_err(|m| (col, named(names, col, m)))?,
            ),
            None => None,
        };
        // Two lengths, or the four columns `--key fit` derives.
        let mut key = [0u32; 4];
        // The derived keys share one doc_lens field: it is read once per row.
        let mut lists: Option<DocStats> = None;
        for (slot, &col) in plan.keys.iter().enumerate() {
            let raw = get(col)?;
            key[slot] = match plan.derived[slot] {
                None => parse_length(raw),
                Some(derived) => match lists {
                    Some(stats) => Ok(stats),
                    None => parse_doc_lens(raw),
                }
                .and_then(|stats| {
                    lists = Some(stats);
                    stats.value(derived, raw)
                }),
            }
            .map_err(|m| (col, named(names, col, m)))?;
        }
        let mut metric = [0f64; 8];
        let mut extra = Vec::new();
        for (slot, &col) in plan.metrics.iter().enumerate() {
            let value = parse_metric(get(col)?).map_err(|m| (col, named(names, col, m)))?;
            if slot < metric.len() {
                metric[slot] = value;
            } else {
                extra.push(value);
            }
        }
        self.iterations.push(iteration);
        if let Some(epoch) = epoch {
            self.epochs.push(epoch);
        }
        self.keys.extend_from_slice(&key[..plan.keys.len()]);
        if self.metrics.len() < plan.metrics.len() {
            self.metrics.resize(plan.metrics.len(), Vec::new());
        }
        for (slot, column) in self.metrics.iter_mut().enumerate() {
            column.push(if slot < metric.len() {
                metric[slot]
            } else {
                extra[slot - metric.len()]
            });
        }
        self.lines.push(line);
        Ok(())
    }

    /// Record a bad row: skip it under `--skip-bad`, else fail with its location.
    fn reject(
        &mut self,
        path: &str,
        line: u64,
        column: Option<u64>,
        mut message: String,
        skip_bad: bool,
    ) -> Result<(), LoadError> {
        let cut = self.cut_line == Some(line);
        if cut {
            message.push_str("; ");
            message.push_str(CUT_LINE);
        }
        if !skip_bad {
            if cut {
                message.push_str(&format!(
                    ": wait for it to finish, or pass {} to leave the row out",
                    SKIP_BAD.typed(Surface::CommandLine, "")
                ));
            }
            return Err(LoadError::at(path, line, column, message));
        }
        if cut {
            self.skipped.cut_line = Some(line);
        }
        self.skipped.count += 1;
        if self.skipped.first_lines.len() < SKIPPED_LINES_SHOWN {
            self.skipped.first_lines.push(line);
        }
        if self.skipped.first_reason.is_none() {
            self.skipped.first_reason =
                Some(LoadError::at(path, line, column, message).to_string());
        }
        Ok(())
    }

    /// The columns as a log, sorted by iteration; refused when more than `share` of the rows
    /// were skipped.
    fn finish(mut self, path: &str, plan: ColumnPlan, share: f64) -> Result<RunLog, LoadError> {
        if self.iterations.is_empty() {
            let message = if self.skipped.count > 0 {
                format!(
                    "every row was bad ({} skipped, first: {})",
                    self.skipped.count,
                    self.skipped.first_reason.clone().unwrap_or_default()
                )
            } else {
                "the file has a header but no rows; expected one row per iteration".to_string()
            };
            return Err(LoadError::file(path, message));
        }
        self.check_share(path, share)?;
        let dims = plan.keys.len();
        if !self.iterations.windows(2).all(|w| w[0] < w[1]) {
            let mut order: Vec<usize> = (0..self.iterations.len()).collect();
            order.sort_by_key(|&r| (self.iterations[r], self.lines[r]));
            self.check_duplicates(path, &order)?;
            self.iterations = order.iter().map(|&r| self.iterations[r]).collect();
            if !self.epochs.is_empty() {
                self.epochs = order.iter().map(|&r| self.epochs[r]).collect();
            }
            self.keys = order
                .iter()
                .flat_map(|&r| self.keys[r * dims..(r + 1) * dims].iter().copied())
                .collect();
            for column in &mut self.metrics {
                *column = order.iter().map(|&r| column[r]).collect();
            }
        }
        let metrics = plan
            .metric_names
            .iter()
            .cloned()
            .zip(
                self.metrics
                    .into_iter()
                    .chain(std::iter::repeat(Vec::new())),
            )
            .map(|(name, values)| MetricColumn { name, values })
            .collect();
        Ok(RunLog {
            source: path.to_string(),
            key_names: plan.key_names,
            iterations: Iterations::from_vec(self.iterations),
            epochs: plan.epoch.map(|_| Epochs::from_vec(&self.epochs)),
            keys: self.keys,
            configs: vec![Configuration {
                role: ConfigRole::Baseline,
                source: path.to_string(),
                metrics,
                measurement_like: plan.measurement_like,
            }],
            skipped: self.skipped,
            proxy: None,
            iteration_like: plan.iteration_like,
        })
    }

    /// More rows skipped than `share` of them: the wrong file, format or column, refused
    /// rather than selected from the few left.
    fn check_share(&self, path: &str, share: f64) -> Result<(), LoadError> {
        let skipped = self.skipped.count;
        let rows = skipped + self.iterations.len() as u64;
        if skipped as f64 <= share * rows as f64 {
            return Ok(());
        }
        Err(LoadError::file(
            path,
            format!(
                "{skip_bad} would leave out {skipped} of {rows} rows ({}) and keep {}; \
                 expected at most {} of them bad (first: {}): the file, {} or a \
                 column is likely wrong; pass {skip_bad}=100% to keep what is left",
                percent(skipped as f64 / rows as f64),
                self.iterations.len(),
                percent(share),
                self.skipped.first_reason.clone().unwrap_or_default(),
                INPUT_FORMAT.typed(Surface::CommandLine, ""),
                skip_bad = SKIP_BAD.typed(Surface::CommandLine, ""),
            ),
        ))
    }

    fn check_duplicates(&self, path: &str, order: &[usize]) -> Result<(), LoadError> {
        for pair in order.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            if self.iterations[a] == self.iterations[b] {
                let (first, second) = (
                    self.lines[a].min(self.lines[b]),
                    self.lines[a].max(self.lines[b]),
                );
                return Err(LoadError::at(
                    path,
                    second,
                    None,
                    format!(
                        "duplicate iteration {} (also on line {first}); expected each iteration once",
                        self.iterations[a]
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// A share as a percentage for messages: `50%`, `99.99%`, never `100%` for less than all.
fn percent(share: f64) -> String {
    let pct = 100.0 * share;
    let text = format!("{pct:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "100" && share < 1.0 {
        return "99.99%".to_string();
    }
    format!("{text}%")
}

fn read_delimited(
    path: &str,
    body: &[u8],
    delimiter: u8,
    options: &LoadOptions,
    sink: &mut RowSink,
) -> Result<ColumnPlan, LoadError> {
    if delimiter == b',' {
        check_quotes(path, body, &options.limits)?;
    }
    let mut records = delimited_records(body, delimiter);
    let header_record = match records.next() {
        Some(Ok(record)) => record,
        Some(Err(e)) => return Err(csv_error(path, &e)),
        None => {
            return Err(LoadError::file(
                path,
                "the file is empty; expected a header row",
            ))
        }
    };
    let header = header_names(path, &header_record)?;
    let plan = ColumnPlan::resolve(path, &header, &options.key, &options.metrics)?;
    for record in records {
        let record = match record {
            Ok(record) => record,
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line());
                sink.reject(path, line, None, csv_error_text(&e), options.skip_bad)?;
                continue;
            }
        };
        let line = record.position().map_or(0, |p| p.line());
        if is_blank(&record) {
            continue;
        }
        if record.len() != plan.width {
            let (column, message) = width_error(record.len(), plan.width);
            sink.reject(path, line, Some(column), message, options.skip_bad)?;
            continue;
        }
        if let Err((col, message)) = sink.push(&plan, line, |c| record.get(c), &header) {
            sink.reject(path, line, Some(col as u64 + 1), message, options.skip_bad)?;
        }
    }
    Ok(plan)
}

/// JSON Lines: the columns are every key any line has (not only the first line's), so a
/// metric that starts on line 2 is read, and a line without it is named.
fn read_jsonl(
    path: &str,
    body: &[u8],
    options: &LoadOptions,
    sink: &mut RowSink,
) -> Result<ColumnPlan, LoadError> {
    let Some(table) = JsonlTable::scan(path, body)? else {
        return Err(LoadError::file(
            path,
            "the file is empty; expected JSON objects",
        ));
    };
    table.check_unambiguous(path, &wanted_names(&options.key, &options.metrics))?;
    let names = &table.names;
    let plan = ColumnPlan::resolve(path, names, &options.key, &options.metrics)?;
    let used: Vec<usize> = plan
        .iteration
        .iter()
        .chain(&plan.epoch)
        .chain(&plan.keys)
        .chain(&plan.metrics)
        .copied()
        .collect();
    for (line_no, line) in table.lines() {
        let values = match table.row(line, &used) {
            Ok(values) => values,
            Err((message, column)) => {
                sink.reject(path, line_no, column, message, options.skip_bad)?;
                continue;
            }
        };
        let field = |col: usize| values[col].as_deref().map(str::as_bytes);
        if let Err((col, mut message)) = sink.push(&plan, line_no, field, names) {
            if values[col].is_none() {
                message.extend(table.late_key_note(line_no, col));
            }
            sink.reject(
                path,
                line_no,
                table.column(line, col),
                message,
                options.skip_bad,
            )?;
        }
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runlog::load_bytes;

    fn csv(text: &str) -> Result<RunLog, LoadError> {
        load_bytes(
            "t.csv",
            text.as_bytes(),
            InputFormat::Csv,
            &LoadOptions::default(),
        )
    }

    #[test]
    fn reads_columns_and_sorts_by_iteration() {
        let log = csv("iteration,seq_len,time_ms\n2,30,3.0\n0,10,1.0\n1,20,2.5\n").unwrap();
        assert_eq!(log.iterations.to_vec(), vec![0, 1, 2]);
        assert_eq!(log.keys, vec![10, 20, 30]);
        assert_eq!(log.configs[0].metrics[0].values, vec![1.0, 2.5, 3.0]);
        assert_eq!(log.epochs, None);
    }

    #[test]
    fn bad_length_names_line_column_value() {
        let err = csv("iteration,seq_len,time_ms\n0,10,1\n1,-4,2\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.csv:3:2: column 'seq_len': found \"-4\", expected a non-negative integer length"
        );
    }

    #[test]
    fn nan_metric_is_rejected() {
        let err = csv("seq_len,time_ms\n10,NaN\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.csv:2:2: column 'time_ms': found \"NaN\", expected a finite number (not NaN or infinity)"
        );
    }

    #[test]
    fn duplicate_iteration_is_rejected() {
        let err = csv("iteration,seq_len\n0,10\n1,20\n0,30\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.csv:4: duplicate iteration 0 (also on line 2); expected each iteration once"
        );
    }

    #[test]
    fn skip_bad_counts_rows() {
        let options = LoadOptions {
            skip_bad: true,
            ..LoadOptions::default()
        };
        let text = "seq_len,time_ms\n10,1\nx,2\n20,-1\n30,3\n";
        let log = load_bytes("t.csv", text.as_bytes(), InputFormat::Csv, &options).unwrap();
        assert_eq!(log.keys, vec![10, 30]);
        assert_eq!(log.skipped.count, 2);
        assert_eq!(log.skipped.first_lines, vec![3, 4]);
        // Without an iteration column the iteration is the data row's ordinal, skipped rows included.
        assert_eq!(log.iterations.to_vec(), vec![0, 3]);
    }

    #[test]
    fn skip_bad_is_refused_beyond_its_share() {
        let text = "seq_len,time_ms\n10,1\nx,2\ny,3\n30,3\n";
        let load = |share: Option<f64>| {
            let options = LoadOptions {
                skip_bad: true,
                skip_bad_share: share,
                ..LoadOptions::default()
            };
            load_bytes("t.csv", text.as_bytes(), InputFormat::Csv, &options)
        };
        // Half the rows bad is allowed by default; a smaller share refuses it.
        assert_eq!(load(None).unwrap().skipped.count, 2);
        let err = load(Some(0.25)).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "t.csv: --skip-bad would leave out 2 of 4 rows (50%) and keep 2; expected at \
                 most 25% of them bad (first: t.csv:3:1:"
            ),
            "{err}"
        );
        assert!(load(Some(1.0)).is_ok());
    }

    #[test]
    fn a_cut_last_line_is_found_only_without_a_line_end() {
        assert_eq!(cut_last_line(b"a,b\n1,2\n"), None);
        assert_eq!(cut_last_line(b"a,b\n1,2\r\n"), None);
        assert_eq!(cut_last_line(b"a,b\n1,2\n  "), None);
        assert_eq!(cut_last_line(b"a,b\n1,2\n3"), Some(3));
        assert_eq!(cut_last_line(b"a,b"), Some(1));
        assert_eq!(percent(0.5), "50%");
        assert_eq!(percent(5.0 / 9.0), "55.56%");
        assert_eq!(percent(0.99999999), "99.99%");
        assert_eq!(percent(1.0), "100%");
    }

    #[test]
    fn jsonl_reads_numbers_and_points_at_fields() {
        let text = "{\"iteration\": 0, \"seq_len\": 5, \"time_ms\": 1.5}\n\n{\"iteration\": 1, \"seq_len\": \"7\", \"time_ms\": -2}\n";
        let err = load_bytes(
            "t.jsonl",
            text.as_bytes(),
            InputFormat::Jsonl,
            &LoadOptions::default(),
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.jsonl:3:45: column 'time_ms': found \"-2\", expected a non-negative number"
        );
        let ok = "{\"seq_len\": 5, \"time_ms\": 1.5}\n{\"seq_len\": 7, \"time_ms\": 2}\n";
        let log = load_bytes(
            "t.jsonl",
            ok.as_bytes(),
            InputFormat::Jsonl,
            &LoadOptions::default(),
        )
        .unwrap();
        assert_eq!(log.keys, vec![5, 7]);
    }

    #[test]
    fn short_row_says_how_many_fields() {
        let err = csv("seq_len,time_ms\n10\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.csv:2:2: expected 2 fields as in the header, found 1"
        );
    }

    #[test]
    fn bom_crlf_and_quotes_are_fine() {
        let log = csv("\u{feff}seq_len,\"time_ms\"\r\n\"10\",1.5\r\n").unwrap();
        assert_eq!(log.keys, vec![10]);
    }
}
