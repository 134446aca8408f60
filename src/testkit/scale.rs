//! Synthetic run logs of any size, seeded: log-normal padded lengths, bucketed batches, epochs,
//! warm-up, an optional second configuration and energy column; written streaming.

// Used by examples/gen_run.rs (benchmark files) and by tests that need logs of a known shape.

use std::io::{self, Write};

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The shape of a generated run.
#[derive(Debug, Clone, PartialEq)]
pub struct GenSpec {
    pub rows: u64,
    pub epochs: u32,
    pub seed: u64,
    /// Median unpadded sequence length and the log-normal spread around it.
    pub median_len: f64,
    pub sigma: f64,
    pub min_len: u32,
    pub max_len: u32,
    /// Length buckets (geometric between `min_len` and `max_len`); 0 means no bucketing.
    /// A bucketed batch takes `batch` sequences from one bucket and is padded to the longest.
    pub buckets: u32,
    pub batch: u32,
    /// The first `warmup` iterations run slower (caches, allocator, autotuning).
    pub warmup: u64,
    /// Relative noise of one iteration's time around its length's curve.
    pub noise: f64,
    pub energy: bool,
    /// Decimal places written for metrics.
    pub decimals: u32,
}

impl Default for GenSpec {
    fn default() -> Self {
        GenSpec {
            rows: 10_000,
            epochs: 3,
            seed: 1,
            median_len: 500.0,
            sigma: 0.6,
            min_len: 8,
            max_len: 8192,
            buckets: 0,
            batch: 32,
            warmup: 50,
            noise: 0.03,
            energy: false,
            decimals: 3,
        }
    }
}

/// One generated iteration: its key and the metrics of both configurations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GenRow {
    pub iteration: u64,
    pub epoch: u32,
    pub seq_len: u32,
    /// `[baseline, compare]`.
    pub time_ms: [f64; 2],
    pub energy_j: [f64; 2],
}

/// Iterator over the rows of a `GenSpec`; the same seed gives the same rows.
pub struct Generator {
    spec: GenSpec,
    rng: Xoshiro256PlusPlus,
    next: u64,
    spare_normal: Option<f64>,
    bucket_edges: Vec<f64>,
}

impl Generator {
    pub fn new(spec: &GenSpec) -> Self {
        let bucket_edges = if spec.buckets > 0 {
            let (lo, hi) = (f64::from(spec.min_len.max(1)), f64::from(spec.max_len));
            let ratio = (hi / lo).powf(1.0 / f64::from(spec.buckets));
            (0..=spec.buckets)
                .map(|b| (lo * ratio.powi(b as i32)).round())
                .collect()
        } else {
            Vec::new()
        };
        Generator {
            spec: spec.clone(),
            rng: Xoshiro256PlusPlus::seed_from_u64(spec.seed),
            next: 0,
            spare_normal: None,
            bucket_edges,
        }
    }

    /// A standard normal draw (Box-Muller; both values of a pair are used).
    fn normal(&mut self) -> f64 {
        if let Some(z) = self.spare_normal.take() {
            return z;
        }
        let u1: f64 = 1.0 - self.rng.gen::<f64>();
        let u2: f64 = self.rng.gen::<f64>();
        let r = (-2.0 * u1.ln()).sqrt();
        let theta = std::f64::consts::TAU * u2;
        self.spare_normal = Some(r * theta.sin());
        r * theta.cos()
    }

    fn padded_length(&mut self) -> u32 {
        let spec = &self.spec;
        let (lo, hi) = (f64::from(spec.min_len), f64::from(spec.max_len));
        let (median, sigma) = (spec.median_len, spec.sigma);
        let drawn = (median * (sigma * self.normal()).exp()).clamp(lo, hi);
        if self.bucket_edges.is_empty() {
            return drawn.round() as u32;
        }
        // The batch's bucket, then its longest member: the max of `batch` uniform draws in the
        // bucket is the top of the bucket times U^(1/batch).
        let edges = &self.bucket_edges;
        let b = edges
            .partition_point(|&e| e <= drawn)
            .clamp(1, edges.len() - 1);
        let (b_lo, b_hi) = (edges[b - 1], edges[b]);
        let u: f64 = self.rng.gen();
        let longest = b_lo + (b_hi - b_lo) * u.powf(1.0 / f64::from(self.spec.batch.max(1)));
        longest.round().clamp(lo, hi) as u32
    }
}

impl Iterator for Generator {
    type Item = GenRow;

    fn next(&mut self) -> Option<GenRow> {
        if self.next >= self.spec.rows {
            return None;
        }
        let i = self.next;
        self.next += 1;
        let epochs = u64::from(self.spec.epochs.max(1));
        let epoch = (i * epochs / self.spec.rows.max(1)) as u32;
        let seq_len = self.padded_length();
        let l = f64::from(seq_len);
        // Baseline: fixed overhead + linear + attention-like quadratic work.
        let base = 20.0 + 0.05 * l + 2.0e-5 * l * l;
        // The compare configuration speeds up the quadratic part most (a new kernel).
        let faster = 18.0 + 0.045 * l + 1.2e-5 * l * l;
        let warm = if self.spec.warmup > 0 {
            1.0 + 2.0 * (-(i as f64) / (self.spec.warmup as f64 / 3.0)).exp()
        } else {
            1.0
        };
        // Later epochs run slightly faster (memory allocator and data cache settle).
        let drift = 1.0 - 0.01 * f64::from(epoch);
        let shared = self.normal();
        let own = self.normal();
        let noise = self.spec.noise;
        let outlier = if self.rng.gen::<f64>() < 0.001 {
            1.5
        } else {
            1.0
        };
        let t0 = base * warm * drift * outlier * (noise * shared).exp();
        // Within-key deviations of the two configurations correlate about 0.5.
        let t1 = faster * warm * drift * outlier * (noise * (0.5 * shared + 0.866 * own)).exp();
        // Board power grows with the share of the batch that is real work.
        let watts = 150.0 + 100.0 * l / (l + 1000.0);
        let energy = [t0 * watts / 1000.0, t1 * watts * 0.95 / 1000.0];
        Some(GenRow {
            iteration: i,
            epoch,
            seq_len,
            time_ms: [t0, t1],
            energy_j: energy,
        })
    }
}

/// Text layouts a generated log can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GenFormat {
    Csv,
    Tsv,
    Jsonl,
}

/// Write `value` with `decimals` places without going through float formatting (fast, and the
/// text is exactly the value rounded to that many places).
fn push_fixed(out: &mut Vec<u8>, value: f64, decimals: u32) {
    let scale = 10u64.pow(decimals);
    let scaled = (value * scale as f64).round() as u64;
    push_int(out, scaled / scale);
    if decimals > 0 {
        out.push(b'.');
        let frac = scaled % scale;
        let digits = frac.to_string();
        for _ in digits.len()..decimals as usize {
            out.push(b'0');
        }
        out.extend_from_slice(digits.as_bytes());
    }
}

fn push_int(out: &mut Vec<u8>, value: u64) {
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    let mut v = value;
    loop {
        at -= 1;
        buf[at] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[at..]);
}

/// Append one row (configuration `config`: 0 baseline, 1 compare) in `format`.
pub fn push_row(out: &mut Vec<u8>, row: &GenRow, config: usize, spec: &GenSpec, format: GenFormat) {
    let d = spec.decimals;
    match format {
        GenFormat::Csv | GenFormat::Tsv => {
            let sep = if format == GenFormat::Csv {
                b','
            } else {
                b'\t'
            };
            push_int(out, row.iteration);
            out.push(sep);
            push_int(out, u64::from(row.epoch));
            out.push(sep);
            push_int(out, u64::from(row.seq_len));
            out.push(sep);
            push_fixed(out, row.time_ms[config], d);
            if spec.energy {
                out.push(sep);
                push_fixed(out, row.energy_j[config], d);
            }
        }
        GenFormat::Jsonl => {
            out.extend_from_slice(b"{\"iteration\":");
            push_int(out, row.iteration);
            out.extend_from_slice(b",\"epoch\":");
            push_int(out, u64::from(row.epoch));
            out.extend_from_slice(b",\"seq_len\":");
            push_int(out, u64::from(row.seq_len));
            out.extend_from_slice(b",\"time_ms\":");
            push_fixed(out, row.time_ms[config], d);
            if spec.energy {
                out.extend_from_slice(b",\"energy_j\":");
                push_fixed(out, row.energy_j[config], d);
            }
            out.push(b'}');
        }
    }
    out.push(b'\n');
}

/// The header line of a delimited log (empty for JSON Lines).
pub fn header(spec: &GenSpec, format: GenFormat) -> String {
    let mut names = vec!["iteration", "epoch", "seq_len", "time_ms"];
    if spec.energy {
        names.push("energy_j");
    }
    match format {
        GenFormat::Csv => names.join(",") + "\n",
        GenFormat::Tsv => names.join("\t") + "\n",
        GenFormat::Jsonl => String::new(),
    }
}

/// Write the whole log of configuration `config` to `out`; returns the bytes written.
pub fn write_log(
    spec: &GenSpec,
    config: usize,
    format: GenFormat,
    out: &mut impl Write,
) -> io::Result<u64> {
    let head = header(spec, format);
    out.write_all(head.as_bytes())?;
    let mut written = head.len() as u64;
    let mut buf = Vec::with_capacity(1 << 20);
    for row in Generator::new(spec) {
        push_row(&mut buf, &row, config, spec, format);
        if buf.len() >= (1 << 20) - 256 {
            out.write_all(&buf)?;
            written += buf.len() as u64;
            buf.clear();
        }
    }
    out.write_all(&buf)?;
    written += buf.len() as u64;
    Ok(written)
}

/// The whole log as bytes (for tests and small files).
pub fn log_bytes(spec: &GenSpec, config: usize, format: GenFormat) -> Vec<u8> {
    let mut out = Vec::new();
    write_log(spec, config, format, &mut out).expect("writing to memory cannot fail");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(rows: u64) -> GenSpec {
        GenSpec {
            rows,
            ..GenSpec::default()
        }
    }

    #[test]
    fn same_seed_same_rows_other_seed_other_rows() {
        let a: Vec<GenRow> = Generator::new(&small(200)).collect();
        let b: Vec<GenRow> = Generator::new(&small(200)).collect();
        assert_eq!(a, b);
        let c: Vec<GenRow> = Generator::new(&GenSpec {
            seed: 2,
            ..small(200)
        })
        .collect();
        assert_ne!(a, c);
    }

    #[test]
    fn rows_epochs_and_lengths_have_the_asked_shape() {
        let spec = GenSpec {
            rows: 3000,
            epochs: 3,
            buckets: 16,
            ..GenSpec::default()
        };
        let rows: Vec<GenRow> = Generator::new(&spec).collect();
        assert_eq!(rows.len(), 3000);
        assert!(rows
            .iter()
            .enumerate()
            .all(|(i, r)| r.iteration == i as u64));
        assert_eq!(rows[0].epoch, 0);
        assert_eq!(rows[999].epoch, 0);
        assert_eq!(rows[1000].epoch, 1);
        assert_eq!(rows[2999].epoch, 2);
        assert!(rows
            .iter()
            .all(|r| (spec.min_len..=spec.max_len).contains(&r.seq_len)));
        // Log-normal around the median: about half the batches are shorter than it (bucketed
        // padding pushes lengths up a little, never down).
        let short = rows
            .iter()
            .filter(|r| f64::from(r.seq_len) < spec.median_len)
            .count();
        assert!((900..=1600).contains(&short), "{short}");
        // Warm-up iterations are slower than the same length later on.
        let per_len = |r: &GenRow| r.time_ms[0] / (20.0 + 0.05 * f64::from(r.seq_len));
        assert!(per_len(&rows[0]) > 2.0 * per_len(&rows[2000]));
    }

    #[test]
    fn text_layouts_by_hand() {
        let spec = GenSpec {
            energy: true,
            decimals: 2,
            ..GenSpec::default()
        };
        let row = GenRow {
            iteration: 12,
            epoch: 1,
            seq_len: 300,
            time_ms: [41.005, 30.0],
            energy_j: [7.5, 6.0],
        };
        let mut csv = Vec::new();
        push_row(&mut csv, &row, 0, &spec, GenFormat::Csv);
        // 41.005 is stored a hair below 41.005 (binary), so it rounds down to 41.00 or up to 41.01:
        // either is the value rounded to two places.
        let text = String::from_utf8(csv).unwrap();
        assert!(
            text == "12,1,300,41.00,7.50\n" || text == "12,1,300,41.01,7.50\n",
            "{text}"
        );
        let mut jsonl = Vec::new();
        push_row(&mut jsonl, &row, 1, &spec, GenFormat::Jsonl);
        assert_eq!(
            String::from_utf8(jsonl).unwrap(),
            "{\"iteration\":12,\"epoch\":1,\"seq_len\":300,\"time_ms\":30.00,\"energy_j\":6.00}\n"
        );
        assert_eq!(
            header(&spec, GenFormat::Tsv),
            "iteration\tepoch\tseq_len\ttime_ms\tenergy_j\n"
        );
    }
}
