//! `project --target-error`: whether every projected figure (each metric's new total and its
//! speedup) meets the error target, and where it does not, the fewest iterations not yet
//! measured that are expected to meet it (the top-up), from the noise measured so far.
//!
//! Each figure's variance is `sum_b a_b / s_b + rest` (`estimate::VarianceParts`) with `s_b`
//! the distinct iterations measured for SeqPoint `b`; the measured ones are spent, so the
//! search starts from them and adds one iteration at a time where it removes the most of what
//! is still over the target, summed over the figures not yet met (relative to each figure's
//! allowed variance). That is the greedy optimum of a separable convex allocation, the
//! STEM/Neyman idea with sunk samples. Only iterations the SeqPoints file lists for a SeqPoint
//! (its own, its plan rows, its bin's reserve and its alternates) are candidates. The
//! reserve, more of the plan's own draws from the whole bin, comes before the alternates (the
//! picked key's and the next-best keys' iterations):
//! - a timed baseline's ratio divides by the baseline's curve, and draws spread over the bin
//!   keep its ratio the bin's where the speedup drifts within it, which more iterations at the
//!   pick would not (the redraw example's smooth case: coverage 92% -> 94%);
//! - on a proxy cost the reserve goes on spreading over the bin's proxy order
//!   (`select::plan::PlanDesign::Systematic`). Taking the alternates first measured the
//!   picked key again, which cannot show a time that steps where the proxy does not: the
//!   lengths-only stepwise flow held its totals 69-73.5% of the time.

use std::collections::{BTreeSet, HashSet};

use crate::doc::{SelectDoc, TargetDoc, TopUpRow};
use crate::estimate::VarianceParts;
use crate::options::{Surface, TARGET_ERROR};
use crate::project::ratio::RatioNoise;
use crate::runlog::measured::Measurements;
use crate::stats::{meets_target, variance_of_half_width};
use crate::text::numbers::as_typed;

/// The share of the target a top-up aims at. The noise it is sized by is re-estimated from
/// the new measurements too, and lands on either side of today's estimate: aimed at the
/// target itself, a top-up falls just short more often and asks for another round. Measured
/// on the redraw example's flows (200 runs, one drawing of the lengths), aims of 0.99 / 1.0:
/// - timed smooth case 42.7 / 42.0 iterations (1.24x / 1.22x the limit) at 1.06 / 1.09
///   rounds, heavy-tailed 328.3 / 325.1 at 1.64 / 1.75 rounds, the intervals holding the same;
/// - the lengths-only flows met within four rounds less often at 1.0: smooth 99.5% / 97.5%,
///   heavy-tailed 98.5% / 96.5%.
///
/// (An aim of 0.97 had cost 3% more iterations than 0.99 for the same rounds.)
pub const TOP_UP_AIM: f64 = 0.99;

/// One projected figure as the target judges it: its value and variance parts (what more
/// samples would do), and the half-width the report prints for it now.
#[derive(Debug, Clone)]
pub struct Figure {
    /// "time_ms total" or "time_ms speedup": how the verdict names it.
    pub name: String,
    pub parts: VarianceParts,
    pub half_width_pct: f64,
    /// A ratio figure's noise with its degrees of freedom (`parts` at those measured): more
    /// iterations also narrow Student's t, which the top-up counts on. `None` for the design's
    /// estimate, whose parts stand as they are.
    pub noise: Option<RatioNoise>,
}

impl Figure {
    /// The variance parts once `extra` more distinct iterations are measured: each brings a
    /// degree of freedom to a ratio figure's noise.
    fn parts_after(&self, extra: u64) -> VarianceParts {
        match &self.noise {
            Some(noise) => noise.parts(extra as f64),
            None => self.parts.clone(),
        }
    }
}

/// The iterations a SeqPoint may be measured at, in the order they are taken: its plan rows,
/// its bin's reserve, its own and its alternates, each once. A plan lists the SeqPoint's own
/// first where it profiles it; a systematic plan of two or more rows
/// (`select::plan::PlanDesign::Systematic`) draws in the own's share too, and a top-up that
/// took the own first would measure it in every run again, where it is one draw's chance.
/// Without a plan, the own comes first.
pub fn candidates(doc: &SelectDoc, seqpoint: usize) -> Vec<u64> {
    let sp = &doc.seqpoints[seqpoint];
    let of_this = |rows: &[crate::doc::ProfileRowDoc]| -> Vec<u64> {
        rows.iter()
            .filter(|row| row.seqpoint == sp.id)
            .map(|row| row.iteration)
            .collect()
    };
    let (planned, reserve) = doc.plan.as_ref().map_or((Vec::new(), Vec::new()), |p| {
        (of_this(&p.profile), of_this(&p.reserve))
    });
    let mut seen = HashSet::new();
    planned
        .into_iter()
        .chain(reserve)
        .chain(std::iter::once(sp.iteration))
        .chain(sp.alternates.iter().copied())
        .filter(|it| seen.insert(*it))
        .collect()
}

/// `(SeqPoint id, iteration)`: in the heaviest SeqPoint that has one, the first iteration
/// listed for it that `measured` says was not measured: where one more measurement gives the
/// spread a figure needs to be bounded at all.
pub fn next_unmeasured(
    doc: &SelectDoc,
    measured: impl Fn(usize, u64) -> bool,
) -> Option<(usize, u64)> {
    let mut order: Vec<usize> = (0..doc.seqpoints.len()).collect();
    order.sort_by_key(|&b| std::cmp::Reverse(doc.seqpoints[b].weight));
    order.into_iter().find_map(|b| {
        candidates(doc, b)
            .into_iter()
            .find(|&it| !measured(b, it))
            .map(|it| (doc.seqpoints[b].id, it))
    })
}

/// The iterations already measured for each SeqPoint. A file that names no iteration (rows by
/// SeqPoint id or key) measured as many distinct iterations as `distinct_iterations` counts,
/// taken as the first candidates.
fn measured_iterations(doc: &SelectDoc, measured: &Measurements) -> Vec<BTreeSet<u64>> {
    (0..doc.seqpoints.len())
        .map(|b| {
            let samples = &measured.samples[b];
            if samples.iter().all(|s| s.iteration.is_some()) {
                samples.iter().filter_map(|s| s.iteration).collect()
            } else {
                let n = measured.distinct_iterations(b);
                candidates(doc, b).into_iter().take(n).collect()
            }
        })
        .collect()
}

/// The verdict on `figures` at `target_pct`, with the top-up where it is not met. `figures`
/// come from the SeqPoints measured; SeqPoints not measured at all (`--allow-missing`) are
/// listed first in the top-up (their own iteration), as no figure is whole without them.
pub fn judge(
    doc: &SelectDoc,
    measured: &Measurements,
    figures: &[Figure],
    target_pct: f64,
) -> TargetDoc {
    let met_now = figures
        .iter()
        .all(|f| meets_target(f.half_width_pct, target_pct));
    let done = measured_iterations(doc, measured);
    let lists: Vec<Vec<u64>> = (0..doc.seqpoints.len())
        .map(|b| candidates(doc, b))
        .collect();
    let missing: Vec<usize> = (0..doc.seqpoints.len())
        .filter(|&b| done[b].is_empty())
        .collect();
    let mut top_up: Vec<TopUpRow> = missing
        .iter()
        .map(|&b| TopUpRow {
            iteration: doc.seqpoints[b].iteration,
            seqpoint: doc.seqpoints[b].id,
        })
        .collect();
    if met_now && missing.is_empty() {
        return TargetDoc {
            target_error_pct: target_pct,
            met: true,
            figures: figure_docs(figures),
            top_up: Vec::new(),
            expected_met: Some(true),
            reason: None,
            shortfall: None,
        };
    }
    // The bins the figures describe: the measured SeqPoints, in the document's order.
    let measured_bins: Vec<usize> = (0..doc.seqpoints.len())
        .filter(|&b| !done[b].is_empty())
        .collect();
    let have: Vec<u64> = measured_bins
        .iter()
        .map(|&b| done[b].len() as u64)
        .collect();
    let caps: Vec<u64> = measured_bins
        .iter()
        .map(|&b| {
            let unmeasured = lists[b].iter().filter(|it| !done[b].contains(it)).count();
            done[b].len() as u64 + unmeasured as u64
        })
        .collect();
    let (samples, reason) = fewest_more(figures, &have, &caps, target_pct);
    let reason = reason.map(|listed| {
        format!(
            "{listed}{}",
            beyond_the_list(doc, figures, &have, target_pct)
        )
    });
    for ((&b, &now), &want) in measured_bins.iter().zip(&have).zip(&samples) {
        let extra = (want - now) as usize;
        top_up.extend(
            lists[b]
                .iter()
                .filter(|it| !done[b].contains(it))
                .take(extra)
                .map(|&iteration| TopUpRow {
                    iteration,
                    seqpoint: doc.seqpoints[b].id,
                }),
        );
    }
    TargetDoc {
        target_error_pct: target_pct,
        met: met_now && missing.is_empty(),
        figures: figure_docs(figures),
        expected_met: Some(reason.is_none()),
        reason,
        shortfall: None,
        top_up,
    }
}

/// What a target the listed iterations cannot reach would take: at the noise measured, about
/// how many iterations in all (`needed_in_all`), and where the SeqPoints file holds a plan
/// sized for a target of `select`'s, the target to select again at so that its plan is about
/// that large. That plan is sized at the baseline's noise, so measured on a configuration as
/// noisy as this one its figures land near `target_pct`, and its own reserve takes the rest
/// (`select::plan::reserve_per_row`).
fn beyond_the_list(doc: &SelectDoc, figures: &[Figure], have: &[u64], target_pct: f64) -> String {
    let Some(needed) = needed_in_all(figures, have, target_pct) else {
        return "; every iteration of those bins would not reach it either".into();
    };
    let needs = format!("; at the noise measured it needs about {needed} iterations in all");
    let plan = doc.plan.as_ref().filter(|plan| plan.rule == "target");
    let Some((planned_at, planned)) =
        plan.and_then(|plan| plan.target_error_pct.map(|t| (t, plan.iterations)))
    else {
        return needs;
    };
    if planned == 0 || needed <= planned {
        return needs;
    }
    // Variance goes down with the iterations: a plan `needed / planned` times as large is
    // sized at `planned_at` times the square root of its inverse. Two significant digits,
    // rounded down, so that the plan is no smaller; only a target `select` takes is named.
    let at = round_down_2(planned_at * (planned as f64 / needed as f64).sqrt());
    if TARGET_ERROR.check_percent(at).is_err() {
        return needs;
    }
    let typed = |pct: f64| TARGET_ERROR.typed(Surface::CommandLine, &as_typed(pct));
    format!(
        "{needs}: select again with {} (a plan of about that many at the baseline's noise) and \
         project its list at {}",
        typed(at),
        typed(target_pct)
    )
}

/// About how many distinct iterations in all bring every figure within the target's aim, with
/// every bin's iterations to draw from: Neyman's allocation of the variance parts (`n = (sum_b
/// sqrt(a_b))^2 / (allowed - rest)`), the worst figure's, re-read at the degrees of freedom
/// that many bring (a few passes). An estimate for a message, O(bins), where `fewest_more`'s
/// greedy would take a step per iteration. `None` where what samples cannot shrink (`rest`,
/// with the finite population's part taken off) alone exceeds what the target allows.
fn needed_in_all(figures: &[Figure], have: &[u64], target_pct: f64) -> Option<u64> {
    let measured: u64 = have.iter().sum();
    let mut needed = measured;
    for _ in 0..4 {
        let added = needed.saturating_sub(measured);
        let mut worst = measured;
        for f in figures {
            let parts = f.parts_after(added);
            let allowed =
                variance_of_half_width(TOP_UP_AIM * target_pct / 100.0 * f.parts.value.abs());
            let room = allowed - parts.rest;
            let root: f64 = parts.per_sample.iter().map(|a| a.max(0.0).sqrt()).sum();
            if room <= 0.0 {
                return None;
            }
            worst = worst.max((root * root / room).ceil() as u64);
        }
        needed = worst;
    }
    Some(needed)
}

/// `v` rounded down to two significant digits (0.4738 -> 0.47).
fn round_down_2(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return v;
    }
    let scale = 10f64.powi(1 - v.log10().floor() as i32);
    // A hair over the product, so that 0.29 (28.999... in binary) stays 0.29.
    ((v * scale) * (1.0 + 1e-12)).floor() / scale
}

fn figure_docs(figures: &[Figure]) -> Vec<crate::doc::TargetFigureDoc> {
    figures
        .iter()
        .map(|f| crate::doc::TargetFigureDoc {
            figure: f.name.clone(),
            half_width_pct: f.half_width_pct,
        })
        .collect()
}

/// From `have[b]` distinct iterations per bin, one more where it removes the largest share of
/// what is still over the target (over the figures not yet expected to meet it), up to
/// `caps[b]`, until every figure is expected to meet it. Each added iteration also adds a
/// degree of freedom to a ratio figure's noise (`Figure::parts_after`): sized at today's
/// Student's t, a top-up of 13 to a first stage of 33 (24 degrees of freedom) overshot by
/// 4% of the variance. The samples reached, and why not when the caps stop it first (naming
/// the figure still over).
pub fn fewest_more(
    figures: &[Figure],
    have: &[u64],
    caps: &[u64],
    target_pct: f64,
) -> (Vec<u64>, Option<String>) {
    let mut samples: Vec<u64> = have.iter().map(|&h| h.max(1)).collect();
    let start: u64 = samples.iter().sum();
    let allowed: Vec<f64> = figures
        .iter()
        .map(|f| variance_of_half_width(TOP_UP_AIM * target_pct / 100.0 * f.parts.value.abs()))
        .collect();
    loop {
        let added = samples.iter().sum::<u64>() - start;
        let parts: Vec<VarianceParts> = figures.iter().map(|f| f.parts_after(added)).collect();
        let unmet: Vec<usize> = (0..figures.len())
            .filter(|&f| parts[f].variance(&samples) > allowed[f] * (1.0 + 1e-9))
            .collect();
        let Some(&first) = unmet.first() else {
            return (samples, None);
        };
        let gain = |b: usize| -> f64 {
            let s = samples[b] as f64;
            unmet
                .iter()
                .map(|&f| parts[f].per_sample[b].max(0.0) / (s * (s + 1.0)) / allowed[f])
                .sum()
        };
        let next = (0..samples.len())
            .filter(|&b| samples[b] < caps[b])
            .max_by(|&a, &b| gain(a).total_cmp(&gain(b)).then(b.cmp(&a)));
        match next {
            Some(b) if gain(b) > 0.0 => samples[b] += 1,
            _ => {
                return (
                    samples,
                    Some(format!(
                        "{} cannot reach ±{target_pct}% with the iterations the SeqPoints \
                         file lists (up to {} per SeqPoint, all of them counted)",
                        figures[first].name,
                        caps.iter().max().copied().unwrap_or(1)
                    )),
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{half_width_pct, Z95};

    fn figure(value: f64, per_sample: Vec<f64>, rest: f64) -> Figure {
        let parts = VarianceParts {
            value,
            per_sample,
            rest,
            bias: 0.0,
        };
        let ones = vec![1; parts.per_sample.len()];
        Figure {
            name: "t total".into(),
            half_width_pct: half_width_pct(value, parts.variance(&ones)),
            parts,
            noise: None,
        }
    }

    #[test]
    fn one_bin_needs_the_textbook_count() {
        // Variance a / s with a = 100: the half-width Z95 sqrt(100 / s) of a total 1000 is
        // within the aim 0.99% (9.9) when s >= 100 Z95^2 / 9.9^2 = 3.91..., so 4 samples.
        assert_eq!(TOP_UP_AIM, 0.99);
        let f = figure(1000.0, vec![100.0], 0.0);
        let (samples, reason) = fewest_more(&[f], &[1], &[10], 1.0);
        assert_eq!(samples, vec![4]);
        assert_eq!(reason, None);
        assert!(Z95 * (100.0f64 / 4.0).sqrt() <= 9.9 && Z95 * (100.0f64 / 3.0).sqrt() > 9.9);
    }

    #[test]
    fn samples_go_where_the_noise_is_and_spent_ones_stay() {
        // Bin 0 is quiet, bin 1 noisy: only bin 1 gets more; bin 0 keeps its 3 measured.
        let f = figure(1000.0, vec![1.0, 200.0], 0.0);
        let (samples, reason) = fewest_more(std::slice::from_ref(&f), &[3, 1], &[9, 9], 1.0);
        assert_eq!(reason, None);
        assert_eq!(samples[0], 3);
        // 1/3 + 200/s within 25.51 (= (9.9 / Z95)^2, the aim): s = 8 (7.94...).
        assert_eq!(samples[1], 8);
        // Brute force: no allocation with fewer in all reaches the aim.
        let allowed = (TOP_UP_AIM * 10.0 / Z95).powi(2);
        for a in 3..=9u64 {
            for b in 1..=9u64 {
                if f.parts.variance(&[a, b]) <= allowed {
                    assert!(a + b >= samples.iter().sum::<u64>(), "{a} {b}");
                }
            }
        }
    }

    #[test]
    fn a_top_up_is_sized_at_the_degrees_of_freedom_it_brings() {
        // One bin measured at 4 iterations (3 degrees of freedom): q = 0.01 of a total 1000,
        // Student's t at 3 dof more than doubles the variance. The top-up counts the t its
        // own iterations bring: the fewest s whose variance at 3 + (s - 4) dof is within the
        // aim, found by brute force, and far fewer than today's t would ask for.
        let noise = RatioNoise {
            value: 1000.0,
            q: 0.01,
            dof: 3.0,
            scale: vec![1000.0 * 1000.0],
            floor: vec![0.0],
            population: vec![1e9],
        };
        let parts = noise.parts(0.0);
        let f = Figure {
            name: "t total".into(),
            half_width_pct: half_width_pct(1000.0, parts.variance(&[4])),
            parts,
            noise: Some(noise.clone()),
        };
        let (samples, reason) = fewest_more(std::slice::from_ref(&f), &[4], &[5000], 1.0);
        assert_eq!(reason, None);
        let allowed = (TOP_UP_AIM * 10.0 / Z95).powi(2);
        let fits = |s: u64| noise.parts((s - 4) as f64).variance(&[s]) <= allowed;
        let oracle = (4..5000).find(|&s| fits(s)).unwrap();
        assert_eq!(samples, vec![oracle]);
        let at_todays_t = (4..5000)
            .find(|&s| noise.parts(0.0).variance(&[s]) <= allowed)
            .unwrap();
        assert!(oracle * 2 < at_todays_t, "{oracle} against {at_todays_t}");
    }

    #[test]
    fn a_target_out_of_reach_says_why() {
        // What samples cannot shrink (the rest) is already over the target.
        let f = figure(1000.0, vec![10.0], 100.0);
        let (samples, reason) = fewest_more(&[f], &[1], &[5], 1.0);
        assert_eq!(samples, vec![5]);
        let reason = reason.unwrap();
        assert!(
            reason.contains("t total") && reason.contains("up to 5"),
            "{reason}"
        );
    }

    /// By hand: parts 4 / s_0 + 9 / s_1 of a total 100 at 1% (the aim 0.99, a variance of
    /// (0.99 / Z95)^2 = 0.25513) need (2 + 3)^2 / 0.25513 = 97.99, so 98; the greedy's whole
    /// samples land within a few of it, and a finite population (rest -4/40 - 9/90 = -0.2)
    /// leaves room for 25 / 0.45513 = 54.9, so 55.
    #[test]
    fn the_iterations_needed_in_all_are_neymans() {
        let f = figure(100.0, vec![4.0, 9.0], 0.0);
        assert_eq!(
            needed_in_all(std::slice::from_ref(&f), &[1, 1], 1.0),
            Some(98)
        );
        let (greedy, reason) = fewest_more(std::slice::from_ref(&f), &[1, 1], &[1000, 1000], 1.0);
        assert_eq!(reason, None);
        let greedy: u64 = greedy.iter().sum();
        assert!((98..=100).contains(&greedy), "{greedy}");
        let finite = figure(100.0, vec![4.0, 9.0], -0.2);
        assert_eq!(needed_in_all(&[finite], &[1, 1], 1.0), Some(55));
        // What is measured already counts: never fewer than that.
        assert_eq!(needed_in_all(&[f], &[150, 150], 1.0), Some(300));
    }

    /// A document whose plan `select` sized for a 1% target at 100 iterations.
    fn planned_at_one_pct() -> SelectDoc {
        let text = "iteration,seq_len,time_ms\n0,10,1.0\n1,20,2.0\n2,10,1.1\n3,20,2.1\n";
        let log = crate::runlog::load_bytes(
            "run.csv",
            text.as_bytes(),
            crate::runlog::InputFormat::Csv,
            &crate::runlog::LoadOptions::default(),
        )
        .unwrap();
        let options = crate::select::SelectOptions {
            bins: crate::select::BinCount::Fixed(2),
            ..Default::default()
        };
        let selection = crate::select::run_selection(&log, &options).unwrap();
        let mut doc = crate::output::json::select_document(&log, &selection, None);
        doc.plan = Some(crate::doc::PlanDoc {
            rule: "target".into(),
            budget: None,
            target_error_pct: Some(1.0),
            met: Some(true),
            iterations: 100,
            bins: Vec::new(),
            profile: Vec::new(),
            reserve: Vec::new(),
            projection: Vec::new(),
            speedup: None,
            profiling_reduction: None,
        });
        doc
    }

    /// By hand: parts 4 and 9 of a total 100 need 98 iterations at 1%; 900 at 1% against a
    /// variance of 0.25513 need (30 + 30)^2 / 0.25513 = 14,110.5, so 14,111. A plan of 100 at
    /// 1% grown to 14,111 is sized at 1% x sqrt(100 / 14,111) = 0.0842%, so 0.084; but a plan
    /// at 1% grown to 98 is no larger (nothing to select again at), and one at 0.0001% could
    /// not be selected (the least target is 0.01%): only the count is said.
    #[test]
    fn a_spent_list_names_a_target_select_takes() {
        let doc = planned_at_one_pct();
        let noisy = figure(100.0, vec![900.0, 900.0], 0.0);
        let said = beyond_the_list(&doc, std::slice::from_ref(&noisy), &[1, 1], 1.0);
        assert_eq!(
            said,
            "; at the noise measured it needs about 14111 iterations in all: select again with \
             --target-error 0.084 (a plan of about that many at the baseline's noise) and \
             project its list at --target-error 1"
        );
        let quiet = figure(100.0, vec![4.0, 9.0], 0.0);
        let said = beyond_the_list(&doc, &[quiet], &[1, 1], 1.0);
        assert_eq!(
            said,
            "; at the noise measured it needs about 98 iterations in all"
        );
        let mut fine = doc.clone();
        fine.plan.as_mut().unwrap().target_error_pct = Some(0.0001);
        let said = beyond_the_list(&fine, &[noisy], &[1, 1], 1.0);
        assert_eq!(
            said,
            "; at the noise measured it needs about 14111 iterations in all"
        );
    }

    #[test]
    fn round_down_2_keeps_two_significant_digits() {
        assert_eq!(round_down_2(0.4738), 0.47);
        assert_eq!(round_down_2(0.1999), 0.19);
        assert_eq!(round_down_2(12.7), 12.0);
        assert_eq!(round_down_2(1.0), 1.0);
        assert_eq!(round_down_2(0.29), 0.29);
        assert_eq!(round_down_2(0.0), 0.0);
    }
}
