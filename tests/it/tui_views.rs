//! Rendered frames of every view and popup at 60x16 (the smallest supported), 80x24 and
//! 120x40, as snapshots; 80x23 (an 80x24 terminal under tmux); the too-small message; no
//! colour at all under NO_COLOR; no e-notation and no silent cuts.

use crate::common::{
    self, ch, frame, key, press, sample_session, started, terminal, translation_session,
};
use insta::assert_snapshot;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::Color;
use seqpoint::select::plan::PlanAsk;
use seqpoint::select::{Exclusion, MoreBins, Strata};
use seqpoint::tui::{self, App};
use seqpoint::{BinCount, SelectOptions};

const SIZES: [(u16, u16); 3] = [(60, 16), (80, 24), (120, 40)];

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
    for (w, h) in [(59, 24), (80, 15), (40, 12)] {
        let text = frame(&mut app, w, h);
        assert!(text.contains("Terminal too small"), "{w}x{h}:\n{text}");
        assert!(text.contains("at least 60x16"), "{w}x{h}:\n{text}");
    }
    assert_snapshot!("too_small_59x16", frame(&mut app, 59, 16));
    // From 60x16 the explorer draws, an 80x24 terminal under tmux (80x23) included.
    for (w, h) in [(60, 16), (80, 23), (120, 23), (79, 40)] {
        assert!(!frame(&mut app, w, h).contains("too small"), "{w}x{h}");
    }
}

#[test]
fn small_layouts_keep_the_projections_numbers_first() {
    let session = sample_session(SelectOptions::default());
    let mut app = started(&session);
    // What is shown: the plan's projection.
    let p = app.current_shown().unwrap().projection();
    let projected = seqpoint::text::numbers::readable(p.totals[0].projected);
    let actual = seqpoint::text::numbers::readable(p.totals[0].actual.unwrap());
    for (w, h) in [(60, 16), (80, 23), (72, 18)] {
        let text = frame(&mut app, w, h);
        for shown in [
            projected.as_str(),
            actual.as_str(),
            "err %",
            "±95 %",
            "speedup",
            "profile ",
        ] {
            assert!(text.contains(shown), "{w}x{h} lacks {shown:?}:\n{text}");
        }
        assert!(text.contains("K = "), "{w}x{h}: the K:\n{text}");
    }
    assert_snapshot!("overview_auto_80x23", frame(&mut app, 80, 23));
}

#[test]
fn text_that_does_not_fit_ends_with_an_ellipsis_and_i_shows_it_in_full() {
    // Auto-K for 1.6% up to 24 bins with one sample per SeqPoint (`--samples 1`) misses the
    // target: a verdict and two pieces of advice (more samples, more bins), too long for 60x16.
    let session = sample_session(SelectOptions {
        bins: BinCount::Target(1.6),
        max_bins: 24,
        ..SelectOptions::default()
    })
    .asking(PlanAsk {
        samples: Some(1),
        ..PlanAsk::default()
    });
    let mut app = started(&session);
    // The advice is the library's, each as the `:` command that follows it.
    let advice = app
        .current()
        .unwrap()
        .target
        .clone()
        .unwrap()
        .advice
        .unwrap();
    let samples = format!(":samples {}", advice.samples.expect("more samples advised"));
    let MoreBins::Allow(max_bins) = advice.bins else {
        panic!("more bins advised: {:?}", advice.bins)
    };
    let max_bins = format!(":max-bins {max_bins}");
    let text = frame(&mut app, 60, 16);
    assert!(text.contains('…'), "{text}");
    assert!(
        text.contains("[i]") || text.contains(" i in full"),
        "{text}"
    );
    // Each row either fits whole or ends in `…` before the border.
    press(&mut app, ch('i'));
    let full = frame(&mut app, 120, 40);
    // The header's lines too, which a narrow terminal cuts.
    for said in [
        samples.as_str(),
        max_bins.as_str(),
        "not met",
        "Marks",
        "3 epochs",
        "pick nearest-mean",
    ] {
        assert!(
            full.contains(said),
            "{said:?} not in the full view:\n{full}"
        );
    }
}

#[test]
fn no_e_notation_anywhere_on_screen() {
    let session = sample_session(fixed(8, 16));
    let mut app = started(&session);
    for setup in [None, Some(key(KeyCode::Tab)), Some(key(KeyCode::Enter))] {
        if let Some(k) = setup {
            press(&mut app, k);
        }
        for (w, h) in SIZES {
            let text = frame(&mut app, w, h);
            let e_notation = text.split(|c: char| !c.is_ascii_alphanumeric() && c != '.').any(|w| {
                let mut parts = w.splitn(2, 'e');
                matches!(
                    (parts.next(), parts.next()),
                    (Some(m), Some(x)) if !m.is_empty() && m.chars().all(|c| c.is_ascii_digit() || c == '.')
                        && !x.is_empty() && x.trim_start_matches(['-', '+']).chars().all(|c| c.is_ascii_digit())
                )
            });
            assert!(!e_notation, "{w}x{h}:\n{text}");
        }
    }
}

#[test]
fn the_command_popup_shows_the_command_on_one_unbroken_line() {
    let session = sample_session(fixed(8, 16));
    let mut app = started(&session);
    let command = session.command(&app.settings);
    press(&mut app, ch('y'));
    let text = frame(&mut app, 120, 40);
    let line = text
        .lines()
        .find(|l| l.contains("seqpoint select"))
        .expect("the command is shown");
    // One line, whole, and nothing beside it but spaces (no border to copy with it).
    assert_eq!(
        line.trim_matches(|c| c == '"' || c == ' '),
        command,
        "{text}"
    );
    // Narrower than the command: one line still, scrolled with ← →, never wrapped.
    let narrow = frame(&mut app, 60, 16);
    let rows: Vec<&str> = narrow.lines().filter(|l| l.contains("seqpoint")).collect();
    assert_eq!(rows.len(), 1, "{narrow}");
    assert!(narrow.contains("→ scroll"), "{narrow}");
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

#[test]
fn the_overview_shows_which_seqpoint_the_arrows_select() {
    let session = sample_session(fixed(8, 16));
    let mut app = started(&session);
    press(&mut app, key(KeyCode::Down));
    press(&mut app, key(KeyCode::Down));
    let sp = app.current().unwrap().seqpoints[2].clone();
    let text = frame(&mut app, 120, 40);
    let said = format!("SeqPoint 2: iteration {}", sp.iteration);
    assert!(text.contains(&said), "{said:?} not on screen:\n{text}");
    press(&mut app, key(KeyCode::End));
    let text = frame(&mut app, 80, 24);
    assert!(text.contains("SeqPoint 7: iteration"), "{text}");
}

#[test]
fn a_target_far_below_the_errors_draws_the_curve_on_a_log_axis() {
    let session = sample_session(SelectOptions {
        bins: BinCount::Target(0.1),
        ..SelectOptions::default()
    });
    let mut app = started(&session);
    let text = frame(&mut app, 120, 40);
    assert!(text.contains("log y"), "{text}");
    // The curve is drawn, not a row of `↑`: error dots inside the panel, labels with `%`.
    let curve_rows: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("││") && l.contains('│'))
        .collect();
    let dots: usize = curve_rows
        .iter()
        .map(|l| l.split("││").nth(1).unwrap_or("").matches('•').count())
        .sum();
    assert!(dots > 20, "only {dots} error dots on the curve:\n{text}");
    assert!(
        text.contains("0.10%"),
        "the target's label keeps its %:\n{text}"
    );
}

/// With `--exclude`, the distribution panel draws the kept iterations only (with strata too,
/// where it draws the whole run's groups) and its title says what was left out.
#[test]
fn the_distribution_draws_the_kept_iterations() {
    for strata in [Strata::None, Strata::Epoch] {
        let session = sample_session(SelectOptions {
            strata,
            exclude: Exclusion::parse(&["283-416"]).unwrap(),
            ..fixed(4, 64)
        });
        assert_eq!(session.groups().iterations(), 316, "{strata}");
        let mut app = started(&session);
        let screen = frame(&mut app, 120, 40);
        assert!(
            screen.contains("SL distribution: iterations per seq_len, 283-416 left out"),
            "{strata}\n{screen}"
        );
    }
    let session = sample_session(SelectOptions {
        strata: Strata::Epoch,
        ..fixed(4, 64)
    });
    assert_eq!(session.groups().iterations(), 450);
}

#[test]
fn a_plan_is_on_screen_in_the_table_and_the_detail() {
    // Three profiled iterations per SeqPoint (`--samples 3`): the table counts and lists
    // them, and the detail names every one, as the exported plan does.
    let session = sample_session(SelectOptions {
        samples: 3,
        ..fixed(6, 16)
    });
    let mut app = started(&session);
    let shown = app.current_shown().unwrap().clone();
    let plan = shown.plan.as_ref().expect("a plan");
    let first = shown
        .planned_iterations(&session.log, 0)
        .expect("the plan's iterations");
    assert_eq!(first.len(), 3);
    assert_eq!(
        first[0], shown.selection.seqpoints[0].iteration,
        "its own first"
    );
    press(&mut app, key(KeyCode::Tab));
    let table = frame(&mut app, 200, 40);
    assert!(
        table.contains(&format!(
            "SeqPoints: 6 · {} iterations to profile",
            plan.iterations()
        )),
        "{table}"
    );
    assert!(table.contains("samples"), "{table}");
    let listed: Vec<String> = first.iter().map(u64::to_string).collect();
    assert!(table.contains(&listed.join(" ")), "{table}");
    // At 80 columns the samples column is still there (the list is named as not shown).
    let narrow = frame(&mut app, 80, 24);
    assert!(narrow.contains("samples"), "{narrow}");
    press(&mut app, key(KeyCode::Enter));
    let detail = frame(&mut app, 120, 40);
    // Each iteration's own epoch, in the list's order (one "(epoch e)" after the list read
    // as every one's: the sample's plan for SeqPoint 0 spans epochs).
    let epoch_of = |iteration: u64| {
        (0..session.log.len())
            .find(|&r| session.log.iteration(r) == iteration)
            .and_then(|r| session.log.epoch(r))
            .expect("the sample has epochs")
            .to_string()
    };
    let epochs: Vec<String> = first.iter().map(|&i| epoch_of(i)).collect();
    assert!(epochs.iter().any(|e| *e != epochs[0]), "{epochs:?}");
    let named = format!(
        "profile 3 iterations (the plan's): {} (epochs {})",
        listed.join(", "),
        epochs.join(", ")
    );
    assert!(detail.contains(&named), "{detail}");
}

#[test]
fn the_header_counts_the_iterations_left_in() {
    let session = sample_session(SelectOptions {
        exclude: Exclusion::parse(&["283-416"]).unwrap(),
        ..fixed(4, 64)
    });
    let mut app = started(&session);
    let kept = session.groups().iterations();
    let all = session.log.len() as u64;
    assert!(kept < all);
    let said = format!("{kept} of {all} iterations ({} excluded)", all - kept);
    for (w, h) in [(120, 40), (200, 30)] {
        let screen = frame(&mut app, w, h);
        assert!(screen.contains(&said), "{said:?}:\n{screen}");
    }
    // Nothing left out: the run's count alone.
    let session = sample_session(fixed(4, 64));
    let mut app = started(&session);
    let screen = frame(&mut app, 120, 40);
    assert!(
        screen.contains(&format!(" · {all} iterations · ")),
        "{screen}"
    );
}

/// Under a budget the verdict is the plan's own figures', as `select` judges it: on the
/// bundled pair a budget of 64 misses 1% (the budget that meets it is advised) and 100
/// meets it.
#[test]
fn a_budget_is_judged_by_its_plan_as_select_judges_it() {
    for (budget, met) in [(64, false), (100, true)] {
        let ask = PlanAsk {
            budget: Some(budget),
            ..PlanAsk::default()
        };
        let session = sample_session(ask.shape(SelectOptions::default())).asking(ask);
        let app = started(&session);
        let shown = app.current_shown().unwrap();
        assert_eq!(shown.target_met(), Some(met), "budget {budget}");
        let theme = tui::ui::theme::Theme::new(false);
        let summary: Vec<String> = tui::ui::projection::summary(&app, shown, &theme)
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        let verdict = if met {
            format!("target 1% met (error and 95% interval) with a budget of {budget}")
        } else {
            format!("target 1% not met with a budget of {budget}: error ")
        };
        assert!(
            summary.iter().any(|l| l.contains(&verdict)),
            "{verdict:?}: {summary:?}"
        );
        if !met {
            // The budget that meets it, as `select` advises it (`--budget 70` there).
            let advised = shown
                .plan
                .as_ref()
                .unwrap()
                .meeting_budget
                .unwrap()
                .unwrap();
            assert!(advised > budget, "{advised}");
            let line = format!("→ :budget {advised} meets it at this K");
            assert!(summary.iter().any(|l| l.contains(&line)), "{summary:?}");
        }
    }
}

#[test]
fn with_strata_the_header_and_the_verdict_say_the_same_k() {
    let session = sample_session(SelectOptions {
        strata: Strata::Epoch,
        ..SelectOptions::default()
    });
    let mut app = started(&session);
    let shown = app.current_shown().unwrap();
    let ks: Vec<usize> = shown.selection.strata.iter().map(|o| o.k).collect();
    assert_eq!(ks.len(), 3);
    let bins = shown.selection.bins();
    assert_eq!(ks.iter().sum::<usize>(), bins);
    let k = ks[0];
    assert!(ks.iter().all(|&x| x == k), "{ks:?}");
    // The verdict as the projection writes it (wrapped on screen).
    let theme = tui::ui::theme::Theme::new(false);
    let summary: Vec<String> = tui::ui::projection::summary(&app, shown, &theme)
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect();
    let verdict = format!("with a plan: K = {k} per stratum ({bins} bins) x");
    assert!(
        summary.iter().any(|l| l.contains(&verdict)),
        "{verdict:?}: {summary:?}"
    );
    let screen = frame(&mut app, 160, 40);
    assert!(
        screen.contains(&format!("K = {k} per stratum (epoch) auto-K")),
        "{screen}"
    );
    // The strata note and the selected SeqPoint share the distribution's bottom border:
    // the note whole or not at all, never a stray start of it.
    for (w, h) in [(80, 24), (100, 30), (120, 40)] {
        let screen = frame(&mut app, w, h);
        let border = screen
            .lines()
            .find(|l| l.contains("▲ SeqPoint"))
            .unwrap_or_else(|| panic!("{w}x{h}: no selection line:\n{screen}"));
        if border.contains("each") {
            assert!(
                border.contains(" each stratum has its own bins: boundaries not drawn ─"),
                "{w}x{h}: {border}"
            );
        }
    }
}

#[test]
fn the_help_says_what_warmup_does_and_no_row_is_cut() {
    let session = sample_session(fixed(8, 16));
    let mut app = started(&session);
    press(&mut app, ch('?'));
    // Tall enough for every row: nothing scrolled away, so every row must be whole.
    let screen = frame(&mut app, 80, 80);
    // Warm-up iterations still count in the totals: they are only never picked.
    assert!(
        screen.contains("never pick the first N iterations (they still count)"),
        "{screen}"
    );
    assert!(!screen.contains("leave out the first N"), "{screen}");
    let rows = tui::keymap::help_rows().chain(
        tui::command_line::COMMANDS
            .iter()
            .map(|&(name, _, what)| (name, what)),
    );
    for (keys, what) in rows {
        let last = what.split_whitespace().last().unwrap();
        assert!(
            screen.contains(last),
            "{keys:?}: {what:?} is cut at 80 columns:\n{screen}"
        );
    }
}

#[test]
fn page_keys_in_the_help_move_by_the_rows_it_shows() {
    let session = sample_session(fixed(8, 16));
    let mut app = started(&session);
    press(&mut app, ch('?'));
    frame(&mut app, 80, 24);
    let page = app.popup_rows.expect("the help's rows, as drawn");
    assert!(page > 10, "{page}");
    press(&mut app, key(KeyCode::PageDown));
    frame(&mut app, 80, 24);
    assert_eq!(app.overlay, tui::app::Overlay::Help { scroll: page });
    press(&mut app, key(KeyCode::PageUp));
    assert_eq!(app.overlay, tui::app::Overlay::Help { scroll: 0 });
}

#[test]
fn the_header_says_how_many_bins_hold_iterations() {
    let session = sample_session(SelectOptions {
        method: Some(seqpoint::binning::Method::Uniform),
        ..fixed(64, 64)
    });
    let mut app = started(&session);
    let bins = app.current().unwrap().bins();
    // Uniform bins over the sample's lengths leave some empty at K = 64.
    assert!(bins < 64, "{bins}");
    let screen = frame(&mut app, 120, 40);
    assert!(
        screen.contains(&format!("K = 64 ({bins} non-empty)")),
        "{screen}"
    );
    // Every bin holds iterations: nothing added.
    let session = sample_session(fixed(8, 64));
    let mut app = started(&session);
    assert_eq!(app.current().unwrap().bins(), 8);
    let screen = frame(&mut app, 120, 40);
    assert!(!screen.contains("non-empty"), "{screen}");
}

/// The header's rows of a frame (as the test backend writes them: each row quoted).
fn rows(screen: &str) -> Vec<String> {
    screen
        .lines()
        .map(|l| l.trim_matches('"').to_string())
        .collect()
}

#[test]
fn at_80x24_the_settings_row_keeps_the_plan_and_the_run_its_compare_log() {
    // With strata the settings run past 80 columns: the labels go, the plan stays.
    let session = sample_session(SelectOptions {
        strata: Strata::Epoch,
        ..SelectOptions::default()
    });
    let mut app = started(&session);
    let plan = app.current_shown().unwrap().plan.clone().unwrap();
    let settings = &rows(&frame(&mut app, 80, 24))[2];
    let wanted = format!("plan {} iterations", plan.iterations());
    assert!(settings.trim_end().ends_with(&wanted), "{settings:?}");
    assert!(!settings.contains('…'), "{settings:?}");
    // An 80x24 terminal less a status line still names the compare log.
    for h in [23, 24] {
        let screen = frame(&mut app, 80, h);
        assert!(rows(&screen)[1].contains("compare"), "80x{h}:\n{screen}");
    }
}

#[test]
fn the_full_view_says_the_baselines_the_curves_border_cuts() {
    let session = sample_session(SelectOptions::default());
    let mut app = started(&session);
    let legend = tui::ui::baseline_legend(&app).expect("the baselines at this budget");
    assert!(legend.contains("random-N (r)"), "{legend}");
    // Cut on the curve's border at 80 columns …
    assert!(!frame(&mut app, 80, 24).contains(&legend));
    // … whole in `i`.
    press(&mut app, ch('i'));
    assert!(frame(&mut app, 80, 24).contains(&legend));
}

#[test]
fn in_ascii_plus_minus_is_three_characters_never_a_plus() {
    let session = sample_session(SelectOptions::default());
    let mut app = started(&session);
    for (w, h) in [(80, 24), (120, 40)] {
        let unicode = frame(&mut app, w, h);
        let signs = unicode.matches('±').count();
        assert!(signs >= 2, "{unicode}");
        app.ascii = true;
        let ascii = frame(&mut app, w, h);
        app.ascii = false;
        assert!(ascii.is_ascii(), "{ascii}");
        assert_eq!(ascii.matches("+/-").count(), signs, "{w}x{h}:\n{ascii}");
        // Every row keeps its width: nothing was pushed past a border.
        for (a, u) in rows(&ascii).iter().zip(rows(&unicode)) {
            assert_eq!(a.len(), u.chars().count(), "{a}");
        }
    }
}

#[test]
fn the_two_length_view_names_its_own_seqpoint_mark() {
    let session = translation_session(fixed(5, 16));
    let mut app = started(&session);
    let screen = frame(&mut app, 80, 24);
    assert!(screen.contains("◆ SeqPoint 0:"), "{screen}");
    assert!(!screen.contains('▲') || screen.contains("▲K="), "{screen}");
    press(&mut app, ch('i'));
    assert!(frame(&mut app, 80, 40).contains(" ◆   a SeqPoint at its key"));
}

/// Counts past a thousand read with separators wherever the explorer writes them (the
/// header's unique keys, the table's summed weights, the projection's list of SeqPoints),
/// and a bin's share is never "0.0" when it holds an iteration. Before: `1501 unique
/// seq_len`, `weights sum to 12001`, weight `12000` and share `0.0` in the projection's list.
#[test]
fn counts_past_a_thousand_are_grouped_and_a_held_share_is_never_zero() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.csv");
    // 12,000 iterations over 1,500 lengths, and one iteration of a length far above them:
    // uniform bins leave it alone in the top bin, 1 of 12,001 (0.008%).
    let mut text = String::from("iteration,seq_len,time_ms\n");
    for i in 0..12_000u32 {
        let len = 10 + i % 1500;
        text.push_str(&format!("{i},{len},{}\n", len as f64 * 0.5 + 1.0));
    }
    text.push_str("12000,99999,50000.5\n");
    std::fs::write(&run, text).unwrap();
    let load = seqpoint::LoadOptions::default();
    let log = seqpoint::load_run(&run.display().to_string(), &load).unwrap();
    let options = SelectOptions {
        method: Some(seqpoint::binning::Method::Uniform),
        ..fixed(4, 16)
    };
    let session = tui::Session::new(run.display().to_string(), load, log, options).unwrap();
    let mut app = started(&session);
    let overview = frame(&mut app, 120, 40);
    assert!(overview.contains("1,501 unique seq_len"), "{overview}");
    // The projection's list: the bulk's bin and the lone iteration's.
    let rows: Vec<&str> = overview
        .lines()
        .filter(|l| l.contains(" 12,000 ") || l.contains(" 99999 "))
        .collect();
    assert!(
        rows.iter()
            .any(|l| l.contains(" 12,000 ") && l.contains("100.0")),
        "{overview}"
    );
    assert!(
        rows.iter()
            .any(|l| l.contains(" 99999 ") && l.contains("<0.1")),
        "{overview}"
    );
    assert!(!overview.contains(" 0.0 "), "{overview}");
    press(&mut app, key(KeyCode::Tab));
    let table = frame(&mut app, 120, 40);
    assert!(table.contains("(weights sum to 12,001)"), "{table}");
}

/// The detail's key groups read whole on a large run: a count of 110,000 iterations with its
/// separators in a column as wide as it (a 5-cell column cut `110000` to `11000`), and one
/// number of decimals for the bin's values (`97.000` beside `103.0` before).
#[test]
fn the_details_key_groups_keep_large_counts_whole_and_one_decimals() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.csv");
    let mut text = String::from("iteration,seq_len,time_ms\n");
    for i in 0..120_000u32 {
        let (len, time) = if i % 12 == 0 {
            (200, 101.0 + (i % 5) as f64)
        } else {
            (100, 95.0 + (i % 5) as f64 * 0.5)
        };
        text.push_str(&format!("{i},{len},{time}\n"));
    }
    std::fs::write(&run, text).unwrap();
    let load = seqpoint::LoadOptions::default();
    let log = seqpoint::load_run(&run.display().to_string(), &load).unwrap();
    let session = tui::Session::new(run.display().to_string(), load, log, fixed(1, 16)).unwrap();
    let mut app = started(&session);
    press(&mut app, key(KeyCode::Enter));
    let detail = frame(&mut app, 80, 24);
    let row = |key: &str| {
        detail
            .lines()
            .find_map(|l| l.split_once(&format!("│{key}")))
            .map(|(_, rest)| format!("{key}{rest}"))
            .unwrap_or_else(|| panic!("no row for {key}:\n{detail}"))
    };
    let bulk = row("100 ");
    assert!(bulk.contains(" 110,000 "), "{detail}");
    let few = row("200 ");
    assert!(few.contains(" 10,000 "), "{detail}");
    // Every value of both rows with one decimal (the bin's largest is over 100).
    for line in [&bulk, &few] {
        let values: Vec<&str> = line.split_whitespace().skip(2).take(4).collect();
        assert_eq!(values.len(), 4, "{line}");
        for v in values {
            assert_eq!(v.split('.').nth(1).map(str::len), Some(1), "{v} in {line}");
        }
    }
}
