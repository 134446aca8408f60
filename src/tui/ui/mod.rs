//! Drawing: one file per panel or popup; `draw` lays them out for the terminal's size (down
//! to 60x16: compact header, the projection's numbers first, the curve from 80 columns) and
//! shows a plain message instead when the terminal is smaller.

pub mod about;
pub mod ascii;
pub mod command;
pub mod command_line;
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

// Whole numbers are grouped by the project's one number formatter.
pub use crate::text::numbers::count;
use crate::text::numbers::percent;
use crate::tui::app::{App, Measure, Overlay, View};
use curve::ErrorCurve;
use distribution::Distribution;
use heatmap::HeatMap;
use histogram::Histogram;
use theme::Theme;

pub use crate::tui::app::{MIN_HEIGHT, MIN_WIDTH};
/// From this width the error curve sits beside the projection.
pub const CURVE_FROM_WIDTH: u16 = 80;

pub fn draw(frame: &mut Frame, app: &mut App) {
    draw_panels(frame, app);
    if app.ascii {
        ascii::transliterate(frame.buffer_mut());
    }
}

fn draw_panels(frame: &mut Frame, app: &mut App) {
    let area = frame.area();
    app.size = Some((area.width, area.height));
    let t = Theme::new(app.colour).with_ascii(app.ascii);
    if app.too_small() {
        too_small(frame, area, &t);
        return;
    }
    let header_height = header::height(area.height);
    let [header_area, body, footer] = Layout::vertical([
        Constraint::Length(header_height),
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
        Overlay::Help { .. } => help::render(frame, area, app, &t),
        Overlay::Command { .. } => command::render(frame, area, app, &t),
        Overlay::Detail { .. } => detail::render(frame, area, app, &t),
        Overlay::Export(_) => export::render(frame, area, app, &t),
        Overlay::CommandLine(_) | Overlay::Search(_) => command_line::render(frame, area, app, &t),
        Overlay::About { .. } => about::render(frame, area, app, &t),
    }
}

/// A SeqPoint's mark in the distribution: `▲` under its key (one length), `◆` on the grid of
/// two. The captions and the marks list name the one drawn.
pub fn seqpoint_mark(dims: usize) -> &'static str {
    if dims == 2 {
        heatmap::MARK
    } else {
        histogram::MARK
    }
}

/// `text` in at most `width` characters, ending with `…` when cut.
pub fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut kept: String = text.chars().take(width.saturating_sub(1)).collect();
    if width > 0 {
        kept.push('…');
    }
    kept
}

/// A styled line broken into rows of at most `width` characters, at spaces where it can
/// (a word longer than a row is broken inside); continuation rows start indented by two.
pub fn wrap_line(line: &Line<'static>, width: usize) -> Vec<Line<'static>> {
    let width = width.max(4);
    let cells: Vec<(char, ratatui::style::Style)> = line
        .spans
        .iter()
        .flat_map(|s| s.content.chars().map(move |c| (c, s.style)))
        .collect();
    let mut rows = Vec::new();
    let mut start = 0;
    while start < cells.len() {
        let indent = if rows.is_empty() { 0 } else { 2 };
        let room = width - indent;
        let end = if cells.len() - start <= room {
            cells.len()
        } else {
            // The last space that fits, else a hard break.
            (start + 1..=start + room)
                .rev()
                .find(|&e| cells[e - 1].0 == ' ')
                .unwrap_or(start + room)
        };
        let mut spans = vec![Span::raw(" ".repeat(indent))];
        for &(c, style) in &cells[start..end] {
            match spans.last_mut() {
                Some(last) if last.style == style => last.content.to_mut().push(c),
                _ => spans.push(Span::styled(c.to_string(), style)),
            }
        }
        rows.push(Line::from(spans).style(line.style));
        start = end;
        // A row never starts with the space it broke at.
        while start < cells.len() && cells[start].0 == ' ' {
            start += 1;
        }
    }
    if rows.is_empty() {
        rows.push(line.clone());
    }
    rows
}

/// Lines in at most `height` rows of `width`, wrapped, each line keeping a row of its own:
/// a line with fewer rows than it needs ends its last row with `…` (a cut is always marked,
/// never silent), as does the last row when lines are left out.
pub fn fit_rows(lines: Vec<Line<'static>>, width: usize, height: usize) -> Vec<Line<'static>> {
    let n = lines.len();
    let mut out: Vec<Line<'static>> = Vec::new();
    for (i, line) in lines.into_iter().enumerate() {
        let left = height.saturating_sub(out.len());
        if left == 0 {
            if let Some(last) = out.pop() {
                out.push(marked(last, width));
            }
            break;
        }
        // One row for each line after this one, while there are rows for them.
        let room = left.saturating_sub(n - i - 1).max(1);
        let mut rows = wrap_line(&line, width);
        if rows.len() > room {
            rows.truncate(room);
            let last = rows.pop().expect("room is at least 1");
            rows.push(marked(last, width));
        }
        out.extend(rows);
    }
    out
}

/// A row ending with `…`, within `width`.
fn marked(row: Line<'static>, width: usize) -> Line<'static> {
    let style = row.style;
    let mut spans = row.spans;
    spans.push(Span::raw("…"));
    cut_line(Line::from(spans).style(style), width)
}

/// A styled line in at most `width` characters, ending with `…` when cut.
pub fn cut_line(line: Line<'static>, width: usize) -> Line<'static> {
    let total: usize = line.spans.iter().map(|s| s.content.chars().count()).sum();
    if total <= width {
        return line;
    }
    let mut left = width.saturating_sub(1);
    let mut spans = Vec::new();
    for span in line.spans {
        if left == 0 {
            break;
        }
        let n = span.content.chars().count();
        if n <= left {
            left -= n;
            spans.push(span);
        } else {
            let kept: String = span.content.chars().take(left).collect();
            spans.push(Span::styled(kept, span.style));
            left = 0;
        }
    }
    if width > 0 {
        spans.push(Span::raw("…"));
    }
    Line::from(spans).style(line.style)
}

fn too_small(frame: &mut Frame, area: Rect, t: &Theme) {
    let text = vec![
        Line::styled(
            format!("Terminal too small: {}x{}", area.width, area.height),
            t.bad(),
        ),
        Line::raw(format!("seqpoint needs at least {MIN_WIDTH}x{MIN_HEIGHT}.")),
        Line::raw("Enlarge the window, or press q to quit; other keys wait."),
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
    // The projection's numbers come first: the distribution takes what is left, and goes
    // when that is too little to draw.
    let needed = projection::needed_height(app);
    // From 19 rows (an 80x23 window less header and footer) the distribution keeps to its
    // share; below, it takes what the projection leaves.
    let top = if area.height >= 19 {
        (area.height * 45 / 100).min(area.height.saturating_sub(needed))
    } else {
        area.height.saturating_sub(needed)
    };
    let top = if top < 5 { 0 } else { top };
    let [top_area, bottom] =
        Layout::vertical([Constraint::Length(top), Constraint::Fill(1)]).areas(area);
    if top > 0 {
        distribution(frame, top_area, app, t);
    }
    if area.width >= CURVE_FROM_WIDTH {
        let projection_width = (area.width / 2).clamp(44, 64);
        let [left, right] =
            Layout::horizontal([Constraint::Length(projection_width), Constraint::Fill(1)])
                .areas(bottom);
        projection::render(frame, left, app, t, false);
        error_curve(frame, right, app, t);
    } else {
        projection::render(frame, bottom, app, t, true);
    }
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
    // What is drawn is the run less `--exclude`'s iterations: say so.
    let exclude = &session.base.exclude;
    let left_out = if exclude.is_empty() {
        String::new()
    } else {
        format!(", {} left out", exclude.texts().join(", "))
    };
    let what = if two_dims {
        format!(
            " Key distribution: {measure} per ({}){left_out} ",
            log.key_names.join(", ")
        )
    } else {
        // A packed run's key (`fit`, `tokens` …) is a cost or a count, not a sequence length.
        let kind = if crate::runlog::packed::mentions_packed(&log.key_names) {
            "Key"
        } else {
            "SL"
        };
        format!(
            " {kind} distribution: {measure} per {}{left_out} ",
            log.key_names[0]
        )
    };
    let scale = if app.log_scale { "log" } else { "linear" };
    let mut block = Block::bordered()
        .title(cut_line(
            Line::styled(what, t.title()),
            area.width.saturating_sub(16) as usize,
        ))
        .title(Line::styled(format!(" {scale} scale "), t.dim()).right_aligned());
    let width = area.width.saturating_sub(4) as usize;
    // The selection the arrow keys move, said in words beside its mark.
    let selected = app.selected_seqpoint().map(|i| &seqpoints[i]).map(|sp| {
        format!(
            " {} SeqPoint {}: iteration {}, {} {} · ↑↓ select · Enter detail ",
            seqpoint_mark(log.dims()),
            sp.id,
            sp.iteration,
            log.key_names.join(","),
            crate::groups::key_text(&sp.key)
        )
    });
    // With strata, a note on the left of the same border: the two share it, never overlap.
    let (note, selected_room) = bottom_titles(session.strata.split, selected.as_deref(), width);
    if let Some(note) = note {
        block = block.title_bottom(Line::styled(note, t.dim()));
    }
    if let Some(text) = selected {
        block = block
            .title_bottom(cut_line(Line::styled(text, t.dim()), selected_room).right_aligned());
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

/// The distribution's bottom border: the strata note (in full, else short, else none) on
/// the left and the room left for the selected SeqPoint's line on the right, which keeps at
/// least `SELECTED_LEAST` characters (or its whole length).
fn bottom_titles(
    split: bool,
    selected: Option<&str>,
    width: usize,
) -> (Option<&'static str>, usize) {
    const NOTES: [&str; 2] = [
        " each stratum has its own bins: boundaries not drawn ",
        " bins per stratum ",
    ];
    const SELECTED_LEAST: usize = 24;
    if !split {
        return (None, width);
    }
    let wanted = selected.map_or(0, |s| s.chars().count().min(SELECTED_LEAST));
    let gap = usize::from(selected.is_some());
    NOTES
        .into_iter()
        .find(|n| n.chars().count() + gap + wanted <= width)
        .map_or((None, width), |n| {
            (Some(n), width - n.chars().count() - gap)
        })
}

/// The naive baselines' errors at the current K, or at the plan's budget, in words:
/// `first-N (f) 11% · random-N (r) 17% at this budget`; `None` until they are computed. The
/// curve's border carries it (cut when narrow), the full view `i` whole.
pub fn baseline_legend(app: &App) -> Option<String> {
    let current_k = app.shown_k();
    let plan = app
        .shown
        .as_ref()
        .and_then(|s| s.plan.as_ref())
        .filter(|p| p.bins.iter().any(|b| b.samples() > 1));
    // Data, not keys (usually far above the axis, so said in words).
    let plan_errors = plan.and_then(|p| app.session.kept_baseline_errors(p.iterations() as usize));
    let mut parts = Vec::new();
    for b in &app.baselines() {
        let error = match (plan, plan_errors) {
            // `baseline_errors` gives (first-N, random-N), the series' glyphs `f` and `r`.
            (Some(_), Some((first, random))) => Some(if b.glyph == 'f' { first } else { random }),
            (Some(_), None) => None,
            (None, _) => current_k
                .and_then(|k| b.points.iter().find(|p| p.0 == k))
                .map(|p| p.1),
        };
        if let Some(e) = error {
            parts.push(format!("{} ({}) {}", b.name, b.glyph, percent(e)));
        }
    }
    if parts.is_empty() {
        return None;
    }
    let budget = match plan {
        Some(p) => format!("at {} iterations", count(p.iterations())),
        None => "at this budget".to_string(),
    };
    Some(format!("{} {budget}", parts.join(" · ")))
}

fn error_curve(frame: &mut Frame, area: Rect, app: &App, t: &Theme) {
    let current_k = app.shown_k();
    let curve = app.curve().unwrap_or(&[]);
    let mut title_right = Vec::new();
    // A plan profiling more than one iteration per SeqPoint: its figures and budget, not
    // the curve's (one per SeqPoint at each K).
    let plan = app
        .shown
        .as_ref()
        .and_then(|s| s.plan.as_ref())
        .filter(|p| p.bins.iter().any(|b| b.samples() > 1));
    if let (Some(shown), Some(k)) = (&app.shown, current_k) {
        let p = shown.projection();
        // The plan's K is on the axis (▲K=); its figures fit beside the title.
        let what = if plan.is_some() {
            "plan".to_string()
        } else {
            format!("K {k}")
        };
        title_right.push(Span::styled(
            // Two decimals, as the projection's table beside it.
            format!(
                " {what}: {:.2}% {}{:.2}% ",
                p.worst_error_pct(),
                t.pm(),
                p.worst_half_width_pct()
            ),
            t.dim(),
        ));
    }
    let baselines = app.baselines();
    let legend = baseline_legend(app)
        .map(|text| Line::styled(format!(" {text} "), t.dim()))
        .unwrap_or_default();
    let width = area.width.saturating_sub(4) as usize;
    let block = Block::bordered()
        .title(Span::styled(" Error vs K ", t.title()))
        .title(Line::from(title_right).right_aligned())
        .title_bottom(cut_line(legend, width).right_aligned());
    let inner = block.inner(area);
    frame.render_widget(block, area);
    frame.render_widget(
        ErrorCurve {
            curve,
            target: app.settings.target_pct,
            current_k,
            baselines: &baselines,
            theme: *t,
        },
        inner,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(line: &Line) -> String {
        line.spans.iter().map(|s| s.content.as_ref()).collect()
    }

    #[test]
    fn detail_rows_wrap_when_they_fit_else_each_line_is_cut_with_an_ellipsis() {
        let lines = || {
            vec![
                Line::raw("profile iteration 111 (epoch 0)"),
                Line::raw("alternates: none (no other iteration in this bin)"),
                Line::raw("the bin's key groups"),
            ]
        };
        // Wide enough: wrapped, every word kept.
        let rows = fit_rows(lines(), 40, 6);
        assert_eq!(rows.len(), 4);
        assert!(
            text(&rows[2]).ends_with("this bin)"),
            "{:?}",
            text(&rows[2])
        );
        // Too few rows to wrap: one row each, the long ones ending with `…`.
        let rows = fit_rows(lines(), 24, 3);
        let texts: Vec<String> = rows.iter().map(text).collect();
        assert_eq!(texts.len(), 3);
        assert!(texts.iter().all(|t| t.chars().count() <= 24), "{texts:?}");
        assert!(
            texts[0].ends_with('…') && texts[1].ends_with('…'),
            "{texts:?}"
        );
        assert_eq!(texts[2], "the bin's key groups");
        // Fewer rows than lines: the last row shown says more follows.
        let rows = fit_rows(lines(), 60, 2);
        assert_eq!(rows.len(), 2);
        assert!(text(&rows[1]).ends_with('…'), "{:?}", text(&rows[1]));
    }

    #[test]
    fn wrapped_rows_fit_and_keep_every_word() {
        let line = Line::from(vec![
            Span::raw("✗ target 1% not met "),
            Span::raw("up to K = 64; best K = 64: error 0.66%, ±1.07%"),
        ]);
        for width in [10, 17, 30, 200] {
            let rows = wrap_line(&line, width);
            assert!(rows.iter().all(|r| r.width() <= width), "{width}");
            let words: Vec<String> = rows
                .iter()
                .flat_map(|r| {
                    text(r)
                        .split_whitespace()
                        .map(str::to_string)
                        .collect::<Vec<_>>()
                })
                .collect();
            assert_eq!(words.join(" "), text(&line), "{width}");
        }
        assert_eq!(wrap_line(&line, 200).len(), 1);
    }

    #[test]
    fn the_strata_note_and_the_selection_share_the_border() {
        let selected = " ▲ SeqPoint 3: iteration 111, seq_len 204 · ↑↓ select · Enter detail ";
        let len = selected.chars().count();
        for width in [10, 30, 56, 76, 116, 200] {
            let (note, room) = bottom_titles(true, Some(selected), width);
            let note_len = note.map_or(0, |n| n.chars().count());
            // The two never overlap, and the selection keeps its room.
            assert!(
                note_len + usize::from(note.is_some()) + room <= width,
                "{width}"
            );
            assert!(room >= len.min(24) || note.is_none(), "{width}");
        }
        assert_eq!(
            bottom_titles(true, Some(selected), 200).0.map(str::len),
            Some(53)
        );
        assert_eq!(bottom_titles(false, Some(selected), 76), (None, 76));
        assert!(bottom_titles(true, None, 76).0.is_some());
    }

    #[test]
    fn cut_text_ends_with_an_ellipsis_and_fits() {
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("abc", 4), "abc");
        let line = cut_line(Line::from(vec![Span::raw("abc"), Span::raw("def")]), 5);
        assert_eq!(text(&line), "abcd…");
    }
}
