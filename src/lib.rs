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
//!    [`run_selection`] runs steps 2-5 (one profiled iteration per SeqPoint).
//!    [`select::plan`] says how many iterations each SeqPoint profiles and which.
//!
//! [`select::answer`] is what `seqpoint select` runs, and the explorer with it: given a
//! [`select::SelectRequest`] (the options and the plan asked for; its `Default` is
//! `select RUN` with no flags), an error target met by its interval gets the cheapest plan
//! meeting it (K and samples searched together), any other request steps 2-5 and the plan its
//! rule asks for. `select::answer_with` adds prepared key groups, kept selectors, progress and
//! cancellation.
//! 6. [`output`] writes it: the typed documents ([`doc`]) as JSON, CSV, text tables; the equivalent
//!    command line, atomic files.
//!
//! After profiling, `project::document` reads a SeqPoints file and `runlog::measured` the
//! measurements, and projects the run on the new configuration. [`report`] checks a run log
//! before profiling. The binary's `cli`, the [`tui`] and [`plot`] only call these
//! stages; [`options`] defines each option once (name, range, default, wording on every
//! surface), [`text`] the escaping and number formatting, [`parallel`] the thread helpers,
//! [`rows`] the sets of rows (as ranges) that strata and `--exclude` leave. `testkit`
//! (hidden) makes synthetic logs and checks interval coverage by redraws.

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
pub use select::{
    answer, run_selection, Answer, BinCount, SelectOptions, SelectRequest, Selection, Strata,
    TargetRule,
};
