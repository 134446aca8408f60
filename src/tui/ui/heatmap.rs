//! The distribution of a two-length key (`src_len,tgt_len`): a heat map of cells shaded by
//! iterations (or a metric's total), each cluster's SeqPoint marked.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::Widget;

use super::distribution::{share, Distribution};
use super::histogram::{column_of, column_ranges};
use crate::groups::KeyGroups;
use crate::tui::app::Measure;

/// A SeqPoint's mark, on its cell of the grid.
pub const MARK: &str = "◆";

/// Shades from empty to densest: readable without colour.
pub const SHADES: [&str; 6] = [" ", "·", "░", "▒", "▓", "█"];

/// Shade level (0 = empty) of `value` against the densest cell.
pub fn shade(value: f64, max: f64, log_scale: bool) -> usize {
    let Some(share) = share(value, max, log_scale) else {
        return 0;
    };
    let top = SHADES.len() - 1;
    ((share * top as f64).ceil() as usize).clamp(1, top)
}

/// Cell totals over a `columns` x `rows` grid (row 0 at the bottom), with the group that
/// weighs most in each cell (its cluster colours the cell).
pub struct Grid {
    pub x_ranges: Vec<(u32, u32)>,
    pub y_ranges: Vec<(u32, u32)>,
    pub values: Vec<f64>,
    pub heaviest: Vec<Option<usize>>,
}

impl Grid {
    pub fn new(groups: &KeyGroups, measure: Measure, columns: usize, rows: usize) -> Self {
        let (xs, ys): (Vec<u32>, Vec<u32>) = (0..groups.len())
            .map(|g| (groups.key(g)[0], groups.key(g)[1]))
            .unzip();
        let range = |v: &[u32]| {
            (
                v.iter().copied().min().unwrap_or(0),
                v.iter().copied().max().unwrap_or(0),
            )
        };
        let ((x_lo, x_hi), (y_lo, y_hi)) = (range(&xs), range(&ys));
        let x_ranges = column_ranges(x_lo, x_hi, columns);
        let y_ranges = column_ranges(y_lo, y_hi, rows);
        let mut values = vec![0.0; columns * rows];
        let mut heaviest: Vec<Option<usize>> = vec![None; columns * rows];
        let mut heaviest_value = vec![0.0; columns * rows];
        for g in 0..groups.len() {
            let cell = column_of(&y_ranges, ys[g]) * columns + column_of(&x_ranges, xs[g]);
            let value = match measure {
                Measure::Iterations => groups.counts[g] as f64,
                Measure::Metric(m) => groups.moments[0][m][g].sum,
            };
            values[cell] += value;
            if heaviest[cell].is_none() || value > heaviest_value[cell] {
                heaviest[cell] = Some(g);
                heaviest_value[cell] = value;
            }
        }
        Grid {
            x_ranges,
            y_ranges,
            values,
            heaviest,
        }
    }

    pub fn cell_of(&self, key: &[u32]) -> (usize, usize) {
        (
            column_of(&self.x_ranges, key[0]),
            column_of(&self.y_ranges, key[1]),
        )
    }
}

pub struct HeatMap<'a> {
    pub shown: Distribution<'a>,
    pub key_names: &'a [String],
    /// Bin of each key group, when the bins are over these groups (no strata).
    pub cluster_of: Option<Vec<usize>>,
}

impl Widget for HeatMap<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        if !self.shown.fits(area) {
            return;
        }
        let t = self.shown.theme;
        let y_lo = (0..self.shown.groups.len())
            .map(|g| self.shown.groups.key(g)[1])
            .min()
            .unwrap_or(0);
        let y_hi = (0..self.shown.groups.len())
            .map(|g| self.shown.groups.key(g)[1])
            .max()
            .unwrap_or(0);
        let gutter = (y_hi.to_string().len().max(y_lo.to_string().len()) + 1) as u16;
        let columns = (area.width - gutter) as usize;
        let rows = (area.height - 2) as usize;
        let grid = Grid::new(self.shown.groups, self.shown.measure, columns, rows);
        let max = grid.values.iter().copied().fold(0.0, f64::max);
        let plot_x = area.x + gutter;
        let bottom = area.y + rows as u16 - 1;

        buf.set_string(
            area.x,
            area.y,
            format!("{y_hi:>w$}", w = (gutter - 1) as usize),
            t.dim(),
        );
        buf.set_string(
            area.x,
            bottom,
            format!("{y_lo:>w$}", w = (gutter - 1) as usize),
            t.dim(),
        );
        for y in area.y..=bottom {
            buf.set_string(plot_x - 1, y, "│", t.dim());
        }
        for row in 0..rows {
            for col in 0..columns {
                let cell = row * columns + col;
                let level = shade(grid.values[cell], max, self.shown.log_scale);
                if level == 0 {
                    continue;
                }
                let style = match (&self.cluster_of, grid.heaviest[cell]) {
                    (Some(cluster), Some(g)) => t.cluster(cluster[g]),
                    _ => t.plain(),
                };
                buf.set_string(
                    plot_x + col as u16,
                    bottom - row as u16,
                    SHADES[level],
                    style,
                );
            }
        }
        for (i, sp) in self.shown.seqpoints.iter().enumerate() {
            let (col, row) = grid.cell_of(&sp.key);
            let style = if Some(i) == self.shown.selected {
                t.seqpoint().patch(t.selected())
            } else {
                t.seqpoint()
            };
            buf.set_string(plot_x + col as u16, bottom - row as u16, MARK, style);
        }

        let labels_y = bottom + 1;
        let (x_lo, x_hi) = (grid.x_ranges[0].0, grid.x_ranges[columns - 1].1 - 1);
        let right = x_hi.to_string();
        buf.set_string(plot_x, labels_y, x_lo.to_string(), t.dim());
        buf.set_string(
            plot_x + (columns - right.len().min(columns)) as u16,
            labels_y,
            &right,
            t.dim(),
        );
        let name = format!("{} →", self.key_names[0]);
        if name.len() + right.len() + 8 < columns {
            buf.set_string(
                plot_x + ((columns - name.len()) / 2) as u16,
                labels_y,
                name,
                t.dim(),
            );
        }
        let legend = format!(
            "{} ↑  shade: {} low→high  {MARK} SeqPoint",
            self.key_names[1],
            SHADES[1..].concat()
        );
        buf.set_stringn(plot_x, labels_y + 1, legend, columns, t.dim());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runlog::{load_bytes, InputFormat, LoadOptions};

    #[test]
    fn cells_add_up_and_shades_rank() {
        let text = "src_len,tgt_len,time_ms\n1,1,1\n1,1,1\n10,10,5\n10,1,2\n";
        let options = LoadOptions {
            key: vec!["src_len".into(), "tgt_len".into()],
            ..LoadOptions::default()
        };
        let log = load_bytes("t.csv", text.as_bytes(), InputFormat::Csv, &options).unwrap();
        let groups = KeyGroups::from_log(&log);
        let grid = Grid::new(&groups, Measure::Iterations, 4, 3);
        assert_eq!(grid.values.iter().sum::<f64>(), 4.0);
        assert_eq!(grid.cell_of(&[1, 1]), (0, 0));
        assert_eq!(grid.cell_of(&[10, 10]), (3, 2));
        assert_eq!(grid.values[0], 2.0);
        assert_eq!(shade(2.0, 2.0, false), SHADES.len() - 1);
        assert_eq!(shade(0.0, 2.0, false), 0);
        assert!(shade(1.0, 2.0, false) < shade(2.0, 2.0, false));
        assert!(shade(0.01, 2.0, false) >= 1);
    }
}
