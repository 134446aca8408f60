//! `--compare`: a second configuration's metrics attached to the run log row by row, matched
//! by iteration, after checking that both logs hold the same iterations with the same keys.

use super::error::LoadError;
use super::{ConfigRole, Configuration, MetricColumn, RunLog, SkippedRows};
use crate::options::{Surface, COMPARE, METRIC, SKIP_BAD};

/// Attach a second configuration read elsewhere (e.g. from bytes in memory) to a run log,
/// aligned by iteration, with the same checks as `--compare`.
pub fn with_compare(mut log: RunLog, other: RunLog) -> Result<RunLog, LoadError> {
    align_compare(&mut log, other)?;
    Ok(log)
}

/// " (a bad row was skipped PLACE with --skip-bad, at line N)", or nothing when none was.
fn skipped_note(skipped: &SkippedRows, place: &str) -> String {
    let skip_bad = SKIP_BAD.typed(Surface::CommandLine, "");
    match (skipped.count, skipped.first_lines.first()) {
        (0, _) | (_, None) => String::new(),
        (1, Some(line)) => {
            format!(" (a bad row was skipped {place} with {skip_bad}, at line {line})")
        }
        (n, Some(line)) => format!(
            " ({n} bad rows were skipped {place} with {skip_bad}, the first at line {line})"
        ),
    }
}

pub(super) fn align_compare(log: &mut RunLog, mut other: RunLog) -> Result<(), LoadError> {
    let path = other.source.clone();
    if other.configs[0].metrics.is_empty() {
        let suggestion = match other.configs[0].measurement_like.as_slice() {
            [] => String::new(),
            [name, ..] => format!(
                "; '{name}' looks measured: pass {}",
                METRIC.typed(Surface::CommandLine, name)
            ),
        };
        return Err(LoadError::file(
            &path,
            format!(
                "the {} log has no metric column (expected e.g. time_ms){suggestion}",
                COMPARE.typed(Surface::CommandLine, "")
            ),
        ));
    }
    let baseline_names = log.metric_names();
    let other_names = other.metric_names();
    if !baseline_names.is_empty() && baseline_names != other_names {
        return Err(LoadError::file(
            &path,
            format!(
                "the {} log has metrics [{}], expected the baseline's [{}]",
                COMPARE.typed(Surface::CommandLine, ""),
                other_names.join(", "),
                baseline_names.join(", ")
            ),
        ));
    }
    let missing = |iteration: u64| {
        // A row dropped by --skip-bad is the likely reason: say so rather than leave it out.
        let skipped = skipped_note(&other.skipped, "here");
        LoadError::file(
            &path,
            format!("iteration {iteration} of {} is missing here{skipped}; expected the same iterations in both logs", log.source),
        )
    };
    let key_differs = |iteration: u64, other_row: usize, row: usize| {
        LoadError::file(
            &path,
            format!(
                "iteration {iteration} has key {:?} here but {:?} in {}; expected the same batches in the same order",
                other.key(other_row),
                log.key(row),
                log.source
            ),
        )
    };
    // The usual case: the same iterations row for row, so the metrics move over without a copy.
    let same_rows = log.iterations == other.iterations;
    let mut order = Vec::new();
    if same_rows {
        if let Some(row) = (0..log.len()).find(|&r| other.key(r) != log.key(r)) {
            return Err(key_differs(log.iteration(row), row, row));
        }
    } else {
        order.reserve(log.len());
        for (row, iteration) in log.iterations.iter().enumerate() {
            let other_row = other
                .iterations
                .row_of(iteration)
                .ok_or_else(|| missing(iteration))?;
            if other.key(other_row) != log.key(row) {
                return Err(key_differs(iteration, other_row, row));
            }
            order.push(other_row);
        }
    }
    if other.len() > log.len() {
        let extra = other
            .iterations
            .iter()
            .find(|&it| log.iterations.row_of(it).is_none())
            .unwrap_or_default();
        // A baseline row dropped by --skip-bad is the likely reason: say so.
        let skipped = skipped_note(&log.skipped, "there");
        return Err(LoadError::file(
            &path,
            format!(
                "iteration {extra} is not in {}{skipped}; expected the same iterations in both logs",
                log.source
            ),
        ));
    }
    let metrics = std::mem::take(&mut other.configs[0].metrics)
        .into_iter()
        .map(|m| MetricColumn {
            values: if same_rows {
                m.values
            } else {
                order.iter().map(|&r| m.values[r]).collect()
            },
            name: m.name,
        })
        .collect();
    log.configs.push(Configuration {
        role: ConfigRole::Compare,
        source: path,
        metrics,
        measurement_like: Vec::new(),
    });
    Ok(())
}
