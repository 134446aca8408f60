//! The error-versus-K panel: the worst projection error and the 95% interval half-width as
//! a band against the number of bins, with the target and the chosen K.

use plotters::prelude::*;

use super::{
    axis_number, chart_builder, draw_error, draw_header, house_mesh, Area, Key, PlotError,
    CHOSEN_LINE, ERROR_LINE, INTERVAL_FILL, TARGET_LINE,
};
use crate::runlog::RunLog;
use crate::select::{BinCount, Selection};

/// The K each stratum settled on (usually one value).
fn chosen_ks(selection: &Selection) -> Vec<usize> {
    let mut ks: Vec<usize> = selection.strata.iter().map(|s| s.k).collect();
    ks.sort_unstable();
    ks.dedup();
    ks
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

pub(super) fn draw_error_curve(
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
            _ => "Chosen Ks".to_string(),
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
    house_mesh(&mut chart)
        .disable_x_mesh()
        .x_desc(x_desc)
        .y_desc(if proxy {
            "Worst proxy error (%)"
        } else {
            "Worst projection error (%)"
        })
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

    #[test]
    fn error_axis_spans_whole_decades_with_room_below() {
        assert_eq!(decade_range([0.44, 95.0].into_iter()), (0.1, 100.0));
        // 1.0 would sit on the axis line: one more decade below.
        assert_eq!(decade_range([1.0, 30.0].into_iter()), (0.1, 100.0));
        // At least two decades.
        assert_eq!(decade_range([2.0, 3.0].into_iter()), (1.0, 100.0));
        assert_eq!(decade_range([0.0, 0.0].into_iter()), (0.01, 1.0));
    }
}
