//! Where `select`'s time goes on one log: loading, grouping, the selection itself, then the
//! baselines and the JSON document, as `select --bins 16 --method quantile --format json` runs
//! them. Prints each phase's wall time for every run and the best of the runs.
//!
//!     cargo run --release --example gen_run -- --rows 10000000 -o run.csv
//!     cargo run --release --example select_phases -- run.csv [RUNS] [EXCLUDE]
//!
//! EXCLUDE is an iteration range as `select --exclude` takes it (e.g. 2000000-2999999).

use std::time::{Duration, Instant};

use seqpoint::output::json::select_json;
use seqpoint::select::naive::Baselines;
use seqpoint::select::{run_selection_on, Exclusion, StrataGroups};
use seqpoint::{BinCount, LoadOptions, Method, SelectOptions};

const PHASES: [&str; 5] = ["load", "group", "select", "baselines+json", "free"];

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .ok_or_else(|| anyhow::anyhow!("usage: select_phases RUN [RUNS] [EXCLUDE]"))?;
    let runs: usize = args.next().map_or(Ok(5), |r| r.parse())?;
    let exclude: Vec<String> = args.next().into_iter().collect();
    let exclude = Exclusion::parse(&exclude).map_err(anyhow::Error::msg)?;
    let options = SelectOptions {
        method: Some(Method::Quantile),
        bins: BinCount::Fixed(16),
        error_curve: false,
        exclude,
        ..SelectOptions::default()
    };
    let mut best = [Duration::MAX; PHASES.len()];
    for _ in 0..runs {
        let mut times = Vec::with_capacity(PHASES.len());
        let mut clock = Instant::now();
        let mut lap = |times: &mut Vec<Duration>| {
            times.push(clock.elapsed());
            clock = Instant::now();
        };
        let log = seqpoint::load_run(&path, &LoadOptions::default())?;
        lap(&mut times);
        let strata = StrataGroups::for_options(&log, &options)?;
        lap(&mut times);
        let selection = run_selection_on(&log, &strata, &options)?;
        lap(&mut times);
        let baselines = Baselines::beside(&log, &selection);
        let json = select_json(&log, &selection, None, None, &baselines);
        std::hint::black_box(json);
        lap(&mut times);
        drop(baselines);
        drop(strata);
        drop(log);
        lap(&mut times);
        println!("{}", phase_line(&times));
        for (b, t) in best.iter_mut().zip(&times) {
            *b = (*b).min(*t);
        }
    }
    println!("best of {runs}: {}", phase_line(&best));
    Ok(())
}

fn phase_line(times: &[Duration]) -> String {
    let phases: Vec<String> = PHASES
        .iter()
        .zip(times)
        .map(|(name, t)| format!("{name} {:.1} ms", t.as_secs_f64() * 1e3))
        .collect();
    phases.join(", ")
}
