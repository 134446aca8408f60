//! Which columns of MEASURED hold the SeqPoint's id, iteration, key and metrics, and where each
//! SeqPoint of the document can be found by them.

use std::collections::HashMap;

use crate::doc::SelectDoc;
use crate::runlog::columns::{column_list, missing_column, DEFAULT_METRICS, ITERATION_ALIASES};
use crate::runlog::error::printable;
use crate::runlog::{LoadError, KEY_ALIASES};

use super::{Identified, MeasuredOptions, SEQPOINT_ALIASES, TRACED_COLUMN};

/// Where each SeqPoint of a document can be found: by id, by iteration, by key.
pub(super) struct SeqPointIndex<'a> {
    pub(super) doc: &'a SelectDoc,
    pub(super) by_id: HashMap<usize, usize>,
    /// The SeqPoint's own iteration, its planned iterations and its alternates.
    pub(super) by_iteration: HashMap<u64, usize>,
}

impl<'a> SeqPointIndex<'a> {
    pub(super) fn new(doc: &'a SelectDoc) -> Self {
        let by_id = doc
            .seqpoints
            .iter()
            .enumerate()
            .map(|(i, sp)| (sp.id, i))
            .collect();
        let mut by_iteration = HashMap::new();
        // Earlier entries win: the SeqPoint's own iteration, then the plan (profiled, then in
        // reserve), then alternates.
        for (i, sp) in doc.seqpoints.iter().enumerate() {
            by_iteration.entry(sp.iteration).or_insert(i);
        }
        if let Some(plan) = &doc.plan {
            let index_of: HashMap<usize, usize> = doc
                .seqpoints
                .iter()
                .enumerate()
                .map(|(i, sp)| (sp.id, i))
                .collect();
            for row in plan.profile.iter().chain(&plan.reserve) {
                if let Some(&i) = index_of.get(&row.seqpoint) {
                    by_iteration.entry(row.iteration).or_insert(i);
                }
            }
        }
        for (i, sp) in doc.seqpoints.iter().enumerate() {
            for &alt in &sp.alternates {
                by_iteration.entry(alt).or_insert(i);
            }
        }
        SeqPointIndex {
            doc,
            by_id,
            by_iteration,
        }
    }

    pub(super) fn by_id(&self, id: u64) -> Result<usize, String> {
        usize::try_from(id)
            .ok()
            .and_then(|id| self.by_id.get(&id).copied())
            .ok_or_else(|| {
                format!(
                    "found SeqPoint {id}, expected one of the {} SeqPoint ids in the SeqPoints file ({})",
                    self.doc.seqpoints.len(),
                    self.ids_text()
                )
            })
    }

    /// The document's ids for a message: `0-3` when they are 0 to N-1, else as listed
    /// (`0, 1, 2, 99`), the first few of many.
    pub(super) fn ids_text(&self) -> String {
        const SHOWN: usize = 8;
        let mut ids: Vec<usize> = self.by_id.keys().copied().collect();
        ids.sort_unstable();
        match ids.as_slice() {
            [] => "none".to_string(),
            [only] => only.to_string(),
            [first, .., last] if *first == 0 && *last == ids.len() - 1 => format!("{first}-{last}"),
            _ => {
                let mut text: Vec<String> = ids.iter().take(SHOWN).map(usize::to_string).collect();
                if ids.len() > SHOWN {
                    text.push(format!("... {}", ids[ids.len() - 1]));
                }
                text.join(", ")
            }
        }
    }

    /// The SeqPoint an iteration the file lists belongs to (its own, a planned or an
    /// alternate one); `None` for any other iteration.
    pub(super) fn by_iteration(&self, iteration: u64) -> Option<usize> {
        self.by_iteration.get(&iteration).copied()
    }

    /// The first few iterations the file lists, for a message.
    pub(super) fn listed_text(&self) -> String {
        const SHOWN: usize = 6;
        let mut listed: Vec<u64> = self.by_iteration.keys().copied().collect();
        listed.sort_unstable();
        let mut text: Vec<String> = listed.iter().take(SHOWN).map(u64::to_string).collect();
        if listed.len() > SHOWN {
            text.push(format!("... {}", listed[listed.len() - 1]));
        }
        text.join(", ")
    }

    /// The SeqPoint whose key this is, else the only bin that holds the key.
    pub(super) fn by_key(&self, key: &[u32]) -> Result<usize, String> {
        let exact: Vec<usize> = (0..self.doc.seqpoints.len())
            .filter(|&i| self.doc.seqpoints[i].key == key)
            .collect();
        let holding: Vec<usize> = (0..self.doc.seqpoints.len())
            .filter(|&i| {
                let bin = &self.doc.seqpoints[i].bin;
                key.iter()
                    .zip(bin.min.iter().zip(&bin.max))
                    .all(|(k, (lo, hi))| lo <= k && k <= hi)
            })
            .collect();
        let candidates = if exact.len() == 1 { exact } else { holding };
        match candidates.as_slice() {
            [one] => Ok(*one),
            [] => Err(format!(
                "found key {key:?}, expected a key inside one of the SeqPoints' bins"
            )),
            many => Err(format!(
                "key {key:?} lies in the bins of SeqPoints {:?}; add a 'seqpoint' or \
                 'iteration' column to say which",
                many.iter()
                    .map(|&i| self.doc.seqpoints[i].id)
                    .collect::<Vec<_>>()
            )),
        }
    }
}

/// Columns of MEASURED, resolved against its header.
pub(super) struct Columns {
    pub(super) seqpoint: Option<usize>,
    pub(super) iteration: Option<usize>,
    pub(super) keys: Vec<usize>,
    pub(super) metrics: Vec<usize>,
    pub(super) metric_names: Vec<String>,
    pub(super) identified_by: Identified,
    /// `traced`: 1 when the row was timed with the profiler on.
    pub(super) traced: Option<usize>,
}

fn find(header: &[String], names: &[&str]) -> Option<usize> {
    names.iter().find_map(|n| {
        header
            .iter()
            .position(|h| crate::runlog::columns::same_name(h, n))
    })
}

/// The names a key column of the document is looked up by: its aliases for the default key.
fn key_names(name: &str) -> Vec<&str> {
    if KEY_ALIASES.iter().any(|a| a.eq_ignore_ascii_case(name)) {
        KEY_ALIASES.to_vec()
    } else {
        vec![name]
    }
}

/// The metric names to read: those asked for, else the document's metrics when the header has
/// any of them, else the default metrics.
fn metric_names_wanted(
    header: &[String],
    doc: &SelectDoc,
    options: &MeasuredOptions,
) -> Vec<String> {
    if !options.metrics.is_empty() {
        return options.metrics.clone();
    }
    let doc_metrics: Vec<&str> = doc.input.metrics.iter().map(String::as_str).collect();
    let chosen = [doc_metrics.as_slice(), DEFAULT_METRICS]
        .into_iter()
        .find(|names| names.iter().any(|n| find(header, &[n]).is_some()))
        .unwrap_or_default();
    chosen.iter().map(|n| n.to_string()).collect()
}

/// Every name MEASURED's columns are looked up by, with what it is for, in the form the
/// run-log reader's ambiguity rule takes (`columns::ambiguity`).
pub(super) fn wanted_names(
    header: &[String],
    doc: &SelectDoc,
    options: &MeasuredOptions,
) -> Vec<(&'static str, String)> {
    let mut wanted: Vec<(&'static str, String)> = Vec::new();
    let mut add = |what: &'static str, names: &[&str]| {
        wanted.extend(names.iter().map(|n| (what, n.to_string())));
    };
    add("seqpoint", SEQPOINT_ALIASES);
    add("iteration", ITERATION_ALIASES);
    add("traced", &[TRACED_COLUMN]);
    for name in &doc.input.key {
        add("key", &key_names(name));
    }
    for name in metric_names_wanted(header, doc, options) {
        add("metric", &[name.as_str()]);
    }
    wanted
}

/// Resolve the columns against a header already checked for ambiguous names.
pub(super) fn resolve(
    path: &str,
    header: &[String],
    doc: &SelectDoc,
    options: &MeasuredOptions,
) -> Result<Columns, LoadError> {
    let seqpoint = find(header, SEQPOINT_ALIASES);
    let iteration = find(header, ITERATION_ALIASES);
    let keys: Vec<usize> = doc
        .input
        .key
        .iter()
        .map(|name| find(header, &key_names(name)))
        .collect::<Option<_>>()
        .unwrap_or_default();
    let identified_by = if seqpoint.is_some() {
        Identified::SeqPoint
    } else if iteration.is_some() {
        Identified::Iteration
    } else if !keys.is_empty() {
        Identified::Key
    } else {
        return Err(LoadError::at(
            path,
            1,
            None,
            format!(
                "no column names the SeqPoint of a row; expected 'seqpoint' (the id), \
                 'iteration' or the key column{} '{}'; the columns are: {}",
                if doc.input.key.len() > 1 { "s" } else { "" },
                printable(&doc.input.key.join(",")),
                column_list(header)
            ),
        ));
    };
    let mut metrics = Vec::new();
    let mut metric_names = Vec::new();
    for name in metric_names_wanted(header, doc, options) {
        let col = match find(header, &[name.as_str()]) {
            Some(col) => col,
            None if options.metrics.is_empty() => continue,
            None => return Err(missing_column(path, "metric", &name, header)),
        };
        if !metrics.contains(&col) {
            metrics.push(col);
            metric_names.push(printable(header[col].trim()));
        }
    }
    if metrics.is_empty() {
        return Err(LoadError::at(
            path,
            1,
            None,
            format!(
                "no metric column; expected one of the SeqPoints file's metrics ({}) or \
                 --metric COL; the columns are: {}",
                printable(&doc.input.metrics.join(", ")),
                column_list(header)
            ),
        ));
    }
    Ok(Columns {
        seqpoint,
        iteration,
        keys,
        metrics,
        metric_names,
        identified_by,
        traced: find(header, &[TRACED_COLUMN]),
    })
}
