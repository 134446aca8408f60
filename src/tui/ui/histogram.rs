//! The SL distribution: iterations (or a metric's total) per key as columns of bars, the
//! bins' boundaries, and a mark under each SeqPoint; linear or log heights.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

use super::distribution::{share, Distribution};
use crate::groups::KeyGroups;
use crate::text::numbers::readable as num;
use crate::tui::app::Measure;

/// A SeqPoint's mark, under its key.
pub const MARK: &str = "▲";

const EIGHTHS: [&str; 8] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"];

/// The key range `[start, end)` each of `width` columns covers, for keys `lo..=hi`. With
/// fewer keys than columns a key spans several columns (wide bars, no gaps).
pub fn column_ranges(lo: u32, hi: u32, width: usize) -> Vec<(u32, u32)> {
    let span = u64::from(hi.max(lo) - lo) + 1;
    let width = width.max(1) as u64;
    (0..width)
        .map(|c| {
            let start = u64::from(lo) + c * span / width;
            let end = (u64::from(lo) + (c + 1) * span / width).max(start + 1);
            (start as u32, end as u32)
        })
        .collect()
}

/// The column showing `key`: the last column whose range starts at or before it.
pub fn column_of(ranges: &[(u32, u32)], key: u32) -> usize {
    ranges.partition_point(|r| r.0 <= key).saturating_sub(1)
}

/// Per column, the iterations (or the metric's total) of the key groups in its range.
pub fn column_values(groups: &KeyGroups, measure: Measure, ranges: &[(u32, u32)]) -> Vec<f64> {
    let value = |g: usize| match measure {
        Measure::Iterations => groups.counts[g] as f64,
        Measure::Metric(m) => groups.moments[0][m][g].sum,
    };
    // Keys are sorted: a running prefix sum answers each range in O(log U).
    let mut prefix = Vec::with_capacity(groups.len() + 1);
    prefix.push(0.0);
    for g in 0..groups.len() {
        prefix.push(prefix[g] + value(g));
    }
    let first_at = |key: u32| groups.keys.partition_point(|&k| k < key);
    ranges
        .iter()
        .map(|&(start, end)| prefix[first_at(end)] - prefix[first_at(start)])
        .collect()
}

/// Height in eighths of a cell for `value` of `max` over `rows` rows; non-zero values get
/// at least one eighth so a rare key never vanishes.
pub fn eighths(value: f64, max: f64, rows: usize, log_scale: bool) -> usize {
    let Some(share) = share(value, max, log_scale) else {
        return 0;
    };
    ((share * (rows * 8) as f64).round() as usize).clamp(1, rows * 8)
}

pub struct Histogram<'a> {
    pub shown: Distribution<'a>,
    pub key_name: &'a str,
    /// Bin boundaries are drawn only when every bin is over the same key groups (no strata).
    pub draw_bins: bool,
}

impl Widget for Histogram<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if !self.shown.fits(area) {
            return;
        }
        let t = self.shown.theme;
        let lo = self.shown.groups.keys[0];
        let hi = *self.shown.groups.keys.last().unwrap_or(&lo);
        let bar_rows = (area.height - 3) as usize;
        // Left gutter: the top value's label and the axis.
        let probe = column_values(
            self.shown.groups,
            self.shown.measure,
            &column_ranges(lo, hi, area.width as usize),
        );
        let top_label = |max: f64| match self.shown.measure {
            Measure::Iterations => crate::text::numbers::count(max as u64),
            Measure::Metric(_) => num(max),
        };
        let gutter = (top_label(probe.iter().copied().fold(0.0, f64::max)).len() + 1) as u16;
        let plot_x = area.x + gutter;
        let width = (area.width - gutter) as usize;
        let ranges = column_ranges(lo, hi, width);
        let values = column_values(self.shown.groups, self.shown.measure, &ranges);
        let max = values.iter().copied().fold(0.0, f64::max);
        let axis_y = area.y + bar_rows as u16;

        let mut boundaries: Vec<u32> = if self.draw_bins {
            self.shown
                .seqpoints
                .iter()
                .map(|sp| sp.bin_min[0])
                .collect()
        } else {
            Vec::new()
        };
        boundaries.sort_unstable();
        boundaries.dedup();
        let inner_boundaries = boundaries.get(1..).unwrap_or(&[]);
        let bin_of = |key: u32| inner_boundaries.partition_point(|&b| b <= key);
        let boundary_columns: Vec<usize> = inner_boundaries
            .iter()
            .map(|&b| column_of(&ranges, b))
            .collect();

        // Axis and labels.
        let label = top_label(max);
        buf.set_string(
            area.x,
            area.y,
            format!("{label:>w$}", w = (gutter - 1) as usize),
            t.dim(),
        );
        buf.set_string(area.x + gutter - 2, axis_y, "0", t.dim());
        for y in area.y..axis_y {
            buf.set_string(plot_x - 1, y, if y == area.y { "┤" } else { "│" }, t.dim());
        }
        buf.set_string(plot_x - 1, axis_y, "└", t.dim());
        for c in 0..width {
            buf.set_string(plot_x + c as u16, axis_y, "─", t.dim());
        }

        // Bars, and boundaries where no bar covers them.
        for (c, &value) in values.iter().enumerate() {
            let x = plot_x + c as u16;
            let height = eighths(value, max, bar_rows, self.shown.log_scale);
            let style = t.bar(bin_of(ranges[c].0));
            for row in 0..bar_rows {
                let y = axis_y - 1 - row as u16;
                let filled = height.saturating_sub(row * 8).min(8);
                if filled > 0 {
                    buf.set_string(x, y, EIGHTHS[filled - 1], style);
                } else if boundary_columns.contains(&c) {
                    buf.set_string(x, y, "┊", t.boundary());
                }
            }
            if boundary_columns.contains(&c) {
                buf.set_string(x, axis_y, "┴", t.dim());
            }
        }

        // SeqPoint marks; the selected one stands out.
        let marks_y = axis_y + 1;
        for (i, sp) in self.shown.seqpoints.iter().enumerate() {
            let x = plot_x + column_of(&ranges, sp.key[0]) as u16;
            let style = if Some(i) == self.shown.selected {
                t.seqpoint().patch(t.selected())
            } else {
                t.seqpoint()
            };
            buf.set_string(x, marks_y, MARK, style);
        }

        // Key range and name.
        let labels_y = axis_y + 2;
        let (left, right) = (lo.to_string(), hi.to_string());
        buf.set_string(plot_x, labels_y, &left, t.dim());
        let right_x = plot_x + (width - right.len().min(width)) as u16;
        buf.set_string(right_x, labels_y, &right, t.dim());
        let name = format!("{} →", self.key_name);
        if name.len() + left.len() + right.len() + 4 < width {
            let x = plot_x + ((width - name.len()) / 2) as u16;
            buf.set_string(x, labels_y, name, t.dim());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn groups(text: &str) -> KeyGroups {
        let log = crate::runlog::test_log(text);
        KeyGroups::from_log(&log)
    }

    #[test]
    fn columns_cover_every_key_once() {
        for (lo, hi, width) in [(204, 2036, 74), (10, 13, 8), (5, 5, 3), (0, 99, 100)] {
            let ranges = column_ranges(lo, hi, width);
            assert_eq!(ranges.len(), width);
            assert_eq!(ranges[0].0, lo);
            assert_eq!(ranges[width - 1].1, hi + 1);
            for key in lo..=hi {
                let c = column_of(&ranges, key);
                assert!(
                    ranges[c].0 <= key && key < ranges[c].1,
                    "{key} in {:?}",
                    ranges[c]
                );
            }
        }
    }

    #[test]
    fn values_sum_to_the_run() {
        // Keys 10 (x2, 1 ms each), 20 (x1, 4 ms), 30 (x3, 9 ms each).
        let g = groups("seq_len,time_ms\n10,1\n30,9\n20,4\n10,1\n30,9\n30,9\n");
        let ranges = column_ranges(10, 30, 5);
        let counts = column_values(&g, Measure::Iterations, &ranges);
        assert_eq!(counts.iter().sum::<f64>(), 6.0);
        assert_eq!(counts[0], 2.0);
        assert_eq!(counts[4], 3.0);
        let time = column_values(&g, Measure::Metric(0), &ranges);
        assert_eq!(time.iter().sum::<f64>(), 33.0);
        assert_eq!(time[column_of(&ranges, 20)], 4.0);
    }

    #[test]
    fn heights_scale_and_never_hide_a_key() {
        assert_eq!(eighths(10.0, 10.0, 4, false), 32);
        assert_eq!(eighths(5.0, 10.0, 4, false), 16);
        assert_eq!(eighths(0.001, 10.0, 4, false), 1);
        assert_eq!(eighths(0.0, 10.0, 4, false), 0);
        // Log scale lifts small values: 1 of 1000 gets a tenth of the height, not a thousandth.
        let log = eighths(1.0, 1000.0, 3, true);
        assert!((2..=3).contains(&log), "{log}");
    }
}
