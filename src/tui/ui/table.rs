//! The SeqPoints table: id, iteration, key, bin range, weight, share and metrics of each
//! SeqPoint; scrollable, with the selected row opening its detail on Enter.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Paragraph, Row, Table};
use ratatui::Frame;

use super::theme::Theme;
use crate::groups::key_text;
use crate::pick::SeqPoint;
use crate::text::numbers::{readable, share};
use crate::tui::app::App;

const SPACING: u16 = 2;

pub fn bin_text(sp: &SeqPoint) -> String {
    if sp.bin_min == sp.bin_max {
        key_text(&sp.bin_min)
    } else {
        format!("{}–{}", key_text(&sp.bin_min), key_text(&sp.bin_max))
    }
}

/// The table, with the projection it gives still in view under it: the whole panel when
/// there is room, else its summary lines.
pub fn render(frame: &mut Frame, area: Rect, app: &mut App, t: &Theme) {
    let below = if area.height >= 20 {
        super::projection::needed_height(app)
    } else {
        2
    };
    let [table_area, projection_area] =
        Layout::vertical([Constraint::Fill(1), Constraint::Length(below)]).areas(area);
    render_table(frame, table_area, app, t);
    if below > 2 {
        super::projection::render(frame, projection_area, app, t, false);
    } else if let Some(shown) = &app.shown {
        let lines = super::projection::summary(app, shown, t);
        let width = projection_area.width as usize;
        let lines: Vec<Line> = lines
            .into_iter()
            .take(2)
            .map(|l| super::cut_line(l, width))
            .collect();
        frame.render_widget(Paragraph::new(lines), projection_area);
    }
}

fn render_table(frame: &mut Frame, area: Rect, app: &mut App, t: &Theme) {
    let session = app.session;
    let Some(shown) = &app.shown else {
        let block = Block::bordered().title(Span::styled(" SeqPoints ", t.title()));
        frame.render_widget(Paragraph::new("computing…").block(block), area);
        return;
    };
    let seqpoints = &shown.selection.seqpoints;
    let total: u64 = seqpoints.iter().map(|s| s.weight).sum();
    let strata = seqpoints.iter().any(|s| s.stratum.is_some());
    let names = session.log.metric_names();
    let compare = session.log.configs.len() > 1;

    let plan = shown.plan.is_some();
    let mut header: Vec<String> = vec!["id".into()];
    if strata {
        header.push("stratum".into());
    }
    header.push("iteration".into());
    if plan {
        // The plan's count per SeqPoint, early enough to be seen at any width.
        header.push("samples".into());
    }
    header.extend([session.log.key_names.join(","), "bin".into()]);
    header.extend(["weight".into(), "share %".into()]);
    for n in &names {
        header.push(n.clone());
        if compare {
            header.push(format!("{n} cmp"));
        }
    }
    if plan {
        header.push("iterations to profile".into());
    }
    let order = app.row_order();
    let rows: Vec<Vec<String>> = order
        .iter()
        .map(|&i| &seqpoints[i])
        .map(|sp| {
            let mut cells = vec![sp.id.to_string()];
            if let Some(s) = sp.stratum {
                cells.push(session.strata.names[s].clone());
            }
            cells.push(sp.iteration.to_string());
            let planned = shown.planned_iterations(&session.log, sp.id);
            if let Some(planned) = &planned {
                cells.push(planned.len().to_string());
            }
            cells.extend([
                key_text(&sp.key),
                bin_text(sp),
                crate::text::numbers::count(sp.weight),
                share(100.0 * sp.weight as f64 / total.max(1) as f64, 1),
            ]);
            for m in 0..names.len() {
                for values in &sp.values {
                    cells.push(readable(values[m]));
                }
            }
            if let Some(planned) = planned {
                let listed: Vec<String> = planned.iter().map(u64::to_string).collect();
                cells.push(listed.join(" "));
            }
            cells
        })
        .collect();
    let mut widths: Vec<usize> = (0..header.len())
        .map(|c| {
            rows.iter()
                .map(|r| r[c].chars().count())
                .chain([header[c].chars().count()])
                .max()
                .unwrap_or(1)
        })
        .collect();
    // Columns that do not fit are left out whole: a cut-off number would mislead.
    let room = area.width.saturating_sub(2 + 2) as usize;
    let mut used = 0;
    let fitting = widths
        .iter()
        .take_while(|&&w| {
            used += w + SPACING as usize;
            used - SPACING as usize <= room
        })
        .count();
    let hidden = widths.len() - fitting;
    widths.truncate(fitting);
    // Numbers read best right-aligned under their headings.
    let right = |text: String, width: usize| format!("{text:>width$}");
    let width_of = |c: usize| widths[c];
    let table_rows = rows.into_iter().map(|r| {
        Row::new(
            r.into_iter()
                .take(fitting)
                .enumerate()
                .map(|(c, text)| Cell::from(right(text, width_of(c)))),
        )
    });
    let header_row = Row::new(
        header
            .iter()
            .take(fitting)
            .enumerate()
            .map(|(c, h)| Cell::from(right(h.clone(), width_of(c)))),
    )
    .style(t.strong());
    // With a plan the table says both counts: the header's "plan N iterations" is its sum.
    let counted = if plan {
        format!(
            " SeqPoints: {} · {} iterations to profile ",
            seqpoints.len(),
            shown.iterations()
        )
    } else {
        format!(" SeqPoints: {} to profile ", seqpoints.len())
    };
    let title = Line::from(vec![
        Span::styled(counted, t.title()),
        Span::styled(
            format!("(weights sum to {}) ", crate::text::numbers::count(total)),
            t.dim(),
        ),
        Span::styled(
            format!("· order {} (o) · / find ", app.sort.name()),
            t.dim(),
        ),
    ]);
    // Columns left out are named: a wider terminal or Enter (the detail) shows them.
    let more = if hidden > 0 {
        format!(
            " not shown: {} (Enter: in the detail) ·",
            header[fitting..].join(", ")
        )
    } else {
        String::new()
    };
    let bottom = super::cut_line(
        Line::styled(
            format!("{more} ↑↓ select · Enter: alternates and key groups "),
            t.dim(),
        ),
        area.width.saturating_sub(2) as usize,
    );
    let block = Block::bordered()
        .title(super::cut_line(
            title,
            area.width.saturating_sub(2) as usize,
        ))
        .title_bottom(bottom.right_aligned());
    // A page key moves by the rows on screen: the area less its borders and heading.
    app.page_rows = Some(area.height.saturating_sub(3).max(1) as usize);
    let constraints = widths.iter().map(|&w| Constraint::Length(w as u16));
    let table = Table::new(table_rows, constraints)
        .header(header_row)
        .block(block)
        .column_spacing(SPACING)
        .row_highlight_style(t.selected())
        .highlight_symbol("▶ ");
    frame.render_stateful_widget(table, area, &mut app.table);
}
