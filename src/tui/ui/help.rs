//! The help overlay (`?`): every key and what it does.

use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use ratatui::Frame;

use super::theme::Theme;

/// Every key, as the help lists it (the README lists the same).
pub const KEYS: [(&str, &str); 17] = [
    ("h / ←", "fewer bins (K − 1); leaves auto-K"),
    ("l / →", "more bins (K + 1); leaves auto-K"),
    ("t / T", "error target down / up"),
    ("a", "auto-K: the smallest K that meets the target"),
    ("m", "next binning method"),
    ("p", "next representative pick"),
    ("g", "log scale for the distribution"),
    ("c", "distribution of iterations, or of a metric's total"),
    ("Tab", "switch view: overview / SeqPoints table"),
    ("↑ ↓ j k", "select a SeqPoint (PgUp PgDn Home End)"),
    ("Enter", "SeqPoint detail: alternates, the bin's key groups"),
    ("e", "export JSON + CSV list (asks for the path)"),
    ("y", "show the equivalent `seqpoint select` command"),
    ("?", "this help"),
    ("q / Esc", "quit (Esc closes a popup first)"),
    ("Ctrl-C", "quit from anywhere"),
    ("", "errors over the target: marked ! (and red)"),
];

pub fn render(frame: &mut Frame, area: Rect, t: &Theme) {
    let height = (KEYS.len() + 2) as u16;
    let popup = area.centered(
        Constraint::Length(64.min(area.width)),
        Constraint::Length(height.min(area.height)),
    );
    frame.render_widget(Clear, popup);
    let lines: Vec<Line> = KEYS
        .iter()
        .map(|(key, what)| {
            Line::from(vec![
                Span::styled(format!(" {key:<9}"), t.key()),
                Span::raw(*what),
            ])
        })
        .collect();
    let block = Block::bordered()
        .title(Span::styled(" Keys ", t.title()))
        .title_bottom(Line::styled(" Esc / ? close ", t.dim()).right_aligned());
    frame.render_widget(Paragraph::new(lines).block(block), popup);
}
