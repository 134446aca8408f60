//! Reading run logs: one row per training iteration, columnar in memory.
//! Formats: CSV, TSV, JSON Lines, each optionally gzip-compressed; see `format`.
//!
//! `load` holds the entry points and `input` gets the bytes. `fast` reads large plain logs in
//! parallel and leaves anything unusual to `careful`, the record-by-record reader whose messages
//! name line and column; both use the field parsers in `parse`, which the measurements reader
//! (`project::measured`) shares with `input`, `columns`, `jsonl` (JSON Lines as a table: every
//! line's keys) and `error`. `align` attaches `--compare`.
//! `limits` bounds what one input may cost; `gunzip` names what follows gzip data.

mod align;
mod careful;
pub(crate) mod columns;
mod compact;
pub mod cost;
pub(crate) mod error;
mod fast;
mod format;
mod gunzip;
pub(crate) mod input;
pub(crate) mod jsonl;
pub mod limits;
mod load;
pub mod measured;
pub mod packed;
pub(crate) mod parse;
mod progress;
pub mod sample;

pub use crate::doc::ConfigRole;
pub use align::with_compare;
pub use columns::{ColumnPlan, DEFAULT_KEY, KEY_ALIASES};
pub use compact::{Epochs, Iterations};
pub use error::{closest_name, LoadError, Location};
pub use format::InputFormat;
pub use limits::InputLimits;
pub use load::{
    load_bytes, load_path, load_run, load_run_bytes, load_run_noted, load_run_with_progress,
};
pub use progress::LoadProgress;

/// One numeric column of per-iteration measurements (or a proxy cost computed from keys).
#[derive(Debug, Clone, PartialEq)]
pub struct MetricColumn {
    pub name: String,
    pub values: Vec<f64>,
}

/// The measurements of one configuration, row-aligned with the run log.
#[derive(Debug, Clone, PartialEq)]
pub struct Configuration {
    pub role: ConfigRole,
    pub source: String,
    pub metrics: Vec<MetricColumn>,
    /// With no metric: the log's columns that look measured (see `columns::looks_measured`).
    pub measurement_like: Vec<String>,
}

/// Rows dropped by `--skip-bad`: how many, and where the first few were.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkippedRows {
    pub count: u64,
    pub first_lines: Vec<u64>,
    pub first_reason: Option<String>,
    /// The file's last line, when it was skipped and has no line end: a row cut off mid-write
    /// (the run still writing the log), for the note that says so.
    pub cut_line: Option<u64>,
}

/// The share of a log's rows `--skip-bad` may leave out when no share is given: more bad rows
/// than good ones is a wrong file, format or column, not a few damaged lines.
pub const SKIP_BAD_SHARE: f64 = 0.5;

/// What to read and how strictly.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// Key column names; empty means `seq_len` and its aliases.
    pub key: Vec<String>,
    /// Metric column names; empty means `time_ms`/`energy_j` where present.
    pub metrics: Vec<String>,
    pub format: Option<InputFormat>,
    pub skip_bad: bool,
    /// With `skip_bad`: the largest share of the rows (0 to 1) that may be left out before the
    /// load is refused; `None` is [`SKIP_BAD_SHARE`] (`--skip-bad=PCT` sets it).
    pub skip_bad_share: Option<f64>,
    /// A second configuration over the same iterations.
    pub compare: Option<String>,
    /// The proxy cost used when the log has no metric.
    pub cost: cost::Cost,
    /// `--model`: the shape `--key flops` counts a step's FLOPs with.
    pub model: Option<packed::ModelShape>,
    /// Longest line, largest input and memory a load may use.
    pub limits: InputLimits,
}

/// A training run: per-iteration keys and the metrics of each configuration, as columns.
/// Rows are in ascending iteration order. Iterations and epochs are stored compactly (a formula,
/// runs): read them with `iteration(row)` / `epoch(row)`.
#[derive(Debug, Clone, PartialEq)]
pub struct RunLog {
    pub source: String,
    pub key_names: Vec<String>,
    pub iterations: Iterations,
    pub epochs: Option<Epochs>,
    /// Row-major keys: row `r` has `keys[r * dims .. (r + 1) * dims]`.
    pub keys: Vec<u32>,
    /// Index 0 is the baseline; index 1, if present, the `--compare` configuration.
    pub configs: Vec<Configuration>,
    pub skipped: SkippedRows,
    /// Set when the log had no metric and a proxy cost was computed from the keys.
    pub proxy: Option<cost::Cost>,
    /// With no iteration column (iterations are row numbers): the columns that look like one
    /// (`global_step`), for the note that says so.
    pub iteration_like: Vec<String>,
}

impl RunLog {
    pub fn len(&self) -> usize {
        self.iterations.len()
    }

    pub fn is_empty(&self) -> bool {
        self.iterations.is_empty()
    }

    /// The iteration number of row `row`.
    pub fn iteration(&self, row: usize) -> u64 {
        self.iterations.get(row)
    }

    /// The epoch of row `row`, when the log has an epoch column.
    pub fn epoch(&self, row: usize) -> Option<u32> {
        self.epochs.as_ref().map(|e| e[row])
    }

    pub fn dims(&self) -> usize {
        self.key_names.len()
    }

    pub fn key(&self, row: usize) -> &[u32] {
        let d = self.dims();
        &self.keys[row * d..(row + 1) * d]
    }

    pub fn metric_names(&self) -> Vec<String> {
        self.configs[0]
            .metrics
            .iter()
            .map(|m| m.name.clone())
            .collect()
    }

    pub fn epoch_count(&self) -> Option<u32> {
        self.epochs.as_ref().map(|e| e.max().map_or(0, |m| m + 1))
    }

    pub fn compare(&self) -> Option<&Configuration> {
        self.configs.get(1)
    }

    /// The rows `rows` (ascending) as a log of their own, for checks that read a run less some
    /// iterations (`report --exclude`): the same iteration numbers, epochs, keys and every
    /// configuration's metrics, row for row. The file's skipped rows stay as read.
    pub fn subset(&self, rows: &[u32]) -> RunLog {
        debug_assert!(rows.windows(2).all(|w| w[0] < w[1]), "rows ascending");
        let dims = self.dims();
        let iterations: Vec<u64> = rows.iter().map(|&r| self.iteration(r as usize)).collect();
        let epochs = self.epochs.as_ref().map(|e| {
            let kept: Vec<u32> = rows.iter().map(|&r| e[r as usize]).collect();
            Epochs::from_vec(&kept)
        });
        let keys = rows
            .iter()
            .flat_map(|&r| self.key(r as usize).iter().copied())
            .collect();
        let configs = self
            .configs
            .iter()
            .map(|config| Configuration {
                metrics: config
                    .metrics
                    .iter()
                    .map(|m| MetricColumn {
                        name: m.name.clone(),
                        values: rows.iter().map(|&r| m.values[r as usize]).collect(),
                    })
                    .collect(),
                ..config.clone()
            })
            .collect();
        debug_assert_eq!(self.keys.len(), self.len() * dims);
        RunLog {
            source: self.source.clone(),
            key_names: self.key_names.clone(),
            iterations: Iterations::from_vec(iterations),
            epochs,
            keys,
            configs,
            skipped: self.skipped.clone(),
            proxy: self.proxy,
            iteration_like: self.iteration_like.clone(),
        }
    }
}

/// A run log from CSV text, for unit tests: one helper instead of a copy per module.
#[cfg(test)]
pub(crate) fn test_log(text: &str) -> RunLog {
    load_bytes(
        "t.csv",
        text.as_bytes(),
        InputFormat::Csv,
        &LoadOptions::default(),
    )
    .expect("test CSV loads")
}

/// The bundled speech logs, 1-thread baseline against 2-thread new configuration, for unit
/// tests.
#[cfg(test)]
pub(crate) fn test_speech_pair() -> RunLog {
    load_run(
        "tests/data/speech_t1.csv",
        &LoadOptions {
            compare: Some("tests/data/speech_t2.csv".into()),
            ..Default::default()
        },
    )
    .expect("the bundled speech logs load")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subset_keeps_its_rows_whole_and_in_order() {
        let text = "iteration,epoch,src_len,tgt_len,time_ms,energy_j\n\
                    10,0,5,6,1,10\n11,0,7,8,2,20\n12,1,9,10,3,30\n13,1,11,12,4,40\n";
        let options = LoadOptions {
            key: vec!["src_len".into(), "tgt_len".into()],
            ..LoadOptions::default()
        };
        let log = load_bytes("t.csv", text.as_bytes(), InputFormat::Csv, &options).unwrap();
        let sub = log.subset(&[0, 2, 3]);
        assert_eq!(sub.iterations.to_vec(), [10, 12, 13]);
        assert_eq!(sub.epochs.as_ref().unwrap().to_vec(), [0, 1, 1]);
        assert_eq!(sub.keys, [5, 6, 9, 10, 11, 12]);
        assert_eq!(sub.key(1), [9, 10]);
        let values: Vec<Vec<f64>> = sub.configs[0]
            .metrics
            .iter()
            .map(|m| m.values.clone())
            .collect();
        assert_eq!(values, [vec![1.0, 3.0, 4.0], vec![10.0, 30.0, 40.0]]);
        assert_eq!(sub.metric_names(), log.metric_names());
        // Every row is the whole log again.
        assert_eq!(log.subset(&[0, 1, 2, 3]), log);
        assert!(log.subset(&[]).is_empty());
    }
}
