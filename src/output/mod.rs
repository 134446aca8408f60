//! What seqpoint writes: the typed documents (`doc`), their JSON and CSV forms, every text
//! table, the equivalent command line of a selection, atomic file output, and how file names are shown.

pub mod atomic;
pub mod command;
pub mod csv;
pub mod doc;
pub mod json;
pub mod numbers;
pub mod protect;
pub mod shown;
pub mod simpoints;
pub mod table;
