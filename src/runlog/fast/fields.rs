//! The fast path's inner loop: one block of whole lines (CSV/TSV or JSON Lines) parsed into
//! preallocated column slices, numbers without allocation. Anything unusual is an `Anomaly`, and
//! the caller re-reads the file with the careful reader so messages stay exact.

use crate::runlog::columns::ColumnPlan;
use crate::runlog::parse::{json_scalar_text, parse_count, parse_length, parse_metric};

/// The block cannot be read the fast way; the careful reader decides (and words any error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Anomaly;

/// What one column of the input feeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Skip,
    Iteration,
    Epoch,
    Key(usize),
    Metric(usize),
}

/// Which field feeds which column, resolved once per file.
#[derive(Debug, Clone)]
pub struct Layout {
    pub roles: Vec<Role>,
    pub dims: usize,
    pub metrics: usize,
    pub has_iteration: bool,
    pub has_epoch: bool,
}

impl Layout {
    /// `None` when one field plays two parts (e.g. `--metric seq_len`): the careful reader
    /// handles that rare case.
    pub fn new(plan: &ColumnPlan, fields: usize) -> Option<Layout> {
        let mut roles = vec![Role::Skip; fields];
        let mut assign = |index: usize, role: Role| -> Option<()> {
            let slot = roles.get_mut(index)?;
            if *slot != Role::Skip {
                return None;
            }
            *slot = role;
            Some(())
        };
        if let Some(i) = plan.iteration {
            assign(i, Role::Iteration)?;
        }
        if let Some(e) = plan.epoch {
            assign(e, Role::Epoch)?;
        }
        for (slot, &k) in plan.keys.iter().enumerate() {
            assign(k, Role::Key(slot))?;
        }
        for (slot, &m) in plan.metrics.iter().enumerate() {
            assign(m, Role::Metric(slot))?;
        }
        Some(Layout {
            roles,
            dims: plan.keys.len(),
            metrics: plan.metrics.len(),
            has_iteration: plan.iteration.is_some(),
            has_epoch: plan.epoch.is_some(),
        })
    }
}

impl Layout {
    /// Bytes of columns one row takes (keys and metrics).
    pub fn row_bytes(&self) -> u64 {
        4 * self.dims as u64 + 8 * self.metrics as u64
    }
}

/// Where a block's rows go: slices of the final columns, sized by the block's line count.
pub struct BlockOut<'a> {
    pub keys: &'a mut [u32],
    pub metrics: Vec<&'a mut [f64]>,
    /// Only when iteration numbers are not evenly spaced and must be listed.
    pub iterations: Option<&'a mut [u64]>,
}

impl BlockOut<'_> {
    fn capacity(&self, dims: usize) -> usize {
        self.keys.len() / dims.max(1)
    }
}

/// Iteration numbers seen in a block: enough to tell whether they are evenly spaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IterationTrack {
    pub first: Option<u64>,
    pub last: u64,
    pub step: Option<u64>,
    pub spaced: bool,
    pub increasing: bool,
}

impl IterationTrack {
    pub fn new() -> Self {
        IterationTrack {
            first: None,
            last: 0,
            step: None,
            spaced: true,
            increasing: true,
        }
    }

    #[inline]
    pub fn push(&mut self, value: u64) {
        if self.first.is_none() {
            self.first = Some(value);
        } else {
            if value <= self.last {
                self.increasing = false;
            }
            let gap = value.wrapping_sub(self.last);
            match self.step {
                None => self.step = Some(gap),
                Some(step) if step != gap => self.spaced = false,
                Some(_) => {}
            }
        }
        self.last = value;
    }

    /// Continue this track with the next block's.
    pub fn absorb(&mut self, next: &IterationTrack) {
        let Some(first) = next.first else { return };
        if self.first.is_none() {
            *self = *next;
            return;
        }
        self.push(first);
        if let Some(step) = next.step {
            match self.step {
                Some(s) if s != step => self.spaced = false,
                _ => {}
            }
        }
        self.spaced &= next.spaced;
        self.increasing &= next.increasing;
        self.last = next.last;
    }
}

/// What a block found besides its column values.
#[derive(Debug, Clone, Default)]
pub struct BlockStats {
    pub rows: usize,
    pub iterations: IterationTrack,
    /// `(epoch, rows)` runs.
    pub epochs: Vec<(u32, usize)>,
}

impl BlockStats {
    pub fn new() -> Self {
        BlockStats {
            rows: 0,
            iterations: IterationTrack::new(),
            epochs: Vec::new(),
        }
    }

    #[inline]
    fn push_epoch(&mut self, epoch: u32) {
        match self.epochs.last_mut() {
            Some((e, n)) if *e == epoch => *n += 1,
            _ => self.epochs.push((epoch, 1)),
        }
    }
}

/// Exact powers of ten: `m / 10^k` with `m <= 2^53` and `k <= 22` is one correctly rounded
/// division, which is what both `str::parse::<f64>` and serde_json return for such text.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];
const EXACT_MANTISSA: u64 = 1 << 53;

/// Reads the decimal digits from `p` into `acc` (wrapping: callers bound the digit count);
/// returns where they end.
#[inline(always)]
fn read_digits(text: &[u8], mut p: usize, acc: &mut u64) -> usize {
    while let Some(&b) = text.get(p) {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        *acc = acc.wrapping_mul(10).wrapping_add(u64::from(d));
        p += 1;
    }
    p
}

/// Plain digits at `pos` (1 to 19 of them); `None` leaves the field to the careful parser.
#[inline(always)]
fn digits_at(text: &[u8], pos: usize) -> Option<(u64, usize)> {
    let mut value: u64 = 0;
    let p = read_digits(text, pos, &mut value);
    let digits = p - pos;
    (digits > 0 && digits <= 19).then_some((value, p))
}

/// `digits[.digits]` at `pos`, exactly rounded; `None` for anything else (exponents, signs,
/// long mantissas), which the careful parser then reads.
#[inline(always)]
fn decimal_at(text: &[u8], pos: usize) -> Option<(f64, usize)> {
    let mut mantissa: u64 = 0;
    let mut p = read_digits(text, pos, &mut mantissa);
    let mut digits = p - pos;
    let mut fraction = 0;
    if text.get(p) == Some(&b'.') {
        p += 1;
        let start = p;
        p = read_digits(text, p, &mut mantissa);
        fraction = p - start;
        digits += fraction;
    }
    if digits == 0 || digits > 19 || mantissa > EXACT_MANTISSA || fraction > 22 {
        return None;
    }
    let value = if fraction == 0 {
        mantissa as f64
    } else {
        mantissa as f64 / POW10[fraction]
    };
    Some((value, p))
}

/// Eight bytes at `p` as one little-endian word, when that many remain.
#[inline(always)]
fn word_at(text: &[u8], p: usize) -> Option<u64> {
    let bytes = text.get(p..p + 8)?;
    Some(u64::from_le_bytes(bytes.try_into().ok()?))
}

/// The word's bytes as digit values (`b - '0'`), and how many of them, from the first, are
/// ASCII digits (8 when all are). Byte-wise arithmetic that never carries across bytes.
#[inline(always)]
fn leading_digits(word: u64) -> (u64, usize) {
    let (values, not_digit) = digit_values(word);
    (values, (not_digit.trailing_zeros() / 8) as usize)
}

/// The word's bytes as digit values (`b - '0'`), and bit 7 set in each byte that is not an
/// ASCII digit. Byte-wise arithmetic that never carries across bytes.
#[inline(always)]
fn digit_values(word: u64) -> (u64, u64) {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let values = word ^ 0x3030_3030_3030_3030;
    // Bit 7 of a byte is set when its value is above 9 (adding 0x76 reaches 0x80) or was
    // already at least 0x80.
    (
        values,
        (((values & LOW7) + 0x7676_7676_7676_7676) | values) & HIGH,
    )
}

/// A metric `whole.fraction` held whole in `word` (digits, `.` at byte `point`, digits, then
/// the byte that ends the field): its value and length, the fraction's digits moved up over the
/// point so that one conversion reads all of them. `None` when the field runs past the word.
#[inline(always)]
fn short_decimal(word: u64, point: usize, ends: impl Fn(u8) -> bool) -> Option<(f64, usize)> {
    let (values, not_digit) = digit_values(word);
    let after_point = not_digit.checked_shr(8 * (point as u32 + 1)).unwrap_or(0);
    if after_point == 0 {
        return None;
    }
    let fraction = (after_point.trailing_zeros() / 8) as usize;
    let len = point + 1 + fraction;
    if fraction == 0 || !ends((word >> (8 * len)) as u8) {
        return None;
    }
    let whole_bytes = (1u64 << (8 * point)) - 1;
    let digits = (values & whole_bytes) | ((values >> 8) & !whole_bytes);
    // At most 6 digits: one exactly rounded division, as `decimal_at`.
    let mantissa = digits_value(digits, point + fraction);
    Some(((mantissa as i64) as f64 / POW10[fraction], len))
}

/// The number made by the first `len` (1 to 8) digit values of `values`, first most
/// significant: the digits are moved to the top (zeros before them), then combined in pairs,
/// fours and eights with three multiplications.
#[inline(always)]
fn digits_value(values: u64, len: usize) -> u64 {
    debug_assert!((1..=8).contains(&len));
    let v = values << (8 * (8 - len));
    let v = ((v & 0x0f0f_0f0f_0f0f_0f0f).wrapping_mul(2561)) >> 8;
    let v = ((v & 0x00ff_00ff_00ff_00ff).wrapping_mul(6_553_601)) >> 16;
    ((v & 0x0000_ffff_0000_ffff).wrapping_mul(42_949_672_960_001)) >> 32
}

/// The usual field, read eight bytes at a time: 1 to 7 digits (`digits_at`'s value) or, for a
/// metric, 1 to 7 digits, `.`, 1 to 7 digits (`decimal_at`'s value), ending the field as
/// `ends_field` requires with the delimiter or `\n`. `None` leaves it to the byte-wise path.
#[inline(always)]
fn word_field(
    text: &[u8],
    pos: usize,
    role: Role,
    delimiter: u8,
    last: bool,
) -> Option<(Value, usize)> {
    let word = word_at(text, pos)?;
    let (values, len) = leading_digits(word);
    if len == 0 || len == 8 {
        return None;
    }
    let after = (word >> (8 * len)) as u8;
    let ends = |byte: u8| {
        if last {
            byte == b'\n'
        } else {
            byte == delimiter
        }
    };
    let whole = digits_value(values, len);
    match role {
        Role::Iteration | Role::Epoch if ends(after) => Some((Value::Count(whole), pos + len)),
        // Seven digits always fit a length.
        Role::Key(_) if ends(after) => Some((Value::Length(whole as u32), pos + len)),
        Role::Metric(_) if ends(after) => Some((Value::Metric(whole as f64), pos + len)),
        Role::Metric(_) if after == b'.' => {
            if let Some((value, field)) = short_decimal(word, len, ends) {
                return Some((Value::Metric(value), pos + field));
            }
            let fraction_at = pos + len + 1;
            let word = word_at(text, fraction_at)?;
            let (values, fraction) = leading_digits(word);
            if fraction == 0 || fraction == 8 || !ends((word >> (8 * fraction)) as u8) {
                return None;
            }
            // At most 14 digits: below 2^53, so one exactly rounded division, as `decimal_at`.
            let mantissa = whole * POW10_INT[fraction] + digits_value(values, fraction);
            // Through i64 (exact below 2^53): one conversion instruction instead of several.
            let value = (mantissa as i64) as f64 / POW10[fraction];
            Some((Value::Metric(value), fraction_at + fraction))
        }
        _ => None,
    }
}

/// A short field's bytes with the byte that ends it, read as one word, to tell a repeat of it
/// at a glance.
#[derive(Clone, Copy)]
struct FieldText {
    word: u64,
    mask: u64,
    /// Bytes of the field and its end.
    len: usize,
}

impl FieldText {
    /// The field from `start` to `end`, with the byte at `end` (at most eight bytes in all).
    #[inline(always)]
    fn read(text: &[u8], start: usize, end: usize) -> Option<FieldText> {
        let len = end + 1 - start;
        if len > 8 {
            return None;
        }
        let mask = u64::MAX >> (8 * (8 - len));
        let word = word_at(text, start)? & mask;
        Some(FieldText { word, mask, len })
    }

    /// Where the next field starts, when the same bytes are at `pos`.
    #[inline(always)]
    fn repeated_at(self, text: &[u8], pos: usize) -> Option<usize> {
        let word = word_at(text, pos)?;
        (word & self.mask == self.word).then_some(pos + self.len)
    }
}

/// Powers of ten as integers, for joining a number's whole and fractional digits.
const POW10_INT: [u64; 8] = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000];

/// The end of a delimited field starting at `pos` (at the delimiter, `\r\n`, `\n` or the end).
/// A quote or a lone `\r` would change how the careful reader splits the line.
#[inline(always)]
fn field_end(text: &[u8], pos: usize, delimiter: u8) -> Result<usize, Anomaly> {
    let mut p = pos;
    while let Some(&b) = text.get(p) {
        if b == delimiter || b == b'\n' {
            return Ok(p);
        }
        if b == b'\r' {
            return match text.get(p + 1) {
                None | Some(b'\n') => Ok(p),
                _ => Err(Anomaly),
            };
        }
        if b == b'"' {
            return Err(Anomaly);
        }
        p += 1;
    }
    Ok(p)
}

/// True when `p` ends a field: the delimiter (not for the last field) or the end of the line.
#[inline(always)]
fn ends_field(text: &[u8], p: usize, delimiter: u8, last: bool) -> bool {
    match text.get(p) {
        None => last,
        Some(&b) if b == delimiter => !last,
        Some(b'\n') => last,
        Some(b'\r') => last && matches!(text.get(p + 1), None | Some(b'\n')),
        _ => false,
    }
}

/// If the line at `pos` is blank (whitespace only, no delimiter), where the next line starts.
fn blank_line(text: &[u8], pos: usize, delimiter: u8) -> Option<usize> {
    let mut p = pos;
    while let Some(&b) = text.get(p) {
        if b == b'\n' {
            return Some(p + 1);
        }
        if b == delimiter || !b.is_ascii_whitespace() {
            return None;
        }
        p += 1;
    }
    Some(p)
}

/// One parsed value, already checked as the careful reader checks it.
enum Value {
    Count(u64),
    Length(u32),
    Metric(f64),
}

/// Parse one field the careful way (the reader's own functions: same values, same rules).
fn careful_value(raw: &[u8], role: Role) -> Result<Value, Anomaly> {
    match role {
        Role::Iteration | Role::Epoch => parse_count(raw).map(Value::Count),
        Role::Key(_) => parse_length(raw).map(Value::Length),
        Role::Metric(_) => parse_metric(raw).map(Value::Metric),
        Role::Skip => Ok(Value::Count(0)),
    }
    .map_err(|_| Anomaly)
}

struct RowValues {
    iteration: u64,
    epoch: u32,
}

/// Store one field's value in its column.
#[inline(always)]
fn store(
    value: Value,
    role: Role,
    row: usize,
    dims: usize,
    out: &mut BlockOut<'_>,
    current: &mut RowValues,
) -> Result<(), Anomaly> {
    match (role, value) {
        (Role::Iteration, Value::Count(v)) => current.iteration = v,
        (Role::Epoch, Value::Count(v)) => current.epoch = u32::try_from(v).map_err(|_| Anomaly)?,
        (Role::Key(slot), Value::Length(v)) => out.keys[row * dims + slot] = v,
        (Role::Metric(slot), Value::Metric(v)) => out.metrics[slot][row] = v,
        _ => return Err(Anomaly),
    }
    Ok(())
}

/// Finish a row: iteration and epoch bookkeeping.
#[inline(always)]
fn end_row(layout: &Layout, stats: &mut BlockStats, current: &RowValues, out: &mut BlockOut<'_>) {
    if layout.has_iteration {
        stats.iterations.push(current.iteration);
        if let Some(list) = out.iterations.as_deref_mut() {
            list[stats.rows] = current.iteration;
        }
    }
    if layout.has_epoch {
        stats.push_epoch(current.epoch);
    }
    stats.rows += 1;
}

/// Parse the whole lines of a CSV/TSV block into `out`.
pub fn parse_delimited(
    text: &[u8],
    delimiter: u8,
    layout: &Layout,
    out: &mut BlockOut<'_>,
) -> Result<BlockStats, Anomaly> {
    let mut stats = BlockStats::new();
    let width = layout.roles.len();
    let dims = layout.dims;
    let capacity = out.capacity(dims);
    let mut pos = 0;
    let n = text.len();
    let mut current = RowValues {
        iteration: 0,
        epoch: 0,
    };
    // The previous row's epoch field, as it was written: most rows repeat it.
    let mut last_epoch: Option<FieldText> = None;
    while pos < n {
        let first = text[pos];
        if first == b'\n' {
            pos += 1;
            continue;
        }
        if first.is_ascii_whitespace() {
            if let Some(next) = blank_line(text, pos, delimiter) {
                pos = next;
                continue;
            }
        }
        let row = stats.rows;
        if row >= capacity {
            return Err(Anomaly);
        }
        for (col, &role) in layout.roles.iter().enumerate() {
            let last = col + 1 == width;
            if role == Role::Epoch {
                // The same bytes as the previous row's epoch (its end included): the same
                // epoch, already in `current`.
                if let Some(same) = last_epoch.and_then(|field| field.repeated_at(text, pos)) {
                    pos = same;
                    continue;
                }
                last_epoch = None;
            }
            if role != Role::Skip {
                if let Some((value, p)) = word_field(text, pos, role, delimiter, last) {
                    if role == Role::Epoch {
                        last_epoch = FieldText::read(text, pos, p);
                    }
                    store(value, role, row, dims, out, &mut current)?;
                    // Step over the delimiter or the newline.
                    pos = p + 1;
                    continue;
                }
            }
            let fast = match role {
                Role::Skip => None,
                Role::Iteration | Role::Epoch => digits_at(text, pos)
                    .filter(|&(_, p)| ends_field(text, p, delimiter, last))
                    .map(|(v, p)| (Value::Count(v), p)),
                Role::Key(_) => digits_at(text, pos)
                    .filter(|&(v, p)| {
                        v <= u64::from(u32::MAX) && ends_field(text, p, delimiter, last)
                    })
                    .map(|(v, p)| (Value::Length(v as u32), p)),
                Role::Metric(_) => decimal_at(text, pos)
                    .filter(|&(_, p)| ends_field(text, p, delimiter, last))
                    .map(|(v, p)| (Value::Metric(v), p)),
            };
            let end = match fast {
                Some((value, p)) => {
                    store(value, role, row, dims, out, &mut current)?;
                    p
                }
                None => {
                    let p = field_end(text, pos, delimiter)?;
                    if role != Role::Skip {
                        let value = careful_value(&text[pos..p], role)?;
                        store(value, role, row, dims, out, &mut current)?;
                    }
                    if !ends_field(text, p, delimiter, last) {
                        return Err(Anomaly);
                    }
                    p
                }
            };
            // Step over the delimiter, or the line end after the last field.
            pos = match text.get(end) {
                None => end,
                Some(b'\r') => end + 2,
                Some(_) => end + 1,
            };
        }
        end_row(layout, &mut stats, &current, out);
    }
    Ok(stats)
}

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
            Ok(name) => {
                let name = name.trim();
                self.wanted.iter().any(|w| name.eq_ignore_ascii_case(w))
            }
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
    fn decimals_are_exactly_rounded() {
        for text in [
            "43.217",
            "0.1",
            "5.",
            ".5",
            "123456789012.345",
            "0.000001",
            "7",
        ] {
            let (v, p) = decimal_at(text.as_bytes(), 0).unwrap();
            assert_eq!(v, text.parse::<f64>().unwrap(), "{text}");
            assert_eq!(p, text.len());
        }
        // Too many digits for one exact division, and exponents: left to the careful parser.
        assert!(decimal_at(b"12345678901234567.1", 0).is_none());
        assert_eq!(decimal_at(b"1e5", 0).map(|r| r.1), Some(1));
        assert!(decimal_at(b".", 0).is_none());
    }

    /// The byte-wise reading of one field, as `parse_delimited` did it before `word_field`.
    fn bytewise_field(text: &[u8], role: Role, delimiter: u8, last: bool) -> Option<(u64, usize)> {
        let (bits, p) = match role {
            Role::Metric(_) => decimal_at(text, 0).map(|(v, p)| (v.to_bits(), p))?,
            Role::Key(_) => digits_at(text, 0).filter(|&(v, _)| v <= u64::from(u32::MAX))?,
            _ => digits_at(text, 0)?,
        };
        ends_field(text, p, delimiter, last).then_some((bits, p))
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]
        /// Whatever the digit counts and what follows, a field read eight bytes at a time is
        /// read as the byte-wise path reads it, or left to that path.
        #[test]
        fn words_read_fields_as_bytes_do(
            whole in "[0-9]{0,10}",
            point in proptest::bool::ANY,
            fraction in "[0-9]{0,10}",
            next in proptest::sample::select(vec![",", "\t", "\n", "\r\n", ".", "e5", "x", "", " "]),
            tail in "[0-9,\n]{0,9}",
            role in proptest::sample::select(vec![Role::Iteration, Role::Epoch, Role::Key(0), Role::Metric(0)]),
            tab in proptest::bool::ANY,
            last in proptest::bool::ANY,
        ) {
            let delimiter = if tab { b'\t' } else { b',' };
            let text = format!("{whole}{}{fraction}{next}{tail}", if point { "." } else { "" });
            let text = text.as_bytes();
            if let Some((value, p)) = word_field(text, 0, role, delimiter, last) {
                let bits = match value {
                    Value::Count(v) => v,
                    Value::Length(v) => u64::from(v),
                    Value::Metric(v) => v.to_bits(),
                };
                proptest::prop_assert_eq!(Some((bits, p)), bytewise_field(text, role, delimiter, last));
                proptest::prop_assert!(matches!(text[p], b'\n') || text[p] == delimiter);
            }
        }
    }

    #[test]
    fn words_read_the_usual_fields() {
        let text = b"1234567,0,490,140.018\n";
        assert!(matches!(
            word_field(text, 0, Role::Iteration, b',', false),
            Some((Value::Count(1234567), 7))
        ));
        assert!(matches!(
            word_field(text, 10, Role::Key(0), b',', false),
            Some((Value::Length(490), 13))
        ));
        match word_field(b"140.018\n........", 0, Role::Metric(0), b',', true) {
            Some((Value::Metric(v), 7)) => assert_eq!(v, 140.018),
            _ => panic!("the usual metric is read a word at a time"),
        }
        // Eight digits, or fewer than eight bytes left: the byte-wise path.
        assert!(word_field(b"12345678,0", 0, Role::Iteration, b',', false).is_none());
        assert!(word_field(b"5,0\n", 0, Role::Iteration, b',', false).is_none());
    }

    /// An epoch is read again whenever its bytes differ from the row before, however little.
    #[test]
    fn repeated_epochs_are_the_epochs_written() {
        let header = ["iteration", "epoch", "seq_len", "time_ms"].map(String::from);
        let plan = ColumnPlan::resolve("t", &header, &["seq_len".into()], &[]).unwrap();
        let layout = Layout::new(&plan, 4).unwrap();
        let text = b"0,1,5,1.5\n1,1,6,2.5\n2,1.0,7,3\n3,11,8,4\n4,1,9,5\n5,1,9,5\n6,2,9,5\n";
        let (mut keys, mut metric) = (vec![0u32; 7], vec![0.0; 7]);
        let mut out = BlockOut {
            keys: &mut keys,
            metrics: vec![&mut metric],
            iterations: None,
        };
        let stats = parse_delimited(text, b',', &layout, &mut out).unwrap();
        assert_eq!(stats.epochs, vec![(1, 3), (11, 1), (1, 2), (2, 1)]);
        assert_eq!(keys, vec![5, 6, 7, 8, 9, 9, 9]);
    }

    #[test]
    fn track_tells_spaced_from_gapped_iterations() {
        let mut a = IterationTrack::new();
        for v in [0, 2, 4] {
            a.push(v);
        }
        let mut b = IterationTrack::new();
        for v in [6, 8] {
            b.push(v);
        }
        let mut whole = a;
        whole.absorb(&b);
        assert!(whole.spaced && whole.increasing);
        assert_eq!((whole.first, whole.last, whole.step), (Some(0), 8, Some(2)));
        let mut c = IterationTrack::new();
        c.push(11);
        whole.absorb(&c);
        assert!(!whole.spaced && whole.increasing);
        let mut d = IterationTrack::new();
        d.push(3);
        whole.absorb(&d);
        assert!(!whole.increasing);
    }

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
