//! The sequence-length panel: iterations per padded length with the bins as bands and the
//! SeqPoints as markers (a scatter of length pairs for two-length keys).

use plotters::prelude::*;

use super::{
    axis_number, chart_builder, draw_error, draw_header, house_mesh, Area, Key, PlotError,
    BAND_FILLS, BAR_FILL, SEQPOINT_FILL,
};
use crate::groups::KeyGroups;
use crate::runlog::RunLog;
use crate::select::Selection;

/// A downward triangle whose tip sits at (x, y) in data coordinates.
macro_rules! seqpoint_marker {
    ($x:expr, $y:expr) => {
        EmptyElement::at(($x, $y))
            + Polygon::new(vec![(-7, -12), (7, -12), (0, 0)], SEQPOINT_FILL.filled())
    };
}

/// Widest key range drawn with one bar per length (bars stay over 3 px wide).
const ONE_BAR_PER_LENGTH: u32 = 160;
/// Buckets aimed at when a key's range is wider than that.
const TARGET_BUCKETS: u32 = 80;

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

pub(super) fn draw_histogram(
    area: &Area,
    groups: &KeyGroups,
    log: &RunLog,
    selection: &Selection,
    title: &str,
) -> Result<(), PlotError> {
    let (buckets, width) = histogram_buckets(groups);
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
    house_mesh(&mut chart)
        .disable_x_mesh()
        .x_desc(format!("Padded sequence length, {key}"))
        .y_desc("Iterations")
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
pub(super) fn draw_key_scatter(
    area: &Area,
    groups: &KeyGroups,
    log: &RunLog,
    selection: &Selection,
    title: &str,
) -> Result<(), PlotError> {
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
            Key::Dot(BAR_FILL.mix(0.7)),
            "Lengths (area ~ iterations)".to_string(),
        ),
        (Key::Triangle, "SeqPoint".to_string()),
    ];
    let body = draw_header(area, &heading, &entries)?;
    let mut chart = chart_builder(&body)
        .build_cartesian_2d(0.0..x_max * 1.05, 0.0..y_max * 1.08)
        .map_err(draw_error)?;
    house_mesh(&mut chart)
        .x_desc(format!("Padded length, {}", log.key_names[0]))
        .y_desc(format!("Padded length, {}", log.key_names[1]))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::tests::{fixed, keys_log};
    use crate::select::run_selection;
    use proptest::prelude::*;

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
}
