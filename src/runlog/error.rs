//! Errors raised while reading run logs: each names the file, and where it can the line,
//! the column, the value found and what was expected.

use std::fmt;

use crate::text::shown::shown_path;

/// Where in an input a problem sits. Lines and columns are 1-based, as editors show them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub path: String,
    pub line: Option<u64>,
    pub column: Option<u64>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", shown_path(&self.path))?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        Ok(())
    }
}

/// A run log could not be read. The message is complete on its own: the CLI prints it as is.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("{}: cannot read: {reason}", shown_path(path))]
    Io { path: String, reason: String },
    #[error("{at}: {message}")]
    Bad { at: Location, message: String },
    #[error("{}: {message}", shown_path(path))]
    File { path: String, message: String },
}

impl LoadError {
    pub fn file(path: &str, message: impl Into<String>) -> Self {
        LoadError::File {
            path: path.to_string(),
            message: message.into(),
        }
    }

    pub fn at(path: &str, line: u64, column: Option<u64>, message: impl Into<String>) -> Self {
        LoadError::Bad {
            at: Location {
                path: path.to_string(),
                line: Some(line),
                column,
            },
            message: message.into(),
        }
    }

    /// The 1-based line this error points at, if any.
    pub fn line(&self) -> Option<u64> {
        match self {
            LoadError::Bad { at, .. } => at.line,
            _ => None,
        }
    }
}

/// Shorten a value for an error message so a megabyte-long field does not flood the terminal.
/// Quoted and escaped like a Rust string; bytes that are not UTF-8 show as `\xFF`, so the user
/// sees what is in the file rather than replacement characters.
pub fn shown_value(raw: &[u8]) -> String {
    const LIMIT: usize = 40;
    let mut out = String::from("\"");
    let mut shown = 0;
    for chunk in raw.utf8_chunks() {
        for c in chunk.valid().chars() {
            if shown == LIMIT {
                out.push_str("…\"");
                return out;
            }
            shown += 1;
            if c == '\'' {
                out.push(c);
            } else {
                out.extend(c.escape_debug());
            }
        }
        for byte in chunk.invalid() {
            if shown == LIMIT {
                out.push_str("…\"");
                return out;
            }
            shown += 1;
            out.push_str(&format!("\\x{byte:02X}"));
        }
    }
    out.push('"');
    out
}

/// A column name as shown in a message: control characters escaped and cut to 40 characters.
pub fn shown_name(name: &str) -> String {
    const LIMIT: usize = 40;
    let mut out = printable(&name.chars().take(LIMIT).collect::<String>());
    if name.chars().nth(LIMIT).is_some() {
        out.push('…');
    }
    out
}

/// Text with its control characters escaped: a stray escape sequence in a header must not
/// garble the terminal when the name is printed in a table or a message.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

/// Edit distance, to suggest the column a user probably meant.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = prev[j] + usize::from(ca != cb);
            cur[j + 1] = substitution.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The existing name closest to `wanted`, when it is close enough to be a likely typo.
pub fn closest_name<'a>(wanted: &str, names: &'a [String]) -> Option<&'a str> {
    let wanted = wanted.to_lowercase();
    names
        .iter()
        .map(|name| (edit_distance(&wanted, &name.to_lowercase()), name))
        .filter(|(distance, name)| *distance <= (name.len().max(wanted.len()) / 3).max(2))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_formats_like_a_compiler() {
        let err = LoadError::at("run.csv", 14, Some(3), "bad");
        assert_eq!(err.to_string(), "run.csv:14:3: bad");
    }

    #[test]
    fn suggests_close_names_only() {
        let names = vec![
            "iteration".to_string(),
            "seq_len".to_string(),
            "time_ms".to_string(),
        ];
        assert_eq!(closest_name("seqlen", &names), Some("seq_len"));
        assert_eq!(closest_name("Time_Ms", &names), Some("time_ms"));
        assert_eq!(closest_name("energy_j", &names), None);
    }

    #[test]
    fn long_values_are_cut() {
        let long = vec![b'x'; 1000];
        assert!(shown_value(&long).chars().count() < 50);
        assert_eq!(shown_value(&long[..40]), format!("\"{}\"", "x".repeat(40)));
        assert_eq!(shown_value(&long[..41]), format!("\"{}…\"", "x".repeat(40)));
    }

    #[test]
    fn names_are_cut_and_control_characters_escaped() {
        assert_eq!(shown_name("seq_len"), "seq_len");
        assert_eq!(shown_name("a\x1b[2Jb\n"), "a\\u{1b}[2Jb\\n");
        assert_eq!(shown_name(&"é".repeat(41)), format!("{}…", "é".repeat(40)));
    }

    #[test]
    fn values_are_escaped_and_bytes_shown() {
        assert_eq!(shown_value(b"12"), "\"12\"");
        assert_eq!(shown_value(b"\xff\xfe1"), "\"\\xFF\\xFE1\"");
        assert_eq!(shown_value("é\t\"'".as_bytes()), "\"é\\t\\\"'\"");
        assert_eq!(shown_value(b"\x1b[2J"), "\"\\u{1b}[2J\"");
    }
}
