//! The error-versus-K curve: worst error per K as dots, the 95% interval half-width as a
//! shaded band, the target as a line, the current K marked, naive baselines when given.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::theme::Theme;
use crate::select::CurvePoint;
use crate::text::numbers::percent;
use crate::tui::app::BaselineSeries;

/// The y axis spans 0 to this many targets: the target sits a third of the way up, and
/// what matters (below or above it) is readable; larger values are clipped with `↑`.
const TARGETS_SHOWN: f64 = 3.0;

/// Column of `k` (1-based) when `n` K share `width` columns.
pub fn column_of_k(k: usize, n: usize, width: usize) -> usize {
    ((k.max(1) - 1) * width / n.max(1)).min(width.saturating_sub(1))
}

/// The K a column shows: the first K that falls in it.
pub fn k_of_column(column: usize, n: usize, width: usize) -> usize {
    (column * n / width.max(1) + 1).min(n.max(1))
}

/// Row (0 = bottom) of a percentage on a `rows`-high axis up to `top`; `None` above it.
pub fn row_of(value: f64, top: f64, rows: usize) -> Option<usize> {
    let r = (value / top * rows as f64).floor();
    (r < rows as f64).then_some(r.max(0.0) as usize)
}

/// The y axis: linear from 0 to three targets, or logarithmic when most errors are far
/// above the target (a 0.1% target with errors of a few percent), so the curve stays drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Axis {
    Linear { top: f64 },
    Log { low: f64, high: f64 },
}

impl Axis {
    /// Log when more than half the K's errors would be off the linear axis.
    pub fn for_curve(curve: &[CurvePoint], target: f64) -> Axis {
        let top = target * TARGETS_SHOWN;
        let above = curve.iter().filter(|p| p.worst_error_pct >= top).count();
        if curve.is_empty() || above * 2 <= curve.len() {
            return Axis::Linear { top };
        }
        let positive = curve
            .iter()
            .map(|p| p.worst_error_pct)
            .filter(|&e| e > 0.0 && e.is_finite());
        let smallest = positive.clone().fold(f64::INFINITY, f64::min);
        let largest = positive.fold(0.0, f64::max);
        Axis::Log {
            low: smallest.min(target) / 2.0,
            high: largest.max(target) * 1.5,
        }
    }

    /// Row (0 = bottom) of a percentage on a `rows`-high axis; `None` above the top.
    pub fn row(&self, value: f64, rows: usize) -> Option<usize> {
        match *self {
            Axis::Linear { top } => row_of(value, top, rows),
            Axis::Log { low, high } => {
                if value <= low {
                    return Some(0);
                }
                let share = (value / low).ln() / (high / low).ln();
                let r = (share * rows as f64).floor();
                (r < rows as f64).then_some(r.max(0.0) as usize)
            }
        }
    }

    fn top(&self) -> f64 {
        match *self {
            Axis::Linear { top } => top,
            Axis::Log { high, .. } => high,
        }
    }

    fn bottom(&self) -> f64 {
        match *self {
            Axis::Linear { .. } => 0.0,
            Axis::Log { low, .. } => low,
        }
    }
}

pub struct ErrorCurve<'a> {
    pub curve: &'a [CurvePoint],
    pub target: f64,
    pub current_k: Option<usize>,
    pub baselines: &'a [BaselineSeries],
    pub theme: Theme,
}

impl Widget for ErrorCurve<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let t = self.theme;
        if area.height < 5 || area.width < 16 {
            return;
        }
        let axis = Axis::for_curve(self.curve, self.target);
        // Every mark the panel draws, told in its first row (cut with `…` when narrow; `i`
        // lists them all).
        let mut legend = vec![
            Span::styled("•", t.error_line()),
            Span::styled(" error  ", t.dim()),
            Span::styled("░", t.band()),
            Span::styled(format!(" {}95%  ", t.pm()), t.dim()),
            Span::styled("─", t.target()),
            Span::styled(format!(" target {}%  ", self.target), t.dim()),
            Span::styled("┆", t.key()),
            Span::styled(" K  ", t.dim()),
            Span::styled("↑", t.error_line()),
            Span::styled(" off scale", t.dim()),
        ];
        // The scale before the rest: a log axis reads very differently. The baselines' `f`
        // and `r` are told on the panel's bottom border, with their values.
        if let Axis::Log { .. } = axis {
            legend.insert(0, Span::styled("log y  ", t.key()));
        }
        buf.set_line(
            area.x,
            area.y,
            &super::cut_line(Line::from(legend), area.width as usize),
            area.width,
        );
        if self.curve.is_empty() {
            buf.set_string(area.x, area.y + 2, "computing the curve…", t.dim());
            return;
        }

        let rows = (area.height - 2) as usize;
        // Labels keep their `%` (`percent` writes at most 6 characters).
        let gutter = 7u16;
        let plot_x = area.x + gutter;
        let width = (area.width - gutter) as usize;
        let bottom = area.y + rows as u16;
        let n = self.curve.len();
        let y_of = |row: usize| bottom - row as u16;

        for value in [axis.top(), self.target] {
            let row = axis.row(value, rows).unwrap_or(rows - 1);
            buf.set_stringn(
                area.x,
                y_of(row),
                format!("{:>6}", percent(value)),
                6,
                t.dim(),
            );
        }
        buf.set_string(
            area.x,
            bottom,
            format!("{:>6}", percent(axis.bottom())),
            t.dim(),
        );
        for row in 0..rows {
            buf.set_string(plot_x - 1, y_of(row), "│", t.dim());
        }

        let target_row = axis.row(self.target, rows);
        let current_column = self.current_k.map(|k| column_of_k(k, n, width));
        for column in 0..width {
            let x = plot_x + column as u16;
            let k = k_of_column(column, n, width);
            let point = &self.curve[k - 1];
            let band = axis
                .row(point.worst_half_width_pct, rows)
                .map_or(rows, |r| r + 1);
            let current = Some(column) == current_column;
            for row in 0..rows {
                let y = y_of(row);
                if Some(row) == target_row {
                    buf.set_string(x, y, "─", t.target());
                } else if row < band {
                    buf.set_string(x, y, "░", t.band());
                } else if current {
                    buf.set_string(x, y, "┆", t.key());
                }
            }
            // Baselines off the axis are left out here; the border gives their value.
            for series in self.baselines {
                if let Some(row) = series
                    .points
                    .iter()
                    .find(|p| p.0 == k)
                    .and_then(|&(_, e)| axis.row(e, rows))
                {
                    buf.set_string(x, y_of(row), series.glyph.to_string(), t.strong());
                }
            }
            match axis.row(point.worst_error_pct, rows) {
                Some(row) => buf.set_string(x, y_of(row), "•", t.error_line()),
                None => buf.set_string(x, y_of(rows - 1), "↑", t.error_line()),
            };
            // The current K's column stands out even where the band covers it.
            if current {
                buf.set_style(Rect::new(x, area.y + 1, 1, rows as u16), t.selected());
            }
        }

        // K axis: 1, the current K, the last K.
        let labels_y = bottom + 1;
        buf.set_string(area.x, labels_y, "K", t.dim());
        let mark = self.current_k.zip(current_column);
        let labels = k_axis_labels(width, n, mark);
        for (offset, text, is_mark) in labels {
            let style = if is_mark { t.key() } else { t.dim() };
            let x = (plot_x + offset as u16).min(area.right().saturating_sub(1));
            buf.set_string(x, labels_y, text, style);
        }
    }
}

/// The K axis's labels on a `width`-cell row: `1` at the start, the last K (`n`) at the end,
/// and the current K's mark (`▲K=k`, or `K=k→` past the curve) at its column, as
/// `(offset, text, is the mark)`. A label the mark would run into is left out (one cell
/// apart at least), so that `▲K=51` never reads as `▲K=514` beside the axis end 64.
pub fn k_axis_labels(
    width: usize,
    n: usize,
    current: Option<(usize, usize)>,
) -> Vec<(usize, String, bool)> {
    let last = n.to_string();
    let last_at = width.saturating_sub(last.len());
    let mut labels = vec![(0, "1".to_string(), false), (last_at, last, false)];
    if let Some((k, column)) = current {
        let mark = if k > n {
            format!("K={k}→")
        } else {
            format!("▲K={k}")
        };
        let len = mark.chars().count();
        let at = column.min(width.saturating_sub(len));
        let end = at + len;
        // A label stays when a blank cell separates it from the mark.
        labels.retain(|(offset, text, _)| {
            let label_end = offset + text.chars().count();
            label_end < at || *offset > end
        });
        labels.push((at, mark, true));
    }
    labels
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The row as drawn: each label written at its offset.
    fn axis_row(width: usize, n: usize, current: Option<(usize, usize)>) -> String {
        let mut row = vec![' '; width];
        for (at, text, _) in k_axis_labels(width, n, current) {
            for (i, c) in text.chars().enumerate() {
                row[(at + i).min(width - 1)] = c;
            }
        }
        row.into_iter().collect()
    }

    #[test]
    fn the_current_k_never_runs_into_the_axis_end() {
        // The cases the issue saw: K = 51 and 49 of 64 near the end of a 40-cell axis.
        for (k, column) in [(51, 36), (49, 35), (58, 37), (64, 39)] {
            let row = axis_row(40, 64, Some((k, column)));
            let mark = format!("▲K={k}");
            assert!(row.contains(&mark), "{row:?}");
            // What follows the mark is blank to the end: no digit of 64 glued on.
            let after = row.split(&mark).nth(1).unwrap();
            assert!(after.trim().is_empty(), "{row:?}");
        }
        // Far from the end both ends stay, and the mark is where its column is.
        let row = axis_row(40, 64, Some((20, 12)));
        assert!(row.starts_with('1') && row.ends_with("64"), "{row:?}");
        assert_eq!(row.chars().position(|c| c == '▲'), Some(12));
        // At K = 1 the mark replaces the `1` label.
        let row = axis_row(40, 64, Some((1, 0)));
        assert!(row.starts_with("▲K=1 ") && row.ends_with("64"), "{row:?}");
    }

    #[test]
    fn k_and_columns_round_trip() {
        // Fewer K than columns: each K owns a run of columns starting at its column.
        for k in 1..=10 {
            assert_eq!(k_of_column(column_of_k(k, 10, 30), 10, 30), k);
        }
        // More K than columns: every column shows a K, in order, from 1.
        let shown: Vec<usize> = (0..20).map(|c| k_of_column(c, 64, 20)).collect();
        assert_eq!(shown[0], 1);
        assert!(shown.windows(2).all(|w| w[0] < w[1]));
        assert!(*shown.last().unwrap() <= 64);
    }

    fn point(k: usize, error: f64) -> CurvePoint {
        CurvePoint {
            k,
            bins: k,
            worst_error_pct: error,
            worst_half_width_pct: error,
        }
    }

    #[test]
    fn a_target_far_below_the_errors_gets_a_log_axis_that_draws_every_k() {
        let curve: Vec<CurvePoint> = (1..=20).map(|k| point(k, 8.0 / k as f64)).collect();
        assert!(matches!(Axis::for_curve(&curve, 1.0), Axis::Linear { .. }));
        let axis = Axis::for_curve(&curve, 0.1);
        assert!(matches!(axis, Axis::Log { .. }), "{axis:?}");
        // Every error is on the axis, in order, and the target too.
        let rows: Vec<usize> = curve
            .iter()
            .map(|p| axis.row(p.worst_error_pct, 10).expect("on the axis"))
            .collect();
        assert!(rows.windows(2).all(|w| w[0] >= w[1]), "{rows:?}");
        assert!(rows[0] > rows[19], "{rows:?}");
        assert!(axis.row(0.1, 10).is_some());
    }

    #[test]
    fn rows_scale_to_the_axis_and_clip_above() {
        assert_eq!(row_of(0.0, 3.0, 6), Some(0));
        assert_eq!(row_of(1.0, 3.0, 6), Some(2));
        assert_eq!(row_of(2.99, 3.0, 6), Some(5));
        assert_eq!(row_of(3.0, 3.0, 6), None);
    }
}
