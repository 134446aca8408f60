//! The export prompt (`e`): the path to write (the CSV list goes beside it; a `.simpoints`
//! name is a SimPoint set), then the overwrite question when the files exist.

use ratatui::layout::{Constraint, Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};
use ratatui::Frame;

use super::theme::Theme;
use crate::tui::app::{App, Overlay};
use crate::tui::export_prompt::{expand_home, listed};
use crate::tui::save::ExportTargets;
use crate::tui::update::export_targets_of;

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
    let targets = export_targets_of(&prompt.input);
    let heading = match &targets {
        Ok(ExportTargets::SimPoints(_)) => "Writes a SimPoint set, as `seqpoint select -o` does:",
        _ => "Writes the JSON document, and the CSV list beside it:",
    };
    let also = match &targets {
        Ok(targets) => {
            // The files besides the one typed.
            let typed = expand_home(prompt.input.trim());
            let others: Vec<_> = targets
                .paths()
                .into_iter()
                .filter(|p| *p != typed)
                .collect();
            let what = match targets {
                ExportTargets::Pair { json, gzip, .. } => {
                    let list = if others.contains(json) {
                        "the JSON document"
                    } else {
                        "the CSV list"
                    };
                    if *gzip {
                        format!("  ({list}; both gzip-compressed)")
                    } else {
                        format!("  ({list})")
                    }
                }
                ExportTargets::SimPoints(_) => "  (the set: weights and the JSON document)".into(),
            };
            Line::from(vec![
                Span::styled("also: ", t.dim()),
                Span::raw(listed(&others)),
                Span::styled(what, t.dim()),
            ])
        }
        Err(e) => Line::styled(e.clone(), t.bad()),
    };
    let mut lines = vec![
        Line::styled(heading, t.dim()),
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
