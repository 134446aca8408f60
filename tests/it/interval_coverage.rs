//! Are `project`'s 95% intervals honest? On the real logs (1 and 2 CPU threads), draw the
//! profiled iterations at random within each bin many times (seeded), project as `project`
//! does, and count how often the interval holds the actual total. The same check must fail
//! for wrong variance formulas, or it would prove nothing.

use seqpoint::project::{stratum_variance, StratumVariance};
use seqpoint::select::coverage::{interval_coverage, Coverage, CoverageCheck};
use seqpoint::select::{run_selection, BinCount, SelectOptions};
use seqpoint::{load_run, LoadOptions, RunLog};

const TRIALS: u32 = 1000;

/// 1000 trials of a true 95% interval land within about +-1.4% of 95 (two binomial
/// standard deviations); the band also allows the conservative per-bin maximum with
/// repeated samples (see `stratified`), and excludes intervals that are far too wide.
const HONEST: std::ops::RangeInclusive<f64> = 90.0..=99.5;

fn log() -> RunLog {
    let options = LoadOptions {
        compare: Some("tests/data/speech_t2.csv".into()),
        ..LoadOptions::default()
    };
    load_run("tests/data/speech_t1.csv", &options).unwrap()
}

/// Wrong: the weight enters once, not squared.
fn without_weight_squared(w: f64, n: f64, m: f64, sd: f64) -> f64 {
    stratum_variance(w, n, m, sd) / w
}

/// Wrong: the standard deviation used where the variance belongs.
fn sd_for_variance(w: f64, n: f64, m: f64, sd: f64) -> f64 {
    stratum_variance(w, n, m, sd.sqrt())
}

/// Wrong the other way: twice the spread, an interval far too wide.
fn doubled_spread(w: f64, n: f64, m: f64, sd: f64) -> f64 {
    stratum_variance(w, n, m, 2.0 * sd)
}

fn coverage(
    log: &RunLog,
    bins: usize,
    samples: u64,
    config: usize,
    formula: StratumVariance,
) -> Coverage {
    let selection = run_selection(
        log,
        &SelectOptions {
            bins: BinCount::Fixed(bins),
            ..SelectOptions::default()
        },
    )
    .unwrap();
    let check = CoverageCheck {
        config,
        metric: 0,
        samples,
        trials: TRIALS,
        seed: 1,
    };
    interval_coverage(log, &selection, check, formula).unwrap()
}

#[test]
fn intervals_hold_the_actual_total_about_95_percent_of_the_time() {
    let log = log();
    for bins in [8, 16] {
        for samples in [1, 2] {
            for (config, name) in [(0, "1 thread"), (1, "2 threads")] {
                let correct = coverage(&log, bins, samples, config, stratum_variance);
                eprintln!(
                    "K {bins:>2}, {samples} per bin, {name}: coverage {:.1}%, mean half-width {:.2}%, mean error {:.2}%",
                    correct.pct(),
                    correct.mean_half_width_pct,
                    correct.mean_error_pct
                );
                assert!(HONEST.contains(&correct.pct()), "{correct:?}");
                for (wrong, formula) in [
                    (
                        "w instead of w^2",
                        without_weight_squared as StratumVariance,
                    ),
                    ("sd instead of variance", sd_for_variance),
                    ("doubled spread", doubled_spread),
                ] {
                    let c = coverage(&log, bins, samples, config, formula);
                    eprintln!("    {wrong}: coverage {:.1}%", c.pct());
                    assert!(!HONEST.contains(&c.pct()), "{wrong} passed: {c:?}");
                }
            }
        }
    }
}

#[test]
fn the_check_is_seeded_and_more_samples_narrow_the_interval() {
    let log = log();
    let a = coverage(&log, 8, 1, 1, stratum_variance);
    assert_eq!(a, coverage(&log, 8, 1, 1, stratum_variance));
    let b = coverage(&log, 8, 4, 1, stratum_variance);
    assert!(b.mean_half_width_pct < a.mean_half_width_pct);
    assert!(b.mean_error_pct < a.mean_error_pct);
    assert_eq!(a.trials, TRIALS);
}
