//! Seeded synthetic run logs for tests, examples and demonstrations: a speech-like run whose
//! second configuration's savings grow over training, and a translation-like run with two lengths.
//!
//! Both are models, not measurements: the drift run mimics a computation-reuse design (such
//! as adaptive reuse in tensor cores) whose reuse strength rises as training converges, so the
//! same sequence length costs less late in training than early on.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::runlog::{load_bytes, with_compare, InputFormat, LoadError, LoadOptions, RunLog};

/// A speech-like run measured on a baseline and on a design whose savings grow over training.
#[derive(Debug, Clone, PartialEq)]
pub struct DriftSpec {
    pub seed: u64,
    pub epochs: u32,
    /// Batches per epoch; the same batches are reshuffled every epoch, as a bucketed loader does.
    pub batches_per_epoch: usize,
    /// Relative standard deviation of one iteration's time around its length's cost.
    pub noise: f64,
    /// Share of the baseline's time the new design saves at the first and at the last iteration;
    /// it grows linearly in between.
    pub time_saving: (f64, f64),
    /// Share of energy saved beyond the time saving (less data movement per operation).
    pub energy_extra_saving: f64,
}

impl Default for DriftSpec {
    /// 10 epochs of 200 batches; savings from 5% to 45% of the time (about 1.33x faster overall)
    /// and 7 points more for energy (about 32% less energy), as reported for reuse designs.
    fn default() -> Self {
        DriftSpec {
            seed: 1,
            epochs: 10,
            batches_per_epoch: 200,
            noise: 0.02,
            time_saving: (0.05, 0.45),
            energy_extra_saving: 0.07,
        }
    }
}

/// Two CSV logs over the same iterations: the baseline and the compared configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct SynthPair {
    pub baseline: String,
    pub compare: String,
}

impl SynthPair {
    /// The pair as one run log (baseline plus `--compare`), read with `options`.
    pub fn load(&self, options: &LoadOptions) -> Result<RunLog, LoadError> {
        let base = load_bytes(
            "drift_base.csv",
            self.baseline.as_bytes(),
            InputFormat::Csv,
            options,
        )?;
        let other = load_bytes(
            "drift_new.csv",
            self.compare.as_bytes(),
            InputFormat::Csv,
            options,
        )?;
        with_compare(base, other)
    }

    /// The baseline alone: what a user has before the new design is profiled.
    pub fn load_baseline(&self, options: &LoadOptions) -> Result<RunLog, LoadError> {
        load_bytes(
            "drift_base.csv",
            self.baseline.as_bytes(),
            InputFormat::Csv,
            options,
        )
    }
}

/// A standard normal draw (Box-Muller), so the generator needs no distribution crate.
pub fn normal(rng: &mut impl Rng) -> f64 {
    let u1: f64 = 1.0 - rng.gen::<f64>();
    let u2: f64 = rng.gen::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// A multiplicative noise factor with relative sd `sd`, kept positive.
fn jitter(rng: &mut impl Rng, sd: f64) -> f64 {
    (1.0 + sd * normal(rng)).max(0.5)
}

/// Padded length of a batch of 16 utterances: the longest, rounded up to a multiple of 8.
fn batch_length(rng: &mut impl Rng) -> u32 {
    let longest = (0..16)
        .map(|_| (400f64.ln() + 0.45 * normal(rng)).exp().clamp(40.0, 2400.0))
        .fold(0.0, f64::max);
    (longest / 8.0).ceil() as u32 * 8
}

/// Baseline milliseconds of one iteration at padded length `sl`: a convolutional front end
/// (linear) plus recurrent layers whose work grows faster than linearly with the length.
pub fn baseline_time_ms(sl: u32) -> f64 {
    let sl = f64::from(sl);
    20.0 + 0.9 * sl + 0.0006 * sl * sl
}

/// Baseline power draw in watts: energy is time times power.
const POWER_W: f64 = 150.0;

/// The drift run: `iteration,epoch,seq_len,time_ms,energy_j` for both configurations.
pub fn drift_run(spec: &DriftSpec) -> SynthPair {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(spec.seed);
    let batches: Vec<u32> = (0..spec.batches_per_epoch)
        .map(|_| batch_length(&mut rng))
        .collect();
    let total = spec.epochs as usize * spec.batches_per_epoch;
    let header = "iteration,epoch,seq_len,time_ms,energy_j\n";
    let mut baseline = String::from(header);
    let mut compare = String::from(header);
    let mut order: Vec<usize> = (0..batches.len()).collect();
    let mut iteration = 0usize;
    for epoch in 0..spec.epochs {
        // Fisher-Yates: a new order of the same batches every epoch.
        for i in (1..order.len()).rev() {
            order.swap(i, rng.gen_range(0..=i));
        }
        for &b in &order {
            let sl = batches[b];
            let time = baseline_time_ms(sl);
            let energy = time / 1000.0 * POWER_W;
            let progress = if total > 1 {
                iteration as f64 / (total - 1) as f64
            } else {
                0.0
            };
            let saving = spec.time_saving.0 + (spec.time_saving.1 - spec.time_saving.0) * progress;
            let (a_t, a_e) = (
                time * jitter(&mut rng, spec.noise),
                energy * jitter(&mut rng, spec.noise / 2.0),
            );
            let (b_t, b_e) = (
                time * (1.0 - saving) * jitter(&mut rng, spec.noise),
                energy
                    * (1.0 - saving - spec.energy_extra_saving).max(0.05)
                    * jitter(&mut rng, spec.noise / 2.0),
            );
            baseline.push_str(&format!("{iteration},{epoch},{sl},{a_t:.3},{a_e:.4}\n"));
            compare.push_str(&format!("{iteration},{epoch},{sl},{b_t:.3},{b_e:.4}\n"));
            iteration += 1;
        }
    }
    SynthPair { baseline, compare }
}

/// Another process sharing the machine for a while: every iteration of a window of rows runs
/// slower by its own factor `1 + u`, `u` uniform in `slowdown` (time and energy alike).
#[derive(Debug, Clone, PartialEq)]
pub struct NeighbourSpec {
    pub seed: u64,
    /// Rows (0-based, in run order) slowed; with the generators here, row = iteration.
    pub rows: std::ops::Range<usize>,
    pub slowdown: (f64, f64),
}

impl Default for NeighbourSpec {
    /// The first 400 iterations slowed 12-16%, as in a real run shared with another job.
    fn default() -> Self {
        NeighbourSpec {
            seed: 7,
            rows: 0..400,
            slowdown: (0.12, 0.16),
        }
    }
}

/// A CSV log of this module (header, then one row per iteration) with the `time_ms` and
/// `energy_j` of `spec.rows` slowed. Every other byte is kept, so the clean log is the truth.
pub fn slow_window(csv: &str, spec: &NeighbourSpec) -> String {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(spec.seed);
    let mut lines = csv.lines();
    let header = lines.next().unwrap_or_default();
    let metric_columns: Vec<usize> = header
        .split(',')
        .enumerate()
        .filter(|(_, name)| ["time_ms", "energy_j"].contains(name))
        .map(|(i, _)| i)
        .collect();
    let mut out = format!("{header}\n");
    for (row, line) in lines.enumerate() {
        if !spec.rows.contains(&row) {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let factor = 1.0 + rng.gen_range(spec.slowdown.0..=spec.slowdown.1);
        let fields: Vec<String> = line
            .split(',')
            .enumerate()
            .map(|(i, field)| match field.parse::<f64>() {
                Ok(v) if metric_columns.contains(&i) => format!("{:.4}", v * factor),
                _ => field.to_string(),
            })
            .collect();
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

/// A drift run (set `time_saving` to one value for a steady design) whose baseline shares the
/// machine with another process over `window`: the clean pair and the slowed one.
pub fn neighbour_run(run: &DriftSpec, window: &NeighbourSpec) -> (SynthPair, SynthPair) {
    let clean = drift_run(run);
    let slowed = SynthPair {
        baseline: slow_window(&clean.baseline, window),
        compare: clean.compare.clone(),
    };
    (clean, slowed)
}

/// A translation-like run whose cost depends on the source and target lengths of a batch.
#[derive(Debug, Clone, PartialEq)]
pub struct TranslationSpec {
    pub seed: u64,
    pub iterations: usize,
    /// Milliseconds per source token (encoder), per target token (decoder), and per source x
    /// target token pair (attention). Set the last two to 0 for a run where the source alone
    /// decides the cost.
    pub per_source: f64,
    pub per_target: f64,
    pub per_pair: f64,
    /// Relative standard deviation of one iteration's time.
    pub noise: f64,
}

impl Default for TranslationSpec {
    fn default() -> Self {
        TranslationSpec {
            seed: 1,
            iterations: 3000,
            per_source: 2.0,
            per_target: 3.0,
            per_pair: 0.02,
            noise: 0.02,
        }
    }
}

/// The translation run: `iteration,src_len,tgt_len,time_ms`. Lengths are padded to multiples
/// of 4 (bucketed batches), so (source, target) pairs recur and form key groups; the target
/// length follows the source length with a per-batch ratio, so the two are correlated but the
/// target still carries information of its own.
pub fn translation_run(spec: &TranslationSpec) -> String {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(spec.seed);
    let mut out = String::from("iteration,src_len,tgt_len,time_ms\n");
    let pad = |x: f64| ((x / 4.0).ceil() as u32).max(1) * 4;
    for iteration in 0..spec.iterations {
        let source = (30f64.ln() + 0.5 * normal(&mut rng))
            .exp()
            .clamp(5.0, 120.0);
        let ratio = (1.0 + 0.25 * normal(&mut rng)).clamp(0.4, 2.0);
        let (src, tgt) = (pad(source), pad(source * ratio));
        let (s, t) = (f64::from(src), f64::from(tgt));
        let time = (5.0 + spec.per_source * s + spec.per_target * t + spec.per_pair * s * t)
            * jitter(&mut rng, spec.noise);
        out.push_str(&format!("{iteration},{src},{tgt},{time:.3}\n"));
    }
    out
}

/// The translation run read as a log keyed by `src_len,tgt_len`.
pub fn load_translation(spec: &TranslationSpec) -> Result<RunLog, LoadError> {
    let options = LoadOptions {
        key: vec!["src_len".into(), "tgt_len".into()],
        ..LoadOptions::default()
    };
    load_bytes(
        "translation.csv",
        translation_run(spec).as_bytes(),
        InputFormat::Csv,
        &options,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_run_is_seeded_and_shaped_as_asked() {
        let spec = DriftSpec {
            epochs: 3,
            batches_per_epoch: 50,
            ..DriftSpec::default()
        };
        let a = drift_run(&spec);
        assert_eq!(a, drift_run(&spec));
        assert_ne!(
            a,
            drift_run(&DriftSpec {
                seed: 2,
                ..spec.clone()
            })
        );
        let log = a.load(&LoadOptions::default()).unwrap();
        assert_eq!(log.len(), 150);
        assert_eq!(log.epoch_count(), Some(3));
        assert_eq!(log.metric_names(), vec!["time_ms", "energy_j"]);
        // Every epoch holds the same batches: the sorted keys of epoch 0 and 2 agree.
        let keys_of = |e: u32| {
            let mut k: Vec<u32> = (0..log.len())
                .filter(|&r| log.epochs.as_ref().unwrap()[r] == e)
                .map(|r| log.key(r)[0])
                .collect();
            k.sort_unstable();
            k
        };
        assert_eq!(keys_of(0), keys_of(2));
    }

    #[test]
    fn the_compared_design_saves_more_late_in_training() {
        let log = drift_run(&DriftSpec::default())
            .load(&LoadOptions::default())
            .unwrap();
        let n = log.len();
        let ratio = |rows: std::ops::Range<usize>, m: usize| {
            let a: f64 = rows
                .clone()
                .map(|r| log.configs[0].metrics[m].values[r])
                .sum();
            let b: f64 = rows.map(|r| log.configs[1].metrics[m].values[r]).sum();
            a / b
        };
        let (early, late) = (ratio(0..n / 10, 0), ratio(n - n / 10..n, 0));
        // Savings of about 7% early and 43% late: speedups near 1.08 and 1.75.
        assert!(early < 1.15 && late > 1.6, "{early} {late}");
        let whole_time = ratio(0..n, 0);
        let whole_energy = ratio(0..n, 1);
        assert!((1.25..1.45).contains(&whole_time), "{whole_time}");
        assert!(whole_energy > whole_time, "{whole_energy}");
    }

    #[test]
    fn translation_lengths_recur_and_are_padded() {
        let log = load_translation(&TranslationSpec::default()).unwrap();
        assert_eq!(log.dims(), 2);
        assert!(log.keys.iter().all(|k| k % 4 == 0));
        let groups = crate::groups::KeyGroups::from_log(&log);
        // Recurring pairs: far fewer key groups than iterations.
        assert!(groups.len() * 5 < log.len(), "{} groups", groups.len());
    }

    #[test]
    fn a_slow_window_slows_its_rows_only_and_by_the_stated_factors() {
        let run = DriftSpec {
            epochs: 2,
            batches_per_epoch: 100,
            ..DriftSpec::default()
        };
        let window = NeighbourSpec {
            rows: 50..80,
            ..NeighbourSpec::default()
        };
        let (clean, slowed) = neighbour_run(&run, &window);
        assert_eq!(clean.compare, slowed.compare);
        let options = LoadOptions::default();
        let (a, b) = (
            clean.load_baseline(&options).unwrap(),
            slowed.load_baseline(&options).unwrap(),
        );
        for m in 0..2 {
            for row in 0..a.len() {
                let ratio =
                    b.configs[0].metrics[m].values[row] / a.configs[0].metrics[m].values[row];
                if window.rows.contains(&row) {
                    assert!((1.1199..=1.1601).contains(&ratio), "row {row}: {ratio}");
                } else {
                    assert_eq!(ratio, 1.0, "row {row}");
                }
            }
        }
    }
}
