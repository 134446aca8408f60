//! How often `report`'s neighbours check alarms on runs with and without a slow window: the
//! false-alarm rate of the permutation test alone (no size rule) and of the whole check on
//! clean generated runs, and the detection rate and edge error on runs whose baseline has a
//! window slowed 12-16% by another process.
//!
//! ```sh
//! cargo run --release --example neighbour_alarms -- --seeds 200
//! ```

use clap::Parser;
use seqpoint::groups::KeyGroups;
use seqpoint::report::{
    group_of_row, run_checks, slow_windows, Check, ReportOptions, Verdict, WindowVerdict,
    JUDGED_MIN,
};
use seqpoint::runlog::RunLog;
use seqpoint::testkit::models::{drift_run, neighbour_run, DriftSpec, NeighbourSpec};
use seqpoint::LoadOptions;

#[derive(Debug, Parser)]
#[command(about = "False-alarm and detection rates of the neighbours check on generated runs")]
struct Args {
    /// Generated runs per case
    #[arg(long, default_value_t = 100)]
    seeds: u64,
    /// Significance of the permutation test alone
    #[arg(long, default_value_t = 0.01)]
    alpha: f64,
}

/// Whether the permutation test alone finds a window in the baseline's time (any size).
fn test_alone_alarms(log: &RunLog, alpha: f64) -> bool {
    let groups = KeyGroups::from_log(log);
    let of_row = group_of_row(&groups, log.len());
    let group_medians = groups.medians(log, 0, 0);
    let medians: Vec<Option<f64>> = of_row
        .iter()
        .map(|&g| (groups.counts[g as usize] >= JUDGED_MIN).then_some(group_medians[g as usize]))
        .collect();
    let values = &log.configs[0].metrics[0].values;
    !slow_windows(values, &medians, 0, alpha, &mut |_, _| {
        WindowVerdict::Report
    })
    .is_empty()
}

fn neighbours(log: &RunLog) -> seqpoint::report::Finding {
    run_checks(log, &ReportOptions::default())
        .into_iter()
        .find(|f| f.check == Check::Neighbours)
        .expect("the check runs")
}

fn main() {
    let args = Args::parse();
    let load = LoadOptions::default();
    let steady = |seed| DriftSpec {
        seed,
        time_saving: (0.3, 0.3),
        ..DriftSpec::default()
    };
    println!(
        "{} seeds per case, 2,000 iterations each (10 epochs of 200 batches)",
        args.seeds
    );
    for (name, spec) in [
        ("steady design", None),
        ("savings growing 5% -> 45%", Some(())),
    ] {
        let (mut alone, mut check) = (0, 0);
        for seed in 1..=args.seeds {
            let run = match spec {
                None => drift_run(&steady(seed)),
                Some(()) => drift_run(&DriftSpec {
                    seed,
                    ..DriftSpec::default()
                }),
            };
            let log = run.load(&load).expect("generated logs load");
            alone += usize::from(test_alone_alarms(&log, args.alpha));
            check += usize::from(neighbours(&log).verdict == Verdict::Warn);
        }
        println!(
            "clean, {name}: permutation test alone alarms on {alone} of {} baselines \
             (alpha {}); the check warns on {check} of {}",
            args.seeds, args.alpha, args.seeds
        );
    }
    let (mut found, mut edge_error, mut worst_edge) = (0, 0.0, 0u64);
    for seed in 1..=args.seeds {
        let length = 150 + (seed as usize * 37) % 451;
        let start = (seed as usize * 211) % (2000 - length);
        let window = NeighbourSpec {
            seed,
            rows: start..start + length,
            ..NeighbourSpec::default()
        };
        let (_, slowed) = neighbour_run(&steady(seed), &window);
        let log = slowed.load(&load).expect("generated logs load");
        let f = neighbours(&log);
        let Some(suggest) = f.suggest.as_deref() else {
            continue;
        };
        let ranges: Vec<seqpoint::select::IterationRange> = suggest
            .split("--exclude")
            .filter(|p| !p.trim().is_empty())
            .map(|p| p.trim().parse().expect("a range"))
            .collect();
        if let [r] = ranges.as_slice() {
            found += 1;
            let edges =
                r.first.abs_diff(start as u64) + r.last.abs_diff((start + length - 1) as u64);
            edge_error += edges as f64 / 2.0;
            worst_edge = worst_edge
                .max(r.first.abs_diff(start as u64))
                .max(r.last.abs_diff((start + length - 1) as u64));
        }
    }
    println!(
        "slowed 12-16% over 150-600 iterations: found as one window in {found} of {}; mean edge \
         error {:.1} iterations, worst {worst_edge}",
        args.seeds,
        edge_error / found.max(1) as f64
    );
}
