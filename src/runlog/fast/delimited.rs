//! The fast path's CSV/TSV lines: fields found and read eight bytes at a time where they are
//! the usual short numbers, byte by byte otherwise, into the block's column slices.

use super::fields::{
    careful_value, end_row, store, Anomaly, BlockOut, BlockStats, Layout, Role, RowValues, Value,
};
use super::numbers::{
    decimal_at, digits_at, digits_value, leading_digits, short_decimal, word_at, POW10,
};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runlog::columns::ColumnPlan;

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
}
