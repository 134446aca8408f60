//! Writers: the `seqpoint/1` JSON document, the SeqPoint CSV list, and atomic file output
//! that never overwrites unless asked.

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::project::{SpeedupRow, TotalRow};
use crate::runlog::RunLog;
use crate::select::plan::{PlanRule, ProfilePlan};
use crate::select::{BinCount, Selection};

pub const SCHEMA: &str = "seqpoint/1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputDoc {
    pub path: String,
    pub iterations: u64,
    pub epochs: Option<u32>,
    pub key: Vec<String>,
    pub unique_keys: u64,
    pub metrics: Vec<String>,
    pub compare: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelectionDoc {
    pub method: String,
    pub pick: String,
    pub bins: usize,
    pub target_error_pct: Option<f64>,
    pub cost: String,
    pub warmup: u64,
    pub seed: u64,
    #[serde(default = "one")]
    pub samples: u64,
    #[serde(default)]
    pub strata: String,
    #[serde(default)]
    pub target_met: Option<bool>,
    #[serde(default)]
    pub advice: Option<String>,
    /// Each stratum's name, iterations, K and own figures (empty without --strata).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_stratum: Vec<crate::select::StratumOutcome>,
}

fn one() -> u64 {
    1
}

fn null_as_infinity<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::INFINITY))
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BinRange {
    pub min: Vec<u32>,
    pub max: Vec<u32>,
}

/// Within-bin statistics of one metric on the baseline: what `project` needs for intervals.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BinStats {
    pub count: u64,
    pub mean: f64,
    pub sd: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeqPointDoc {
    pub id: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stratum: Option<usize>,
    pub iteration: u64,
    pub epoch: Option<u32>,
    pub key: Vec<u32>,
    pub weight: u64,
    pub bin: BinRange,
    pub alternates: Vec<u64>,
    pub metrics: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compare_metrics: Option<Map<String, Value>>,
    #[serde(default)]
    pub bin_stats: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelectDoc {
    pub schema: String,
    pub input: InputDoc,
    pub selection: SelectionDoc,
    pub seqpoints: Vec<SeqPointDoc>,
    pub projection: Vec<Value>,
    pub speedup: Option<Value>,
    /// The speedup of every metric (`speedup` is the first of these), so that time and energy
    /// are both reported.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub speedups: Vec<Value>,
    /// Infinite when the SeqPoints' own metric is zero; JSON has no infinity, so it is written
    /// as `null` and read back as infinity.
    #[serde(deserialize_with = "null_as_infinity")]
    pub profiling_reduction: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The iterations to profile when more than one per SeqPoint is planned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanDoc>,
    /// Naive ways to pick the same number of iterations, and their errors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub baselines: Vec<crate::project::baselines::Baseline>,
}

/// How many iterations to profile per SeqPoint, and which.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanDoc {
    /// `samples` (M per SeqPoint), `budget` (Neyman allocation of B) or `target`
    /// (the cheapest plan whose 95% interval meets the error target).
    pub rule: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_error_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub met: Option<bool>,
    /// Profiled iterations in all.
    pub iterations: u64,
    pub bins: Vec<PlannedBinDoc>,
    /// One entry per iteration to profile.
    pub profile: Vec<ProfileRowDoc>,
    /// Projected from the planned iterations' logged values, intervals for this plan.
    #[serde(default)]
    pub projection: Vec<Value>,
    #[serde(default)]
    pub speedup: Option<Value>,
    #[serde(default)]
    pub profiling_reduction: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedBinDoc {
    pub seqpoint: usize,
    pub samples: u64,
    pub weight: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProfileRowDoc {
    pub iteration: u64,
    pub seqpoint: usize,
    #[serde(default)]
    pub epoch: Option<u32>,
    #[serde(default)]
    pub key: Vec<u32>,
}

fn metric_map(names: &[String], values: &[f64]) -> Map<String, Value> {
    names
        .iter()
        .zip(values)
        .map(|(n, v)| (n.clone(), Value::from(*v)))
        .collect()
}

fn total_value(row: &TotalRow) -> Value {
    serde_json::to_value(row).expect("plain data serialises")
}

fn speedup_value(row: &SpeedupRow) -> Value {
    serde_json::to_value(row).expect("plain data serialises")
}

/// The `seqpoint/1` document for a selection. `command` records how to reproduce it.
pub fn select_document(log: &RunLog, selection: &Selection, command: Option<String>) -> SelectDoc {
    let names = log.metric_names();
    let unique_keys = crate::groups::KeyGroups::from_log(log).len() as u64;
    let seqpoints = selection
        .seqpoints
        .iter()
        .map(|sp| SeqPointDoc {
            id: sp.id,
            stratum: sp.stratum,
            iteration: sp.iteration,
            epoch: sp.epoch,
            key: sp.key.clone(),
            weight: sp.weight,
            bin: BinRange {
                min: sp.bin_min.clone(),
                max: sp.bin_max.clone(),
            },
            alternates: sp.alternates.clone(),
            metrics: metric_map(&names, &sp.values[0]),
            compare_metrics: sp.values.get(1).map(|v| metric_map(&names, v)),
            bin_stats: names
                .iter()
                .enumerate()
                .map(|(m, n)| {
                    let moments = &sp.bin.moments[0][m];
                    let stats = BinStats {
                        count: moments.count,
                        mean: moments.mean,
                        sd: moments.sample_variance().sqrt(),
                    };
                    (n.clone(), serde_json::to_value(stats).expect("plain data"))
                })
                .collect(),
        })
        .collect();
    SelectDoc {
        schema: SCHEMA.to_string(),
        input: InputDoc {
            path: log.source.clone(),
            iterations: log.len() as u64,
            epochs: log.epoch_count(),
            key: log.key_names.clone(),
            unique_keys,
            metrics: names.clone(),
            compare: log.compare().map(|c| c.source.clone()),
        },
        selection: SelectionDoc {
            method: selection.method.name().to_string(),
            pick: selection.pick.name().to_string(),
            bins: selection.bins(),
            target_error_pct: match selection.options.bins {
                BinCount::Target(t) => Some(t),
                BinCount::Fixed(_) => None,
            },
            cost: log.proxy.map_or("measured".to_string(), |c| c.to_string()),
            warmup: selection.options.warmup,
            seed: selection.options.seed,
            samples: selection.options.samples,
            strata: selection.options.strata.to_string(),
            target_met: selection.target.as_ref().map(|t| t.met),
            advice: selection.target.as_ref().and_then(|t| t.advice.clone()),
            per_stratum: if selection.options.strata == crate::select::Strata::None {
                Vec::new()
            } else {
                selection.strata.clone()
            },
        },
        seqpoints,
        projection: selection
            .projection
            .totals
            .iter()
            .map(total_value)
            .collect(),
        speedup: selection.projection.speedups.first().map(speedup_value),
        speedups: selection
            .projection
            .speedups
            .iter()
            .map(speedup_value)
            .collect(),
        profiling_reduction: selection.projection.profiling_reduction,
        command,
        plan: None,
        baselines: Vec::new(),
    }
}

/// The `plan` section of the `seqpoint/1` document.
pub fn plan_document(log: &RunLog, selection: &Selection, plan: &ProfilePlan) -> PlanDoc {
    let (rule, budget, target) = match plan.rule {
        PlanRule::Samples(_) => ("samples", None, None),
        PlanRule::Budget(b) => ("budget", Some(b), None),
        PlanRule::Target(t) => ("target", None, Some(t)),
    };
    let bins = plan
        .bins
        .iter()
        .map(|b| PlannedBinDoc {
            seqpoint: b.seqpoint,
            samples: b.samples(),
            weight: selection.seqpoints[b.seqpoint].weight,
        })
        .collect();
    let profile = plan
        .bins
        .iter()
        .flat_map(|b| {
            b.rows.iter().map(move |&r| ProfileRowDoc {
                iteration: log.iterations.get(r as usize),
                seqpoint: b.seqpoint,
                epoch: log.epochs.as_ref().map(|e| e[r as usize]),
                key: log.key(r as usize).to_vec(),
            })
        })
        .collect();
    PlanDoc {
        rule: rule.to_string(),
        budget,
        target_error_pct: target,
        met: plan.met,
        iterations: plan.iterations(),
        bins,
        profile,
        projection: plan.projection.totals.iter().map(total_value).collect(),
        speedup: plan.projection.speedups.first().map(speedup_value),
        profiling_reduction: Some(plan.projection.profiling_reduction),
    }
}

/// The list a profiler script reads when a plan profiles several iterations per SeqPoint:
/// one row per iteration, `id` naming its SeqPoint and `sample` numbering it (0 = the
/// SeqPoint's own iteration); other columns as in `seqpoints_csv`.
pub fn profile_csv(log: &RunLog, selection: &Selection, plan: &ProfilePlan) -> String {
    let names = log.metric_names();
    let strata = selection.seqpoints.iter().any(|s| s.stratum.is_some());
    let mut out = String::from("id,iteration,epoch");
    for k in &log.key_names {
        out.push(',');
        out.push_str(k);
    }
    out.push_str(",weight");
    for n in &names {
        out.push(',');
        out.push_str(n);
    }
    if strata {
        out.push_str(",stratum");
    }
    out.push_str(",sample,samples\n");
    for bin in &plan.bins {
        let sp = &selection.seqpoints[bin.seqpoint];
        for (sample, &row) in bin.rows.iter().enumerate() {
            let row = row as usize;
            out.push_str(&format!(
                "{},{},{}",
                sp.id,
                log.iterations.get(row),
                log.epochs
                    .as_ref()
                    .map_or(String::new(), |e| e[row].to_string())
            ));
            for k in log.key(row) {
                out.push_str(&format!(",{k}"));
            }
            out.push_str(&format!(",{}", sp.weight));
            for config_metric in &log.configs[0].metrics {
                out.push_str(&format!(",{}", config_metric.values[row]));
            }
            if let Some(s) = sp.stratum {
                out.push_str(&format!(",{s}"));
            }
            out.push_str(&format!(",{sample},{}\n", bin.samples()));
        }
    }
    out
}

/// The JSON file `seqpoint select` writes: the document with its profiling plan (if any)
/// and the naive baselines at the same number of profiled iterations. The explorer's export
/// calls this too, so both write the same bytes (the explorer adds `command`).
pub fn select_json(
    log: &RunLog,
    selection: &Selection,
    plan: Option<&ProfilePlan>,
    command: Option<String>,
) -> String {
    let profiled = plan.map_or(selection.bins() as u64, ProfilePlan::iterations);
    let options = &selection.options;
    let mut doc = select_document(log, selection, command);
    doc.plan = plan.map(|p| plan_document(log, selection, p));
    doc.baselines = crate::project::baselines::all_baselines(
        log,
        profiled as usize,
        options.warmup,
        options.seed,
    );
    serde_json::to_string_pretty(&doc).expect("plain data serialises") + "\n"
}

/// The CSV file `seqpoint select` writes: the iterations to profile when a plan asks for
/// more than one per SeqPoint, else the SeqPoint list.
pub fn select_csv(log: &RunLog, selection: &Selection, plan: Option<&ProfilePlan>) -> String {
    match plan {
        Some(plan) => profile_csv(log, selection, plan),
        None => seqpoints_csv(log, selection),
    }
}

/// The SeqPoint list a profiler script reads: `id,iteration,epoch,<keys>,weight,<metrics>`.
pub fn seqpoints_csv(log: &RunLog, selection: &Selection) -> String {
    let names = log.metric_names();
    let mut out = String::from("id,iteration,epoch");
    for k in &log.key_names {
        out.push(',');
        out.push_str(k);
    }
    out.push_str(",weight");
    for n in &names {
        out.push(',');
        out.push_str(n);
    }
    if selection.seqpoints.iter().any(|s| s.stratum.is_some()) {
        out.push_str(",stratum");
    }
    out.push('\n');
    for sp in &selection.seqpoints {
        out.push_str(&format!(
            "{},{},{}",
            sp.id,
            sp.iteration,
            sp.epoch.map_or(String::new(), |e| e.to_string())
        ));
        for k in &sp.key {
            out.push_str(&format!(",{k}"));
        }
        out.push_str(&format!(",{}", sp.weight));
        for v in &sp.values[0] {
            out.push_str(&format!(",{v}"));
        }
        if let Some(s) = sp.stratum {
            out.push_str(&format!(",{s}"));
        }
        out.push('\n');
    }
    out
}

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{0}: already exists; pass --force to overwrite it")]
    Exists(String),
    #[error("{path}: cannot write: {reason} (nothing was changed)")]
    Io { path: String, reason: String },
}

/// The OS's reason alone: tempfile appends ` at path "<random temporary name>"`, a file the
/// user never asked for; the message names the output file instead.
fn io_reason(e: &std::io::Error) -> String {
    let text = e.to_string();
    match text.find(" at path \"") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// Write `contents` to `path` atomically: a temporary file in the same folder, then a rename.
/// An existing file is kept unless `overwrite`; on any failure the old file is untouched.
pub fn write_atomically(path: &Path, contents: &[u8], overwrite: bool) -> Result<(), WriteError> {
    let shown = path.display().to_string();
    if !overwrite && path.exists() {
        return Err(WriteError::Exists(shown));
    }
    let io = |e: std::io::Error| WriteError::Io {
        path: shown.clone(),
        reason: io_reason(&e),
    };
    let folder = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".seqpoint-");
    // Temporary files are owner-only by default; the file the user keeps should get the
    // usual mode (0666 less the umask), like any file their shell creates.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut temp = builder.tempfile_in(&folder).map_err(io)?;
    temp.write_all(contents).map_err(io)?;
    temp.as_file().sync_all().map_err(io)?;
    if overwrite {
        temp.persist(path).map_err(|e| io(e.error))?;
    } else {
        temp.persist_noclobber(path).map_err(|e| {
            if e.error.kind() == std::io::ErrorKind::AlreadyExists {
                WriteError::Exists(shown.clone())
            } else {
                io(e.error)
            }
        })?;
    }
    // Make the rename itself durable, so a crash or power cut right after leaves either the
    // earlier file or the new one. Best effort: not every file system can sync a folder.
    if let Ok(dir) = std::fs::File::open(&folder) {
        let _ = dir.sync_all();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_overwrites_without_asking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        write_atomically(&path, b"first", false).unwrap();
        let err = write_atomically(&path, b"second", false).unwrap_err();
        assert!(err
            .to_string()
            .ends_with("already exists; pass --force to overwrite it"));
        assert_eq!(std::fs::read(&path).unwrap(), b"first");
        write_atomically(&path, b"second", true).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"second");
        // No temporary files are left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[cfg(unix)]
    #[test]
    fn written_files_get_the_mode_of_any_new_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let ours = dir.path().join("ours.svg");
        let plain = dir.path().join("plain.svg");
        write_atomically(&ours, b"x", false).unwrap();
        std::fs::write(&plain, b"x").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&ours), mode(&plain));
    }

    #[test]
    fn missing_folder_is_a_clear_error() {
        let err = write_atomically(Path::new("/nonexistent-dir/x.json"), b"x", false).unwrap_err();
        assert_eq!(
            err.to_string(),
            "/nonexistent-dir/x.json: cannot write: No such file or directory (os error 2) \
             (nothing was changed)"
        );
    }
}
