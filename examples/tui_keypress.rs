//! How long one key press takes in the explorer: the state update, the recomputation from
//! the key groups, and a full frame drawn into a 120x40 test backend.
//!
//! cargo run --release --example tui_keypress [RUN [COMPARE]]   (default: the bundled sample)

use std::time::{Duration, Instant};

use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;

use seqpoint::runlog::sample::{SAMPLE_COMPARE_NAME, SAMPLE_NAME};
use seqpoint::tui::{self, App, Session};
use seqpoint::{load_run, BinCount, LoadOptions, SelectOptions};

fn key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

fn summary(name: &str, mut times: Vec<Duration>) {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let n = times.len();
    println!(
        "{name:<44} n={n:<4} median {:>8.3} ms   p95 {:>8.3} ms   max {:>8.3} ms",
        ms(times[n / 2]),
        ms(times[(n * 95 / 100).min(n - 1)]),
        ms(times[n - 1])
    );
}

/// One key press: press + recompute + draw, timed.
fn press_timed(app: &mut App, terminal: &mut Terminal<TestBackend>, event: KeyEvent) -> Duration {
    let start = Instant::now();
    let effect = tui::press(app, event);
    tui::settle(app, effect);
    terminal.draw(|f| tui::ui::draw(f, app)).unwrap();
    start.elapsed()
}

/// Press `keys` in turn, `rounds` times, timing press + recompute + draw for each.
fn time_keys(
    app: &mut App,
    terminal: &mut Terminal<TestBackend>,
    keys: &[char],
    rounds: usize,
) -> Vec<Duration> {
    let mut times = Vec::new();
    for _ in 0..rounds {
        for &c in keys {
            times.push(press_timed(app, terminal, key(c)));
        }
    }
    times
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (run, compare) = match args.as_slice() {
        [] => (
            SAMPLE_NAME.to_string(),
            Some(SAMPLE_COMPARE_NAME.to_string()),
        ),
        [run] => (run.clone(), None),
        [run, compare, ..] => (run.clone(), Some(compare.clone())),
    };
    let load = LoadOptions {
        compare,
        ..LoadOptions::default()
    };
    let start = Instant::now();
    let log = load_run(&run, &load).expect("the run loads");
    let session = Session::new(
        run.clone(),
        load,
        log,
        SelectOptions {
            bins: BinCount::Fixed(12),
            ..SelectOptions::default()
        },
    )
    .expect("valid options");
    println!(
        "{run}: {} iterations, {} key groups; load + group {:.1} ms",
        session.log.len(),
        session.groups().len(),
        start.elapsed().as_secs_f64() * 1e3
    );

    let mut app = App::new(&session, true);
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    if std::env::var_os("ONLY_COMMANDS").is_some() {
        command_freezes(&mut app);
        let start = Instant::now();
        tui::press(&mut app, KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
        terminal.draw(|f| tui::ui::draw(f, &mut app)).unwrap();
        println!(
            "Enter (first detail) + draw on the UI thread {:>9.1} ms",
            start.elapsed().as_secs_f64() * 1e3
        );
        return;
    }
    let start = Instant::now();
    let effect = tui::update::recompute(&mut app);
    tui::settle(&mut app, effect);
    terminal.draw(|f| tui::ui::draw(f, &mut app)).unwrap();
    println!(
        "first result (selectors + DP table + 64-K curve + frame): {:.1} ms",
        start.elapsed().as_secs_f64() * 1e3
    );

    let mut draws = Vec::new();
    for _ in 0..200 {
        let start = Instant::now();
        terminal.draw(|f| tui::ui::draw(f, &mut app)).unwrap();
        draws.push(start.elapsed());
    }
    summary("draw only, 120x40", draws);
    summary(
        "l / h (K +-1, optimal) + draw",
        time_keys(&mut app, &mut terminal, &['l', 'h'], 200),
    );
    summary(
        "t / T (target, fixed K) + draw",
        time_keys(&mut app, &mut terminal, &['T', 't'], 200),
    );
    summary(
        "s / c (log scale, measure) + draw",
        time_keys(&mut app, &mut terminal, &['s', 'c'], 200),
    );
    let special = |code| KeyEvent::new(code, KeyModifiers::NONE);
    let table = (0..100)
        .map(|_| press_timed(&mut app, &mut terminal, special(KeyCode::Tab)))
        .collect();
    summary("Tab (view) + draw", table);
    // A SeqPoint's detail: the first opening works out the key groups' medians, kept after.
    let mut detail = Vec::new();
    for _ in 0..50 {
        detail.push(press_timed(
            &mut app,
            &mut terminal,
            special(KeyCode::Enter),
        ));
        press_timed(&mut app, &mut terminal, special(KeyCode::Esc));
    }
    println!(
        "Enter (detail) the first time, medians worked out: {:.1} ms",
        detail[0].as_secs_f64() * 1e3
    );
    summary("Enter (detail) after + draw", detail.split_off(1));
    // Auto-K: the search over K (on the worker in the explorer, timed here inline).
    let effect = tui::press(&mut app, key('a'));
    tui::settle(&mut app, effect);
    summary(
        "t / T in auto-K (K read off the curve) + draw",
        time_keys(&mut app, &mut terminal, &['T', 't'], 50),
    );
    let effect = tui::press(&mut app, key('a'));
    tui::settle(&mut app, effect);
    // Picks: new selectors each time until all four are prepared, then cached.
    summary(
        "p (pick; first time builds selectors+curve)",
        time_keys(&mut app, &mut terminal, &['p'], 4),
    );
    summary(
        "p (pick, prepared selectors kept)",
        time_keys(&mut app, &mut terminal, &['p'], 25),
    );
    // k-means: the curve is one fit per K (on the worker, with progress, in the explorer).
    summary(
        "m to uniform, quantile (selectors + curve)",
        time_keys(&mut app, &mut terminal, &['m', 'm'], 1),
    );
    summary(
        "m to kmeans (64 k-means fits for the curve)",
        time_keys(&mut app, &mut terminal, &['m'], 1),
    );
    summary(
        "l / h with kmeans (one fit) + draw",
        time_keys(&mut app, &mut terminal, &['l', 'h'], 5),
    );
}

/// What Enter on a `:` line holds the UI thread for: the check and the hand-off, before the
/// work goes to a worker (the run loop then builds the new session off the UI thread). A key
/// pressed after Enter waits this long.
fn command_freezes(app: &mut App) {
    let effect = tui::update::recompute(app);
    tui::settle(app, effect);
    for line in [
        "exclude 100-200",
        "strata epoch",
        "seed 3",
        "samples 2",
        "warmup 5",
        "metric energy_j",
    ] {
        tui::press(app, key(':'));
        for c in line.chars() {
            tui::press(app, key(c));
        }
        let start = Instant::now();
        let _effect = tui::press(app, KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
        let held = start.elapsed();
        println!(
            ":{line:<20} Enter held the UI thread {:>9.1} ms",
            held.as_secs_f64() * 1e3
        );
        // Not followed: each line is timed from the same session.
        app.restart = None;
        app.reload = None;
        app.overlay = tui::app::Overlay::None;
    }
}
