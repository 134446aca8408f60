//! Getting an input's bytes: a file, standard input (`-`) or a bundled `sample:` name,
//! gunzipped when compressed, with its format. Shared by the run-log and measurements readers.

use std::io::Read;

use super::error::LoadError;
use super::format::{format_from_extension, sniff_format, InputFormat};

/// How an input is named in messages: standard input (`-`) by that name.
pub(crate) fn shown_path(path: &str) -> &str {
    if path == "-" {
        "<stdin>"
    } else {
        path
    }
}

/// The bytes of an input (a file, `-` for standard input, or a bundled `sample:` name),
/// gunzipped, and its format: `format` if given, else from the extension, else sniffed.
/// Shared by every reader of tabular input (run logs, measurements).
pub(crate) fn read_input(
    path: &str,
    format: Option<InputFormat>,
) -> Result<(std::borrow::Cow<'static, [u8]>, InputFormat), LoadError> {
    if let Some(bytes) = super::sample::sample_bytes(path) {
        return Ok((bytes.into(), format.unwrap_or(InputFormat::Csv)));
    }
    let raw = read_all(path)?;
    let (bytes, stem) = if raw.starts_with(&[0x1f, 0x8b]) {
        (
            gunzip(shown_path(path), &raw)?,
            path.strip_suffix(".gz").unwrap_or(path),
        )
    } else {
        (raw, path)
    };
    let format = format
        .or_else(|| format_from_extension(stem))
        .unwrap_or_else(|| sniff_format(&bytes));
    Ok((bytes.into(), format))
}

fn read_all(path: &str) -> Result<Vec<u8>, LoadError> {
    let io_error = |e: std::io::Error| LoadError::Io {
        path: shown_path(path).to_string(),
        reason: e.to_string(),
    };
    if path == "-" {
        let mut buf = Vec::new();
        std::io::stdin().read_to_end(&mut buf).map_err(io_error)?;
        return Ok(buf);
    }
    let meta = std::fs::metadata(path).map_err(io_error)?;
    if meta.is_dir() {
        return Err(LoadError::file(
            path,
            "is a directory; expected a run log file (CSV, TSV or JSON Lines, optionally .gz)",
        ));
    }
    std::fs::read(path).map_err(io_error)
}

fn gunzip(path: &str, raw: &[u8]) -> Result<Vec<u8>, LoadError> {
    let mut out = Vec::with_capacity(raw.len() * 4);
    flate2::read::MultiGzDecoder::new(raw)
        .read_to_end(&mut out)
        .map_err(|e| {
            LoadError::file(
                path,
                format!("truncated or corrupt gzip data ({e}); expected a complete .gz file"),
            )
        })?;
    Ok(out)
}
