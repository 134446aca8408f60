//! Writes a seeded packed run with a known cost: `packed.csv` (the baseline's log:
//! `iteration,seq_len,doc_lens,time_ms`, the padded length the budget in every step) and
//! `packed_new.csv` (the new configuration's time at every step, `iteration,time_ms`: a full
//! timed log, which `project` reads as it is, or from which the listed iterations are cut),
//! and prints the actual totals and speedup to check projections against.
//!
//! ```sh
//! cargo run --release --example gen_packed -- --out /tmp/packed
//! seqpoint select /tmp/packed/packed.csv --key fit -o /tmp/packed/seqpoints.json
//! ```

use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use seqpoint::output::atomic::write_atomically;
use seqpoint::testkit::packed::PackedSpec;

#[derive(Debug, Parser)]
#[command(about = "Write a seeded packed run: packed.csv (baseline) and packed_new.csv")]
struct Args {
    /// Folder to write into
    #[arg(long, default_value = ".")]
    out: PathBuf,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, default_value_t = 20_000)]
    steps: usize,
    /// Tokens per step (the padded length)
    #[arg(long, default_value_t = 8_192)]
    budget: u32,
    /// Relative noise of one step's time, on either configuration
    #[arg(long, default_value_t = 0.03)]
    noise: f64,
    /// How much faster the new configuration's attention is
    #[arg(long, default_value_t = 2.5)]
    attn_speedup: f64,
    /// Overwrite existing files
    #[arg(long)]
    force: bool,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let spec = PackedSpec {
        seed: args.seed,
        steps: args.steps,
        budget: args.budget,
        noise: args.noise,
        attn_speedup: args.attn_speedup,
        ..PackedSpec::default()
    };
    let run = spec.generate();
    std::fs::create_dir_all(&args.out)?;
    for (name, text) in [
        ("packed.csv", run.baseline_csv()),
        ("packed_new.csv", run.new_csv(0..args.steps as u64)),
    ] {
        let path = args.out.join(name);
        write_atomically(&path, text.as_bytes(), args.force)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let truth = run.truth();
    println!(
        "wrote {} steps to {}: baseline total {:.1} ms, new total {:.1} ms, speedup {:.4}",
        args.steps,
        args.out.display(),
        truth.baseline,
        truth.new,
        truth.speedup
    );
    Ok(())
}
