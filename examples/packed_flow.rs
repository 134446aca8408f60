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
//!
//! `packed_flow compare [SEEDS] [STEPS]` asks instead what `select --compare --key fit
//! --target-error 1` says with the new configuration's every step logged (the plan's
//! iterations projected from their logged values): its verdict against the actual error, its
//! intervals against the truth, and how much of the error each bin's whole picked key group
//! would still make (no sampling left), on the baseline and on the new configuration.

use seqpoint::testkit::packed::{
    at_count, select_compare, two_stage_at, until_met, Outcome, PackedSpec,
};

const KEYS: [&str; 6] = [
    "fit 1", "fit 1 x4", "fit .5", "flops .5", "tokens", "seq_len",
];

fn row(seed: u64, key: &str, o: &Outcome) {
    println!(
        "{seed:>4} {key:<8} {:>4} {:>5} {:>4} {:>4} {:>+8.3} {:>6.3} {:>+8.3} {:>6.3} {:>5}",
        o.seqpoints,
        o.iterations(),
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
        self.iterations += o.iterations() as f64;
        let error = o.new.error_pct().abs().max(o.speedup.error_pct().abs());
        self.abs_error += o.new.error_pct().abs();
        self.worst_error = self.worst_error.max(error);
        self.half_width += o.new.half_width_pct();
    }
}

type Error = Box<dyn std::error::Error + Send + Sync>;

/// `select --compare --key fit --target-error 1` over seeds: one row per seed, then the counts.
fn compare(seeds: u64, steps: usize) -> Result<(), Error> {
    println!("seed    K iters met  new err%  new±%  held spd held  key-group err% base/new  attn gap%  key cv% base/new");
    let (mut met, mut within, mut held, mut speedup_held) = (0, 0, 0, 0);
    let (mut both, mut error, mut half_width) = (0, 0.0, 0.0);
    let (mut base_group, mut new_group, mut gap) = (0.0, 0.0, 0.0);
    let (mut errors, mut cv) = (Vec::new(), [0.0; 2]);
    let (mut base_errors, mut base_held) = (Vec::new(), 0);
    for seed in 1..=seeds {
        let run = PackedSpec {
            seed,
            steps,
            ..PackedSpec::default()
        }
        .generate();
        let o = select_compare(&run, &["fit"], 1.0)?;
        let says = o.met == Some(true);
        let is_within = o.new.error_pct().abs() <= 1.0 && o.speedup.error_pct().abs() <= 1.0;
        println!(
            "{seed:>4} {:>4} {:>5} {:>3} {:>+9.3} {:>6.3} {:>5} {:>8} {:>+12.3} {:>+8.3} {:>+10.3} {:>7.2} {:>6.2}",
            o.seqpoints,
            o.iterations,
            if says { "yes" } else { "no" },
            o.new.error_pct(),
            o.new.half_width_pct(),
            o.new.holds(),
            o.speedup.holds(),
            o.key_group_error_pct[0],
            o.key_group_error_pct[1],
            o.attn_gap_pct,
            o.within_key_cv_pct[0],
            o.within_key_cv_pct[1],
        );
        met += u32::from(says);
        within += u32::from(is_within);
        both += u32::from(says && is_within);
        held += u32::from(o.new.holds());
        speedup_held += u32::from(o.speedup.holds());
        error += o.new.error_pct();
        half_width += o.new.half_width_pct();
        base_group += o.key_group_error_pct[0];
        new_group += o.key_group_error_pct[1];
        gap += o.attn_gap_pct;
        errors.push(o.new.error_pct());
        base_errors.push(o.baseline.error_pct());
        base_held += u32::from(o.baseline.holds());
        cv = [0, 1].map(|c| cv[c] + o.within_key_cv_pct[c]);
    }
    let mean_sd = |errors: &[f64]| {
        let mean = errors.iter().sum::<f64>() / errors.len().max(1) as f64;
        let var = errors.iter().map(|e| (e - mean).powi(2)).sum::<f64>()
            / (errors.len().max(2) - 1) as f64;
        (mean, var.sqrt())
    };
    let (_, sd) = mean_sd(&errors);
    let (base_mean, base_sd) = mean_sd(&base_errors);
    let n = seeds.max(1) as f64;
    println!(
        "\nof {seeds}: said met {met}, within 1% (new total and speedup) {within}, both {both}; \
         new total's interval held {held}, the speedup's {speedup_held}"
    );
    println!(
        "mean new error {:+.3}% (mean ±{:.3}%); each bin's whole picked key group: baseline \
         {:+.3}%, new {:+.3}%; picked keys' attention against their bins' {:+.3}%; the new \
         error's sd over seeds {sd:.3}% (1.96 sd = {:.3}%); one step's sd at its key: baseline \
         {:.2}%, new {:.2}%",
        error / n,
        half_width / n,
        base_group / n,
        new_group / n,
        gap / n,
        1.96 * sd,
        cv[0] / n,
        cv[1] / n
    );
    println!(
        "the baseline total from the same iterations: error {base_mean:+.3}% (sd {base_sd:.3}% \
         over seeds), its interval held {base_held}"
    );
    Ok(())
}

fn main() -> Result<(), Error> {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().map(String::as_str) == Some("compare") {
        args.next();
        let seeds: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(100);
        let steps: usize = args
            .next()
            .map(|s| s.parse())
            .transpose()?
            .unwrap_or(20_000);
        return compare(seeds, steps);
    }
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
        let n = wide.iterations() as u64;
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
