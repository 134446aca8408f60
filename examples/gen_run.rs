//! Write a synthetic run log of any size (seeded): realistic padded sequence lengths, epochs,
//! warm-up, optional energy column and second configuration; CSV, TSV or JSON Lines, optionally
//! gzip-compressed (by a `.gz` suffix).
//!
//! cargo run --release --example gen_run -- --rows 10000000 -o /tmp/run10m.csv
//! cargo run --release --example gen_run -- --rows 1000000 --energy --compare-out new.jsonl.gz -o run.jsonl.gz

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Parser;
use seqpoint::testkit::scale::{write_log, GenFormat, GenSpec};

#[derive(Debug, Parser)]
#[command(about = "Write a synthetic run log (seeded) for benchmarks and tests")]
struct Args {
    /// Output file; the format follows its extension (.csv, .tsv, .jsonl, each optionally .gz)
    #[arg(short = 'o', long)]
    output: PathBuf,
    /// Also write the second configuration's log over the same iterations here
    #[arg(long)]
    compare_out: Option<PathBuf>,
    #[arg(long, default_value_t = 10_000_000)]
    rows: u64,
    #[arg(long, default_value_t = 3)]
    epochs: u32,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Median unpadded sequence length
    #[arg(long, default_value_t = 500.0)]
    median_len: f64,
    /// Log-normal spread of lengths
    #[arg(long, default_value_t = 0.6)]
    sigma: f64,
    #[arg(long, default_value_t = 8192)]
    max_len: u32,
    /// Length buckets for bucketed batches (0: none)
    #[arg(long, default_value_t = 0)]
    buckets: u32,
    /// Sequences per batch (a bucketed batch is padded to its longest)
    #[arg(long, default_value_t = 32)]
    batch: u32,
    /// Slow warm-up iterations at the start
    #[arg(long, default_value_t = 50)]
    warmup: u64,
    /// Add an energy_j column
    #[arg(long)]
    energy: bool,
    /// Overwrite existing files
    #[arg(long)]
    force: bool,
}

fn format_of(path: &Path) -> anyhow::Result<(GenFormat, bool)> {
    let name = path.to_string_lossy().to_ascii_lowercase();
    let (stem, gz) = match name.strip_suffix(".gz") {
        Some(stem) => (stem.to_string(), true),
        None => (name, false),
    };
    let format = match stem.rsplit('.').next() {
        Some("csv") => GenFormat::Csv,
        Some("tsv") => GenFormat::Tsv,
        Some("jsonl") | Some("ndjson") => GenFormat::Jsonl,
        _ => anyhow::bail!(
            "{}: expected a .csv, .tsv or .jsonl name (optionally .gz)",
            path.display()
        ),
    };
    Ok((format, gz))
}

fn write_one(spec: &GenSpec, config: usize, path: &Path, force: bool) -> anyhow::Result<u64> {
    if path.exists() && !force {
        anyhow::bail!("{} exists; use --force to overwrite", path.display());
    }
    let (format, gz) = format_of(path)?;
    // Written to a temporary name first so a stopped run never leaves a half file behind.
    let tmp = path.with_extension("partial");
    let file = File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let bytes = if gz {
        let mut enc = flate2::write::GzEncoder::new(
            BufWriter::with_capacity(1 << 20, file),
            flate2::Compression::default(),
        );
        let n = write_log(spec, config, format, &mut enc)?;
        enc.finish()?.flush()?;
        n
    } else {
        let mut out = BufWriter::with_capacity(1 << 20, file);
        let n = write_log(spec, config, format, &mut out)?;
        out.flush()?;
        n
    };
    std::fs::rename(&tmp, path)?;
    Ok(bytes)
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let spec = GenSpec {
        rows: args.rows,
        epochs: args.epochs,
        seed: args.seed,
        median_len: args.median_len,
        sigma: args.sigma,
        max_len: args.max_len,
        buckets: args.buckets,
        batch: args.batch,
        warmup: args.warmup,
        energy: args.energy,
        ..GenSpec::default()
    };
    let n = write_one(&spec, 0, &args.output, args.force)?;
    eprintln!(
        "wrote {} ({} rows, {:.1} MB of text)",
        args.output.display(),
        spec.rows,
        n as f64 / 1e6
    );
    if let Some(path) = &args.compare_out {
        let n = write_one(&spec, 1, path, args.force)?;
        eprintln!(
            "wrote {} ({:.1} MB of text)",
            path.display(),
            n as f64 / 1e6
        );
    }
    Ok(())
}
