//! Binning: partitioning key groups into K bins, one method per file behind `Method`.
//! A bin is a list of group indices; bins never share a group and together hold all groups.

mod blocked;
mod bounded;
mod kmeans;
mod levels;
mod optimal;
mod range_cost;
mod simple;
#[cfg(test)]
mod test_values;

pub use kmeans::{kmeans_bins, weighted_lloyd, KmeansChain};
pub use levels::{Solver, EXACT_UP_TO, FALLBACK_BLOCKS};
pub use optimal::{is_monotone, OptimalTable};
pub use range_cost::Objective;
pub use simple::{quantile_bins, uniform_bins};

use crate::groups::KeyGroups;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    Optimal,
    Uniform,
    Quantile,
    Kmeans,
}

impl Method {
    pub const ALL: [Method; 4] = [
        Method::Optimal,
        Method::Uniform,
        Method::Quantile,
        Method::Kmeans,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Method::Optimal => "optimal",
            Method::Uniform => "uniform",
            Method::Quantile => "quantile",
            Method::Kmeans => "kmeans",
        }
    }

    /// `optimal` for a 1-D key, `kmeans` for a 2-D key.
    pub fn default_for(dims: usize) -> Method {
        if dims == 1 {
            Method::Optimal
        } else {
            Method::Kmeans
        }
    }
}

/// Group indices per bin.
pub type Bins = Vec<Vec<usize>>;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum BinningError {
    #[error("the optimal method needs a one-length key (it bins contiguous ranges of sorted lengths); k-means bins a {0}-length key")]
    OptimalNeedsOneDim(usize),
    #[error("k-means failed: {0}")]
    Kmeans(String),
}

/// Bins for every K of one method over one set of groups; the exact DP table is built once.
pub struct Binner<'a> {
    groups: &'a KeyGroups,
    values: Vec<f64>,
    method: Method,
    seed: u64,
    table: Option<std::sync::Arc<OptimalTable>>,
    /// k-means fits by K, each started from the one before (made on first use): the error
    /// curve's fits are kept and a later K change (the explorer's key press) is a lookup.
    fitted: std::sync::Mutex<Option<KmeansChain>>,
}

impl<'a> Binner<'a> {
    /// `max_bins` bounds the K that `bins` will be asked for (only `optimal` precomputes).
    pub fn new(
        groups: &'a KeyGroups,
        method: Method,
        seed: u64,
        max_bins: usize,
    ) -> Result<Self, BinningError> {
        Self::with_table(groups, method, seed, max_bins, None)
    }

    /// `new`, reusing an exact DP table built earlier for these groups (with at least
    /// `max_bins` bins) instead of building one: what keeps K changes instant.
    pub fn with_table(
        groups: &'a KeyGroups,
        method: Method,
        seed: u64,
        max_bins: usize,
        table: Option<std::sync::Arc<OptimalTable>>,
    ) -> Result<Self, BinningError> {
        let values = groups.binning_values();
        let table = match method {
            Method::Optimal if groups.dims != 1 => {
                return Err(BinningError::OptimalNeedsOneDim(groups.dims))
            }
            Method::Optimal => Some(table.unwrap_or_else(|| {
                std::sync::Arc::new(OptimalTable::build(
                    &groups.counts,
                    &values,
                    max_bins,
                    Solver::Auto,
                ))
            })),
            _ => None,
        };
        Ok(Binner {
            groups,
            values,
            method,
            seed,
            table,
            fitted: Default::default(),
        })
    }

    /// The exact DP table, when the method is `optimal` (to cache and pass to `with_table`).
    pub fn table(&self) -> Option<std::sync::Arc<OptimalTable>> {
        self.table.clone()
    }

    /// The most bins this method can make: one per key group.
    pub fn max_bins(&self) -> usize {
        self.groups.len()
    }

    /// Whether `bins(k)` is answered in O(groups): a table or a fit already made.
    pub fn ready(&self, k: usize) -> bool {
        let k = k.clamp(1, self.groups.len().max(1));
        match self.method {
            Method::Optimal => self.table.as_ref().is_some_and(|t| k <= t.max_bins()),
            Method::Uniform | Method::Quantile => true,
            Method::Kmeans => self
                .fitted
                .lock()
                .is_ok_and(|f| f.as_ref().is_some_and(|chain| chain.fitted() >= k)),
        }
    }

    fn kmeans(&self, k: usize) -> Result<Bins, BinningError> {
        // One chain of fits, K after K: a second caller waits for the K it asks for (the
        // curve's workers ask for consecutive K, so little waiting is lost).
        let mut fitted = self
            .fitted
            .lock()
            .map_err(|_| BinningError::Kmeans("an earlier fit failed".into()))?;
        let chain = fitted.get_or_insert_with(|| KmeansChain::new(self.groups, self.seed));
        Ok(chain.bins(k))
    }

    pub fn bins(&self, k: usize) -> Result<Bins, BinningError> {
        let k = k.clamp(1, self.groups.len().max(1));
        Ok(match self.method {
            Method::Optimal => {
                let table = self.table.as_ref().expect("optimal table built in new");
                if k <= table.max_bins() {
                    table.bins(k)
                } else {
                    OptimalTable::build_for(
                        &self.groups.counts,
                        &self.values,
                        k,
                        Solver::Auto,
                        table.objective(),
                    )
                    .bins(k)
                }
            }
            Method::Uniform => uniform_bins(self.groups, k),
            Method::Quantile => quantile_bins(self.groups, k),
            Method::Kmeans => self.kmeans(k)?,
        })
    }
}

/// The within-bin weighted sum of squares that `optimal` minimises:
/// `sum_b sum_{u in b} n_u (x_u - xbar_b)^2`.
pub fn objective(counts: &[u64], values: &[f64], bins: &Bins) -> f64 {
    bins.iter()
        .map(|bin| {
            let w: f64 = bin.iter().map(|&u| counts[u] as f64).sum();
            let mean = bin
                .iter()
                .map(|&u| counts[u] as f64 * values[u])
                .sum::<f64>()
                / w;
            bin.iter()
                .map(|&u| counts[u] as f64 * (values[u] - mean).powi(2))
                .sum::<f64>()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runlog::{load_bytes, InputFormat, LoadOptions};
    use proptest::prelude::*;

    #[test]
    fn kept_kmeans_fits_equal_fresh_ones() {
        let keys: Vec<u32> = (0..200).map(|i| 5 + (i * 37 % 91)).collect();
        let times: Vec<f64> = keys.iter().map(|&k| f64::from(k) * 1.5).collect();
        let groups = groups_from(&keys, &times);
        let binner = Binner::new(&groups, Method::Kmeans, 7, 16).unwrap();
        for k in [3, 9, 3, 16, 9] {
            let mut fresh = KmeansChain::new(&groups, 7);
            assert_eq!(binner.bins(k).unwrap(), fresh.bins(k));
        }
        let fitted = binner.fitted.lock().unwrap();
        assert_eq!(fitted.as_ref().map(KmeansChain::fitted), Some(16));
    }

    fn groups_from(keys: &[u32], times: &[f64]) -> KeyGroups {
        let mut text = String::from("seq_len,time_ms\n");
        for (k, t) in keys.iter().zip(times) {
            text.push_str(&format!("{k},{t}\n"));
        }
        let log = crate::runlog::test_log(&text);
        KeyGroups::from_log(&log)
    }

    fn is_partition(bins: &Bins, groups: usize) -> bool {
        let mut seen: Vec<usize> = bins.iter().flatten().copied().collect();
        seen.sort_unstable();
        bins.iter().all(|b| !b.is_empty()) && seen == (0..groups).collect::<Vec<_>>()
    }

    #[test]
    fn optimal_by_hand() {
        // Values 1,2,10,11 with equal counts: two bins split {1,2} | {10,11}.
        let groups = groups_from(&[1, 2, 10, 11], &[1.0, 2.0, 10.0, 11.0]);
        let binner = Binner::new(&groups, Method::Optimal, 0, 4).unwrap();
        assert_eq!(binner.bins(2).unwrap(), vec![vec![0, 1], vec![2, 3]]);
        assert_eq!(binner.bins(9).unwrap().len(), 4);
    }

    #[test]
    fn optimal_rejects_two_dim_keys() {
        let text = "src_len,tgt_len,time_ms\n5,7,1\n";
        let options = LoadOptions {
            key: vec!["src_len".into(), "tgt_len".into()],
            ..LoadOptions::default()
        };
        let log = load_bytes("t.csv", text.as_bytes(), InputFormat::Csv, &options).unwrap();
        let groups = KeyGroups::from_log(&log);
        let err = Binner::new(&groups, Method::Optimal, 0, 4).err().unwrap();
        assert_eq!(err, BinningError::OptimalNeedsOneDim(2));
        assert!(
            err.to_string().contains("k-means bins a 2-length key"),
            "{err}"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn every_method_partitions_and_optimal_is_never_worse(
            rows in prop::collection::vec((1u32..60, 1u32..500), 1..120),
            k in 1usize..12,
        ) {
            let keys: Vec<u32> = rows.iter().map(|r| r.0).collect();
            let times: Vec<f64> = rows.iter().map(|r| r.0 as f64 * 3.0 + r.1 as f64 / 50.0).collect();
            let groups = groups_from(&keys, &times);
            let values = groups.binning_values();
            let best = objective(&groups.counts, &values,
                &Binner::new(&groups, Method::Optimal, 0, k).unwrap().bins(k).unwrap());
            for method in Method::ALL {
                let bins = Binner::new(&groups, method, 7, k).unwrap().bins(k).unwrap();
                prop_assert!(is_partition(&bins, groups.len()), "{method:?} {bins:?}");
                prop_assert!(bins.len() <= k.min(groups.len()));
                let other = objective(&groups.counts, &values, &bins);
                prop_assert!(best <= other + 1e-6 * (1.0 + other.abs()), "{method:?}: {best} > {other}");
            }
        }
    }
}
