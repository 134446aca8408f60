//! The fast path's JSON Lines: one flat object per line, its fields matched to columns by name
//! and its numbers read as serde_json and the careful reader's parsers would read them.

use super::fields::{
    careful_value, end_row, store, Anomaly, BlockOut, BlockStats, Layout, Role, RowValues, Value,
};
use super::numbers::{read_digits, EXACT_MANTISSA, POW10};
use crate::runlog::parse::json_scalar_text;

/// Field names of a JSON Lines file (as the careful reader orders them) and what each feeds.
#[derive(Debug, Clone)]
pub struct JsonLayout {
    pub layout: Layout,
    pub names: Vec<Vec<u8>>,
    /// Name indices in the order the first line wrote them: the usual order of every line.
    pub written_order: Vec<usize>,
    /// Bit per name that every row must have (the plan's columns).
    pub required: u64,
    /// Every name a column is looked up by, lower case: a key the first line lacks matters
    /// when it is one of these (a metric that starts on line 2), and the careful reader decides.
    pub wanted: Vec<String>,
}

impl JsonLayout {
    pub fn new(
        layout: Layout,
        names: &[String],
        first_line: &[u8],
        wanted: Vec<String>,
    ) -> Option<JsonLayout> {
        if names.len() > 64 || names.iter().any(|n| n.contains(['\\', '"'])) {
            return None;
        }
        let names: Vec<Vec<u8>> = names.iter().map(|n| n.as_bytes().to_vec()).collect();
        let mut required = 0u64;
        for (i, role) in layout.roles.iter().enumerate() {
            if *role != Role::Skip {
                required |= 1 << i;
            }
        }
        let mut json = JsonLayout {
            layout,
            names,
            written_order: Vec::new(),
            required,
            wanted,
        };
        // The written order: scan the first line's keys (serde_json sorts them).
        let mut order = Vec::new();
        let mut scan = JsonLine::new(first_line);
        scan.object(|key, _| {
            order.push(json.name_index(key, usize::MAX));
            Ok(())
        })
        .ok()?;
        json.written_order = order.into_iter().map(|i| i.unwrap_or(usize::MAX)).collect();
        Some(json)
    }

    #[inline(always)]
    fn name_index(&self, key: &[u8], expected: usize) -> Option<usize> {
        if let Some(name) = self.names.get(expected) {
            if name.as_slice() == key {
                return Some(expected);
            }
        }
        self.names.iter().position(|n| n.as_slice() == key)
    }

    /// Whether a key the first line did not have would be read as a column.
    fn is_wanted(&self, key: &[u8]) -> bool {
        match std::str::from_utf8(key) {
            Ok(name) => self
                .wanted
                .iter()
                .any(|w| crate::runlog::columns::same_name(name, w)),
            Err(_) => true,
        }
    }
}

/// A JSON value token as the fast path sees it.
#[derive(Debug, Clone, Copy)]
enum Token<'t> {
    /// A number: its text, and its parts when it is `digits[.digits]` without sign or exponent.
    Number {
        text: &'t [u8],
        plain: Option<(u64, usize, usize)>,
    },
    /// A string without escapes: its content.
    Text(&'t [u8]),
    /// true, false or null.
    Literal,
}

/// A cursor over one line holding one flat JSON object.
struct JsonLine<'t> {
    text: &'t [u8],
    pos: usize,
}

impl<'t> JsonLine<'t> {
    fn new(text: &'t [u8]) -> Self {
        JsonLine { text, pos: 0 }
    }

    #[inline(always)]
    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\r' | b'\n') = self.text.get(self.pos) {
            self.pos += 1;
        }
    }

    #[inline(always)]
    fn expect(&mut self, byte: u8) -> Result<(), Anomaly> {
        if self.text.get(self.pos) == Some(&byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(Anomaly)
        }
    }

    /// A string's content (the opening quote already seen); escapes and non-ASCII are left to
    /// serde_json.
    #[inline(always)]
    fn string(&mut self) -> Result<&'t [u8], Anomaly> {
        let start = self.pos;
        while let Some(&b) = self.text.get(self.pos) {
            if b == b'"' {
                let content = &self.text[start..self.pos];
                self.pos += 1;
                return Ok(content);
            }
            if b == b'\\' || !(0x20..0x7f).contains(&b) {
                return Err(Anomaly);
            }
            self.pos += 1;
        }
        Err(Anomaly)
    }

    /// A number in JSON's grammar.
    #[inline(always)]
    fn number(&mut self) -> Result<Token<'t>, Anomaly> {
        let t = self.text;
        let start = self.pos;
        let mut p = start;
        let negative = t.get(p) == Some(&b'-');
        if negative {
            p += 1;
        }
        let int_start = p;
        let mut mantissa: u64 = 0;
        p = read_digits(t, p, &mut mantissa);
        let int_digits = p - int_start;
        if int_digits == 0 || (int_digits > 1 && t[int_start] == b'0') {
            return Err(Anomaly);
        }
        let mut fraction = 0;
        if t.get(p) == Some(&b'.') {
            p += 1;
            let frac_start = p;
            p = read_digits(t, p, &mut mantissa);
            fraction = p - frac_start;
            if fraction == 0 {
                return Err(Anomaly);
            }
        }
        let mut exponent = false;
        if let Some(b'e' | b'E') = t.get(p) {
            exponent = true;
            p += 1;
            if let Some(b'+' | b'-') = t.get(p) {
                p += 1;
            }
            let exp_start = p;
            while t.get(p).is_some_and(u8::is_ascii_digit) {
                p += 1;
            }
            if p == exp_start {
                return Err(Anomaly);
            }
        }
        self.pos = p;
        let digits = int_digits + fraction;
        let plain =
            (!negative && !exponent && digits <= 19).then_some((mantissa, digits, fraction));
        Ok(Token::Number {
            text: &t[start..p],
            plain,
        })
    }

    fn literal(&mut self) -> Result<Token<'t>, Anomaly> {
        for word in [&b"true"[..], b"false", b"null"] {
            if self.text[self.pos..].starts_with(word) {
                self.pos += word.len();
                return Ok(Token::Literal);
            }
        }
        Err(Anomaly)
    }

    /// Walk a flat object, calling `member(key, value)` for each member; the line must hold
    /// nothing else.
    #[inline(always)]
    fn object(
        &mut self,
        mut member: impl FnMut(&'t [u8], Token<'t>) -> Result<(), Anomaly>,
    ) -> Result<(), Anomaly> {
        self.skip_ws();
        self.expect(b'{')?;
        self.skip_ws();
        if self.text.get(self.pos) == Some(&b'}') {
            return Err(Anomaly);
        }
        loop {
            self.skip_ws();
            self.expect(b'"')?;
            let key = self.string()?;
            self.skip_ws();
            self.expect(b':')?;
            self.skip_ws();
            let value = match self.text.get(self.pos) {
                Some(b'"') => {
                    self.pos += 1;
                    Token::Text(self.string()?)
                }
                Some(b'-' | b'0'..=b'9') => self.number()?,
                Some(b't' | b'f' | b'n') => self.literal()?,
                _ => return Err(Anomaly),
            };
            member(key, value)?;
            self.skip_ws();
            match self.text.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    break;
                }
                _ => return Err(Anomaly),
            }
        }
        self.skip_ws();
        if self.pos == self.text.len() {
            Ok(())
        } else {
            Err(Anomaly)
        }
    }
}

/// A JSON token's value for `role`, exactly as the careful reader (serde_json, then the same
/// field parsers) would get it.
#[inline(always)]
fn json_value(token: Token<'_>, role: Role) -> Result<Value, Anomaly> {
    if let Token::Number {
        plain: Some((mantissa, digits, fraction)),
        ..
    } = token
    {
        match role {
            Role::Iteration | Role::Epoch if fraction == 0 => return Ok(Value::Count(mantissa)),
            Role::Key(_) if fraction == 0 && mantissa <= u64::from(u32::MAX) => {
                return Ok(Value::Length(mantissa as u32))
            }
            // An integer token: serde_json keeps it as u64 and prints it back as digits, which
            // parse to the nearest f64, as `as f64` rounds.
            Role::Metric(_) if fraction == 0 => return Ok(Value::Metric(mantissa as f64)),
            Role::Metric(_) if mantissa <= EXACT_MANTISSA && fraction <= 22 && digits > 0 => {
                return Ok(Value::Metric(mantissa as f64 / POW10[fraction]))
            }
            _ => {}
        }
    }
    let raw = match token {
        Token::Number { text, .. } => text,
        Token::Text(content) => return careful_value(content, role),
        Token::Literal => return Err(Anomaly),
    };
    let value: serde_json::Value = serde_json::from_slice(raw).map_err(|_| Anomaly)?;
    let text = json_scalar_text(&value).ok_or(Anomaly)?;
    careful_value(text.as_bytes(), role)
}

/// Parse the lines of a JSON Lines block into `out`.
pub fn parse_jsonl(
    text: &[u8],
    json: &JsonLayout,
    out: &mut BlockOut<'_>,
) -> Result<BlockStats, Anomaly> {
    let layout = &json.layout;
    let mut stats = BlockStats::new();
    let dims = layout.dims;
    let capacity = out.capacity(dims);
    let mut current = RowValues {
        iteration: 0,
        epoch: 0,
    };
    for raw_line in text.split(|&b| b == b'\n') {
        let line = raw_line.strip_suffix(b"\r").unwrap_or(raw_line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let row = stats.rows;
        if row >= capacity {
            return Err(Anomaly);
        }
        let mut seen = 0u64;
        let mut at = 0;
        JsonLine::new(line).object(|key, token| {
            let expected = json.written_order.get(at).copied().unwrap_or(usize::MAX);
            at += 1;
            let Some(index) = json.name_index(key, expected) else {
                // A name the first line did not have: ignored unless it names a column.
                return if json.is_wanted(key) {
                    Err(Anomaly)
                } else {
                    Ok(())
                };
            };
            if seen & (1 << index) != 0 {
                return Err(Anomaly);
            }
            seen |= 1 << index;
            let role = layout.roles[index];
            if role != Role::Skip {
                let value = json_value(token, role)?;
                store(value, role, row, dims, out, &mut current)?;
            }
            Ok(())
        })?;
        if seen & json.required != json.required {
            return Err(Anomaly);
        }
        end_row(layout, &mut stats, &current, out);
    }
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_numbers_follow_the_grammar() {
        let mut ok = JsonLine::new(br#"{"a": -0.5e+3, "b": "x", "c": true, "d": 12}"#);
        let mut seen = Vec::new();
        ok.object(|k, _| {
            seen.push(k.to_vec());
            Ok(())
        })
        .unwrap();
        assert_eq!(seen.len(), 4);
        for bad in [
            &br#"{"a": 01}"#[..],
            br#"{"a": 1.}"#,
            br#"{"a": 1} x"#,
            br#"{"a": [1]}"#,
            br#"{"a\n": 1}"#,
            br#"{}"#,
        ] {
            assert!(JsonLine::new(bad).object(|_, _| Ok(())).is_err(), "{bad:?}");
        }
    }
}
