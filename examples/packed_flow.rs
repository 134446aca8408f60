//! The packed-batch goal measured: on generated packed runs (20,000 steps, 8,192-token budget,
//! log-normal documents, cost from tokens and squared lengths with 3% noise, the new
//! configuration's attention 2.5x faster), `--key fit` with the two-stage flow (select on the
//! baseline, measure the listed iterations on the new configuration, `project --target-error 1
//! --top-up`, measure the top-up, project again), against keying on `tokens` alone and on the
//! padded length with as many iterations (`select --budget N`). Every interval is checked
//! against the run's actual totals.
//!
//! Rows: `fit 1` selects with `--target-error 1` and tops up once; `fit 1 x4` tops up until the
//! top-up list is empty, 4 rounds at most; `fit .5` selects with `--target-error 0.5` and tops
//! up once; all project with `--target-error 1`.
//! `flops .5` keys on `--key flops` with the model whose FLOPs weigh tokens and squared lengths
//! as the generated cost does (hidden 556: the cost less its per-step part), selected at 0.5%.
//! `tokens` and `seq_len` measure as many iterations as `fit .5`.
//! Run: `cargo run --release --example packed_flow [SEEDS] [STEPS]`.

use seqpoint::testkit::packed::{at_count, two_stage_at, until_met, Outcome, PackedSpec};

const KEYS: [&str; 6] = [
    "fit 1", "fit 1 x4", "fit .5", "flops .5", "tokens", "seq_len",
];

fn row(seed: u64, key: &str, o: &Outcome) {
    println!(
        "{seed:>4} {key:<8} {:>4} {:>5} {:>4} {:>4} {:>+8.3} {:>6.3} {:>+8.3} {:>6.3} {:>5}",
        o.seqpoints,
        o.iterations,
        o.top_up,
        match o.met {
            Some(true) => "met",
            Some(false) => "no",
            None => "-",
        },
        o.new.error_pct(),
        o.new.half_width_pct(),
        o.speedup.error_pct(),
        o.speedup.half_width_pct(),
        if o.holds() { "yes" } else { "NO" },
    );
}

/// Per key over the seeds: met, intervals held, mean iterations, mean |error| and mean
/// half-width of the new total.
#[derive(Default)]
struct Summary {
    runs: u32,
    met: u32,
    held: u32,
    iterations: f64,
    abs_error: f64,
    worst_error: f64,
    half_width: f64,
}

impl Summary {
    fn add(&mut self, o: &Outcome) {
        self.runs += 1;
        self.met += u32::from(o.met == Some(true));
        self.held += u32::from(o.holds());
        self.iterations += o.iterations as f64;
        let error = o.new.error_pct().abs().max(o.speedup.error_pct().abs());
        self.abs_error += o.new.error_pct().abs();
        self.worst_error = self.worst_error.max(error);
        self.half_width += o.new.half_width_pct();
    }
}

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let mut args = std::env::args().skip(1);
    let seeds: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(40);
    let steps: usize = args
        .next()
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(20_000);
    let mut summaries: Vec<Summary> = KEYS.iter().map(|_| Summary::default()).collect();
    for seed in 1..=seeds {
        let run = PackedSpec {
            seed,
            steps,
            ..PackedSpec::default()
        }
        .generate();
        if seed == 1 {
            let (_, mut notes) = run.load_noted(&["fit"])?;
            notes.extend(run.load_noted(&["flops"])?.1);
            for note in notes {
                println!("seed 1: {note}");
            }
            let t = run.truth();
            println!(
                "seed 1: actual baseline {:.1} ms, new {:.1} ms, speedup {:.4}\n",
                t.baseline, t.new, t.speedup
            );
            println!("seed key         K iters  +top  met new err%  new±% spd err%  spd±% holds");
        }
        let strict = two_stage_at(&run, &["fit"], 1.0, 1.0)?;
        let rounds = until_met(&run, &["fit"], 1.0, 1.0, 4)?;
        let wide = two_stage_at(&run, &["fit"], 0.5, 1.0)?;
        let n = wide.iterations as u64;
        let flops = two_stage_at(&run, &["flops"], 0.5, 1.0)?;
        let tokens = at_count(&run, &["tokens"], n, 1.0)?;
        let padded = at_count(&run, &["seq_len"], n, 1.0)?;
        for (i, o) in [strict, rounds, wide, flops, tokens, padded]
            .iter()
            .enumerate()
        {
            row(seed, KEYS[i], o);
            summaries[i].add(o);
        }
    }
    println!("\nkey      met  held  mean iters  mean |new err|%  worst |err|%  mean new±%");
    for (key, s) in KEYS.iter().zip(&summaries) {
        let n = f64::from(s.runs.max(1));
        println!(
            "{key:<8} {:>3} {:>5} {:>11.1} {:>16.3} {:>13.3} {:>11.3}",
            s.met,
            s.held,
            s.iterations / n,
            s.abs_error / n,
            s.worst_error,
            s.half_width / n
        );
    }
    Ok(())
}
