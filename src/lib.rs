//! seqpoint: find the few training iterations worth profiling in a sequence-model training
//! run, and project whole-run time, energy and speedups from them (the SeqPoint method).
//!
//! The pipeline, each stage a plain function or value, in the order data flows:
//!
//! 1. [`runlog`] reads a run log (CSV, TSV, JSON Lines, gzip) into a columnar [`RunLog`].
//! 2. [`select::StrataGroups`] cuts it into strata (`--strata`) and, in one pass over the rows,
//!    builds each stratum's [`groups::KeyGroups`] (per-key counts and moments) and the
//!    [`pick::Candidates`] (each key's iterations spread over its values, its median first).
//! 3. [`select::Selectors`] fixes a [`binning`] method and a [`pick`] rule per stratum; asked
//!    for K, it bins the key groups and picks one SeqPoint per bin, in O(key groups).
//! 4. [`project`] projects the run from those SeqPoints (totals, speedups, 95% intervals; the
//!    one variance is in [`estimate`], the interval arithmetic in [`stats`]).
//! 5. `Selectors::curve` and `Selectors::choose` try every K and apply the error target
//!    (`select::target`: rules, and advice as data), giving a [`Selection`];
//!    [`run_selection`] runs steps 2-5. `select::plan` spreads extra profiled iterations.
//! 6. [`output`] writes it: the typed documents ([`doc`]) as JSON, CSV, text tables; the equivalent
//!    command line, atomic files.
//!
//! After profiling, `project::document` reads a SeqPoints file and `runlog::measured` the
//! measurements, and projects the run on the new configuration. [`report`] checks a run log
//! before profiling. The binary's `cli`, the [`tui`] and [`plot`] only call these
//! stages; [`parallel`] holds the thread helpers, [`rows`] the sets of rows (as ranges) that
//! strata and `--exclude` leave. `testkit` (hidden) makes synthetic logs.

pub mod binning;
pub mod doc;
pub mod estimate;
pub mod groups;
pub mod keyfit;
pub mod options;
pub mod output;
pub mod parallel;
pub mod pick;
pub mod plot;
pub mod project;
pub mod report;
pub mod rows;
pub mod runlog;
pub mod select;
pub mod stats;
pub mod text;
pub mod tui;

#[doc(hidden)]
pub mod testkit;

pub use binning::Method;
pub use groups::KeyGroups;
pub use pick::{Pick, SeqPoint};
pub use runlog::cost::Cost;
pub use runlog::{load_run, LoadError, LoadOptions, RunLog};
pub use select::{run_selection, BinCount, SelectOptions, Selection, Strata, TargetRule};
