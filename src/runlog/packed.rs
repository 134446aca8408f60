//! Packed and token-budget batches: a step's `doc_lens` (the lengths of the documents packed
//! into it, one list per micro-batch where there are several) read into the derived columns a
//! key can name: `tokens` (their sum), `attn` (the sum of their squares: the work of attention
//! restricted to each document), `docs` (how many) and `max_doc` (the longest). The lists are
//! read and summarised row by row, never kept: a log of long lists costs what a log of four
//! numbers does.
//!
//! `--key fit` names the four at once (whichever the log can give); `load` fits the metric on
//! them and keys the run on the fitted cost ([`apply_fit`]).

use std::cell::RefCell;

use super::error::{shown_value, LoadError};
use super::RunLog;
use crate::options::{Surface, KEY, METRIC, MODEL};

/// The column that lists a step's document lengths.
pub const DOC_LENS: &str = "doc_lens";
/// The key that fits the metric on the derived columns.
pub const FIT_KEY: &str = "fit";
/// The key that is a step's training FLOPs, from `tokens` and `attn` and `--model`.
pub const FLOPS_KEY: &str = "flops";

/// A column derived from `doc_lens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Derived {
    Tokens,
    Attn,
    Docs,
    MaxDoc,
}

impl Derived {
    /// Every derived column, in the order `--key fit` lists them.
    pub const ALL: [Derived; 4] = [
        Derived::Tokens,
        Derived::Attn,
        Derived::Docs,
        Derived::MaxDoc,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Derived::Tokens => "tokens",
            Derived::Attn => "attn",
            Derived::Docs => "docs",
            Derived::MaxDoc => "max_doc",
        }
    }

    /// The derived column a key name asks for (ignoring case), if it is one.
    pub fn named(name: &str) -> Option<Derived> {
        Derived::ALL
            .into_iter()
            .find(|d| d.name().eq_ignore_ascii_case(name.trim()))
    }

    fn what(self) -> &'static str {
        match self {
            Derived::Tokens => "tokens (the sum of the lengths)",
            Derived::Attn => "attn (the sum of the squared lengths)",
            Derived::Docs => "docs (the number of documents)",
            Derived::MaxDoc => "max_doc (the longest document)",
        }
    }
}

/// What one step's document lengths add up to. Sums are 64-bit: a key is 32-bit, and a value
/// too large for one is named by `value` rather than wrapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DocStats {
    pub tokens: u64,
    pub attn: u64,
    pub docs: u64,
    pub max_doc: u64,
}

impl DocStats {
    fn add(&mut self, len: u64) -> Option<()> {
        self.tokens = self.tokens.checked_add(len)?;
        self.attn = self.attn.checked_add(len.checked_mul(len)?)?;
        self.docs += 1;
        self.max_doc = self.max_doc.max(len);
        Some(())
    }

    pub fn get(&self, derived: Derived) -> u64 {
        match derived {
            Derived::Tokens => self.tokens,
            Derived::Attn => self.attn,
            Derived::Docs => self.docs,
            Derived::MaxDoc => self.max_doc,
        }
    }

    /// One derived column as a key value (32 bits, as every key), or why it does not fit.
    pub fn value(&self, derived: Derived, raw: &[u8]) -> Result<u32, String> {
        let value = self.get(derived);
        u32::try_from(value).map_err(|_| {
            format!(
                "found {} whose {} is {value}, above the largest key value {}; expected \
                 smaller steps, or a column '{}' of your own in coarser units (e.g. divided \
                 by 1024), which is read instead",
                shown_value(raw),
                derived.what(),
                u32::MAX,
                derived.name()
            )
        })
    }
}

/// What a `doc_lens` value must look like, for messages.
const EXPECTED: &str = "expected document lengths: space-separated with '|' between \
                        micro-batches (\"512 1024 300|2048\"), or a JSON list ([512, 1024, 300]) \
                        or list of lists ([[512, 300], [2048]])";

/// Parse one step's `doc_lens`: the CSV form (lengths separated by spaces, micro-batches by
/// `|`) or the JSON form (a list of lengths, or a list of such lists). Each length is an
/// integer of at least 1; each micro-batch holds at least one. The error is the message for
/// the field, naming what was found and what was expected.
pub fn parse_doc_lens(raw: &[u8]) -> Result<DocStats, String> {
    let text = std::str::from_utf8(raw)
        .map_err(|_| format!("found {} (not UTF-8 text), {EXPECTED}", shown_value(raw)))?
        .trim();
    let bad = |why: &str| format!("found {}{why}, {EXPECTED}", shown_value(raw));
    if text.is_empty() {
        return Err(bad(""));
    }
    let mut stats = DocStats::default();
    let mut push = |digits: &str, stats: &mut DocStats| -> Result<(), String> {
        let len: u64 = match digits.parse::<u64>() {
            Ok(len) if len <= u64::from(u32::MAX) => len,
            Ok(_) => return Err(bad(&format!(" (a length {digits} above {})", u32::MAX))),
            Err(_) => return Err(bad(&format!(" ('{digits}' is not a length)"))),
        };
        if len == 0 {
            return Err(bad(" (a length of 0: leave empty documents out)"));
        }
        stats
            .add(len)
            .ok_or_else(|| bad(" (its sums overflow 64 bits)"))
    };
    if text.starts_with('[') {
        parse_json_form(text, &mut stats, &mut push).map_err(|why| match why {
            JsonWhy::Length(message) => message,
            JsonWhy::Shape(why) => bad(why),
        })?;
    } else {
        for micro in text.split('|') {
            let mut any = false;
            for digits in micro.split_ascii_whitespace() {
                push(digits, &mut stats)?;
                any = true;
            }
            if !any {
                return Err(bad(" (a micro-batch with no length)"));
            }
        }
    }
    Ok(stats)
}

/// Why a JSON-form value was refused: a bad length (its message made), or a bad shape.
enum JsonWhy {
    Length(String),
    Shape(&'static str),
}

/// The JSON form read by hand: a list of lengths or a list of lists of lengths, nothing
/// deeper and no mix of the two (a list of 8,192 lengths needs no tree of values).
fn parse_json_form(
    text: &str,
    stats: &mut DocStats,
    push: &mut impl FnMut(&str, &mut DocStats) -> Result<(), String>,
) -> Result<(), JsonWhy> {
    let bytes = text.as_bytes();
    let mut p = 1;
    let skip_ws = |p: &mut usize| {
        while bytes.get(*p).is_some_and(u8::is_ascii_whitespace) {
            *p += 1;
        }
    };
    // Reads `[n, n, ...]` from the opening bracket's next byte; returns how many lengths.
    let mut list = |p: &mut usize, stats: &mut DocStats| -> Result<usize, JsonWhy> {
        let mut count = 0;
        loop {
            skip_ws(p);
            match bytes.get(*p) {
                Some(b']') if count == 0 => return Err(JsonWhy::Shape(" (an empty list)")),
                Some(b'[') => return Err(JsonWhy::Shape(" (lists nested too deep or mixed)")),
                _ => {}
            }
            let start = *p;
            while bytes
                .get(*p)
                .is_some_and(|b| !matches!(b, b',' | b']') && !b.is_ascii_whitespace())
            {
                *p += 1;
            }
            push(&text[start..*p], stats).map_err(JsonWhy::Length)?;
            count += 1;
            skip_ws(p);
            match bytes.get(*p) {
                Some(b',') => *p += 1,
                Some(b']') => {
                    *p += 1;
                    return Ok(count);
                }
                _ => return Err(JsonWhy::Shape(" (a list that does not close)")),
            }
        }
    };
    skip_ws(&mut p);
    if bytes.get(p) == Some(&b'[') {
        // A list of micro-batches.
        loop {
            skip_ws(&mut p);
            if bytes.get(p) != Some(&b'[') {
                return Err(JsonWhy::Shape(" (lists mixed with lengths)"));
            }
            p += 1;
            list(&mut p, stats)?;
            skip_ws(&mut p);
            match bytes.get(p) {
                Some(b',') => p += 1,
                Some(b']') => {
                    p += 1;
                    break;
                }
                _ => return Err(JsonWhy::Shape(" (a list that does not close)")),
            }
        }
    } else {
        list(&mut p, stats)?;
    }
    skip_ws(&mut p);
    if p != bytes.len() {
        return Err(JsonWhy::Shape(" (text after the list)"));
    }
    Ok(())
}

thread_local! {
    /// Notes the readers make while resolving columns (a log's own `tokens` read instead of
    /// the derived one, the fit `--key fit` made). A run log has no room for notes and every
    /// place that builds one would have to change to give it one; a load runs its column
    /// resolution on the calling thread, so [`take_notes`] after it gets them.
    static NOTES: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// Record a note of this thread's load, once (the fast and the careful reader may both
/// resolve one header).
pub(crate) fn note(text: String) {
    NOTES.with(|notes| {
        let mut notes = notes.borrow_mut();
        if !notes.contains(&text) {
            notes.push(text);
        }
    });
}

/// The notes this thread's loads made since the last call, in order.
pub fn take_notes() -> Vec<String> {
    NOTES.with(|notes| std::mem::take(&mut *notes.borrow_mut()))
}

/// Whether a key (as `--key` gives it) names a derived column or the fit: such keys are read
/// through [`super::load_run_noted`] so their notes are shown.
pub fn mentions_packed(key: &[String]) -> bool {
    key.iter().any(|k| {
        Derived::named(k).is_some()
            || k.trim().eq_ignore_ascii_case(FIT_KEY)
            || k.trim().eq_ignore_ascii_case(FLOPS_KEY)
    })
}

/// What the columns derived from `doc_lens` explain of the baseline's first metric: each
/// alone (a straight-line fit) and all together (`--key fit`), as shares of its variance.
#[derive(Debug, Clone, PartialEq)]
pub struct DerivedShares {
    pub metric: String,
    /// Each column's name (a log's own `tokens` is read instead of the derived one) and share.
    pub alone: Vec<(String, f64)>,
    pub fit: f64,
}

/// A fit must explain this much more than the best column alone to be the one suggested: a
/// single column is the simpler key, and binned exactly with no rounding.
const FIT_MARGIN: f64 = 0.01;

impl DerivedShares {
    /// The key that explains most, as `report` suggests it (`--key fit` or one column).
    pub fn best_key(&self) -> (String, f64) {
        let (column, share) = self
            .alone
            .iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map_or((Derived::Tokens.name(), 0.0), |(c, s)| (c.as_str(), *s));
        if self.fit > share + FIT_MARGIN {
            (FIT_KEY.to_string(), self.fit)
        } else {
            (column.to_string(), share)
        }
    }

    /// The advice, in the words of `report`'s findings: the shares computed and the key.
    pub fn advice(&self) -> String {
        let alone: Vec<String> = self
            .alone
            .iter()
            .map(|(name, share)| format!("{name} {:.2}%", 100.0 * share))
            .collect();
        let (key, share) = self.best_key();
        format!(
            "of the columns derived from {DOC_LENS}, each alone explains {} of {}, all \
             fitted together {:.2}%: {} explains most ({:.2}%)",
            alone.join(", "),
            self.metric,
            100.0 * self.fit,
            KEY.typed(Surface::CommandLine, &key),
            100.0 * share
        )
    }
}

/// [`DerivedShares`] of the log at `path` read with `options`' reading flags; `None` when it
/// has no `doc_lens` column or no measured metric (the header says so before any row is read).
pub fn derived_shares(path: &str, options: &super::LoadOptions) -> Option<DerivedShares> {
    // `--key fit` reads every derived column the log can give (its fit is made later, by
    // `load_run`); a log's own `fit` column is no set of columns to fit.
    let options = super::LoadOptions {
        key: vec![FIT_KEY.to_string()],
        compare: None,
        ..options.clone()
    };
    let log = super::load_path(path, &options).ok()?;
    if log.key_names[0].eq_ignore_ascii_case(FIT_KEY) {
        return None;
    }
    let metric = log.configs[0].metrics.first()?;
    let columns = key_columns(&log);
    let alone = log
        .key_names
        .iter()
        .zip(&columns)
        .map(|(name, c)| {
            let share = crate::keyfit::fit(std::slice::from_ref(c), &metric.values).r_squared;
            (name.clone(), share)
        })
        .collect();
    Some(DerivedShares {
        metric: metric.name.clone(),
        alone,
        fit: crate::keyfit::fit(&columns, &metric.values).r_squared,
    })
}

/// A transformer's shape for `--key flops` (`--model layers=L,hidden=H[,vocab=V]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelShape {
    pub layers: u64,
    pub hidden: u64,
    /// The embedding's rows, counted in the parameters when given.
    pub vocab: Option<u64>,
}

impl ModelShape {
    /// Parameters: 12 x layers x hidden^2 (attention's four projections and a 4x MLP),
    /// plus vocab x hidden for the embedding when given.
    pub fn parameters(&self) -> f64 {
        let (l, h) = (self.layers as f64, self.hidden as f64);
        12.0 * l * h * h + self.vocab.map_or(0.0, |v| v as f64 * h)
    }

    /// A training step's FLOPs (forward and backward), as Megatron counts them:
    /// 6 x parameters x tokens for the dense layers plus 12 x layers x hidden x the sum of
    /// squared document lengths for attention kept within each document.
    pub fn step_flops(&self, tokens: f64, attn: f64) -> f64 {
        6.0 * self.parameters() * tokens + 12.0 * self.layers as f64 * self.hidden as f64 * attn
    }
}

/// What `--model` must look like, for messages.
const MODEL_EXPECTED: &str = "expected layers=L,hidden=H[,vocab=V] with whole numbers of at \
                              least 1 (e.g. layers=24,hidden=2048,vocab=50304)";

impl std::str::FromStr for ModelShape {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let (mut layers, mut hidden, mut vocab) = (None, None, None);
        for part in text.split(',') {
            let (name, value) = part
                .split_once('=')
                .ok_or_else(|| format!("'{part}' has no '=': {MODEL_EXPECTED}"))?;
            let value: u64 = match value.trim().parse() {
                Ok(v) if v >= 1 => v,
                _ => {
                    return Err(format!(
                        "{name}={value}: not a whole number of at least 1; {MODEL_EXPECTED}"
                    ))
                }
            };
            let slot = match name.trim() {
                "layers" => &mut layers,
                "hidden" => &mut hidden,
                "vocab" => &mut vocab,
                other => return Err(format!("'{other}' is not a model field; {MODEL_EXPECTED}")),
            };
            if slot.replace(value).is_some() {
                return Err(format!("{} given twice; {MODEL_EXPECTED}", name.trim()));
            }
        }
        match (layers, hidden) {
            (Some(layers), Some(hidden)) => Ok(ModelShape {
                layers,
                hidden,
                vocab,
            }),
            _ => Err(format!(
                "layers and hidden are both needed; {MODEL_EXPECTED}"
            )),
        }
    }
}

/// `--key flops`: key every row on its training FLOPs from its `tokens` and `attn` (read as
/// the log's two keys) and the model's shape, quantised as the fit is (a key is a round
/// number of FLOPs, e.g. in steps of 1e9). Needs no metric: a log without one is costed on
/// the key (the proxy cost is linear in it).
pub fn apply_flops(log: &mut RunLog, model: Option<ModelShape>) -> Result<(), LoadError> {
    let Some(model) = model else {
        return Err(LoadError::file(
            &log.source,
            format!(
                "{} counts a step's FLOPs from its tokens and squared lengths, and needs the \
                 model's shape: {}",
                KEY.typed(Surface::CommandLine, FLOPS_KEY),
                MODEL.typed(Surface::CommandLine, "layers=L,hidden=H[,vocab=V]")
            ),
        ));
    };
    debug_assert_eq!(
        log.key_names,
        [Derived::Tokens.name(), Derived::Attn.name()]
    );
    let flops: Vec<f64> = log
        .keys
        .chunks_exact(2)
        .map(|k| model.step_flops(f64::from(k[0]), f64::from(k[1])))
        .collect();
    let quantised = crate::keyfit::Quantised::of(&flops);
    let mean = flops.iter().sum::<f64>() / flops.len().max(1) as f64;
    let per_attn = 12.0 * model.layers as f64 * model.hidden as f64;
    let attn_flops: f64 = log
        .keys
        .chunks_exact(2)
        .map(|k| per_attn * f64::from(k[1]))
        .sum();
    let attn_share = attn_flops / flops.iter().sum::<f64>().max(f64::MIN_POSITIVE);
    note(format!(
        "{}: flops = 6 x {} parameters x tokens + 12 x {} layers x {} hidden x attn (mean \
         {} per step, {:.1}% of it attention); the key is the FLOPs in steps of {} ({} \
         distinct values)",
        KEY.typed(Surface::CommandLine, FLOPS_KEY),
        crate::keyfit::shown_coefficient(model.parameters()),
        model.layers,
        model.hidden,
        crate::keyfit::shown_coefficient(mean),
        100.0 * attn_share,
        crate::keyfit::shown_coefficient(quantised.step),
        quantised.distinct
    ));
    log.keys = quantised.keys;
    log.key_names = vec![FLOPS_KEY.to_string()];
    Ok(())
}

/// `--key fit`: fit the first metric of the baseline on the derived columns the log was read
/// with (least squares with an intercept), and key every row on its fitted cost, quantised
/// (see `crate::keyfit::Quantised`). The fit is made on the baseline alone, and one key
/// serves both configurations, as every key does.
pub fn apply_fit(log: &mut RunLog) -> Result<(), LoadError> {
    let Some(metric) = log.configs[0].metrics.first() else {
        return Err(LoadError::file(
            &log.source,
            format!(
                "{} fits the measured metric on the packed columns, and the log has no \
                 metric column; expected time_ms, energy_j or {} (without measurements, \
                 key on attn or tokens,attn)",
                KEY.typed(Surface::CommandLine, FIT_KEY),
                METRIC.typed(Surface::CommandLine, "COL")
            ),
        ));
    };
    let columns = key_columns(log);
    let fit = crate::keyfit::fit(&columns, &metric.values);
    let fitted = fit.predict_all(&columns);
    let quantised = crate::keyfit::Quantised::of(&fitted);
    let mut formula = crate::keyfit::shown_coefficient(fit.intercept);
    let mut left_out = Vec::new();
    for (name, c) in log.key_names.iter().zip(&fit.coefficients) {
        match c {
            Some(c) if *c < 0.0 => formula.push_str(&format!(
                " - {} x {name}",
                crate::keyfit::shown_coefficient(-c)
            )),
            Some(c) => formula.push_str(&format!(
                " + {} x {name}",
                crate::keyfit::shown_coefficient(*c)
            )),
            None => left_out.push(name.as_str()),
        }
    }
    if !left_out.is_empty() {
        formula.push_str(&format!(
            " ({} left out: constant, or a sum of the others)",
            left_out.join(", ")
        ));
    }
    let unit = &metric.name;
    note(format!(
        "{}: {unit} = {formula}, fitted on the baseline, explains {:.1}% of its \
         variance; the key is the fitted {unit} in steps of {} ({} distinct values{})",
        KEY.typed(Surface::CommandLine, FIT_KEY),
        100.0 * fit.r_squared,
        crate::keyfit::shown_coefficient(quantised.step),
        quantised.distinct,
        if quantised.clamped > 0 {
            format!("; {} rows fitted below 0 are keyed 0", quantised.clamped)
        } else {
            String::new()
        }
    ));
    log.keys = quantised.keys;
    log.key_names = vec![FIT_KEY.to_string()];
    Ok(())
}

/// Each key column of `log` as numbers, in row order (the regressors of a fit).
fn key_columns(log: &RunLog) -> Vec<Vec<f64>> {
    let dims = log.dims();
    (0..dims)
        .map(|d| {
            log.keys
                .iter()
                .skip(d)
                .step_by(dims)
                .map(|&k| f64::from(k))
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(text: &str) -> DocStats {
        parse_doc_lens(text.as_bytes()).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn both_forms_give_the_same_sums() {
        let want = DocStats {
            tokens: 12 + 30 + 7 + 5,
            attn: 144 + 900 + 49 + 25,
            docs: 4,
            max_doc: 30,
        };
        for text in [
            "12 30 7 5",
            "12 30|7 5",
            " 12  30 | 7 5 ",
            "[12, 30, 7, 5]",
            "[[12,30],[7],[5]]",
            "[ [12, 30] , [7, 5] ]",
        ] {
            assert_eq!(stats(text), want, "{text}");
        }
        assert_eq!(stats("2048").attn, 2048 * 2048);
    }

    #[test]
    fn malformed_lists_say_what_was_expected() {
        for (text, why) in [
            ("", "found \"\", expected document lengths"),
            ("12,30", "('12,30' is not a length)"),
            ("12 -3", "('-3' is not a length)"),
            ("12 x", "('x' is not a length)"),
            ("12||5", "(a micro-batch with no length)"),
            ("12 0 5", "(a length of 0: leave empty documents out)"),
            ("[]", "(an empty list)"),
            ("[12, [3]]", "(lists nested too deep or mixed)"),
            ("[[12], 3]", "(lists mixed with lengths)"),
            ("[[[1]]]", "(lists nested too deep or mixed)"),
            ("[12, 3", "(a list that does not close)"),
            ("[12] 3", "(text after the list)"),
            ("[1.5]", "('1.5' is not a length)"),
            ("4294967296", "(a length 4294967296 above 4294967295)"),
        ] {
            let err = parse_doc_lens(text.as_bytes()).unwrap_err();
            assert!(err.contains(why), "{text:?}: {err}");
            assert!(err.contains(EXPECTED), "{text:?}: {err}");
        }
    }

    #[test]
    fn a_sum_of_squares_beyond_a_key_is_named() {
        // 65,535^2 fits 32 bits, 65,536^2 does not.
        let fits = stats("65535");
        assert_eq!(fits.value(Derived::Attn, b"65535"), Ok(4_294_836_225));
        let over = stats("65536");
        assert_eq!(over.value(Derived::Tokens, b"65536"), Ok(65_536));
        let err = over.value(Derived::Attn, b"65536").unwrap_err();
        assert!(
            err.starts_with(
                "found \"65536\" whose attn (the sum of the squared lengths) is 4294967296, \
                 above the largest key value 4294967295"
            ),
            "{err}"
        );
        assert!(err.contains("a column 'attn' of your own"), "{err}");
    }

    #[test]
    fn the_suggested_key_is_the_fit_only_when_it_explains_more() {
        let shares = |fit| DerivedShares {
            metric: "time_ms".into(),
            alone: vec![
                ("tokens".into(), 0.27),
                ("attn".into(), 0.94),
                ("docs".into(), 0.1),
            ],
            fit,
        };
        assert_eq!(shares(0.99).best_key(), ("fit".to_string(), 0.99));
        // Within a point of attn alone: the simpler key.
        assert_eq!(shares(0.945).best_key(), ("attn".to_string(), 0.94));
        assert_eq!(
            shares(0.99).advice(),
            "of the columns derived from doc_lens, each alone explains tokens 27.00%, attn \
             94.00%, docs 10.00% of time_ms, all fitted together 99.00%: --key fit \
             explains most (99.00%)"
        );
    }

    #[test]
    fn a_models_flops_are_megatrons_count() {
        let model: ModelShape = "layers=2,hidden=10,vocab=100".parse().unwrap();
        // 12 x 2 x 100 + 100 x 10 = 3,400 parameters.
        assert_eq!(model.parameters(), 3400.0);
        // 6 x 3,400 x 8 + 12 x 2 x 10 x 40 = 163,200 + 9,600.
        assert_eq!(model.step_flops(8.0, 40.0), 172_800.0);
        let no_vocab: ModelShape = " layers=2 , hidden=10".parse().unwrap();
        assert_eq!((no_vocab.vocab, no_vocab.parameters()), (None, 2400.0));
        for (text, why) in [
            ("layers=2", "layers and hidden are both needed"),
            ("layers=2,hidden=0", "hidden=0: not a whole number"),
            ("layers=2,hidden=x", "hidden=x: not a whole number"),
            ("layers=2,hidden=3,heads=4", "'heads' is not a model field"),
            ("layers=2,layers=3,hidden=3", "layers given twice"),
            ("layers", "'layers' has no '='"),
        ] {
            let err = text.parse::<ModelShape>().unwrap_err();
            assert!(
                err.contains(why) && err.contains(MODEL_EXPECTED),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn names_are_matched_ignoring_case() {
        assert_eq!(Derived::named("ATTN"), Some(Derived::Attn));
        assert_eq!(Derived::named("max_doc"), Some(Derived::MaxDoc));
        assert_eq!(Derived::named("seq_len"), None);
        assert!(mentions_packed(&["Fit".into()]));
        assert!(mentions_packed(&["flops".into()]));
        assert!(mentions_packed(&["seq_len".into(), "docs".into()]));
        assert!(!mentions_packed(&["src_len".into(), "tgt_len".into()]));
    }
}
