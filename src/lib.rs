//! seqpoint: find the few training iterations worth profiling in a sequence-model training
//! run, and project whole-run time, energy and speedups from them (the SeqPoint method).
//!
//! Data flows as plain values: `runlog` (read) -> `groups` (KeyGroups) -> `binning` ->
//! `select` (SeqPoints) -> `project` (totals, errors, intervals) -> `export`.
//! `selection::run_selection` runs the whole chain; the CLI and TUI only call it.

pub mod binning;
pub mod command;
pub mod cost;
pub mod export;
pub mod groups;
pub mod project;
pub mod runlog;
pub mod sample;
pub mod select;
pub mod selection;
pub mod stats;
pub mod text;
pub mod tui;

pub use binning::Method;
pub use cost::Cost;
pub use groups::KeyGroups;
pub use runlog::{load_run, LoadError, LoadOptions, RunLog};
pub use select::{Pick, SeqPoint};
pub use selection::{run_selection, BinCount, SelectOptions, Selection, Strata, TargetRule};
