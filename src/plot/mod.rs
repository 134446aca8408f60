//! Figures for papers: the sequence-length histogram with bins and SeqPoints, and the
//! error-versus-K curve with its 95% interval band, drawn as SVG without system fonts.

use std::path::Path;

use plotters::chart::MeshStyle;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

mod curve;
mod histogram;

pub use histogram::{bin_bands, histogram_buckets, Bucket};

use crate::groups::KeyGroups;
use crate::output::atomic::{write_replacing, Replace, WriteError};
use crate::runlog::RunLog;
use crate::select::Selection;

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

/// Colours: the accents (SeqPoints, error, interval, target) are Okabe-Ito, told apart with
/// the common colour-vision deficiencies; bars and bands are greys and pale blues that stay
/// distinct in greyscale print. Tests find the figure's parts by these fills.
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
// plotters writes font-size = size / 1.24; these give 14 px ticks and legend, 16 px axis
// labels and titles.
const TICK_SIZE: f64 = 17.4;
const LABEL_SIZE: f64 = 19.9;
const TITLE_SIZE: f64 = 19.9;
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error("nothing to plot: {0}")]
    Empty(String),
    #[error("drawing the figure failed: {0}")]
    Draw(String),
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error("{0}")]
    NotSvg(String),
}

fn draw_error<E: std::fmt::Debug>(e: E) -> PlotError {
    PlotError::Draw(format!("{e:?}"))
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
            let groups = KeyGroups::from_log(log);
            if log.dims() == 1 {
                histogram::draw_histogram(area, &groups, log, selection, title)?;
            } else {
                histogram::draw_key_scatter(area, &groups, log, selection, title)?;
            }
        }
        if what != Figure::Histogram {
            let area = next.next().expect("one area per panel");
            curve::draw_error_curve(area, log, selection, if lettered { "(b) " } else { "" })?;
        }
        root.present().map_err(draw_error)?;
    }
    Ok(svg)
}

/// Draw the figure and write it atomically, replacing an existing `path` only as `replace`
/// allows (`true`: a writable regular file). A name that does not end in `.svg` is refused
/// first: the figure is SVG, and a `.png` full of SVG opens nowhere.
pub fn write_figure(
    path: &Path,
    log: &RunLog,
    selection: &Selection,
    what: Figure,
    replace: impl Into<Replace>,
) -> Result<(), PlotError> {
    check_svg_name(path)?;
    let svg = figure_svg(log, selection, what)?;
    write_replacing(path, svg.as_bytes(), replace.into())?;
    Ok(())
}

/// Figures are written as SVG only: any other extension is refused, with the commands that give
/// the format asked for where rsvg-convert can make it.
pub fn check_svg_name(path: &Path) -> Result<(), PlotError> {
    let extension = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    if extension.as_deref() == Some("svg") {
        return Ok(());
    }
    use crate::select::command::shell_word;
    use crate::text::shown::{shell_path, shown_path};
    // The name as errors show it; in a command, as a shell reads it back.
    let name = shell_word(&shown_path(path));
    let shown = shell_path(path);
    // `f.svg.gz` is the SVG name with one more extension: the SVG is `f.svg`, not `f.svg.svg`.
    let stem = path.with_extension("");
    let stem_is_svg = stem
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("svg"));
    let svg_path = if stem_is_svg {
        stem
    } else {
        path.with_extension("svg")
    };
    let svg = shell_path(&svg_path);
    let message = match extension.as_deref() {
        Some("gz") if stem_is_svg => format!(
            "{name}: seqpoint writes figures uncompressed; write {svg}, then compress it: \
             gzip -k {svg} (or -o - | gzip > {shown})"
        ),
        None => format!("{name}: a figure is SVG; name it {svg} (or -o - for standard output)"),
        Some(ext) => {
            let said = format!("{name}: seqpoint draws SVG only; write {svg}");
            // rsvg-convert (librsvg) writes these; for anything else the SVG is the answer.
            match ext {
                "png" => format!("{said}, then convert it: rsvg-convert {svg} -o {shown}"),
                "pdf" | "ps" | "eps" => {
                    format!("{said}, then convert it: rsvg-convert -f {ext} {svg} -o {shown}")
                }
                _ => format!("{said} (a .{} file is not made here)", shown_path(ext)),
            }
        }
    };
    Err(PlotError::NotSvg(message))
}

/// How a legend entry is keyed.
enum Key {
    Swatch(RGBAColor),
    Dot(RGBAColor),
    Line(RGBColor, u32),
    Dashed(RGBColor, u32),
    Triangle,
}

/// A rough text width for layout: DejaVu Sans / Helvetica average about 0.55-0.6 em per char; err wide.
fn text_width(text: &str, size: f64) -> i32 {
    (text.chars().count() as f64 * size / 1.24 * 0.6).ceil() as i32
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
            Key::Dot(color) => head.draw(&Circle::new((x + KEY / 2, y), 6, color.filled())),
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

/// The house style of a chart's grid, axes and labels; each chart adds its own descriptions,
/// label counts and formatters, then draws.
fn house_mesh<'a, 'b, X, Y>(
    chart: &'b mut ChartContext<'a, SVGBackend<'a>, Cartesian2d<X, Y>>,
) -> MeshStyle<'a, 'b, X, Y, SVGBackend<'a>>
where
    X: Ranged + ValueFormatter<X::ValueType>,
    Y: Ranged + ValueFormatter<Y::ValueType>,
{
    let mut mesh = chart.configure_mesh();
    mesh.bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .axis_style(AXIS)
        .label_style(text_style(TICK_SIZE))
        .axis_desc_style(text_style(LABEL_SIZE));
    mesh
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groups::KeyGroups;
    use crate::runlog::sample::SAMPLE_NAME;
    use crate::runlog::{load_bytes, load_run, InputFormat, LoadOptions};
    use crate::select::BinCount;
    use crate::select::{run_selection, SelectOptions, Strata};

    use crate::runlog::test_log as csv;

    #[test]
    fn a_compressed_svg_name_is_told_the_svg_it_means() {
        let message = |name: &str| match check_svg_name(Path::new(name)) {
            Err(PlotError::NotSvg(m)) => m,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            message("f.svg.gz"),
            "f.svg.gz: seqpoint writes figures uncompressed; write f.svg, then compress it: \
             gzip -k f.svg (or -o - | gzip > f.svg.gz)"
        );
        assert!(!message("f.svg.gz").contains("svg.svg"));
        assert!(message("f.png").starts_with("f.png: seqpoint draws SVG only; write f.svg,"));
        assert!(message("f.gz").starts_with("f.gz: seqpoint draws SVG only; write f.svg "));
        assert!(check_svg_name(Path::new("f.SVG")).is_ok());
    }

    pub(crate) fn keys_log(keys: &[u32]) -> RunLog {
        let mut text = String::from("seq_len,time_ms\n");
        for &k in keys {
            text.push_str(&format!("{k},{}\n", f64::from(k) * 1.5 + 1.0));
        }
        csv(&text)
    }

    pub(crate) fn fixed(k: usize) -> SelectOptions {
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
                compare: Some(crate::runlog::sample::SAMPLE_COMPARE_NAME.into()),
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
        // Dots below the header: the legend's own dot is not a key group.
        let dots = doc
            .descendants()
            .filter(|n| n.has_tag_name("circle"))
            .filter(|n| n.attribute("cy").unwrap().parse::<f64>().unwrap() >= HEADER_HEIGHT as f64)
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
