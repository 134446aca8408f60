//! Numbers a person reads on a screen: thousands separators below a million, scaled units
//! (k, M, G …) with five significant digits above, never e-notation; percentages that keep
//! their `%` in a few characters; and a setting or a value a person typed, as typed.

/// Scaled units from a million up; a thousand keeps its separators instead.
const UNITS: [(f64, &str); 5] = [
    (1e18, "E"),
    (1e15, "P"),
    (1e12, "T"),
    (1e9, "G"),
    (1e6, "M"),
];

/// A setting or a value as a person typed it, near enough, for a message: plain when ordinary
/// (`-5`, `0.25`, `1`), in exponent form when huge or tiny (`1e308`, `1e-320`, not hundreds of
/// digits). Messages, tables and the explorer all quote typed values through this one rule.
pub fn as_typed(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-4..1e6).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// `708,171.1`, `12.345`, `0.1234`, `239.44M`: at most 9 characters below 1e21, enough
/// digits to read a 0.01% gap between two totals of the same size.
pub fn readable(v: f64) -> String {
    if !v.is_finite() {
        return if v.is_nan() {
            "n/a".into()
        } else if v > 0.0 {
            "∞".into()
        } else {
            "-∞".into()
        };
    }
    let a = v.abs();
    for (scale, unit) in UNITS {
        if a >= scale {
            let scaled = v / scale;
            if scaled.abs() >= 1000.0 && unit == "E" {
                // Beyond the largest unit: whole units with separators.
                return format!("{}{unit}", separated(scaled, 0));
            }
            return format!("{}{unit}", significant(scaled, 5));
        }
    }
    let decimals = if a >= 100.0 {
        1
    } else if a >= 1.0 {
        3
    } else {
        4
    };
    separated(v, decimals)
}

/// `v` with `digits` significant digits (for 1 <= |v| < 1000).
fn significant(v: f64, digits: usize) -> String {
    let whole = (v.abs().log10().floor() as usize + 1).min(digits);
    let text = format!("{v:.prec$}", prec = digits - whole);
    // 999.995 rounds up to 1000.00: keep the width.
    if text.trim_start_matches('-').len() > digits + 1 {
        format!("{v:.prec$}", prec = (digits - whole).saturating_sub(1))
    } else {
        text
    }
}

/// `v` with `decimals` decimals and `,` between thousands.
fn separated(v: f64, decimals: usize) -> String {
    let text = format!("{:.decimals$}", v.abs());
    let (whole, fraction) = match text.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (text.as_str(), None),
    };
    let mut grouped = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let sign = if v < 0.0 && text.chars().any(|c| c != '0' && c != '.') {
        "-"
    } else {
        ""
    };
    match fraction {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

/// A whole number with `,` between thousands: `1,000,000` (exact for every `u64`, where
/// `readable` scales from a million).
pub fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(c);
    }
    grouped
}

/// A share with `decimals` decimals that never reads 0 when it is not: `<0.1` where a
/// positive share rounds to zero, so one column keeps one number of decimals.
pub fn share(v: f64, decimals: usize) -> String {
    let text = format!("{v:.decimals$}");
    if v > 0.0 && text.trim_start_matches(['0', '.']).is_empty() {
        format!("<{:.decimals$}", 0.1f64.powi(decimals as i32))
    } else {
        text
    }
}

/// A percentage in at most 6 characters, `%` included: `30%`, `3.0%`, `0.30%`, `0.030%`.
pub fn percent(v: f64) -> String {
    let a = v.abs();
    if a >= 10.0 {
        format!("{v:.0}%")
    } else if a >= 1.0 {
        format!("{v:.1}%")
    } else if a >= 0.1 || a == 0.0 {
        format!("{v:.2}%")
    } else if a >= 0.001 {
        format!("{v:.3}%")
    } else {
        "<0.001%".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_have_thousands_separators() {
        assert_eq!(count(0), "0");
        assert_eq!(count(999), "999");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(1_000_000), "1,000,000");
        assert_eq!(count(12_345_678), "12,345,678");
        assert_eq!(count(u64::MAX), "18,446,744,073,709,551,615");
    }

    #[test]
    fn a_share_that_is_not_zero_never_reads_zero() {
        assert_eq!(share(0.0, 1), "0.0");
        assert_eq!(share(0.04, 1), "<0.1");
        assert_eq!(share(1e-9, 2), "<0.01");
        assert_eq!(share(12.34, 1), "12.3");
        assert_eq!(share(0.3, 0), "<1");
    }

    #[test]
    fn typed_values_read_as_typed_and_extremes_in_exponent_form() {
        for (v, shown) in [
            (-5.0, "-5"),
            (0.25, "0.25"),
            (1.0, "1"),
            (0.0, "0"),
            (999_999.0, "999999"),
        ] {
            assert_eq!(as_typed(v), shown);
        }
        for (v, shown) in [
            (1e308, "1e308"),
            (1e-320, "1e-320"),
            (-2.5e-5, "-2.5e-5"),
            (1e6, "1e6"),
        ] {
            assert_eq!(as_typed(v), shown);
        }
        assert_eq!(as_typed(f64::INFINITY), "inf");
        assert_eq!(as_typed(f64::NAN), "NaN");
    }

    #[test]
    fn readable_numbers_never_use_e_notation() {
        assert_eq!(readable(708171.06), "708,171.1");
        assert_eq!(readable(1234.5), "1,234.5");
        assert_eq!(readable(12.3456), "12.346");
        assert_eq!(readable(0.12345), "0.1235");
        assert_eq!(readable(-4567.0), "-4,567.0");
        assert_eq!(readable(239_440_123.0), "239.44M");
        assert_eq!(readable(7_081_700.0), "7.0817M");
        assert_eq!(readable(1.5e12), "1.5000T");
        assert_eq!(readable(999_999.96), "1,000,000.0");
        assert_eq!(readable(2.5e22), "25,000E");
        for v in [1e-9, 3.3e7, 9.99e20, 1e300, 123456789.0] {
            let text = readable(v);
            assert!(!text.contains('e'), "{v}: {text}");
        }
    }

    #[test]
    fn a_small_gap_between_large_totals_stays_readable() {
        // 0.03% apart at 1M rows' scale: the two texts differ.
        let (a, b) = (239_440_000.0, 239_440_000.0 * 1.0003);
        assert_ne!(readable(a), readable(b));
    }

    #[test]
    fn percentages_keep_their_sign_in_six_characters() {
        for (v, want) in [
            (30.0, "30%"),
            (3.0, "3.0%"),
            (0.3, "0.30%"),
            (0.03, "0.030%"),
            (0.0, "0.00%"),
            (150.0, "150%"),
        ] {
            assert_eq!(percent(v), want);
            assert!(percent(v).chars().count() <= 6);
        }
    }
}
