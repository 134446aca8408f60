//! Which header column is which: iteration, epoch, the key, the metrics.
//! Names match case-insensitively; well-known aliases are accepted. A name that differs from
//! one only by byte-order marks, invisible characters (zero-width space, soft hyphen, other
//! format characters), surrounding spaces or a stray pair of quotes is that name
//! ([`same_name`]): an editor's second BOM must not turn `iteration` into row numbers. A
//! header with no iteration column but one that looks like it (`global_step`) is named
//! ([`ColumnPlan::iteration_like`]), so the user is told iterations are row numbers.

use super::error::{closest_name, printable, shown_name, LoadError};
use super::packed::{self, Derived, DOC_LENS, FIT_KEY, FLOPS_KEY};
use crate::options::{Surface, INPUT_FORMAT, KEY};

pub const DEFAULT_KEY: &str = "seq_len";
pub const KEY_ALIASES: &[&str] = &["seq_len", "sl", "seqlen", "seq_length"];
pub(crate) const ITERATION_ALIASES: &[&str] = &["iteration", "iter", "step"];
const EPOCH_ALIASES: &[&str] = &["epoch"];
/// Metrics used when the user names none, in this order, when present.
pub const DEFAULT_METRICS: &[&str] = &["time_ms", "energy_j"];

/// Column indices into a header, resolved once per file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnPlan {
    pub iteration: Option<usize>,
    pub epoch: Option<usize>,
    pub keys: Vec<usize>,
    pub key_names: Vec<String>,
    /// Per key: `Some` when it is derived from the `doc_lens` column `keys` points at, `None`
    /// when it is read from its own column as written.
    pub derived: Vec<Option<Derived>>,
    pub metrics: Vec<usize>,
    pub metric_names: Vec<String>,
    /// With no metric found or asked for: the unread columns whose names look measured
    /// (`gpu_step_time_ms`), so the user is told the `--metric` to pass rather than left with
    /// a proxy cost.
    pub measurement_like: Vec<String>,
    /// With no iteration column: the columns whose names look like one (`global_step`), as
    /// in the header, so the user is told that row numbers stand in.
    pub iteration_like: Vec<String>,
    pub width: usize,
}

/// Name parts that mark a column as a measurement of an iteration.
const MEASUREMENT_WORDS: &[&str] = &[
    "time", "ms", "sec", "secs", "seconds", "us", "ns", "duration", "latency", "elapsed", "energy",
    "joules", "j", "power", "watts",
];

/// Whether a column name looks like a per-iteration measurement: one of its `_`/`-`/space
/// separated parts is a time or energy word.
pub fn looks_measured(name: &str) -> bool {
    name.to_ascii_lowercase()
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|part| MEASUREMENT_WORDS.contains(&part))
}

/// A header name as it is compared: byte-order marks and other invisible (format) characters
/// removed, then spaces trimmed and one pair of surrounding quotes (left when a BOM stood
/// before a quoted field) dropped.
pub(crate) fn bare_name(name: &str) -> std::borrow::Cow<'_, str> {
    let invisible = |c: char| {
        matches!(c,
            '\u{FEFF}' | '\u{00AD}' | '\u{180E}' | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206F}')
    };
    let kept: std::borrow::Cow<'_, str> = if name.contains(invisible) {
        name.chars()
            .filter(|&c| !invisible(c))
            .collect::<String>()
            .into()
    } else {
        name.into()
    };
    let trimmed = kept.trim();
    let unquoted = trimmed
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(trimmed)
        .trim();
    if unquoted.len() == kept.len() {
        kept
    } else {
        unquoted.to_string().into()
    }
}

/// Whether header name `header` is the column `wanted` (ignoring case and what [`bare_name`]
/// removes).
pub(crate) fn same_name(header: &str, wanted: &str) -> bool {
    bare_name(header).eq_ignore_ascii_case(wanted.trim())
}

fn find(header: &[String], names: &[&str]) -> Option<usize> {
    names
        .iter()
        .find_map(|wanted| header.iter().position(|h| same_name(h, wanted)))
}

/// Name parts that make a column look like the iteration number.
const ITERATION_WORDS: &[&str] = &[
    "iteration",
    "iterations",
    "iter",
    "iters",
    "step",
    "steps",
    "it",
];

/// Whether a column name looks like an iteration column it is not (`global_step`,
/// `train_iter`, `iteration_id`, `Step Number`): one of its parts is an iteration word, or it
/// is a near spelling of `iteration` (`itteration`); a measurement (`step_time_ms`) is not.
fn looks_like_iteration(name: &str) -> bool {
    let lower = bare_name(name).to_ascii_lowercase();
    if looks_measured(&lower) {
        return false;
    }
    let parts: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|p| !p.is_empty())
        .collect();
    parts.iter().any(|p| ITERATION_WORDS.contains(p))
        || (lower.len() >= 7 && closest_name(&lower, &["iteration".to_string()]).is_some())
}

/// Characters of column names listed in a missing-column message: a wide header (or a whole
/// file read as one header line) must not flood the terminal.
const COLUMN_LIST_BUDGET: usize = 400;

/// A header's column names for a message: escaped, and cut after about 400 characters with
/// the number of columns in all.
pub(crate) fn column_list(header: &[String]) -> String {
    let mut listed: Vec<String> = Vec::new();
    let mut used = 0;
    for name in header {
        let shown = shown_name(name);
        used += shown.chars().count() + 2;
        if used > COLUMN_LIST_BUDGET && !listed.is_empty() {
            listed.push(format!("... ({} columns in all)", header.len()));
            break;
        }
        listed.push(shown);
    }
    listed.join(", ")
}

pub(crate) fn missing_column(path: &str, what: &str, wanted: &str, header: &[String]) -> LoadError {
    let mut message = format!(
        "no {what} column '{}'; the columns are: {}",
        shown_name(wanted),
        column_list(header)
    );
    if let Some(close) = closest_name(wanted, header) {
        message.push_str(&format!(" (did you mean '{}'?)", shown_name(close)));
    } else if header.len() == 1 {
        message.push_str(&delimiter_hint(&header[0]));
    }
    LoadError::at(path, 1, None, message)
}

/// A one-column header usually means the wrong delimiter: say which, and what to do.
fn delimiter_hint(header: &str) -> String {
    if header.contains('\t') {
        format!(
            " (the header is one column: is the file tab-separated? use {})",
            INPUT_FORMAT.typed(Surface::CommandLine, "tsv")
        )
    } else if header.contains(',') {
        format!(
            " (the header is one column: is the file comma-separated? use {})",
            INPUT_FORMAT.typed(Surface::CommandLine, "csv")
        )
    } else if let Some(sep) = [';', '|', ' '].into_iter().find(|&c| header.contains(c)) {
        format!(
            " (the header is one column: is the file separated by {sep:?}? seqpoint reads \
             commas (CSV), tabs (TSV) or JSON Lines: convert it, e.g. tr '{sep}' ',')"
        )
    } else {
        String::new()
    }
}

/// Two header columns that both answer one wanted name (`seq_len` twice, or `seq_len` and
/// `SEQ_LEN`): which one is meant cannot be told, so neither is guessed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ambiguous {
    pub first: usize,
    pub second: usize,
    pub what: &'static str,
    pub wanted: String,
}

impl Ambiguous {
    pub(crate) fn message(&self, header: &[String]) -> String {
        format!(
            "columns '{}' and '{}' both match the {} column '{}' (names match ignoring case); \
             expected one: rename or remove the other",
            shown_name(header[self.first].trim()),
            shown_name(header[self.second].trim()),
            self.what,
            shown_name(&self.wanted)
        )
    }
}

/// Every name the columns are looked up by, for `key` and `metrics` as `ColumnPlan::resolve`
/// takes them, each with what it is for: iteration, epoch, key and metric names and aliases.
pub(crate) fn wanted_names(key: &[String], metrics: &[String]) -> Vec<(&'static str, String)> {
    let mut wanted: Vec<(&'static str, String)> = Vec::new();
    let mut add = |what: &'static str, names: &[&str]| {
        wanted.extend(names.iter().map(|n| (what, n.to_string())));
    };
    add("iteration", ITERATION_ALIASES);
    add("epoch", EPOCH_ALIASES);
    if key.is_empty() {
        add("key", KEY_ALIASES);
    }
    for name in key {
        if name.eq_ignore_ascii_case(DEFAULT_KEY) {
            add("key", KEY_ALIASES);
        } else if name.trim().eq_ignore_ascii_case(FIT_KEY) {
            add("key", &[FIT_KEY, DOC_LENS]);
            add("key", &Derived::ALL.map(Derived::name));
        } else if name.trim().eq_ignore_ascii_case(FLOPS_KEY) {
            add("key", &[FLOPS_KEY, DOC_LENS]);
            add("key", &[Derived::Tokens, Derived::Attn].map(Derived::name));
        } else if Derived::named(name).is_some() {
            add("key", &[name.as_str(), DOC_LENS]);
        } else {
            add("key", &[name.as_str()]);
        }
    }
    if metrics.is_empty() {
        add("metric", DEFAULT_METRICS);
    }
    for name in metrics {
        add("metric", &[name.as_str()]);
    }
    wanted
}

/// The first wanted name (as `wanted_names` lists them) two header columns answer, if any.
pub(crate) fn ambiguity(header: &[String], wanted: &[(&'static str, String)]) -> Option<Ambiguous> {
    wanted.iter().find_map(|(what, wanted)| {
        let mut matching = header
            .iter()
            .enumerate()
            .filter(|(_, h)| same_name(h, wanted))
            .map(|(i, _)| i);
        let first = matching.next()?;
        let second = matching.next()?;
        Some(Ambiguous {
            first,
            second,
            what,
            wanted: wanted.clone(),
        })
    })
}

/// A header row (line 1) with two columns that answer one wanted name is an error at the
/// second of them.
pub(crate) fn check_header_unambiguous(
    path: &str,
    header: &[String],
    wanted: &[(&'static str, String)],
) -> Result<(), LoadError> {
    match ambiguity(header, wanted) {
        Some(ambiguous) => Err(LoadError::at(
            path,
            1,
            Some(ambiguous.second as u64 + 1),
            ambiguous.message(header),
        )),
        None => Ok(()),
    }
}

/// The name of a key or metric column as the outputs carry it. A control character in it
/// (an escape sequence, a line break) is refused: the table, the JSON and the CSV lists could
/// show it only raw, which a terminal obeys, or escaped, which no longer names the column.
fn used_name(path: &str, header: &[String], index: usize) -> Result<String, LoadError> {
    let name = bare_name(&header[index]);
    match name.chars().find(|c| c.is_control()) {
        None => Ok(name.into_owned()),
        Some(c) => Err(LoadError::at(
            path,
            1,
            None,
            format!(
                "column name '{}' holds a control character (U+{:04X}); expected printable \
                 characters only: rename the column",
                printable(&name),
                c as u32
            ),
        )),
    }
}

/// Where a derived column comes from: the log's own column of that name (it wins, with a note
/// when the log has `doc_lens` too), else `doc_lens` (`Some(wanted)`); `None` when neither is
/// there.
fn derived_column(
    path: &str,
    header: &[String],
    wanted: Derived,
) -> Option<(usize, Option<Derived>)> {
    let own = find(header, &[wanted.name()]);
    let lists = find(header, &[DOC_LENS]);
    match (own, lists) {
        (Some(index), Some(_)) => {
            packed::note(format!(
                "{}: the key '{}' is the log's own column, not the one derived from {DOC_LENS} \
                 (a log's own column wins: rename it to key on the derived one)",
                crate::text::shown::shown_path(path),
                wanted.name()
            ));
            Some((index, None))
        }
        (Some(index), None) => Some((index, None)),
        (None, Some(index)) => Some((index, Some(wanted))),
        (None, None) => None,
    }
}

/// A derived key (or `fit`) the log can give neither from a column of its own nor from
/// `doc_lens`.
fn derived_missing(path: &str, name: &str, header: &[String]) -> LoadError {
    let mut error = missing_column(path, "key", name, header);
    if let LoadError::Bad { message, .. } = &mut error {
        message.push_str(&format!(
            "; '{}' is derived from a '{DOC_LENS}' column (each step's document lengths), \
             which this log does not have either",
            shown_name(name.trim())
        ));
    }
    error
}

impl ColumnPlan {
    /// Resolve the requested key and metric names against a header.
    /// `key` empty means the default key with its aliases; `metrics` empty means the defaults
    /// that are present (possibly none: then a proxy cost stands in).
    pub fn resolve(
        path: &str,
        header: &[String],
        key: &[String],
        metrics: &[String],
    ) -> Result<Self, LoadError> {
        check_header_unambiguous(path, header, &wanted_names(key, metrics))?;
        let mut keys = Vec::new();
        let mut key_names = Vec::new();
        let mut derived = Vec::new();
        let fit = matches!(key, [k] if k.trim().eq_ignore_ascii_case(FIT_KEY))
            && find(header, &[FIT_KEY]).is_none();
        let flops = matches!(key, [k] if k.trim().eq_ignore_ascii_case(FLOPS_KEY))
            && find(header, &[FLOPS_KEY]).is_none();
        if key.is_empty() {
            let index = find(header, KEY_ALIASES)
                .ok_or_else(|| missing_column(path, "key", DEFAULT_KEY, header))?;
            keys.push(index);
            key_names.push(used_name(path, header, index)?);
            derived.push(None);
        } else if fit {
            // Every derived column the log can give, its own or from doc_lens; the load fits
            // the metric on them and keys the run on the fit (`packed::apply_fit`).
            for wanted in Derived::ALL {
                if let Some((index, from)) = derived_column(path, header, wanted) {
                    keys.push(index);
                    key_names.push(match from {
                        Some(d) => d.name().to_string(),
                        None => used_name(path, header, index)?,
                    });
                    derived.push(from);
                }
            }
            if keys.is_empty() {
                return Err(derived_missing(path, FIT_KEY, header));
            }
        } else if flops {
            // tokens and attn, the log's own or from doc_lens; the load counts the FLOPs from
            // them and keys the run on the count (`packed::apply_flops`).
            for wanted in [Derived::Tokens, Derived::Attn] {
                let (index, from) = derived_column(path, header, wanted)
                    .ok_or_else(|| derived_missing(path, FLOPS_KEY, header))?;
                keys.push(index);
                key_names.push(wanted.name().to_string());
                derived.push(from);
            }
        } else {
            for name in key {
                for (whole, what) in [(FIT_KEY, "the fitted cost"), (FLOPS_KEY, "a step's FLOPs")] {
                    if key.len() > 1 && name.trim().eq_ignore_ascii_case(whole) {
                        return Err(LoadError::file(
                            path,
                            format!(
                                "{} is a whole key ({what}); expected it alone",
                                KEY.typed(Surface::CommandLine, whole)
                            ),
                        ));
                    }
                }
                if let Some(wanted) = Derived::named(name) {
                    let (index, from) = derived_column(path, header, wanted)
                        .ok_or_else(|| derived_missing(path, name, header))?;
                    keys.push(index);
                    key_names.push(match from {
                        Some(d) => d.name().to_string(),
                        None => used_name(path, header, index)?,
                    });
                    derived.push(from);
                    continue;
                }
                let aliases: Vec<&str> = if name.eq_ignore_ascii_case(DEFAULT_KEY) {
                    KEY_ALIASES.to_vec()
                } else {
                    vec![name.as_str()]
                };
                let index = find(header, &aliases)
                    .ok_or_else(|| missing_column(path, "key", name, header))?;
                keys.push(index);
                key_names.push(used_name(path, header, index)?);
                derived.push(None);
            }
        }
        if key_names.len() > 2 && !fit {
            return Err(LoadError::file(
                path,
                "a key has one or two length columns (e.g. seq_len, or src_len,tgt_len)",
            ));
        }
        let mut metric_cols = Vec::new();
        let mut metric_names = Vec::new();
        if metrics.is_empty() {
            for name in DEFAULT_METRICS {
                if let Some(index) = find(header, &[name]) {
                    metric_cols.push(index);
                    metric_names.push(used_name(path, header, index)?);
                }
            }
        } else {
            for name in metrics {
                let index = find(header, &[name.as_str()])
                    .ok_or_else(|| missing_column(path, "metric", name, header))?;
                if metric_cols.contains(&index) {
                    continue;
                }
                metric_cols.push(index);
                metric_names.push(used_name(path, header, index)?);
            }
        }
        let iteration = find(header, ITERATION_ALIASES);
        let epoch = find(header, EPOCH_ALIASES);
        let measurement_like = if metric_cols.is_empty() && metrics.is_empty() {
            header
                .iter()
                .enumerate()
                .filter(|(i, name)| {
                    !keys.contains(i)
                        && Some(*i) != iteration
                        && Some(*i) != epoch
                        && looks_measured(name.trim())
                })
                .map(|(_, name)| printable(name.trim()))
                .collect()
        } else {
            Vec::new()
        };
        let iteration_like = if iteration.is_none() {
            header
                .iter()
                .enumerate()
                .filter(|(i, name)| {
                    !keys.contains(i)
                        && !metric_cols.contains(i)
                        && Some(*i) != epoch
                        && looks_like_iteration(name)
                })
                .map(|(_, name)| printable(name.trim()))
                .collect()
        } else {
            Vec::new()
        };
        Ok(ColumnPlan {
            iteration,
            epoch,
            measurement_like,
            iteration_like,
            keys,
            key_names,
            derived,
            metrics: metric_cols,
            metric_names,
            width: header.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_looking_columns_are_named_when_no_metric_is_found() {
        let h = header(&[
            "step",
            "seq_len",
            "gpu_step_time_ms",
            "loss",
            "Energy-J",
            "epoch",
        ]);
        let plan = ColumnPlan::resolve("f", &h, &[], &[]).unwrap();
        assert!(plan.metrics.is_empty());
        assert_eq!(plan.measurement_like, ["gpu_step_time_ms", "Energy-J"]);
        // A metric found, or one asked for, leaves nothing to suggest.
        let h = header(&["seq_len", "time_ms", "wall_time_s"]);
        assert!(ColumnPlan::resolve("f", &h, &[], &[])
            .unwrap()
            .measurement_like
            .is_empty());
        for name in ["loss", "timestamp_id", "msg", "items"] {
            assert!(!looks_measured(name), "{name}");
        }
    }

    fn header(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn aliases_and_case_are_accepted() {
        let h = header(&["Step", "EPOCH", "SL", "Time_ms", "other"]);
        let plan = ColumnPlan::resolve("f", &h, &[], &[]).unwrap();
        assert_eq!(plan.iteration, Some(0));
        assert_eq!(plan.epoch, Some(1));
        assert_eq!(plan.keys, vec![2]);
        assert_eq!(plan.metrics, vec![3]);
        assert_eq!(plan.metric_names, vec!["Time_ms"]);
    }

    #[test]
    fn missing_key_lists_columns_and_suggests() {
        let h = header(&["iteration", "seq_lenn", "time_ms"]);
        let err = ColumnPlan::resolve("run.csv", &h, &["src_len".into()], &[]).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("run.csv:1: no key column 'src_len'"),
            "{text}"
        );
        assert!(text.contains("iteration, seq_lenn, time_ms"), "{text}");
        let err = ColumnPlan::resolve("run.csv", &h, &[], &[]).unwrap_err();
        assert!(
            err.to_string().contains("did you mean 'seq_lenn'?"),
            "{err}"
        );
    }

    #[test]
    fn one_column_header_hints_at_the_delimiter() {
        let h = header(&["iteration;seq_len;time_ms"]);
        let err = ColumnPlan::resolve("run.csv", &h, &[], &[]).unwrap_err();
        assert!(err.to_string().contains("separated by ';'"), "{err}");
    }

    #[test]
    fn a_name_twice_is_ambiguous_whatever_its_case() {
        let h = header(&["iteration", "seq_len", "time_ms", "SEQ_LEN"]);
        let err = ColumnPlan::resolve("run.csv", &h, &[], &[]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "run.csv:1:4: columns 'seq_len' and 'SEQ_LEN' both match the key column 'seq_len' \
             (names match ignoring case); expected one: rename or remove the other"
        );
        let h = header(&["seq_len", "time_ms", "time_ms"]);
        let err = ColumnPlan::resolve("run.csv", &h, &[], &[]).unwrap_err();
        assert!(err.to_string().starts_with("run.csv:1:3: columns 'time_ms' and 'time_ms' both match the metric column 'time_ms'"), "{err}");
        // A repeated column nothing reads is not ambiguous.
        let h = header(&["seq_len", "note", "note"]);
        assert!(ColumnPlan::resolve("run.csv", &h, &[], &[]).is_ok());
        // Different aliases are not ambiguous: the first alias in order wins, as documented.
        let h = header(&["seq_len", "sl"]);
        assert_eq!(
            ColumnPlan::resolve("f", &h, &[], &[]).unwrap().keys,
            vec![0]
        );
    }

    #[test]
    fn invisible_characters_and_boms_do_not_change_a_name() {
        for name in [
            "\u{FEFF}iteration",
            "\u{FEFF}\u{FEFF}iteration",
            "\u{FEFF}\"iteration\"",
            "\"\u{FEFF}iteration\"",
            "ite\u{200B}ration",
            " Iteration\u{2060} ",
            "iter\u{00AD}ation",
        ] {
            let h = header(&[name, "seq_len", "time_ms"]);
            let plan = ColumnPlan::resolve("f", &h, &[], &[]).unwrap();
            assert_eq!(plan.iteration, Some(0), "{name:?}");
            assert!(plan.iteration_like.is_empty(), "{name:?}");
        }
        let h = header(&["iteration", "\u{FEFF}seq_len", "time\u{200B}_ms"]);
        let plan = ColumnPlan::resolve("f", &h, &[], &[]).unwrap();
        assert_eq!((plan.keys, plan.metrics), (vec![1], vec![2]));
        assert_eq!(plan.key_names, ["seq_len"]);
        // An invisible difference does not make two columns of one: both are the key.
        let h = header(&["seq_len", "seq\u{200B}_len"]);
        assert!(ColumnPlan::resolve("f", &h, &[], &[]).is_err());
    }

    #[test]
    fn a_column_that_only_looks_like_the_iteration_is_named() {
        for name in [
            "global_step",
            "train_iter",
            "Step Number",
            "iteration_id",
            "itteration",
        ] {
            let h = header(&[name, "seq_len", "time_ms"]);
            let plan = ColumnPlan::resolve("f", &h, &[], &[]).unwrap();
            assert_eq!(plan.iteration, None, "{name}");
            assert_eq!(plan.iteration_like, [name], "{name}");
        }
        for name in [
            "loss",
            "lr",
            "timestamp",
            "tokens",
            "seq",
            "batch_size",
            "step_time_ms",
        ] {
            let h = header(&[name, "seq_len", "time_ms"]);
            let plan = ColumnPlan::resolve("f", &h, &[], &[]).unwrap();
            assert!(plan.iteration_like.is_empty(), "{name}");
        }
    }

    #[test]
    fn no_metric_means_proxy() {
        let h = header(&["seq_len"]);
        let plan = ColumnPlan::resolve("f", &h, &[], &[]).unwrap();
        assert!(plan.metrics.is_empty());
        assert_eq!(plan.iteration, None);
    }
}
