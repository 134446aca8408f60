//! Figures for papers: the sequence-length histogram with bins and SeqPoints, and the
//! error-versus-K curve with its 95% interval band, drawn as SVG without system fonts.

use std::path::Path;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::export::{write_atomically, WriteError};
use crate::groups::KeyGroups;
use crate::runlog::RunLog;
use crate::selection::{BinCount, Selection};

/// Which panels a figure holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Figure {
    /// Iterations per sequence length, with bins and SeqPoints.
    Histogram,
    /// Projection error and 95% interval against the number of bins.
    ErrorCurve,
    /// Both panels side by side.
    #[default]
    Both,
}

/// Colours: Okabe-Ito, distinguishable with the common colour-vision deficiencies and in
/// greyscale print. Tests find the figure's parts by these fills.
pub const BAR_FILL: RGBColor = RGBColor(0x9a, 0xa5, 0xb1);
pub const BAND_FILLS: [RGBColor; 2] = [RGBColor(0xdc, 0xe9, 0xf5), RGBColor(0xf1, 0xf5, 0xfa)];
pub const SEQPOINT_FILL: RGBColor = RGBColor(0xd5, 0x5e, 0x00);
pub const ERROR_LINE: RGBColor = RGBColor(0x00, 0x72, 0xb2);
pub const INTERVAL_FILL: RGBColor = RGBColor(0x56, 0xb4, 0xe9);
pub const TARGET_LINE: RGBColor = RGBColor(0xd5, 0x5e, 0x00);
const AXIS: RGBColor = RGBColor(0x33, 0x33, 0x33);
const GRID: RGBColor = RGBColor(0xe6, 0xe6, 0xe6);
const CHOSEN_LINE: RGBColor = RGBColor(0x44, 0x44, 0x44);

const PANEL_WIDTH: u32 = 640;
const HEIGHT: u32 = 440;
const FONT: &str = "sans-serif";
// plotters writes font-size = size / 1.24; these give 14 px ticks, 16 px labels and legend.
const TICK_SIZE: f64 = 17.4;
const LABEL_SIZE: f64 = 19.9;
const TITLE_SIZE: f64 = 19.9;
/// Widest key range drawn with one bar per length (bars stay over 3 px wide).
const ONE_BAR_PER_LENGTH: u32 = 160;
/// Buckets aimed at when a key's range is wider than that.
const TARGET_BUCKETS: u32 = 80;

#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error("nothing to plot: {0}")]
    Empty(String),
    #[error("drawing the figure failed: {0}")]
    Draw(String),
    #[error(transparent)]
    Write(#[from] WriteError),
}

fn draw_error<E: std::fmt::Debug>(e: E) -> PlotError {
    PlotError::Draw(format!("{e:?}"))
}

/// Iterations whose key lies in `lo..=hi`: one histogram bar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bucket {
    pub lo: u32,
    pub hi: u32,
    pub iterations: u64,
}

/// The smallest of 1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500... that is at least `x`.
fn nice_width(x: f64) -> u32 {
    let mut decade = 1u64;
    loop {
        let tenths: &[u64] = if decade >= 10 {
            &[10, 20, 25, 50]
        } else {
            &[10, 20, 50]
        };
        for &t in tenths {
            let w = decade * t / 10;
            if w as f64 >= x {
                return u32::try_from(w).unwrap_or(u32::MAX);
            }
        }
        decade *= 10;
    }
}

/// Histogram of a one-length key: one bar per length when the range is narrow, else
/// buckets of a round width (aligned to multiples of it) so bars stay visible.
/// Returns the buckets (empty ones left out) and their width.
pub fn histogram_buckets(groups: &KeyGroups) -> (Vec<Bucket>, u32) {
    if groups.is_empty() || groups.dims != 1 {
        return (Vec::new(), 1);
    }
    let lo = groups.key(0)[0];
    let hi = groups.key(groups.len() - 1)[0];
    let span = hi - lo + 1;
    let width = if span <= ONE_BAR_PER_LENGTH {
        1
    } else {
        nice_width(f64::from(span) / f64::from(TARGET_BUCKETS))
    };
    let mut buckets: Vec<Bucket> = Vec::new();
    for g in 0..groups.len() {
        let key = groups.key(g)[0];
        let start = key / width * width;
        match buckets.last_mut() {
            Some(b) if b.lo == start => b.iterations += groups.counts[g],
            _ => buckets.push(Bucket {
                lo: start,
                hi: start + (width - 1),
                iterations: groups.counts[g],
            }),
        }
    }
    (buckets, width)
}

/// The key range each bin covers on the axis, `[(from, to)]` in bin order: the gaps between
/// bins are split at their midpoint so the bands tile the axis, as the bins tile the keys.
pub fn bin_bands(selection: &Selection) -> Vec<(f64, f64)> {
    let mut ranges: Vec<(u32, u32)> = selection
        .seqpoints
        .iter()
        .filter(|sp| sp.stratum.unwrap_or(0) == 0 && sp.bin_min.len() == 1)
        .map(|sp| (sp.bin_min[0], sp.bin_max[0]))
        .collect();
    ranges.sort_unstable();
    let mut bands = Vec::with_capacity(ranges.len());
    for (i, &(min, max)) in ranges.iter().enumerate() {
        let from = match i {
            0 => f64::from(min) - 0.5,
            _ => (f64::from(ranges[i - 1].1) + f64::from(min)) / 2.0,
        };
        let to = match ranges.get(i + 1) {
            Some(&(next_min, _)) => (f64::from(max) + f64::from(next_min)) / 2.0,
            None => f64::from(max) + 0.5,
        };
        bands.push((from, to));
    }
    bands
}

/// The K each stratum settled on (usually one value).
fn chosen_ks(selection: &Selection) -> Vec<usize> {
    let mut ks: Vec<usize> = selection.strata.iter().map(|s| s.k).collect();
    ks.sort_unstable();
    ks.dedup();
    ks
}

fn text_style(size: f64) -> TextStyle<'static> {
    (FONT, size).into_font().color(&AXIS)
}

/// Format an axis number without trailing noise: 0.01, 0.1, 1, 10, 1,000.
fn axis_number(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    if v.abs() >= 1.0 {
        let rounded = v.round();
        if (v - rounded).abs() < 1e-9 {
            let digits = format!("{}", rounded.abs() as u64);
            let mut grouped = String::new();
            for (i, c) in digits.chars().enumerate() {
                if i > 0 && (digits.len() - i) % 3 == 0 {
                    grouped.push(',');
                }
                grouped.push(c);
            }
            return if v < 0.0 {
                format!("-{grouped}")
            } else {
                grouped
            };
        }
        return format!("{v:.1}");
    }
    // Two significant digits past the first: 0.25 stays 0.25, 0.1 becomes 0.1.
    let decimals = (-v.abs().log10()).ceil() as usize + 2;
    let text = format!("{v:.decimals$}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// Height of each panel's header: its title and a one-row legend above the plot, where the
/// legend covers no data.
pub const HEADER_HEIGHT: u32 = 66;

/// Draw `what` for a selection as an SVG document.
pub fn figure_svg(log: &RunLog, selection: &Selection, what: Figure) -> Result<String, PlotError> {
    if log.is_empty() {
        return Err(PlotError::Empty("the run log has no iterations".into()));
    }
    let panels = if what == Figure::Both { 2 } else { 1 };
    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (PANEL_WIDTH * panels, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let areas = root.split_evenly((1, panels as usize));
        let lettered = what == Figure::Both;
        let mut next = areas.iter();
        if what != Figure::ErrorCurve {
            let area = next.next().expect("one area per panel");
            let title = if lettered { "(a) " } else { "" };
            if log.dims() == 1 {
                draw_histogram(area, log, selection, title)?;
            } else {
                draw_key_scatter(area, log, selection, title)?;
            }
        }
        if what != Figure::Histogram {
            let area = next.next().expect("one area per panel");
            draw_error_curve(area, log, selection, if lettered { "(b) " } else { "" })?;
        }
        root.present().map_err(draw_error)?;
    }
    Ok(svg)
}

/// Draw the figure and write it atomically (never replacing `path` unless `overwrite`).
/// The CLI's `plot` and the explorer's export both call this.
pub fn write_figure(
    path: &Path,
    log: &RunLog,
    selection: &Selection,
    what: Figure,
    overwrite: bool,
) -> Result<(), PlotError> {
    let svg = figure_svg(log, selection, what)?;
    write_atomically(path, svg.as_bytes(), overwrite)?;
    Ok(())
}

/// How a legend entry is keyed.
enum Key {
    Swatch(RGBAColor),
    Line(RGBColor, u32),
    Dashed(RGBColor, u32),
    Triangle,
}

/// A rough text width for layout: DejaVu Sans / Helvetica average about 0.56 em per char.
fn text_width(text: &str, size: f64) -> i32 {
    (text.chars().count() as f64 * size / 1.24 * 0.56).ceil() as i32
}

/// The panel's header: a centred title, then the legend entries in one centred row.
/// Returns the area below the header for the chart.
fn draw_header<'a>(
    area: &Area<'a>,
    title: &str,
    entries: &[(Key, String)],
) -> Result<Area<'a>, PlotError> {
    let (head, body) = area.split_vertically(HEADER_HEIGHT);
    let width = head.dim_in_pixel().0 as i32;
    let centred = text_style(TITLE_SIZE).pos(Pos::new(HPos::Center, VPos::Top));
    head.draw(&Text::new(title.to_string(), (width / 2, 8), centred))
        .map_err(draw_error)?;
    const KEY: i32 = 18;
    const GAP: i32 = 8;
    const SPACING: i32 = 22;
    let entry_width = |label: &str| KEY + GAP + text_width(label, TICK_SIZE);
    let total: i32 = entries.iter().map(|(_, l)| entry_width(l)).sum::<i32>()
        + SPACING * (entries.len() as i32 - 1).max(0);
    let mut x = ((width - total) / 2).max(4);
    let y = 46;
    let label_style = text_style(TICK_SIZE).pos(Pos::new(HPos::Left, VPos::Center));
    for (key, label) in entries {
        match key {
            Key::Swatch(color) => head.draw(&Rectangle::new(
                [(x, y - 7), (x + KEY, y + 7)],
                color.filled(),
            )),
            Key::Line(color, w) => head.draw(&PathElement::new(
                vec![(x, y), (x + KEY, y)],
                color.stroke_width(*w),
            )),
            Key::Dashed(color, w) => head.draw(&plotters::element::DashedPathElement::new(
                vec![(x, y), (x + KEY, y)],
                5,
                3,
                color.stroke_width(*w),
            )),
            Key::Triangle => head.draw(&Polygon::new(
                vec![(x + 2, y - 6), (x + KEY - 2, y - 6), (x + KEY / 2, y + 6)],
                SEQPOINT_FILL.filled(),
            )),
        }
        .map_err(draw_error)?;
        head.draw(&Text::new(
            label.clone(),
            (x + KEY + GAP, y),
            label_style.clone(),
        ))
        .map_err(draw_error)?;
        x += entry_width(label) + SPACING;
    }
    Ok(body)
}

/// A downward triangle whose tip sits at (x, y) in data coordinates.
macro_rules! seqpoint_marker {
    ($x:expr, $y:expr) => {
        EmptyElement::at(($x, $y))
            + Polygon::new(vec![(-7, -12), (7, -12), (0, 0)], SEQPOINT_FILL.filled())
    };
}

fn chart_builder<'a, 'b>(body: &'a Area<'b>) -> ChartBuilder<'a, 'b, SVGBackend<'b>> {
    let mut builder = ChartBuilder::on(body);
    builder
        .margin_top(6)
        .margin_left(6)
        .margin_right(22)
        .margin_bottom(6)
        .x_label_area_size(56)
        .y_label_area_size(66);
    builder
}

fn draw_histogram(
    area: &Area,
    log: &RunLog,
    selection: &Selection,
    title: &str,
) -> Result<(), PlotError> {
    let groups = KeyGroups::from_log(log);
    let (buckets, width) = histogram_buckets(&groups);
    let strata = selection.strata.len();
    // Bins tile the axis only within one stratum; with several they overlap, so only the
    // SeqPoints are marked.
    let bands = if strata <= 1 {
        bin_bands(selection)
    } else {
        Vec::new()
    };
    let key = &log.key_names[0];
    let x_from = buckets.first().map_or(0.0, |b| f64::from(b.lo) - 0.5);
    let x_to = buckets.last().map_or(1.0, |b| f64::from(b.hi) + 0.5);
    let pad = (x_to - x_from) * 0.01;
    let tallest = buckets.iter().map(|b| b.iterations).max().unwrap_or(1) as f64;
    // Headroom above the tallest bar for the SeqPoint markers.
    let y_top = tallest * 1.22;
    let heading = format!(
        "{title}{} iterations, {} SeqPoints{}",
        log.len(),
        selection.bins(),
        if strata > 1 {
            format!(" in {strata} strata")
        } else {
            String::new()
        }
    );
    let bar_label = if width == 1 {
        "Iterations".to_string()
    } else {
        format!("Iterations (bar width {width})")
    };
    let mut entries = vec![(Key::Swatch(BAR_FILL.to_rgba()), bar_label)];
    if !bands.is_empty() {
        entries.push((
            Key::Swatch(BAND_FILLS[0].to_rgba()),
            format!("{} bins", bands.len()),
        ));
    }
    entries.push((Key::Triangle, "SeqPoint".to_string()));
    let body = draw_header(area, &heading, &entries)?;
    let mut chart = chart_builder(&body)
        .build_cartesian_2d(x_from - pad..x_to + pad, 0.0..y_top)
        .map_err(draw_error)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .axis_style(AXIS)
        .x_desc(format!("Padded sequence length, {key}"))
        .y_desc("Iterations")
        .label_style(text_style(TICK_SIZE))
        .axis_desc_style(text_style(LABEL_SIZE))
        .x_labels(7)
        .y_labels(6)
        .x_label_formatter(&|v| axis_number(*v))
        .y_label_formatter(&|v| axis_number(*v))
        .draw()
        .map_err(draw_error)?;
    chart
        .draw_series(bands.iter().enumerate().map(|(i, &(from, to))| {
            Rectangle::new([(from, 0.0), (to, y_top)], BAND_FILLS[i % 2].filled())
        }))
        .map_err(draw_error)?;
    chart
        .draw_series(buckets.iter().map(|b| {
            Rectangle::new(
                [
                    (f64::from(b.lo) - 0.5, 0.0),
                    (f64::from(b.hi) + 0.5, b.iterations as f64),
                ],
                BAR_FILL.filled(),
            )
        }))
        .map_err(draw_error)?;
    let marker_y = tallest * 1.17;
    chart
        .draw_series(
            selection
                .seqpoints
                .iter()
                .map(|sp| seqpoint_marker!(f64::from(sp.key[0]), marker_y)),
        )
        .map_err(draw_error)?;
    Ok(())
}

/// Two-length keys (translation): each key group as a dot sized by its iterations, SeqPoints
/// as markers. Bins from k-means are not ranges, so no bands are drawn.
fn draw_key_scatter(
    area: &Area,
    log: &RunLog,
    selection: &Selection,
    title: &str,
) -> Result<(), PlotError> {
    let groups = KeyGroups::from_log(log);
    let (mut x_max, mut y_max) = (1.0f64, 1.0f64);
    let most = groups.counts.iter().copied().max().unwrap_or(1) as f64;
    for g in 0..groups.len() {
        x_max = x_max.max(f64::from(groups.key(g)[0]));
        y_max = y_max.max(f64::from(groups.key(g)[1]));
    }
    let heading = format!(
        "{title}{} iterations, {} SeqPoints",
        log.len(),
        selection.bins()
    );
    let entries = [
        (
            Key::Swatch(BAR_FILL.to_rgba()),
            "Lengths (area ~ iterations)".to_string(),
        ),
        (Key::Triangle, "SeqPoint".to_string()),
    ];
    let body = draw_header(area, &heading, &entries)?;
    let mut chart = chart_builder(&body)
        .build_cartesian_2d(0.0..x_max * 1.05, 0.0..y_max * 1.08)
        .map_err(draw_error)?;
    chart
        .configure_mesh()
        .bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .axis_style(AXIS)
        .x_desc(format!("Padded length, {}", log.key_names[0]))
        .y_desc(format!("Padded length, {}", log.key_names[1]))
        .label_style(text_style(TICK_SIZE))
        .axis_desc_style(text_style(LABEL_SIZE))
        .x_label_formatter(&|v| axis_number(*v))
        .y_label_formatter(&|v| axis_number(*v))
        .draw()
        .map_err(draw_error)?;
    chart
        .draw_series((0..groups.len()).map(|g| {
            let radius = 2.0 + 6.0 * (groups.counts[g] as f64 / most).sqrt();
            Circle::new(
                (f64::from(groups.key(g)[0]), f64::from(groups.key(g)[1])),
                radius.round() as i32,
                BAR_FILL.mix(0.7).filled(),
            )
        }))
        .map_err(draw_error)?;
    chart
        .draw_series(
            selection
                .seqpoints
                .iter()
                .map(|sp| seqpoint_marker!(f64::from(sp.key[0]), f64::from(sp.key[1]))),
        )
        .map_err(draw_error)?;
    Ok(())
}

/// The y range of the log-scaled error axis: whole decades around every positive value,
/// at least two decades so the axis has labels at both ends, and room below the smallest.
fn decade_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for v in values.filter(|v| *v > 0.0 && v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if hi == 0.0 {
        return (0.01, 1.0);
    }
    let mut floor = 10f64.powf(lo.log10().floor());
    // A value on the bottom edge (often the target) would merge with the axis line.
    if lo < floor * 1.5 {
        floor /= 10.0;
    }
    let hi = 10f64.powf(hi.log10().ceil()).max(floor * 100.0);
    (floor, hi)
}

fn draw_error_curve(
    area: &Area,
    log: &RunLog,
    selection: &Selection,
    title: &str,
) -> Result<(), PlotError> {
    let curve = &selection.curve;
    if curve.is_empty() {
        return Err(PlotError::Empty(
            "the selection has no error-versus-K curve".into(),
        ));
    }
    let target = selection.target.as_ref().map(|t| t.target_pct);
    let (y_lo, y_hi) = decade_range(
        curve
            .iter()
            .flat_map(|p| [p.worst_error_pct, p.worst_half_width_pct])
            .chain(target),
    );
    // Zero errors (exact bins) sit on the floor of the log axis rather than vanish.
    let floor = |v: f64| v.max(y_lo);
    let k_max = curve.last().map_or(1, |p| p.k) as f64;
    let proxy = log.proxy.is_some();
    let stratified = selection.strata.len() > 1;
    let ks = chosen_ks(selection);
    let fixed = matches!(selection.options.bins, BinCount::Fixed(_));
    let heading = format!(
        "{title}{} error vs. number of bins",
        if proxy {
            "Proxy projection"
        } else {
            "Projection"
        }
    );
    let mut entries = vec![
        (
            Key::Line(ERROR_LINE, 2),
            if proxy {
                "Proxy error"
            } else {
                "Measured error"
            }
            .to_string(),
        ),
        (
            Key::Swatch(INTERVAL_FILL.mix(0.35)),
            "95% interval (±)".to_string(),
        ),
    ];
    if let Some(t) = target {
        entries.push((
            Key::Dashed(TARGET_LINE, 2),
            format!("Target {}%", axis_number(t)),
        ));
    }
    entries.push((
        Key::Dashed(CHOSEN_LINE, 1),
        match (ks.as_slice(), fixed) {
            ([k], false) => format!("Chosen K = {k}"),
            ([k], true) => format!("K = {k}"),
            _ => "Chosen K per stratum".to_string(),
        },
    ));
    let body = draw_header(area, &heading, &entries)?;
    // Slightly beyond whole decades so the end decades get their tick labels.
    let mut chart = chart_builder(&body)
        .build_cartesian_2d(0.5..k_max + 0.5, (y_lo * 0.999..y_hi * 1.001).log_scale())
        .map_err(draw_error)?;
    let x_desc = if stratified {
        "Bins per stratum, K"
    } else {
        "Bins (SeqPoints), K"
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .axis_style(AXIS)
        .x_desc(x_desc)
        .y_desc(if proxy {
            "Worst proxy error (%)"
        } else {
            "Worst projection error (%)"
        })
        .label_style(text_style(TICK_SIZE))
        .axis_desc_style(text_style(LABEL_SIZE))
        .x_labels(8)
        .y_labels(8)
        .x_label_formatter(&|v| {
            if (v - v.round()).abs() < 1e-9 {
                format!("{}", v.round() as i64)
            } else {
                String::new()
            }
        })
        .y_label_formatter(&|v| axis_number(*v))
        .draw()
        .map_err(draw_error)?;

    // The band: from the floor up to the half-width of the 95% interval.
    let mut band: Vec<(f64, f64)> = vec![(curve[0].k as f64, y_lo)];
    band.extend(
        curve
            .iter()
            .map(|p| (p.k as f64, floor(p.worst_half_width_pct))),
    );
    band.push((k_max, y_lo));
    chart
        .draw_series(std::iter::once(Polygon::new(
            band,
            INTERVAL_FILL.mix(0.35).filled(),
        )))
        .map_err(draw_error)?;
    if let Some(t) = target {
        chart
            .draw_series(DashedLineSeries::new(
                [(0.5, t), (k_max + 0.5, t)],
                8,
                5,
                TARGET_LINE.stroke_width(2),
            ))
            .map_err(draw_error)?;
    }
    chart
        .draw_series(ks.iter().map(|&k| {
            plotters::element::DashedPathElement::new(
                vec![(k as f64, y_lo), (k as f64, y_hi)],
                5,
                3,
                CHOSEN_LINE.stroke_width(1),
            )
        }))
        .map_err(draw_error)?;
    chart
        .draw_series(
            LineSeries::new(
                curve.iter().map(|p| (p.k as f64, floor(p.worst_error_pct))),
                ERROR_LINE.filled().stroke_width(2),
            )
            .point_size(if curve.len() <= 40 { 3 } else { 2 }),
        )
        .map_err(draw_error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runlog::{load_bytes, load_run, InputFormat, LoadOptions};
    use crate::sample::SAMPLE_NAME;
    use crate::selection::{run_selection, SelectOptions, Strata};
    use proptest::prelude::*;

    fn csv(text: &str) -> RunLog {
        load_bytes(
            "t.csv",
            text.as_bytes(),
            InputFormat::Csv,
            &LoadOptions::default(),
        )
        .unwrap()
    }

    fn keys_log(keys: &[u32]) -> RunLog {
        let mut text = String::from("seq_len,time_ms\n");
        for &k in keys {
            text.push_str(&format!("{k},{}\n", f64::from(k) * 1.5 + 1.0));
        }
        csv(&text)
    }

    fn fixed(k: usize) -> SelectOptions {
        SelectOptions {
            bins: BinCount::Fixed(k),
            ..SelectOptions::default()
        }
    }

    fn hex(c: RGBColor) -> String {
        format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
    }

    /// Elements of the SVG drawn inside the plots (below the headers) with this fill.
    fn plotted<'a>(
        doc: &'a roxmltree::Document,
        tag: &str,
        fill: RGBColor,
    ) -> Vec<roxmltree::Node<'a, 'a>> {
        let fill = hex(fill);
        let header = HEADER_HEIGHT as f64;
        doc.descendants()
            .filter(|n| n.has_tag_name(tag) && n.attribute("fill") == Some(fill.as_str()))
            .filter(|n| match tag {
                "polygon" => n
                    .attribute("points")
                    .unwrap()
                    .split_whitespace()
                    .all(|p| p.split(',').nth(1).unwrap().parse::<f64>().unwrap() >= header),
                _ => n.attribute("y").unwrap().parse::<f64>().unwrap() >= header,
            })
            .collect()
    }

    fn texts(doc: &roxmltree::Document) -> Vec<String> {
        doc.descendants()
            .filter(|n| n.has_tag_name("text"))
            .map(|n| n.text().unwrap_or("").trim().to_string())
            .collect()
    }

    #[test]
    fn nice_widths_are_round_and_large_enough() {
        let cases = [
            (0.3, 1),
            (1.0, 1),
            (1.5, 2),
            (3.0, 5),
            (6.0, 10),
            (21.0, 25),
            (26.0, 50),
        ];
        for (x, w) in cases {
            assert_eq!(nice_width(x), w, "width for {x}");
        }
        assert_eq!(nice_width(201.0), 250);
        assert_eq!(nice_width(2.6e9), u32::MAX);
    }

    #[test]
    fn narrow_ranges_get_one_bar_per_length() {
        let log = keys_log(&[3, 3, 5, 7, 3]);
        let (buckets, width) = histogram_buckets(&KeyGroups::from_log(&log));
        assert_eq!(width, 1);
        let bars: Vec<(u32, u32, u64)> =
            buckets.iter().map(|b| (b.lo, b.hi, b.iterations)).collect();
        assert_eq!(bars, vec![(3, 3, 3), (5, 5, 1), (7, 7, 1)]);
    }

    #[test]
    fn wide_ranges_are_bucketed_on_round_boundaries() {
        // Span 400 / 80 buckets = 5 per bucket.
        let log = keys_log(&[0, 150, 151, 154, 155, 399]);
        let (buckets, width) = histogram_buckets(&KeyGroups::from_log(&log));
        assert_eq!(width, 5);
        let bars: Vec<(u32, u32, u64)> =
            buckets.iter().map(|b| (b.lo, b.hi, b.iterations)).collect();
        assert_eq!(
            bars,
            vec![(0, 4, 1), (150, 154, 3), (155, 159, 1), (395, 399, 1)]
        );
    }

    proptest! {
        #[test]
        fn buckets_hold_every_iteration_once(
            base in 0u32..3000,
            // Narrow runs (one bar per length) and wide ones (bucketed).
            offsets in prop_oneof![Just(150u32), Just(5000u32)]
                .prop_flat_map(|spread| prop::collection::vec(0..spread, 1..200)),
        ) {
            let keys: Vec<u32> = offsets.iter().map(|o| base + o).collect();
            let log = keys_log(&keys);
            let (buckets, width) = histogram_buckets(&KeyGroups::from_log(&log));
            prop_assert_eq!(buckets.iter().map(|b| b.iterations).sum::<u64>(), keys.len() as u64);
            let span = keys.iter().max().unwrap() - keys.iter().min().unwrap() + 1;
            if span <= ONE_BAR_PER_LENGTH {
                prop_assert_eq!(width, 1);
            } else {
                prop_assert!(buckets.len() as u32 <= TARGET_BUCKETS + 2);
            }
            for pair in buckets.windows(2) {
                prop_assert!(pair[0].hi < pair[1].lo);
            }
            for b in &buckets {
                prop_assert_eq!(b.lo % width, 0);
                prop_assert_eq!(b.hi - b.lo + 1, width);
                let inside = keys.iter().filter(|&&k| k >= b.lo && k <= b.hi).count() as u64;
                prop_assert_eq!(inside, b.iterations);
            }
        }
    }

    #[test]
    fn bands_tile_the_axis_and_hold_their_seqpoints() {
        let log = keys_log(&[10, 11, 12, 20, 21, 40, 41, 42, 43, 60, 10, 42]);
        let selection = run_selection(&log, &fixed(3)).unwrap();
        let bands = bin_bands(&selection);
        assert_eq!(bands.len(), 3);
        assert_eq!(bands[0].0, 9.5);
        assert_eq!(bands[2].1, 60.5);
        for pair in bands.windows(2) {
            assert_eq!(pair[0].1, pair[1].0, "no gap or overlap between bins");
        }
        for sp in &selection.seqpoints {
            let key = f64::from(sp.key[0]);
            assert!(bands.iter().any(|&(from, to)| from < key && key < to));
            // Each band covers its whole bin.
            let band = bands
                .iter()
                .find(|&&(from, to)| from < key && key < to)
                .unwrap();
            assert!(band.0 < f64::from(sp.bin_min[0]) && f64::from(sp.bin_max[0]) < band.1);
        }
    }

    #[test]
    fn error_axis_spans_whole_decades_with_room_below() {
        assert_eq!(decade_range([0.44, 95.0].into_iter()), (0.1, 100.0));
        // 1.0 would sit on the axis line: one more decade below.
        assert_eq!(decade_range([1.0, 30.0].into_iter()), (0.1, 100.0));
        // At least two decades.
        assert_eq!(decade_range([2.0, 3.0].into_iter()), (1.0, 100.0));
        assert_eq!(decade_range([0.0, 0.0].into_iter()), (0.01, 1.0));
    }

    #[test]
    fn axis_numbers_read_cleanly() {
        assert_eq!(axis_number(0.1), "0.1");
        assert_eq!(axis_number(0.01), "0.01");
        assert_eq!(axis_number(0.25), "0.25");
        assert_eq!(axis_number(2.5), "2.5");
        assert_eq!(axis_number(1000.0), "1,000");
        assert_eq!(axis_number(1234567.0), "1,234,567");
        assert_eq!(axis_number(0.0), "0");
    }

    #[test]
    fn both_panels_have_bins_seqpoints_curve_and_labels() {
        let log = load_run(
            SAMPLE_NAME,
            &LoadOptions {
                compare: Some(crate::sample::SAMPLE_COMPARE_NAME.into()),
                ..LoadOptions::default()
            },
        )
        .unwrap();
        let selection = run_selection(
            &log,
            &SelectOptions {
                bins: BinCount::Target(2.0),
                max_bins: 24,
                ..SelectOptions::default()
            },
        )
        .unwrap();
        let k = selection.bins();
        let svg = figure_svg(&log, &selection, Figure::Both).unwrap();
        let doc = roxmltree::Document::parse(&svg).expect("well-formed XML");
        let root = doc.root_element();
        assert_eq!(root.tag_name().name(), "svg");
        assert_eq!(root.attribute("width"), Some("1280"));

        let bands =
            plotted(&doc, "rect", BAND_FILLS[0]).len() + plotted(&doc, "rect", BAND_FILLS[1]).len();
        assert_eq!(bands, k, "one band per bin");
        let groups = KeyGroups::from_log(&log);
        assert_eq!(
            plotted(&doc, "rect", BAR_FILL).len(),
            histogram_buckets(&groups).0.len()
        );
        assert_eq!(
            plotted(&doc, "polygon", SEQPOINT_FILL).len(),
            k,
            "one marker per SeqPoint"
        );
        // The curve: one point per K tried.
        let points = doc
            .descendants()
            .filter(|n| {
                n.has_tag_name("circle") && n.attribute("fill") == Some(hex(ERROR_LINE).as_str())
            })
            .count();
        assert_eq!(points, selection.curve.len());

        let texts = texts(&doc);
        for wanted in [
            "Padded sequence length, seq_len",
            "Iterations",
            "Bins (SeqPoints), K",
            "Worst projection error (%)",
            "Measured error",
            "95% interval (±)",
            "Target 2%",
            "SeqPoint",
        ] {
            assert!(
                texts.iter().any(|t| t == wanted),
                "missing text {wanted:?} in {texts:?}"
            );
        }
        assert!(
            texts.iter().any(|t| t == &format!("Chosen K = {k}")),
            "{texts:?}"
        );
        assert!(texts.iter().any(|t| t == &format!("{k} bins")), "{texts:?}");
    }

    #[test]
    fn single_panels_hold_only_their_parts() {
        let log = keys_log(&[10, 11, 12, 20, 21, 40, 41, 42, 43, 60]);
        let selection = run_selection(&log, &fixed(4)).unwrap();
        let svg = figure_svg(&log, &selection, Figure::Histogram).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        assert_eq!(doc.root_element().attribute("width"), Some("640"));
        assert_eq!(plotted(&doc, "polygon", SEQPOINT_FILL).len(), 4);
        assert!(!texts(&doc).iter().any(|t| t.contains("error")));

        let svg = figure_svg(&log, &selection, Figure::ErrorCurve).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        assert_eq!(plotted(&doc, "polygon", SEQPOINT_FILL).len(), 0);
        let texts = texts(&doc);
        assert!(texts.iter().any(|t| t == "K = 4"), "{texts:?}");
        assert!(
            !texts.iter().any(|t| t.starts_with("Target")),
            "no target with --bins"
        );
    }

    #[test]
    fn strata_mark_seqpoints_without_overlapping_bands() {
        let log = keys_log(&[10, 20, 30, 40, 10, 20, 30, 40, 15, 35]);
        let options = SelectOptions {
            strata: Strata::Phases(2),
            ..fixed(2)
        };
        let selection = run_selection(&log, &options).unwrap();
        let svg = figure_svg(&log, &selection, Figure::Both).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        assert_eq!(plotted(&doc, "polygon", SEQPOINT_FILL).len(), 4);
        assert_eq!(plotted(&doc, "rect", BAND_FILLS[0]).len(), 0);
        assert!(texts(&doc).iter().any(|t| t == "Bins per stratum, K"));
    }

    #[test]
    fn two_length_keys_draw_a_scatter() {
        let log = load_bytes(
            "mt.csv",
            b"src_len,tgt_len,time_ms\n10,12,5\n10,12,5\n20,25,9\n40,38,20\n41,40,21\n",
            InputFormat::Csv,
            &LoadOptions {
                key: vec!["src_len".into(), "tgt_len".into()],
                ..LoadOptions::default()
            },
        )
        .unwrap();
        let selection = run_selection(&log, &fixed(2)).unwrap();
        let svg = figure_svg(&log, &selection, Figure::Histogram).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        assert_eq!(plotted(&doc, "polygon", SEQPOINT_FILL).len(), 2);
        let dots = doc
            .descendants()
            .filter(|n| n.has_tag_name("circle"))
            .count();
        assert_eq!(dots, 4, "one dot per distinct (src_len, tgt_len)");
        let texts = texts(&doc);
        assert!(
            texts.iter().any(|t| t == "Padded length, tgt_len"),
            "{texts:?}"
        );
    }

    #[test]
    fn proxy_runs_say_the_error_is_a_proxy() {
        let log = load_run_bytes("seq_len\n5\n9\n9\n14\n20\n");
        let selection = run_selection(&log, &fixed(2)).unwrap();
        let svg = figure_svg(&log, &selection, Figure::ErrorCurve).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let texts = texts(&doc);
        assert!(
            texts.iter().any(|t| t == "Worst proxy error (%)"),
            "{texts:?}"
        );
    }

    fn load_run_bytes(text: &str) -> RunLog {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("proxy.csv");
        std::fs::write(&path, text).unwrap();
        load_run(path.to_str().unwrap(), &LoadOptions::default()).unwrap()
    }

    #[test]
    fn write_figure_never_overwrites_unless_asked() {
        let log = keys_log(&[10, 20, 30]);
        let selection = run_selection(&log, &fixed(2)).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fig.svg");
        std::fs::write(&path, "keep").unwrap();
        let err = write_figure(&path, &log, &selection, Figure::Both, false).unwrap_err();
        assert!(err.to_string().contains("--force"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "keep");
        write_figure(&path, &log, &selection, Figure::Both, true).unwrap();
        assert!(std::fs::read_to_string(&path).unwrap().starts_with("<svg"));
    }
}
