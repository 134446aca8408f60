//! The command-line popup (`y`): the `seqpoint select ...` line that reproduces what is on
//! screen, so a selection found by hand can go into a script.

use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};
use ratatui::Frame;

use super::theme::Theme;
use crate::tui::app::App;

pub fn render(frame: &mut Frame, area: Rect, app: &App, t: &Theme) {
    let command = app.session.command(&app.settings);
    let width = area.width.saturating_sub(4).min(110);
    // The command wraps inside the popup; a blank line on each side keeps it easy to select.
    let text_width = width.saturating_sub(2).max(1) as usize;
    let command_lines = command.chars().count().div_ceil(text_width) as u16;
    let height = (command_lines + 6).min(area.height);
    let popup = area.centered(Constraint::Length(width), Constraint::Length(height));
    frame.render_widget(Clear, popup);
    let lines = vec![
        Line::styled("The same selection from a script:", t.dim()),
        Line::raw(""),
        Line::styled(command, t.strong()),
        Line::raw(""),
        Line::styled("Exports record it as \"command\" in the JSON.", t.dim()),
    ];
    let block = Block::bordered()
        .title(Span::styled(" Command line ", t.title()))
        .title_bottom(Line::styled(" Esc / y close ", t.dim()).right_aligned());
    frame.render_widget(
        Paragraph::new(lines)
            .block(block)
            .wrap(Wrap { trim: false }),
        popup,
    );
}
