//! What seqpoint writes: the typed documents' (`crate::doc`) JSON and CSV forms, every text
//! table, SimPoint files, and atomic file output that never replaces an input (or a stream:
//! `stream`).

pub mod atomic;
pub mod csv;
pub mod descriptor;
pub mod json;
pub mod protect;
pub mod simpoints;
pub mod stream;
pub mod table;

/// `bytes` gzipped as `select -o NAME.gz` writes them (the default compression level): the
/// CLI's output and the explorer's export of such a name alike.
pub fn gzipped(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes)?;
    encoder.finish()
}
