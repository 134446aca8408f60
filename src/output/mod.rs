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
