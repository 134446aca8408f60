//! The help overlay (`?`): every key and what it does, as `keymap` lists them.

use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use ratatui::Frame;

use super::theme::Theme;
use crate::tui::keymap;

/// Below the keys: how the screen marks what the keys are tuning for.
const NOTE: (&str, &str) = ("", "errors over the target: marked ! (and red)");

pub fn render(frame: &mut Frame, area: Rect, t: &Theme) {
    let rows: Vec<(&str, &str)> = keymap::help_rows().chain([NOTE]).collect();
    let height = (rows.len() + 2) as u16;
    let popup = area.centered(
        Constraint::Length(64.min(area.width)),
        Constraint::Length(height.min(area.height)),
    );
    frame.render_widget(Clear, popup);
    let lines: Vec<Line> = rows
        .into_iter()
        .map(|(key, what)| {
            Line::from(vec![
                Span::styled(format!(" {key:<9}"), t.key()),
                Span::raw(what),
            ])
        })
        .collect();
    let block = Block::bordered()
        .title(Span::styled(" Keys ", t.title()))
        .title_bottom(Line::styled(" Esc / ? close ", t.dim()).right_aligned());
    frame.render_widget(Paragraph::new(lines).block(block), popup);
}
