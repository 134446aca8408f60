//! seqpoint: find the few training iterations worth profiling in a sequence-model training
//! run, and project whole-run time, energy and speedups from them (the SeqPoint method).
//!
//! Data flows as plain values: `runlog` (read) -> `groups` (KeyGroups) -> `binning` ->
//! `select` (SeqPoints) -> `project` (totals, errors, intervals) -> `export`.
//! `selection::run_selection` runs the whole chain; the CLI and TUI only call it.
//! `report::run_checks` runs the sanity checks before profiling; `synth` makes seeded test logs.

pub mod binning;
pub mod groups;
pub mod output;
pub mod parallel;
pub mod pick;
pub mod plot;
pub mod project;
pub mod report;
pub mod runlog;
pub mod select;
pub mod stats;
pub mod tui;

#[doc(hidden)]
pub mod testkit;

// Old paths, kept while callers move to the new layout.
#[doc(hidden)]
pub mod export {
    pub use crate::output::atomic::*;
    pub use crate::output::csv::*;
    pub use crate::output::doc::*;
    pub use crate::output::json::*;
}
#[doc(hidden)]
pub use output::{command, table as text, table as project_text};
#[doc(hidden)]
pub use project::{baselines, document as projection_workflow, measured, stratified};
#[doc(hidden)]
pub use select as selection;
#[doc(hidden)]
pub use select::{coverage, plan};
#[doc(hidden)]
pub use testkit::{models as synth, scale as genlog};

pub use binning::Method;
pub use cost::Cost;
pub use groups::KeyGroups;
pub use pick::{Pick, SeqPoint};
pub use runlog::{cost, sample};
pub use runlog::{load_run, LoadError, LoadOptions, RunLog};
pub use select::{run_selection, BinCount, SelectOptions, Selection, Strata, TargetRule};
