//! Findings as text: the `report` table for the terminal, and wrapped lines the TUI's
//! findings panel draws (it colours each line by its verdict).

use super::{Check, Finding, ReportDoc, Verdict};

/// The headline value in the units its check speaks: shares as percentages, counts as counts.
pub fn value_text(finding: &Finding) -> String {
    let Some(v) = finding.value else {
        return "-".to_string();
    };
    match finding.check {
        Check::Explained => format!("{v:.3}"),
        Check::Noise | Check::Drift => format!("{:.2}%", 100.0 * v),
        Check::Warmup | Check::Outliers | Check::Shape => format!("{v:.0}"),
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

/// What a panel line shows, so the TUI can style it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// `warn drift 2.40%`: the check, its verdict and headline value.
    Headline,
    Figure,
    Advice,
}

/// One line of the findings panel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PanelLine {
    pub check: Check,
    pub verdict: Verdict,
    pub kind: LineKind,
    pub text: String,
}

/// The findings as lines at most `width` characters wide: per finding a headline, its figure,
/// then its advice (prefixed "-> "), warnings first so a short panel shows what matters.
pub fn panel_lines(findings: &[Finding], width: usize) -> Vec<PanelLine> {
    let mut ordered: Vec<&Finding> = findings.iter().collect();
    ordered.sort_by_key(|f| f.verdict != Verdict::Warn);
    let mut lines = Vec::new();
    for f in ordered {
        let line = |kind, text: String| PanelLine {
            check: f.check,
            verdict: f.verdict,
            kind,
            text,
        };
        lines.push(line(
            LineKind::Headline,
            format!(
                "{:<4} {:<9} {}",
                f.verdict.name(),
                f.check.name(),
                value_text(f)
            ),
        ));
        for text in wrap(&f.figure, width.saturating_sub(2)) {
            lines.push(line(LineKind::Figure, format!("  {text}")));
        }
        let advice = match &f.suggest {
            Some(flag) => format!("-> {} [{flag}]", f.advice),
            None => format!("-> {}", f.advice),
        };
        for text in wrap(&advice, width.saturating_sub(2)) {
            lines.push(line(LineKind::Advice, format!("  {text}")));
        }
    }
    lines
}

/// Width of the wrapped figure and advice in the terminal table.
const TABLE_WIDTH: usize = 96;

/// The `report` table: one header line, then each finding in the checks' order.
pub fn findings_table(doc: &ReportDoc) -> String {
    let input = &doc.input;
    let mut out = format!(
        "{}{}: {} iterations, key {}, metrics {}\n",
        input.path,
        input
            .compare
            .as_ref()
            .map_or(String::new(), |c| format!(" vs {c}")),
        input.iterations,
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
    fn panel_puts_warnings_first_and_fits_the_width() {
        let findings = [
            finding(Check::Explained, Verdict::Ok, Some(0.9951)),
            finding(Check::Drift, Verdict::Warn, Some(0.024)),
        ];
        let lines = panel_lines(&findings, 14);
        assert_eq!(lines[0].kind, LineKind::Headline);
        assert_eq!(lines[0].text, "warn drift     2.40%");
        assert_eq!(lines[0].check, Check::Drift);
        assert!(lines
            .iter()
            .filter(|l| l.kind != LineKind::Headline)
            .all(|l| l.text.chars().count() <= 14));
        let advice: Vec<&str> = lines
            .iter()
            .filter(|l| l.kind == LineKind::Advice && l.check == Check::Drift)
            .map(|l| l.text.as_str())
            .collect();
        assert_eq!(advice, ["  -> do this", "  [--strata", "  epoch]"]);
        let ok = lines
            .iter()
            .position(|l| l.check == Check::Explained)
            .unwrap();
        assert_eq!(lines[ok].text, "ok   explained 0.995");
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
