//! Synthetic run logs for tests, benchmarks and examples: not part of the public API.
//! `scale` writes seeded logs of any size; `models` builds runs with a known truth.

pub mod models;
pub mod scale;
