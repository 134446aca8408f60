//! Findings as text: the `report` table for the terminal.

use super::{Check, Finding, Verdict};
use crate::report::document::ReportDoc;
use crate::text::shown::shown_path;

/// The headline value in the units its check speaks: shares as percentages, counts as counts.
pub fn value_text(finding: &Finding) -> String {
    let Some(v) = finding.value else {
        return "-".to_string();
    };
    match finding.check {
        Check::Explained => format!("{v:.3}"),
        Check::Noise | Check::Drift => format!("{:.2}%", 100.0 * v),
        Check::Warmup | Check::Neighbours | Check::Outliers | Check::Shape => format!("{v:.0}"),
    }
}

/// Greedy word wrap to `width` columns (a word longer than the width gets its own line).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(10);
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// Width of the wrapped figure and advice in the terminal table.
const TABLE_WIDTH: usize = 96;

/// The `report` table: one header line, then each finding in the checks' order.
pub fn findings_table(doc: &ReportDoc) -> String {
    let input = &doc.input;
    // With --exclude, the iterations checked first, as `select --exclude` says it.
    let iterations = if input.excluded_iterations == 0 {
        format!("{} iterations", input.iterations)
    } else {
        format!(
            "{} of {} iterations ({} excluded: {})",
            input.iterations,
            input.iterations + input.excluded_iterations,
            input.excluded_iterations,
            input.exclude.join(", ")
        )
    };
    let mut out = format!(
        "{}{}: {iterations}, key {}, metrics {}\n",
        shown_path(&input.path),
        input
            .compare
            .as_ref()
            .map_or(String::new(), |c| format!(" vs {}", shown_path(c))),
        input.key.join(","),
        input.metrics.join(", ")
    );
    let warnings = doc
        .findings
        .iter()
        .filter(|f| f.verdict == Verdict::Warn)
        .count();
    for f in &doc.findings {
        out.push_str(&format!(
            "\n{:<9} {:<4} {}\n",
            f.check.name(),
            f.verdict.name(),
            value_text(f)
        ));
        for line in wrap(&f.figure, TABLE_WIDTH) {
            out.push_str(&format!("  {line}\n"));
        }
        let mut advice = wrap(&format!("-> {}", f.advice), TABLE_WIDTH);
        if let Some(flag) = &f.suggest {
            advice.push(format!("   suggested: {flag}"));
        }
        for line in advice {
            out.push_str(&format!("  {line}\n"));
        }
    }
    out.push_str(&format!(
        "\n{} of {} checks warn\n",
        warnings,
        doc.findings.len()
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(check: Check, verdict: Verdict, value: Option<f64>) -> Finding {
        Finding {
            check,
            verdict,
            value,
            figure: "one two three four five six seven".to_string(),
            advice: "do this".to_string(),
            suggest: (verdict == Verdict::Warn).then(|| "--strata epoch".to_string()),
            details: Vec::new(),
        }
    }

    #[test]
    fn wrap_keeps_words_whole_and_within_width() {
        let lines = wrap("one two three four five six seven", 10);
        assert_eq!(lines, ["one two", "three four", "five six", "seven"]);
        assert!(lines.iter().all(|l| l.len() <= 10));
    }

    #[test]
    fn missing_values_show_a_dash() {
        assert_eq!(value_text(&finding(Check::Noise, Verdict::Warn, None)), "-");
        assert_eq!(
            value_text(&finding(Check::Warmup, Verdict::Warn, Some(3.0))),
            "3"
        );
    }
}
