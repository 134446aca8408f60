//! seqpoint: find the few training iterations worth profiling in a sequence-model training
//! run, and project whole-run time, energy and speedups from them (the SeqPoint method).
//!
//! Data flows as plain values: `runlog` (read) -> `groups` (KeyGroups) -> `binning` ->
//! `select` (SeqPoints) -> `project` (totals, errors, intervals) -> `export`.
//! `selection::run_selection` runs the whole chain; the CLI and TUI only call it.
//! `report::run_checks` runs the sanity checks before profiling; `synth` makes seeded test logs.

pub mod baselines;
pub mod binning;
pub mod command;
pub mod coverage;
pub mod export;
pub mod genlog;
pub mod groups;
pub mod measured;
pub mod parallel;
pub mod plan;
pub mod plot;
pub mod project;
pub mod project_text;
pub mod projection_workflow;
pub mod report;
pub mod runlog;
pub mod select;
pub mod selection;
pub mod stats;
pub mod stratified;
pub mod synth;
pub mod text;
pub mod tui;

pub use binning::Method;
pub use cost::Cost;
pub use groups::KeyGroups;
pub use runlog::{cost, sample};
pub use runlog::{load_run, LoadError, LoadOptions, RunLog};
pub use select::{Pick, SeqPoint};
pub use selection::{run_selection, BinCount, SelectOptions, Selection, Strata, TargetRule};
