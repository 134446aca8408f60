//! The explorer's equivalent command (`y`, and every export's record) for session options no
//! export test sets: `seqpoint select` accepts it and picks the SeqPoints the explorer shows.

use crate::common::{sample_session, started};
use seqpoint::select::plan::PlanAsk;
use seqpoint::select::{Exclusion, IterationRange};
use seqpoint::tui::App;
use seqpoint::{BinCount, SelectOptions, Strata, TargetRule};

fn fixed(k: usize) -> SelectOptions {
    SelectOptions {
        bins: BinCount::Fixed(k),
        ..SelectOptions::default()
    }
}

/// `select --format json` for the app's command: it must succeed.
fn select_json(command: &str) -> serde_json::Value {
    let words: Vec<&str> = command.split(' ').collect();
    assert_eq!(words[..2], ["seqpoint", "select"]);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_seqpoint"))
        .args(&words[1..])
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{command}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The command `select` accepts, and its SeqPoints and profiled iterations are the app's.
fn assert_select_agrees(app: &App) -> String {
    let command = app.session.command(&app.settings);
    let doc = select_json(&command);
    let shown = app.current_shown().expect("a result for the settings");
    let iterations: Vec<u64> = doc["seqpoints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|sp| sp["iteration"].as_u64().unwrap())
        .collect();
    let ours: Vec<u64> = shown
        .selection
        .seqpoints
        .iter()
        .map(|sp| sp.iteration)
        .collect();
    assert_eq!(iterations, ours, "{command}");
    assert_eq!(
        doc["iterations_to_profile"].as_u64(),
        Some(shown.iterations()),
        "{command}"
    );
    command
}

#[test]
fn the_equivalent_command_is_one_select_accepts_for_every_session_option() {
    let sessions = [
        SelectOptions {
            warmup: 10,
            seed: 7,
            ..fixed(5)
        },
        SelectOptions {
            strata: Strata::Epoch,
            ..fixed(3)
        },
        SelectOptions {
            exclude: Exclusion::default()
                .with(IterationRange { first: 0, last: 9 })
                .with(IterationRange {
                    first: 200,
                    last: 219,
                }),
            samples: 3,
            ..fixed(4)
        },
        // A target judged on the measured error alone: auto-K, one iteration per SeqPoint.
        SelectOptions {
            bins: BinCount::Target(3.0),
            target_by: TargetRule::Measured,
            max_bins: 20,
            ..SelectOptions::default()
        },
    ];
    let mut commands = Vec::new();
    for base in sessions {
        let session = sample_session(base);
        commands.push(assert_select_agrees(&started(&session)));
    }
    // Hand-checked: each session option is said in the command's own words.
    assert!(commands[0].contains("--warmup 10") && commands[0].contains("--seed 7"));
    assert!(commands[1].contains("--strata epoch"), "{}", commands[1]);
    assert!(
        commands[2].contains("--exclude 0-9 --exclude 200-219")
            && commands[2].contains("--samples 3"),
        "{}",
        commands[2]
    );
    assert!(commands[3].contains("--target-by measured --max-bins 20"));

    // `--samples 1` with a target: auto-K without the target's plan.
    let session = sample_session(fixed(4)).asking(PlanAsk {
        samples: Some(1),
        ..PlanAsk::default()
    });
    let mut app = started(&session);
    app.settings.auto = true;
    let effect = seqpoint::tui::update::recompute(&mut app);
    seqpoint::tui::settle(&mut app, effect);
    assert!(app.current_shown().unwrap().plan.is_none());
    let command = assert_select_agrees(&app);
    assert!(command.ends_with("--samples 1"), "{command}");
}

fn command(app: &mut App, line: &str) {
    use crate::common::{key, press, type_text};
    press(app, crate::common::ch(':'));
    type_text(app, line);
    press(app, key(ratatui::crossterm::event::KeyCode::Enter));
}

/// The error under the `:` prompt, when one is shown there.
fn in_place(app: &App) -> Option<String> {
    match &app.overlay {
        seqpoint::tui::app::Overlay::CommandLine(p) => p.error.clone(),
        _ => None,
    }
}

#[test]
fn a_budget_below_the_seqpoints_is_refused_in_place_and_changes_nothing() {
    let session = sample_session(fixed(6));
    let mut app = started(&session);
    command(&mut app, "budget 3");
    let error = in_place(&app).expect("said in place");
    assert!(
        error.starts_with(":budget 3: fewer than the 6 SeqPoints") && !error.contains("--"),
        "{error}"
    );
    assert!(app.restart.is_none() && app.history.is_empty());
}

#[test]
fn a_session_whose_first_result_fails_goes_back_to_the_options_before() {
    // What the run loop does when the budget was not known to be too small (no result yet):
    // the new session's first result fails, and it asks for the options before.
    let before = sample_session(fixed(6));
    let previous = started(&before).options_now();
    let session = sample_session(fixed(6)).asking(PlanAsk {
        budget: Some(3),
        ..PlanAsk::default()
    });
    let mut app = App::new(&session, false);
    app.fallback = Some(previous);
    let effect = seqpoint::tui::update::recompute(&mut app);
    seqpoint::tui::settle(&mut app, effect);
    let (base, ask) = app.restart.clone().expect("a restart back");
    assert_eq!(ask, PlanAsk::default());
    assert_eq!(base.bins, BinCount::Fixed(6));
    assert!(app.reverting, "going back gets no fallback of its own");
    let status = app.status.clone().unwrap();
    assert!(status.error, "{status:?}");
    assert!(
        status
            .text
            .starts_with(":budget 3: fewer than the 6 SeqPoints")
            && !status.text.contains("--"),
        "{}",
        status.text
    );
}

#[test]
fn u_undoes_a_session_option_and_exclude_none_takes_every_iteration_back() {
    let session = sample_session(fixed(6));
    let mut app = started(&session);
    command(&mut app, "seed 9");
    let (base, _) = app.restart.take().expect("a restart");
    assert_eq!(base.seed, 9);
    // `u` asks for the session as it was.
    seqpoint::tui::press(&mut app, crate::common::ch('u'));
    let (base, ask) = app.restart.take().expect("a restart back");
    assert_eq!((base.seed, ask), (session.base.seed, session.ask));
    assert!(app.history.is_empty());

    let excluded = sample_session(SelectOptions {
        exclude: Exclusion::default().with(IterationRange { first: 0, last: 99 }),
        ..fixed(6)
    });
    let mut app = started(&excluded);
    command(&mut app, "exclude none");
    let (base, _) = app.restart.take().expect("a restart");
    assert!(base.exclude.is_empty());
}

#[test]
fn ctrl_and_a_letter_is_never_the_letter() {
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use seqpoint::tui::app::Overlay;
    use seqpoint::tui::input::action_for;
    use seqpoint::tui::keymap::Action;
    for c in 'a'..='z' {
        let ctrl = KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL);
        let action = action_for(ctrl, &Overlay::None);
        let anywhere = [Action::Quit, Action::Suspend, Action::Redraw];
        assert!(
            action.is_none() || anywhere.contains(&action.unwrap()),
            "Ctrl-{c}: {action:?}"
        );
    }
    let session = sample_session(fixed(6));
    let mut app = started(&session);
    let ctrl = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL);
    seqpoint::tui::press(&mut app, ctrl('l'));
    assert!(app.redraw && app.settings.k == 6);
    seqpoint::tui::press(&mut app, ctrl('h'));
    assert_eq!(app.settings.k, 6);
    // In a prompt Ctrl-H is a Backspace.
    crate::common::press(&mut app, crate::common::ch(':'));
    crate::common::type_text(&mut app, "k 88");
    seqpoint::tui::press(&mut app, ctrl('h'));
    assert!(matches!(&app.overlay, Overlay::CommandLine(p) if p.input == "k 8"));
}

#[test]
fn k_steps_pressed_while_auto_k_searches_count_from_the_k_it_finds() {
    use seqpoint::tui::keymap::Action;
    use seqpoint::tui::update::update;
    // The default: a target, so auto-K with the target's plan, made on the worker.
    let session = sample_session(SelectOptions::default());
    let mut app = started(&session);
    let found = app.shown_k().unwrap();
    // Leave auto-K, then `a` and three `l` before its result lands.
    let effect = update(&mut app, Action::FewerBins);
    seqpoint::tui::settle(&mut app, effect);
    assert_eq!(app.settings.k, found - 1);
    let search = update(&mut app, Action::ToggleAuto);
    assert!(app.pending.is_some(), "auto-K searches on the worker");
    for _ in 0..3 {
        assert!(update(&mut app, Action::MoreBins).is_none());
    }
    assert!(app.settings.auto, "still waiting for auto-K");
    seqpoint::tui::settle(&mut app, search);
    assert!(!app.settings.auto);
    assert_eq!(app.settings.k, found + 3, "auto-K's K, then +3");
    assert_eq!(app.current().map(|s| s.seqpoints.len()), Some(found + 3));
    // `u` goes back to auto-K.
    let effect = update(&mut app, Action::Undo);
    seqpoint::tui::settle(&mut app, effect);
    assert!(app.settings.auto);
}

#[test]
fn a_target_met_by_luck_says_so_as_select_does() {
    use crate::common::{ch, frame, press};
    // Judged on the measured error alone, 1% is met at K = 1 with an error far below its
    // wide interval: `select` adds its note, so the screen must too.
    let session = sample_session(SelectOptions {
        bins: BinCount::Target(1.0),
        target_by: TargetRule::Measured,
        ..SelectOptions::default()
    });
    let mut app = started(&session);
    let shown = app.current_shown().unwrap();
    assert_eq!(shown.target_met(), Some(true));
    let note = seqpoint::output::table::luck_note(shown.projection());
    assert!(!note.is_empty(), "this run's 1% is met by luck");
    // `i` shows it whole (wrapped): its first 100 characters fit on the popup's first line.
    press(&mut app, ch('i'));
    let full = frame(&mut app, 120, 40);
    let start: String = note.chars().take(100).collect();
    assert!(full.contains(&start), "{full}");
    // The overview says it too, cut to its width.
    press(&mut app, ch('i'));
    assert!(frame(&mut app, 120, 40).contains("note: the measured error"));
    // Judged by its interval the same target is not met: no note.
    let strict = sample_session(SelectOptions {
        bins: BinCount::Target(1.0),
        ..SelectOptions::default()
    });
    let mut app = started(&strict);
    press(&mut app, ch('i'));
    assert!(!frame(&mut app, 120, 40).contains("likely luck"));
}

#[test]
fn the_details_medians_are_worked_out_after_the_first_result_not_on_opening_one() {
    // On 10M rows the gather took 161 ms on the UI thread at the first Enter; the worker
    // that fills the baselines after the first result works them out now.
    let session = sample_session(SelectOptions {
        strata: Strata::Epoch,
        ..fixed(4)
    });
    let groups = &session.strata.groups;
    assert_eq!(groups.len(), 3);
    assert!(groups.iter().all(|g| !g.has_medians(0, 0)));
    let _app = started(&session);
    assert!(groups.iter().all(|g| g.has_medians(0, 0)));
}

/// What the run loop does when it takes a restart: the new session is now being built.
fn building(app: &mut App, id: u64) -> (SelectOptions, PlanAsk) {
    let taken = app.restart.take().expect("a restart");
    app.building = Some(id);
    taken
}

#[test]
fn commands_typed_while_a_session_is_built_add_up() {
    let session = sample_session(fixed(6));
    let mut app = started(&session);
    command(&mut app, "seed 9");
    building(&mut app, 1);
    // Typed before the seed's session lands: it keeps the seed asked for.
    command(&mut app, "samples 2");
    let (base, ask) = building(&mut app, 2);
    assert_eq!((base.seed, base.samples, ask.samples), (9, 2, Some(2)));
    command(&mut app, "metric energy_j");
    assert_eq!(app.reload.as_ref().unwrap().metrics, ["energy_j"]);
    let (base, _) = building(&mut app, 3);
    assert_eq!((base.seed, base.samples), (9, 2));
    // And a command after `:metric` still reads the log again with its metric.
    command(&mut app, "warmup 3");
    assert_eq!(app.reload.as_ref().unwrap().metrics, ["energy_j"]);
    let (base, _) = building(&mut app, 4);
    assert_eq!((base.seed, base.warmup), (9, 3));
    // `u` steps back one command, to the options asked before it (not the session's).
    seqpoint::tui::press(&mut app, crate::common::ch('u'));
    let (base, _) = app.restart.clone().expect("a restart back");
    assert_eq!((base.seed, base.samples, base.warmup), (9, 2, 0));
}

#[test]
fn esc_while_a_session_is_built_keeps_the_options_in_force() {
    let session = sample_session(fixed(6));
    let mut app = started(&session);
    command(&mut app, "seed 9");
    building(&mut app, 1);
    command(&mut app, "samples 2");
    building(&mut app, 2);
    seqpoint::tui::press(
        &mut app,
        crate::common::key(ratatui::crossterm::event::KeyCode::Esc),
    );
    assert_eq!(app.building, None);
    assert!(
        app.restart.is_none() && app.history.is_empty(),
        "{:?}",
        app.history
    );
    assert_eq!(app.options_now().base.seed, session.base.seed);
    assert!(app.status.as_ref().unwrap().text.contains("cancelled"));
    // The session in force gets its result back (the restart had cancelled its job).
    assert!(app.current().is_some() || app.pending.is_some());
}

#[test]
fn a_refused_restart_keeps_the_options_typed_before_it() {
    let session = sample_session(fixed(6));
    let mut app = started(&session);
    command(&mut app, "seed 9");
    building(&mut app, 1);
    command(&mut app, "metric no_such_column");
    building(&mut app, 2);
    seqpoint::tui::update::refused_restart(&mut app, "no column no_such_column".into());
    // The seed's session is built again, without the refused metric.
    let (base, _) = app.restart.clone().expect("the seed's session again");
    assert_eq!(base.seed, 9);
    assert!(app.reload.is_none());
    assert_eq!(app.history.len(), 1);
}

/// The session the run loop builds for the restart asked for, reading the log again when
/// the options read it otherwise (`:key`, `:metric`), as `build_session` does.
fn rebuilt(app: &App) -> seqpoint::tui::Session {
    let (base, ask) = app.restart.clone().expect("a restart");
    match app.reload.clone() {
        Some(load) => app
            .session
            .reloaded(load, base, ask, &Default::default())
            .unwrap(),
        None => app.session.with_options(base, ask).unwrap(),
    }
}

/// The app over a rebuilt session, carrying what the user had, its result settled.
fn swapped<'a>(app: &App<'a>, next: &'a seqpoint::tui::Session) -> App<'a> {
    let mut fresh = App::new(next, false);
    fresh.carry_from(app);
    let effect = seqpoint::tui::update::recompute(&mut fresh);
    seqpoint::tui::settle(&mut fresh, effect);
    fresh
}

#[test]
fn key_switches_the_distribution_to_a_derived_key_and_u_switches_it_back() {
    use seqpoint::testkit::packed::PackedSpec;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("packed.csv");
    let run = PackedSpec {
        steps: 2_000,
        ..PackedSpec::default()
    }
    .generate();
    std::fs::write(&path, run.baseline_csv()).unwrap();
    let load = seqpoint::LoadOptions {
        key: vec!["tokens".into()],
        ..seqpoint::LoadOptions::default()
    };
    let name = path.to_str().unwrap().to_string();
    let log = seqpoint::load_run(&name, &load).unwrap();
    let session = seqpoint::tui::Session::new(name.clone(), load, log, fixed(8)).unwrap();
    let mut app = started(&session);
    assert_eq!(app.session.log.dims(), 1);

    // Bad key lists are refused in place by the option's own check, and change nothing.
    for (bad, why) in [
        ("a,b,c", "one or two key columns"),
        ("attn,attn", "the same column twice"),
        ("tokens,", "an empty column name"),
    ] {
        command(&mut app, &format!("key {bad}"));
        let error = in_place(&app).expect("said in place");
        assert!(
            error.starts_with(&format!(":key {bad}: ")) && error.contains(why),
            "{error}"
        );
        assert!(app.restart.is_none() && app.history.is_empty());
        seqpoint::tui::press(
            &mut app,
            crate::common::key(ratatui::crossterm::event::KeyCode::Esc),
        );
    }

    // `:key fit`: the log is read again keyed on the fitted cost, a 1-D histogram.
    command(&mut app, "key fit");
    assert_eq!(app.reload.as_ref().unwrap().key, ["fit"]);
    let fitted = rebuilt(&app);
    assert_eq!(fitted.log.key_names, ["fit"]);
    assert!(
        fitted.notes.iter().any(|n| n.contains("explains")),
        "the fit's note: {:?}",
        fitted.notes
    );
    let mut app = swapped(&app, &fitted);
    assert_eq!(app.session.log.dims(), 1);
    // Drawn as the fitted cost's histogram, named as a key (it is no sequence length).
    let screen = crate::common::frame(&mut app, 100, 30);
    assert!(
        screen.contains("Key distribution: iterations per fit"),
        "{screen}"
    );
    assert!(app.current().is_some(), "a result keyed on the fit");
    // The copied command keys `select` the same way.
    assert!(app.session.command(&app.settings).contains("--key fit"));

    // `:key tokens,attn`: two keys, the heat map, and a method two keys can take.
    command(&mut app, "key tokens,attn");
    let two = rebuilt(&app);
    let mut app = swapped(&app, &two);
    assert_eq!(app.session.log.dims(), 2);
    assert!(app.session.methods().contains(&app.settings.method));
    assert!(app.current().is_some(), "a result keyed on tokens and attn");

    // `u` goes back to the fit, reading the log again.
    seqpoint::tui::press(&mut app, crate::common::ch('u'));
    assert_eq!(app.reload.as_ref().unwrap().key, ["fit"]);
    let back = rebuilt(&app);
    assert_eq!(back.log.key_names, ["fit"]);
}

/// `seqpoint` run in `dir` with `args`, its standard output.
fn seqpoint_in(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_seqpoint"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "seqpoint {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn measured_judges_the_target_as_project_does_and_top_up_writes_its_list() {
    let dir = tempfile::tempdir().unwrap();
    let assets = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let load = seqpoint::LoadOptions::default();
    let run = assets.join("speech_t1.csv").to_str().unwrap().to_string();
    let log = seqpoint::load_run(&run, &load).unwrap();
    let session = seqpoint::tui::Session::new(run.clone(), load, log, fixed(3)).unwrap();
    let mut app = started(&session);
    // The first stage: the 3 SeqPoints alone measured on the new configuration (their rows
    // of its timed log), against a target they cannot meet: `project` lists a top-up.
    let chosen: Vec<String> = app
        .current()
        .unwrap()
        .seqpoints
        .iter()
        .map(|sp| format!("{},", sp.iteration))
        .collect();
    let new_log = std::fs::read_to_string(assets.join("speech_t2.csv")).unwrap();
    let mut first_stage: Vec<&str> = new_log.lines().take(1).collect();
    first_stage.extend(
        new_log
            .lines()
            .filter(|l| chosen.iter().any(|c| l.starts_with(c.as_str()))),
    );
    assert_eq!(first_stage.len(), 1 + chosen.len());
    let measured = dir.path().join("measured.csv");
    std::fs::write(&measured, first_stage.join("\n") + "\n").unwrap();
    let measured = measured.to_str().unwrap();
    command(&mut app, "target 0.3");
    command(&mut app, &format!("measured {measured}"));
    let judged = app.judged.clone().expect("judged");
    assert!(!judged.met && judged.top_up.is_some(), "{}", judged.table);

    // The same through the command line: export what is on screen, then `project`.
    let json = dir.path().join("sp.json");
    press_export(&mut app, &json);
    let cli = seqpoint_in(
        dir.path(),
        &[
            "project",
            "sp.json",
            measured,
            "--target-error",
            "0.3",
            "--top-up",
            "next.json",
        ],
    );
    // Its table, less what only a file has (its name, the notes on reading it).
    let body = |t: &str| -> Vec<String> {
        t.lines()
            .skip(1)
            .filter(|l| !l.starts_with("note: "))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(body(&judged.table), body(&cli));
    // `:top-up` writes the list `project --top-up` writes.
    command(
        &mut app,
        &format!("top-up {}", dir.path().join("mine.json").display()),
    );
    let mine = std::fs::read_to_string(dir.path().join("mine.json")).expect("written");
    let theirs = std::fs::read_to_string(dir.path().join("next.json")).unwrap();
    assert_eq!(mine, theirs);
    assert!(dir.path().join("mine.csv").exists());

    // The top-up measured 20% off the real times (fast and slow in turn), judged with the
    // first stage's file: still not met, and the table says why, as `project`'s does.
    let next: serde_json::Value = serde_json::from_str(&theirs).unwrap();
    let t2: std::collections::HashMap<&str, &str> = new_log
        .lines()
        .skip(1)
        .filter_map(|l| {
            let mut cells = l.split(',');
            Some((cells.next()?, l))
        })
        .collect();
    let time_at = |it: &str| -> f64 {
        let header: Vec<&str> = new_log.lines().next().unwrap().split(',').collect();
        let col = header.iter().position(|h| *h == "time_ms").unwrap();
        t2[it].split(',').nth(col).unwrap().parse().unwrap()
    };
    let mut second = String::from("iteration,seqpoint,time_ms\n");
    for (i, row) in next["plan"]["profile"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
    {
        let it = row["iteration"].to_string();
        let off = if i % 2 == 0 { 1.2 } else { 0.8 };
        second.push_str(&format!(
            "{it},{},{}\n",
            row["seqpoint"],
            time_at(&it) * off
        ));
    }
    std::fs::write(dir.path().join("second.csv"), second).unwrap();
    let second = dir.path().join("second.csv");
    let second = second.to_str().unwrap();
    command(&mut app, &format!("measured {measured} {second}"));
    let judged = app.judged.clone().expect("judged");
    assert!(!judged.met, "{}", judged.table);
    assert!(
        judged.table.contains("why still not: the first top-up"),
        "{}",
        judged.table
    );
    let cli = seqpoint_in(
        dir.path(),
        &[
            "project",
            "sp.json",
            measured,
            second,
            "--target-error",
            "0.3",
        ],
    );
    assert_eq!(body(&judged.table), body(&cli));
    // Never over a loaded log.
    command(&mut app, &format!("top-up {run}"));
    let status = app.status.clone().unwrap();
    assert!(status.error, "{status:?}");
}

/// Export what is on screen to `path` (both files), as `e` and Enter do.
fn press_export(app: &mut App, path: &std::path::Path) {
    use seqpoint::tui::keymap::Action;
    let effect = seqpoint::tui::update::update(app, Action::Export);
    seqpoint::tui::settle(app, effect);
    if let seqpoint::tui::app::Overlay::Export(prompt) = &mut app.overlay {
        prompt.input = path.display().to_string();
    }
    let effect = seqpoint::tui::update::update(app, Action::Submit);
    seqpoint::tui::settle(app, effect);
    assert!(path.exists(), "exported to {}", path.display());
}

/// `:samples 2` bins as `select --samples 2` does (two or more per SeqPoint are drawn over
/// each bin: the method's own objective), where one per SeqPoint bins for the picks alone;
/// `:samples 1` back again as `select --bins 8`, and `:budget 40` as `select --budget 40`
/// (drawn over each bin too).
#[test]
fn samples_bin_as_select_does_after_a_restart() {
    let session = sample_session(fixed(8));
    let cli = |samples: u64| -> Vec<u64> {
        let options = SelectOptions {
            samples,
            ..fixed(8)
        };
        let selection = seqpoint::select::run_selection(&session.log, &options).unwrap();
        selection.seqpoints.iter().map(|sp| sp.iteration).collect()
    };
    let shown = |app: &App| -> Vec<u64> {
        let selection = app.current().expect("a result");
        selection.seqpoints.iter().map(|sp| sp.iteration).collect()
    };
    // The premise: the two bin differently on the bundled sample.
    assert_ne!(cli(1), cli(2));
    let mut app = started(&session);
    assert_eq!(shown(&app), cli(1));
    command(&mut app, "samples 2");
    let two = rebuilt(&app);
    let mut app = swapped(&app, &two);
    assert_eq!(shown(&app), cli(2));
    command(&mut app, "samples 1");
    let one = rebuilt(&app);
    let mut app = swapped(&app, &one);
    assert_eq!(shown(&app), cli(1));
    command(&mut app, "budget 40");
    let budget = rebuilt(&app);
    let app = swapped(&app, &budget);
    assert_eq!(shown(&app), cli(2));
}
