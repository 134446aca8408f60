//! The honest-interval check: draw the profiled iterations at random within each bin many
//! times (seeded), project as `project` does, and count how often the 95% interval holds the
//! actual total. A correct variance formula holds it about 95% of the time.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::plan::bin_rows;
use super::{SelectError, Selection};
use crate::project::stratified::{estimate, BinMeasure};
use crate::project::{actual_totals, StratumVariance};
use crate::runlog::RunLog;

/// What the check asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CoverageCheck {
    /// The configuration whose total is projected (0 = the log SeqPoints were chosen on).
    pub config: usize,
    pub metric: usize,
    /// Iterations drawn per bin in each trial.
    pub samples: u64,
    pub trials: u32,
    pub seed: u64,
}

/// How often the interval held the actual total, and how wide and how wrong it was.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Coverage {
    pub trials: u32,
    pub hits: u32,
    pub actual: f64,
    /// Mean 95% half-width and mean absolute error, in percent of the actual total.
    pub mean_half_width_pct: f64,
    pub mean_error_pct: f64,
}

impl Coverage {
    pub fn pct(&self) -> f64 {
        100.0 * f64::from(self.hits) / f64::from(self.trials.max(1))
    }
}

/// Run the check on a selection's bins with a given per-bin variance formula (the one
/// `project` uses is `project::stratum_variance`).
pub fn interval_coverage(
    log: &RunLog,
    selection: &Selection,
    check: CoverageCheck,
    formula: StratumVariance,
) -> Result<Coverage, SelectError> {
    let rows = bin_rows(log, selection)?;
    let actual = actual_totals(log)[check.config][check.metric];
    let values = &log.configs[check.config].metrics[check.metric].values;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(check.seed);
    let (mut hits, mut half_width, mut error) = (0u32, 0.0, 0.0);
    for _ in 0..check.trials {
        let bins: Vec<BinMeasure> = selection
            .seqpoints
            .iter()
            .zip(&rows)
            .map(|(sp, rows)| {
                let m = (check.samples as usize).clamp(1, rows.len());
                let drawn: Vec<f64> = rand::seq::index::sample(&mut rng, rows.len(), m)
                    .iter()
                    .map(|i| values[rows[i] as usize])
                    .collect();
                let moments = &sp.bin.moments[0][check.metric];
                BinMeasure {
                    weight: sp.weight as f64,
                    population: sp.weight as f64,
                    baseline_mean: moments.mean,
                    baseline_sd: moments.sample_variance().sqrt(),
                    values: drawn,
                    distinct: m,
                }
            })
            .collect();
        let e = estimate(&bins, formula).expect("every bin is measured");
        let [lo, hi] = e.interval();
        if lo <= actual && actual <= hi {
            hits += 1;
        }
        half_width += 100.0 * (hi - lo) / 2.0 / actual;
        error += 100.0 * (e.value - actual).abs() / actual;
    }
    let trials = check.trials.max(1);
    Ok(Coverage {
        trials: check.trials,
        hits,
        actual,
        mean_half_width_pct: half_width / f64::from(trials),
        mean_error_pct: error / f64::from(trials),
    })
}
