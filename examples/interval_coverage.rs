//! Prints how often the 95% interval of `project` holds the actual total on the real logs
//! (tests/data/speech_t1.csv and speech_t2.csv), with the correct variance formula and two
//! wrong ones. Run: `cargo run --release --example interval_coverage [TRIALS]`.

use seqpoint::project::{stratum_variance, StratumVariance};
use seqpoint::select::{run_selection, BinCount, SelectOptions};
use seqpoint::testkit::coverage::{interval_coverage, CoverageCheck};
use seqpoint::{load_run, LoadOptions};

fn without_weight_squared(w: f64, n: f64, m: f64, sd: f64) -> f64 {
    stratum_variance(w, n, m, sd) / w
}

fn sd_for_variance(w: f64, n: f64, m: f64, sd: f64) -> f64 {
    stratum_variance(w, n, m, sd.sqrt())
}

fn main() -> anyhow::Result<()> {
    let trials: u32 = std::env::args()
        .nth(1)
        .map(|t| t.parse())
        .transpose()?
        .unwrap_or(2000);
    let options = LoadOptions {
        compare: Some("tests/data/speech_t2.csv".into()),
        ..LoadOptions::default()
    };
    let log = load_run("tests/data/speech_t1.csv", &options)?;
    let formulas: [(&str, StratumVariance); 3] = [
        ("correct", stratum_variance),
        ("no w^2", without_weight_squared),
        ("sd for var", sd_for_variance),
    ];
    println!("bins samples config     formula      coverage%  mean ±%  mean |err|%");
    for bins in [4, 8, 16, 32] {
        let selection = run_selection(
            &log,
            &SelectOptions {
                bins: BinCount::Fixed(bins),
                ..SelectOptions::default()
            },
        )?;
        for samples in [1, 2, 4] {
            for config in [0, 1] {
                for (name, formula) in formulas {
                    let check = CoverageCheck {
                        config,
                        metric: 0,
                        samples,
                        trials,
                        seed: 1,
                    };
                    let c = interval_coverage(&log, &selection, check, formula)?;
                    println!(
                        "{bins:>4} {samples:>7} {:<10} {name:<12} {:>9.1} {:>8.2} {:>11.2}",
                        if config == 0 { "t1" } else { "t2" },
                        c.pct(),
                        c.mean_half_width_pct,
                        c.mean_error_pct
                    );
                }
            }
        }
    }
    Ok(())
}
