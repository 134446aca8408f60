//! Each SeqPoint's bin in the run being projected: the one place that says how many
//! iterations a bin stands for there, and at what baseline mean.
//!
//! A bin stands for its kept iterations and for the excluded iterations whose keys fall in it
//! (`SeqPointDoc::excluded`, written by `select --exclude`): the exclusion left out their
//! measurements, not their work, so the projection of the whole run keeps the window's own
//! lengths. Both then scale to the run's length (`--run-iterations`, `--run-epochs`), which
//! counts the excluded iterations as logged. A document written before the excluded
//! iterations were placed in bins has none: its projection is of the kept iterations, as it
//! was then.

use crate::doc::{BinStats, SelectDoc, SeqPointDoc};

/// One bin as the projection takes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct RunBin {
    /// The iterations it stands for in the projected run.
    pub weight: f64,
    /// The iterations of the run it is drawn from, for the finite-population correction (a
    /// longer run holds `scale` times the bin's iterations).
    pub population: f64,
    /// The baseline's mean over those iterations (`None` without the metric's statistics).
    pub baseline_mean: Option<f64>,
}

/// SeqPoint `sp`'s bin with its statistics `stats` on the metric, weights scaled by `scale`.
pub(crate) fn run_bin(sp: &SeqPointDoc, stats: Option<&BinStats>, scale: f64) -> RunBin {
    let kept = sp.weight as f64;
    let excluded = sp.excluded as f64;
    let count = stats.map_or(kept, |s| s.count as f64);
    RunBin {
        weight: (kept + excluded) * scale,
        population: (count.max(kept) + excluded) * scale,
        baseline_mean: stats.map(|s| match s.excluded_mean {
            Some(at) if excluded > 0.0 => (kept * s.mean + excluded * at) / (kept + excluded),
            _ => s.mean,
        }),
    }
}

/// The iterations of the log the projection stands for before scaling: the kept ones and the
/// excluded ones the document places in bins.
pub(crate) fn logged_iterations(doc: &SelectDoc) -> u64 {
    doc.seqpoints.iter().map(|sp| sp.weight + sp.excluded).sum()
}

/// The excluded iterations' baseline total of `metric`, counted at their keys' means (0
/// without any): what joins the log's actual total of the kept ones.
pub(crate) fn excluded_baseline(doc: &SelectDoc, metric: &str) -> f64 {
    doc.seqpoints
        .iter()
        .filter_map(|sp| Some(sp.excluded as f64 * sp.bin_stats.get(metric)?.excluded_mean?))
        .sum()
}

/// How many excluded iterations the document places in bins.
pub(crate) fn placed_excluded(doc: &SelectDoc) -> u64 {
    doc.seqpoints.iter().map(|sp| sp.excluded).sum()
}
