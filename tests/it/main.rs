//! seqpoint's integration tests, linked as one binary: one module per area (CLI commands, bad
//! inputs, explorer keys/views/terminal, properties, fuzz crashes), helpers in `common`.

mod common;

mod advice_followed;
mod bad_inputs;
mod cli_select;
mod docs_pages;
mod exclude_cli;
mod export_safety;
mod figures_cli;
mod flows;
mod fuzz_regressions;
mod hardening_cli;
mod hardening_streams;
mod independent_check;
mod interval_coverage;
mod large_numbers;
mod lengths_only;
mod many_keys_cli;
mod packed;
mod profile_e2e;
mod project_cli;
mod properties;
mod python_logger;
mod report_cli;
mod select_plan_cli;
mod strata;
mod tui_journeys;
mod tui_keys;
mod tui_session;
mod tui_tmux;
mod tui_views;
mod two_length;
