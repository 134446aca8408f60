//! Reading a `seqpoint/1` document and checking what its numbers must agree on: within the
//! input limits (from a file, `-` or `.gz`), each JSON key once per object, the schema, then
//! the typed document, its fields' ranges (`validate`) and its shape ([`check_shape`]).

use crate::doc::{SelectDoc, SCHEMA};
use crate::project::request::ProjectError;
use crate::runlog::input::{input_name, read_input};
use crate::runlog::{InputFormat, InputLimits, LoadError};
use crate::text::numbers::as_typed;

/// Read and check a `seqpoint/1` document, within the default input limits.
pub fn read_select_doc(path: &str) -> Result<SelectDoc, ProjectError> {
    read_select_doc_within(path, &InputLimits::default())
}

/// Read and check a `seqpoint/1` document (`-` is standard input, a final `.gz` is
/// decompressed) within `limits`: a document larger than `--max-input`, or one whose reading
/// would need more than `--max-memory`, is refused before it is parsed.
pub fn read_select_doc_within(path: &str, limits: &InputLimits) -> Result<SelectDoc, ProjectError> {
    // Parsed documents take a few times their text in memory (maps per SeqPoint).
    const MEMORY_PER_BYTE: u64 = 4;
    if let Some(meta) = std::fs::metadata(path).ok().filter(|_| path != "-") {
        if meta.is_file() {
            if meta.len() > limits.max_input {
                return Err(limits.input_too_large(path, false).into());
            }
            limits.check_memory(path, meta.len().saturating_mul(MEMORY_PER_BYTE))?;
        }
    }
    // A pretty document has short lines, a minified one a single line: no line limit.
    let reading = InputLimits {
        max_line: u64::MAX,
        ..*limits
    };
    let (bytes, _) = read_input(path, Some(InputFormat::Jsonl), &reading, &|_, _, _| Ok(()))?;
    limits.check_memory(path, (bytes.len() as u64).saturating_mul(MEMORY_PER_BYTE))?;
    parse_select_doc(input_name(path), &bytes)
}

pub fn parse_select_doc(path: &str, bytes: &[u8]) -> Result<SelectDoc, ProjectError> {
    // A byte-order mark (some editors save one) is accepted, as in run logs.
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    // Messages quote the document (serde echoes unknown values): escape control characters so
    // a hostile file cannot send escape sequences to the terminal.
    let document = |message: String| ProjectError::Document {
        path: path.to_string(),
        message: crate::runlog::error::printable(&message),
    };
    // First pass: JSON at all, each key once per object, and the schema, without building
    // the document (a tree of `serde_json::Value` takes ten times the text).
    let outline: Outline = serde_json::from_slice(bytes).map_err(|e| {
        let what = if e.is_data() {
            // The location is said once, in front.
            let text = e.to_string();
            let at = format!(" at line {} column {}", e.line(), e.column());
            text.strip_suffix(&at).unwrap_or(&text).to_string()
        } else {
            format!(
                "not JSON ({e}); expected the SeqPoints file written by `seqpoint select -o \
                 seqpoints.json`"
            )
        };
        LoadError::at(
            path,
            e.line() as u64,
            Some(e.column() as u64),
            crate::runlog::error::printable(&what),
        )
    })?;
    match outline.schema.as_deref() {
        Some(SCHEMA) => {}
        Some(other) => {
            return Err(document(format!(
                "schema '{other}'; expected '{SCHEMA}' (the file `seqpoint select -o seqpoints.json` writes)"
            )))
        }
        None => {
            return Err(document(format!(
                "no \"schema\" field; expected a '{SCHEMA}' document (the file `seqpoint select -o seqpoints.json` writes)"
            )))
        }
    }
    let doc: SelectDoc = serde_json::from_slice(bytes).map_err(|e| {
        // The location goes in front, as in every other message about a file.
        let text = e.to_string();
        let at = format!(" at line {} column {}", e.line(), e.column());
        let text = text.strip_suffix(&at).unwrap_or(&text);
        ProjectError::Document {
            path: format!("{path}:{}:{}", e.line(), e.column()),
            message: crate::runlog::error::printable(&format!(
                "not a valid '{SCHEMA}' document: {text}"
            )),
        }
    })?;
    if doc.seqpoints.is_empty() {
        return Err(document("the document lists no SeqPoints".into()));
    }
    crate::project::validate::check_document(path, &doc)?;
    check_shape(path, &doc)?;
    Ok(doc)
}

/// What the document's own numbers must agree on, beyond each field's range: every key and
/// bin has the input's dimensions, a bin's minimum is not above its maximum and holds its
/// SeqPoint's key, one-length bins of one stratum do not overlap, measurements are within
/// what a log may hold (`runlog::parse`), and each spread is one non-negative values can have
/// (a standard deviation at most mean x sqrt(count), a key's coefficient of variation at most
/// sqrt(its iterations)): a hand-edited `key_cv` of 1e155 narrowed an interval.
fn check_shape(path: &str, doc: &SelectDoc) -> Result<(), ProjectError> {
    use crate::runlog::parse::{METRIC_MAX, METRIC_MIN_POSITIVE};
    let bad = |field: String, found: String, expected: String| ProjectError::Document {
        path: path.to_string(),
        message: crate::runlog::error::printable(&format!(
            "{field} is {found}; expected {expected}"
        )),
    };
    let dims = doc.input.key.len();
    let measurement = |field: String, v: f64| {
        let ok = v == 0.0 || (METRIC_MIN_POSITIVE..=METRIC_MAX).contains(&v);
        if ok {
            Ok(())
        } else {
            Err(bad(
                field,
                as_typed(v),
                format!("a measurement: 0, or from {METRIC_MIN_POSITIVE:e} to {METRIC_MAX:e}"),
            ))
        }
    };
    for (i, sp) in doc.seqpoints.iter().enumerate() {
        let at = format!("seqpoints[{i}]");
        for (field, len) in [
            ("key", sp.key.len()),
            ("bin.min", sp.bin.min.len()),
            ("bin.max", sp.bin.max.len()),
        ] {
            if len != dims {
                return Err(bad(
                    format!("{at}.{field}"),
                    format!("{len} number(s) long"),
                    format!("{dims}, one per key column of input.key"),
                ));
            }
        }
        for d in 0..dims {
            let (min, max, key) = (sp.bin.min[d], sp.bin.max[d], sp.key[d]);
            if min > max {
                return Err(bad(
                    format!("{at}.bin"),
                    format!("from {min} to {max}"),
                    "a minimum not above the maximum".into(),
                ));
            }
            if !(min..=max).contains(&key) {
                return Err(bad(
                    format!("{at}.key"),
                    key.to_string(),
                    format!("a key inside its bin, from {min} to {max}"),
                ));
            }
        }
        let values = sp
            .metrics
            .iter()
            .map(|(m, &v)| (format!("{at}.metrics.{m}"), v))
            .chain(
                sp.compare_metrics
                    .iter()
                    .flatten()
                    .map(|(m, &v)| (format!("{at}.compare_metrics.{m}"), v)),
            )
            .chain(
                sp.expected
                    .iter()
                    .map(|(m, &v)| (format!("{at}.expected.{m}"), v)),
            );
        for (field, v) in values {
            measurement(field, v)?;
        }
        let alternate_values = sp
            .alternate_metrics
            .iter()
            .map(|(m, v)| ("alternate_metrics", m, v))
            .chain(
                sp.alternate_expected
                    .iter()
                    .map(|(m, v)| ("alternate_expected", m, v)),
            );
        for (name, metric, values) in alternate_values {
            let field = format!("{at}.{name}.{metric}");
            if values.len() != sp.alternates.len() {
                return Err(bad(
                    field,
                    format!("{} number(s) long", values.len()),
                    format!(
                        "{}, one per iteration of {at}.alternates",
                        sp.alternates.len()
                    ),
                ));
            }
            for (j, &v) in values.iter().enumerate() {
                measurement(format!("{field}[{j}]"), v)?;
            }
        }
        for (metric, stats) in &sp.bin_stats {
            let field = format!("{at}.bin_stats.{metric}");
            measurement(format!("{field}.mean"), stats.mean)?;
            let most_sd = stats.mean * (stats.count.max(1) as f64).sqrt();
            if stats.sd > most_sd * (1.0 + 1e-9) {
                return Err(bad(
                    format!("{field}.sd"),
                    as_typed(stats.sd),
                    format!(
                        "at most mean x sqrt(count) = {}, the most {} values that are \
                         not negative can spread",
                        as_typed(most_sd),
                        stats.count
                    ),
                ));
            }
            if let Some(cv) = stats.key_cv {
                // Pooled over the bin's keys, a coefficient of variation of non-negative
                // values is at most the number of values (sum of squares <= square of sum).
                let most = stats.count.max(1) as f64;
                if cv > most {
                    return Err(bad(
                        format!("{field}.key_cv"),
                        as_typed(cv),
                        format!(
                            "at most {}, the largest coefficient of variation the bin's {} \
                             values (bin_stats.count), none negative, can have",
                            stats.count.max(1),
                            stats.count
                        ),
                    ));
                }
            }
        }
    }
    if let Some(plan) = &doc.plan {
        let rows = [("profile", &plan.profile), ("reserve", &plan.reserve)];
        for (list, rows) in rows {
            for (i, row) in rows.iter().enumerate() {
                let at = format!("plan.{list}[{i}]");
                let values = row
                    .metrics
                    .iter()
                    .map(|(m, &v)| (format!("{at}.metrics.{m}"), v))
                    .chain(
                        row.expected
                            .iter()
                            .map(|(m, &v)| (format!("{at}.expected.{m}"), v)),
                    );
                for (field, v) in values {
                    measurement(field, v)?;
                }
            }
        }
    }
    if dims == 1 {
        // One-length bins of one stratum partition the lengths: sorted, each starts after the
        // one before it ends.
        let mut bins: Vec<(Option<usize>, u32, u32, usize)> = doc
            .seqpoints
            .iter()
            .enumerate()
            .map(|(i, sp)| (sp.stratum, sp.bin.min[0], sp.bin.max[0], i))
            .collect();
        bins.sort_unstable();
        for pair in bins.windows(2) {
            let ((sa, _, a_max, a), (sb, b_min, _, b)) = (pair[0], pair[1]);
            if sa == sb && b_min <= a_max {
                return Err(bad(
                    format!("seqpoints[{b}].bin"),
                    format!("from {b_min}, inside seqpoints[{a}].bin (up to {a_max})"),
                    "bins that do not overlap: each length in one bin".into(),
                ));
            }
        }
    }
    for (i, total) in doc.projection.iter().enumerate() {
        if let Some(actual) = total.actual.filter(|a| !(*a >= 0.0 && a.is_finite())) {
            return Err(bad(
                format!("projection[{i}].actual"),
                actual.to_string(),
                "a total that is finite and not negative".into(),
            ));
        }
        if !(total.projected >= 0.0 && total.projected.is_finite()) {
            return Err(bad(
                format!("projection[{i}].projected"),
                total.projected.to_string(),
                "a total that is finite and not negative".into(),
            ));
        }
    }
    Ok(())
}

/// What the first pass over a document keeps: its top-level `schema` string, if any.
struct Outline {
    schema: Option<String>,
}

impl<'de> serde::Deserialize<'de> for Outline {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(OutlineVisitor { top: true })
            .map(|schema| Outline { schema })
    }
}

/// Visits every value once, refusing an object that names a key twice (the last would win
/// silently, where a JSON Lines input refuses the same); at the top it keeps `schema`.
struct OutlineVisitor {
    top: bool,
}

/// Any JSON value, checked by [`OutlineVisitor`] below the top.
struct Checked;

impl<'de> serde::Deserialize<'de> for Checked {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(OutlineVisitor { top: false })
            .map(|_| Checked)
    }
}

impl<'de> serde::de::Visitor<'de> for OutlineVisitor {
    type Value = Option<String>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<Checked>()?.is_some() {}
        Ok(None)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut seen = std::collections::HashSet::new();
        let mut schema = None;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            // Refused where the second key stands, before its value.
            if !seen.insert(key.clone()) {
                return Err(serde::de::Error::custom(format!(
                    "the key \"{key}\" appears twice in one object; expected each key once \
                     (which of the two values was meant cannot be told)"
                )));
            }
            if self.top && key == "schema" {
                schema = map.next_value::<Option<String>>()?;
            } else {
                map.next_value::<Checked>()?;
            }
        }
        Ok(schema)
    }
}
