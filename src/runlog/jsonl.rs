//! JSON Lines read as a table, for the careful run-log reader and the measurements reader
//! alike: the columns are every key any line has (not only the first line's), two keys that
//! answer one wanted name are an error naming both, and a key twice in one object is an error.

use std::collections::{BTreeMap, HashMap};

use super::columns::ambiguity;
use super::error::{shown_name, LoadError};
use super::parse::{json_field_column, json_scalar_text, jsonl_lines};

/// One JSON Lines object's members in the order written, duplicates kept, each value as
/// written (a number's text is shown as the user wrote it, `1E+29` not `1e29`).
struct Members<'a>(Vec<(String, &'a serde_json::value::RawValue)>);

impl<'de> serde::Deserialize<'de> for Members<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                // As serde_json's own map says it, so messages stay as they were.
                f.write_str("a map")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Self::Value, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Visit)
    }
}

/// Why a line is not a row: the message and its 1-based column, if known.
pub(crate) type LineError = (String, Option<u64>);

/// A line's members, or the message and 1-based column of why it is not one JSON object.
fn parse_members(line: &[u8]) -> Result<Members<'_>, LineError> {
    // Read as a map of values first: its errors (a number out of range, say) are the ones
    // this reader has always given, at the same columns.
    serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(line)
        .and_then(|_| serde_json::from_slice(line))
        .map_err(|e: serde_json::Error| {
            // serde_json counts within this one line and may say column 0: keep its reason,
            // drop its own "at line 1 column N", point at our line and a 1-based column.
            let reason = e.to_string();
            let reason = reason
                .rsplit_once(" at line ")
                .map_or(reason.as_str(), |(r, _)| r);
            if let Some((escape, column)) =
                lone_surrogate(line).filter(|_| reason.contains("escape"))
            {
                return (
                    format!(
                        "found {escape} in a string, half of a UTF-16 surrogate pair and no \
                         character by itself; expected one JSON object per line with strings \
                         of whole characters (the writer split a character in two)"
                    ),
                    Some(column),
                );
            }
            (
                format!("expected one JSON object per line ({reason})"),
                Some(e.column().max(1) as u64),
            )
        })
}

/// The first `\uD800`-`\uDFFF` escape in a line that is not one half of a surrogate pair, and
/// its 1-based column: serde_json calls it "unexpected end of hex escape" or the like.
fn lone_surrogate(line: &[u8]) -> Option<(String, u64)> {
    let hex = |at: usize| -> Option<u16> {
        let digits = std::str::from_utf8(line.get(at..at + 4)?).ok()?;
        u16::from_str_radix(digits, 16).ok()
    };
    let mut i = 0;
    while i + 6 <= line.len() {
        if line[i] == b'\\' {
            if line[i + 1] == b'u' {
                if let Some(unit) = hex(i + 2) {
                    let pair = (0xD800..0xDC00).contains(&unit)
                        && line.get(i + 6..i + 8) == Some(&b"\\u"[..])
                        && hex(i + 8).is_some_and(|low| (0xDC00..0xE000).contains(&low));
                    if pair {
                        i += 12;
                        continue;
                    }
                    if (0xD800..0xE000).contains(&unit) {
                        let text = String::from_utf8_lossy(&line[i..i + 6]).into_owned();
                        return Some((text, i as u64 + 1));
                    }
                }
            }
            // An escape is two bytes at least: `\\` must not start another.
            i += 2;
            continue;
        }
        i += 1;
    }
    None
}

/// A member's value as text for the field parsers: a number as written, a string's content,
/// anything else as compact JSON (`null`, `[20,21]`).
fn member_text(raw: &serde_json::value::RawValue) -> Option<String> {
    let text = raw.get();
    if text.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
        return Some(text.to_string());
    }
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .as_ref()
        .and_then(json_scalar_text)
}

/// A JSON Lines body with its columns: the union of every object line's keys.
pub(crate) struct JsonlTable<'a> {
    body: &'a [u8],
    /// The column names, sorted.
    pub names: Vec<String>,
    /// The line each name first appears on.
    first_seen: BTreeMap<String, u64>,
    index: HashMap<String, usize>,
}

impl<'a> JsonlTable<'a> {
    /// Pass 1: the keys of every line that is an object. The first line must be one (a file
    /// whose first line is not JSON is not JSON Lines); later bad lines are left to `row`.
    /// `None` when the body has no line.
    pub(crate) fn scan(path: &str, body: &'a [u8]) -> Result<Option<Self>, LoadError> {
        let mut first_seen: BTreeMap<String, u64> = BTreeMap::new();
        let mut any_line = false;
        for (line_no, line) in jsonl_lines(body) {
            match parse_members(line) {
                Ok(members) => {
                    for (name, _) in members.0 {
                        first_seen.entry(name).or_insert(line_no);
                    }
                }
                Err((message, column)) if !any_line => {
                    return Err(LoadError::at(path, line_no, column, message))
                }
                Err(_) => {}
            }
            any_line = true;
        }
        if !any_line {
            return Ok(None);
        }
        let names: Vec<String> = first_seen.keys().cloned().collect();
        let index = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        Ok(Some(JsonlTable {
            body,
            names,
            first_seen,
            index,
        }))
    }

    /// Two keys that answer one of the `wanted` names (see `columns::ambiguity`) are an error
    /// at whichever of the two the file writes later.
    pub(crate) fn check_unambiguous(
        &self,
        path: &str,
        wanted: &[(&'static str, String)],
    ) -> Result<(), LoadError> {
        let Some(ambiguous) = ambiguity(&self.names, wanted) else {
            return Ok(());
        };
        let second = [ambiguous.first, ambiguous.second]
            .map(|i| &self.names[i])
            .into_iter()
            .max_by_key(|name| self.first_seen[*name])
            .expect("two names");
        let line_no = self.first_seen[second];
        let line = self
            .lines()
            .find(|&(n, _)| n == line_no)
            .map_or(&[][..], |(_, l)| l);
        Err(LoadError::at(
            path,
            line_no,
            json_field_column(line, second),
            ambiguous.message(&self.names),
        ))
    }

    /// The lines that hold something, with their 1-based numbers.
    pub(crate) fn lines(&self) -> impl Iterator<Item = (u64, &'a [u8])> {
        jsonl_lines(self.body)
    }

    /// Pass 2: one line's values by column (`None` where the line lacks the key). A column in
    /// `used` written twice in the object is an error: neither value is guessed.
    pub(crate) fn row(
        &self,
        line: &[u8],
        used: &[usize],
    ) -> Result<Vec<Option<String>>, LineError> {
        let members = parse_members(line)?;
        let mut values: Vec<Option<String>> = vec![None; self.names.len()];
        for (name, raw) in &members.0 {
            let col = self.index[name.as_str()];
            if values[col].is_some() && used.contains(&col) {
                return Err((
                    format!(
                        "key '{}' appears twice in this object; expected each key once",
                        shown_name(name)
                    ),
                    json_field_column(line, name),
                ));
            }
            values[col] = member_text(raw);
        }
        Ok(values)
    }

    /// Where column `col`'s value sits on `line`, for messages.
    pub(crate) fn column(&self, line: &[u8], col: usize) -> Option<u64> {
        json_field_column(line, &self.names[col])
    }

    /// Said after "column 'X' is missing in this row" when the key starts on a later line:
    /// the user sees where the column came from.
    pub(crate) fn late_key_note(&self, line_no: u64, col: usize) -> Option<String> {
        let first = self.first_seen[&self.names[col]];
        (first > line_no)
            .then(|| format!(" (the key first appears on line {first}; expected it on every line)"))
    }
}
