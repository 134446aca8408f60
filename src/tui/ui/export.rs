//! The export prompt (`e`): the path to write (the CSV list goes beside it), then the
//! overwrite question when the files exist.

use ratatui::layout::{Constraint, Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};
use ratatui::Frame;

use super::theme::Theme;
use crate::tui::app::{App, Overlay};
use crate::tui::update::export_paths;

pub fn render(frame: &mut Frame, area: Rect, app: &App, t: &Theme) {
    let Overlay::Export(prompt) = &app.overlay else {
        return;
    };
    let width = area.width.saturating_sub(6).min(90);
    let popup = area.centered(
        Constraint::Length(width),
        Constraint::Length(11.min(area.height)),
    );
    frame.render_widget(Clear, popup);
    let block = Block::bordered().title(Span::styled(" Export SeqPoints ", t.title()));
    let inner = block.inner(popup);
    frame.render_widget(block, popup);

    let field = inner.width.saturating_sub(7) as usize;
    // Keep the cursor in view: show the end of a path longer than the field.
    let chars: Vec<char> = prompt.input.chars().collect();
    let first = prompt.cursor.saturating_sub(field.saturating_sub(1));
    let shown: String = chars.iter().skip(first).take(field).collect();
    let also = match export_paths(&prompt.input) {
        Ok((_, csv)) => Line::from(vec![
            Span::styled("also: ", t.dim()),
            Span::raw(csv.display().to_string()),
            Span::styled("  (the CSV list)", t.dim()),
        ]),
        Err(e) => Line::styled(e, t.bad()),
    };
    let mut lines = vec![
        Line::styled(
            "Writes the JSON document, and the CSV list beside it:",
            t.dim(),
        ),
        Line::from(vec![Span::styled("path: ", t.strong()), Span::raw(shown)]),
        also,
    ];
    // Why the last Enter did not write, in full (wrapped, never cut).
    match app.status.as_ref().filter(|s| s.error) {
        Some(status) => lines.push(Line::styled(status.text.clone(), t.bad())),
        None => lines.push(Line::raw("")),
    }
    match &prompt.confirm {
        Some(asked) => {
            let existing: Vec<String> = asked
                .existing
                .iter()
                .map(|p| p.display().to_string())
                .collect();
            let verb = if existing.len() > 1 {
                "exist"
            } else {
                "exists"
            };
            lines.push(Line::from(vec![
                Span::styled(
                    format!("{} already {verb}. ", existing.join(" and ")),
                    t.bad(),
                ),
                Span::styled("Overwrite? ", t.strong()),
                Span::styled("y", t.key()),
                Span::raw(" / "),
                Span::styled("n", t.key()),
            ]));
        }
        None => {
            lines.push(Line::from(vec![
                Span::styled("Enter", t.key()),
                Span::raw(" write  "),
                Span::styled("Esc", t.key()),
                Span::raw(" cancel  "),
                Span::styled("Ctrl-U", t.key()),
                Span::raw(" clear"),
            ]));
            let x = inner.x + 6 + (prompt.cursor - first) as u16;
            frame.set_cursor_position(Position::new(x.min(inner.right() - 1), inner.y + 1));
        }
    }
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), inner);
}
