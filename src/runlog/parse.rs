//! Field parsers shared by the run-log readers and the measurements reader: counts, lengths
//! and metrics from raw bytes, CSV records and JSON scalars, each error worded the same way.

use super::error::{shown_value, LoadError};
use super::limits::InputLimits;

pub(crate) fn named(names: &[String], col: usize, message: String) -> String {
    format!("column '{}': {message}", names[col].trim())
}

/// A row that lacks a column the header (or another JSON line) has.
pub(crate) fn missing_field(names: &[String], col: usize) -> String {
    format!("column '{}' is missing in this row", names[col].trim())
}

fn text(raw: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(raw)
        .map(str::trim)
        .map_err(|_| format!("found {} (not UTF-8 text)", shown_value(raw)))
}

/// A non-negative integer (iteration, epoch). Integral decimals like `12.0` are accepted.
pub(crate) fn parse_count(raw: &[u8]) -> Result<u64, String> {
    let s = text(raw)?;
    if let Ok(v) = s.parse::<u64>() {
        return Ok(v);
    }
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v < 1.8e19 => Ok(v as u64),
        _ => Err(format!(
            "found {}, expected a non-negative integer",
            shown_value(raw)
        )),
    }
}

/// A padded sequence length: a non-negative integer that fits in 32 bits.
pub(crate) fn parse_length(raw: &[u8]) -> Result<u32, String> {
    let expected = || {
        format!(
            "found {}, expected a non-negative integer length",
            shown_value(raw)
        )
    };
    let value = parse_count(raw).map_err(|_| expected())?;
    u32::try_from(value).map_err(|_| {
        format!(
            "found {}, expected a length of at most {}",
            shown_value(raw),
            u32::MAX
        )
    })
}

/// The largest measurement read: totals, squares for intervals and ratios of two runs' values
/// stay far inside f64 (a value of 1e300 made an interval of [-inf, inf]).
pub const METRIC_MAX: f64 = 1e30;
/// The smallest measurement other than 0: a ratio of 1e150 to 1e-300 is infinite.
pub const METRIC_MIN_POSITIVE: f64 = 1e-30;

/// A measured metric: a finite, non-negative number, 0 or between `METRIC_MIN_POSITIVE` and
/// `METRIC_MAX`.
pub(crate) fn parse_metric(raw: &[u8]) -> Result<f64, String> {
    let s = text(raw)?;
    match s.parse::<f64>() {
        Ok(v) if v > METRIC_MAX && v.is_finite() => Err(format!(
            "found {}, expected a measurement of at most {METRIC_MAX:e} (a larger one would \
             overflow the totals and intervals): rescale the metric (e.g. to seconds)",
            shown_value(raw)
        )),
        Ok(v) if v > 0.0 && v < METRIC_MIN_POSITIVE => Err(format!(
            "found {}, expected 0 or a measurement of at least {METRIC_MIN_POSITIVE:e} (a \
             smaller one would overflow a speedup's ratio): rescale the metric (e.g. to \
             nanoseconds)",
            shown_value(raw)
        )),
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        Ok(v) if v.is_finite() => Err(format!(
            "found {}, expected a non-negative number",
            shown_value(raw)
        )),
        Ok(_) => Err(format!(
            "found {}, expected a finite number (not NaN or infinity)",
            shown_value(raw)
        )),
        Err(_) => Err(format!("found {}, expected a number", shown_value(raw))),
    }
}

/// The raw records of CSV or TSV text, the header among them: rows of any length (a short
/// row gets a message naming its line, not a parse error). In CSV quotes are read as the csv
/// crate reads them (see `check_quotes`); in TSV a quote is an ordinary character.
pub(crate) fn delimited_records(body: &[u8], delimiter: u8) -> csv::ByteRecordsIntoIter<&[u8]> {
    csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .quoting(delimiter != b'\t')
        .from_reader(body)
        .into_byte_records()
}

/// A CSV quote that never closes makes the rest of the file one value, which the csv crate
/// reads without complaint: find it (and any quoted field longer than `--max-line`) by
/// following the csv crate's quoting rules. A quote opens only at the start of a field; in a
/// quoted field `""` is a quote and a lone `"` closes it.
pub(crate) fn check_quotes(path: &str, body: &[u8], limits: &InputLimits) -> Result<(), LoadError> {
    if memchr::memchr(b'"', body).is_none() {
        return Ok(());
    }
    let (mut line, mut field) = (1u64, 1u64);
    let mut at_field_start = true;
    let mut p = 0;
    while p < body.len() {
        let b = body[p];
        if b == b'"' && at_field_start {
            let (open_line, open_field, open_at) = (line, field, p);
            p += 1;
            loop {
                let Some(quote) = memchr::memchr(b'"', &body[p..]).map(|i| p + i) else {
                    return Err(LoadError::at(
                        path,
                        open_line,
                        Some(open_field),
                        "unterminated quote: this field opens with '\"' and never closes, so \
                         the rest of the file would be read as one value; expected a closing \
                         '\"' (or no quote: in CSV a field that starts with '\"' is quoted)",
                    ));
                };
                line += memchr::memchr_iter(b'\n', &body[p..quote]).count() as u64;
                if (quote - open_at) as u64 > limits.max_line {
                    return Err(limits.field_too_long(path, open_line, open_field));
                }
                p = quote + 1;
                if body.get(p) == Some(&b'"') {
                    p += 1;
                    continue;
                }
                break;
            }
            at_field_start = false;
            continue;
        }
        match b {
            b',' => {
                field += 1;
                at_field_start = true;
            }
            b'\n' | b'\r' => {
                if b == b'\n' {
                    line += 1;
                }
                field = 1;
                at_field_start = true;
            }
            _ => at_field_start = false,
        }
        p += 1;
    }
    Ok(())
}

pub(crate) fn csv_error_text(e: &csv::Error) -> String {
    match e.kind() {
        csv::ErrorKind::Utf8 { err, .. } => format!("field {} is not UTF-8 text", err.field() + 1),
        _ => format!("unreadable row ({e})"),
    }
}

pub(crate) fn csv_error(path: &str, e: &csv::Error) -> LoadError {
    let line = e.position().map_or(1, |p| p.line());
    LoadError::at(path, line, None, csv_error_text(e))
}

pub(crate) fn json_scalar_text(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::Number(n) => Some(n.to_string()),
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Bool(b) => Some(b.to_string()),
        // Present but not a scalar: shown as written (`null`, `[1, 2]`), so the message says
        // what was found rather than calling the field missing.
        other => Some(other.to_string()),
    }
}

/// The 1-based column where a field's value starts in a JSON line, for messages.
pub(crate) fn json_field_column(line: &[u8], name: &str) -> Option<u64> {
    let needle = format!("\"{name}\"");
    let start = line
        .windows(needle.len())
        .position(|w| w == needle.as_bytes())?;
    let after = start + needle.len();
    let colon = line[after..].iter().position(|&b| b == b':')? + after;
    let value = line[colon + 1..]
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map_or(colon + 1, |p| p + colon + 1);
    Some(value as u64 + 1)
}

/// The header row's names, trimmed; a name that is not UTF-8 is an error at line 1.
pub(crate) fn header_names(path: &str, header: &csv::ByteRecord) -> Result<Vec<String>, LoadError> {
    header
        .iter()
        .enumerate()
        .map(|(i, field)| {
            std::str::from_utf8(field)
                .map(|s| s.trim().to_string())
                .map_err(|_| {
                    LoadError::at(
                        path,
                        1,
                        Some(i as u64 + 1),
                        format!("header {} is not UTF-8 text", shown_value(field)),
                    )
                })
        })
        .collect()
}

/// A record that is only white space: a blank line, skipped.
pub(crate) fn is_blank(record: &csv::ByteRecord) -> bool {
    record.len() == 1 && record[0].iter().all(u8::is_ascii_whitespace)
}

/// A record with another number of fields than the header: the 1-based column where it
/// differs and the message.
pub(crate) fn width_error(fields: usize, width: usize) -> (u64, String) {
    (
        fields.min(width) as u64 + 1,
        format!("expected {width} fields as in the header, found {fields}"),
    )
}

/// The lines of a JSON Lines body that hold something, with their 1-based numbers (a final
/// `\r` dropped, blank lines skipped; lines ended by `\r` alone when no line has `\n`).
pub(crate) fn jsonl_lines(body: &[u8]) -> impl Iterator<Item = (u64, &[u8])> {
    // Lines ended by a lone `\r` (old Mac line ends), as jq and Python read them: only when
    // the body has no `\n` at all, so a `\r` inside CRLF stays part of its line end.
    let end = if memchr::memchr(b'\n', body).is_none() && memchr::memchr(b'\r', body).is_some() {
        b'\r'
    } else {
        b'\n'
    };
    body.split(move |&b| b == end)
        .enumerate()
        .map(|(index, raw)| (index as u64 + 1, raw.strip_suffix(b"\r").unwrap_or(raw)))
        .filter(|(_, line)| !line.iter().all(u8::is_ascii_whitespace))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quotes(text: &str) -> Result<(), String> {
        check_quotes("t.csv", text.as_bytes(), &InputLimits::default()).map_err(|e| {
            let text = e.to_string();
            text.split(": ").take(1).collect::<String>()
        })
    }

    /// Which records the csv crate reads from `text`, to hold the quote rules against.
    fn records(text: &str) -> usize {
        delimited_records(text.as_bytes(), b',').count()
    }

    #[test]
    fn only_a_quote_that_never_closes_is_refused() {
        // Closed quotes, doubled quotes, a field spanning lines, a quote inside a field.
        for ok in [
            "a,b\n\"x\",1\n",
            "a,b\n\"x\"\"y\",1\n",
            "a,b\n\"two\nlines\",1\n",
            "a,b\nx\"y,1\n",
            "a,b\r\n\"x\"\r\n",
            "a,b\n\"x\"z,1\n",
        ] {
            assert_eq!(quotes(ok), Ok(()), "{ok:?}");
        }
        assert_eq!(quotes("a,b\n1,\"open\n2,3\n"), Err("t.csv:2:2".into()));
        assert_eq!(quotes("a,b\n\"x\n\"\n3,\"\"\"\n"), Err("t.csv:4:2".into()));
        // What the check guards against: the csv crate reads the rest as one value (2 records
        // instead of 4) without an error.
        assert_eq!(records("a,b\n1,\"open\n2,3\n4,5\n"), 2);
        assert_eq!(records("a,b\n1,\"closed\"\n2,3\n4,5\n"), 4);
    }

    #[test]
    fn a_quoted_field_longer_than_the_line_limit_is_refused() {
        let limits = InputLimits {
            max_line: 8,
            ..InputLimits::default()
        };
        let err = check_quotes("t.csv", b"a,b\n1,\"0123456789\"\n", &limits).unwrap_err();
        assert!(err
            .to_string()
            .starts_with("t.csv:2:2: quoted field longer than 8 bytes"));
        assert!(check_quotes("t.csv", b"a,b\n1,\"0123\"\n", &limits).is_ok());
    }

    #[test]
    fn json_lines_ended_by_cr_alone_are_lines() {
        let lines = |body: &[u8]| -> Vec<(u64, Vec<u8>)> {
            jsonl_lines(body).map(|(n, l)| (n, l.to_vec())).collect()
        };
        assert_eq!(
            lines(b"{}\r{\"a\":1}\r\r{}"),
            [
                (1, b"{}".to_vec()),
                (2, b"{\"a\":1}".to_vec()),
                (4, b"{}".to_vec())
            ]
        );
        assert_eq!(
            lines(b"{}\r\n{}\r\n"),
            [(1, b"{}".to_vec()), (2, b"{}".to_vec())]
        );
    }

    #[test]
    fn tsv_has_no_quoting() {
        let rows: Vec<_> = delimited_records(b"a\tb\n\"x\ty\n1\t2\n", b'\t')
            .map(|r| r.unwrap().len())
            .collect();
        assert_eq!(rows, vec![2, 2, 2]);
    }
}
