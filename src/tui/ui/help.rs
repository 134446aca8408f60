//! The help overlay (`?`): every key and what it does, as `keymap` lists them, then the `:`
//! commands; ↑↓ and the page keys scroll it on a short terminal, and a row too long goes on
//! under itself.

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

/// Columns before a key's description: ` Ctrl-Z    `.
const KEY_COLUMN: usize = 11;

pub fn render(frame: &mut Frame, area: Rect, app: &mut App, t: &Theme) {
    let Overlay::Help { scroll } = app.overlay else {
        return;
    };
    let width = 72.min(area.width);
    let inner_width = width.saturating_sub(2) as usize;
    // A description too long for the row goes on under itself, never cut.
    let row = |key: String, column: usize, what: &str| -> Vec<Line<'static>> {
        let room = inner_width.saturating_sub(column).max(8);
        let words = Line::raw(what.to_string());
        super::wrap_line(&words, room)
            .into_iter()
            .enumerate()
            .map(|(i, part)| {
                let text: String = part.spans.iter().map(|s| s.content.as_ref()).collect();
                // `wrap_line` indents a continuation by two: the column indents it here.
                let text = text.trim_start().to_string();
                let lead = if i == 0 {
                    Span::styled(format!("{key:<column$}"), t.key())
                } else {
                    Span::raw(" ".repeat(column))
                };
                Line::from(vec![lead, Span::raw(text)])
            })
            .collect()
    };
    let mut lines: Vec<Line> = keymap::help_rows()
        .chain([NOTE])
        .flat_map(|(key, what)| row(format!(" {key}"), KEY_COLUMN, what))
        .collect();
    lines.push(Line::styled(" Commands after :", t.strong()));
    let command = |name: &str, arg: &str| format!(" :{name} {arg}");
    // The commands' own column: the longest `:name ARG` and a space.
    let column = COMMANDS
        .iter()
        .map(|(name, arg, _)| command(name, arg).chars().count() + 1)
        .max()
        .unwrap_or(KEY_COLUMN);
    for (name, arg, what) in COMMANDS {
        lines.extend(row(command(name, arg), column, what));
    }
    let height = (lines.len() as u16 + 2).min(area.height);
    let popup = area.centered(Constraint::Length(width), Constraint::Length(height));
    frame.render_widget(Clear, popup);
    let visible = height.saturating_sub(2) as usize;
    let total = lines.len();
    let scroll = scroll.min(total.saturating_sub(visible));
    app.overlay = Overlay::Help { scroll };
    app.popup_rows = Some(visible.max(1));
    let lines: Vec<Line> = lines
        .into_iter()
        .skip(scroll)
        .take(visible)
        .map(|l| cut_line(l, inner_width))
        .collect();
    let position = if total > visible {
        format!(
            " rows {}–{} of {total} · ↑↓ PgUp PgDn ·",
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
