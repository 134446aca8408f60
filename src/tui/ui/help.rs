//! The help overlay (`?`): every key and what it does, as `keymap` lists them, then the `:`
//! commands; ↑↓ scroll it on a short terminal, and a row too long ends with `…`.

use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};
use ratatui::Frame;

use super::cut_line;
use super::theme::Theme;
use crate::tui::app::{App, Overlay};
use crate::tui::command_line::COMMANDS;
use crate::tui::keymap;

/// Below the keys: how the screen marks what the keys are tuning for.
const NOTE: (&str, &str) = (
    "",
    "errors over the target: marked ! (and red); i lists every mark",
);

pub fn render(frame: &mut Frame, area: Rect, app: &mut App, t: &Theme) {
    let Overlay::Help { scroll } = app.overlay else {
        return;
    };
    let mut lines: Vec<Line> = keymap::help_rows()
        .chain([NOTE])
        .map(|(key, what)| {
            Line::from(vec![
                Span::styled(format!(" {key:<10}"), t.key()),
                Span::raw(what),
            ])
        })
        .collect();
    lines.push(Line::styled(" Commands after :", t.strong()));
    for (name, arg, what) in COMMANDS {
        lines.push(Line::from(vec![
            Span::styled(format!(" :{name} {arg:<5}"), t.key()),
            Span::raw(format!(" {what}")),
        ]));
    }
    let width = 72.min(area.width);
    let height = (lines.len() as u16 + 2).min(area.height);
    let popup = area.centered(Constraint::Length(width), Constraint::Length(height));
    frame.render_widget(Clear, popup);
    let visible = height.saturating_sub(2) as usize;
    let scroll = scroll.min(lines.len().saturating_sub(visible));
    app.overlay = Overlay::Help { scroll };
    let inner_width = width.saturating_sub(2) as usize;
    let lines: Vec<Line> = lines
        .into_iter()
        .skip(scroll)
        .take(visible)
        .map(|l| cut_line(l, inner_width))
        .collect();
    let total = keymap::help_rows().count() + 2 + COMMANDS.len();
    let position = if total > visible {
        format!(
            " rows {}–{} of {total} · ↑↓ scroll ·",
            scroll + 1,
            scroll + lines.len()
        )
    } else {
        String::new()
    };
    let block = Block::bordered()
        .title(Span::styled(" Keys ", t.title()))
        .title_bottom(Line::styled(format!("{position} Esc / ? close "), t.dim()).right_aligned());
    frame.render_widget(Paragraph::new(lines).block(block), popup);
}
