//! What seqpoint writes: the typed documents (`doc`), their JSON and CSV forms, every text
//! table, the equivalent command line of a selection, and atomic file output.

pub mod atomic;
pub mod command;
pub mod csv;
pub mod doc;
pub mod json;
pub mod simpoints;
pub mod table;
