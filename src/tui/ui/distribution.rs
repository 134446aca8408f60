//! What both views of the SL distribution draw (the histogram of one length, the heat map of
//! two): the key groups, what is measured, the scale, the SeqPoints and the selection.

use ratatui::layout::Rect;

use super::theme::Theme;
use crate::groups::KeyGroups;
use crate::pick::SeqPoint;
use crate::tui::app::Measure;

#[derive(Clone, Copy)]
pub struct Distribution<'a> {
    pub groups: &'a KeyGroups,
    pub measure: Measure,
    pub log_scale: bool,
    pub seqpoints: &'a [SeqPoint],
    pub selected: Option<usize>,
    pub theme: Theme,
}

impl Distribution<'_> {
    /// Whether there is room (and something) to draw: smaller areas are left blank.
    pub fn fits(&self, area: Rect) -> bool {
        area.height >= 4 && area.width >= 12 && !self.groups.is_empty()
    }
}

/// `value` as a share of `max` on the chosen scale (log: `ln(1 + v) / ln(1 + max)`); `None`
/// for nothing to draw.
pub fn share(value: f64, max: f64, log_scale: bool) -> Option<f64> {
    if value <= 0.0 || max <= 0.0 {
        return None;
    }
    Some(if log_scale {
        value.ln_1p() / max.ln_1p()
    } else {
        value / max
    })
}
