//! The command-line popup (`y`): the `seqpoint select ...` line that reproduces what is on
//! screen, so a selection found by hand can go into a script. It is on one line, never
//! wrapped, with no border beside it, so a mouse selection picks up the command alone; `y`
//! also copied it to the clipboard (OSC 52). A line wider than the screen scrolls with ← →.

use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

use super::theme::Theme;
use crate::tui::app::{App, Overlay};

pub fn render(frame: &mut Frame, area: Rect, app: &mut App, t: &Theme) {
    let Overlay::Command { scroll } = app.overlay else {
        return;
    };
    let command = app.session.copied_command(&app.settings);
    let length = command.chars().count();
    let width = area.width;
    let scroll = scroll.min(length.saturating_sub(width as usize));
    app.overlay = Overlay::Command { scroll };
    let popup = area.centered(Constraint::Length(width), Constraint::Length(7));
    frame.render_widget(Clear, popup);
    let fits = length <= width as usize;
    let shown: String = command.chars().skip(scroll).take(width as usize).collect();
    let place = if fits {
        "select it with the mouse, or paste: y copied it (OSC 52)".to_string()
    } else {
        format!(
            "{}–{} of {length} characters · ← → scroll · y copied it all (OSC 52)",
            scroll + 1,
            scroll + shown.chars().count()
        )
    };
    let what = if app.session.run == "-" {
        format!(
            " The same selection from a script (the log came through a pipe: put its path for {}):",
            crate::tui::session::STDIN_PLACEHOLDER
        )
    } else {
        " The same selection from a script:".to_string()
    };
    let lines = vec![
        Line::styled(super::cut(&what, width as usize), t.dim()),
        Line::raw(""),
        Line::styled(shown, t.strong()),
        Line::raw(""),
        Line::styled(super::cut(&format!(" {place}"), width as usize), t.dim()),
    ];
    let block = Block::new()
        .borders(Borders::TOP | Borders::BOTTOM)
        .title(Span::styled(" Command line ", t.title()))
        .title_bottom(Line::styled(" Esc / y close ", t.dim()).right_aligned());
    frame.render_widget(Paragraph::new(lines).block(block), popup);
}

/// The OSC 52 sequence that puts `text` on the terminal's clipboard (also over SSH; in tmux
/// with `set-clipboard on`).
pub fn osc52(text: &str) -> String {
    format!("\x1b]52;c;{}\x07", base64(text.as_bytes()))
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard_examples() {
        for (text, want) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foobar", "Zm9vYmFy"),
            (
                "seqpoint select --bins 8",
                "c2VxcG9pbnQgc2VsZWN0IC0tYmlucyA4",
            ),
        ] {
            assert_eq!(base64(text.as_bytes()), want, "{text}");
        }
        assert_eq!(osc52("f"), "\x1b]52;c;Zg==\x07");
    }
}
