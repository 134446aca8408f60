//! Several measurement files as one (`project SEQPOINTS.json FIRST.csv TOPUP.csv ...`): the
//! SeqPoints' samples from every file, checked so that no iteration is counted twice, and the
//! top-up document (`--top-up NEXT.json`) that asks for the next ones.

use std::collections::{HashMap, HashSet};

use super::request::ProjectError;
use std::collections::BTreeMap;

use crate::doc::{PlanDoc, PlannedBinDoc, ProfileRowDoc, SelectDoc, SeqPointDoc, TopUpRow};
use crate::runlog::measured::Measurements;

/// The files' samples per SeqPoint, in the files' order. Every file must hold the same
/// metrics; an iteration measured in two files is an error naming both (a top-up measured
/// twice, or the first file passed again), as is one measured twice in one file for a
/// different SeqPoint. Repeats of an iteration within one file stay repeated samples.
pub fn merge_measurements(files: Vec<Measurements>) -> Result<Measurements, ProjectError> {
    let mut files = files.into_iter();
    let mut merged = files
        .next()
        .ok_or_else(|| ProjectError::Invalid("no measurement file".into()))?;
    let mut seen: HashMap<u64, (String, u64)> = HashMap::new();
    let mut note = |m: &Measurements| -> Result<(), ProjectError> {
        let mut here: HashMap<u64, u64> = HashMap::new();
        for sample in m.samples.iter().flatten() {
            if let Some(it) = sample.iteration {
                here.entry(it).or_insert(sample.line);
            }
        }
        for (it, line) in here {
            if let Some((file, first_line)) = seen.get(&it) {
                return Err(ProjectError::Invalid(format!(
                    "iteration {it} is measured in two files: {file}:{first_line} and {}:{line}; \
                     pass each measurement once",
                    m.source
                )));
            }
            seen.insert(it, (m.source.clone(), line));
        }
        Ok(())
    };
    note(&merged)?;
    for file in files {
        if file.metric_names != merged.metric_names {
            return Err(ProjectError::Invalid(format!(
                "{} measures {} but {} measures {}: every measurement file needs the same \
                 metric columns (or pass --metric)",
                file.source,
                file.metric_names.join(", "),
                merged.source,
                merged.metric_names.join(", ")
            )));
        }
        note(&file)?;
        for (all, more) in merged.samples.iter_mut().zip(file.samples) {
            all.extend(more);
        }
    }
    Ok(merged)
}

/// The `seqpoint/1` document that asks for the top-up: the selection as it was (the same
/// SeqPoints, weights and bins, so `project` reads either), its plan listing only the
/// iterations to measure next, each with the baseline values the SeqPoints file knows for it,
/// and the original plan's other rows in reserve.
pub fn top_up_document(doc: &SelectDoc, top_up: &[TopUpRow], target_pct: f64) -> SelectDoc {
    let known: HashMap<u64, &ProfileRowDoc> =
        doc.plan_rows().map(|row| (row.iteration, row)).collect();
    let profile: Vec<ProfileRowDoc> = top_up
        .iter()
        .map(|row| {
            let sp = doc.seqpoints.iter().find(|sp| sp.id == row.seqpoint);
            match known.get(&row.iteration) {
                Some(planned) => (*planned).clone(),
                None => ProfileRowDoc {
                    iteration: row.iteration,
                    seqpoint: row.seqpoint,
                    metrics: sp
                        .map(|sp| {
                            baseline_at(&sp.metrics, &sp.alternate_metrics, sp, row.iteration)
                        })
                        .unwrap_or_default(),
                    expected: sp
                        .map(|sp| {
                            baseline_at(&sp.expected, &sp.alternate_expected, sp, row.iteration)
                        })
                        .unwrap_or_default(),
                    epoch: None,
                    key: Vec::new(),
                },
            }
        })
        .collect();
    // Every other row the original plan names stays listed, in reserve: read through either
    // file, a measurements file (a full timed log too) gives the same samples.
    let asked: HashSet<u64> = top_up.iter().map(|row| row.iteration).collect();
    let reserve: Vec<ProfileRowDoc> = doc
        .plan_rows()
        .filter(|row| !asked.contains(&row.iteration))
        .cloned()
        .collect();
    let bins = doc
        .seqpoints
        .iter()
        .map(|sp| PlannedBinDoc {
            seqpoint: sp.id,
            samples: top_up.iter().filter(|r| r.seqpoint == sp.id).count() as u64,
            weight: sp.weight,
        })
        .filter(|b| b.samples > 0)
        .collect();
    SelectDoc {
        plan: Some(PlanDoc {
            rule: "top-up".into(),
            budget: None,
            target_error_pct: Some(target_pct),
            met: None,
            iterations: profile.len() as u64,
            bins,
            profile,
            reserve,
            projection: Vec::new(),
            speedup: None,
            profiling_reduction: None,
        }),
        ..doc.clone()
    }
}

/// The baseline's values at one of a SeqPoint's iterations (its own or an alternate), as the
/// SeqPoints file holds them: `own` at the SeqPoint's iteration, `alternates` at the others
/// (the logged values, or the expected ones).
fn baseline_at(
    own: &BTreeMap<String, f64>,
    alternates: &BTreeMap<String, Vec<f64>>,
    sp: &SeqPointDoc,
    iteration: u64,
) -> BTreeMap<String, f64> {
    if sp.iteration == iteration {
        return own.clone();
    }
    let Some(index) = sp.alternates.iter().position(|&it| it == iteration) else {
        return BTreeMap::new();
    };
    alternates
        .iter()
        .filter_map(|(name, values)| Some((name.clone(), *values.get(index)?)))
        .collect()
}
