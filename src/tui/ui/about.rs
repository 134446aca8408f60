//! The result in full (`i`): the projection's summary, verdict and advice wrapped, never
//! cut, the last message, and what every mark on screen means; ↑↓ scroll it.

use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Wrap};
use ratatui::Frame;

use super::projection::summary;
use super::theme::Theme;
use crate::tui::app::{App, Overlay};

/// Every mark the overview draws but the SeqPoints' own (`seqpoint_mark`), and what it
/// stands for.
pub const MARKS: &[(&str, &str)] = &[
    ("┊", "a bin boundary in the distribution"),
    ("•", "the worst error at each K (error curve)"),
    ("░", "the 95% interval half-width at each K"),
    ("─", "the error target"),
    ("┆", "the current K's column"),
    ("↑", "an error above the top of the axis"),
    (
        "f r",
        "first-N / random-N baselines at the same budget (data)",
    ),
    ("!", "a figure over the target (red with colour)"),
];

pub fn render(frame: &mut Frame, area: Rect, app: &mut App, t: &Theme) {
    let Overlay::About { scroll } = app.overlay else {
        return;
    };
    let popup = area.centered(Constraint::Percentage(94), Constraint::Percentage(90));
    frame.render_widget(Clear, popup);
    let mut lines: Vec<Line> = super::header::lines(app, t, false).into();
    lines.push(Line::raw(""));
    match &app.shown {
        Some(shown) => lines.extend(summary(app, shown, t)),
        None => lines.push(Line::styled("computing…", t.dim())),
    }
    // The curve's border cuts it on a narrow screen: here it is whole.
    if let Some(legend) = super::baseline_legend(app) {
        lines.push(Line::from(vec![
            Span::styled("naive baselines: ", t.dim()),
            Span::raw(legend),
        ]));
    }
    if let Some(judged) = &app.judged {
        // `:measured`: `project`'s own table, the target judged on the new configuration.
        lines.push(Line::raw(""));
        lines.push(Line::styled(
            format!("Measured: {}", judged.path),
            t.strong(),
        ));
        lines.extend(judged.table.lines().map(|l| Line::raw(l.to_string())));
        if judged.top_up.is_some() {
            lines.push(Line::styled(
                ":top-up FILE writes the iterations to measure next",
                t.dim(),
            ));
        }
    }
    if let Some(status) = &app.last_message {
        lines.push(Line::raw(""));
        lines.push(Line::from(vec![
            Span::styled("last message: ", t.dim()),
            Span::raw(status.clone()),
        ]));
    }
    lines.push(Line::raw(""));
    lines.push(Line::styled("Marks", t.strong()));
    let seqpoint = (
        super::seqpoint_mark(app.session.log.dims()),
        "a SeqPoint at its key (the selected one stands out)",
    );
    for (mark, what) in std::iter::once(&seqpoint).chain(MARKS) {
        lines.push(Line::from(vec![
            Span::styled(format!(" {mark:<4}"), t.strong()),
            Span::raw(*what),
        ]));
    }
    let block = Block::bordered()
        .title(Span::styled(" The result in full ", t.title()))
        .title_bottom(Line::styled(" ↑↓ scroll · Esc close ", t.dim()).right_aligned());
    let inner_height = popup.height.saturating_sub(2) as usize;
    let width = popup.width.saturating_sub(2).max(1) as usize;
    let total: usize = lines.iter().map(|l| l.width().div_ceil(width).max(1)).sum();
    let paragraph = Paragraph::new(lines).wrap(Wrap { trim: false });
    let scroll = scroll.min(total.saturating_sub(inner_height));
    app.overlay = Overlay::About { scroll };
    app.popup_rows = Some(inner_height.max(1));
    frame.render_widget(paragraph.block(block).scroll((scroll as u16, 0)), popup);
}
