//! A seeded packed run with a known cost: documents of log-normal lengths packed into a token
//! budget, each step's time the cost of its tokens (linear layers) and of its squared document
//! lengths (attention kept within each document) with multiplicative noise, measured on a
//! baseline and on a new configuration whose attention is faster. Both configurations' every
//! step is kept, so any projection can be checked against the actual totals.
//!
//! [`two_stage`] runs the flow a user runs on such a log (select on the baseline, measure the
//! listed iterations on the new configuration, project with a target and measure the top-up,
//! project again) through `testkit::flow::run_flow_on`, and [`at_count`] the same count of
//! iterations chosen on another key, so keys can be compared at equal cost.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::flow::{run_flow_on, target_request, FlowOn, FlowOutcome, Judged, Logged};
use crate::output::json::select_file_document;
use crate::runlog::packed::ModelShape;
use crate::runlog::{load_bytes, packed, InputFormat, LoadOptions, RunLog};
use crate::select::plan::PlanAsk;
use crate::select::SelectOptions;
use crate::select::{answer, SelectRequest};

/// What the generated run looks like.
#[derive(Debug, Clone, PartialEq)]
pub struct PackedSpec {
    pub seed: u64,
    pub steps: usize,
    /// Tokens a step may hold (the padded length of every step).
    pub budget: u32,
    /// Median document length and the sd of its logarithm.
    pub median_doc: f64,
    pub log_sd: f64,
    /// Baseline milliseconds: per step, per token and per squared document length.
    pub per_step_ms: f64,
    pub per_token_ms: f64,
    pub per_attn_ms: f64,
    /// Relative sd of one step's time around its cost, on either configuration.
    pub noise: f64,
    /// How much faster the new configuration's attention is (the rest is unchanged).
    pub attn_speedup: f64,
}

impl Default for PackedSpec {
    /// 20,000 steps of 8,192 tokens; documents with a median of 600 tokens (mean about 990,
    /// one in 25 above 4,000, cut at the budget); 30 ms per step, 0.1 ms per token and
    /// 30 ms per million squared tokens, so attention is about 35% of a step on average and
    /// 15-70% for 98% of the steps; 3% noise; the new configuration's attention 2.5x faster.
    fn default() -> Self {
        PackedSpec {
            seed: 1,
            steps: 20_000,
            budget: 8_192,
            median_doc: 600.0,
            log_sd: 1.0,
            per_step_ms: 30.0,
            per_token_ms: 0.1,
            per_attn_ms: 30e-6,
            noise: 0.03,
            attn_speedup: 2.5,
        }
    }
}

/// One generated run: every step's documents, cost and measured times on both configurations.
#[derive(Debug, Clone, PartialEq)]
pub struct PackedRun {
    pub spec: PackedSpec,
    pub doc_lens: Vec<Vec<u32>>,
    pub tokens: Vec<u64>,
    pub attn: Vec<u64>,
    pub baseline_ms: Vec<f64>,
    pub new_ms: Vec<f64>,
}

/// A standard normal draw (Box-Muller).
fn normal(rng: &mut impl Rng) -> f64 {
    let u1: f64 = 1.0 - rng.gen::<f64>();
    let u2: f64 = rng.gen::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

impl PackedSpec {
    /// The cost of a step without noise, on the baseline (`attn_speedup` 1) or the new one.
    pub fn cost_ms(&self, tokens: u64, attn: u64, attn_speedup: f64) -> f64 {
        self.per_step_ms
            + self.per_token_ms * tokens as f64
            + self.per_attn_ms * attn as f64 / attn_speedup
    }

    /// The model shape whose `--key flops` is proportional to this run's cost less its
    /// per-step part: FLOPs weigh attn against tokens as 12 L H against 6 x 12 L H^2, that is
    /// 1 / (6 H), so H = per_token / (6 per_attn) (556 for the default spec).
    pub fn matching_model(&self) -> ModelShape {
        ModelShape {
            layers: 1,
            hidden: (self.per_token_ms / (6.0 * self.per_attn_ms))
                .round()
                .max(1.0) as u64,
            vocab: None,
        }
    }

    /// Generate the run. Documents come in a stream and are packed greedily: a step takes
    /// documents while the next fits, and the one that does not starts the next step (a
    /// document longer than the budget is cut to it), so steps differ in fill and in mix.
    pub fn generate(&self) -> PackedRun {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(self.seed);
        let budget = u64::from(self.budget);
        let draw = |rng: &mut Xoshiro256PlusPlus| -> u64 {
            let len = (self.median_doc.ln() + self.log_sd * normal(rng))
                .exp()
                .round();
            (len as u64).clamp(1, budget)
        };
        let mut pending = draw(&mut rng);
        let mut run = PackedRun {
            spec: self.clone(),
            doc_lens: Vec::with_capacity(self.steps),
            tokens: Vec::with_capacity(self.steps),
            attn: Vec::with_capacity(self.steps),
            baseline_ms: Vec::with_capacity(self.steps),
            new_ms: Vec::with_capacity(self.steps),
        };
        for _ in 0..self.steps {
            let mut lens = Vec::new();
            let mut used = 0;
            while used + pending <= budget {
                used += pending;
                lens.push(pending as u32);
                pending = draw(&mut rng);
            }
            let tokens: u64 = lens.iter().map(|&l| u64::from(l)).sum();
            let attn: u64 = lens.iter().map(|&l| u64::from(l) * u64::from(l)).sum();
            let mut noisy = |cost: f64| cost * (1.0 + self.noise * normal(&mut rng)).max(0.5);
            run.baseline_ms.push(noisy(self.cost_ms(tokens, attn, 1.0)));
            run.new_ms
                .push(noisy(self.cost_ms(tokens, attn, self.attn_speedup)));
            run.doc_lens.push(lens);
            run.tokens.push(tokens);
            run.attn.push(attn);
        }
        run
    }
}

impl PackedRun {
    /// The baseline's log: `iteration,seq_len,doc_lens,time_ms`, the padded length the budget
    /// in every step and the lengths space-separated.
    pub fn baseline_csv(&self) -> String {
        self.csv(&self.baseline_ms, 0..self.doc_lens.len() as u64)
    }

    /// The new configuration's measured times at the given iterations, in the baseline's
    /// columns (every step: a full timed log, which `project` and `select --compare` read).
    pub fn new_csv(&self, iterations: impl IntoIterator<Item = u64>) -> String {
        self.csv(&self.new_ms, iterations)
    }

    fn csv(&self, times: &[f64], iterations: impl IntoIterator<Item = u64>) -> String {
        let mut text = String::from("iteration,seq_len,doc_lens,time_ms\n");
        for i in iterations {
            let lens: Vec<String> = self.doc_lens[i as usize]
                .iter()
                .map(u32::to_string)
                .collect();
            text.push_str(&format!(
                "{i},{},{},{:.4}\n",
                self.spec.budget,
                lens.join(" "),
                times[i as usize]
            ));
        }
        text
    }

    /// The actual totals (baseline, new) and the speedup between them.
    pub fn truth(&self) -> Truth {
        let baseline: f64 = self.baseline_ms.iter().map(|&t| round4(t)).sum();
        let new: f64 = self.new_ms.iter().map(|&t| round4(t)).sum();
        Truth {
            baseline,
            new,
            speedup: baseline / new,
        }
    }

    /// The baseline log read with `key` (as `--key` gives it), as `load_run` reads it from
    /// a file: `--key fit` fitted and keyed on the fit.
    pub fn load(&self, key: &[&str]) -> Result<RunLog, crate::runlog::LoadError> {
        self.load_noted(key).map(|(log, _)| log)
    }

    /// `load`, with the notes the load made (the fit's formula for `--key fit`). `--key flops`
    /// is counted with the spec's [`PackedSpec::matching_model`].
    pub fn load_noted(
        &self,
        key: &[&str],
    ) -> Result<(RunLog, Vec<String>), crate::runlog::LoadError> {
        packed::take_notes();
        let mut log = load_bytes(
            "packed.csv",
            self.baseline_csv().as_bytes(),
            InputFormat::Csv,
            &LoadOptions {
                key: key.iter().map(|k| k.to_string()).collect(),
                ..LoadOptions::default()
            },
        )?;
        if key == [packed::FIT_KEY] {
            packed::apply_fit(&mut log)?;
        }
        if key == [packed::FLOPS_KEY] {
            packed::apply_flops(&mut log, Some(self.spec.matching_model()))?;
        }
        Ok((log, packed::take_notes()))
    }
}

/// A time as the CSV holds it (4 decimals): the truth is the logged run's.
fn round4(t: f64) -> f64 {
    format!("{t:.4}").parse().expect("a number")
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Truth {
    pub baseline: f64,
    pub new: f64,
    pub speedup: f64,
}

/// A flow's outcome on a packed run: `testkit::flow`'s, each figure judged against the truth.
pub type Outcome = FlowOutcome;

type FlowResult = Result<Outcome, Box<dyn std::error::Error + Send + Sync>>;

impl PackedRun {
    /// Each step's time on the baseline and on the new configuration as the logs hold them
    /// (4 decimals), so a measurement is what a profiler's log of that step would read.
    fn logged_times(&self) -> (Vec<f64>, Vec<f64>) {
        let logged = |times: &[f64]| times.iter().map(|&t| round4(t)).collect();
        (logged(&self.baseline_ms), logged(&self.new_ms))
    }

    /// `testkit::flow`'s timed flow on this run's log read with `key`.
    fn flow(
        &self,
        key: &[&str],
        request: &SelectRequest,
        target_pct: Option<f64>,
        rounds: u32,
    ) -> FlowResult {
        let log = self.load(key)?;
        let (baseline, new) = self.logged_times();
        let flow = FlowOn {
            baseline: &baseline,
            new: &new,
            logged: Logged::Timed,
            request,
            target_pct,
            max_rounds: rounds,
        };
        Ok(run_flow_on(&log, &flow)?)
    }
}

/// `select RUN --key KEY --target-error PCT`, the listed iterations measured on the new
/// configuration, `project --target-error PCT --top-up next.json`, the top-up measured, and
/// `project` with both files: the figures of the last projection.
pub fn two_stage(run: &PackedRun, key: &[&str], target_pct: f64) -> FlowResult {
    two_stage_at(run, key, target_pct, target_pct)
}

/// [`two_stage`] with the selection sized for `select_pct` (a tighter target lists more
/// SeqPoints, and so more iterations a top-up may take) and projected at `target_pct`.
pub fn two_stage_at(run: &PackedRun, key: &[&str], select_pct: f64, target_pct: f64) -> FlowResult {
    until_met(run, key, select_pct, target_pct, 1)
}

/// [`two_stage_at`] with up to `rounds` top-ups, each measured and projected with all before
/// it (a script that measures and projects until the top-up list is empty).
pub fn until_met(
    run: &PackedRun,
    key: &[&str],
    select_pct: f64,
    target_pct: f64,
    rounds: u32,
) -> FlowResult {
    run.flow(key, &target_request(select_pct), Some(target_pct), rounds)
}

/// `select RUN --key KEY --budget N` (N iterations to profile, Neyman-allocated over the bins
/// `--target-error PCT` chooses), measured on the new configuration and projected.
pub fn at_count(run: &PackedRun, key: &[&str], count: u64, target_pct: f64) -> FlowResult {
    let options = SelectOptions {
        bins: crate::select::BinCount::Target(target_pct),
        error_curve: false,
        ..SelectOptions::default()
    };
    let ask = PlanAsk {
        budget: Some(count),
        ..PlanAsk::default()
    };
    run.flow(
        key,
        &SelectRequest::asked(options, ask, target_pct),
        None,
        0,
    )
}

/// What `select RUN --key KEY --compare NEW --target-error PCT` says when the new
/// configuration's every step is logged, against the truth, with the error taken apart: how
/// much of it a bin's whole picked key group would still make on each configuration (the
/// representative's bias, no sampling left in it).
#[derive(Debug, Clone, PartialEq)]
pub struct CompareOutcome {
    /// `select`'s verdict on its target.
    pub met: Option<bool>,
    pub seqpoints: usize,
    /// The plan's iterations (the totals are projected from their logged values).
    pub iterations: u64,
    /// The baseline total projected from the plan's iterations (the log holds the truth).
    pub baseline: Judged,
    pub new: Judged,
    pub speedup: Judged,
    /// The error (in % of the truth) of each bin's weight times the mean of every step of its
    /// picked key, on the baseline and on the new configuration.
    pub key_group_error_pct: [f64; 2],
    /// How much more (or less, below 0) attention the bins' picked key groups hold than their
    /// bins, weighted as the projection weighs them, in % of the run's attention.
    pub attn_gap_pct: f64,
    /// The sd of one step's time within its key group over its mean, pooled over the picked
    /// keys' groups (weighted by their bins), on the baseline and on the new configuration:
    /// the noise each configuration's measurements carry at one key.
    pub within_key_cv_pct: [f64; 2],
}

/// `select --compare` on a packed run, the new configuration's whole log as the compare log.
pub fn select_compare(
    run: &PackedRun,
    key: &[&str],
    target_pct: f64,
) -> Result<CompareOutcome, Box<dyn std::error::Error + Send + Sync>> {
    let options = LoadOptions {
        key: key.iter().map(|k| k.to_string()).collect(),
        ..LoadOptions::default()
    };
    let read =
        |name: &str, text: String| load_bytes(name, text.as_bytes(), InputFormat::Csv, &options);
    let steps = run.doc_lens.len() as u64;
    let mut log = crate::runlog::with_compare(
        read("packed.csv", run.baseline_csv())?,
        read("packed_new.csv", run.new_csv(0..steps))?,
    )?;
    if key == [packed::FIT_KEY] {
        packed::apply_fit(&mut log)?;
    }
    let chosen = answer(&log, &target_request(target_pct))?;
    let doc = select_file_document(&log, &chosen.selection, chosen.plan.as_ref(), None, None);
    let truth = run.truth();
    let figure = |value: Option<f64>, interval: [Option<f64>; 2], actual: f64| Judged {
        value: value.unwrap_or(f64::NAN),
        interval: interval.map(|v| v.unwrap_or(f64::NAN)),
        actual,
    };
    let [base, new] = [&doc.projection[0], &doc.projection[1]];
    let speedup = doc
        .speedup
        .as_ref()
        .ok_or("select --compare gave no speedup")?;
    let times = [&run.baseline_ms, &run.new_ms];
    let key_group_error_pct = [0, 1].map(|c| {
        let projected: f64 = chosen
            .selection
            .seqpoints
            .iter()
            .map(|sp| {
                let group: Vec<f64> = (0..log.len())
                    .filter(|&r| log.key(r) == sp.key.as_slice())
                    .map(|r| round4(times[c][r]))
                    .collect();
                sp.weight as f64 * group.iter().sum::<f64>() / group.len() as f64
            })
            .sum();
        let actual = [truth.baseline, truth.new][c];
        100.0 * (projected - actual) / actual
    });
    let mean = |rows: &mut dyn Iterator<Item = usize>| {
        let (sum, n) = rows.fold((0.0, 0.0), |(s, n), r| (s + run.attn[r] as f64, n + 1.0));
        sum / n
    };
    let gap: f64 = chosen
        .selection
        .seqpoints
        .iter()
        .map(|sp| {
            let at_key = mean(&mut (0..log.len()).filter(|&r| log.key(r) == sp.key.as_slice()));
            let in_bin = mean(
                &mut (0..log.len())
                    .filter(|&r| (sp.bin_min[0]..=sp.bin_max[0]).contains(&log.key(r)[0])),
            );
            sp.weight as f64 * (at_key - in_bin)
        })
        .sum();
    let within_key_cv_pct = [0, 1].map(|c| {
        let (mut sum, mut weights) = (0.0, 0.0);
        for sp in &chosen.selection.seqpoints {
            let group: Vec<f64> = (0..log.len())
                .filter(|&r| log.key(r) == sp.key.as_slice())
                .map(|r| times[c][r])
                .collect();
            if group.len() < 2 {
                continue;
            }
            let n = group.len() as f64;
            let mean = group.iter().sum::<f64>() / n;
            let var = group.iter().map(|t| (t - mean).powi(2)).sum::<f64>() / (n - 1.0);
            sum += sp.weight as f64 * var.sqrt() / mean;
            weights += sp.weight as f64;
        }
        100.0 * sum / weights
    });
    let attn_gap_pct = 100.0 * gap / run.attn.iter().map(|&a| a as f64).sum::<f64>();
    Ok(CompareOutcome {
        within_key_cv_pct,
        attn_gap_pct,
        met: doc.selection.target_met,
        seqpoints: doc.seqpoints.len(),
        iterations: doc
            .iterations_to_profile
            .unwrap_or(doc.seqpoints.len() as u64),
        baseline: Judged {
            value: base.projected,
            interval: base.interval,
            actual: truth.baseline,
        },
        new: Judged {
            value: new.projected,
            interval: new.interval,
            actual: truth.new,
        },
        speedup: figure(speedup.projected, speedup.interval, truth.speedup),
        key_group_error_pct,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_hold_their_documents_within_the_budget_and_cost_what_the_spec_says() {
        let spec = PackedSpec {
            steps: 300,
            noise: 0.0,
            ..PackedSpec::default()
        };
        let run = spec.generate();
        assert_eq!(run.doc_lens.len(), 300);
        for (i, lens) in run.doc_lens.iter().enumerate() {
            let tokens: u64 = lens.iter().map(|&l| u64::from(l)).sum();
            let attn: u64 = lens.iter().map(|&l| u64::from(l).pow(2)).sum();
            assert!(!lens.is_empty() && tokens <= 8192, "step {i}: {lens:?}");
            assert_eq!((run.tokens[i], run.attn[i]), (tokens, attn));
            // Without noise the times are the cost, and only attention is faster.
            let base = 30.0 + 0.1 * tokens as f64 + 30e-6 * attn as f64;
            assert!((run.baseline_ms[i] - base).abs() < 1e-9);
            assert!((run.new_ms[i] - (base - 30e-6 * attn as f64 * 0.6)).abs() < 1e-9);
        }
        // Greedy packing: a step's fill plus the next step's first document is over budget.
        for i in 0..299 {
            assert!(
                run.tokens[i] + u64::from(run.doc_lens[i + 1][0]) > 8192,
                "step {i}"
            );
        }
        // The same seed gives the same run, another seed another.
        assert_eq!(spec.generate(), run);
        let other = PackedSpec { seed: 2, ..spec }.generate();
        assert_ne!(other.doc_lens, run.doc_lens);
    }

    #[test]
    fn at_one_fit_key_the_new_configuration_varies_more_than_the_baseline() {
        // The fit is made on the baseline, whose time at one key varies by its 3% noise and
        // the quantisation; the new configuration's also by the share of attention, which
        // it speeds up and the key does not see (2.97% against 4.81% over seeds 1-120).
        let run = PackedSpec {
            steps: 5_000,
            ..PackedSpec::default()
        }
        .generate();
        let o = select_compare(&run, &["fit"], 1.0).unwrap();
        let [base, new] = o.within_key_cv_pct;
        assert!((2.5..3.6).contains(&base), "{o:?}");
        assert!(new > base + 1.0, "{o:?}");
        // Both totals are the runs' own: the baseline's from the log, the new one's from the
        // compare log, each projected from the plan's iterations.
        assert_eq!(o.baseline.actual, run.truth().baseline);
        assert_eq!(o.new.actual, run.truth().new);
        assert!(o.iterations >= o.seqpoints as u64, "{o:?}");
    }

    #[test]
    fn the_log_reads_back_into_the_derived_keys() {
        let run = PackedSpec {
            steps: 50,
            ..PackedSpec::default()
        }
        .generate();
        let log = run.load(&["tokens"]).unwrap();
        let want: Vec<u32> = run.tokens.iter().map(|&t| t as u32).collect();
        assert_eq!(log.keys, want);
        let logged: f64 = log.configs[0].metrics[0].values.iter().sum();
        assert!((logged - run.truth().baseline).abs() < 1e-6 * logged);
    }
}
