//! Writes a seeded pair of run logs whose second configuration's speedup grows over training
//! (a computation-reuse-like design), plus optionally a two-length translation-like log.
//!
//! ```sh
//! cargo run --example gen_drift -- --out /tmp/drift
//! seqpoint report /tmp/drift/drift_base.csv --compare /tmp/drift/drift_new.csv
//! seqpoint select /tmp/drift/drift_base.csv --compare /tmp/drift/drift_new.csv --strata epoch
//! ```

use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use seqpoint::output::atomic::write_atomically;
use seqpoint::testkit::models::{drift_run, translation_run, DriftSpec, TranslationSpec};

#[derive(Debug, Parser)]
#[command(
    about = "Write seeded synthetic run logs: drift_base.csv, drift_new.csv [, translation.csv]"
)]
struct Args {
    /// Folder to write into
    #[arg(long, default_value = ".")]
    out: PathBuf,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[arg(long, default_value_t = 10)]
    epochs: u32,
    #[arg(long, default_value_t = 200)]
    batches: usize,
    /// Relative noise of one iteration's time
    #[arg(long, default_value_t = 0.02)]
    noise: f64,
    /// Also write translation.csv (src_len, tgt_len, time_ms)
    #[arg(long)]
    translation: bool,
    /// Overwrite existing files
    #[arg(long)]
    force: bool,
}

fn main() -> std::process::ExitCode {
    match run(Args::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(args: Args) -> anyhow::Result<()> {
    let spec = DriftSpec {
        seed: args.seed,
        epochs: args.epochs,
        batches_per_epoch: args.batches,
        noise: args.noise,
        ..DriftSpec::default()
    };
    let pair = drift_run(&spec);
    let mut files = vec![
        ("drift_base.csv", pair.baseline),
        ("drift_new.csv", pair.compare),
    ];
    if args.translation {
        let spec = TranslationSpec {
            seed: args.seed,
            noise: args.noise,
            ..TranslationSpec::default()
        };
        files.push(("translation.csv", translation_run(&spec)));
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("{}: cannot create the folder", args.out.display()))?;
    for (name, text) in files {
        let path = args.out.join(name);
        write_atomically(&path, text.as_bytes(), args.force)?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}
