//! How long a profiling plan takes to make: `select`'s path (the selection, its plan and the
//! naive baselines beside it) and the explorer's time to a usable screen (the session's key
//! groups, the worker's job run here inline up to its result, one frame), for the default
//! error target, a budget and a huge `--samples` plan. Medians of several runs; the log is loaded once and its
//! load time is added to neither.
//!
//! With `--cliff`, it also times the cheapest plan where the search once fell off a cliff
//! (500,000 rows, keys uniform on 1..490, time (3 + 0.05 k) x U(0.97, 1.03),
//! `--target-error 0.01` at `--max-bins` 100, 300 and 500: 0.24 s at 300, over two minutes at
//! 500) and `select --compare`'s plans on a 100,000-row pair of that shape, both generated
//! here from a fixed seed. `--write-cliff DIR` writes those logs (`cliff.csv`, `run.csv`,
//! `new.csv`) for timing `seqpoint select` itself (peak memory with `/usr/bin/time -v`).
//!
//! cargo run --release --example gen_run -- --rows 200000 -o /tmp/run200k.csv
//! cargo run --release --example plan_speed -- /tmp/run200k.csv [--compare NEW] [--runs 5]
//! cargo run --release --example plan_speed -- --cliff [--runs 5]
//! cargo run --release --example plan_speed -- --write-cliff /tmp/cliff

use std::time::{Duration, Instant};

use ratatui::backend::TestBackend;
use ratatui::Terminal;

use seqpoint::runlog::{load_run_bytes, with_compare, InputFormat};
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

/// A log of `rows` iterations in the cliff case's shape: keys uniform on 1..=490 and time
/// `(a + b k) x U(1 - spread, 1 + spread)`, from splitmix64 on the row and `seed`: the same
/// keys for every seed (so two logs pair as `--compare` asks), the noise differing.
fn cliff_csv(rows: u64, time: (f64, f64, f64), seed: u64) -> String {
    let mix = |x: u64| {
        let h = x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        let h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        h ^ (h >> 31)
    };
    let (a, b, spread) = time;
    let mut text = String::from("seq_len,time_ms\n");
    for i in 0..rows {
        let key = 1 + mix(i + 1) % 490;
        let u = (mix((i + 1) ^ seed.wrapping_mul(0xD6E8_FEB8_6659_FD93)) >> 11) as f64
            / (1u64 << 53) as f64;
        let t = (a + b * key as f64) * (1.0 - spread + 2.0 * spread * u);
        text.push_str(&format!("{key},{t:.6}\n"));
    }
    text
}

fn load_csv(name: &str, text: &str) -> RunLog {
    load_run_bytes(
        name,
        text.as_bytes(),
        InputFormat::Csv,
        &LoadOptions::default(),
    )
    .expect("a generated log loads")
}

/// `select --target-error T [--max-bins N]`'s plan (and the baselines beside it), timed:
/// the median of `runs`, and the plan's size.
fn time_target(log: &RunLog, target: f64, max_bins: usize, runs: usize) -> (f64, u64) {
    let options = SelectOptions {
        bins: BinCount::Target(target),
        max_bins,
        error_curve: false,
        ..SelectOptions::default()
    };
    let mut times = Vec::new();
    let mut profiled = 0;
    for _ in 0..runs {
        let start = Instant::now();
        profiled = select_like_the_cli(log, &options, PlanAsk::default());
        times.push(start.elapsed());
    }
    (median(times), profiled)
}

/// The cliff case's log: 500,000 rows, time (3 + 0.05 k) x U(0.97, 1.03).
fn cliff_case_csv() -> String {
    cliff_csv(500_000, (3.0, 0.05, 0.03), 1)
}

/// The `--compare` pair of that shape: 100,000 rows, the baseline as the cliff case's (another
/// seed), the new configuration time (2 + 0.03 k) x U(0.95, 1.05).
fn compare_pair_csv() -> (String, String) {
    (
        cliff_csv(100_000, (3.0, 0.05, 0.03), 2),
        cliff_csv(100_000, (2.0, 0.03, 0.05), 3),
    )
}

/// The cliff case at `--max-bins` 100/300/500 and `--compare` plans on 100,000 rows.
fn cliff(runs: usize) {
    let start = Instant::now();
    let log = load_csv("cliff.csv", &cliff_case_csv());
    println!(
        "cliff case: {} iterations, {} keys, generated and loaded in {:.2} s",
        log.len(),
        490,
        start.elapsed().as_secs_f64()
    );
    println!(
        "{:<44} {:>10} {:>12}   (medians of {runs} runs, seconds)",
        "plan", "select", "iterations"
    );
    for max_bins in [100, 300, 500] {
        let (time, profiled) = time_target(&log, 0.01, max_bins, runs);
        let name = format!("--target-error 0.01 --max-bins {max_bins}");
        println!("{name:<44} {time:>10.3} {profiled:>12}");
    }
    let (base, new) = compare_pair_csv();
    let (base, new) = (load_csv("run.csv", &base), load_csv("new.csv", &new));
    let pair = with_compare(base, new).expect("the same keys in the same order");
    println!(
        "--compare pair: {} iterations, time 2 + 0.03 k x U(0.95, 1.05) on the new one",
        pair.len()
    );
    // The last was a second cliff, with `--compare`: 502 s, then 5.5 s, now about 5 s of CPU,
    // most of it the estimate's parts over every bin at each of a few thousand projections
    // per K for K 385-490.
    for (target, max_bins) in [(1.0, 64), (0.1, 64), (0.1, 300), (0.1, 500)] {
        let (time, profiled) = time_target(&pair, target, max_bins, runs);
        let name = format!("--compare --target-error {target} --max-bins {max_bins}");
        println!("{name:<44} {time:>10.3} {profiled:>12}");
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut run = None;
    let mut cliff_too = false;
    let mut write_cliff = None;
    let mut compare = None;
    let mut runs = 5usize;
    let mut samples = 100_000u64;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--compare" => compare = args.next(),
            "--runs" => runs = args.next().and_then(|n| n.parse().ok()).expect("--runs N"),
            "--cliff" => cliff_too = true,
            "--write-cliff" => write_cliff = Some(args.next().expect("--write-cliff DIR")),
            "--samples" => {
                samples = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("--samples N")
            }
            _ => run = Some(arg),
        }
    }
    if let Some(dir) = &write_cliff {
        let dir = std::path::Path::new(dir);
        std::fs::create_dir_all(dir).expect("the directory can be made");
        let (base, new) = compare_pair_csv();
        for (name, text) in [
            ("cliff.csv", cliff_case_csv()),
            ("run.csv", base),
            ("new.csv", new),
        ] {
            std::fs::write(dir.join(name), text).expect("the log can be written");
            println!("wrote {}", dir.join(name).display());
        }
    }
    if cliff_too {
        cliff(runs);
    }
    let Some(run) = run else {
        assert!(
            cliff_too || write_cliff.is_some(),
            "usage: plan_speed [RUN] [--cliff] [--write-cliff DIR] [--compare NEW] [--runs N] \
             [--samples N]"
        );
        return;
    };
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
