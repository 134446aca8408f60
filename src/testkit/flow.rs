//! The profiling flows as a user runs them, on a generated run whose truth is known: select on
//! the log, measure the listed iterations on the new configuration (and, for a lengths-only
//! log, on the baseline too), `project --target-error`, measure the top-up it lists, project
//! again. The same library calls `seqpoint select` and `seqpoint project` make, with the
//! measurements taken from a realisation of each configuration instead of a profiler, so the
//! redraw experiment (`examples/redraw_intervals.rs`) and the tests can ask how often the
//! final intervals hold, how wide they are and how many iterations the flow cost.

use std::collections::HashMap;

use crate::doc::{MetricProjection, ProjectionReport, SelectDoc};
use crate::output::json::select_file_document;
use crate::project::document::ProjectOptions;
use crate::runlog::measured::{Identified, Measurements, Sample};
use crate::runlog::{load_run_bytes, InputFormat, LoadOptions, RunLog};
use crate::select::plan::PlanAsk;
use crate::select::{answer, BinCount, SelectOptions, SelectRequest};
use crate::stats::compensated_sum;

/// What the log handed to `select` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Logged {
    /// Every iteration's time on the baseline (the usual timed run).
    Timed,
    /// Lengths only: nothing timed yet, so both configurations are measured at the listed
    /// iterations and `project --baseline` pairs them.
    LengthsOnly,
}

/// One run of the flow: the realisations it measures and what it asks.
pub struct FlowRun<'a> {
    pub lengths: &'a [u32],
    /// Each iteration's time on the baseline and on the new configuration: the truth.
    pub baseline: &'a [f64],
    pub new: &'a [f64],
    pub logged: Logged,
    /// What `select` is asked (e.g. `--target-error 1`, or `--bins K`).
    pub request: SelectRequest,
    /// `project --target-error`; `None` projects the first measurements once.
    pub target_pct: Option<f64>,
    /// Top-up rounds at most (a script loops until the top-up list is empty).
    pub max_rounds: u32,
}

/// One projected figure against its truth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judged {
    pub value: f64,
    pub interval: [f64; 2],
    pub actual: f64,
}

impl Judged {
    pub fn holds(&self) -> bool {
        self.interval[0] <= self.actual && self.actual <= self.interval[1]
    }

    pub fn error_pct(&self) -> f64 {
        100.0 * (self.value - self.actual) / self.actual
    }

    pub fn half_width_pct(&self) -> f64 {
        100.0 * (self.interval[1] - self.interval[0]) / 2.0 / self.value.abs()
    }
}

/// What the flow ended with.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowOutcome {
    /// SeqPoints the selection chose.
    pub seqpoints: usize,
    /// Iterations the first measurements took (the select plan's list).
    pub first: usize,
    /// Iterations the top-ups added, over every round.
    pub top_up: usize,
    /// Top-up rounds measured.
    pub rounds: u32,
    /// Each projection's verdict, first measurements first (`project --target-error`'s).
    pub verdicts: Vec<crate::doc::TargetDoc>,
    /// `select`'s verdict on its own plan, and `project`'s on the final measurements.
    pub select_met: Option<bool>,
    pub met: Option<bool>,
    /// The baseline total: projected in the lengths-only flow, `None` when the log holds it.
    pub baseline: Option<Judged>,
    pub new: Judged,
    pub speedup: Judged,
    /// The final projection's note on what its intervals leave out (`ProjectionReport::caveat`).
    pub caveat: Option<String>,
}

impl FlowOutcome {
    pub fn iterations(&self) -> usize {
        self.first + self.top_up
    }

    /// Every projected figure's interval holds its truth.
    pub fn holds(&self) -> bool {
        self.baseline.as_ref().is_none_or(Judged::holds) && self.new.holds() && self.speedup.holds()
    }
}

/// The flow on a log already read: what it measures (each iteration's time on either
/// configuration, the truth) and what it asks.
pub struct FlowOn<'a> {
    pub baseline: &'a [f64],
    pub new: &'a [f64],
    pub logged: Logged,
    pub request: &'a SelectRequest,
    pub target_pct: Option<f64>,
    pub max_rounds: u32,
}

/// What `select --target-error PCT` asks: the cheapest plan whose intervals meet it.
pub fn target_request(target_pct: f64) -> SelectRequest {
    SelectRequest::asked(
        SelectOptions {
            bins: BinCount::Target(target_pct),
            error_curve: false,
            ..SelectOptions::default()
        },
        PlanAsk::default(),
        target_pct,
    )
}

/// The CSV text of a run log: lengths, and the baseline's times when given (as
/// `GeneratedCase::csv` writes a timed one).
pub fn log_csv(lengths: &[u32], times: Option<&[f64]>) -> String {
    match times {
        Some(times) => super::coverage::GeneratedCase::csv(lengths, times),
        None => {
            let mut text = String::from("iteration,seq_len\n");
            for (i, l) in lengths.iter().enumerate() {
                text.push_str(&format!("{i},{l}\n"));
            }
            text
        }
    }
}

/// Run the flow once on the run's `seq_len` log (timed or lengths only, as `run.logged`
/// says). Errors are the library's own (a refused selection or projection).
pub fn run_flow(run: &FlowRun) -> anyhow::Result<FlowOutcome> {
    let timed = run.logged == Logged::Timed;
    let text = log_csv(run.lengths, timed.then_some(run.baseline));
    let log = load_run_bytes(
        "run.csv",
        text.as_bytes(),
        InputFormat::Csv,
        &LoadOptions::default(),
    )?;
    run_flow_on(
        &log,
        &FlowOn {
            baseline: run.baseline,
            new: run.new,
            logged: run.logged,
            request: &run.request,
            target_pct: run.target_pct,
            max_rounds: run.max_rounds,
        },
    )
}

/// Run the flow once on `log` (read with any key; its rows are the iterations of
/// `run.baseline` and `run.new`): select, measure the listed iterations, project, top up.
pub fn run_flow_on(log: &RunLog, run: &FlowOn) -> anyhow::Result<FlowOutcome> {
    let timed = run.logged == Logged::Timed;
    let answer = answer(log, run.request)?;
    let doc = select_file_document(log, &answer.selection, answer.plan.as_ref(), None, None);
    let index: HashMap<usize, usize> = doc
        .seqpoints
        .iter()
        .enumerate()
        .map(|(i, sp)| (sp.id, i))
        .collect();
    let mut listed: Vec<(usize, u64)> = match &doc.plan {
        Some(plan) => plan
            .profile
            .iter()
            .map(|row| (index[&row.seqpoint], row.iteration))
            .collect(),
        None => doc
            .seqpoints
            .iter()
            .enumerate()
            .map(|(i, sp)| (i, sp.iteration))
            .collect(),
    };
    let first = listed.len();
    let options = ProjectOptions {
        target_error_pct: run.target_pct,
        ..ProjectOptions::default()
    };
    let mut rounds = 0;
    let mut verdicts = Vec::new();
    let report = loop {
        let report = project(&doc, &listed, run, &options)?;
        verdicts.extend(report.target.clone());
        let top_up = report.target.as_ref().map_or(&[][..], |t| &t.top_up[..]);
        if top_up.is_empty() || rounds >= run.max_rounds {
            break report;
        }
        listed.extend(top_up.iter().map(|r| (index[&r.seqpoint], r.iteration)));
        rounds += 1;
    };
    let metric = &report.metrics[0];
    let baseline_actual = compensated_sum(run.baseline.iter().copied());
    let new_actual = compensated_sum(run.new.iter().copied());
    Ok(FlowOutcome {
        seqpoints: doc.seqpoints.len(),
        first,
        top_up: listed.len() - first,
        rounds,
        verdicts,
        select_met: doc.selection.target_met,
        met: report.target.as_ref().map(|t| t.met),
        baseline: (!timed).then(|| baseline_judged(metric, baseline_actual)),
        new: Judged {
            value: metric.projected_total,
            interval: metric.interval,
            actual: new_actual,
        },
        speedup: Judged {
            value: metric.speedup.unwrap_or(f64::NAN),
            interval: metric.speedup_interval.unwrap_or([f64::NAN; 2]),
            actual: baseline_actual / new_actual,
        },
        caveat: report.caveat.clone(),
    })
}

fn baseline_judged(metric: &MetricProjection, actual: f64) -> Judged {
    Judged {
        value: metric.baseline_total.unwrap_or(f64::NAN),
        interval: metric.baseline_interval.unwrap_or([f64::NAN; 2]),
        actual,
    }
}

/// `project` on the iterations measured so far (each measured once, as a profiler would).
fn project(
    doc: &SelectDoc,
    listed: &[(usize, u64)],
    run: &FlowOn,
    options: &ProjectOptions,
) -> anyhow::Result<ProjectionReport> {
    let new = measurements(doc, listed, run.new, "new.csv");
    let baseline = (run.logged == Logged::LengthsOnly)
        .then(|| measurements(doc, listed, run.baseline, "baseline.csv"));
    Ok(crate::project::project_measured(
        "seqpoints.json",
        doc,
        baseline.as_ref(),
        &new,
        options,
    )?)
}

/// The listed iterations measured on one configuration: its values there, one row each, named
/// by iteration as `profile_seqpoints` writes them.
fn measurements(
    doc: &SelectDoc,
    listed: &[(usize, u64)],
    values: &[f64],
    source: &str,
) -> Measurements {
    let mut samples = vec![Vec::new(); doc.seqpoints.len()];
    for (line, &(seqpoint, iteration)) in listed.iter().enumerate() {
        samples[seqpoint].push(Sample {
            iteration: Some(iteration),
            line: line as u64 + 2,
            values: vec![values[iteration as usize]],
        });
    }
    Measurements {
        source: source.into(),
        metric_names: vec!["time_ms".into()],
        identified_by: Identified::Iteration,
        samples,
    }
}

/// One figure over many runs of a flow: how often its interval held, how wide it was against
/// the errors it bounds, and how often the run landed within the target.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FigureRedraws {
    judged: Vec<Judged>,
}

impl FigureRedraws {
    pub fn push(&mut self, judged: Judged) {
        self.judged.push(judged);
    }

    pub fn runs(&self) -> usize {
        self.judged.len()
    }

    pub fn coverage_pct(&self) -> f64 {
        let hits = self.judged.iter().filter(|j| j.holds()).count();
        100.0 * hits as f64 / self.runs().max(1) as f64
    }

    pub fn mean_half_width_pct(&self) -> f64 {
        self.judged.iter().map(Judged::half_width_pct).sum::<f64>() / self.runs().max(1) as f64
    }

    /// The mean signed error: the bias, in percent of the actual figure.
    pub fn mean_error_pct(&self) -> f64 {
        self.judged.iter().map(Judged::error_pct).sum::<f64>() / self.runs().max(1) as f64
    }

    pub fn p95_error_pct(&self) -> f64 {
        let mut errors: Vec<f64> = self.judged.iter().map(|j| j.error_pct().abs()).collect();
        super::coverage::percentile_95(&mut errors)
    }

    /// Mean half-width over the 95th-percentile error (the goal: at most 1.5).
    pub fn width_ratio(&self) -> f64 {
        self.mean_half_width_pct() / self.p95_error_pct()
    }

    /// Share of runs whose error is within `target_pct`.
    pub fn within_pct(&self, target_pct: f64) -> f64 {
        let within = self
            .judged
            .iter()
            .filter(|j| j.error_pct().abs() <= target_pct)
            .count();
        100.0 * within as f64 / self.runs().max(1) as f64
    }
}
