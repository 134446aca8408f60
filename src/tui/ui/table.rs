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

/// The decimals a column of values is written with: those `readable` gives its largest
/// value (1 from 100, 3 from 1, else 4), so that `33.441` and `121.7` never share a column
/// (decimals that differ row to row misalign the points and read as different precision).
/// None from a million, where `readable` scales each value to five significant digits.
pub fn column_decimals(values: impl Iterator<Item = f64>) -> Option<usize> {
    let largest = values
        .filter(|v| v.is_finite())
        .map(f64::abs)
        .fold(0.0, f64::max);
    if largest >= 1e6 {
        None
    } else if largest >= 100.0 {
        Some(1)
    } else if largest >= 1.0 {
        Some(3)
    } else {
        Some(4)
    }
}

/// `v` with `decimals` decimals, the whole part grouped by `count` (`1,081.4`); `readable`
/// without a column's decimals, or for a value that is not finite.
pub fn column_number(v: f64, decimals: Option<usize>) -> String {
    let Some(decimals) = decimals.filter(|_| v.is_finite()) else {
        return readable(v);
    };
    let text = format!("{:.decimals$}", v.abs());
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    let whole = crate::text::numbers::count(whole.parse().unwrap_or(0));
    // A value that rounds to zero keeps no minus sign.
    let sign = if v < 0.0 && text.chars().any(|c| c != '0' && c != '.') {
        "-"
    } else {
        ""
    };
    if fraction.is_empty() {
        format!("{sign}{whole}")
    } else {
        format!("{sign}{whole}.{fraction}")
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
    // One number of decimals per metric column, the one its largest value reads with.
    let decimals: Vec<Vec<Option<usize>>> = (0..names.len())
        .map(|m| {
            (0..session.log.configs.len())
                .map(|c| {
                    column_decimals(
                        seqpoints
                            .iter()
                            .filter_map(|sp| sp.values.get(c).map(|v| v[m])),
                    )
                })
                .collect()
        })
        .collect();
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
                for (c, values) in sp.values.iter().enumerate() {
                    cells.push(column_number(values[m], decimals[m][c]));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_reads_with_its_largest_values_decimals() {
        // The 1M-row generated run's time_ms column: 33.441 beside 121.7 before.
        let column = [33.441, 45.054, 121.7, 844.4];
        let d = column_decimals(column.into_iter());
        assert_eq!(d, Some(1));
        let shown: Vec<String> = column.iter().map(|&v| column_number(v, d)).collect();
        assert_eq!(shown, ["33.4", "45.1", "121.7", "844.4"]);
        assert_eq!(column_number(1081.44, Some(1)), "1,081.4");
        assert_eq!(column_number(-0.00001, Some(3)), "0.000");
        assert_eq!(column_number(-2.5, Some(3)), "-2.500");
        let small = [0.5, 0.25];
        assert_eq!(column_decimals(small.into_iter()), Some(4));
        assert_eq!(column_decimals([5.0, 0.1].into_iter()), Some(3));
        // From a million each value is scaled on its own, as everywhere else.
        let huge = column_decimals([2.5e6, 10.0].into_iter());
        assert_eq!(huge, None);
        assert_eq!(column_number(2.5e6, huge), readable(2.5e6));
        assert_eq!(column_number(f64::NAN, Some(1)), readable(f64::NAN));
        // Every value of a column has the same decimals.
        for values in [&column[..], &small[..], &[0.001, 99.9][..]] {
            let d = column_decimals(values.iter().copied());
            let after: Vec<usize> = values
                .iter()
                .map(|&v| column_number(v, d).split('.').nth(1).map_or(0, str::len))
                .collect();
            assert!(
                after.windows(2).all(|w| w[0] == w[1]),
                "{values:?}: {after:?}"
            );
        }
    }
}
