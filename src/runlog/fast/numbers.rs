//! Numbers read straight from a block's bytes, without allocation: plain digits, exactly
//! rounded decimals, and eight digits at a time as one word; anything else is the careful parser's.

/// Exact powers of ten: `m / 10^k` with `m <= 2^53` and `k <= 22` is one correctly rounded
/// division, which is what both `str::parse::<f64>` and serde_json return for such text.
pub(super) const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];
pub(super) const EXACT_MANTISSA: u64 = 1 << 53;

/// Reads the decimal digits from `p` into `acc` (wrapping: callers bound the digit count);
/// returns where they end.
#[inline(always)]
pub(super) fn read_digits(text: &[u8], mut p: usize, acc: &mut u64) -> usize {
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
pub(super) fn digits_at(text: &[u8], pos: usize) -> Option<(u64, usize)> {
    let mut value: u64 = 0;
    let p = read_digits(text, pos, &mut value);
    let digits = p - pos;
    (digits > 0 && digits <= 19).then_some((value, p))
}

/// `digits[.digits]` at `pos`, exactly rounded; `None` for anything else (exponents, signs,
/// long mantissas), which the careful parser then reads.
#[inline(always)]
pub(super) fn decimal_at(text: &[u8], pos: usize) -> Option<(f64, usize)> {
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
pub(super) fn word_at(text: &[u8], p: usize) -> Option<u64> {
    let bytes = text.get(p..p + 8)?;
    Some(u64::from_le_bytes(bytes.try_into().ok()?))
}

/// The word's bytes as digit values (`b - '0'`), and how many of them, from the first, are
/// ASCII digits (8 when all are). Byte-wise arithmetic that never carries across bytes.
#[inline(always)]
pub(super) fn leading_digits(word: u64) -> (u64, usize) {
    let (values, not_digit) = digit_values(word);
    (values, (not_digit.trailing_zeros() / 8) as usize)
}

/// The word's bytes as digit values (`b - '0'`), and bit 7 set in each byte that is not an
/// ASCII digit. Byte-wise arithmetic that never carries across bytes.
#[inline(always)]
pub(super) fn digit_values(word: u64) -> (u64, u64) {
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
pub(super) fn short_decimal(
    word: u64,
    point: usize,
    ends: impl Fn(u8) -> bool,
) -> Option<(f64, usize)> {
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
pub(super) fn digits_value(values: u64, len: usize) -> u64 {
    debug_assert!((1..=8).contains(&len));
    let v = values << (8 * (8 - len));
    let v = ((v & 0x0f0f_0f0f_0f0f_0f0f).wrapping_mul(2561)) >> 8;
    let v = ((v & 0x00ff_00ff_00ff_00ff).wrapping_mul(6_553_601)) >> 16;
    ((v & 0x0000_ffff_0000_ffff).wrapping_mul(42_949_672_960_001)) >> 32
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
}
