//! Drawing: one file per panel or popup; `draw` lays them out for the terminal's size and
//! shows a plain message instead when the terminal is smaller than 80x24.

pub mod command;
pub mod curve;
pub mod detail;
pub mod distribution;
pub mod export;
pub mod header;
pub mod heatmap;
pub mod help;
pub mod histogram;
pub mod projection;
pub mod table;
pub mod theme;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph, Wrap};
use ratatui::Frame;

use crate::tui::app::{App, Measure, Overlay, View};
use curve::ErrorCurve;
use distribution::Distribution;
use heatmap::HeatMap;
use histogram::Histogram;
use theme::Theme;

pub const MIN_WIDTH: u16 = 80;
pub const MIN_HEIGHT: u16 = 24;

pub fn draw(frame: &mut Frame, app: &mut App) {
    let area = frame.area();
    let t = Theme::new(app.colour);
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        too_small(frame, area, &t);
        return;
    }
    let [header_area, body, footer] = Layout::vertical([
        Constraint::Length(3),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    header::render(frame, header_area, app, &t);
    match app.view {
        View::Overview => overview(frame, body, app, &t),
        View::SeqPoints => table::render(frame, body, app, &t),
    }
    header::render_footer(frame, footer, app, &t);
    match app.overlay {
        Overlay::None => {}
        Overlay::Help => help::render(frame, area, &t),
        Overlay::Command => command::render(frame, area, app, &t),
        Overlay::Detail { .. } => detail::render(frame, area, app, &t),
        Overlay::Export(_) => export::render(frame, area, app, &t),
    }
}

fn too_small(frame: &mut Frame, area: Rect, t: &Theme) {
    let text = vec![
        Line::styled(
            format!("Terminal too small: {}x{}", area.width, area.height),
            t.bad(),
        ),
        Line::raw(format!("seqpoint needs at least {MIN_WIDTH}x{MIN_HEIGHT}.")),
        Line::raw("Enlarge the window, or press q to quit."),
    ];
    // Room for the lines to wrap on a very narrow terminal.
    let height = 6.min(area.height);
    let rows = area.centered_vertically(Constraint::Length(height));
    frame.render_widget(
        Paragraph::new(text).wrap(Wrap { trim: true }).centered(),
        rows,
    );
}

fn overview(frame: &mut Frame, area: Rect, app: &App, t: &Theme) {
    let [top, bottom] =
        Layout::vertical([Constraint::Percentage(45), Constraint::Fill(1)]).areas(area);
    distribution(frame, top, app, t);
    let projection_width = (area.width / 2).clamp(44, 64);
    let [left, right] =
        Layout::horizontal([Constraint::Length(projection_width), Constraint::Fill(1)])
            .areas(bottom);
    projection::render(frame, left, app, t);
    error_curve(frame, right, app, t);
}

fn distribution(frame: &mut Frame, area: Rect, app: &App, t: &Theme) {
    let session = app.session;
    let log = &session.log;
    let seqpoints = app
        .shown
        .as_ref()
        .map_or(&[][..], |s| s.selection.seqpoints.as_slice());
    let measure = match app.measure {
        Measure::Iterations => "iterations".to_string(),
        Measure::Metric(m) => format!("total {}", log.metric_names()[m]),
    };
    let two_dims = log.dims() == 2;
    let what = if two_dims {
        format!(
            " Key distribution: {measure} per ({}) ",
            log.key_names.join(", ")
        )
    } else {
        format!(" SL distribution: {measure} per {} ", log.key_names[0])
    };
    let scale = if app.log_scale { "log" } else { "linear" };
    let mut block = Block::bordered()
        .title(Span::styled(what, t.title()))
        .title(Line::styled(format!(" {scale} scale "), t.dim()).right_aligned());
    if session.strata.split {
        block = block.title_bottom(
            Line::styled(
                " each stratum has its own bins: boundaries not drawn ",
                t.dim(),
            )
            .right_aligned(),
        );
    }
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let shown = Distribution {
        groups: session.groups(),
        measure: app.measure,
        log_scale: app.log_scale,
        seqpoints,
        selected: app.selected_seqpoint(),
        theme: *t,
    };
    if two_dims {
        let cluster_of = (!session.strata.split && !seqpoints.is_empty()).then(|| {
            let mut cluster = vec![0; session.groups().len()];
            for (b, sp) in seqpoints.iter().enumerate() {
                for &g in &sp.bin.groups {
                    cluster[g] = b;
                }
            }
            cluster
        });
        frame.render_widget(
            HeatMap {
                shown,
                key_names: &log.key_names,
                cluster_of,
            },
            inner,
        );
    } else {
        frame.render_widget(
            Histogram {
                shown,
                key_name: &log.key_names[0],
                draw_bins: !session.strata.split,
            },
            inner,
        );
    }
}

fn error_curve(frame: &mut Frame, area: Rect, app: &App, t: &Theme) {
    let current_k = app.shown_k();
    let curve = app.curve().unwrap_or(&[]);
    let mut title_right = Vec::new();
    if let (Some(shown), Some(k)) = (&app.shown, current_k) {
        let p = &shown.selection.projection;
        title_right.push(Span::styled(
            format!(
                " K {k}: {:.2}% ±{:.2}% ",
                p.worst_error_pct(),
                p.worst_half_width_pct()
            ),
            t.dim(),
        ));
    }
    let baselines = app.baselines();
    // The baselines' errors at the current K: usually far above the axis, so said in words.
    let mut legend: Vec<Span> = Vec::new();
    for b in baselines {
        let at_k = current_k.and_then(|k| b.points.iter().find(|p| p.0 == k));
        if let Some(&(_, e)) = at_k {
            legend.push(Span::styled(format!(" {}", b.glyph), t.strong()));
            legend.push(Span::styled(format!(" {} {e:.1}%", b.name), t.dim()));
        }
    }
    if !legend.is_empty() {
        if area.width > 50 {
            legend.push(Span::styled(" at the same budget", t.dim()));
        }
        legend.push(Span::raw(" "));
    }
    let block = Block::bordered()
        .title(Span::styled(" Error vs K ", t.title()))
        .title(Line::from(title_right).right_aligned())
        .title_bottom(Line::from(legend).right_aligned());
    let inner = block.inner(area);
    frame.render_widget(block, area);
    frame.render_widget(
        ErrorCurve {
            curve,
            target: app.settings.target_pct,
            current_k,
            baselines,
            theme: *t,
        },
        inner,
    );
}
