//! Naive baselines at the same profiling budget as the SeqPoints: first-N after warm-up,
//! N random iterations, every (len/N)-th iteration, the single median-SL iteration.
//!
//! Each projects a total as `iterations * mean of the profiled iterations` (what users do
//! without SeqPoints) and reports its error on every configuration and metric, and the
//! error of the speedup, so the table shows what SeqPoint's binning buys.

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::project::actual_totals;
use crate::rows::RowRanges;
use crate::runlog::RunLog;
use crate::stats::percent_error;

pub use crate::doc::{Baseline, BaselineError};

/// Seeded draws behind the random baseline.
pub const RANDOM_DRAWS: u32 = 100;

/// Errors of projecting from `rows`: `[config][metric]` and `[metric]` for the speedup.
fn errors_of(
    log: &RunLog,
    iterations: usize,
    actual: &[Vec<f64>],
    rows: &[usize],
) -> (Vec<Vec<f64>>, Vec<f64>) {
    let n = iterations as f64;
    let estimates: Vec<Vec<f64>> = log
        .configs
        .iter()
        .map(|c| {
            c.metrics
                .iter()
                .map(|m| n * rows.iter().map(|&r| m.values[r]).sum::<f64>() / rows.len() as f64)
                .collect()
        })
        .collect();
    let errors = estimates
        .iter()
        .zip(actual)
        .map(|(e, a)| {
            e.iter()
                .zip(a)
                .map(|(&e, &a)| percent_error(e, a))
                .collect()
        })
        .collect();
    let speedups = if log.configs.len() > 1 {
        (0..actual[0].len())
            .map(|m| {
                percent_error(
                    estimates[0][m] / estimates[1][m],
                    actual[0][m] / actual[1][m],
                )
            })
            .collect()
    } else {
        Vec::new()
    };
    (errors, speedups)
}

/// The baselines of one run log: its actual totals are summed once (a pass over every row), or
/// taken from the selection they are printed beside; then each baseline costs only its own
/// profiled rows, and the median-SL one a count of every row's length.
pub struct Baselines<'a> {
    log: &'a RunLog,
    actual: Vec<Vec<f64>>,
    /// The rows a baseline may profile and that its total stands for: every row, or those
    /// `--exclude` kept.
    kept: RowRanges,
}

impl<'a> Baselines<'a> {
    pub fn new(log: &'a RunLog) -> Self {
        Self::with_actual(log, actual_totals(log))
    }

    /// With the actual totals known already (`actual[config][metric]`).
    pub fn with_actual(log: &'a RunLog, actual: Vec<Vec<f64>>) -> Self {
        Baselines {
            log,
            actual,
            kept: RowRanges::all(log.len()),
        }
    }

    /// The baselines printed beside `selection`: judged against the very totals its
    /// projection was (summed once, when the run was grouped, rather than in a second pass
    /// over every row here), or as `excluding` makes them when `--exclude` left rows out.
    pub fn beside(log: &'a RunLog, selection: &crate::select::Selection) -> Self {
        let exclude = &selection.options.exclude;
        match selection.projection.actual_totals(log) {
            // Without an exclusion the selection's totals are `actual_totals(log)` itself.
            Some(actual) if exclude.is_empty() => Self::with_actual(log, actual),
            _ => Self::excluding(log, exclude),
        }
    }

    /// The baselines of the run less the `exclude`d iterations, as `select --exclude` sees it:
    /// they profile kept iterations only and are judged against the kept iterations' totals.
    pub fn excluding(log: &'a RunLog, exclude: &crate::select::Exclusion) -> Self {
        if exclude.is_empty() {
            return Self::new(log);
        }
        let kept = exclude.kept_row_ranges(log);
        // Summed row by row in order, as the kept rows listed one by one would be.
        let actual = log
            .configs
            .iter()
            .map(|c| {
                c.metrics
                    .iter()
                    .map(|m| {
                        kept.ranges()
                            .iter()
                            .flat_map(|rows| &m.values[rows.clone()])
                            .sum()
                    })
                    .collect()
            })
            .collect();
        Baselines { log, actual, kept }
    }

    /// Rows that may be profiled: the kept ones after warm-up (warm-up counts rows of the log),
    /// or every kept row when the warm-up covers them all.
    fn eligible(&self, warmup: u64) -> RowRanges {
        let start = usize::try_from(warmup).unwrap_or(usize::MAX);
        let after_warmup = self.kept.starting_at(start);
        if after_warmup.is_empty() {
            self.kept.clone()
        } else {
            after_warmup
        }
    }

    /// The iterations a baseline of `n` profiles: `n`, at least one and at most those that
    /// may be profiled (so every budget from there on gives the same baselines).
    pub fn budget(&self, n: usize, warmup: u64) -> usize {
        n.clamp(1, self.eligible(warmup).len())
    }

    /// Iterations a baseline's total stands for.
    fn iterations(&self) -> usize {
        self.kept.len()
    }

    /// The first `n` iterations after warm-up ("profile iterations 100-110").
    pub fn first_n(&self, n: usize, warmup: u64) -> Baseline {
        let range = self.eligible(warmup);
        let n = self.budget(n, warmup);
        let rows: Vec<usize> = (0..n).map(|i| range.get(i)).collect();
        self.baseline("first-n", n, &[rows])
    }

    /// `n` iterations drawn at random after warm-up, `draws` times (seeded): the mean and the
    /// worst absolute error over the draws.
    pub fn random_n(&self, n: usize, warmup: u64, draws: u32, seed: u64) -> Baseline {
        let range = self.eligible(warmup);
        let n = self.budget(n, warmup);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        let all: Vec<Vec<usize>> = (0..draws.max(1))
            .map(|_| {
                rand::seq::index::sample(&mut rng, range.len(), n)
                    .iter()
                    .map(|i| range.get(i))
                    .collect()
            })
            .collect();
        self.baseline("random", n, &all)
    }

    /// Every (len/n)-th iteration after warm-up, starting at the first.
    pub fn systematic(&self, n: usize, warmup: u64) -> Baseline {
        let range = self.eligible(warmup);
        let n = self.budget(n, warmup);
        let rows: Vec<usize> = (0..n).map(|i| range.get(i * range.len() / n)).collect();
        self.baseline("systematic", n, &[rows])
    }

    /// The single iteration with the median sequence length (after warm-up; ties: the
    /// earliest).
    pub fn median_sl(&self, warmup: u64) -> Baseline {
        let row = self.median_row(&self.eligible(warmup));
        self.baseline("median-sl", 1, &[vec![row]])
    }

    /// The earliest of `rows` with the lower-median sequence length (the sum of a row's keys).
    /// One-key logs read their key column straight, a slice per range of rows rather than one
    /// per row: this pass is over every row of the run.
    fn median_row(&self, rows: &RowRanges) -> usize {
        let log = self.log;
        if log.dims() != 1 {
            let lengths = rows
                .ranges()
                .iter()
                .flat_map(|range| range.clone())
                .map(|row| key_length(log.key(row)));
            return rows.get(earliest_median(lengths));
        }
        let columns = rows.ranges().iter().map(|range| &log.keys[range.clone()]);
        let median = LengthCounts::of_columns(columns).lower_median();
        rows.ranges()
            .iter()
            .find_map(|range| {
                let column = &log.keys[range.clone()];
                let at = column.iter().position(|&k| u64::from(k) == median)?;
                Some(range.start + at)
            })
            .unwrap_or_else(|| rows.get(0))
    }

    /// Every baseline at a budget of `n` profiled iterations.
    pub fn all(&self, n: usize, warmup: u64, seed: u64) -> Vec<Baseline> {
        vec![
            self.first_n(n, warmup),
            self.random_n(n, warmup, RANDOM_DRAWS, seed),
            self.systematic(n, warmup),
            self.median_sl(warmup),
        ]
    }

    /// One baseline from the errors of each of its draws (one draw for the deterministic
    /// ones).
    fn baseline(&self, method: &str, iterations: usize, draws: &[Vec<usize>]) -> Baseline {
        let log = self.log;
        let per_draw: Vec<(Vec<Vec<f64>>, Vec<f64>)> = draws
            .iter()
            .map(|rows| errors_of(log, self.iterations(), &self.actual, rows))
            .collect();
        let random = draws.len() > 1;
        let summarise = |values: Vec<f64>| -> (f64, Option<f64>) {
            let mean = values.iter().sum::<f64>() / values.len() as f64;
            let worst = values.iter().copied().fold(0.0, f64::max);
            (mean, random.then_some(worst))
        };
        let names = log.metric_names();
        let mut errors = Vec::new();
        for (c, config) in log.configs.iter().enumerate() {
            for (m, name) in names.iter().enumerate() {
                let (error_pct, worst_error_pct) =
                    summarise(per_draw.iter().map(|(e, _)| e[c][m]).collect());
                errors.push(BaselineError {
                    metric: name.clone(),
                    config: Some(config.role),
                    error_pct,
                    worst_error_pct,
                });
            }
        }
        let speedup_errors = if log.configs.len() > 1 {
            names
                .iter()
                .enumerate()
                .map(|(m, name)| {
                    let (error_pct, worst_error_pct) =
                        summarise(per_draw.iter().map(|(_, s)| s[m]).collect());
                    BaselineError {
                        metric: name.clone(),
                        config: None,
                        error_pct,
                        worst_error_pct,
                    }
                })
                .collect()
        } else {
            Vec::new()
        };
        Baseline {
            method: method.to_string(),
            iterations: iterations as u64,
            draws: random.then_some(draws.len() as u32),
            errors,
            speedup_errors,
        }
    }
}

/// A row's sequence length: the sum of its keys.
fn key_length(key: &[u32]) -> u64 {
    key.iter().map(|&k| u64::from(k)).sum()
}

/// The position of the earliest of `lengths` equal to their lower median (the
/// `(len - 1) / 2`-th smallest, from 0); 0 when there are none.
fn earliest_median(mut lengths: impl Iterator<Item = u64> + Clone) -> usize {
    let median = LengthCounts::of(lengths.clone()).lower_median();
    lengths.position(|length| length == median).unwrap_or(0)
}

/// The `rank`-th smallest (from 0) of `lengths`.
#[cfg(test)]
fn nth_smallest(lengths: impl Iterator<Item = u64>, rank: usize) -> u64 {
    LengthCounts::of(lengths).nth_smallest(rank as u64)
}

/// How many times each length occurs, counted rather than sorted: a run has few distinct
/// lengths and many rows. Lengths below `DENSE_LENGTHS` are counted in a table.
#[derive(Debug, PartialEq)]
struct LengthCounts {
    dense: Vec<u64>,
    sparse: std::collections::BTreeMap<u64, u64>,
    total: u64,
}

impl LengthCounts {
    const DENSE_LENGTHS: u64 = 1 << 20;
    /// Tables counted in turn: consecutive rows of one length would otherwise each wait for
    /// the previous row's increment of the same counter (most rows share a few lengths).
    const LANES: usize = 4;

    fn of(lengths: impl Iterator<Item = u64>) -> Self {
        let mut lanes: [Vec<u64>; Self::LANES] = Default::default();
        let mut sparse: std::collections::BTreeMap<u64, u64> = Default::default();
        let mut total = 0u64;
        for (i, length) in lengths.enumerate() {
            total += 1;
            if length < Self::DENSE_LENGTHS {
                let lane = &mut lanes[i % Self::LANES];
                let at = length as usize;
                if at >= lane.len() {
                    lane.resize(at + 1, 0);
                }
                lane[at] += 1;
            } else {
                *sparse.entry(length).or_default() += 1;
            }
        }
        LengthCounts {
            dense: Self::merged(&lanes),
            sparse,
            total,
        }
    }

    /// The key column of a one-key log, in slices (the common case, over the whole run's
    /// rows): block by
    /// block, a pass for the block's largest length (the tables grow to it), then its rows
    /// counted with no growth or range check each; the block is still in the cache for the
    /// second pass.
    fn of_columns<'c>(columns: impl Iterator<Item = &'c [u32]> + Clone) -> Self {
        const BLOCK: usize = 4096;
        let mut lanes: [Vec<u64>; Self::LANES] = Default::default();
        let mut total = 0u64;
        for block in columns.clone().flat_map(|column| column.chunks(BLOCK)) {
            total += block.len() as u64;
            let longest = block.iter().copied().max().unwrap_or(0);
            if u64::from(longest) >= Self::DENSE_LENGTHS {
                return Self::of(columns.flatten().map(|&k| u64::from(k)));
            }
            let size = longest as usize + 1;
            if size > lanes[0].len() {
                for lane in &mut lanes {
                    lane.resize(size, 0);
                }
            }
            let [first, second, third, fourth] = &mut lanes;
            let mut quads = block.chunks_exact(Self::LANES);
            for quad in &mut quads {
                first[quad[0] as usize] += 1;
                second[quad[1] as usize] += 1;
                third[quad[2] as usize] += 1;
                fourth[quad[3] as usize] += 1;
            }
            for &length in quads.remainder() {
                first[length as usize] += 1;
            }
        }
        LengthCounts {
            dense: Self::merged(&lanes),
            sparse: Default::default(),
            total,
        }
    }

    /// The tables counted in turn, added up.
    fn merged(lanes: &[Vec<u64>]) -> Vec<u64> {
        let longest = lanes.iter().map(Vec::len).max().unwrap_or(0);
        let mut dense = vec![0u64; longest];
        for lane in lanes {
            for (sum, count) in dense.iter_mut().zip(lane) {
                *sum += count;
            }
        }
        dense
    }

    /// The lower median: the `(total - 1) / 2`-th smallest length (from 0).
    fn lower_median(&self) -> u64 {
        self.nth_smallest(self.total.saturating_sub(1) / 2)
    }

    /// The `rank`-th smallest length (from 0); the largest when `rank` is past the end.
    fn nth_smallest(&self, rank: u64) -> u64 {
        let counted = self
            .dense
            .iter()
            .enumerate()
            .map(|(length, &count)| (length as u64, count))
            .chain(self.sparse.iter().map(|(&length, &count)| (length, count)));
        let mut seen = 0u64;
        let mut largest = 0;
        for (length, count) in counted {
            seen += count;
            if count > 0 {
                largest = length;
            }
            if seen > rank {
                return length;
            }
        }
        largest
    }
}

/// `Baselines::first_n` for a single use.
pub fn first_n(log: &RunLog, n: usize, warmup: u64) -> Baseline {
    Baselines::new(log).first_n(n, warmup)
}

/// `Baselines::random_n` for a single use.
pub fn random_n(log: &RunLog, n: usize, warmup: u64, draws: u32, seed: u64) -> Baseline {
    Baselines::new(log).random_n(n, warmup, draws, seed)
}

/// `Baselines::systematic` for a single use.
pub fn systematic(log: &RunLog, n: usize, warmup: u64) -> Baseline {
    Baselines::new(log).systematic(n, warmup)
}

/// `Baselines::median_sl` for a single use.
pub fn median_sl(log: &RunLog, warmup: u64) -> Baseline {
    Baselines::new(log).median_sl(warmup)
}

/// Every baseline at a budget of `n` profiled iterations.
pub fn all_baselines(log: &RunLog, n: usize, warmup: u64, seed: u64) -> Vec<Baseline> {
    Baselines::new(log).all(n, warmup, seed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runlog::{load_bytes, ConfigRole, InputFormat, LoadOptions};

    fn log(text: &str, compare: Option<&str>) -> RunLog {
        let mut log = crate::runlog::test_log(text);
        if let Some(other) = compare {
            let other = load_bytes(
                "u.csv",
                other.as_bytes(),
                InputFormat::Csv,
                &LoadOptions::default(),
            )
            .unwrap();
            log.configs.push(crate::runlog::Configuration {
                role: ConfigRole::Compare,
                source: "u.csv".into(),
                metrics: other.configs[0].metrics.clone(),
                measurement_like: Vec::new(),
            });
        }
        log
    }

    // Six iterations, total 60; compare total 30 (speedup 2).
    const RUN: &str = "seq_len,time_ms\n10,5\n30,15\n20,10\n10,5\n30,15\n20,10\n";
    const NEW: &str = "seq_len,time_ms\n10,5\n30,5\n20,5\n10,5\n30,5\n20,5\n";

    #[test]
    fn first_n_by_hand() {
        let log = log(RUN, Some(NEW));
        // Rows 1, 2 after warm-up 1: mean 12.5 -> 75 (25% over); compare 5 -> 30 (exact).
        let b = first_n(&log, 2, 1);
        assert_eq!(b.iterations, 2);
        assert_eq!(b.errors[0].error_pct, 25.0);
        assert_eq!(b.errors[1].error_pct, 0.0);
        // Speedup 75/30 = 2.5 against 2: 25%.
        assert_eq!(b.speedup_errors[0].error_pct, 25.0);
        assert_eq!(b.worst_error_pct(), 25.0);
    }

    proptest::proptest! {
        #[test]
        fn counting_finds_the_same_rank_as_sorting(
            lengths in proptest::collection::vec(0u64..20, 1..300),
            pick in 0usize..300,
        ) {
            let rank = pick % lengths.len();
            let mut sorted = lengths.clone();
            sorted.sort_unstable();
            proptest::prop_assert_eq!(nth_smallest(lengths.into_iter(), rank), sorted[rank]);
        }
    }

    proptest::proptest! {
        #[test]
        fn a_key_column_counts_as_any_lengths_do(
            mut column in proptest::collection::vec(0u32..5000, 0..13_000),
            ascending in proptest::bool::ANY,
            huge in proptest::option::of((0usize..13_000, (1u32 << 20)..u32::MAX)),
            cuts in proptest::collection::vec(0usize..13_000, 0..4),
        ) {
            // Ascending: later blocks reach longer lengths, so the tables grow on the way.
            if ascending {
                column.sort_unstable();
            }
            if let Some((at, length)) = huge {
                column.insert(at % (column.len() + 1), length);
            }
            // In slices cut anywhere, as the kept rows of an exclusion are.
            let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (column.len() + 1)).collect();
            cuts.push(column.len());
            cuts.sort_unstable();
            let slices = cuts.iter().scan(0, |start, &end| {
                let slice = &column[*start..end];
                *start = end;
                Some(slice)
            });
            proptest::prop_assert_eq!(
                LengthCounts::of_columns(slices),
                LengthCounts::of(column.iter().map(|&k| u64::from(k)))
            );
        }
    }

    /// The median-SL row as first defined: every eligible row's length sorted, the lower
    /// median taken, then the earliest eligible row of that length.
    fn median_row_by_sorting(log: &RunLog, eligible: &[usize]) -> usize {
        let length = |r: usize| log.key(r).iter().map(|&k| u64::from(k)).sum::<u64>();
        let mut sorted: Vec<u64> = eligible.iter().map(|&r| length(r)).collect();
        sorted.sort_unstable();
        let median = sorted[(sorted.len() - 1) / 2];
        *eligible.iter().find(|&&r| length(r) == median).unwrap()
    }

    proptest::proptest! {
        #[test]
        fn median_row_is_the_earliest_of_the_sorted_median(
            lengths in proptest::collection::vec(
                proptest::prop_oneof![8 => 0u32..12, 1 => 0u32..3_000_000],
                1..200,
            ),
            two_keys in proptest::bool::ANY,
            warmup in 0u64..30,
            excluded in proptest::option::of((0u64..200, 0u64..40)),
        ) {
            let dims = if two_keys { 2 } else { 1 };
            let rows = lengths.len() / dims;
            proptest::prop_assume!(rows > 0);
            let header = if two_keys { "iteration,src_len,tgt_len,time_ms" } else { "iteration,seq_len,time_ms" };
            let mut text = format!("{header}\n");
            for (row, key) in lengths.chunks_exact(dims).enumerate() {
                let key: Vec<String> = key.iter().map(u32::to_string).collect();
                // Times with fractions, so that the order of a sum shows in its last bits.
                let time = format!("{}.{:03}", row * 7 % 13, row * 331 % 997);
                text.push_str(&format!("{row},{},{time}\n", key.join(",")));
            }
            let options = LoadOptions {
                key: if two_keys { vec!["src_len".into(), "tgt_len".into()] } else { Vec::new() },
                ..LoadOptions::default()
            };
            let log = load_bytes("p.csv", text.as_bytes(), InputFormat::Csv, &options).unwrap();
            let exclusion = match excluded {
                Some((first, span)) if first < rows as u64 => {
                    let last = (first + span).min(rows as u64 - 1);
                    crate::select::Exclusion::parse(&[format!("{first}-{last}")]).unwrap()
                }
                _ => crate::select::Exclusion::default(),
            };
            proptest::prop_assume!(exclusion.excluded_rows(&log) < rows as u64);
            let baselines = Baselines::excluding(&log, &exclusion);
            let range = baselines.eligible(warmup);
            let eligible: Vec<usize> = (0..range.len()).map(|i| range.get(i)).collect();
            proptest::prop_assert_eq!(
                baselines.median_row(&range),
                median_row_by_sorting(&log, &eligible)
            );
            // The rows and totals as first defined: the kept rows listed one by one, those
            // from the warm-up on unless none is; totals summed over that list.
            let kept: Vec<usize> =
                (0..rows).filter(|&r| !exclusion.excludes_row(&log, r)).collect();
            let after: Vec<usize> = kept.iter().copied().filter(|&r| r as u64 >= warmup).collect();
            proptest::prop_assert_eq!(&eligible, if after.is_empty() { &kept } else { &after });
            proptest::prop_assert_eq!(baselines.iterations(), kept.len());
            let values = &log.configs[0].metrics[0].values;
            let listed_total: f64 = if exclusion.is_empty() {
                actual_totals(&log)[0][0]
            } else {
                kept.iter().map(|&r| values[r]).sum()
            };
            proptest::prop_assert_eq!(baselines.actual[0][0].to_bits(), listed_total.to_bits());
        }
    }

    #[test]
    fn systematic_and_median_by_hand() {
        let log = log(RUN, None);
        // Every 3rd of 6: rows 0, 3 -> mean 5 -> 30 (50% under).
        let b = systematic(&log, 2, 0);
        assert_eq!(b.errors[0].error_pct, 50.0);
        // Sorted lengths 10,10,20,20,30,30: the lower median is 20, earliest row 2 -> 60: exact.
        let b = median_sl(&log, 0);
        assert_eq!(b.iterations, 1);
        assert_eq!(b.errors[0].error_pct, 0.0);
        assert!(b.speedup_errors.is_empty());
    }

    #[test]
    fn random_draws_are_seeded_and_bounded_by_the_worst() {
        let log = log(RUN, Some(NEW));
        let a = random_n(&log, 2, 0, 100, 7);
        assert_eq!(a, random_n(&log, 2, 0, 100, 7));
        assert_eq!(a.draws, Some(100));
        let e = &a.errors[0];
        let worst = e.worst_error_pct.unwrap();
        assert!(e.error_pct > 0.0 && e.error_pct <= worst);
        // Two rows of 5, 10, 15: the worst draw is {5,5} or {15,15} = 50% off.
        assert_eq!(worst, 50.0);
        // The compare config is constant: every draw is exact.
        assert_eq!(a.errors[1].error_pct, 0.0);
        // Drawing every row is exact.
        let all = random_n(&log, 6, 0, 10, 1);
        assert_eq!(all.errors[0].worst_error_pct, Some(0.0));
    }

    #[test]
    fn beside_a_selection_the_baselines_are_the_runs_to_the_bit() {
        use crate::select::{run_selection, BinCount, Exclusion, SelectOptions};
        let log = crate::runlog::test_speech_pair();
        for exclude in [
            Exclusion::default(),
            Exclusion::parse(&["100-180"]).unwrap(),
        ] {
            let options = SelectOptions {
                bins: BinCount::Fixed(4),
                exclude: exclude.clone(),
                ..SelectOptions::default()
            };
            let selection = run_selection(&log, &options).unwrap();
            if exclude.is_empty() {
                let actual = selection.projection.actual_totals(&log).unwrap();
                assert_eq!(actual, actual_totals(&log));
            }
            for (budget, warmup) in [(4, 0), (9, 20), (1000, 0)] {
                assert_eq!(
                    Baselines::beside(&log, &selection).all(budget, warmup, 3),
                    Baselines::excluding(&log, &exclude).all(budget, warmup, 3),
                    "exclude {:?}, budget {budget}, warm-up {warmup}",
                    exclude.texts()
                );
            }
        }
    }

    #[test]
    fn budgets_beyond_the_log_are_clamped() {
        let log = log(RUN, None);
        assert_eq!(first_n(&log, 100, 0).iterations, 6);
        assert_eq!(first_n(&log, 3, 100).iterations, 3);
        assert_eq!(all_baselines(&log, 3, 0, 0).len(), 4);
    }
}
