//! `project`: from a `seqpoint/1` document and the SeqPoints' measurements on a new
//! configuration to whole-run totals, speedups (or savings) and 95% intervals.
//!
//! The estimate and the way its two interval sources combine are in `stratified`; reading and
//! checking the document is in `reading`; this module scales weights to the run's length,
//! handles SeqPoints left out, and sets the result against the baseline totals stored in the
//! document.

use crate::doc::{
    BinStats, MetricProjection, MissingBin, ProjectionReport, SelectDoc, PROJECTION_SCHEMA,
};
use crate::estimate::{new_parts, speedup_parts};
use crate::options::{Surface, ALLOW_MISSING, BINS, RUN_EPOCHS, RUN_ITERATIONS};
use crate::project::ratio::{paired_bins, ratio_noise, run_key_noise};
use crate::project::run_bins::{excluded_baseline, logged_iterations, placed_excluded, run_bin};
use crate::project::stratified::{estimate, BinMeasure};
use crate::project::target::{judge, next_unmeasured, Figure};
use crate::project::{new_total, paired_speedup, stratum_variance, Estimate, KeyNoise, PickedBin};
use crate::runlog::measured::Measurements;
use crate::runlog::ConfigRole;

mod reading;
pub use reading::{parse_select_doc, read_select_doc, read_select_doc_within};

pub use super::request::{ProjectError, ProjectOptions, RunLength};
use crate::stats::{interval, variance_of_half_width};

/// Baseline total and variance of one metric from the document (`actual` is exact).
fn baseline_of(doc: &SelectDoc, metric: &str) -> Option<(f64, f64, &'static str)> {
    let row = doc
        .projection
        .iter()
        .find(|r| r.config == ConfigRole::Baseline && r.metric == metric)?;
    Some(match row.actual {
        // The excluded iterations join at their keys' means: the log's own values there are
        // the ones the exclusion distrusts.
        Some(actual) => (actual + excluded_baseline(doc, metric), 0.0, "actual"),
        None => {
            let half = (row.interval[1] - row.interval[0]) / 2.0;
            (row.projected, variance_of_half_width(half), "projected")
        }
    })
}

/// The bin statistics of a metric for each SeqPoint, with its standard deviation. A metric the document
/// does not have borrows the relative spread of the document's first metric when that is a
/// proxy cost (SeqPoints chosen before any profiling).
fn bin_stats<'a>(
    doc: &'a SelectDoc,
    metric: &str,
) -> Result<Vec<(&'a BinStats, f64)>, ProjectError> {
    let source = if doc.input.metrics.iter().any(|m| m == metric) {
        metric.to_string()
    } else if doc.selection.is_proxy() && !doc.input.metrics.is_empty() {
        doc.input.metrics[0].clone()
    } else {
        return Err(ProjectError::Invalid(format!(
            "metric '{metric}' is not in the SeqPoints file (its metrics: {}); pass --metric \
             with one of them",
            doc.input.metrics.join(", ")
        )));
    };
    doc.seqpoints
        .iter()
        .map(|sp| {
            let stats = sp.bin_stats.get(&source).ok_or_else(|| {
                ProjectError::Invalid(format!(
                    "SeqPoint {} has no bin_stats for '{source}' in the SeqPoints file; \
                         select again with this version of seqpoint",
                    sp.id
                ))
            })?;
            Ok((stats, stats.sd))
        })
        .collect()
}

/// The measured SeqPoints of metric `name` (measured column `m`) as the design's estimate
/// takes them: each measured row paired with the baseline's logged value at its iteration
/// (the SeqPoint's own, a planned row's from the file, else the SeqPoint's as the nearest
/// known), weights scaled to the run.
fn picked_bins(
    doc: &SelectDoc,
    metric: &str,
    measured: &Measurements,
    m: usize,
    scale: f64,
) -> Vec<PickedBin> {
    // A metric the file lacks borrows its first metric (a proxy cost), as `bin_stats` does.
    let name = if doc
        .seqpoints
        .iter()
        .all(|sp| sp.bin_stats.contains_key(metric))
    {
        metric
    } else {
        doc.input.metrics.first().map_or(metric, String::as_str)
    };
    // No bin's noise below the run's, as `select` took it (`KeyNoise::cv`).
    let run_cv = run_key_noise(doc, name).sqrt();
    let planned: std::collections::HashMap<u64, f64> = doc
        .plan_rows()
        .filter_map(|row| Some((row.iteration, *row.metrics.get(name)?)))
        .collect();
    doc.seqpoints
        .iter()
        .zip(&measured.samples)
        .enumerate()
        .filter(|(_, (_, samples))| !samples.is_empty())
        .map(|(i, (sp, samples))| {
            let own = sp.metrics.get(name).copied();
            let stats = sp.bin_stats.get(name);
            let baseline_at = |iteration: Option<u64>| -> f64 {
                match iteration {
                    Some(it) if it != sp.iteration => planned.get(&it).copied(),
                    _ => None,
                }
                .or(own)
                .or(stats.map(|s| s.mean))
                .unwrap_or(0.0)
            };
            let key = match stats {
                Some(s) => {
                    // Files from before the design's interval: the bin's own spread.
                    let cv = s
                        .key_cv
                        .unwrap_or(if s.mean != 0.0 { s.sd / s.mean } else { 0.0 });
                    KeyNoise {
                        cv: cv.max(run_cv),
                        logged_cv: cv,
                        offset: s.key_offset.unwrap_or(0.0),
                        count: s.key_count.unwrap_or(1),
                        mean: s.mean + s.key_offset.unwrap_or(0.0),
                        // No spread over the bin, with none within its keys: all alike.
                        blind: KeyNoise::is_blind(cv * cv, s.sd == 0.0, sp.bin.min != sp.bin.max),
                        // Measurements, not a whole log, show the new configuration's noise.
                        new: None,
                    }
                }
                None => KeyNoise::default(),
            };
            PickedBin {
                weight: run_bin(sp, stats, scale).weight,
                baseline: samples.iter().map(|s| baseline_at(s.iteration)).collect(),
                new: samples.iter().map(|s| s.values[m]).collect(),
                distinct: measured.distinct_iterations(i) as u64,
                key,
                stratum: sp.stratum.unwrap_or(0),
            }
        })
        .collect()
}

/// The weight scale for the run's length.
pub(crate) fn scale_of(doc: &SelectDoc, length: RunLength) -> Result<f64, ProjectError> {
    let logged = logged_iterations(doc) as f64;
    match length {
        RunLength::Logged => Ok(1.0),
        RunLength::Iterations(n) if n >= 1 => Ok(n as f64 / logged),
        RunLength::Iterations(_) => Err(ProjectError::Invalid(format!(
            "{} must be at least 1",
            RUN_ITERATIONS.typed(Surface::CommandLine, "")
        ))),
        RunLength::Epochs(e) if !(e > 0.0 && e.is_finite()) => Err(ProjectError::Invalid(format!(
            "{} must be a positive number of epochs, got {e}",
            RUN_EPOCHS.typed(Surface::CommandLine, "")
        ))),
        RunLength::Epochs(e) => match doc.input.epochs {
            Some(logged_epochs) if logged_epochs > 0 => Ok(e / f64::from(logged_epochs)),
            _ => Err(ProjectError::Invalid(format!(
                "{} needs the epochs of the log, and the SeqPoints file has none (the log \
                     had no epoch column); use {}",
                RUN_EPOCHS.typed(Surface::CommandLine, ""),
                RUN_ITERATIONS.typed(Surface::CommandLine, RUN_ITERATIONS.value_name)
            ))),
        },
    }
}

fn missing_error(doc: &SelectDoc, measured: &Measurements, missing: &[usize]) -> ProjectError {
    const SHOWN: usize = 20;
    let total: u64 = doc.seqpoints.iter().map(|sp| sp.weight).sum();
    let weight: u64 = missing.iter().map(|&i| doc.seqpoints[i].weight).sum();
    let mut list: Vec<String> = missing
        .iter()
        .take(SHOWN)
        .map(|&i| {
            let sp = &doc.seqpoints[i];
            format!("{} (iteration {})", sp.id, sp.iteration)
        })
        .collect();
    if missing.len() > SHOWN {
        list.push(format!("and {} more", missing.len() - SHOWN));
    }
    ProjectError::Missing(format!(
        "{}: no measurement for {} of the {} SeqPoints ({:.2}% of the run): SeqPoint {}; \
         measure them, or pass {} to project without them",
        measured.source,
        missing.len(),
        doc.seqpoints.len(),
        100.0 * weight as f64 / total as f64,
        list.join(", "),
        ALLOW_MISSING.typed(Surface::CommandLine, "")
    ))
}

/// Project every measured metric. `seqpoints_path` is recorded in the report.
pub fn project_measurements(
    seqpoints_path: &str,
    doc: &SelectDoc,
    measured: &Measurements,
    options: &ProjectOptions,
) -> Result<ProjectionReport, ProjectError> {
    let scale = scale_of(doc, options.run_length)?;
    crate::project::validate::check_run_length(doc, options.run_length)?;
    let missing: Vec<usize> = (0..doc.seqpoints.len())
        .filter(|&i| measured.samples[i].is_empty())
        .collect();
    if !missing.is_empty() && !options.allow_missing {
        return Err(missing_error(doc, measured, &missing));
    }
    let logged = logged_iterations(doc);
    let run_weight = logged as f64 * scale;
    let missing_bins: Vec<MissingBin> = missing
        .iter()
        .map(|&i| {
            let sp = &doc.seqpoints[i];
            let weight = run_bin(sp, None, scale).weight;
            MissingBin {
                seqpoint: sp.id,
                iteration: sp.iteration,
                weight,
                share: weight / run_weight,
            }
        })
        .collect();
    let missing_share = missing_bins.iter().fold(0.0, |s, m| s + m.share);

    let mut metrics = Vec::new();
    let mut figures = Vec::new();
    for (m, name) in measured.metric_names.iter().enumerate() {
        let stats = bin_stats(doc, name)?;
        let bins: Vec<BinMeasure> = doc
            .seqpoints
            .iter()
            .enumerate()
            .map(|(i, sp)| {
                let (stats, sd) = stats[i];
                let bin = run_bin(sp, Some(stats), scale);
                BinMeasure {
                    weight: bin.weight,
                    population: bin.population,
                    baseline_mean: bin.baseline_mean.unwrap_or(stats.mean),
                    baseline_sd: sd,
                    values: measured.samples[i].iter().map(|s| s.values[m]).collect(),
                    distinct: measured.distinct_iterations(i),
                }
            })
            .collect();
        let random_pick = estimate(&bins, stratum_variance)
            .ok_or_else(|| ProjectError::Invalid("no SeqPoint was measured".into()))?;
        let picked = picked_bins(doc, name, measured, m, scale);
        let design = new_total(&picked);
        // The design's interval for the measured bins; bins left out are imputed at the
        // measured ratio with the random-pick variance (`stratified`).
        let mut blend = None;
        let ratio = paired_bins(doc, name, measured, m, scale).and_then(|(paired, fit)| {
            blend = Some(fit);
            ratio_noise(&paired, fit.fitted).map(|noise| (noise, paired))
        });
        let ratio_used = ratio.is_some();
        let estimate = match &ratio {
            // Every measured iteration paired with its baseline value: the ratio estimate.
            Some((noise, paired)) => {
                let distinct: Vec<u64> = paired.iter().map(|b| b.pairs.len() as u64).collect();
                Estimate {
                    value: noise.value,
                    variance: noise.parts(0.0).variance(&distinct),
                }
            }
            None => Estimate {
                value: random_pick.value,
                variance: design.variance + random_pick.missing_variance,
            },
        };
        // No noise anywhere (the SeqPoints file shows none within its keys, the measurements
        // none between iterations) leaves a zero-width interval for a figure not measured
        // whole. It stands where the data say so: one bin per key of an exact metric, with
        // SeqPoints enough to show the new configuration's spread. It cannot where they are
        // silent: one iteration measured in all, or a bin of several keys that the baseline
        // could not tell apart (all equal there), measured at one of them.
        let whole = bins
            .iter()
            .all(|b| b.distinct as f64 >= b.population.floor());
        // The design's own estimate marks silent data with an infinite variance
        // (`estimate::CANNOT_BOUND`); a zero one where nothing could show noise is as silent.
        let silent = estimate.variance == 0.0 || estimate.variance.is_infinite();
        if silent && !whole {
            let merged = doc
                .seqpoints
                .iter()
                .zip(&stats)
                .zip(&bins)
                .find(|((sp, s), b)| b.is_measured() && sp.bin.min != sp.bin.max && s.1 == 0.0);
            let measured_iterations: usize = bins.iter().map(|b| b.distinct).sum();
            let advice = if let Some(((sp, _), _)) = merged {
                Some(format!(
                    "SeqPoint {}'s bin holds several keys that the baseline cannot tell apart, and \
                     the new configuration was measured at one of them: select again with one bin \
                     per key ({})",
                    sp.id,
                    BINS.typed(Surface::CommandLine, &doc.input.unique_keys.to_string())
                ))
            } else if measured_iterations < 2 {
                let seen = |b: usize, it: u64| {
                    // A row that names no iteration measured the SeqPoint's own.
                    let own = doc.seqpoints[b].iteration;
                    measured.samples[b]
                        .iter()
                        .any(|s| s.iteration.unwrap_or(own) == it)
                };
                Some(match next_unmeasured(doc, seen) {
                    Some((seqpoint, iteration)) => format!(
                        "one iteration measured in all gives no spread: measure one more, e.g. \
                         iteration {iteration} (SeqPoint {seqpoint}), and project again"
                    ),
                    None => "one iteration measured in all gives no spread, and the SeqPoints \
                             file lists no other: select again with --samples 2"
                        .to_string(),
                })
            } else if estimate.variance.is_infinite() {
                Some(
                    "nothing measured shows the new configuration's noise and the baseline \
                     shows none: measure a second iteration of a SeqPoint, and project again"
                        .to_string(),
                )
            } else {
                None
            };
            if let Some(advice) = advice {
                return Err(ProjectError::Invalid(format!(
                    "{}: metric '{name}': cannot bound the projection: {advice}",
                    measured.source
                )));
            }
        }
        if !missing.is_empty()
            && bins
                .iter()
                .all(|b| !b.is_measured() || b.baseline_mean == 0.0)
        {
            return Err(ProjectError::Invalid(format!(
                "metric '{name}': the measured SeqPoints have no baseline to scale the missing ones from"
            )));
        }
        let baseline =
            baseline_of(doc, name).map(|(v, var, source)| (v * scale, var * scale * scale, source));
        let mut speedup_figure = None;
        let (speedup, speedup_interval) = match baseline {
            // The known baseline total over the ratio estimate of the new one.
            Some((b, _, "actual")) if ratio.is_some() && estimate.value > 0.0 => {
                let (noise, paired) = ratio.as_ref().expect("matched");
                let distinct: Vec<u64> = paired.iter().map(|b| b.pairs.len() as u64).collect();
                let noise = noise.speedup(b);
                let parts = noise.parts(0.0);
                let s = Estimate {
                    value: parts.value,
                    variance: parts.variance(&distinct),
                };
                speedup_figure = Some(Figure {
                    name: format!("{name} speedup"),
                    parts,
                    half_width_pct: s.half_width_pct(),
                    noise: Some(noise),
                });
                (Some(s.value), Some(s.interval()))
            }
            // Every SeqPoint measured: the paired ratio at the picks, as `select --compare`.
            Some(_) if missing.is_empty() && design.value > 0.0 => {
                let s = paired_speedup(&picked);
                speedup_figure = Some(Figure {
                    name: format!("{name} speedup"),
                    parts: speedup_parts(&picked),
                    half_width_pct: s.half_width_pct(),
                    noise: None,
                });
                (Some(s.value), Some(s.interval()))
            }
            Some((b, var_b, _)) if estimate.value > 0.0 && b > 0.0 => {
                let s = b / estimate.value;
                // Delta method; the two totals are treated as independent, which can only
                // widen the interval (they share SeqPoints, so they co-vary positively).
                let rel = estimate.variance / estimate.value.powi(2) + var_b / (b * b);
                (Some(s), Some(interval(s, s * s * rel)))
            }
            _ => (None, None),
        };
        let noise = ratio.map(|(noise, _)| noise);
        figures.push(Figure {
            name: format!("{name} total"),
            parts: noise
                .as_ref()
                .map_or_else(|| new_parts(&picked), |noise| noise.parts(0.0)),
            half_width_pct: estimate.half_width_pct(),
            noise,
        });
        figures.extend(speedup_figure);
        metrics.push(MetricProjection {
            metric: name.clone(),
            baseline_total: baseline.map(|b| b.0),
            baseline_source: baseline.map(|b| b.2.to_string()),
            baseline_interval: baseline.map(|(v, var, _)| interval(v, var)),
            projected_total: estimate.value,
            interval: estimate.interval(),
            interval_within_bin: interval(random_pick.value, random_pick.within_variance),
            interval_samples: random_pick
                .sample_variance
                .map(|v| interval(random_pick.value, v)),
            speedup,
            speedup_interval,
            ratio: if name.to_ascii_lowercase().contains("energy") {
                "saving".into()
            } else {
                "speedup".into()
            },
            estimate: Some(if ratio_used { "ratio" } else { "design" }.into()),
            baseline_noise_share: blend.filter(|b| ratio_used && b.fitted > 0).map(|b| b.beta),
            cost_trend: blend.filter(|_| ratio_used).map(|b| b.cost_trend),
            missing_bins: missing_bins.clone(),
            missing_share,
            samples: measured.rows() as u64,
            measured_seqpoints: (doc.seqpoints.len() - missing.len()) as u64,
        });
    }
    Ok(ProjectionReport {
        schema: PROJECTION_SCHEMA.to_string(),
        seqpoints: seqpoints_path.to_string(),
        measured: measured.source.clone(),
        identified_by: measured.identified_by.name().to_string(),
        logged_iterations: logged,
        run_iterations: run_weight,
        scale,
        excluded: Vec::new(),
        excluded_in_bins: placed_excluded(doc),
        measured_files: Vec::new(),
        baseline_measured: None,
        metrics,
        caveat: None,
        target: options
            .target_error_pct
            .map(|target| judge(doc, measured, &figures, target)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::json::select_document;
    use crate::runlog::measured::{parse_measured, MeasuredOptions};
    use crate::runlog::{InputFormat, LoadOptions};
    use crate::select::{run_selection, BinCount, SelectOptions};
    use crate::stats::Z95;

    /// Epochs 0 and 1; keys 10, 20, 30 twice each; K = 2 bins: {10, 20} (w 4) and {30} (w 2).
    const RUN: &str = "iteration,epoch,seq_len,time_ms\n0,0,10,1\n1,0,20,3\n2,0,30,6\n3,1,10,1\n4,1,20,3\n5,1,30,6\n";
    /// `RUN`'s times by iteration.
    const RUN_TIMES: [f64; 6] = [1.0, 3.0, 6.0, 1.0, 3.0, 6.0];

    fn doc_for(text: &str) -> SelectDoc {
        // Through a file, as `select` reads it (a log without metrics gets its proxy cost).
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.csv");
        std::fs::write(&path, text).unwrap();
        let log = crate::runlog::load_run(path.to_str().unwrap(), &LoadOptions::default()).unwrap();
        let options = SelectOptions {
            bins: BinCount::Fixed(2),
            ..SelectOptions::default()
        };
        select_document(&log, &run_selection(&log, &options).unwrap(), None)
    }

    fn run(
        doc: &SelectDoc,
        measured: &str,
        options: ProjectOptions,
    ) -> Result<ProjectionReport, ProjectError> {
        let m = parse_measured(
            "new.csv",
            measured.as_bytes(),
            InputFormat::Csv,
            doc,
            &MeasuredOptions::default(),
        )?;
        project_measurements("sp.json", doc, &m, &options)
    }

    #[test]
    fn projection_by_hand() {
        let doc = doc_for(RUN);
        assert_eq!(doc.seqpoints.len(), 2);
        assert_eq!((doc.seqpoints[0].weight, doc.seqpoints[1].weight), (4, 2));
        // Bin {10, 20}: keys 10 and 20 tie for the bin mean 2; key 10 (time 1) is picked.
        // New configuration twice as fast at the picks: key 10 measured at 0.5, key 30 at 3.
        let report = run(
            &doc,
            "seqpoint,time_ms\n0,0.5\n1,3\n",
            ProjectOptions::default(),
        )
        .unwrap();
        assert_eq!(report.schema, "seqpoint-projection/1");
        let m = &report.metrics[0];
        assert_eq!(m.projected_total, 4.0 * 0.5 + 2.0 * 3.0);
        assert_eq!(m.baseline_total, Some(20.0));
        assert_eq!(m.baseline_source.as_deref(), Some("actual"));
        // Paired: (4 * 1 + 2 * 6) / (4 * 0.5 + 2 * 3) = 16 / 8.
        assert_eq!(m.speedup, Some(2.0));
        // No key varies within itself (cv 0): only the representation error is left, key 10
        // standing 1 below its bin's mean 2, carried at the pick's ratio 0.5: a known bias of
        // 4 * 0.5 * (-1 / 1) = -2, and nothing random, so the half-width is exactly 2.
        let half = 2.0;
        assert!(
            (m.interval[1] - (8.0 + half)).abs() < 1e-9,
            "{:?}",
            m.interval
        );
        // The random-pick interval, for comparison: ratio 8 / 20 = 0.4, bin {10, 20} sd
        // sqrt(4/3): Var = 4^2 (1 - 1/4) 0.4^2 (4/3) = 2.56.
        let within = m.interval_within_bin;
        assert!((within[1] - (8.0 + Z95 * 1.6)).abs() < 1e-9, "{within:?}");
        assert_eq!(m.interval_samples, None);
        // The offsets cancel in the paired speedup, and no key varies: exact.
        assert_eq!(m.speedup_interval, Some([2.0, 2.0]));
        assert!(m.missing_bins.is_empty() && m.missing_share == 0.0);
        assert_eq!((m.samples, m.measured_seqpoints), (2, 2));
    }

    #[test]
    fn longer_runs_scale_weights_and_baseline() {
        let doc = doc_for(RUN);
        let measured = "seqpoint,time_ms\n0,1\n1,3\n";
        let logged = run(&doc, measured, ProjectOptions::default()).unwrap();
        let epochs = run(
            &doc,
            measured,
            ProjectOptions {
                run_length: RunLength::Epochs(90.0),
                ..ProjectOptions::default()
            },
        )
        .unwrap();
        assert_eq!(epochs.scale, 45.0);
        assert_eq!(epochs.run_iterations, 270.0);
        let (a, b) = (&logged.metrics[0], &epochs.metrics[0]);
        assert_eq!(b.projected_total, 45.0 * a.projected_total);
        assert_eq!(b.baseline_total, Some(45.0 * 20.0));
        assert_eq!(b.speedup, a.speedup);
        let iterations = run(
            &doc,
            measured,
            ProjectOptions {
                run_length: RunLength::Iterations(12),
                ..ProjectOptions::default()
            },
        )
        .unwrap();
        assert_eq!(iterations.scale, 2.0);
        // A log without epochs cannot be scaled by epochs.
        let no_epochs = doc_for("seq_len,time_ms\n10,1\n20,3\n30,6\n10,1\n");
        let err = run(
            &no_epochs,
            measured,
            ProjectOptions {
                run_length: RunLength::Epochs(3.0),
                ..ProjectOptions::default()
            },
        )
        .unwrap_err();
        assert!(err.to_string().contains("use --run-iterations"), "{err}");
    }

    #[test]
    fn missing_seqpoints_are_an_error_or_reported() {
        let doc = doc_for(RUN);
        let err = run(&doc, "seqpoint,time_ms\n0,1\n", ProjectOptions::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "new.csv: no measurement for 1 of the 2 SeqPoints (33.33% of the run): SeqPoint 1 (iteration {}); measure them, or pass --allow-missing to project without them",
                doc.seqpoints[1].iteration
            )
        );
        let allow = ProjectOptions {
            allow_missing: true,
            ..ProjectOptions::default()
        };
        // One iteration measured in all shows no noise, and this baseline none either.
        let err = run(&doc, "seqpoint,time_ms\n0,1\n", allow.clone()).unwrap_err();
        assert!(err.to_string().contains("cannot bound"), "{err}");
        // SeqPoint 0 measured at its own iteration and an alternate, at half the baseline.
        let sp = &doc.seqpoints[0];
        let half = |it: u64| RUN_TIMES[it as usize] / 2.0;
        let (own, other) = (sp.iteration, sp.alternates[0]);
        let measured = format!(
            "iteration,time_ms\n{own},{}\n{other},{}\n",
            half(own),
            half(other)
        );
        let report = run(&doc, &measured, allow).unwrap();
        let m = &report.metrics[0];
        assert_eq!(m.missing_bins.len(), 1);
        assert_eq!(m.missing_bins[0].seqpoint, 1);
        assert!((m.missing_share - 1.0 / 3.0).abs() < 1e-12);
        // Bin {10, 20} (w 4, baseline total 8) projected from its two values, and bin {30}
        // (w 2, baseline total 12) estimated at the measured bin's ratio to its baseline.
        let measured_bin = 4.0 * (half(own) + half(other)) / 2.0;
        let expected = measured_bin + 12.0 * measured_bin / 8.0;
        assert!((m.projected_total - expected).abs() < 1e-9, "{m:?}");
    }

    #[test]
    fn documents_are_checked() {
        let err = |text: &str| {
            parse_select_doc("sp.json", text.as_bytes())
                .unwrap_err()
                .to_string()
        };
        assert!(err("id,iteration\n0,1\n").starts_with("sp.json:1:1: not JSON"));
        assert!(err("{\"a\": 1}").starts_with("sp.json: no \"schema\" field"));
        assert!(err("{\"schema\": \"seqpoint/9\"}")
            .starts_with("sp.json: schema 'seqpoint/9'; expected 'seqpoint/1'"));
        assert!(err("{\"schema\": \"seqpoint/1\"}")
            .starts_with("sp.json:1:24: not a valid 'seqpoint/1' document: missing field"));
        let doc = doc_for(RUN);
        let text = serde_json::to_string(&doc).unwrap();
        assert_eq!(parse_select_doc("sp.json", text.as_bytes()).unwrap(), doc);
    }

    #[test]
    fn a_metric_the_document_lacks_is_an_error_unless_it_was_a_proxy_selection() {
        let doc = doc_for(RUN);
        let m = parse_measured(
            "new.csv",
            b"seqpoint,energy_j\n0,1\n1,3\n",
            InputFormat::Csv,
            &doc,
            &MeasuredOptions {
                metrics: vec!["energy_j".into()],
                ..MeasuredOptions::default()
            },
        )
        .unwrap();
        let err =
            project_measurements("sp.json", &doc, &m, &ProjectOptions::default()).unwrap_err();
        assert!(err
            .to_string()
            .starts_with("metric 'energy_j' is not in the SeqPoints file"));
        // Selected on lengths alone: the proxy's relative spread stands in, no baseline total.
        let proxy = doc_for("seq_len\n10\n20\n30\n10\n20\n30\n");
        let m = parse_measured(
            "new.csv",
            b"seqpoint,time_ms\n0,1\n1,3\n",
            InputFormat::Csv,
            &proxy,
            &MeasuredOptions::default(),
        )
        .unwrap();
        let report =
            project_measurements("sp.json", &proxy, &m, &ProjectOptions::default()).unwrap();
        let metric = &report.metrics[0];
        assert_eq!(metric.baseline_total, None);
        assert_eq!(metric.speedup, None);
        assert!(metric.interval[1] > metric.projected_total);
    }

    #[test]
    fn the_paired_speedup_does_not_need_the_baseline_total() {
        let mut doc = doc_for(RUN);
        let measured = "seqpoint,time_ms\n0,0.5\n1,3\n";
        let exact = run(&doc, measured, ProjectOptions::default()).unwrap();
        // The same baseline total, now only projected with a 95% half-width of Z95 * 1: the
        // paired ratio uses the baseline at the picks, so nothing changes.
        let row = &mut doc.projection[0];
        row.actual = None;
        row.projected = 20.0;
        row.interval = [20.0 - Z95, 20.0 + Z95];
        let report = run(&doc, measured, ProjectOptions::default()).unwrap();
        let m = &report.metrics[0];
        assert_eq!(m.baseline_source.as_deref(), Some("projected"));
        assert_eq!(m.speedup, exact.metrics[0].speedup);
        assert_eq!(m.speedup_interval, exact.metrics[0].speedup_interval);
        // With a SeqPoint left out the speedup is the baseline total over the projected
        // one, and a projected baseline widens it. The one measured is measured at both its
        // iterations: once, at one, nothing would show the new configuration's noise.
        let missing = "iteration,time_ms\n0,0.5\n3,0.55\n";
        let allow = || ProjectOptions {
            allow_missing: true,
            ..ProjectOptions::default()
        };
        let projected = run(&doc, missing, allow()).unwrap();
        let actual = run(&doc_for(RUN), missing, allow()).unwrap();
        let width = |r: &ProjectionReport| {
            let [lo, hi] = r.metrics[0].speedup_interval.unwrap();
            hi - lo
        };
        assert!(width(&projected) > width(&actual));
    }
}
