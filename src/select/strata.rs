//! Strata: the training phases binned separately (`--strata`), the rows of each, and the key
//! groups and candidates every selection over them shares (one pass over the rows).

use crate::options::{Surface, COST, STRATA, WARMUP};
use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::str::FromStr;
use std::sync::{Arc, Mutex};

use super::{Exclusion, SelectError, SelectOptions};
use crate::binning::{Objective, OptimalTable};
use crate::groups::KeyGroups;
use crate::pick::Candidates;
use crate::project::actual_totals;
use crate::rows::RowRanges;
use crate::runlog::RunLog;

/// Training phases binned separately, each with its own SeqPoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strata {
    #[default]
    None,
    Epoch,
    Phases(usize),
}

impl fmt::Display for Strata {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Strata::None => write!(f, "none"),
            Strata::Epoch => write!(f, "epoch"),
            Strata::Phases(p) => write!(f, "phases:{p}"),
        }
    }
}

impl FromStr for Strata {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "none" => Ok(Strata::None),
            "epoch" => Ok(Strata::Epoch),
            other => match other.strip_prefix("phases:").map(str::parse::<usize>) {
                Some(Ok(p)) if p >= 1 => Ok(Strata::Phases(p)),
                _ => Err(format!(
                    "unknown strata {s:?}; expected none, epoch or phases:P with P >= 1"
                )),
            },
        }
    }
}

/// A stratum's name and its rows.
pub type StratumRows = (String, RowRanges);

/// The rows of each stratum, in stratum order (the order of `SeqPoint::stratum`).
pub fn strata_rows(log: &RunLog, strata: Strata) -> Result<Vec<StratumRows>, SelectError> {
    Ok(match strata {
        Strata::None => vec![("all".to_string(), RowRanges::all(log.len()))],
        Strata::Epoch => {
            let epochs = log.epochs.as_ref().ok_or_else(|| {
                STRATA.error("epoch", "needs an epoch column in the run log".into())
            })?;
            // Each run of rows of one epoch is a range of its stratum (a log's epochs
            // ascend, so an epoch is one run, but any order is grouped right).
            let mut by_epoch: std::collections::BTreeMap<u32, Vec<Range<usize>>> =
                Default::default();
            let mut run_start = 0;
            let mut epochs_of_rows = epochs.iter().enumerate().peekable();
            while let Some((row, e)) = epochs_of_rows.next() {
                if epochs_of_rows.peek().is_none_or(|&(_, next)| next != e) {
                    by_epoch.entry(e).or_default().push(run_start..row + 1);
                    run_start = row + 1;
                }
            }
            by_epoch
                .into_iter()
                .map(|(e, runs)| (format!("epoch {e}"), RowRanges::new(runs)))
                .collect()
        }
        Strata::Phases(p) => {
            let n = log.len();
            if p == 0 {
                return Err(STRATA
                    .error("phases:0", "expected at least one phase (phases:P)".into())
                    .into());
            }
            if p > n {
                return Err(STRATA
                    .error(
                        &format!("phases:{p}"),
                        format!("asks for more phases than the {n} iterations"),
                    )
                    .into());
            }
            (0..p)
                .map(|i| {
                    let (lo, hi) = (i * n / p, (i + 1) * n / p);
                    (format!("phase {}", i + 1), RowRanges::span(lo..hi))
                })
                .collect()
        }
    })
}

/// `strata_rows` less the excluded rows (removed before grouping); a stratum left empty has
/// nothing to project and is dropped.
pub fn kept_strata_rows(
    log: &RunLog,
    strata: Strata,
    exclude: &Exclusion,
) -> Result<Vec<StratumRows>, SelectError> {
    let rows = strata_rows(log, strata)?;
    if exclude.is_empty() {
        return Ok(rows);
    }
    let kept = exclude.kept_row_ranges(log);
    Ok(rows
        .into_iter()
        .map(|(name, rows)| (name, rows.intersection(&kept)))
        .filter(|(_, rows)| !rows.is_empty())
        .collect())
}

fn totals_of(groups: &KeyGroups) -> Vec<Vec<f64>> {
    groups
        .moments
        .iter()
        .map(|config| {
            config
                .iter()
                .map(|metric| metric.iter().map(|g| g.sum).sum())
                .collect()
        })
        .collect()
}

/// Whole-run totals `[config][metric]` as the sum of the strata's.
fn sum_of_strata(strata: &[Vec<Vec<f64>>]) -> Vec<Vec<f64>> {
    let mut sum = strata.first().cloned().unwrap_or_default();
    for stratum in strata.iter().skip(1) {
        for (config, totals) in sum.iter_mut().zip(stratum) {
            for (s, t) in config.iter_mut().zip(totals) {
                *s += t;
            }
        }
    }
    sum
}

/// Distinct keys over every stratum's key groups: O(groups), no pass over the rows.
fn distinct_keys(groups: &[KeyGroups]) -> usize {
    match groups {
        [one] => one.len(),
        _ => {
            let mut keys: Vec<&[u32]> = groups
                .iter()
                .flat_map(|g| (0..g.len()).map(|i| g.key(i)))
                .collect();
            keys.sort_unstable();
            keys.dedup();
            keys.len()
        }
    }
}

/// Metrics so large that a total or a bin's `w^2 s^2` would overflow f64 turn every error and
/// interval into NaN: refuse them up front, naming the value and the iteration that holds it.
fn check_magnitudes(log: &RunLog) -> Result<(), SelectError> {
    let n = log.len().max(1);
    let limit = f64::MAX.sqrt() / (4.0 * n as f64);
    for config in &log.configs {
        for metric in &config.metrics {
            if let Some(row) = first_beyond(&metric.values, limit) {
                let remedy = if log.proxy.is_some() {
                    format!(
                        "choose a smaller {} exponent",
                        COST.typed(Surface::CommandLine, "")
                    )
                } else {
                    "rescale the metric (e.g. to seconds)".into()
                };
                // A proxy cost is in no cell of the file: say the key it was computed from.
                let value = metric.values[row];
                let iteration = log.iterations.get(row);
                let what = match log.proxy {
                    Some(cost) => {
                        let key: Vec<String> = log
                            .key_names
                            .iter()
                            .zip(log.key(row))
                            .map(|(name, k)| format!("{name} {k}"))
                            .collect();
                        format!(
                            "the proxy cost {cost} of {} (iteration {iteration}; computed, in no \
                             cell of the file) is {value:e}",
                            key.join(", ")
                        )
                    }
                    None => format!(
                        "column '{}' has {value:e} at iteration {iteration}",
                        metric.name
                    ),
                };
                return Err(SelectError::Invalid(format!(
                    "{}: {what}, too large to total over {n} iterations (at most \
                     {limit:.3e}); {remedy}",
                    config.source,
                )));
            }
        }
    }
    Ok(())
}

/// The first value that is NaN or larger than `limit` in magnitude. Each chunk is counted
/// whole (no exit inside it, so the comparisons run on whole vectors) and only the chunk that
/// holds one is searched.
fn first_beyond(values: &[f64], limit: f64) -> Option<usize> {
    const CHUNK: usize = 4096;
    // `|`, not `||`: both tests on every value, without a branch.
    let beyond = |v: &f64| v.is_nan() | (v.abs() > limit);
    values.chunks(CHUNK).enumerate().find_map(|(c, chunk)| {
        let found = chunk.iter().filter(|v| beyond(v)).count() > 0;
        found.then(|| c * CHUNK + chunk.iter().position(beyond).expect("counted one"))
    })
}

/// Everything a selection needs that depends only on the log, the strata and the warm-up:
/// the key groups and candidate iterations of every stratum. Building it passes over every
/// row once; `Selectors` built on it (any method, pick or K) work on key groups only.
pub struct StrataGroups {
    pub names: Vec<String>,
    pub groups: Vec<KeyGroups>,
    /// Per stratum: each key group's iterations after warm-up to profile, its median first.
    pub candidates: Vec<Candidates>,
    pub warmup: u64,
    /// The iterations left out before grouping.
    pub exclude: Exclusion,
    /// True when the run is split (`--strata` other than none): SeqPoints then carry it.
    pub split: bool,
    /// Whole-run actual totals per configuration and metric (one pass over the rows, here,
    /// so that a recompute never passes over them again), and each stratum's.
    pub(super) actual: Vec<Vec<f64>>,
    pub(super) stratum_actual: Vec<Vec<Vec<f64>>>,
    /// Distinct keys in the whole run (a key seen in two strata counts once).
    unique_keys: usize,
    /// Exact DP tables by stratum, kept so that a later `Selectors` with `optimal` (another
    /// pick, a K change through `run_selection_on`) does not rebuild them; each answers its
    /// own objective up to its largest K.
    tables: Mutex<HashMap<usize, Vec<Arc<OptimalTable>>>>,
}

/// DP tables kept per stratum (`StrataGroups::keep_table`).
const KEPT_TABLES: usize = 4;

impl StrataGroups {
    pub fn new(log: &RunLog, strata: Strata, warmup: u64) -> Result<Self, SelectError> {
        Self::build(log, strata, warmup, &Exclusion::default())
    }

    /// The key groups for `options`' strata, warm-up and exclusion.
    pub fn for_options(log: &RunLog, options: &SelectOptions) -> Result<Self, SelectError> {
        Self::build(log, options.strata, options.warmup, &options.exclude)
    }

    fn build(
        log: &RunLog,
        strata: Strata,
        warmup: u64,
        exclude: &Exclusion,
    ) -> Result<Self, SelectError> {
        check_magnitudes(log)?;
        let rows = kept_strata_rows(log, strata, exclude)?;
        let groups: Vec<KeyGroups> = rows
            .iter()
            .map(|(_, rows)| KeyGroups::from_rows(log, rows))
            .collect();
        let candidates: Vec<Candidates> = groups
            .iter()
            .map(|g| Candidates::new(log, g, warmup))
            .collect();
        for ((name, _), (g, c)) in rows.iter().zip(groups.iter().zip(&candidates)) {
            if !(0..g.len()).any(|group| c.any(g, group)) {
                let of = if strata == Strata::None {
                    "the run".to_string()
                } else {
                    name.clone()
                };
                let left = if exclude.is_empty() {
                    String::new()
                } else {
                    // Worded for no one surface: the error is shown by both.
                    " outside the excluded iterations".to_string()
                };
                return Err(WARMUP
                    .error(
                        &warmup.to_string(),
                        format!(
                            "covers every iteration of {of}{left}: no iteration is left to \
                             pick; use a shorter warm-up"
                        ),
                    )
                    .into());
            }
        }
        let stratum_actual: Vec<Vec<Vec<f64>>> = groups.iter().map(totals_of).collect();
        let unique_keys = distinct_keys(&groups);
        let actual = if exclude.is_empty() && strata == Strata::None {
            // The one stratum is every row: its grouping summed them in row order already.
            groups[0].row_order_totals.clone()
        } else if exclude.is_empty() {
            actual_totals(log)
        } else {
            sum_of_strata(&stratum_actual)
        };
        Ok(StrataGroups {
            candidates,
            groups,
            names: rows.into_iter().map(|(name, _)| name).collect(),
            warmup,
            exclude: exclude.clone(),
            split: strata != Strata::None,
            actual,
            stratum_actual,
            unique_keys,
            tables: Mutex::new(HashMap::new()),
        })
    }

    /// Distinct keys in the whole run.
    pub fn unique_keys(&self) -> usize {
        self.unique_keys
    }

    /// A kept DP table of `stratum` for `objective` covering at least `max_bins` bins.
    pub(super) fn table(
        &self,
        stratum: usize,
        max_bins: usize,
        objective: Objective,
    ) -> Option<Arc<OptimalTable>> {
        let tables = self.tables.lock().ok()?;
        tables
            .get(&stratum)?
            .iter()
            .filter(|t| t.objective() == objective && t.max_bins() >= max_bins)
            .min_by_key(|t| t.max_bins())
            .cloned()
    }

    /// Keeps `table` for `stratum`, in place of a smaller one of its objective, and no more
    /// than `KEPT_TABLES` of them (the oldest go): a table holds K x groups entries, and the
    /// explorer asks for another objective at each samples count.
    pub(super) fn keep_table(&self, stratum: usize, table: Arc<OptimalTable>) {
        if let Ok(mut tables) = self.tables.lock() {
            let kept = tables.entry(stratum).or_default();
            kept.retain(|t| t.objective() != table.objective() || t.max_bins() > table.max_bins());
            kept.push(table);
            if kept.len() > KEPT_TABLES {
                kept.remove(0);
            }
        }
    }

    /// The whole run's actual totals, `[config][metric]`.
    pub fn actual(&self) -> &[Vec<f64>] {
        &self.actual
    }

    /// The most key groups in one stratum: no K above it makes more bins.
    pub fn largest(&self) -> usize {
        self.groups.iter().map(KeyGroups::len).max().unwrap_or(1)
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::runlog::test_log as log;
    use crate::select::parse_iteration_range;

    #[test]
    fn a_key_in_two_strata_counts_once() {
        // Keys 1 and 2 in phase 1, keys 2 and 3 in phase 2: three distinct keys, not four.
        let log = log("seq_len,time_ms\n1,1\n2,2\n2,2\n3,3\n");
        for strata in [Strata::None, Strata::Phases(2), Strata::Phases(4)] {
            let groups = StrataGroups::new(&log, strata, 0).unwrap();
            assert_eq!(groups.unique_keys(), 3, "{strata}");
            assert_eq!(groups.unique_keys(), KeyGroups::from_log(&log).len());
        }
    }

    #[test]
    fn the_first_value_beyond_the_limit_is_the_one_a_plain_search_finds() {
        let plain =
            |values: &[f64], limit: f64| values.iter().position(|v| v.is_nan() || v.abs() > limit);
        let mut values: Vec<f64> = (0..10_000).map(|i| (i % 97) as f64 - 48.0).collect();
        assert_eq!(first_beyond(&values, 48.0), None);
        assert_eq!(first_beyond(&values, 47.5), plain(&values, 47.5));
        assert_eq!(first_beyond(&[], 1.0), None);
        for (row, bad) in [(9_999, f64::NAN), (5_000, -f64::INFINITY), (4_096, 1e300)] {
            values[row] = bad;
            assert_eq!(first_beyond(&values, 48.0), Some(row), "{bad} at {row}");
            assert_eq!(first_beyond(&values, 48.0), plain(&values, 48.0));
        }
    }

    #[test]
    fn strata_rows_are_each_stratums_rows_less_the_excluded() {
        // Epochs out of order still group by epoch; iterations 3-4 are rows 3 and 4.
        let log = log("iteration,epoch,seq_len,time_ms\n0,1,5,1\n1,1,5,1\n2,0,5,1\n3,1,5,1\n4,2,5,1\n5,0,5,1\n6,2,5,1\n");
        let listed = |strata, exclude: &[&str]| -> Vec<(String, Vec<usize>)> {
            let exclude = Exclusion::parse(exclude).unwrap();
            kept_strata_rows(&log, strata, &exclude)
                .unwrap()
                .into_iter()
                .map(|(name, rows)| (name, rows.iter().collect()))
                .collect()
        };
        let named = |strata: &[(&str, &[usize])]| -> Vec<(String, Vec<usize>)> {
            strata
                .iter()
                .map(|(name, rows)| (name.to_string(), rows.to_vec()))
                .collect()
        };
        assert_eq!(
            listed(Strata::Epoch, &[]),
            named(&[
                ("epoch 0", &[2, 5]),
                ("epoch 1", &[0, 1, 3]),
                ("epoch 2", &[4, 6])
            ])
        );
        assert_eq!(
            listed(Strata::Epoch, &["3-4"]),
            named(&[
                ("epoch 0", &[2, 5]),
                ("epoch 1", &[0, 1]),
                ("epoch 2", &[6])
            ])
        );
        assert_eq!(
            listed(Strata::Phases(2), &["3-4"]),
            named(&[("phase 1", &[0, 1, 2]), ("phase 2", &[5, 6])])
        );
        // A stratum left empty is dropped.
        assert_eq!(
            listed(Strata::Phases(3), &["2-3"]),
            named(&[("phase 1", &[0, 1]), ("phase 3", &[4, 5, 6])])
        );
        assert_eq!(
            listed(Strata::None, &["0-0", "6-6"]),
            named(&[("all", &[1, 2, 3, 4, 5])])
        );
    }

    #[test]
    fn a_warmup_leaving_only_excluded_iterations_is_worded_for_each_surface() {
        let rows: String = (0..10)
            .map(|i| format!("{i},{},{}\n", 5 + i % 3, 1 + i % 3))
            .collect();
        let log = log(&format!("iteration,seq_len,time_ms\n{rows}"));
        let options = SelectOptions {
            warmup: 5,
            exclude: Exclusion::new([parse_iteration_range("5-9").unwrap()]),
            ..SelectOptions::default()
        };
        let Err(SelectError::Option(e)) = StrataGroups::for_options(&log, &options) else {
            panic!("warm-up 5 and iterations 5-9 left out leave nothing to pick");
        };
        let said = "5: covers every iteration of the run outside the excluded iterations";
        assert!(
            e.worded(Surface::Explorer)
                .starts_with(&format!(":warmup {said}")),
            "{e}"
        );
        assert!(
            e.to_string().starts_with(&format!("--warmup {said}")),
            "{e}"
        );
        assert!(!e.worded(Surface::Explorer).contains("--"), "{e}");
    }

    #[test]
    fn strata_parse() {
        assert_eq!("epoch".parse::<Strata>(), Ok(Strata::Epoch));
        assert_eq!("phases:3".parse::<Strata>(), Ok(Strata::Phases(3)));
        assert!("phases:0".parse::<Strata>().is_err());
    }
}
