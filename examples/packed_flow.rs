//! The packed-batch goal measured: on generated packed runs (20,000 steps, 8,192-token budget,
//! log-normal documents, cost from tokens and squared lengths with 3% noise, the new
//! configuration's attention 2.5x faster), `--key fit` with the two-stage flow (select on the
//! baseline with `--target-error 1`, measure the listed iterations on the new configuration,
//! `project --target-error 1 --top-up`, measure the top-up, project again), against keying on
//! `tokens` alone and on the padded length with the same number of iterations
//! (`select --budget N`). Every figure is checked against the run's actual totals.
//! Run: `cargo run --release --example packed_flow [SEEDS] [STEPS]`.

use seqpoint::testkit::packed::{at_count, two_stage, Outcome, PackedSpec};

fn row(seed: u64, key: &str, o: &Outcome) {
    println!(
        "{seed:>4} {key:<8} {:>5} {:>6} {:>4} {:>5} {:>+8.3} {:>6.3} {:>+8.3} {:>6.3} {:>+8.3} {:>6.3} {:>5}",
        o.seqpoints,
        o.iterations,
        o.top_up,
        match o.met {
            Some(true) => "met",
            Some(false) => "no",
            None => "-",
        },
        o.baseline.error_pct(),
        o.baseline.half_width_pct(),
        o.new.error_pct(),
        o.new.half_width_pct(),
        o.speedup.error_pct(),
        o.speedup.half_width_pct(),
        if o.holds() { "yes" } else { "NO" },
    );
}

fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let mut args = std::env::args().skip(1);
    let seeds: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(5);
    let steps: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(20_000);
    println!(
        "seed key         K  iters  +top   met  base err%  base±%  new err%   new±%  spd err%   spd±% holds"
    );
    let mut worst = [0.0f64; 3];
    let mut held = [0usize; 3];
    for seed in 1..=seeds {
        let spec = PackedSpec {
            seed,
            steps,
            ..PackedSpec::default()
        };
        let run = spec.generate();
        if seed == 1 {
            let (_, notes) = run.load_noted(&["fit"])?;
            for note in notes {
                println!("note: {note}");
            }
            let t = run.truth();
            println!(
                "truth (seed 1): baseline {:.1} ms, new {:.1} ms, speedup {:.4}",
                t.baseline, t.new, t.speedup
            );
        }
        let fit = two_stage(&run, &["fit"], 1.0)?;
        row(seed, "fit", &fit);
        let n = fit.iterations as u64;
        let tokens = at_count(&run, &["tokens"], n, 1.0)?;
        row(seed, "tokens", &tokens);
        let padded = at_count(&run, &["seq_len"], n, 1.0)?;
        row(seed, "seq_len", &padded);
        for (i, o) in [&fit, &tokens, &padded].into_iter().enumerate() {
            worst[i] = worst[i].max(o.new.error_pct().abs().max(o.speedup.error_pct().abs()));
            held[i] += usize::from(o.holds());
        }
    }
    for (i, key) in ["fit", "tokens", "seq_len"].into_iter().enumerate() {
        println!(
            "{key:<8}: worst |error| of new total and speedup {:.3}%, every interval held in {} \
             of {seeds} seeds",
            worst[i], held[i]
        );
    }
    Ok(())
}
