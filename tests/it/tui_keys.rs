//! The explorer without a terminal: every key's effect on the state, every recomputation
//! checked against `seqpoint select`'s pipeline, and exports checked byte for byte.

use std::path::Path;

use crate::common::{ch, key, press, sample_session, started, translation_session, type_text};
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use seqpoint::binning::Method;
use seqpoint::output::json::select_json;
use seqpoint::pick::Pick;
use seqpoint::select::command::select_command;
use seqpoint::select::naive::Baselines;
use seqpoint::select::plan::{plan_selection, PlanAsk, PlanRule, ProfilePlan};
use seqpoint::select::{answer, SelectRequest};
use seqpoint::tui::app::{Measure, Overlay, View};
use seqpoint::tui::{self, App};
use seqpoint::{run_selection, BinCount, SelectOptions, Selection};

fn fixed(k: usize, max_bins: usize) -> SelectOptions {
    SelectOptions {
        bins: BinCount::Fixed(k),
        max_bins,
        ..SelectOptions::default()
    }
}

/// What `seqpoint select` computes for the app's current settings: the selection, and the
/// plan the same flags give (`select`'s pipeline, step for step).
fn expected_with_plan(app: &App) -> (Selection, Option<ProfilePlan>) {
    let log = &app.session.log;
    let options = app.session.options(&app.settings);
    match app.session.rule(&app.settings) {
        Some(PlanRule::Target(target)) => {
            let request = SelectRequest {
                options,
                plan: Some(PlanRule::Target(target)),
            };
            let found = answer(log, &request).unwrap();
            (found.selection, found.plan)
        }
        Some(rule) => {
            let selection = run_selection(log, &options).unwrap();
            let plan = plan_selection(log, &selection, rule).unwrap();
            (selection, Some(plan))
        }
        None => (run_selection(log, &options).unwrap(), None),
    }
}

/// The sample run forced to one profiled iteration per SeqPoint (`--samples 1`).
fn one_sample(base: SelectOptions) -> tui::Session {
    sample_session(base).asking(PlanAsk {
        samples: Some(1),
        ..PlanAsk::default()
    })
}

/// The session the run loop starts when a `:` command changed a session option.
fn restarted(app: &App) -> tui::Session {
    let (base, ask) = app.restart.clone().expect("a restart with the new options");
    app.session.with_options(base, ask).unwrap()
}

/// The app over the restarted session, carrying the settings, its result settled.
fn follow<'a>(app: &App<'a>, next: &'a tui::Session) -> App<'a> {
    let mut fresh = App::new(next, false);
    fresh.carry_from(app);
    let effect = tui::update::recompute(&mut fresh);
    tui::settle(&mut fresh, effect);
    fresh
}

fn expected(app: &App) -> Selection {
    expected_with_plan(app).0
}

/// The shown selection is current and equals `select`'s, SeqPoint for SeqPoint.
fn assert_matches_select(app: &App) {
    let shown = app.current().expect("a result for the current settings");
    let (want, plan) = expected_with_plan(app);
    assert_eq!(app.current_shown().unwrap().plan, plan);
    assert_eq!(shown.seqpoints, want.seqpoints);
    assert_eq!(shown.projection, want.projection);
    assert_eq!(shown.target, want.target);
    assert_eq!(shown.strata, want.strata);
    assert_eq!((shown.method, shown.pick), (want.method, want.pick));
}

#[test]
fn start_up_shows_what_select_would() {
    let session = sample_session(SelectOptions::default());
    let app = started(&session);
    assert!(app.settings.auto);
    assert_eq!(app.settings.target_pct, 1.0);
    assert_matches_select(&app);
    assert_eq!(app.curve().unwrap().len(), 64);
}

#[test]
fn h_and_l_step_k_and_leave_auto_at_the_k_it_found() {
    // A target the sample meets above K = 2, so that two steps down stay at K >= 1.
    let session = sample_session(SelectOptions {
        bins: BinCount::Target(2.0),
        ..SelectOptions::default()
    });
    let mut app = started(&session);
    let found = app.shown_k().unwrap();
    assert!(found > 2, "auto-K found {found}");
    press(&mut app, ch('h'));
    assert!(!app.settings.auto);
    assert_eq!(app.settings.k, found - 1);
    assert_eq!(app.current().unwrap().bins(), found - 1);
    assert_matches_select(&app);
    press(&mut app, key(KeyCode::Left));
    assert_eq!(app.settings.k, found - 2);
    assert_matches_select(&app);
    press(&mut app, ch('l'));
    press(&mut app, key(KeyCode::Right));
    assert_eq!(app.settings.k, found);
    assert_matches_select(&app);
}

#[test]
fn a_press_at_the_prepared_table_is_answered_at_once() {
    let session = sample_session(fixed(8, 32));
    let mut app = started(&session);
    // Optimal within the prepared DP table: no job, the new result is there right away.
    assert!(tui::press(&mut app, ch('l')).is_none());
    assert_eq!(app.current().unwrap().bins(), 9);
    assert!(app.pending.is_none());
}

#[test]
fn k_stops_at_one_and_at_one_bin_per_key_group() {
    let session = sample_session(fixed(1, 4));
    let mut app = started(&session);
    press(&mut app, ch('h'));
    assert_eq!(app.settings.k, 1);
    assert!(app.status.as_ref().unwrap().error);
    let session = sample_session(fixed(500, 4));
    let mut app = started(&session);
    assert_eq!(
        app.settings.k, 133,
        "K is clamped to the 133 unique seq_len"
    );
    press(&mut app, ch('l'));
    assert_eq!(app.settings.k, 133);
    assert!(app.status.as_ref().unwrap().text.contains("own bin"));
    assert_matches_select(&app);
}

#[test]
fn t_and_capital_t_step_the_target() {
    // One sample per SeqPoint (`--samples 1`): auto-K's own search, not the cheapest plan.
    let session = one_sample(fixed(10, 16));
    let mut app = started(&session);
    let before = app.current().unwrap().seqpoints.clone();
    press(&mut app, ch('t'));
    assert_eq!(app.settings.target_pct, 0.75);
    // With a fixed K the target only judges: same SeqPoints, nothing recomputed.
    assert!(app.pending.is_none());
    assert_eq!(app.current().unwrap().seqpoints, before);
    press(&mut app, ch('T'));
    press(&mut app, ch('T'));
    assert_eq!(app.settings.target_pct, 1.5);

    // In auto mode a new target is a new search.
    press(&mut app, ch('a'));
    assert!(app.settings.auto);
    assert_eq!(
        app.current().unwrap().target.as_ref().unwrap().target_pct,
        1.5
    );
    assert_matches_select(&app);
    press(&mut app, ch('T'));
    assert_eq!(
        app.current().unwrap().target.as_ref().unwrap().target_pct,
        2.0
    );
    assert_matches_select(&app);
}

#[test]
fn a_toggles_auto_k_and_keeps_the_k_it_found() {
    let session = one_sample(SelectOptions {
        bins: BinCount::Target(2.0),
        ..SelectOptions::default()
    });
    let mut app = started(&session);
    let auto = app.current().unwrap().clone();
    let found = app.shown_k().unwrap();
    press(&mut app, ch('a'));
    assert!(!app.settings.auto);
    assert_eq!(app.settings.k, found);
    assert_eq!(app.current().unwrap().seqpoints, auto.seqpoints);
    assert!(app.current().unwrap().target.is_none());
    press(&mut app, ch('a'));
    assert!(app.settings.auto);
    assert!(app.current().unwrap().target.is_some());
    assert_matches_select(&app);
}

#[test]
fn m_cycles_every_method() {
    // A small --max-bins keeps k-means (one fit per K of the curve) quick.
    let session = sample_session(fixed(5, 5));
    let mut app = started(&session);
    let mut seen = vec![app.settings.method];
    for _ in 0..4 {
        press(&mut app, ch('m'));
        assert_matches_select(&app);
        seen.push(app.current().unwrap().method);
    }
    assert_eq!(
        seen,
        [
            Method::Optimal,
            Method::Uniform,
            Method::Quantile,
            Method::Kmeans,
            Method::Optimal
        ]
    );
}

#[test]
fn m_skips_optimal_for_a_two_length_key() {
    let session = translation_session(fixed(4, 4));
    let mut app = started(&session);
    assert_eq!(app.settings.method, Method::Kmeans);
    assert_matches_select(&app);
    let mut seen = Vec::new();
    for _ in 0..3 {
        press(&mut app, ch('m'));
        seen.push(app.settings.method);
    }
    assert_eq!(seen, [Method::Uniform, Method::Quantile, Method::Kmeans]);
    assert_matches_select(&app);
}

#[test]
fn p_cycles_every_pick() {
    let session = sample_session(fixed(6, 8));
    let mut app = started(&session);
    let mut seen = vec![app.settings.pick];
    for _ in 0..4 {
        press(&mut app, ch('p'));
        assert_matches_select(&app);
        seen.push(app.current().unwrap().pick);
    }
    assert_eq!(
        seen,
        [
            Pick::NearestMean,
            Pick::Median,
            Pick::Centroid,
            Pick::Mode,
            Pick::NearestMean
        ]
    );
}

#[test]
fn s_c_and_tab_change_only_the_view() {
    let session = sample_session(fixed(6, 8));
    let mut app = started(&session);
    let before = app.current().unwrap().seqpoints.clone();
    press(&mut app, ch('s'));
    assert!(app.log_scale);
    press(&mut app, ch('s'));
    assert!(!app.log_scale);
    press(&mut app, ch('c'));
    assert_eq!(app.measure, Measure::Metric(0));
    press(&mut app, ch('c'));
    assert_eq!(
        app.measure,
        Measure::Iterations,
        "the sample has one metric"
    );
    press(&mut app, key(KeyCode::Tab));
    assert_eq!(app.view, View::SeqPoints);
    press(&mut app, key(KeyCode::Tab));
    assert_eq!(app.view, View::Overview);
    press(&mut app, key(KeyCode::BackTab));
    assert_eq!(app.view, View::SeqPoints);
    assert_eq!(app.current().unwrap().seqpoints, before);
}

#[test]
fn arrows_scroll_the_table_and_enter_opens_the_detail() {
    let session = sample_session(fixed(30, 32));
    let mut app = started(&session);
    press(&mut app, key(KeyCode::Tab));
    assert_eq!(app.table.selected(), Some(0));
    press(&mut app, key(KeyCode::Down));
    press(&mut app, ch('j'));
    assert_eq!(app.table.selected(), Some(2));
    press(&mut app, ch('k'));
    assert_eq!(app.table.selected(), Some(1));
    press(&mut app, key(KeyCode::PageDown));
    assert_eq!(app.table.selected(), Some(11));
    press(&mut app, key(KeyCode::End));
    assert_eq!(app.table.selected(), Some(29));
    press(&mut app, key(KeyCode::Down));
    assert_eq!(app.table.selected(), Some(29), "stops at the last SeqPoint");
    press(&mut app, key(KeyCode::PageUp));
    assert_eq!(app.table.selected(), Some(19));
    press(&mut app, key(KeyCode::Home));
    assert_eq!(app.table.selected(), Some(0));

    press(&mut app, key(KeyCode::Enter));
    assert_eq!(app.overlay, Overlay::Detail { scroll: 0 });
    press(&mut app, key(KeyCode::Down));
    assert_eq!(app.overlay, Overlay::Detail { scroll: 1 });
    // Keys of the main screen do nothing under the popup.
    press(&mut app, ch('l'));
    assert_eq!(app.settings.k, 30);
    press(&mut app, key(KeyCode::Esc));
    assert_eq!(app.overlay, Overlay::None);
    assert!(!app.quit, "Esc closes the popup before it quits");

    // Fewer SeqPoints than the selected row: the selection follows.
    press(&mut app, key(KeyCode::End));
    for _ in 0..5 {
        press(&mut app, ch('h'));
    }
    assert_eq!(app.table.selected(), Some(24));
}

#[test]
fn help_and_command_popups_open_and_close() {
    let session = sample_session(fixed(7, 8));
    let mut app = started(&session);
    press(&mut app, ch('?'));
    assert_eq!(app.overlay, Overlay::Help { scroll: 0 });
    press(&mut app, ch('h'));
    assert_eq!(app.settings.k, 7, "keys under the help do nothing");
    press(&mut app, key(KeyCode::Esc));
    assert_eq!(app.overlay, Overlay::None);

    press(&mut app, ch('y'));
    assert_eq!(app.overlay, Overlay::Command { scroll: 0 });
    let options = session.options(&app.settings);
    assert_eq!(
        session.command(&app.settings),
        select_command(
            &session.run,
            &session.load,
            &options,
            &session.ask,
            Method::Optimal,
            Pick::NearestMean
        )
    );
    assert_eq!(
        session.command(&app.settings),
        "seqpoint select sample:speech_t1.csv --compare sample:speech_t2.csv --bins 7 --method optimal --pick nearest-mean"
    );
    press(&mut app, ch('y'));
    assert_eq!(app.overlay, Overlay::None);
}

#[test]
fn q_ctrl_c_and_ctrl_q_quit() {
    let session = sample_session(fixed(3, 4));
    for event in [
        ch('q'),
        KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
        KeyEvent::new(KeyCode::Char('q'), KeyModifiers::CONTROL),
    ] {
        let mut app = started(&session);
        press(&mut app, event);
        assert!(app.quit, "{event:?}");
    }
    // Ctrl-C quits from inside the export prompt too, where q is just a letter.
    let mut app = started(&session);
    press(&mut app, ch('e'));
    press(&mut app, ch('q'));
    assert!(!app.quit);
    press(
        &mut app,
        KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL),
    );
    assert!(app.quit);
}

#[test]
fn esc_and_q_read_together_close_the_popup_and_quit() {
    // Esc and q in one read reach the explorer as Alt+q; q alone would only close these.
    let session = sample_session(fixed(3, 4));
    let alt_q = KeyEvent::new(KeyCode::Char('q'), KeyModifiers::ALT);
    for popup in ['y', '?', 'e', ':'] {
        let mut app = started(&session);
        press(&mut app, ch(popup));
        assert_ne!(app.overlay, Overlay::None, "{popup}");
        press(&mut app, alt_q);
        assert_eq!(app.overlay, Overlay::None, "{popup}");
        assert!(app.quit, "after {popup}");
    }
}

#[test]
fn the_export_prompt_defaults_beside_the_run_and_edits() {
    let session = sample_session(fixed(3, 4));
    let mut app = started(&session);
    press(&mut app, ch('e'));
    let Overlay::Export(prompt) = &app.overlay else {
        panic!("{:?}", app.overlay)
    };
    assert_eq!(prompt.input, "seqpoints.json", "the sample exports here");
    assert_eq!(prompt.cursor, 14);
    press(&mut app, key(KeyCode::Home));
    type_text(&mut app, "out/");
    press(&mut app, key(KeyCode::End));
    press(&mut app, key(KeyCode::Backspace));
    press(&mut app, key(KeyCode::Left));
    press(&mut app, key(KeyCode::Delete));
    let Overlay::Export(prompt) = &app.overlay else {
        panic!()
    };
    // End, Backspace: "…jso"; Left then Delete removes the "o" under the cursor.
    assert_eq!(prompt.input, "out/seqpoints.js");
    press(
        &mut app,
        KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL),
    );
    let Overlay::Export(prompt) = &app.overlay else {
        panic!()
    };
    assert_eq!((prompt.input.as_str(), prompt.cursor), ("", 0));
    press(&mut app, key(KeyCode::Enter));
    assert!(
        app.status.as_ref().unwrap().error,
        "an empty path is refused"
    );
    // A name `select -o` writes a text table under: the explorer has none to write.
    type_text(&mut app, "list.txt");
    press(&mut app, key(KeyCode::Enter));
    assert!(app.status.as_ref().unwrap().text.contains("list.txt: "));
    press(&mut app, key(KeyCode::Esc));
    assert_eq!(app.overlay, Overlay::None);

    let session = translation_session(fixed(3, 3));
    let mut app = started(&session);
    press(&mut app, ch('e'));
    let Overlay::Export(prompt) = &app.overlay else {
        panic!()
    };
    assert_eq!(prompt.input, "tests/data/seqpoints.json");
}

/// Export through the keys to `path`, confirming an overwrite when asked and `confirm`.
fn export_to(app: &mut App, path: &Path) {
    press(app, ch('e'));
    press(
        app,
        KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL),
    );
    type_text(app, &path.display().to_string());
    press(app, key(KeyCode::Enter));
}

/// The JSON the explorer wrote, without its `command` line, and that command.
fn split_command(json: &str) -> (String, String) {
    let doc: serde_json::Value = serde_json::from_str(json).unwrap();
    let command = doc["command"].as_str().unwrap().to_string();
    let line = format!(
        ",\n  \"command\": {}",
        serde_json::to_string(&command).unwrap()
    );
    assert!(
        json.contains(&line),
        "the command is the document's last field"
    );
    (json.replace(&line, ""), command)
}

#[test]
fn export_writes_the_bytes_select_writes() {
    let dir = tempfile::tempdir().unwrap();
    let session = sample_session(SelectOptions {
        bins: BinCount::Target(2.0),
        ..SelectOptions::default()
    });
    let mut app = started(&session);
    // Settings reached by hand: auto-K at 2%, then K - 1, the median pick, uniform bins.
    press(&mut app, ch('h'));
    press(&mut app, ch('p'));
    press(&mut app, ch('m'));
    let settings = app.settings;
    let path = dir.path().join("hand.json");
    export_to(&mut app, &path);
    assert_eq!(app.overlay, Overlay::None);
    let status = app.status.clone().unwrap();
    assert!(!status.error);
    assert!(
        status.text.contains(&path.display().to_string()),
        "{}",
        status.text
    );

    let json = std::fs::read_to_string(&path).unwrap();
    let csv = std::fs::read_to_string(dir.path().join("hand.csv")).unwrap();
    let (without_command, command) = split_command(&json);
    assert_eq!(command, session.command(&settings));
    assert!(
        command.contains("--method uniform --pick median"),
        "{command}"
    );
    assert_select_json(&app, &without_command, &command);
    assert_eq!(csv, select_output(&command, "csv"));
    assert!(
        json.contains("\"baselines\""),
        "naive baselines at the same budget"
    );
}

/// The exported JSON (without its command) is `select --format json`'s for that command, byte
/// for byte, but for one field: a fixed K is judged against the target on screen and the
/// document records it, while `select --bins K` has no target to record.
fn assert_select_json(app: &App, without_command: &str, command: &str) {
    let select = select_output(command, "json");
    if app.settings.auto {
        assert_eq!(without_command, select, "{command}");
        return;
    }
    let target = serde_json::to_string(&app.settings.target_pct).unwrap();
    let recorded = format!("\"target_error_pct\": {target},");
    assert_eq!(
        without_command.matches(&recorded).count(),
        1,
        "{without_command}"
    );
    assert_eq!(
        without_command.replace(&recorded, "\"target_error_pct\": null,"),
        select,
        "{command}"
    );
}

/// Runs a recorded `seqpoint select` command line with `more` arguments, in `dir`; its
/// standard output.
fn run_recorded(command: &str, more: &[&str], dir: &Path) -> String {
    let words: Vec<&str> = command.split(' ').collect();
    assert_eq!(words[..2], ["seqpoint", "select"]);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_seqpoint"))
        .args(&words[1..])
        .args(more)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// What `seqpoint select` prints for a recorded command line.
fn select_output(command: &str, format: &str) -> String {
    run_recorded(command, &["--format", format], Path::new("."))
}

/// The sample at 6 bins, 3 samples per SeqPoint: a plan whose export lists several
/// iterations per SeqPoint.
fn six_bins_three_samples() -> tui::Session {
    sample_session(SelectOptions {
        bins: BinCount::Fixed(6),
        samples: 3,
        ..SelectOptions::default()
    })
}

#[test]
fn export_with_samples_lists_every_iteration_to_profile_as_select_does() {
    let dir = tempfile::tempdir().unwrap();
    let session = six_bins_three_samples();
    let mut app = started(&session);
    press(&mut app, ch('p'));
    let path = dir.path().join("planned.json");
    export_to(&mut app, &path);
    let json = std::fs::read_to_string(&path).unwrap();
    let csv = std::fs::read_to_string(dir.path().join("planned.csv")).unwrap();
    let (without_command, command) = split_command(&json);
    assert!(command.contains("--samples 3"), "{command}");
    assert_select_json(&app, &without_command, &command);
    assert_eq!(csv, select_output(&command, "csv"));
    assert!(json.contains("\"plan\""));
    // Three profiled iterations per SeqPoint (where the bins hold that many).
    assert!(csv.lines().count() > 6 + 1, "{csv}");
}

/// What `seqpoint select … -o NAME` writes, run in `dir`.
fn select_written(command: &str, dir: &Path, name: &str) {
    run_recorded(command, &["-o", name], dir);
}

fn gunzip(path: &Path) -> String {
    use std::io::Read;
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    text
}

/// The export's name is read as `select -o` reads it: `.simpoints` writes the SimPoint set
/// (`select -o`'s three files), a final `.gz` compresses, `.csv` names the list and the JSON
/// goes beside it. Before, `.simpoints` and `.gz` were refused and `.csv` was an error.
#[test]
fn export_follows_the_name_as_select_o_does() {
    let dir = tempfile::tempdir().unwrap();
    let session = six_bins_three_samples();
    let mut app = started(&session);
    let theirs = dir.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();

    export_to(&mut app, &dir.path().join("set.simpoints"));
    assert_eq!(app.overlay, Overlay::None, "{:?}", app.status);
    let status = app.status.clone().unwrap().text;
    for ext in ["simpoints", "weights", "json"] {
        assert!(status.contains(&format!("set.{ext}")), "{status}");
    }
    assert!(
        !dir.path().join("set.csv").exists(),
        "a set is select's three files"
    );
    let json = std::fs::read_to_string(dir.path().join("set.json")).unwrap();
    let (without_command, command) = split_command(&json);
    assert_select_json(&app, &without_command, &command);
    select_written(&command, &theirs, "set.simpoints");
    for ext in ["simpoints", "weights"] {
        let name = format!("set.{ext}");
        let mine = std::fs::read_to_string(dir.path().join(&name)).unwrap();
        assert_eq!(mine, std::fs::read_to_string(theirs.join(&name)).unwrap());
        assert_eq!(mine.lines().count(), 6, "{name}: one line per SeqPoint");
    }

    export_to(&mut app, &dir.path().join("z.json.gz"));
    assert_eq!(app.overlay, Overlay::None, "{:?}", app.status);
    let (unzipped, _) = split_command(&gunzip(&dir.path().join("z.json.gz")));
    assert_eq!(unzipped, without_command);
    assert_eq!(
        gunzip(&dir.path().join("z.csv.gz")),
        select_output(&command, "csv")
    );
    select_written(&command, &theirs, "z.json.gz");
    assert_eq!(
        gunzip(&theirs.join("z.json.gz")),
        select_output(&command, "json")
    );

    export_to(&mut app, &dir.path().join("list.csv"));
    assert_eq!(app.overlay, Overlay::None, "{:?}", app.status);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("list.csv")).unwrap(),
        select_output(&command, "csv")
    );
    assert_eq!(
        split_command(&std::fs::read_to_string(dir.path().join("list.json")).unwrap()).0,
        without_command
    );

    // What neither writes is refused in the prompt, naming the name: nothing is written.
    let before = std::fs::read_dir(dir.path()).unwrap().count();
    export_to(&mut app, &dir.path().join("table.txt"));
    assert!(matches!(app.overlay, Overlay::Export(_)));
    assert!(app.status.clone().unwrap().text.contains("table.txt"));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), before);
}

#[test]
fn every_recomputation_also_equals_the_library_document() {
    let session = sample_session(fixed(9, 16));
    let app = started(&session);
    let baselines = Baselines::new(&session.log);
    let want = expected(&app);
    assert_eq!(
        select_json(&session.log, app.current().unwrap(), None, None, &baselines),
        select_json(&session.log, &want, None, None, &baselines)
    );
}

#[test]
fn export_refuses_to_overwrite_until_confirmed() {
    let dir = tempfile::tempdir().unwrap();
    let session = sample_session(fixed(4, 8));
    let mut app = started(&session);
    let path = dir.path().join("seqpoints.json");
    export_to(&mut app, &path);
    let first = std::fs::read_to_string(&path).unwrap();

    press(&mut app, ch('l'));
    export_to(&mut app, &path);
    let Overlay::Export(prompt) = &app.overlay else {
        panic!("{:?}", app.overlay)
    };
    let asked = prompt.confirm.as_ref().expect("asks before overwriting");
    assert_eq!(asked.existing.len(), 2);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), first);
    // "n" goes back to the path; nothing is written.
    press(&mut app, ch('n'));
    let Overlay::Export(prompt) = &app.overlay else {
        panic!()
    };
    assert!(prompt.confirm.is_none());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), first);
    // Enter asks again; "y" overwrites both files.
    press(&mut app, key(KeyCode::Enter));
    press(&mut app, ch('y'));
    assert_eq!(app.overlay, Overlay::None);
    let second = std::fs::read_to_string(&path).unwrap();
    assert_ne!(second, first);
    assert!(second.contains("--bins 5"));
    let csv = std::fs::read_to_string(dir.path().join("seqpoints.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 5);
}

#[test]
fn export_waits_for_the_result_of_the_current_settings() {
    let session = sample_session(fixed(4, 8));
    let mut app = started(&session);
    // Switching to k-means needs a job; until it is done the screen shows the old result.
    press(&mut app, ch('m'));
    press(&mut app, ch('m'));
    let effect = tui::press(&mut app, ch('m'));
    assert_eq!(app.settings.method, Method::Kmeans);
    assert!(effect.is_some());
    assert!(app.pending.is_some());
    assert!(app.current().is_none());
    assert!(app.shown.is_some(), "the last result stays on screen");
    press(&mut app, ch('e'));
    assert_eq!(app.overlay, Overlay::None);
    assert!(app
        .status
        .as_ref()
        .unwrap()
        .text
        .contains("still computing"));
    tui::settle(&mut app, effect);
    assert!(app.current().is_some());
}

#[test]
fn a_superseded_job_is_cancelled_and_its_result_dropped() {
    // With strata, auto-K is a search over K per stratum: a job.
    let session = one_sample(SelectOptions {
        strata: seqpoint::Strata::Epoch,
        ..SelectOptions::default()
    });
    let mut app = started(&session);
    let Some(tui::update::Effect::Compute(first)) = tui::press(&mut app, ch('T')) else {
        panic!("auto-K over strata needs a job")
    };
    let first_id = first.id;
    let second = tui::press(&mut app, ch('T'));
    // The first job was told to stop: it ends without a result.
    let cancelled = first.cancel.clone();
    assert!(cancelled.load(std::sync::atomic::Ordering::Relaxed));
    assert!(first.run(&session, &mut |_, _, _| {}).is_none());
    tui::settle(&mut app, second);
    assert_eq!(app.settings.target_pct, 2.0);
    assert_matches_select(&app);

    // A result that arrives for superseded settings is not shown (its selectors are kept).
    let stale = tui::compute::Job {
        id: first_id,
        settings: seqpoint::tui::app::Settings {
            target_pct: 1.5,
            ..app.settings
        },
        prepared: None,
        cancel: Default::default(),
    };
    let done = stale.run(&session, &mut |_, _, _| {}).unwrap();
    tui::update::finished(&mut app, done);
    assert_eq!(
        app.current().unwrap().target.as_ref().unwrap().target_pct,
        2.0
    );
}

#[test]
fn progress_reports_reach_the_footer_state() {
    let session = one_sample(SelectOptions::default());
    let mut app = App::new(&session, false);
    let Some(tui::update::Effect::Compute(job)) = tui::update::recompute(&mut app) else {
        panic!("the first result is a job")
    };
    let id = job.id;
    let mut reports = Vec::new();
    let done = job
        .run(&session, &mut |label, done, total| {
            reports.push((label, done, total))
        })
        .unwrap();
    assert_eq!(reports[0], (tui::compute::PREPARING, 0, 0));
    // The exact DP table level by level, then the curve; no strata, so the target's K is
    // read off the curve without a search.
    assert!(reports.contains(&(tui::compute::PREPARING, 64, 64)));
    assert_eq!(*reports.last().unwrap(), (tui::compute::CURVE, 64, 64));
    assert!(reports.iter().all(|&(_, d, t)| d <= t));
    let (label, d, t) = *reports.last().unwrap();
    tui::update::progressed(&mut app, id, label, d, t);
    assert_eq!(app.pending.as_ref().unwrap().done, d);
    assert!(tui::update::finished(&mut app, done).is_none());
    assert!(app.pending.is_none());
    assert!(app.current().is_some());
    // Now a new target is answered at once, from the same curve.
    assert!(tui::press(&mut app, ch('T')).is_none());
    assert_eq!(app.settings.target_pct, 1.5);
    assert_matches_select(&app);

    // With strata the target needs a search over K per stratum, which reports too.
    let session = one_sample(SelectOptions {
        strata: seqpoint::Strata::Epoch,
        ..SelectOptions::default()
    });
    let mut app = App::new(&session, false);
    let Some(tui::update::Effect::Compute(job)) = tui::update::recompute(&mut app) else {
        panic!("the first result is a job")
    };
    let mut labels = Vec::new();
    job.run(&session, &mut |label, _, _| labels.push(label))
        .unwrap();
    assert_eq!(labels.last(), Some(&tui::compute::SEARCH));
}

#[test]
fn strata_get_their_own_seqpoints_as_select_gives_them() {
    let session = sample_session(SelectOptions {
        bins: BinCount::Target(2.0),
        strata: seqpoint::Strata::Epoch,
        ..SelectOptions::default()
    });
    let mut app = started(&session);
    assert_matches_select(&app);
    let strata: Vec<_> = app
        .current()
        .unwrap()
        .strata
        .iter()
        .map(|s| s.name.clone())
        .collect();
    assert_eq!(strata, ["epoch 0", "epoch 1", "epoch 2"]);
    let largest = app.shown_k().unwrap();
    press(&mut app, ch('h'));
    assert_eq!(app.settings.k, largest - 1);
    let shown = app.current().unwrap();
    assert!(shown.strata.iter().all(|s| s.k == largest - 1));
    assert_eq!(shown.seqpoints.len(), 3 * (largest - 1));
    assert_matches_select(&app);
    assert!(session.command(&app.settings).contains("--strata epoch"));
}

/// Press `m` until the method is k-means; the job that switch starts, not yet run.
fn switch_to_kmeans<'a>(app: &mut App<'a>) -> tui::compute::Job<'a> {
    let mut job = None;
    while app.settings.method != Method::Kmeans {
        job = tui::press(app, ch('m'));
    }
    match job {
        Some(tui::update::Effect::Compute(job)) => job,
        _ => panic!("k-means needs a job"),
    }
}

#[test]
fn k_presses_while_selectors_are_built_let_that_work_finish() {
    // A small --max-bins keeps k-means (one fit per K of the curve) quick in a debug build.
    let session = sample_session(fixed(8, 12));
    let mut app = started(&session);
    // Switch to k-means: its selectors (a fit per K for the curve) go to the worker.
    let job = switch_to_kmeans(&mut app);
    let building = app.pending.as_ref().unwrap().id;
    assert_eq!(job.id, building);
    assert_eq!(
        app.pending.as_ref().unwrap().prepares,
        Some((Method::Kmeans, app.settings.pick))
    );

    // K presses meanwhile neither cancel nor restart it.
    assert!(tui::press(&mut app, ch('l')).is_none());
    assert!(tui::press(&mut app, ch('l')).is_none());
    assert_eq!(app.settings.k, 10);
    assert_eq!(app.pending.as_ref().unwrap().id, building);
    assert!(!job.cancel.load(std::sync::atomic::Ordering::Relaxed));

    // When it finishes, the K chosen meanwhile is computed from what it built.
    let done = job.run(app.session, &mut |_, _, _| {}).unwrap();
    assert_eq!(done.settings.k, 8);
    let next = tui::update::finished(&mut app, done);
    // K 10 is among the curve's fits, so it is there at once, without another job.
    assert!(next.is_none());
    assert!(app.pending.is_none());
    assert_eq!(app.current().unwrap().bins(), 10);
    assert_matches_select(&app);
    // So is every K the curve fitted; beyond it, a fit of its own goes to the worker.
    assert!(tui::press(&mut app, ch('l')).is_none());
    assert_eq!(app.current().unwrap().bins(), 11);
    assert!(tui::press(&mut app, ch('l')).is_none());
    let beyond = tui::press(&mut app, ch('l'));
    assert!(matches!(beyond, Some(tui::update::Effect::Compute(_))));
    tui::settle(&mut app, beyond);
    assert_eq!(app.current().unwrap().bins(), 13);
    assert_matches_select(&app);

    // A new method does cancel: its selectors are different ones.
    let Some(tui::update::Effect::Compute(first)) = tui::press(&mut app, ch('p')) else {
        panic!("a new pick builds selectors");
    };
    let _ = tui::press(&mut app, ch('p'));
    assert!(first.cancel.load(std::sync::atomic::Ordering::Relaxed));
}

#[test]
fn k_means_at_a_fixed_k_shows_its_selection_before_the_curve() {
    let session = sample_session(fixed(6, 10));
    let mut app = started(&session);
    let job = switch_to_kmeans(&mut app);
    let id = job.id;
    let mut early = Vec::new();
    let mut curve_reports_before_it = None;
    let curve_reports = std::cell::Cell::new(0);
    let done = job
        .run_with_interim(
            &session,
            &mut |label, _, _| {
                if label == tui::compute::CURVE {
                    curve_reports.set(curve_reports.get() + 1);
                }
            },
            &mut |selection, plan| {
                assert!(plan.is_none(), "a fixed K without --samples: no plan");
                early.push(selection);
                curve_reports_before_it.get_or_insert(curve_reports.get());
            },
        )
        .unwrap();
    assert_eq!(early.len(), 1);
    assert_eq!(
        curve_reports_before_it,
        Some(0),
        "sent before the curve's first fit"
    );
    // Shown at once, while the job still counts as running; then the job's own result.
    let settings = app.settings;
    tui::update::interim(&mut app, id, settings, early.pop().unwrap(), None);
    assert!(app.pending.is_some());
    assert_matches_select(&app);
    assert!(app.curve().is_none(), "the curve is still to come");
    tui::update::finished(&mut app, done);
    assert!(app.pending.is_none());
    assert_eq!(app.curve().unwrap().len(), 10);
    assert_matches_select(&app);

    // A late one, for settings the user has left (K 6 after moving to 7), is not shown.
    let at_six = app.current().unwrap().clone();
    press(&mut app, ch('l'));
    assert_eq!(app.current().unwrap().bins(), 7);
    tui::update::interim(&mut app, id, settings, at_six, None);
    assert_eq!(app.current().unwrap().bins(), 7);
}

fn ctrl(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
}

#[test]
fn esc_goes_back_and_never_quits() {
    let session = sample_session(fixed(8, 16));
    let mut app = started(&session);
    // In the table, Esc leaves it for the overview.
    press(&mut app, key(KeyCode::Tab));
    assert_eq!(app.view, View::SeqPoints);
    press(&mut app, key(KeyCode::Esc));
    assert_eq!(app.view, View::Overview);
    assert!(!app.quit, "Esc in the table quit the explorer");
    // On the overview there is nowhere to go back to: it says how to quit instead.
    press(&mut app, key(KeyCode::Esc));
    assert!(!app.quit);
    let said = app.status.as_ref().map(|s| s.text.clone()).unwrap();
    assert!(said.contains("q quits"), "{said}");
    // In every popup it closes the popup, nothing more.
    for opener in [ch('?'), ch('y'), ch('i'), ch(':'), ch('e')] {
        press(&mut app, key(KeyCode::Tab));
        press(&mut app, opener);
        assert_ne!(app.overlay, Overlay::None, "{opener:?}");
        press(&mut app, key(KeyCode::Esc));
        assert_eq!(app.overlay, Overlay::None, "{opener:?}");
        assert_eq!(app.view, View::SeqPoints, "{opener:?}: Esc closed more");
        press(&mut app, key(KeyCode::Esc));
        assert!(!app.quit);
    }
    press(&mut app, ch('q'));
    assert!(app.quit);
}

#[test]
fn ctrl_z_asks_the_run_loop_to_suspend_from_anywhere() {
    let session = sample_session(fixed(3, 4));
    for opener in [None, Some(ch('e')), Some(ch(':')), Some(ch('?'))] {
        let mut app = started(&session);
        if let Some(k) = opener {
            press(&mut app, k);
        }
        press(&mut app, ctrl('z'));
        assert!(app.suspend, "{opener:?}");
        assert!(!app.quit);
    }
}

/// A run and a compare log as real files in a folder of their own.
fn logs_in(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let run = dir.join("run.csv");
    let compare = dir.join("run_new.csv");
    std::fs::copy("tests/data/speech_t1.csv", &run).unwrap();
    std::fs::copy("tests/data/speech_t2.csv", &compare).unwrap();
    (run, compare)
}

fn file_session(run: &Path, compare: &Path) -> tui::Session {
    let load = seqpoint::LoadOptions {
        compare: Some(compare.display().to_string()),
        ..seqpoint::LoadOptions::default()
    };
    let log = seqpoint::load_run(&run.display().to_string(), &load).unwrap();
    tui::Session::new(run.display().to_string(), load, log, fixed(8, 16)).unwrap()
}

#[test]
fn an_export_never_targets_a_loaded_log_whatever_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let (run, compare) = logs_in(dir.path());
    let before = (
        std::fs::read(&run).unwrap(),
        std::fs::read(&compare).unwrap(),
    );
    let session = file_session(&run, &compare);
    let folder = dir.path().display().to_string();
    // `run` makes the CSV list `run.csv`: the run log. `run_new` the compare log; so does
    // `./run_new.json` (its CSV list); a symlink names the same file.
    std::os::unix::fs::symlink(&compare, dir.path().join("alias.csv")).unwrap();
    for (typed, input) in [
        (format!("{folder}/run"), &run),
        (format!("{folder}/run_new"), &compare),
        (format!("{folder}/./run_new.json"), &compare),
        (format!("{folder}/alias"), &compare),
    ] {
        let mut app = started(&session);
        press(&mut app, ch('e'));
        press(&mut app, ctrl('u'));
        type_text(&mut app, &typed);
        press(&mut app, key(KeyCode::Enter));
        let status = app.status.clone().expect("a message");
        assert!(status.error, "{typed}: {status:?}");
        assert!(
            status.text.contains("loaded input log"),
            "{typed}: {}",
            status.text
        );
        assert!(
            status.text.contains(&input.display().to_string()),
            "{typed}: the message names the input: {}",
            status.text
        );
        // No overwrite question: `y` can never write over it.
        match &app.overlay {
            Overlay::Export(prompt) => assert!(prompt.confirm.is_none(), "{typed}"),
            other => panic!("{typed}: {other:?}"),
        }
        press(&mut app, ch('y'));
        press(&mut app, key(KeyCode::Enter));
    }
    assert_eq!(std::fs::read(&run).unwrap(), before.0);
    assert_eq!(std::fs::read(&compare).unwrap(), before.1);
    // Any other name is written as asked.
    let mut app = started(&session);
    press(&mut app, ch('e'));
    press(&mut app, ctrl('u'));
    type_text(&mut app, &format!("{folder}/picked.json"));
    press(&mut app, key(KeyCode::Enter));
    assert!(app.status.as_ref().is_some_and(|s| !s.error));
    assert!(dir.path().join("picked.csv").exists());
}

#[test]
fn while_the_terminal_is_too_small_only_quit_acts() {
    let session = sample_session(fixed(8, 16));
    let mut app = started(&session);
    let text = crate::common::frame(&mut app, 59, 40);
    assert!(text.contains("too small"), "{text}");
    for k in [
        key(KeyCode::Tab),
        ch('?'),
        ch('l'),
        ch('e'),
        ch(':'),
        key(KeyCode::Esc),
    ] {
        press(&mut app, k);
    }
    assert_eq!(app.view, View::Overview);
    assert_eq!(app.overlay, Overlay::None);
    assert_eq!(app.settings.k, 8);
    // Back to a size that fits: keys act again.
    crate::common::frame(&mut app, 60, 16);
    press(&mut app, ch('l'));
    assert_eq!(app.settings.k, 9);
    crate::common::frame(&mut app, 80, 15);
    press(&mut app, ch('q'));
    assert!(app.quit, "q quits even while the message shows");
}

#[test]
fn page_keys_move_by_the_rows_on_screen_and_g_goes_to_the_ends() {
    let session = sample_session(fixed(60, 64));
    let mut app = started(&session);
    press(&mut app, key(KeyCode::Tab));
    let text = crate::common::frame(&mut app, 120, 40);
    let page = app.page_rows.expect("the table was drawn");
    // As many as the SeqPoint rows on screen (they start with their id after the border).
    let rows = text
        .lines()
        .filter(|l| l.starts_with("\"│") && l.chars().nth(5).is_some_and(|c| c.is_ascii_digit()))
        .count();
    assert_eq!(page, rows, "{text}");
    assert!(
        page > 10,
        "a 40-row terminal shows more than 10 rows: {page}"
    );
    press(&mut app, key(KeyCode::PageDown));
    assert_eq!(app.table.selected(), Some(page));
    press(&mut app, ch(' '));
    assert_eq!(app.table.selected(), Some(2 * page));
    press(&mut app, ch('b'));
    assert_eq!(app.table.selected(), Some(page));
    press(&mut app, ch('G'));
    assert_eq!(app.table.selected(), Some(59));
    press(&mut app, ch('g'));
    assert_eq!(app.table.selected(), Some(0));
    assert!(
        !app.log_scale,
        "g no longer toggles the hidden histogram's scale"
    );
}

#[test]
fn capital_h_and_l_move_k_by_ten() {
    let session = sample_session(fixed(40, 64));
    let mut app = started(&session);
    press(&mut app, ch('H'));
    assert_eq!(app.settings.k, 30);
    assert_matches_select(&app);
    press(&mut app, ch('L'));
    press(&mut app, ch('L'));
    assert_eq!(app.settings.k, 50);
    for _ in 0..10 {
        press(&mut app, ch('H'));
    }
    assert_eq!(app.settings.k, 1);
}

fn command(app: &mut App, line: &str) {
    press(app, ch(':'));
    type_text(app, line);
    press(app, key(KeyCode::Enter));
}

#[test]
fn the_command_line_sets_what_keys_would_and_explains_mistakes_in_place() {
    let session = sample_session(SelectOptions::default());
    let mut app = started(&session);
    command(&mut app, "k 8");
    assert_eq!(app.overlay, Overlay::None);
    assert!(!app.settings.auto);
    assert_eq!(app.settings.k, 8);
    assert_matches_select(&app);
    command(&mut app, "method quantile");
    command(&mut app, "pick median");
    assert_eq!(
        (app.settings.method, app.settings.pick),
        (Method::Quantile, Pick::Median)
    );
    assert_matches_select(&app);
    command(&mut app, "target 0.5");
    command(&mut app, "auto");
    assert!(app.settings.auto);
    assert_eq!(app.settings.target_pct, 0.5);
    assert_matches_select(&app);

    // A mistake stays on the command line, said in place; typing goes on from it.
    command(&mut app, "k 0");
    match &app.overlay {
        Overlay::CommandLine(prompt) => {
            assert!(prompt.error.as_deref().unwrap().contains("at least 1"));
            assert_eq!(prompt.input, "k 0");
        }
        other => panic!("{other:?}"),
    }
    press(&mut app, key(KeyCode::Esc));
    // A range that is not one is said in place.
    let before = app.settings;
    command(&mut app, "exclude 420-0");
    match &app.overlay {
        Overlay::CommandLine(prompt) => {
            assert!(prompt.error.as_deref().unwrap().contains("reversed"))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(app.settings, before);
    assert!(app.restart.is_none());
    press(&mut app, key(KeyCode::Esc));

    // Tab completes.
    press(&mut app, ch(':'));
    type_text(&mut app, "ta");
    press(&mut app, key(KeyCode::Tab));
    match &app.overlay {
        Overlay::CommandLine(prompt) => assert_eq!(prompt.input, "target "),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_session_option_restarts_over_the_same_log_keeping_the_settings() {
    let session = sample_session(fixed(8, 16));
    let mut app = started(&session);
    command(&mut app, "samples 2");
    let (base, ask) = app.restart.clone().expect("a restart with the new options");
    assert_eq!(base.samples, 2);
    assert_eq!(ask.samples, Some(2));
    // What the run loop does with it. The restarted session reads the same rows: the log is
    // shared, not copied, so restarts do not grow memory by a run each.
    let next = session.with_options(base, ask).unwrap();
    assert!(std::sync::Arc::ptr_eq(&session.log, &next.log));
    let mut fresh = App::new(&next, false);
    fresh.carry_from(&app);
    // M changes every interval of the curve: it is prepared again.
    assert!(fresh.curve().is_none());
    let effect = tui::update::recompute(&mut fresh);
    tui::settle(&mut fresh, effect);
    assert_eq!(fresh.settings, app.settings);
    assert!(fresh
        .session
        .command(&fresh.settings)
        .contains("--samples 2"));
    assert_matches_select(&fresh);
    // The strata must exist in the run; a wrong one is said in place.
    let mut app = started(&session);
    command(&mut app, "strata phases:0");
    assert!(app.restart.is_none());
    assert!(matches!(&app.overlay, Overlay::CommandLine(p) if p.error.is_some()));
}

#[test]
fn o_orders_the_table_and_slash_finds_a_seqpoint() {
    let session = sample_session(fixed(12, 16));
    let mut app = started(&session);
    press(&mut app, key(KeyCode::Tab));
    let seqpoints = app.current().unwrap().seqpoints.clone();
    press(&mut app, key(KeyCode::Down));
    let before = app.selected_seqpoint();
    // Iteration, then key, then weight: each a real order, the selection kept.
    press(&mut app, ch('o'));
    let rows: Vec<u64> = app
        .row_order()
        .iter()
        .map(|&i| seqpoints[i].iteration)
        .collect();
    assert!(rows.windows(2).all(|w| w[0] <= w[1]), "{rows:?}");
    assert_eq!(app.selected_seqpoint(), before);
    press(&mut app, ch('o'));
    press(&mut app, ch('o'));
    let weights: Vec<u64> = app
        .row_order()
        .iter()
        .map(|&i| seqpoints[i].weight)
        .collect();
    assert!(weights.windows(2).all(|w| w[0] >= w[1]), "{weights:?}");
    assert_eq!(app.selected_seqpoint(), before);

    // `/` and an iteration: that SeqPoint is selected, whatever its row.
    let target = &seqpoints[7];
    press(&mut app, ch('/'));
    type_text(&mut app, &target.iteration.to_string());
    press(&mut app, key(KeyCode::Enter));
    assert_eq!(app.overlay, Overlay::None);
    assert_eq!(app.selected_seqpoint(), Some(7));
    // A key finds its SeqPoint too; nothing found is said in place.
    press(&mut app, ch('/'));
    type_text(&mut app, &seqpoint::groups::key_text(&seqpoints[3].key));
    press(&mut app, key(KeyCode::Enter));
    assert_eq!(app.selected_seqpoint(), Some(3));
    // Nothing found closes the prompt and says why on its line; the selection stays.
    press(&mut app, ch('/'));
    type_text(&mut app, "999999");
    press(&mut app, key(KeyCode::Enter));
    assert_eq!(app.overlay, Overlay::None);
    let status = app.status.clone().expect("the failed search is said");
    assert!(status.error && status.text.contains("999999"), "{status:?}");
    assert_eq!(app.selected_seqpoint(), Some(3));
}

fn search(app: &mut App, text: &str) {
    press(app, ch('/'));
    type_text(app, text);
    press(app, key(KeyCode::Enter));
}

/// The SeqPoints whose bin's key range holds `key` (1-D bins are contiguous ranges of sorted
/// lengths), among those of a stratum that has the key: an oracle written apart from the
/// search, which goes by key groups.
fn holding(app: &App, key: u32) -> Vec<usize> {
    let seqpoints = &app.current().unwrap().seqpoints;
    (0..seqpoints.len())
        .filter(|&i| {
            let sp = &seqpoints[i];
            let groups = &app.session.strata.groups[sp.stratum.unwrap_or(0)];
            groups.group_of(&[key]).is_some() && sp.bin_min[0] <= key && key <= sp.bin_max[0]
        })
        .collect()
}

#[test]
fn slash_finds_any_iteration_in_the_bin_it_falls_in() {
    let session = sample_session(fixed(8, 16));
    let mut app = started(&session);
    let seqpoints = app.current().unwrap().seqpoints.clone();
    let log = &session.log;
    // Iterations no SeqPoint lists (neither picked nor an alternate): most of the run.
    let unlisted: Vec<usize> = (0..log.len())
        .filter(|&r| {
            let n = log.iteration(r);
            seqpoints
                .iter()
                .all(|sp| sp.iteration != n && !sp.alternates.contains(&n))
        })
        .collect();
    assert!(unlisted.len() > log.len() / 2);
    // Every 37th of them, so both ends of the run and every bin are tried.
    for &row in unlisted.iter().step_by(37) {
        let n = log.iteration(row);
        let want = holding(&app, log.key(row)[0]);
        assert_eq!(want.len(), 1, "iteration {n}");
        search(&mut app, &n.to_string());
        assert_eq!(app.overlay, Overlay::None, "iteration {n}");
        assert_eq!(app.selected_seqpoint(), Some(want[0]), "iteration {n}");
        let said = app.status.clone().unwrap();
        assert!(!said.error, "{said:?}");
        let id = seqpoints[want[0]].id;
        assert!(
            said.text.contains(&format!("iteration {n} "))
                && said.text.contains(&format!("falls in SeqPoint {id}'s bin")),
            "{said:?}"
        );
    }
}

#[test]
fn n_and_capital_n_step_through_the_matches_of_the_last_search() {
    // Per epoch, a key seen in every epoch is in one bin of each: three matches.
    let session = sample_session(SelectOptions {
        strata: seqpoint::select::Strata::Epoch,
        ..fixed(4, 16)
    });
    let mut app = started(&session);
    let strata = &session.strata.groups;
    assert_eq!(strata.len(), 3);
    // A length past the last iteration, so it reads as a key, not an iteration.
    let last = session.log.iteration(session.log.len() - 1);
    let key = (0..strata[0].len())
        .map(|g| strata[0].key(g)[0])
        .find(|&k| u64::from(k) > last && strata.iter().all(|s| s.group_of(&[k]).is_some()))
        .expect("a long key seen in every epoch");
    let want = holding(&app, key);
    assert_eq!(want.len(), 3, "one bin per epoch holds {key}");
    // Found in the table's order; n goes on round the end, N goes back.
    search(&mut app, &key.to_string());
    let at = |app: &App| app.selected_seqpoint().unwrap();
    assert_eq!(at(&app), want[0]);
    assert!(app.status.as_ref().unwrap().text.contains("3 matches"));
    let mut visited = vec![at(&app)];
    for _ in 0..3 {
        press(&mut app, ch('n'));
        visited.push(at(&app));
    }
    assert_eq!(visited, [want[0], want[1], want[2], want[0]]);
    assert!(app.status.as_ref().unwrap().text.contains("match 1 of 3"));
    press(&mut app, ch('N'));
    assert_eq!(at(&app), want[2]);
    press(&mut app, ch('N'));
    assert_eq!(at(&app), want[1]);
    // Before any search, n says how to start one.
    let mut fresh = started(&session);
    press(&mut fresh, ch('n'));
    assert!(fresh.status.as_ref().unwrap().text.contains("/ finds"));
}

#[test]
fn up_and_down_on_the_command_line_recall_the_lines_entered() {
    let session = sample_session(fixed(8, 16));
    let mut app = started(&session);
    command(&mut app, "k 5");
    command(&mut app, "target 0.5");
    // A refused line is recalled too, to be mended.
    command(&mut app, "k 0");
    press(&mut app, key(KeyCode::Esc));
    let input = |app: &App| match &app.overlay {
        Overlay::CommandLine(p) => (p.input.clone(), p.cursor),
        other => panic!("{other:?}"),
    };
    press(&mut app, ch(':'));
    type_text(&mut app, "me");
    press(&mut app, key(KeyCode::Up));
    assert_eq!(input(&app), ("k 0".into(), 3));
    press(&mut app, key(KeyCode::Up));
    assert_eq!(input(&app).0, "target 0.5");
    press(&mut app, key(KeyCode::Up));
    press(&mut app, key(KeyCode::Up));
    // The oldest stays at the top.
    assert_eq!(input(&app).0, "k 5");
    press(&mut app, key(KeyCode::Down));
    assert_eq!(input(&app).0, "target 0.5");
    press(&mut app, key(KeyCode::Down));
    press(&mut app, key(KeyCode::Down));
    // Down past the latest gives back what was being typed.
    assert_eq!(input(&app), ("me".into(), 2));
    press(&mut app, key(KeyCode::Down));
    assert_eq!(input(&app).0, "me");
    // A recalled line runs as typed.
    press(&mut app, key(KeyCode::Up));
    press(&mut app, key(KeyCode::Up));
    press(&mut app, key(KeyCode::Up));
    press(&mut app, key(KeyCode::Enter));
    assert_eq!(app.overlay, Overlay::None);
    assert_eq!(app.settings.k, 5);
    assert_matches_select(&app);
    // The history outlives a restart of the session.
    command(&mut app, "samples 2");
    let next = restarted(&app);
    let fresh = follow(&app, &next);
    assert_eq!(fresh.commands.last().map(String::as_str), Some("samples 2"));
    assert_eq!(fresh.commands.len(), 5);
}

#[test]
fn u_undoes_setting_changes_one_at_a_time() {
    let session = sample_session(fixed(8, 16));
    let mut app = started(&session);
    let start = app.settings;
    press(&mut app, ch('l'));
    press(&mut app, ch('m'));
    let after_two = app.settings;
    command(&mut app, "k 3");
    assert_eq!(app.settings.k, 3);
    // Keys that change no setting are not undone.
    press(&mut app, key(KeyCode::Tab));
    press(&mut app, ch('u'));
    assert_eq!(app.settings, after_two);
    assert_matches_select(&app);
    press(&mut app, ch('u'));
    press(&mut app, ch('u'));
    assert_eq!(app.settings, start);
    assert_matches_select(&app);
    press(&mut app, ch('u'));
    assert!(app
        .status
        .as_ref()
        .is_some_and(|s| s.text.contains("nothing to undo")));
    assert_eq!(app.settings, start);
}

#[test]
fn by_default_a_target_shows_the_cheapest_plan_select_gives() {
    let session = sample_session(SelectOptions::default());
    let app = started(&session);
    assert!(app.settings.auto);
    assert_matches_select(&app);
    let shown = app.current_shown().unwrap();
    let plan = shown.plan.as_ref().expect("the target's cheapest plan");
    assert_eq!(plan.rule, PlanRule::Target(1.0));
    // What is shown is the plan's: its iterations and its projection.
    assert_eq!(shown.iterations(), plan.iterations());
    assert_eq!(shown.projection(), &plan.projection);
    assert_eq!(shown.target_met(), plan.met);
    // `:samples 1` forces one per SeqPoint: auto-K's own selection, no plan.
    let mut app = app;
    command(&mut app, "samples 1");
    let next = restarted(&app);
    let app = follow(&app, &next);
    assert!(app.current_shown().unwrap().plan.is_none());
    assert!(app.current().unwrap().target.is_some());
    assert_matches_select(&app);
    assert!(app.session.command(&app.settings).ends_with("--samples 1"));
}

#[test]
fn plan_and_budget_commands_give_selects_plans() {
    // K up to 32, not 64: the commands and their plans are the question, not how far the
    // search reaches (half the plan searches an unoptimised build makes here).
    let session = sample_session(fixed(8, 32));
    let mut app = started(&session);
    command(&mut app, "plan");
    assert!(app.settings.auto, "the plan chooses K");
    let next = restarted(&app);
    let mut app = follow(&app, &next);
    assert_eq!(
        app.current_shown().unwrap().plan.as_ref().unwrap().rule,
        PlanRule::Target(1.0)
    );
    assert_matches_select(&app);
    assert!(app.session.command(&app.settings).contains("--plan"));

    // A budget draws over each bin, so its bins are those of plans (not one pick's).
    command(&mut app, "budget 80");
    let after = restarted(&app);
    let mut app = follow(&app, &after);
    let plan = app.current_shown().unwrap().plan.clone().unwrap();
    assert_eq!(plan.rule, PlanRule::Budget(80));
    assert_eq!(plan.iterations(), 80);
    assert_matches_select(&app);
    command(&mut app, "budget 100");
    let after = restarted(&app);
    // Only the budget changed: the prepared selectors and curve carry over (no second
    // preparation, as fast as `select`).
    let mut carried = App::new(&after, false);
    carried.carry_from(&app);
    assert!(
        carried.curve().is_some(),
        "the prepared selectors carry over"
    );
    let mut app = follow(&app, &after);
    assert_eq!(
        app.current_shown()
            .unwrap()
            .plan
            .as_ref()
            .unwrap()
            .iterations(),
        100
    );
    assert_matches_select(&app);

    // A K set by hand leaves `--plan` (which chooses K itself), as `--bins` conflicts with it.
    command(&mut app, "plan");
    let planned = restarted(&app);
    let mut app = follow(&app, &planned);
    command(&mut app, "k 8");
    let (_, ask) = app.restart.clone().unwrap();
    assert!(!ask.plan);
    let unplanned = restarted(&app);
    let app = follow(&app, &unplanned);
    assert_eq!(app.settings.k, 8);
    assert!(!app.session.command(&app.settings).contains("--plan"));
    assert_matches_select(&app);
    // So does `a` leaving auto-K.
    let mut app = started(&planned);
    press(&mut app, ch('a'));
    assert!(!app.settings.auto);
    assert!(!app.restart.clone().unwrap().1.plan);
}

/// Export at the app's settings and compare with `select --format json` for its command.
fn export_equals_select(app: &mut App, dir: &Path, name: &str) -> String {
    let path = dir.join(format!("{name}.json"));
    export_to(app, &path);
    let json = std::fs::read_to_string(&path).unwrap();
    let csv = std::fs::read_to_string(dir.join(format!("{name}.csv"))).unwrap();
    let (without_command, command) = split_command(&json);
    assert_eq!(command, app.session.command(&app.settings));
    assert_select_json(app, &without_command, &command);
    assert_eq!(csv, select_output(&command, "csv"), "{command}");
    json
}

#[test]
fn exports_of_plans_are_selects_bytes() {
    let dir = tempfile::tempdir().unwrap();
    // The target's cheapest plan, over K up to 32 (the export records `--max-bins 32`):
    // the bytes are the question; K up to 64 made this search 50 times longer in an
    // unoptimised build.
    let session = sample_session(SelectOptions {
        max_bins: 32,
        ..SelectOptions::default()
    });
    let mut app = started(&session);
    let json = export_equals_select(&mut app, dir.path(), "default");
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    let shown = app.current_shown().unwrap();
    assert_eq!(
        doc["iterations_to_profile"].as_u64(),
        Some(shown.iterations())
    );
    assert_eq!(doc["selection"]["target_error_pct"].as_f64(), Some(1.0));
    // `:budget 80` and `:samples 1`.
    command(&mut app, "budget 80");
    let budget = restarted(&app);
    let mut app = follow(&app, &budget);
    export_equals_select(&mut app, dir.path(), "budget");
    command(&mut app, "samples 1");
    let one = restarted(&app);
    let mut app = follow(&app, &one);
    export_equals_select(&mut app, dir.path(), "one");
}

#[test]
fn exclude_leaves_iterations_out_as_select_does() {
    let dir = tempfile::tempdir().unwrap();
    // A fixed K, three samples per SeqPoint and a short error curve: the exclusion is the
    // question, and a plan of repeated samples must leave it out as the default search's
    // plans would, without searching every K up to 64 twice in an unoptimised build.
    let session = sample_session(SelectOptions {
        samples: 3,
        ..fixed(12, 16)
    });
    let mut app = started(&session);
    command(&mut app, "exclude 0-99");
    let next = restarted(&app);
    let mut app = follow(&app, &next);
    assert_eq!(app.session.base.exclude.texts(), ["0-99"]);
    // No SeqPoint and no planned iteration in the range; the totals leave it out.
    let shown = app.current_shown().unwrap();
    assert!(shown.selection.seqpoints.iter().all(|sp| sp.iteration > 99));
    let log = &app.session.log;
    let planned = shown
        .plan
        .as_ref()
        .unwrap()
        .bins
        .iter()
        .flat_map(|b| &b.rows);
    assert!(planned.into_iter().all(|&r| log.iteration(r as usize) > 99));
    assert_matches_select(&app);
    let json = export_equals_select(&mut app, dir.path(), "excluded");
    assert!(json.contains("--exclude 0-99"), "the command records it");
    // A second range adds to the first.
    command(&mut app, "exclude 300-309");
    let (base, _) = app.restart.clone().unwrap();
    assert_eq!(base.exclude.texts(), ["0-99", "300-309"]);
}

#[test]
fn metric_reads_the_log_again_with_that_column() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.csv");
    let mut text = String::from("iteration,seq_len,time_ms,energy_j\n");
    for i in 0..200u64 {
        let len = 100 + (i * 37) % 400;
        text.push_str(&format!(
            "{i},{len},{},{}\n",
            len as f64 * 1.5,
            900.0 - len as f64
        ));
    }
    std::fs::write(&run, text).unwrap();
    let load = seqpoint::LoadOptions::default();
    let path = run.display().to_string();
    let log = seqpoint::load_run(&path, &load).unwrap();
    let session = tui::Session::new(path, load, log, fixed(6, 16)).unwrap();
    let mut app = started(&session);
    command(&mut app, "metric energy_j");
    let load = app.reload.clone().expect("the log is read again");
    assert_eq!(load.metrics, ["energy_j"]);
    let (base, ask) = app.restart.clone().unwrap();
    let next = app
        .session
        .reloaded(load, base, ask, &Default::default())
        .unwrap();
    let app = follow(&app, &next);
    assert_eq!(app.session.log.metric_names(), ["energy_j"]);
    assert!(app
        .session
        .command(&app.settings)
        .contains("--metric energy_j"));
    assert_matches_select(&app);
    // A column the log does not have: the loader's message, nothing changes.
    let mut load = app.session.load.clone();
    load.metrics = vec!["watts".into()];
    let (base, ask) = (app.session.base.clone(), app.session.ask);
    let e = app
        .session
        .reloaded(load, base, ask, &Default::default())
        .err()
        .unwrap();
    assert!(e.contains("watts"), "{e}");
}

#[test]
fn on_opening_the_targets_plan_is_shown_before_the_curve_is_built() {
    let session = sample_session(SelectOptions::default());
    let mut app = App::new(&session, false);
    let Some(tui::update::Effect::Compute(job)) = tui::update::recompute(&mut app) else {
        panic!("the first result is a job")
    };
    let id = job.id;
    let settings = job.settings;
    let labels = std::cell::RefCell::new(Vec::new());
    let mut early = Vec::new();
    let done = job
        .run_with_interim(
            &session,
            &mut |label, _, _| {
                // Each stage once, however often it tells how far it is.
                if labels.borrow().last() != Some(&label) {
                    labels.borrow_mut().push(label);
                }
            },
            &mut |selection, plan| {
                // Nothing of the selectors' table or curve was made before it.
                assert_eq!(*labels.borrow(), [tui::compute::PLANNING]);
                early.push((selection, plan));
            },
        )
        .unwrap();
    assert_eq!(early.len(), 1, "the plan is sent once, ahead of the curve");
    let (selection, plan) = early.pop().unwrap();
    tui::update::interim(&mut app, id, settings, selection, plan);
    assert!(app.pending.is_some(), "the curve is still to come");
    assert_matches_select(&app);
    let before = app.current_shown().unwrap().plan.clone();
    tui::update::finished(&mut app, done);
    assert_eq!(
        app.current_shown().unwrap().plan,
        before,
        "the job ends with the plan already shown"
    );
    assert!(app.curve().is_some());
    assert_matches_select(&app);
}

#[test]
fn a_target_change_while_the_first_plan_is_made_supersedes_it() {
    let session = sample_session(SelectOptions::default());
    let mut app = App::new(&session, false);
    let Some(tui::update::Effect::Compute(first)) = tui::update::recompute(&mut app) else {
        panic!("the first result is a job")
    };
    assert_eq!(app.pending.as_ref().unwrap().label, tui::compute::PLANNING);
    // The plan for the old target is not worth finishing: the job is told to stop, and a
    // stopped job gives nothing.
    let Some(tui::update::Effect::Compute(second)) = tui::press(&mut app, ch('T')) else {
        panic!("the new target's plan is a new job")
    };
    assert!(first.cancel.load(std::sync::atomic::Ordering::Relaxed));
    assert!(first.run(&session, &mut |_, _, _| {}).is_none());
    assert_eq!(app.pending.as_ref().unwrap().id, second.id);
    tui::settle(&mut app, Some(tui::update::Effect::Compute(second)));
    assert!(app.pending.is_none());
    assert_ne!(app.settings.target_pct, 1.0);
    // The plan shown is the new target's, as `select` makes it.
    assert!(app.current_shown().unwrap().plan.is_some());
    assert_matches_select(&app);
}

#[test]
fn a_curve_carried_over_a_restart_gets_its_naive_baselines() {
    let session = sample_session(SelectOptions {
        bins: BinCount::Fixed(8),
        ..SelectOptions::default()
    });
    let app = started(&session);
    let full = |app: &App| {
        let len = app.curve().unwrap().len();
        let series = app.baselines();
        series.len() == 2 && series.iter().all(|s| s.points.len() == len)
    };
    assert!(full(&app));
    // The same log and options again (as `:plan` off and on would): the prepared curve is
    // carried over at once, and its baselines, kept per session, are made again.
    let next = session
        .with_options(session.base.clone(), session.ask)
        .unwrap();
    let mut fresh = App::new(&next, false);
    fresh.carry_from(&app);
    let effect = tui::update::recompute(&mut fresh);
    assert!(matches!(
        effect,
        Some(tui::update::Effect::FillBaselines(_))
    ));
    assert!(fresh.current().is_some(), "the result is shown before them");
    assert!(!full(&fresh));
    tui::settle(&mut fresh, effect);
    assert!(full(&fresh));
    assert_eq!(fresh.baselines(), app.baselines());
}

/// The `:` line's message in place, or a failure naming what is open instead.
fn command_line_error(app: &App) -> (String, String) {
    match &app.overlay {
        Overlay::CommandLine(prompt) => (
            prompt.input.clone(),
            prompt.error.clone().expect("a message under the line"),
        ),
        other => panic!("the command line is not open with its error: {other:?}"),
    }
}

#[test]
fn a_command_that_takes_no_value_refuses_one_in_place() {
    let session = sample_session(fixed(8, 16));
    let mut app = started(&session);
    let before = app.settings;
    // `:auto 5` read as `:auto` would switch auto-K on at the old target, dropping the 5.
    command(&mut app, "auto 5");
    let (line, error) = command_line_error(&app);
    assert_eq!(line, "auto 5");
    assert!(error.contains("takes no value"), "{error}");
    assert!(error.contains(":target 5"), "{error}");
    assert_eq!(app.settings, before);
    press(&mut app, key(KeyCode::Esc));
    // `:plan x` would restart the session with a plan, dropping the x.
    command(&mut app, "plan x");
    let (_, error) = command_line_error(&app);
    assert!(error.contains(":plan takes no value"), "{error}");
    assert!(app.restart.is_none());
    assert_eq!(app.settings, before);
    // Without a value both still work.
    press(&mut app, key(KeyCode::Esc));
    command(&mut app, "auto");
    assert_eq!(app.overlay, Overlay::None);
    assert!(app.settings.auto);
}

#[test]
fn a_metric_the_log_lacks_is_said_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run.csv");
    let mut text = String::from("iteration,seq_len,time_ms\n");
    for i in 0..120u64 {
        let len = 100 + (i * 37) % 400;
        text.push_str(&format!("{i},{len},{}\n", len as f64 * 1.5));
    }
    std::fs::write(&run, text).unwrap();
    let load = seqpoint::LoadOptions::default();
    let path = run.display().to_string();
    let log = seqpoint::load_run(&path, &load).unwrap();
    let session = tui::Session::new(path, load, log, fixed(6, 16)).unwrap();
    let mut app = started(&session);
    let before = app.settings;
    command(&mut app, "metric watts");
    // The log is read again off the UI thread (as the run loop does), and refuses.
    let load = app.reload.take().expect("the log is read again");
    let (base, ask) = app.restart.take().unwrap();
    let error = app
        .session
        .reloaded(load, base, ask, &Default::default())
        .err()
        .unwrap();
    let effect = tui::update::refused_restart(&mut app, error.clone());
    tui::settle(&mut app, effect);
    // The line opens again with the loader's reason under it, to be corrected in place.
    let (line, said) = command_line_error(&app);
    assert_eq!(line, "metric watts");
    assert_eq!(said, error);
    assert!(said.contains("watts"), "{said}");
    assert_eq!(app.session.log.metric_names(), ["time_ms"]);
    assert_eq!(app.settings, before);
    assert_matches_select(&app);
    // Corrected in place and sent again: a working column restarts as asked.
    press(
        &mut app,
        KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL),
    );
    type_text(&mut app, "metric time_ms");
    press(&mut app, key(KeyCode::Enter));
    assert_eq!(app.overlay, Overlay::None);
    assert!(app.reload.is_some());
}

#[test]
fn y_for_a_piped_log_copies_a_command_that_says_where_the_log_goes() {
    let load = seqpoint::LoadOptions::default();
    let log = seqpoint::load_run(seqpoint::runlog::sample::SAMPLE_NAME, &load).unwrap();
    let session = tui::Session::new("-".into(), load, log, fixed(8, 16)).unwrap();
    let mut app = started(&session);
    let Some(tui::update::Effect::Clipboard(copied)) = tui::press(&mut app, ch('y')) else {
        panic!("y copies the command")
    };
    // Pasted as it was, `seqpoint select -` would wait for a log typed on the terminal.
    let command = session.command(&app.settings);
    assert!(command.starts_with("seqpoint select - "), "{command}");
    assert_eq!(copied, format!("cat LOG | {command}"));
    let screen = crate::common::frame(&mut app, 140, 30);
    assert!(screen.contains(&copied), "{screen}");
    assert!(screen.contains("put its path for LOG"), "{screen}");
    // A named log is copied as it is.
    let named = sample_session(fixed(8, 16));
    let mut app = started(&named);
    let Some(tui::update::Effect::Clipboard(copied)) = tui::press(&mut app, ch('y')) else {
        panic!("y copies the command")
    };
    assert_eq!(copied, named.command(&app.settings));
}

#[test]
fn an_exclusion_is_grouped_off_the_ui_thread_and_its_refusal_reopens_the_line() {
    // Warm-up 300 and 300-449 left out: no iteration is left to pick, which only grouping
    // the run finds (364 ms on 10M rows on the UI thread before; the worker's work now).
    let session = sample_session(SelectOptions {
        warmup: 300,
        ..fixed(4, 16)
    });
    let mut app = started(&session);
    command(&mut app, "exclude 300-449");
    let (base, ask) = app
        .restart
        .take()
        .expect("the new session is built off the UI thread");
    let refused = match session.with_options(base, ask) {
        Err(e) => e.worded(seqpoint::options::Surface::Explorer),
        Ok(_) => panic!("nothing is left to pick"),
    };
    let effect = tui::update::refused_restart(&mut app, refused);
    tui::settle(&mut app, effect);
    match &app.overlay {
        Overlay::CommandLine(p) => {
            assert_eq!(p.input, "exclude 300-449");
            let e = p.error.as_deref().unwrap();
            assert!(e.contains("no iteration is left to pick"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    // Nothing changed, and nothing to undo.
    assert!(app.session.base.exclude.is_empty());
    assert_matches_select(&app);
    // `:strata` is handed off the same way; a strata the run lacks is still said at once.
    let mut app = started(&session);
    command(&mut app, "strata epoch");
    assert!(app.restart.is_some());
}
