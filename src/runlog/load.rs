//! The entry points: a run log from a path, standard input or memory, read the fast way when
//! it can be and the careful way otherwise, then `--compare` aligned and a proxy cost filled in.

use super::align::align_compare;
use super::careful::load_bytes_careful;
use super::cost::Cost;
use super::error::LoadError;
use super::fast;
use super::format::InputFormat;
use super::input::{
    check_encoding, check_line_lengths, input_name, open_input, read_opened, Opened,
};
use super::packed::{self, FIT_KEY, FLOPS_KEY};
use super::progress::LoadProgress;
use super::{LoadOptions, MetricColumn, RunLog};

/// Read the run log (and `--compare` log, if any) named in the options.
pub fn load_run(path: &str, options: &LoadOptions) -> Result<RunLog, LoadError> {
    load_run_with_progress(path, options, &LoadProgress::default())
}

/// `load_run` with the notes the load made (a log's own column read instead of a derived
/// one, the fit `--key fit` made), for the caller to show: a run log has no room for them.
pub fn load_run_noted(
    path: &str,
    options: &LoadOptions,
    progress: &LoadProgress,
) -> Result<(RunLog, Vec<String>), LoadError> {
    // Notes of an earlier load on this thread are not this one's.
    packed::take_notes();
    let log = load_run_with_progress(path, options, progress);
    let notes = packed::take_notes();
    log.map(|log| (log, notes))
}

/// `load_run`, reporting how far it has got through `progress` (poll it from another thread:
/// the CLI draws a progress bar from it, the TUI a progress line). `progress.is_finished()`
/// turns true when this returns, whether it succeeded or not.
pub fn load_run_with_progress(
    path: &str,
    options: &LoadOptions,
    progress: &LoadProgress,
) -> Result<RunLog, LoadError> {
    if path == "-" && options.compare.as_deref() == Some("-") {
        progress.finish();
        return Err(LoadError::file(
            input_name(path),
            "the run log and --compare are both standard input, which can be read only once; \
             expected a file for one of them (save it first, e.g. with tee)",
        ));
    }
    for file in std::iter::once(path).chain(options.compare.as_deref()) {
        if let Ok(meta) = std::fs::metadata(file) {
            if meta.is_file() {
                progress.add_total(2 * meta.len());
            }
        }
    }
    let result = load_both(path, options, progress);
    progress.finish();
    result
}

fn load_both(
    path: &str,
    options: &LoadOptions,
    progress: &LoadProgress,
) -> Result<RunLog, LoadError> {
    let mut log = load_path_observed(path, options, progress)?;
    if let Some(compare_path) = &options.compare {
        let other = load_path_observed(compare_path, options, progress)?;
        align_compare(&mut log, other)?;
    }
    completed(log, options)
}

/// What every loaded log gets once its columns are read: the fitted key (`--key fit`), and a
/// proxy cost where no metric was measured, so no caller meets a log without a metric.
fn completed(mut log: RunLog, options: &LoadOptions) -> Result<RunLog, LoadError> {
    // A log's own `fit` column is read as any column is.
    if is_fit(&options.key) && !log.key_names[0].eq_ignore_ascii_case(FIT_KEY) {
        packed::apply_fit(&mut log)?;
    }
    if is_alone(&options.key, FLOPS_KEY) && !log.key_names[0].eq_ignore_ascii_case(FLOPS_KEY) {
        packed::apply_flops(&mut log, options.model)?;
    }
    if log.configs[0].metrics.is_empty() {
        let values = proxy_values(&log, options.cost);
        log.configs[0].metrics.push(MetricColumn {
            name: options.cost.column_name(),
            values,
        });
        log.proxy = Some(options.cost);
    }
    Ok(log)
}

/// Whether the key asked for is `--key fit`.
fn is_fit(key: &[String]) -> bool {
    is_alone(key, FIT_KEY)
}

/// Whether the key asked for is `name` alone.
fn is_alone(key: &[String], name: &str) -> bool {
    matches!(key, [k] if k.trim().eq_ignore_ascii_case(name))
}

/// The proxy cost of every row. A cost depends on the key alone, so it is computed once per
/// distinct length (powf per row would dominate a 10M-row load).
fn proxy_values(log: &RunLog, cost: Cost) -> Vec<f64> {
    const TABLE_LIMIT: u32 = 1 << 22;
    let max_key = log.keys.iter().copied().max().unwrap_or(0);
    if log.dims() != 1 || max_key >= TABLE_LIMIT {
        return (0..log.len())
            .map(|row| cost.of_key(log.key(row)))
            .collect();
    }
    let mut table = vec![f64::NAN; max_key as usize + 1];
    log.keys
        .iter()
        .map(|&k| {
            let slot = &mut table[k as usize];
            if slot.is_nan() {
                *slot = cost.of_key(&[k]);
            }
            *slot
        })
        .collect()
}

/// Read one file (`-` is standard input), decompressing gzip, without aligning or proxies.
pub fn load_path(path: &str, options: &LoadOptions) -> Result<RunLog, LoadError> {
    load_path_observed(path, options, &LoadProgress::default())
}

fn load_path_observed(
    path: &str,
    options: &LoadOptions,
    progress: &LoadProgress,
) -> Result<RunLog, LoadError> {
    if let Some(bytes) = super::sample::sample_bytes(path) {
        let format = options.format.unwrap_or(InputFormat::Csv);
        return load_bytes(path, bytes, format, options);
    }
    // Opened once: a pipe or process substitution has no second chance.
    let opened = open_input(path)?;
    if let Opened::File {
        file,
        regular_len: Some(len),
    } = &opened
    {
        if let Some(log) = fast::read_file(path, file, *len, options, progress)? {
            check_row_count(path, log.len(), MAX_ROWS)?;
            return Ok(log);
        }
    }
    // The start of a stream is parsed as it arrives: a wrong header is an error at once.
    let probe = |name: &str, lines: &[u8], format| {
        load_bytes_careful(name, lines, format, options).map(|_| ())
    };
    let (bytes, format) = read_opened(path, opened, options.format, &options.limits, &probe)?;
    load_bytes(input_name(path), &bytes, format, options)
}

/// Rows a run log may have: rows are numbered with 32 bits in the key groups and the
/// candidates, so a longer log would be misread, not merely slow.
const MAX_ROWS: usize = u32::MAX as usize;

fn check_row_count(path: &str, rows: usize, limit: usize) -> Result<(), LoadError> {
    if rows <= limit {
        return Ok(());
    }
    Err(LoadError::file(
        path,
        format!(
            "has {rows} iterations; expected at most {limit} in one log: split the run \
             (e.g. by epoch) and select each part"
        ),
    ))
}

/// Parse bytes already in memory, as read (no fitted key, no proxy cost: `load_run_bytes`
/// adds them). `path` is used in messages only.
pub fn load_bytes(
    path: &str,
    bytes: &[u8],
    format: InputFormat,
    options: &LoadOptions,
) -> Result<RunLog, LoadError> {
    if let Some(log) = fast::read_plain(
        path,
        &fast::Source::Bytes(bytes),
        format,
        options,
        &LoadProgress::default(),
    )? {
        check_row_count(path, log.len(), MAX_ROWS)?;
        return Ok(log);
    }
    check_line_lengths(path, bytes, &options.limits)?;
    check_encoding(path, bytes)?;
    let log = load_bytes_careful(path, bytes, format, options)?;
    check_row_count(path, log.len(), MAX_ROWS)?;
    Ok(log)
}

/// A run log in memory read as `load_run` reads a file: `load_bytes`, then completed (the
/// fitted key, a proxy cost where nothing was measured).
pub fn load_run_bytes(
    path: &str,
    bytes: &[u8],
    format: InputFormat,
    options: &LoadOptions,
) -> Result<RunLog, LoadError> {
    completed(load_bytes(path, bytes, format, options)?, options)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_longer_than_rows_can_be_numbered_is_refused_by_name() {
        assert!(check_row_count("run.csv", 4, 4).is_ok());
        assert_eq!(
            check_row_count("run.csv", 5, 4).unwrap_err().to_string(),
            "run.csv: has 5 iterations; expected at most 4 in one log: split the run (e.g. by \
             epoch) and select each part"
        );
        assert_eq!(MAX_ROWS, 4_294_967_295);
    }
}
