//! How long a profiling plan takes to make: `select`'s path (the selection, its plan and the
//! naive baselines beside it) and the explorer's time to a usable screen (the session's key
//! groups, the worker's job run here inline up to its result, one frame), for the default
//! error target, a budget and a huge `--samples` plan. Medians of several runs; the log is loaded once and its
//! load time is added to neither.
//!
//! cargo run --release --example gen_run -- --rows 200000 -o /tmp/run200k.csv
//! cargo run --release --example plan_speed -- /tmp/run200k.csv [--compare NEW] [--runs 5]

use std::time::{Duration, Instant};

use ratatui::backend::TestBackend;
use ratatui::Terminal;

use seqpoint::select::naive::Baselines;
use seqpoint::select::plan::{plan_selection, PlanAsk, PlanRule};
use seqpoint::select::{answer, SelectRequest};
use seqpoint::tui::update::Effect;
use seqpoint::tui::{self, App, Session};
use seqpoint::{load_run, run_selection, BinCount, LoadOptions, RunLog, SelectOptions};

/// One plan as the command line asks for it.
struct Case {
    name: String,
    ask: PlanAsk,
}

/// `select`'s work after loading: the selection and plan its flags ask for, and the naive
/// baselines at the plan's budget (as `seqpoint select` prints them).
fn select_like_the_cli(log: &RunLog, options: &SelectOptions, ask: PlanAsk) -> u64 {
    let target = match options.bins {
        BinCount::Target(t) => t,
        BinCount::Fixed(_) => 1.0,
    };
    let rule = ask.rule(None, target, options.target_by);
    let (selection, plan) = match rule {
        Some(PlanRule::Target(t)) => {
            let request = SelectRequest {
                options: options.clone(),
                plan: Some(PlanRule::Target(t)),
            };
            let found = answer(log, &request).expect("a plan");
            (found.selection, found.plan)
        }
        Some(rule) => {
            let selection = run_selection(log, options).expect("a selection");
            let plan = plan_selection(log, &selection, rule).expect("a plan");
            (selection, Some(plan))
        }
        None => (run_selection(log, options).expect("a selection"), None),
    };
    let profiled = plan
        .as_ref()
        .map_or(selection.bins() as u64, |p| p.iterations());
    let baselines = Baselines::beside(log, &selection);
    let _ = baselines.all(profiled as usize, options.warmup, options.seed);
    profiled
}

/// The explorer from a loaded log to its first usable screen: the session, the first job
/// (run inline, as the worker runs it) and one frame.
fn explorer_until_usable(log: &std::sync::Arc<RunLog>, options: &SelectOptions, ask: PlanAsk) {
    let session = Session::new(
        "run".into(),
        LoadOptions::default(),
        std::sync::Arc::clone(log),
        options.clone(),
    )
    .expect("valid options")
    .asking(ask);
    let mut app = App::new(&session, true);
    // As the worker runs it, up to the result on screen (the naive baselines beside the curve
    // and at the plan's budget are filled in after that, while the screen is in use).
    let mut effect = tui::update::recompute(&mut app);
    while let Some(Effect::Compute(job)) = effect.take() {
        if let Some(done) = job.run(&session, &mut |_, _, _| {}) {
            effect = tui::update::finished(&mut app, done);
        }
    }
    assert!(app.pending.is_none() && app.current().is_some());
    let mut terminal = Terminal::new(TestBackend::new(120, 40)).unwrap();
    terminal.draw(|f| tui::ui::draw(f, &mut app)).unwrap();
}

fn median(mut times: Vec<Duration>) -> f64 {
    times.sort();
    times[times.len() / 2].as_secs_f64()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut run = None;
    let mut compare = None;
    let mut runs = 5usize;
    let mut samples = 100_000u64;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--compare" => compare = args.next(),
            "--runs" => runs = args.next().and_then(|n| n.parse().ok()).expect("--runs N"),
            "--samples" => {
                samples = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--samples N")
            }
            _ => run = Some(arg),
        }
    }
    let run = run.expect("usage: plan_speed RUN [--compare NEW] [--runs N] [--samples N]");
    let load = LoadOptions {
        compare,
        ..LoadOptions::default()
    };
    let start = Instant::now();
    let log = std::sync::Arc::new(load_run(&run, &load).expect("the run loads"));
    println!(
        "{run}: {} iterations, loaded in {:.2} s (added to neither column)",
        log.len(),
        start.elapsed().as_secs_f64()
    );
    let cases = [
        Case {
            name: "--target-error 1 (default)".into(),
            ask: PlanAsk::default(),
        },
        Case {
            name: "--budget 80".into(),
            ask: PlanAsk {
                budget: Some(80),
                ..PlanAsk::default()
            },
        },
        Case {
            name: format!("--samples {samples}"),
            ask: PlanAsk {
                samples: Some(samples),
                ..PlanAsk::default()
            },
        },
    ];
    println!(
        "{:<28} {:>10} {:>14} {:>10}   (medians of {runs} runs, seconds)",
        "plan", "select", "explorer", "gap"
    );
    for case in &cases {
        let options = SelectOptions {
            samples: case.ask.samples.unwrap_or(1),
            error_curve: false,
            ..SelectOptions::default()
        };
        let (mut cli, mut explorer) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            let start = Instant::now();
            select_like_the_cli(&log, &options, case.ask);
            cli.push(start.elapsed());
            let start = Instant::now();
            explorer_until_usable(&log, &options, case.ask);
            explorer.push(start.elapsed());
        }
        let (cli, explorer) = (median(cli), median(explorer));
        println!(
            "{:<28} {cli:>10.3} {explorer:>14.3} {:>+10.3}",
            case.name,
            explorer - cli
        );
    }
}
