//! The projection panel: projected against actual per configuration and metric, error and
//! 95% interval (over the target: bold, and red with colour), speedup, profiling reduction.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Paragraph, Row, Table, Wrap};
use ratatui::Frame;

use super::theme::Theme;
use crate::groups::key_text;
use crate::output::table::{num, rule_text};
use crate::runlog::ConfigRole;
use crate::select::{Selection, TargetRule};
use crate::tui::app::App;

/// A percentage for the table, flagged with `!` when over the target.
fn pct_cell(value: Option<f64>, target: f64, t: &Theme) -> Cell<'static> {
    match value {
        None => number("-".into()),
        Some(v) if v > target => number(format!("{v:.2}!")).style(t.bad()),
        // A space where the `!` would be keeps the decimals aligned.
        Some(v) => number(format!("{v:.2} ")),
    }
}

/// Numbers right-aligned, so their digits line up.
fn number(text: String) -> Cell<'static> {
    Cell::from(Line::from(text).right_aligned())
}

pub fn render(frame: &mut Frame, area: Rect, app: &App, t: &Theme) {
    let stale = app.current().is_none();
    let title = if stale && app.shown.is_some() {
        " Projection (updating…) "
    } else {
        " Projection "
    };
    let block = Block::bordered().title(Span::styled(title, t.title()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(shown) = &app.shown else {
        frame.render_widget(Paragraph::new("computing…").style(t.dim()), inner);
        return;
    };
    let selection = &shown.selection;
    let target = app.settings.target_pct;
    let rows = table_rows(app, selection, target, t);
    let summary_lines = summary(app, selection, t);
    // Advice for an unmet target runs long: give it room to wrap.
    let summary_height = if selection.target.as_ref().is_some_and(|o| !o.met) {
        6
    } else {
        summary_lines.len() as u16 + 1
    };
    let [table_area, summary_area, list_area] = Layout::vertical([
        Constraint::Length(rows.len() as u16 + 1),
        Constraint::Length(summary_height),
        Constraint::Fill(1),
    ])
    .areas(inner);
    let names = app.session.log.metric_names();
    let first = if names.len() == 1 {
        names[0].clone()
    } else {
        String::new()
    };
    let header = Row::new([
        Cell::from(first),
        number("projected".into()),
        number("actual".into()),
        number("err %".into()),
        number("±95 %".into()),
    ])
    .style(t.dim());
    let table = Table::new(
        rows,
        [
            // Totals print in at most 8 characters (`num`), percentages in 6 with the mark.
            Constraint::Fill(1),
            Constraint::Length(9),
            Constraint::Length(9),
            Constraint::Length(6),
            Constraint::Length(6),
        ],
    )
    .header(header)
    .column_spacing(1);
    frame.render_widget(table, table_area);
    frame.render_widget(
        Paragraph::new(summary_lines).wrap(Wrap { trim: true }),
        summary_area,
    );
    if list_area.height >= 4 {
        seqpoint_list(frame, list_area, selection, t);
    }
}

/// On a tall terminal, the iterations to profile right under their projection.
fn seqpoint_list(frame: &mut Frame, area: Rect, selection: &Selection, t: &Theme) {
    let seqpoints = &selection.seqpoints;
    let total: u64 = seqpoints.iter().map(|s| s.weight).sum();
    let room = area.height as usize - 1;
    let shown = if seqpoints.len() > room {
        room - 1
    } else {
        seqpoints.len()
    };
    let rows: Vec<Row> = seqpoints
        .iter()
        .take(shown)
        .map(|sp| {
            Row::new([
                number(sp.iteration.to_string()),
                number(key_text(&sp.key)),
                number(sp.weight.to_string()),
                number(format!(
                    "{:.1}",
                    100.0 * sp.weight as f64 / total.max(1) as f64
                )),
            ])
        })
        .collect();
    let header = Row::new([
        number("iteration".into()),
        number("key".into()),
        number("weight".into()),
        number("share %".into()),
    ])
    .style(t.dim());
    let widths = [
        Constraint::Length(11),
        Constraint::Length(11),
        Constraint::Length(7),
        Constraint::Length(8),
    ];
    frame.render_widget(Table::new(rows, widths).header(header), area);
    if shown < seqpoints.len() {
        let last = Rect::new(area.x, area.bottom() - 1, area.width, 1);
        let more = format!("… {} more: Tab shows them all", seqpoints.len() - shown);
        frame.render_widget(Paragraph::new(more).style(t.dim()), last);
    }
}

fn table_rows(app: &App, selection: &Selection, target: f64, t: &Theme) -> Vec<Row<'static>> {
    let projection = &selection.projection;
    let compare = app.session.log.configs.len() > 1;
    let metrics = app.session.log.metric_names().len();
    let mut rows: Vec<Row> = projection
        .totals
        .iter()
        .map(|row| {
            // One metric: it heads the table and the rows name the configurations.
            let label = match (metrics > 1, compare, row.config) {
                (false, _, ConfigRole::Baseline) => "baseline".to_string(),
                (false, _, ConfigRole::Compare) => "compare".to_string(),
                (true, false, _) => row.metric.clone(),
                (true, true, ConfigRole::Baseline) => format!("base {}", row.metric),
                (true, true, ConfigRole::Compare) => format!("cmp {}", row.metric),
            };
            Row::new([
                Cell::from(label),
                number(num(row.projected)),
                number(row.actual.map_or("-".into(), num)),
                pct_cell(row.error_pct, target, t),
                pct_cell(Some(row.half_width_pct), target, t),
            ])
        })
        .collect();
    for s in &projection.speedups {
        let half = (s.interval[1] - s.interval[0]) / 2.0;
        let label = if metrics > 1 {
            format!("speedup {}", s.metric)
        } else {
            "speedup".to_string()
        };
        rows.push(Row::new([
            Cell::from(label),
            number(format!("{:.4}", s.projected)),
            number(s.actual.map_or("-".into(), |a| format!("{a:.4}"))),
            pct_cell(s.error_pct, target, t),
            pct_cell(Some(100.0 * half / s.projected.abs()), target, t),
        ]));
    }
    rows
}

fn summary(app: &App, selection: &Selection, t: &Theme) -> Vec<Line<'static>> {
    let projection = &selection.projection;
    let to_profile = selection.iterations_to_profile();
    let mut lines = vec![Line::from(vec![
        Span::raw("profile "),
        Span::styled(format!("{to_profile}"), t.strong()),
        Span::raw(format!(
            " of {} iterations · {}x less",
            app.session.log.len(),
            if projection.profiling_reduction.is_finite() {
                format!("{:.1}", projection.profiling_reduction)
            } else {
                "∞".into()
            }
        )),
    ])];
    let rule = rule_text(app.session.base.target_by);
    let target = app.settings.target_pct;
    let verdict = match &selection.target {
        Some(outcome) if outcome.met => Line::from(vec![
            Span::styled("✓ ", t.good()),
            Span::raw(format!("target {target}% met ({rule})")),
        ]),
        Some(outcome) => Line::from(Span::styled(
            format!(
                "✗ target {target}% not met: {}",
                outcome
                    .advice
                    .as_ref()
                    .map_or(String::new(), ToString::to_string)
            ),
            t.bad(),
        )),
        None => {
            let worst = projection
                .worst_error_pct()
                .max(match app.session.base.target_by {
                    TargetRule::Interval => projection.worst_half_width_pct(),
                    TargetRule::Measured => 0.0,
                });
            if worst <= target {
                Line::from(vec![
                    Span::styled("✓ ", t.good()),
                    Span::raw(format!("within target {target}% ({rule})")),
                ])
            } else {
                Line::from(Span::styled(
                    format!("✗ over target {target}% ({rule}): worst {worst:.2}%"),
                    t.bad(),
                ))
            }
        }
    };
    lines.push(verdict);
    if projection.proxy {
        lines.push(Line::styled(
            "no metric in the log: proxy cost, errors are proxy errors",
            t.dim(),
        ));
    }
    lines
}
