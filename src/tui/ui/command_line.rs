//! The `:` command line and the `/` search, on the screen's last two rows: what is typed
//! (with the cursor), and above it the matching commands or, after Enter, what is wrong.

use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph};
use ratatui::Frame;

use super::theme::Theme;
use super::{cut, cut_line};
use crate::tui::app::{App, Overlay};
use crate::tui::command_line::suggestions;

pub fn render(frame: &mut Frame, area: Rect, app: &App, t: &Theme) {
    let (prompt, search) = match &app.overlay {
        Overlay::CommandLine(prompt) => (prompt, false),
        Overlay::Search(prompt) => (prompt, true),
        _ => return,
    };
    if area.height < 2 {
        return;
    }
    let width = area.width as usize;
    let about = Rect::new(area.x, area.bottom() - 2, area.width, 1);
    let typed = Rect::new(area.x, area.bottom() - 1, area.width, 1);
    frame.render_widget(Clear, about);
    frame.render_widget(Clear, typed);
    let line = match &prompt.error {
        Some(e) => Line::styled(cut(&format!(" {e}"), width), t.bad()),
        None if search => Line::styled(
            cut(
                " find: an iteration or a key, then Enter (Esc cancels)",
                width,
            ),
            t.dim(),
        ),
        None => {
            let fits = suggestions(&prompt.input);
            let mut spans = vec![Span::raw(" ")];
            if fits.len() == 1 {
                let (name, arg, what) = fits[0];
                spans.push(Span::styled(format!(":{name} {arg}"), t.key()));
                spans.push(Span::styled(format!("  {what}"), t.dim()));
            } else {
                for (name, arg, _) in fits {
                    spans.push(Span::styled(format!(":{name}"), t.key()));
                    spans.push(Span::styled(format!(" {arg}  "), t.dim()));
                }
                spans.push(Span::styled("(Tab completes)", t.dim()));
            }
            cut_line(Line::from(spans), width)
        }
    };
    frame.render_widget(Paragraph::new(line).style(t.plain()), about);
    // Keep the cursor in view on a long line.
    let field = width.saturating_sub(2);
    let chars: Vec<char> = prompt.input.chars().collect();
    let first = prompt.cursor.saturating_sub(field.saturating_sub(1));
    let shown: String = chars.iter().skip(first).take(field).collect();
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(if search { "/" } else { ":" }, t.key()),
            Span::raw(shown),
        ])),
        typed,
    );
    let x = typed.x + 1 + (prompt.cursor - first) as u16;
    frame.set_cursor_position(Position::new(x.min(typed.right() - 1), typed.y));
}
