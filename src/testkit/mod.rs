//! Synthetic run logs for tests, benchmarks and examples: not part of the public API.
//! `scale` writes seeded logs of any size; `models` builds runs with a known truth; `distinct`
//! makes key groups with many distinct lengths and noisy costs; `packed` makes packed runs of
//! known cost and runs the two-stage flow on them; `coverage` checks by redraws
//! that the intervals hold what they claim (the tests and the examples share it).

pub mod coverage;
pub mod distinct;
pub mod flow;
pub mod models;
pub mod packed;
pub mod scale;
