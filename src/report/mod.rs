//! Sanity checks before profiling (`seqpoint report`): whether the key decides the metric,
//! per-key noise, warm-up, drift over training, slow windows (another process on the machine),
//! outliers and the run's shape, each a `Finding`.
//!
//! Every check is a plain function of the run log; `run_checks` runs them in that order.
//! Values are fractions (0.01 = 1%) or counts, never percentages; figures and advice are text
//! for people. A verdict is `warn` when the user should act (or look) before profiling,
//! including when a check could not be made (then `value` is None).

pub mod document;
mod drift;
mod neighbours;
mod render;
mod robust;
mod shape;
mod variance;

pub use drift::{stratum_drifts, DriftStrata, StratumDrift};
pub use neighbours::{
    slow_windows, window_effect, Detected, WindowEffect, WindowVerdict, PERMUTATIONS,
};
pub use render::findings_table;
pub use robust::{deviations, pooled_mad, warmup_length, JUDGED_MIN};
pub use variance::{explained, noise, Explained, Noise};

use crate::options::{COMPARE, EXCLUDE};
use crate::select::command::CommandLine;
use serde::{Deserialize, Serialize};

use crate::groups::KeyGroups;
use crate::runlog::{ConfigRole, RunLog};
use crate::select::Exclusion;

/// The checks, in the order they are reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Check {
    Explained,
    Noise,
    Warmup,
    Drift,
    Neighbours,
    Outliers,
    Shape,
}

impl Check {
    pub const ALL: [Check; 7] = [
        Check::Explained,
        Check::Noise,
        Check::Warmup,
        Check::Drift,
        Check::Neighbours,
        Check::Outliers,
        Check::Shape,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Check::Explained => "explained",
            Check::Noise => "noise",
            Check::Warmup => "warmup",
            Check::Drift => "drift",
            Check::Neighbours => "neighbours",
            Check::Outliers => "outliers",
            Check::Shape => "shape",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Ok,
    Warn,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Warn => "warn",
        }
    }

    fn warn_if(condition: bool) -> Verdict {
        if condition {
            Verdict::Warn
        } else {
            Verdict::Ok
        }
    }
}

/// One figure behind a finding, per configuration and metric where that applies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Detail {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<ConfigRole>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
    pub name: String,
    pub value: f64,
}

impl Detail {
    fn of(series: &Series, name: impl Into<String>, value: f64) -> Detail {
        Detail {
            config: Some(series.config),
            metric: Some(series.metric.to_string()),
            name: name.into(),
            value,
        }
    }

    fn run(name: impl Into<String>, value: f64) -> Detail {
        Detail {
            config: None,
            metric: None,
            name: name.into(),
            value,
        }
    }
}

/// What one check found: its headline value, a verdict, the figures in words and what to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub check: Check,
    pub verdict: Verdict,
    /// The headline figure (see each check); None when the check could not be made.
    pub value: Option<f64>,
    pub figure: String,
    pub advice: String,
    /// A flag to pass to `select`, when the advice is one (`--warmup 1`, `--strata epoch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggest: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<Detail>,
}

/// Thresholds of the checks. Shares are fractions (0.01 = 1%).
#[derive(Debug, Clone, PartialEq)]
pub struct ReportOptions {
    /// `explained` warns below this share of variance explained by the key.
    pub explained_min: f64,
    /// `explained` (2-D keys): one length alone would do when its adjusted share is within this
    /// of both lengths' adjusted share.
    pub alone_tolerance: f64,
    /// `noise` warns when the median within-key coefficient of variation exceeds this.
    pub noise_max_cv: f64,
    /// `warmup` and `outliers`: how many pooled MADs from its key's median is "far".
    pub mad_factor: f64,
    /// `outliers` warns when the outliers' excess over their key medians exceeds this share of
    /// the total metric.
    pub outlier_excess_max: f64,
    /// `drift` warns above this weighted drift (of any metric, or of the speedup).
    pub drift_max: f64,
    /// `drift`: chance that a run whose keys cost the same throughout is told to bin its
    /// strata separately (split over the configurations, metrics and speedups).
    pub drift_false_alarm: f64,
    /// `drift`: contiguous phases compared when the log has fewer than two epochs.
    pub phases: usize,
    /// `neighbours`: chance that a run without a slow window raises one (split over the
    /// configurations and metrics).
    pub false_alarm: f64,
    /// `neighbours`: a window is reported when its excess is at least this share of a total...
    pub neighbour_excess_min: f64,
    /// ... and it ran at least this much slower than the same keys elsewhere: another process
    /// slows a stretch by several percent at once, while a smaller rise is read as drift.
    pub neighbour_slowdown_min: f64,
    /// Iterations left out of every check (`--exclude`), as `select --exclude` leaves them out;
    /// must pass `Exclusion::check` against the log.
    pub exclude: Exclusion,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            explained_min: 0.9,
            alone_tolerance: 0.01,
            noise_max_cv: 0.05,
            mad_factor: 5.0,
            outlier_excess_max: 0.01,
            drift_max: 0.01,
            drift_false_alarm: 0.01,
            phases: 4,
            false_alarm: 0.01,
            neighbour_excess_min: 0.005,
            neighbour_slowdown_min: 0.04,
            exclude: Exclusion::default(),
        }
    }
}

/// One metric of one configuration: what most checks read.
#[derive(Debug, Clone, Copy)]
pub struct Series<'a> {
    pub config: ConfigRole,
    pub config_index: usize,
    pub metric_index: usize,
    pub metric: &'a str,
    pub values: &'a [f64],
}

impl Series<'_> {
    fn label(&self) -> String {
        format!("{} {}", self.metric, self.config.name())
    }
}

/// What the checks share: the log, its key groups, each row's group, the series.
pub(crate) struct Context<'a> {
    /// The log checked: the run less `--exclude`'s iterations.
    pub log: &'a RunLog,
    /// With `--exclude`: each checked row's row in the whole run (what `select --warmup`
    /// counts).
    pub run_rows: Option<&'a [u32]>,
    pub groups: KeyGroups,
    pub group_of_row: Vec<u32>,
    pub series: Vec<Series<'a>>,
    pub options: ReportOptions,
}

impl<'a> Context<'a> {
    fn new(log: &'a RunLog, options: &ReportOptions) -> Self {
        Self::checking(log, None, options)
    }

    /// Each key group's median of a series.
    pub fn medians(&self, series: &Series) -> &[f64] {
        self.groups
            .medians(self.log, series.config_index, series.metric_index)
    }

    /// The context of `log`, which holds rows `run_rows` of the whole run when given.
    fn checking(log: &'a RunLog, run_rows: Option<&'a [u32]>, options: &ReportOptions) -> Self {
        let groups = KeyGroups::from_log(log);
        let group_of_row = group_of_row(&groups, log.len());
        let series = log
            .configs
            .iter()
            .enumerate()
            .flat_map(|(c, config)| {
                config
                    .metrics
                    .iter()
                    .enumerate()
                    .map(move |(m, metric)| Series {
                        config: config.role,
                        config_index: c,
                        metric_index: m,
                        metric: &metric.name,
                        values: &metric.values,
                    })
            })
            .collect();
        Context {
            log,
            run_rows,
            groups,
            group_of_row,
            series,
            options: options.clone(),
        }
    }

    fn key_text(&self, group: usize) -> String {
        crate::groups::key_text(self.groups.key(group))
    }

    fn key_name(&self) -> String {
        self.log.key_names.join(",")
    }

    /// The `--warmup` that skips the first `checked` rows of the checked log: rows of the
    /// whole run, excluded ones included, as `select --warmup` counts them.
    fn warmup_flag(&self, checked: usize) -> usize {
        match self.run_rows {
            Some(rows) if checked > 0 => rows[checked - 1] as usize + 1,
            _ => checked,
        }
    }

    /// How many checked rows `--warmup run_rows` skips (the inverse of `warmup_flag`).
    fn checked_rows_before(&self, run_rows: usize) -> usize {
        match self.run_rows {
            Some(rows) => rows.partition_point(|&r| (r as usize) < run_rows),
            None => run_rows,
        }
    }

    /// `seqpoint select RUN [--compare NEW] [--exclude A-B]... FLAGS`: the run named as it was
    /// read, with the iterations this report left out, so that advice followed checks the same
    /// run.
    fn select_command(&self, flags: &str) -> String {
        let mut line = CommandLine::select(&self.log.source);
        if let Some(compare) = self.log.compare() {
            line.option(COMPARE, &compare.source);
        }
        for range in self.options.exclude.texts() {
            line.option(EXCLUDE, range);
        }
        format!("{} {flags}", line.text())
    }
}

/// Row -> index of its key group (in `KeyGroups` order).
pub fn group_of_row(groups: &KeyGroups, rows: usize) -> Vec<u32> {
    let mut of_row = vec![0u32; rows];
    for g in 0..groups.len() {
        for &r in groups.rows_of(g) {
            of_row[r as usize] = g as u32;
        }
    }
    of_row
}

/// Run every check on a run log, in the order `explained`, `noise`, `warmup`, `drift`,
/// `neighbours`, `outliers`, `shape`.
/// With `options.exclude`, the checks read the run less those iterations (`Exclusion::kept_log`)
/// and every `--warmup` they suggest counts rows of the whole run, as `select` does.
pub fn run_checks(log: &RunLog, options: &ReportOptions) -> Vec<Finding> {
    if options.exclude.is_empty() {
        return checks(&Context::new(log, options));
    }
    let rows = options.exclude.kept_rows(log);
    let kept = log.subset(&rows);
    checks(&Context::checking(&kept, Some(&rows), options))
}

fn checks(ctx: &Context) -> Vec<Finding> {
    let log = ctx.log;
    if log.proxy.is_some() || ctx.series.is_empty() {
        let what = match log.proxy {
            Some(cost) => format!("only the {cost} proxy cost of its lengths"),
            None => "no metric column".to_string(),
        };
        let mut findings: Vec<Finding> = Check::ALL[..6]
            .iter()
            .map(|&check| Finding {
                check,
                verdict: Verdict::Warn,
                value: None,
                figure: format!("not checked: the log has no measured metric, {what}"),
                advice: "log time_ms (or energy_j) per iteration, even on a short run, and run \
                         report again: only measurements show whether the key decides the cost"
                    .to_string(),
                suggest: None,
                details: Vec::new(),
            })
            .collect();
        findings.push(shape::shape(ctx));
        return findings;
    }
    let mut warmup = robust::warmup(ctx);
    // The finding's value is a `--warmup` (rows of the whole run); the checks count their own.
    let warmup_rows = ctx.checked_rows_before(warmup.value.unwrap_or(0.0) as usize);
    // Slow windows first: they explain a slow start, a drifting epoch and a run of outliers,
    // which the other checks then leave to them.
    let windows = neighbours::find_windows(ctx, warmup_rows);
    let ranges: Vec<(usize, usize)> = windows.iter().map(|w| (w.0, w.1)).collect();
    robust::within_slow_start(ctx, &mut warmup, &ranges);
    vec![
        variance::explained_check(ctx),
        variance::noise_check(ctx),
        warmup,
        drift::drift(ctx, &ranges),
        neighbours::neighbours(ctx, &windows),
        robust::outliers(ctx, warmup_rows, &ranges),
        shape::shape(ctx),
    ]
}

/// Median of a list (reordered); None when empty.
fn median(values: &mut [f64]) -> Option<f64> {
    (!values.is_empty()).then(|| crate::stats::median_in_place(values))
}

fn pct(share: f64) -> String {
    format!("{:.2}%", 100.0 * share)
}

#[cfg(test)]
pub(crate) mod test_support {
    pub(crate) use crate::runlog::test_log as log;
    use crate::runlog::{load_bytes, InputFormat, LoadOptions, RunLog};

    pub fn log_with(text: &str, options: &LoadOptions) -> RunLog {
        load_bytes("t.csv", text.as_bytes(), InputFormat::Csv, options).unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::log;
    use super::*;
    use crate::output::json::report_document;
    use crate::report::document::ReportDoc;

    #[test]
    fn every_check_once_in_order_and_json_names() {
        let log = log("seq_len,time_ms\n1,1\n1,1.1\n1,0.9\n2,2\n2,2.1\n2,1.9\n");
        let findings = run_checks(&log, &ReportOptions::default());
        let checks: Vec<Check> = findings.iter().map(|f| f.check).collect();
        assert_eq!(checks, Check::ALL.to_vec());
        let doc = report_document(&log, &Exclusion::default(), findings);
        let json = serde_json::to_value(&doc).unwrap();
        assert_eq!(json["schema"], "seqpoint-report/1");
        let names: Vec<&str> = json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["check"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "explained",
                "noise",
                "warmup",
                "drift",
                "neighbours",
                "outliers",
                "shape"
            ]
        );
        for f in json["findings"].as_array().unwrap() {
            assert!(["ok", "warn"].contains(&f["verdict"].as_str().unwrap()));
            assert!(f["advice"].is_string() && f["figure"].is_string());
        }
        let back: ReportDoc = serde_json::from_value(json).unwrap();
        assert_eq!(back, doc);
    }

    #[test]
    fn proxy_logs_say_nothing_was_measured() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lengths.csv");
        std::fs::write(&path, "seq_len\n1\n2\n3\n").unwrap();
        let log = crate::load_run(path.to_str().unwrap(), &Default::default()).unwrap();
        assert!(log.proxy.is_some());
        let findings = run_checks(&log, &ReportOptions::default());
        assert_eq!(findings.len(), 7);
        assert!(findings[0].figure.contains("linear proxy cost"));
        for f in &findings[..6] {
            assert_eq!((f.verdict, f.value), (Verdict::Warn, None));
            assert!(f.figure.contains("no measured metric"), "{}", f.figure);
        }
        assert_eq!(findings[6].check, Check::Shape);
        assert_eq!(findings[6].value, Some(3.0));
    }
}
