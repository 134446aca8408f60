//! Input formats: CSV, TSV or JSON Lines, named by the user, by the file's extension, or
//! sniffed from its first line.

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InputFormat {
    Csv,
    Tsv,
    Jsonl,
}

pub(super) fn format_from_extension(path: &str) -> Option<InputFormat> {
    let lower = path.to_ascii_lowercase();
    let ext = lower.rsplit('.').next()?;
    match ext {
        "csv" => Some(InputFormat::Csv),
        "tsv" | "tab" => Some(InputFormat::Tsv),
        "jsonl" | "ndjson" | "json" => Some(InputFormat::Jsonl),
        _ => None,
    }
}

/// Guess from the content: JSON Lines start with `{`, TSV headers hold tabs.
pub(super) fn sniff_format(bytes: &[u8]) -> InputFormat {
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let first_line = body.split(|&b| b == b'\n').next().unwrap_or(&[]);
    match first_line.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => InputFormat::Jsonl,
        _ if first_line.contains(&b'\t') && !first_line.contains(&b',') => InputFormat::Tsv,
        _ => InputFormat::Csv,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffing_and_extensions() {
        assert_eq!(sniff_format(b"{\"a\":1}"), InputFormat::Jsonl);
        assert_eq!(sniff_format(b"a\tb\n1\t2"), InputFormat::Tsv);
        assert_eq!(sniff_format(b"a,b\n"), InputFormat::Csv);
        assert_eq!(format_from_extension("x/run.TSV"), Some(InputFormat::Tsv));
        assert_eq!(format_from_extension("run"), None);
    }
}
