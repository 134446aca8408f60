//! The plan's rules, rows and cheapest plan, checked by hand and against a brute force.

use super::rows::{extra_candidates, strata_groups};
use super::*;
use crate::project::{picked_bins, total_of, Projection};
use crate::select::{
    answer, answer_with, run_selection, Answering, Exclusion, SelectRequest, Strata,
};

use crate::runlog::test_log as log;

/// A request for the cheapest plan meeting `target`.
fn target_request(options: &SelectOptions, target: f64) -> SelectRequest {
    SelectRequest {
        options: options.clone(),
        plan: Some(PlanRule::Target(target)),
    }
}

/// `selection` with its plan seed set to `seed` (what another `--seed` would select).
fn reseeded(selection: &Selection, seed: u64) -> Selection {
    Selection {
        options: SelectOptions {
            seed,
            ..selection.options.clone()
        },
        ..selection.clone()
    }
}

/// The cheapest plan meeting `target`, as `select --target-error` makes it.
fn cheapest(log: &RunLog, options: &SelectOptions, target: f64) -> (Selection, ProfilePlan) {
    let found = answer(log, &target_request(options, target)).unwrap();
    (
        found.selection,
        found.plan.expect("a target's answer has a plan"),
    )
}

#[test]
fn the_plan_rule_follows_the_flags() {
    let none = PlanAsk::default();
    let interval = TargetRule::Interval;
    // Nothing asked: the target's cheapest plan, unless K is fixed or the measured error
    // alone is the target.
    assert_eq!(none.rule(None, 1.0, interval), Some(PlanRule::Target(1.0)));
    assert_eq!(none.rule(Some(8), 1.0, interval), None);
    assert_eq!(none.rule(None, 1.0, TargetRule::Measured), None);
    let one = PlanAsk {
        samples: Some(1),
        ..none
    };
    assert_eq!(one.rule(None, 1.0, interval), None);
    let three = PlanAsk {
        samples: Some(3),
        ..none
    };
    assert_eq!(
        three.rule(Some(8), 1.0, interval),
        Some(PlanRule::Samples(3))
    );
    let plan = PlanAsk { plan: true, ..none };
    assert_eq!(
        plan.rule(None, 0.5, TargetRule::Measured),
        Some(PlanRule::Target(0.5))
    );
    let budget = PlanAsk {
        budget: Some(80),
        plan: true,
        samples: Some(2),
    };
    assert_eq!(budget.rule(None, 1.0, interval), Some(PlanRule::Budget(80)));
}

const RUN: &str =
    "seq_len,time_ms\n10,10\n10,12\n10,11\n10,13\n20,30\n20,20\n20,25\n20,35\n30,50\n30,50\n";

#[test]
fn samples_plan_lists_the_seqpoint_or_seeded_draws_from_its_bin() {
    let log = log(RUN);
    let options = SelectOptions {
        bins: BinCount::Fixed(3),
        ..SelectOptions::default()
    };
    let selection = run_selection(&log, &options).unwrap();
    let one = plan_selection(&log, &selection, PlanRule::Samples(1)).unwrap();
    for (bin, sp) in one.bins.iter().zip(&selection.seqpoints) {
        assert_eq!(
            bin.rows,
            vec![sp.row as u32],
            "one row is the SeqPoint's own"
        );
    }
    let plan = plan_selection(&log, &selection, PlanRule::Samples(3)).unwrap();
    let rows = bin_rows(&log, &selection).unwrap();
    for (bin, sp) in plan.bins.iter().zip(&selection.seqpoints) {
        assert!(bin.rows.iter().all(|r| rows[sp.id].contains(r)));
        let mut unique = bin.rows.clone();
        unique.dedup();
        assert_eq!(unique.len(), bin.rows.len());
    }
    // The key-30 bin has two rows: capped at 2.
    assert_eq!(plan.samples(), vec![3, 3, 2]);
    // Same seed, same plan; the bin of two is profiled whole, so it adds no variance.
    assert_eq!(
        plan_selection(&log, &selection, PlanRule::Samples(3)).unwrap(),
        plan
    );
    assert_eq!(
        total_of(&picked_bins(&selection.seqpoints[2..], 0, &[2]), 0).variance,
        0.0
    );
}

#[test]
fn caps_count_the_bins_rows_after_warmup() {
    let log = log(RUN);
    // A warm-up over the whole run is refused (nothing left to pick); 9 leaves one row.
    let whole = SelectOptions {
        warmup: 20,
        ..SelectOptions::default()
    };
    assert!(run_selection(&log, &whole).is_err());
    for warmup in [0, 3, 7, 9] {
        let options = SelectOptions {
            bins: BinCount::Fixed(2),
            warmup,
            ..SelectOptions::default()
        };
        let selection = run_selection(&log, &options).unwrap();
        let groups = KeyGroups::from_log(&log);
        let rows = bin_rows(&log, &selection).unwrap();
        for (sp, rows) in selection.seqpoints.iter().zip(&rows) {
            let listed = extra_candidates(rows, sp, warmup).len() as u64 + 1;
            assert_eq!(cap_of(&groups, sp, warmup), listed, "warm-up {warmup}");
        }
    }
}

/// A bin's candidates, counted and tested through its key groups, are the rows its bin
/// lists, under warm-up, strata and exclusions.
#[test]
fn bin_candidates_are_the_rows_the_bin_lists() {
    let log = generated(400, 23, 5);
    for (warmup, strata, exclude) in [
        (0, Strata::None, vec![]),
        (37, Strata::None, vec!["100-149"]),
        (0, Strata::Phases(3), vec![]),
        (120, Strata::Phases(2), vec!["0-9", "300-320"]),
    ] {
        let options = SelectOptions {
            bins: BinCount::Fixed(5),
            warmup,
            strata,
            exclude: Exclusion::parse(&exclude).unwrap(),
            ..SelectOptions::default()
        };
        let selection = run_selection(&log, &options).unwrap();
        let rows = bin_rows(&log, &selection).unwrap();
        let groups = strata_groups(&log, &options).unwrap();
        let candidates =
            BinCandidates::of_each(&log, &groups, &selection.seqpoints, options.warmup);
        for (sp, (candidates, rows)) in selection.seqpoints.iter().zip(candidates.iter().zip(&rows))
        {
            let listed = extra_candidates(rows, sp, warmup);
            assert_eq!(candidates.list(), listed);
            assert_eq!(candidates.count(), listed.len());
            for row in 0..log.len() as u32 + 2 {
                assert_eq!(candidates.contains(row), listed.contains(&row), "row {row}");
            }
        }
    }
}

/// A plan's reserve: rows of the SeqPoint's bin it may profile (after warm-up, in the kept
/// strata), none twice and none the plan lists, `reserve_count` of them where the bin has
/// them (24 per planned row, at least 32, fewer per row past 20,000 in all), the same for the
/// same seed and drawn anew for another.
#[test]
fn the_reserve_holds_more_rows_of_the_bin_and_none_the_plan_lists() {
    let log = generated(2000, 23, 9);
    for (warmup, strata, exclude, samples) in [
        (0, Strata::None, vec![], 2),
        (37, Strata::None, vec!["100-149"], 40),
        (120, Strata::Phases(2), vec!["0-9", "300-320"], 3),
    ] {
        let options = SelectOptions {
            bins: BinCount::Fixed(5),
            warmup,
            strata,
            exclude: Exclusion::parse(&exclude).unwrap(),
            ..SelectOptions::default()
        };
        let selection = run_selection(&log, &options).unwrap();
        let plan = plan_selection(&log, &selection, PlanRule::Samples(samples)).unwrap();
        let groups = strata_groups(&log, &options).unwrap();
        let candidates =
            BinCandidates::of_each(&log, &groups, &selection.seqpoints, options.warmup);
        for (bin, candidates) in plan.bins.iter().zip(&candidates) {
            let mut all: Vec<u32> = bin.rows.iter().chain(&bin.reserve).copied().collect();
            all.sort_unstable();
            all.dedup();
            assert_eq!(all.len(), bin.rows.len() + bin.reserve.len(), "a row twice");
            for &row in &bin.reserve {
                assert!(
                    candidates.contains(row) || row as usize == candidates.sp.row,
                    "row {row} is not the bin's to profile"
                );
            }
            let room = candidates.count() + 1 - bin.rows.len();
            let per_row = reserve_per_row(plan.iterations());
            let wanted = (bin.samples().saturating_mul(per_row).max(32) as usize).min(room);
            assert_eq!(bin.reserve.len(), wanted);
        }
        assert_eq!(
            plan_selection(&log, &selection, PlanRule::Samples(samples)).unwrap(),
            plan
        );
        let other =
            plan_selection(&log, &reseeded(&selection, 1), PlanRule::Samples(samples)).unwrap();
        assert!(other
            .bins
            .iter()
            .zip(&plan.bins)
            .any(|(a, b)| a.reserve.len() > 1 && a.reserve != b.reserve));
    }
}

#[test]
fn budget_plan_spends_the_budget_where_the_spread_is() {
    let log = log(RUN);
    let options = SelectOptions {
        bins: BinCount::Fixed(3),
        ..SelectOptions::default()
    };
    let selection = run_selection(&log, &options).unwrap();
    let plan = plan_selection(&log, &selection, PlanRule::Budget(6)).unwrap();
    // Spreads: key 10 sd 1.29, key 20 sd 6.45, key 30 sd 0 -> the key-20 bin gets most.
    assert_eq!(plan.samples(), vec![1, 4, 1]);
    assert_eq!(plan.iterations(), 6);
    // Planned estimate: bin means of the drawn rows, interval from 1, 4 and 1 samples.
    // The planned rows' own values give the projection; its interval assumes 1, 4, 1.
    let row = &plan.projection.totals[0];
    assert!(row.interval[1] > row.projected);
}

/// The selection at a fixed `k`, the other options as given.
/// The selection at `k` that the cheapest plan's search costs (its bins for plans).
fn selection_at(log: &RunLog, options: &SelectOptions, k: usize) -> Selection {
    super::plans_selection_at(log, options, k)
}

/// A generated run: `keys` lengths drawn by a seeded hash, a cost growing with the length
/// and a spread within each length.
fn generated(rows: u32, keys: u32, seed: u32) -> RunLog {
    let text: String = (0..rows)
        .map(|i| {
            let h = i
                .wrapping_mul(2_654_435_761)
                .wrapping_add(seed.wrapping_mul(40_503));
            let key = 10 + (h >> 7) % keys;
            let noise = f64::from((h >> 3) % 13) / 50.0;
            let cost = f64::from(key).powf(1.3) * (1.0 + noise);
            format!("{key},{cost:.3}\n")
        })
        .collect();
    log(&format!("seq_len,time_ms\n{text}"))
}

/// The cheapest plan found the slow, plain way: a fresh selection (its own grouping and a
/// DP table sized for that K) per K, its bins' rows listed to count what can be profiled,
/// one K after another.
fn brute_force_cheapest(
    log: &RunLog,
    options: &SelectOptions,
    target: f64,
) -> (Selection, ProfilePlan) {
    let strata = StrataGroups::for_options(log, options).unwrap();
    let largest = options.max_bins.max(1).min(strata.largest());
    let fixed = |k| SelectOptions {
        bins: BinCount::Fixed(k),
        max_bins: k,
        ..options.clone()
    };
    let mut best: Option<(u64, usize)> = None;
    for k in 1..=largest {
        let selection = super::plans_selection_at(log, &fixed(k), k);
        let rows = bin_rows(log, &selection).unwrap();
        let caps: Vec<u64> = selection
            .seqpoints
            .iter()
            .zip(&rows)
            .map(|(sp, rows)| extra_candidates(rows, sp, options.warmup).len() as u64 + 1)
            .collect();
        let caps = representative_caps(&selection.seqpoints, &caps);
        let search = TargetSearch::Polished;
        // Read as the plan's design reads the SeqPoints, from the bins' own key groups.
        let design = PlanDesign::of(log);
        let groups = strata_groups(log, &selection.options).unwrap();
        let candidates = BinCandidates::of_each(log, &groups, &selection.seqpoints, options.warmup);
        let read = design.seqpoints(log, &candidates, &selection.seqpoints, options.seed);
        if let Some(samples) = samples_for_target(log, &read, &caps, target, search) {
            let cost = samples.iter().sum();
            if best.is_none_or(|(c, _)| cost < c) {
                best = Some((cost, k));
            }
        }
    }
    let k = best.map_or(largest, |(_, k)| k);
    let selection = super::plans_selection_at(log, options, k);
    let plan = plan_selection(log, &selection, PlanRule::Target(target)).unwrap();
    (selection, plan)
}

#[test]
fn the_cheapest_plan_equals_a_brute_force_over_k_and_reuses_prepared_groups() {
    let speech = crate::runlog::test_speech_pair();
    let mut cases: Vec<(RunLog, SelectOptions)> = vec![(
        speech,
        SelectOptions {
            max_bins: 12,
            ..SelectOptions::default()
        },
    )];
    for seed in 0..4u32 {
        let options = SelectOptions {
            max_bins: 10,
            warmup: u64::from(seed) * 7,
            strata: if seed == 3 {
                Strata::Phases(2)
            } else {
                Strata::None
            },
            ..SelectOptions::default()
        };
        cases.push((generated(400, 30 + seed * 9, seed), options));
    }
    for (n, (log, options)) in cases.iter().enumerate() {
        // One set of key groups serves several targets, its DP table built once.
        let strata = StrataGroups::for_options(log, options).unwrap();
        for target in [5.0, 3.0, 2.0, 1.0] {
            let case = format!("case {n}, target {target}");
            let (selection, plan) = cheapest(log, options, target);
            let (want_selection, want_plan) = brute_force_cheapest(log, options, target);
            assert_eq!(selection.seqpoints, want_selection.seqpoints, "{case}");
            assert_eq!(plan, want_plan, "{case}");
            let answering = Answering {
                strata: Some(&strata),
                ..Answering::default()
            };
            let reused = answer_with(log, &target_request(options, target), answering)
                .unwrap()
                .expect("never stopped");
            let (reused, reused_plan) = (reused.selection, reused.plan.unwrap());
            assert_eq!(reused.seqpoints, selection.seqpoints, "{case}");
            assert_eq!(reused_plan, plan, "{case}");
        }
    }
}

#[test]
fn a_stopped_cheapest_plan_gives_nothing() {
    let log = generated(300, 25, 1);
    let options = SelectOptions::default();
    let strata = StrataGroups::for_options(&log, &options).unwrap();
    let mut told = 0;
    let mut stop_at_the_fourth = |_: &'static str, _, _| {
        told += 1;
        if told > 3 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let answering = Answering {
        strata: Some(&strata),
        prepared: None,
        progress: Some(&mut stop_at_the_fourth),
    };
    let stopped = answer_with(&log, &target_request(&options, 1.0), answering).unwrap();
    assert!(stopped.is_none());
    assert_eq!(told, 4, "it stops at the first Break");
}

/// A run of `rows` iterations over six lengths, time growing with length and a skewed
/// noise (one iteration in ten runs 15% slow), and a new configuration 1.5x faster with
/// its own noise: the spread picks of a key lean one way, then the other.
fn skewed_pair(rows: usize, seed: u64) -> RunLog {
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let (mut base, mut new) = (
        String::from("seq_len,time_ms\n"),
        String::from("seq_len,time_ms\n"),
    );
    for _ in 0..rows {
        let len = 10 * rng.gen_range(1..=6u32);
        let cost = f64::from(len).powf(1.5);
        let slow = |rng: &mut Xoshiro256PlusPlus| {
            let jitter = 1.0 + 0.05 * (rng.gen::<f64>() - 0.5);
            if rng.gen::<f64>() < 0.1 {
                1.15 * jitter
            } else {
                jitter
            }
        };
        base.push_str(&format!("{len},{:.4}\n", cost * slow(&mut rng)));
        new.push_str(&format!("{len},{:.4}\n", cost / 1.5 * slow(&mut rng)));
    }
    let other = log(&new);
    let mut pair = log(&base);
    pair.configs.push(crate::runlog::Configuration {
        role: crate::runlog::ConfigRole::Compare,
        source: "new.csv".into(),
        metrics: other.configs[0].metrics.clone(),
        measurement_like: Vec::new(),
    });
    pair
}

/// The plan's projection (as `plan_rows` makes it) with `samples[b]` iterations of bin `b`,
/// and the representative caps the target's plans are held to.
fn projected_with(log: &RunLog, selection: &Selection, samples: &[u64]) -> Projection {
    let options = &selection.options;
    let groups = strata_groups(log, options).unwrap();
    let design = PlanDesign::of(log);
    let candidates = BinCandidates::of_each(log, &groups, &selection.seqpoints, options.warmup);
    let bins: Vec<PlannedBin> = candidates
        .iter()
        .zip(samples)
        .map(|(candidates, &m)| PlannedBin {
            seqpoint: candidates.sp.id,
            rows: design.rows(log, candidates, m, 0, options.seed).0,
            reserve: Vec::new(),
        })
        .collect();
    let read = design.seqpoints(log, &candidates, &selection.seqpoints, options.seed);
    plan_projection(
        log,
        &crate::project::actual_totals(log),
        design,
        &read,
        &bins,
    )
}

fn target_caps(log: &RunLog, selection: &Selection) -> Vec<u64> {
    let rows = bin_rows(log, selection).unwrap();
    let caps: Vec<u64> = selection
        .seqpoints
        .iter()
        .zip(&rows)
        .map(|(sp, rows)| extra_candidates(rows, sp, selection.options.warmup).len() as u64 + 1)
        .collect();
    representative_caps(&selection.seqpoints, &caps)
}

/// Every sample vector within `caps` whose total is below `budget`.
fn vectors_below(caps: &[u64], budget: u64) -> Vec<Vec<u64>> {
    let mut all = vec![Vec::new()];
    for &cap in caps {
        all = all
            .into_iter()
            .flat_map(|v: Vec<u64>| {
                (1..=cap).filter_map(move |s| {
                    let mut next = v.clone();
                    next.push(s);
                    (next.iter().sum::<u64>() < budget).then_some(next)
                })
            })
            .collect();
    }
    all
}

#[test]
fn the_target_plan_is_the_cheapest_whose_final_interval_meets_it() {
    the_plan_is_the_cheapest_on(|seed| skewed_pair(80, seed));
}

/// The same on the baseline alone: a timed log without a compare configuration, whose plans
/// draw over the bin at two or more per bin (`PlanDesign::OverBin`).
#[test]
fn over_the_bin_the_target_plan_is_the_cheapest_whose_final_interval_meets_it() {
    the_plan_is_the_cheapest_on(|seed| {
        let mut log = skewed_pair(80, seed);
        log.configs.truncate(1);
        assert_eq!(PlanDesign::of(&log), PlanDesign::OverBin);
        log
    });
}

/// Brute force on small skewed runs: the chosen plan's own interval meets the target, one
/// fewer sample in any bin (above the design's least) misses it, and the cheapest plan at
/// any K (every sample vector within the caps and the design's least, projected as the plan
/// is) is not cheaper but in rare runs.
fn the_plan_is_the_cheapest_on(make: impl Fn(u64) -> RunLog) {
    let (mut planned, mut exact, mut found, mut fewest) = (0, 0, 0, 0);
    for (seed, target) in (1..=8).flat_map(|s| [2.0, 3.0, 4.0, 6.0].map(move |t| (s, t))) {
        let log = make(seed);
        let design = PlanDesign::of(&log);
        let options = SelectOptions {
            max_bins: 4,
            ..SelectOptions::default()
        };
        let (selection, plan) = cheapest(&log, &options, target);
        if plan.met != Some(true) {
            continue;
        }
        planned += 1;
        let samples = plan.samples();
        let least = design.at_least(vec![1; samples.len()], &target_caps(&log, &selection));
        assert!(meets(&projected_with(&log, &selection, &samples), target));
        for b in (0..samples.len()).filter(|&b| samples[b] > least[b]) {
            let mut fewer = samples.clone();
            fewer[b] -= 1;
            let p = projected_with(&log, &selection, &fewer);
            assert!(!meets(&p, target), "seed {seed}: {fewer:?} meets too");
        }
        let mut cheapest = plan.iterations();
        for k in 1..=4 {
            let other = selection_at(&log, &options, k);
            let caps = target_caps(&log, &other);
            for v in vectors_below(&caps, cheapest) {
                if design.at_least(v.clone(), &caps) == v
                    && meets(&projected_with(&log, &other, &v), target)
                {
                    cheapest = cheapest.min(v.iter().sum());
                }
            }
        }
        assert!(
            plan.iterations() <= cheapest + 2,
            "seed {seed}, {target}%: {samples:?} against {cheapest} iterations"
        );
        found += plan.iterations();
        fewest += cheapest;
        exact += usize::from(plan.iterations() == cheapest);
    }
    // The search is greedy over a bias that is not monotone in the samples: it may miss
    // the cheapest by a sample or two, rarely (one run of fourteen here, 13 for 11).
    assert!(planned >= 10, "only {planned} runs had a plan");
    assert!(exact + 1 >= planned, "{exact} of {planned} at the cheapest");
    assert!(
        found as f64 <= 1.05 * fewest as f64,
        "{found} against {fewest}"
    );
}

#[test]
fn cheapest_plan_meets_the_target_and_is_cheapest_over_k() {
    let log = log(RUN);
    let options = SelectOptions::default();
    let (selection, plan) = cheapest(&log, &options, 5.0);
    assert_eq!(plan.met, Some(true));
    // No K gives a cheaper plan that also meets the target.
    for k in 1..=3 {
        let other = selection_at(&log, &options, k);
        let other_plan = plan_selection(&log, &other, PlanRule::Target(5.0)).unwrap();
        assert!(other_plan.iterations() >= plan.iterations(), "K = {k}");
    }
    assert_eq!(plan.bins.len(), selection.bins());
}

/// A log of lengths alone (a proxy cost): `keys` lengths drawn by a seeded hash.
fn lengths_only(rows: u32, keys: u32, seed: u32) -> RunLog {
    let text: String = (0..rows)
        .map(|i| {
            let h = i
                .wrapping_mul(2_654_435_761)
                .wrapping_add(seed.wrapping_mul(40_503));
            format!("{}\n", 10 + (h >> 7) % keys)
        })
        .collect();
    crate::runlog::load_run_bytes(
        "lengths.csv",
        format!("seq_len\n{text}").as_bytes(),
        crate::runlog::InputFormat::Csv,
        &crate::runlog::LoadOptions::default(),
    )
    .unwrap()
}

/// Where each of `rows` stands among the bin's rows after warm-up and the SeqPoint's `own`
/// ordered by the proxy cost (by key, then row: the proxy grows with the length; `own` ahead
/// of its key's rows if it is in warm-up), and how many rows that order holds.
fn proxy_places(
    log: &RunLog,
    bin: &[u32],
    own: u32,
    warmup: u64,
    rows: &[u32],
) -> (Vec<usize>, usize) {
    let mut order: Vec<u32> = bin.to_vec();
    order.push(own);
    let ahead = |r: u32| u64::from(r == own && u64::from(own) < warmup);
    let proxy = &log.configs[0].metrics[0].values;
    order.sort_by(|&a, &b| {
        proxy[a as usize]
            .total_cmp(&proxy[b as usize])
            .then(log.key(a as usize).cmp(log.key(b as usize)))
            .then(ahead(b).cmp(&ahead(a)))
            .then(a.cmp(&b))
    });
    let places = rows
        .iter()
        .map(|r| order.iter().position(|o| o == r).unwrap())
        .collect();
    (places, order.len())
}

/// How many of `places` fall in each of `cells` equal-count cells of `n` places.
fn per_cell(places: &[usize], n: usize, cells: usize) -> Vec<usize> {
    (0..cells)
        .map(|c| {
            let (lo, hi) = (c * n / cells, (c + 1) * n / cells);
            places.iter().filter(|&&p| (lo..hi).contains(&p)).count()
        })
        .collect()
}

#[test]
fn a_lengths_only_plan_spreads_its_rows_and_reserve_over_the_proxy_order() {
    let log = lengths_only(2000, 40, 3);
    assert_eq!(PlanDesign::of(&log), PlanDesign::Systematic);
    for (warmup, samples) in [(0, 1), (37, 4), (0, 6)] {
        let options = SelectOptions {
            bins: BinCount::Fixed(5),
            warmup,
            ..SelectOptions::default()
        };
        let selection = run_selection(&log, &options).unwrap();
        let plan = plan_selection(&log, &selection, PlanRule::Samples(samples)).unwrap();
        let groups = strata_groups(&log, &options).unwrap();
        let candidates = BinCandidates::of_each(&log, &groups, &selection.seqpoints, warmup);
        for (bin, candidates) in plan.bins.iter().zip(&candidates) {
            let own = candidates.sp.row as u32;
            if samples == 1 {
                assert_eq!(bin.rows, vec![own], "one row is the SeqPoint's own");
            }
            let mut all: Vec<u32> = bin.rows.iter().chain(&bin.reserve).copied().collect();
            all.sort_unstable();
            all.dedup();
            assert_eq!(all.len(), bin.rows.len() + bin.reserve.len(), "a row twice");
            assert!(bin
                .rows
                .iter()
                .chain(&bin.reserve)
                .all(|&r| r == own || candidates.contains(r)));
            let m = bin.rows.len();
            assert_eq!(m as u64, samples.min(candidates.count() as u64 + 1));
            let (places, n) = proxy_places(&log, &candidates.list(), own, warmup, &bin.rows);
            // One row in each of m strata of equal count.
            assert_eq!(per_cell(&places, n, m), vec![1; m], "bin of {n}");
            // Each round of the reserve halves the cells and fills the empty halves: after
            // the first m reserve rows, one in each of 2m cells; after 3m more, in 4m.
            let mut listed = bin.rows.clone();
            for cells in [2 * m, 4 * m] {
                if bin.reserve.len() < cells - m || cells > n {
                    break;
                }
                listed = bin
                    .rows
                    .iter()
                    .chain(&bin.reserve[..cells - m])
                    .copied()
                    .collect();
                let (places, _) = proxy_places(&log, &candidates.list(), own, warmup, &listed);
                assert_eq!(per_cell(&places, n, cells), vec![1; cells], "{cells} cells");
            }
            assert!(
                listed.len() > m || bin.reserve.len() < m,
                "no round checked"
            );
        }
        let other =
            plan_selection(&log, &reseeded(&selection, 1), PlanRule::Samples(samples)).unwrap();
        assert_eq!(
            plan_selection(&log, &selection, PlanRule::Samples(samples)).unwrap(),
            plan
        );
        assert!(other
            .bins
            .iter()
            .zip(&plan.bins)
            .any(|(a, b)| a.reserve != b.reserve));
    }
}

/// A plan of two or more rows per bin lists every row of the bin as often as its share of
/// the bin gives it, the SeqPoint's own as any other: over the bin `m / n`, systematic one
/// over its stratum's rows. (A SeqPoint's own listed in every plan stands for its share with
/// the same noise in every plan: on the bundled logs, over 200 plan seeds, the timed flow's
/// speedup leaned -0.42% and the lengths-only one's +0.43%, holding 83%.) Each row's count
/// over 4,000 seeds is binomial; beyond 6 sd has odds about 2e-8 a row, 1,200 rows here.
#[test]
fn every_row_of_a_bin_is_listed_as_often_as_its_share_gives_it() {
    const SEEDS: u64 = 4000;
    const SAMPLES: usize = 3;
    for (log, design) in [
        (generated(600, 23, 9), PlanDesign::OverBin),
        (lengths_only(600, 23, 3), PlanDesign::Systematic),
    ] {
        assert_eq!(PlanDesign::of(&log), design);
        let options = SelectOptions {
            bins: BinCount::Fixed(4),
            ..SelectOptions::default()
        };
        let selection = run_selection(&log, &options).unwrap();
        let groups = strata_groups(&log, &options).unwrap();
        let candidates = BinCandidates::of_each(&log, &groups, &selection.seqpoints, 0);
        // Per bin, how often each place of the bin's proxy order was listed.
        let mut counts: Vec<Vec<u64>> = candidates.iter().map(|c| vec![0; c.count() + 1]).collect();
        for seed in 0..SEEDS {
            let rule = PlanRule::Samples(SAMPLES as u64);
            let plan = plan_selection(&log, &reseeded(&selection, seed), rule).unwrap();
            for ((bin, c), counts) in plan.bins.iter().zip(&candidates).zip(&mut counts) {
                assert_eq!(bin.rows.len(), SAMPLES);
                let (places, _) = proxy_places(&log, &c.list(), c.sp.row as u32, 0, &bin.rows);
                for place in places {
                    counts[place] += 1;
                }
            }
        }
        for counts in &counts {
            let n = counts.len();
            let stratum_rows = |place: usize| {
                let h = (0..SAMPLES)
                    .find(|&h| place < (h + 1) * n / SAMPLES)
                    .unwrap();
                (h + 1) * n / SAMPLES - h * n / SAMPLES
            };
            for (place, &count) in counts.iter().enumerate() {
                let p = match design {
                    PlanDesign::Systematic => 1.0 / stratum_rows(place) as f64,
                    _ => SAMPLES as f64 / n as f64,
                };
                let expected = p * SEEDS as f64;
                let sd = (expected * (1.0 - p)).sqrt();
                assert!(
                    (count as f64 - expected).abs() <= 6.0 * sd,
                    "{design:?}: place {place} of {n} listed {count} times, expected {expected:.1}"
                );
            }
        }
    }
}

/// The budget advised for a missed target: the least that meets it where meeting is monotone
/// in the budget (every threshold from 65 to 450 against a brute force), one that was found to
/// meet where it is not, and none when even every iteration misses.
#[test]
fn the_least_meeting_budget_is_searched_from_the_asked_one() {
    for threshold in 65..=450u64 {
        let mut asked_for = Vec::new();
        let found = least_meeting_budget(64, 450, |b| {
            asked_for.push(b);
            Ok(b >= threshold)
        })
        .unwrap();
        assert_eq!(found, Some(threshold));
        assert!(asked_for.len() <= 2 * 9 + 1, "{threshold}: {asked_for:?}");
    }
    // Met at 70 and from 80 on, missed between: the search reports a budget it saw met.
    let meets = |b: u64| b == 70 || b >= 80;
    let found = least_meeting_budget(64, 450, |b| Ok(meets(b))).unwrap();
    assert!(found.is_some_and(meets), "{found:?}");
    assert_eq!(least_meeting_budget(64, 450, |_| Ok(false)).unwrap(), None);
    assert_eq!(least_meeting_budget(450, 450, |_| Ok(true)).unwrap(), None);
}
