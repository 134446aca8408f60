//! `project --baseline`: the lengths-only flow. The run log held lengths only (the SeqPoints
//! were chosen on a proxy cost), and the user measured the listed iterations on both
//! configurations; nothing of the baseline's whole run is known but its lengths.
//!
//! Both totals are ratio estimates on the document's first metric (the proxy cost, known for
//! every iteration: `project::ratio`), the speedup is their quotient with the paired interval
//! of `ratio::paired_ratio_speedup`, and the target judges all three. On a document chosen on
//! a proxy cost their pooled residual is taken from successive differences in each bin's
//! proxy order (`successive`): the plan spreads its draws over that order
//! (`select::plan::PlanDesign::Systematic`), and a time that steps or drifts where the proxy
//! does not is then no error of the estimate beyond what neighbouring draws differ by.
//! Pairing is by iteration: every measured iteration must be in both files, or the pairs would
//! describe different iterations.

use std::collections::BTreeMap;

use crate::doc::{MetricProjection, ProjectionReport, SelectDoc, PROJECTION_SCHEMA};
use crate::options::{Surface, SAMPLES};
use crate::project::document::ProjectOptions;
use crate::project::paired_bin::{half_successive_squares, PairedBin};
use crate::project::ratio::{
    expected_ratio, known_baseline, paired_speedup_noise, ratio_noise, speedup_residuals,
    RatioNoise,
};
use crate::project::request::ProjectError;
use crate::project::run_bins::{logged_iterations, placed_excluded, run_bin};
use crate::project::target::{judge, next_unmeasured, Figure};
use crate::project::trend::{with_cost_trend, CostLine};
use crate::runlog::measured::{Measurements, Sample};
use crate::stats::{half_width_pct, interval, LevelMoments, Z95};

/// Each SeqPoint's measured iterations with both configurations' mean of metric `m` there.
type Pairs = Vec<BTreeMap<u64, (f64, f64)>>;

/// Both files' samples joined by iteration; an iteration in one file only, or a row with no
/// iteration, is an error naming file and line.
fn join(baseline: &Measurements, new: &Measurements, m: usize) -> Result<Pairs, ProjectError> {
    let means = |file: &Measurements, samples: &[Sample]| {
        let mut by_iteration: BTreeMap<u64, (f64, usize, u64)> = BTreeMap::new();
        for sample in samples {
            let Some(it) = sample.iteration else {
                return Err(ProjectError::Invalid(format!(
                    "{}:{}: the row names no iteration; --baseline pairs the two \
                     configurations by iteration, so both files need an `iteration` column",
                    file.source, sample.line
                )));
            };
            let entry = by_iteration.entry(it).or_insert((0.0, 0, sample.line));
            entry.0 += sample.values[m];
            entry.1 += 1;
        }
        Ok(by_iteration)
    };
    let unpaired = |it: u64, line: u64, here: &Measurements, there: &Measurements| {
        ProjectError::Invalid(format!(
            "{}:{line}: iteration {it} has no measurement in {}; --baseline pairs the two \
             configurations by iteration: measure it on both, or leave it out with --exclude \
             {it}-{it}",
            here.source, there.source
        ))
    };
    baseline
        .samples
        .iter()
        .zip(&new.samples)
        .map(|(b, n)| {
            let (b, n) = (means(baseline, b)?, means(new, n)?);
            if let Some((&it, &(_, _, line))) = b.iter().find(|(it, _)| !n.contains_key(it)) {
                return Err(unpaired(it, line, baseline, new));
            }
            if let Some((&it, &(_, _, line))) = n.iter().find(|(it, _)| !b.contains_key(it)) {
                return Err(unpaired(it, line, new, baseline));
            }
            Ok(b.iter()
                .map(|(&it, &(sum_b, count_b, _))| {
                    let (sum_n, count_n, _) = n[&it];
                    (it, (sum_b / count_b as f64, sum_n / count_n as f64))
                })
                .collect())
        })
        .collect()
}

/// One configuration's paired bins: the auxiliary (the document's first metric) at each
/// measured iteration against that configuration's value. A bin with an iteration whose
/// auxiliary the file does not hold is estimated by its plain mean (auxiliary 1 throughout).
fn bins_of(
    doc: &SelectDoc,
    pairs: &Pairs,
    scale: f64,
    value: impl Fn((f64, f64)) -> f64,
) -> Vec<PairedBin> {
    let auxiliary = doc.input.metrics.first().map(String::as_str).unwrap_or("");
    let known = known_baseline(doc, auxiliary);
    doc.seqpoints
        .iter()
        .zip(pairs)
        .map(|(sp, measured)| {
            let stats = sp.bin_stats.get(auxiliary);
            let bin = run_bin(sp, stats, scale);
            let xs: Option<Vec<f64>> = measured.keys().map(|it| known.get(it).copied()).collect();
            let auxiliary = match (bin.baseline_mean, xs) {
                (Some(mean), Some(xs)) if xs.iter().all(|&x| x > 0.0) && mean > 0.0 => {
                    Some((mean, xs))
                }
                _ => None,
            };
            // Where each iteration's auxiliary stands in its bin (`trend::with_cost_trend`);
            // a bin estimated by its plain mean has no place to follow.
            let recorded = stats.and_then(|s| Some((s.mean, s.levels?)));
            let (levels, spread) = match (&auxiliary, recorded) {
                (Some((_, xs)), Some((mean, levels))) if mean > 0.0 => {
                    (xs.iter().map(|x| x / mean).collect(), LevelMoments(levels))
                }
                _ => (Vec::new(), LevelMoments::default()),
            };
            let (baseline_mean, xs) = auxiliary.unwrap_or_else(|| (1.0, vec![1.0; measured.len()]));
            PairedBin {
                weight: bin.weight,
                population: bin.population,
                baseline_mean,
                pairs: xs
                    .into_iter()
                    .zip(measured.values())
                    .map(|(x, &pair)| (x, value(pair)))
                    .collect(),
                // Both configurations are measured: their pairs alone speak for their noise.
                noise_floor: 0.0,
                levels,
                spread,
            }
        })
        .collect()
}

/// A total's pooled successive-difference residuals (`PairedBin::successive_residuals`) and
/// their degrees of freedom.
fn total_squares(bins: &[PairedBin]) -> (f64, f64) {
    let line = CostLine::of(bins);
    bins.iter()
        .map(|b| b.successive_residuals(expected_ratio(b, line.as_ref())))
        .fold((0.0, 0.0), |(a, b), (c, d)| (a + c, b + d))
}

/// The speedup's pooled successive-difference residuals: `ratio::paired_speedup_noise`'s
/// per-iteration differences `(y_B - r_B x) - S (y_N - r_N x)`, taken between neighbours in
/// the proxy order.
fn speedup_squares(baseline: &[PairedBin], new: &[PairedBin], speedup: f64) -> (f64, f64) {
    let line = CostLine::of(baseline);
    let (mut squares, mut dof) = (0.0, 0.0);
    for (i, residual) in speedup_residuals(baseline, new, speedup, line.as_ref()) {
        let in_order: Vec<f64> = baseline[i]
            .proxy_order()
            .iter()
            .map(|&k| residual[k])
            .collect();
        squares += half_successive_squares(&in_order);
        dof += (residual.len() - 1) as f64;
    }
    (squares, dof)
}

/// `noise` with its pooled residual taken from successive differences in proxy order
/// (`squares`, `dof`): a lengths-only plan's draws are spread over each bin's proxy order
/// (`select::plan::PlanDesign::Systematic`), and their variance is a systematic sample's.
/// (A document made before that plan lists its pick's key and neighbours: their differences
/// read the noise within those keys, as their plain residuals did.)
fn successive(noise: RatioNoise, (squares, dof): (f64, f64)) -> RatioNoise {
    if dof > 0.0 {
        RatioNoise {
            q: squares / dof,
            dof,
            ..noise
        }
    } else {
        noise
    }
}

/// The new total's noise at one iteration per SeqPoint, floored at the baseline total's. Both
/// are read across the bins there (`ratio::between_bins`), from one pair each, and K draws
/// of a configuration that missed its slow tail read quiet: on the redraw example's
/// heavy-tailed case (5% of iterations 1.5x slower; lengths only, 200 runs) the new total
/// held 91.5% / 85.5% / 91% at K = 16 / 32 / 64. The baseline's K draws are other draws of
/// the same iterations' noise, and the new configuration is taken to be at least as noisy as
/// the baseline, as `select` plans it and as a timed baseline's floor takes it
/// (`PairedBin::noise_floor`): so floored, 97% / 95% / 97%. What it costs where the new
/// configuration reads quieter across the bins than the baseline: a speedup growing with the
/// length flattens the new configuration's ratio to the proxy, and there K = 16 widens from
/// ±2.17% to ±2.79% (errors to 1.62% at p95). The floor is the baseline's pooled residual as
/// measured; the new total's Student's t stays its own.
fn floored_at_baseline(new: RatioNoise, baseline: &RatioNoise) -> RatioNoise {
    RatioNoise {
        floor: vec![baseline.q; new.floor.len()],
        ..new
    }
}

/// What one iteration per SeqPoint from a log of lengths cannot bound, and what would. Its
/// noise is read across the bins, so a lean all the picks share is outside the intervals: where
/// the time steps within bins and the lengths do not show it, the picks of one length
/// distribution sit at the same places on the steps (the redraw example's stepwise case over
/// fresh drawings of its lengths: K = 4 / 8 held 88% / 78.5%, leaning -4.80% / +2.24%). Two
/// per SeqPoint spread each bin's iterations over its proxy order and held 97.5-100% there;
/// on the bundled logs every figure at K = 4 to 32 (tests: `flows`, `lengths_only`).
pub fn one_per_seqpoint_from_lengths() -> String {
    format!(
        "one iteration per SeqPoint on a proxy cost: the intervals read the noise across the \
         bins, and a lean all the picks share (a time that steps within bins where the lengths \
         do not) is outside them; select again with {} (the same options) to spread each bin's \
         iterations over it and bound that too",
        SAMPLES.typed(Surface::CommandLine, "2")
    )
}

fn figure(name: String, noise: RatioNoise, distinct: &[u64]) -> Figure {
    let parts = noise.parts(0.0);
    let variance = parts.variance(distinct);
    Figure {
        name,
        half_width_pct: half_width_pct(parts.value, variance),
        parts,
        noise: Some(noise),
    }
}

/// Project every metric of both files: the baseline and new totals and the speedup, each with
/// its interval, judged against `options.target_error_pct` with the top-up (to measure on
/// both configurations). `allow_missing` is refused: with no baseline total known, a SeqPoint
/// not measured leaves its bin's share of both totals unknown.
pub fn project_paired(
    seqpoints_path: &str,
    doc: &SelectDoc,
    baseline: &Measurements,
    new: &Measurements,
    options: &ProjectOptions,
) -> Result<ProjectionReport, ProjectError> {
    if baseline.metric_names != new.metric_names {
        return Err(ProjectError::Invalid(format!(
            "{} measures {} but {} measures {}: both configurations need the same metric \
             columns (or pass --metric)",
            baseline.source,
            baseline.metric_names.join(", "),
            new.source,
            new.metric_names.join(", ")
        )));
    }
    let scale = crate::project::document::scale_of(doc, options.run_length)?;
    crate::project::validate::check_run_length(doc, options.run_length)?;
    let logged = logged_iterations(doc);
    let mut metrics = Vec::new();
    let mut figures = Vec::new();
    // Every SeqPoint measured at one iteration (the metrics share their rows).
    let mut one_each = false;
    let mut measured_iterations = Measurements {
        source: new.source.clone(),
        metric_names: new.metric_names.clone(),
        identified_by: new.identified_by,
        samples: vec![Vec::new(); doc.seqpoints.len()],
    };
    for (m, name) in new.metric_names.iter().enumerate() {
        let pairs = join(baseline, new, m)?;
        if let Some(b) = pairs.iter().position(BTreeMap::is_empty) {
            let sp = &doc.seqpoints[b];
            return Err(ProjectError::Missing(format!(
                "{} and {}: SeqPoint {} (iteration {}, {:.2}% of the run) is measured on \
                 neither configuration; --baseline needs every SeqPoint measured on both",
                baseline.source,
                new.source,
                sp.id,
                sp.iteration,
                100.0 * (sp.weight + sp.excluded) as f64 / logged as f64
            )));
        }
        let distinct: Vec<u64> = pairs.iter().map(|p| p.len() as u64).collect();
        // Each configuration's ratio to the proxy follows its own trend with the cost.
        let (base_bins, _) = with_cost_trend(bins_of(doc, &pairs, scale, |(b, _)| b));
        let (new_bins, new_trend) = with_cost_trend(bins_of(doc, &pairs, scale, |(_, n)| n));
        let no_spread = || match next_unmeasured(doc, |b, it| pairs[b].contains_key(&it)) {
            Some((seqpoint, iteration)) => ProjectError::Invalid(format!(
                "{} and {}: metric '{name}': one iteration measured in all gives no spread to \
                 bound the projection with; measure one more on both configurations, e.g. \
                 iteration {iteration} (SeqPoint {seqpoint}), and project again",
                baseline.source, new.source
            )),
            None => ProjectError::Invalid(format!(
                "{} and {}: metric '{name}': one iteration measured in all gives no spread to \
                 bound the projection with, and the SeqPoints file lists no other iteration; \
                 select again with --samples 2",
                baseline.source, new.source
            )),
        };
        let base_parts = ratio_noise(&base_bins, 0).ok_or_else(no_spread)?;
        let new_parts = ratio_noise(&new_bins, 0).ok_or_else(no_spread)?;
        let speedup_parts = paired_speedup_noise(&base_bins, &new_bins).ok_or_else(no_spread)?;
        // A plan chosen on a proxy cost spreads its draws over each bin's proxy order; a timed
        // baseline's draws are random over the bin, and keep the random sample's residuals.
        let (base_parts, new_parts, speedup_parts) = if doc.selection.is_proxy() {
            let speedup = speedup_squares(&base_bins, &new_bins, speedup_parts.value);
            (
                successive(base_parts, total_squares(&base_bins)),
                successive(new_parts, total_squares(&new_bins)),
                successive(speedup_parts, speedup),
            )
        } else {
            (base_parts, new_parts, speedup_parts)
        };
        one_each = distinct.iter().all(|&d| d == 1);
        let new_parts = if one_each {
            floored_at_baseline(new_parts, &base_parts)
        } else {
            new_parts
        };
        let base = figure(format!("{name} baseline total"), base_parts, &distinct);
        let total = figure(format!("{name} total"), new_parts, &distinct);
        let speedup = figure(format!("{name} speedup"), speedup_parts, &distinct);
        let interval_of = |f: &Figure| {
            let half = f.half_width_pct / 100.0 * f.parts.value.abs();
            interval(f.parts.value, (half / Z95).powi(2))
        };
        let new_interval = interval_of(&total);
        metrics.push(MetricProjection {
            metric: name.clone(),
            baseline_total: Some(base.parts.value),
            baseline_source: Some("measured".into()),
            baseline_interval: Some(interval_of(&base)),
            projected_total: total.parts.value,
            // The pairs' residuals are the within-bin spread and the repeated samples' alike.
            interval: new_interval,
            interval_within_bin: new_interval,
            interval_samples: Some(new_interval),
            speedup: Some(speedup.parts.value),
            speedup_interval: Some(interval_of(&speedup)),
            ratio: if name.to_ascii_lowercase().contains("energy") {
                "saving".into()
            } else {
                "speedup".into()
            },
            estimate: Some("paired".into()),
            baseline_noise_share: None,
            // The new configuration's, on the proxy (the baseline's follows its own).
            cost_trend: Some(new_trend),
            missing_bins: Vec::new(),
            missing_share: 0.0,
            samples: distinct.iter().sum(),
            measured_seqpoints: doc.seqpoints.len() as u64,
        });
        figures.extend([base, total, speedup]);
        if m == 0 {
            // The iterations measured (on both), as the target's top-up counts them.
            for (b, p) in pairs.iter().enumerate() {
                measured_iterations.samples[b] = p
                    .keys()
                    .map(|&it| Sample {
                        iteration: Some(it),
                        line: 0,
                        values: Vec::new(),
                    })
                    .collect();
            }
        }
    }
    Ok(ProjectionReport {
        schema: PROJECTION_SCHEMA.to_string(),
        seqpoints: seqpoints_path.to_string(),
        measured: new.source.clone(),
        identified_by: new.identified_by.name().to_string(),
        logged_iterations: logged,
        run_iterations: logged as f64 * scale,
        scale,
        excluded: Vec::new(),
        excluded_in_bins: placed_excluded(doc),
        measured_files: Vec::new(),
        baseline_measured: Some(baseline.source.clone()),
        metrics,
        caveat: (one_each && doc.selection.is_proxy()).then(one_per_seqpoint_from_lengths),
        target: options
            .target_error_pct
            .map(|target| judge(doc, &measured_iterations, &figures, target)),
    })
}
