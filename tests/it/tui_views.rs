//! Rendered frames of every view and popup at 80x24 (the smallest supported) and 120x40,
//! as snapshots; the too-small message; no colour at all under NO_COLOR.

use crate::common::{
    self, ch, frame, key, press, sample_session, started, terminal, translation_session,
};
use insta::assert_snapshot;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::Color;
use seqpoint::tui::{self, App};
use seqpoint::{BinCount, SelectOptions};

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

fn fixed(k: usize, max_bins: usize) -> SelectOptions {
    SelectOptions {
        bins: BinCount::Fixed(k),
        max_bins,
        ..SelectOptions::default()
    }
}

fn snapshot_sizes(name: &str, app: &mut App) {
    for (w, h) in SIZES {
        assert_snapshot!(format!("{name}_{w}x{h}"), frame(app, w, h));
    }
}

#[test]
fn overview_after_start() {
    let session = sample_session(SelectOptions::default());
    let mut app = started(&session);
    snapshot_sizes("overview_auto", &mut app);
}

#[test]
fn overview_fixed_k_log_scale_metric_totals() {
    let session = sample_session(fixed(8, 64));
    let mut app = started(&session);
    snapshot_sizes("overview_k8", &mut app);
    press(&mut app, ch('g'));
    press(&mut app, ch('c'));
    snapshot_sizes("overview_k8_log_time", &mut app);
}

#[test]
fn seqpoints_table_and_detail() {
    let session = sample_session(fixed(12, 16));
    let mut app = started(&session);
    press(&mut app, key(KeyCode::Tab));
    press(&mut app, key(KeyCode::Down));
    press(&mut app, key(KeyCode::Down));
    snapshot_sizes("table", &mut app);
    press(&mut app, key(KeyCode::Enter));
    snapshot_sizes("detail", &mut app);
}

#[test]
fn help_command_and_export_popups() {
    let session = sample_session(fixed(8, 16));
    let mut app = started(&session);
    press(&mut app, ch('?'));
    snapshot_sizes("help", &mut app);
    press(&mut app, key(KeyCode::Esc));
    press(&mut app, ch('y'));
    snapshot_sizes("command", &mut app);
    press(&mut app, key(KeyCode::Esc));
    press(&mut app, ch('e'));
    snapshot_sizes("export_prompt", &mut app);
}

#[test]
fn export_overwrite_question() {
    // A relative path keeps the frame the same on every machine.
    let folder = "target/tui-views-test";
    std::fs::create_dir_all(folder).unwrap();
    let path = format!("{folder}/seqpoints.json");
    std::fs::write(&path, "{}").unwrap();
    let _ = std::fs::remove_file(format!("{folder}/seqpoints.csv"));
    let session = sample_session(fixed(8, 16));
    let mut app = started(&session);
    press(&mut app, ch('e'));
    press(
        &mut app,
        KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL),
    );
    common::type_text(&mut app, &path);
    press(&mut app, key(KeyCode::Enter));
    snapshot_sizes("export_overwrite", &mut app);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}");
}

#[test]
fn two_length_key_heat_map() {
    let session = translation_session(fixed(5, 6));
    let mut app = started(&session);
    snapshot_sizes("heatmap", &mut app);
    press(&mut app, key(KeyCode::Tab));
    snapshot_sizes("heatmap_table", &mut app);
}

#[test]
fn computing_before_the_first_result() {
    let session = sample_session(SelectOptions::default());
    let mut app = App::new(&session, false);
    let effect = tui::update::recompute(&mut app);
    assert!(effect.is_some());
    tui::update::progressed(&mut app, 1, tui::compute::CURVE, 16, 64);
    snapshot_sizes("computing", &mut app);
}

#[test]
fn too_small_says_so() {
    let session = sample_session(fixed(8, 16));
    let mut app = started(&session);
    for (w, h) in [(79, 24), (80, 23), (40, 12)] {
        let text = frame(&mut app, w, h);
        assert!(text.contains("Terminal too small"), "{w}x{h}:\n{text}");
        assert!(text.contains("at least 80x24"), "{w}x{h}:\n{text}");
    }
    assert_snapshot!("too_small_60x20", frame(&mut app, 60, 20));
    // At exactly 80x24 the explorer draws.
    assert!(!frame(&mut app, 80, 24).contains("too small"));
}

#[test]
fn no_color_means_no_colour_at_all() {
    let session = sample_session(fixed(8, 16));
    for colour in [false, true] {
        let mut app = started(&session);
        app.colour = colour;
        let mut coloured = 0;
        for setup in [None, Some(ch('?')), Some(key(KeyCode::Tab))] {
            if let Some(k) = setup {
                press(&mut app, k);
            }
            let term = terminal(&mut app, 120, 40);
            coloured += term
                .backend()
                .buffer()
                .content()
                .iter()
                .filter(|c| c.fg != Color::Reset || c.bg != Color::Reset)
                .count();
        }
        if colour {
            assert!(coloured > 0, "colour is used when allowed");
        } else {
            assert_eq!(coloured, 0, "cells with colour under NO_COLOR");
        }
    }
}
