//! Generated group values for the binning solvers' property tests: one strategy, so that
//! the exact and the fallback solvers are checked on the same shapes.

use proptest::prelude::*;

/// Group counts and values of one of three shapes: a noisy rising curve, pure noise, or a few
/// repeated levels (many exact ties), with `groups` groups.
pub fn values_strategy(
    groups: std::ops::Range<usize>,
) -> impl Strategy<Value = (Vec<u64>, Vec<f64>)> {
    let items = prop::collection::vec((1u64..30, 0.0f64..1.0, 0u8..4), groups);
    (items, 0usize..3).prop_map(|(items, shape)| {
        let counts = items.iter().map(|i| i.0).collect();
        let values = items
            .iter()
            .enumerate()
            .map(|(g, &(_, r, level))| match shape {
                0 => g as f64 * (1.0 + 0.3 * (r - 0.5)),
                1 => r * 1e3,
                _ => f64::from(level),
            })
            .collect();
        (counts, values)
    })
}
