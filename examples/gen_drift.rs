//! Writes a seeded pair of run logs whose second configuration's speedup grows over training
//! (a computation-reuse-like design), plus optionally a two-length translation-like log.
//! With `--neighbour A-B` the baseline's iterations A-B run 12-16% slower, as when another
//! process shares the machine (with `--saving S` the design saves S throughout, so that the
//! window is the only thing that changes over the run).
//!
//! ```sh
//! cargo run --example gen_drift -- --out /tmp/drift
//! seqpoint report /tmp/drift/drift_base.csv --compare /tmp/drift/drift_new.csv
//! seqpoint select /tmp/drift/drift_base.csv --compare /tmp/drift/drift_new.csv --strata epoch
//! cargo run --example gen_drift -- --out /tmp/noisy --saving 0.3 --neighbour 0-399
//! seqpoint report /tmp/noisy/drift_base.csv --compare /tmp/noisy/drift_new.csv
//! ```

use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;
use seqpoint::output::atomic::write_atomically;
use seqpoint::select::{parse_iteration_range, IterationRange};
use seqpoint::testkit::models::{
    drift_run, slow_window, translation_run, DriftSpec, NeighbourSpec, TranslationSpec,
};

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
    /// The design saves this share of the baseline's time throughout (default: 5% rising to 45%)
    #[arg(long, value_name = "S")]
    saving: Option<f64>,
    /// Iterations A-B of the baseline run 12-16% slower (another process on the machine)
    #[arg(long, value_name = "A-B", value_parser = parse_iteration_range)]
    neighbour: Option<IterationRange>,
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
        time_saving: args
            .saving
            .map_or(DriftSpec::default().time_saving, |s| (s, s)),
        ..DriftSpec::default()
    };
    let mut pair = drift_run(&spec);
    if let Some(range) = args.neighbour {
        let window = NeighbourSpec {
            seed: args.seed,
            rows: range.first as usize..range.last as usize + 1,
            ..NeighbourSpec::default()
        };
        pair.baseline = slow_window(&pair.baseline, &window);
    }
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
