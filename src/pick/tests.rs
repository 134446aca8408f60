//! The pick's rules and the candidates' spread, by hand and by their invariants.

use super::candidates::{from_total_order_bits, spread_rows};
use super::*;

use crate::runlog::test_log as log;

// Keys 10 (x2, time 10), 20 (x1, time 20), 30 (x5, time 31..35), one bin.
const RUN: &str = "seq_len,time_ms\n10,10\n30,33\n20,20\n30,31\n10,10\n30,35\n30,32\n30,34\n";

fn one_bin(pick: Pick, warmup: u64) -> SeqPoint {
    let log = log(RUN);
    let groups = KeyGroups::from_log(&log);
    let selector = BinPicker::new(
        &log,
        &groups,
        PickSettings {
            method: Method::Optimal,
            pick,
            warmup,
            seed: 0,
            max_bins: 1,
        },
        None,
    )
    .unwrap();
    selector.select(1).unwrap().remove(0)
}

#[test]
fn picks_by_hand() {
    // Weighted mean time = (20 + 20 + 165) / 8 = 25.6: key 20 (mean 20) is nearest.
    assert_eq!(one_bin(Pick::NearestMean, 0).key, vec![20]);
    // Weighted median key: cumulative 2, 3, 8 of 8 -> 30.
    assert_eq!(one_bin(Pick::Median, 0).key, vec![30]);
    // Mean key = (20 + 20 + 150) / 8 = 23.75: key 20.
    assert_eq!(one_bin(Pick::Centroid, 0).key, vec![20]);
    assert_eq!(one_bin(Pick::Mode, 0).key, vec![30]);
}

#[test]
fn concrete_iteration_is_nearest_the_key_median_and_skips_warmup() {
    // Key 30's times by row: 1:33, 3:31, 5:35, 6:32, 7:34; median 33 -> row 1.
    let sp = one_bin(Pick::Mode, 0);
    assert_eq!(sp.iteration, 1);
    assert_eq!(sp.alternates[..4], [6, 7, 3, 5]);
    assert_eq!(sp.weight, 8);
    // With warm-up 2, row 1 is excluded: the nearest after it are 32 (row 6) and 34 (row 7).
    assert_eq!(one_bin(Pick::Mode, 2).iteration, 6);
    // Key 20 has only row 2: warm-up 3 moves nearest-mean to the next best key,
    // 30 (mean 33, 7.4 from the bin mean 25.6) rather than 10 (mean 10, 15.6 away).
    assert_eq!(one_bin(Pick::NearestMean, 3).key, vec![30]);
}

#[test]
fn bin_summary_pools_the_members() {
    let sp = one_bin(Pick::Mode, 0);
    let m = &sp.bin.moments[0][0];
    assert_eq!(m.count, 8);
    assert_eq!(m.sum, 205.0);
    assert_eq!(
        (sp.bin_min.clone(), sp.bin_max.clone()),
        (vec![10], vec![30])
    );
}

/// `(value, row)` pairs as `spread_rows` takes them, rows numbered in order.
fn eligible(values: &[f64]) -> Vec<(u64, u32)> {
    values
        .iter()
        .enumerate()
        .map(|(r, &v)| (total_order_bits(v), r as u32))
        .collect()
}

#[test]
fn balanced_rows_by_hand() {
    // Values by row 10, 11, 12, 13, 30: mean 15.2, median 12 (row 2). Then the value
    // nearest what would bring the mean of those taken to 15.2: 2 * 15.2 - 12 = 18.4 ->
    // 13 (row 3); 3 * 15.2 - 25 = 20.6 -> 30 (9.4 away, 11 is 9.6) (row 4); 4 * 15.2 - 55
    // = 5.8 -> 10 (row 0); then 11 (row 1).
    assert_eq!(
        spread_rows(&mut eligible(&[10.0, 11.0, 12.0, 13.0, 30.0])),
        [2, 3, 4, 0, 1]
    );
    assert!(spread_rows(&mut []).is_empty());
    for bits in [1.5f64, -0.0, 0.0, -3.0, f64::MAX, f64::MIN_POSITIVE] {
        assert_eq!(
            from_total_order_bits(total_order_bits(bits)).to_bits(),
            bits.to_bits()
        );
    }
}

#[test]
fn balanced_samples_sit_at_their_keys_mean_where_quantiles_lean_low() {
    // 2,000 keys of 200 log-normal values (sigma 0.3: the median 4.4% below the mean).
    // The first s rows' mean, relative to the key's, averaged over the keys: balanced it
    // is within 0.1% at every s from 2 to 9; the quantiles 1/2, 1/4, 3/4, 1/8, ... this
    // order replaced sat 1.7-13% low (the lowest at s = 2, the median and lower quartile).
    use rand::{Rng, SeedableRng};
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
    let mut lean = [0.0f64; 1 + ALTERNATES];
    let keys = 2000;
    for _ in 0..keys {
        let values: Vec<f64> = (0..200)
            .map(|_| {
                let normal: f64 = (0..12).map(|_| rng.gen::<f64>()).sum::<f64>() - 6.0;
                (0.3 * normal).exp()
            })
            .collect();
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        let rows = spread_rows(&mut eligible(&values));
        let mut sum = 0.0;
        for (s, &r) in rows.iter().enumerate() {
            sum += values[r as usize];
            lean[s] += (sum / (s + 1) as f64 / mean - 1.0) / keys as f64;
        }
    }
    assert!(lean[0] < -0.03, "the median alone sits low: {lean:?}");
    for (s, l) in lean.iter().enumerate().skip(1) {
        assert!(l.abs() < 1e-3, "{} samples: {:.4}%", s + 1, 100.0 * l);
    }
}

#[test]
fn a_keys_pick_leans_neither_early_in_the_run_nor_low_in_value() {
    // 20,000 keys of an even count (2 to 10) of iid values in run order: the pick's place
    // in the run, relative (0 first, 1 last), averages a half with sd 0.29 / sqrt(20,000)
    // = 0.002; the old rule (the earlier of the two middles) averaged 0.21 (0 for two rows,
    // 0.22-0.30 from four to ten). Of two rows the pick is the lower value half the time
    // (sd 0.79% over the 4,000 two-row keys). Bounds at 6 sd: a false failure below 1e-8.
    use rand::{Rng, SeedableRng};
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(11);
    let (keys, mut place, mut lower, mut pairs) = (20_000, 0.0, 0usize, 0usize);
    for k in 0..keys {
        let n = 2 * (1 + k % 5);
        let values: Vec<f64> = (0..n).map(|_| rng.gen::<f64>()).collect();
        // Each key's rows where a log would have them: its own stretch of row numbers.
        let base = 16 * k as u32;
        let mut rows: Vec<(u64, u32)> = eligible(&values);
        rows.iter_mut().for_each(|(_, r)| *r += base);
        let pick = (spread_rows(&mut rows)[0] - base) as usize;
        place += pick as f64 / (n - 1) as f64 / keys as f64;
        if n == 2 {
            pairs += 1;
            lower += usize::from(values[pick] < values[1 - pick]);
        }
    }
    assert!(
        (place - 0.5).abs() < 6.0 * 0.289 / (keys as f64).sqrt(),
        "{place}"
    );
    let share = lower as f64 / pairs as f64;
    assert!(
        (share - 0.5).abs() < 6.0 * 0.5 / (pairs as f64).sqrt(),
        "{share}"
    );
}

#[test]
fn tied_values_spread_over_the_run_not_its_first_iterations() {
    // A proxy cost: every iteration of the one key costs the same. The rows follow the
    // quantiles 1/2, 1/4, 3/4, 1/8, ... of the key's iterations in run order, turned by the
    // key's fixed amount: nine distinct rows, one in each ninth of the run after the turn,
    // which here takes the pick away from the middle (7 of 0-15).
    let text: String = (0..16).map(|_| "7,49\n").collect();
    let log = log(&format!("seq_len,time_ms\n{text}"));
    let groups = KeyGroups::from_log(&log);
    let candidates = Candidates::new(&log, &groups, 0);
    let rows = candidates.rows(&log, &groups, 0).to_vec();
    let mut sorted = rows.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), 9, "{rows:?}");
    assert_ne!(rows[0], 7, "{rows:?}");
    // The first two sit half the key apart (quantiles 1/2 and 1/4 turned alike: 4 rows).
    let apart = (i64::from(rows[0]) - i64::from(rows[1])).rem_euclid(16);
    assert_eq!(apart, 4, "{rows:?}");
}

#[test]
fn tied_keys_picks_fall_anywhere_in_the_run() {
    // 20,000 keys of 2 to 20 tied iterations each: the pick's place in its key (0 first, 1
    // last) averages a half (sd 0.29 / sqrt(20,000) = 0.002: bound at 6 sd, a false failure
    // below 1e-8) and lands in each third more than a fifth of the time (keys of two or three
    // iterations have no middle, or one, so not a third each; the share's sd is 0.003);
    // unturned, every pick was the middle iteration, all in the middle third.
    let keys = 20_000usize;
    let (mut place, mut thirds) = (0.0, [0usize; 3]);
    for k in 0..keys {
        let n = 2 + k % 19;
        let base = 32 * k as u32;
        let mut rows: Vec<(u64, u32)> = (0..n as u32)
            .map(|r| (total_order_bits(3.0), base + r))
            .collect();
        let pick = (spread_rows(&mut rows)[0] - base) as f64 / (n - 1) as f64;
        place += pick / keys as f64;
        thirds[((pick * 3.0) as usize).min(2)] += 1;
    }
    assert!(
        (place - 0.5).abs() < 6.0 * 0.289 / (keys as f64).sqrt(),
        "{place}"
    );
    for count in thirds {
        let share = count as f64 / keys as f64;
        assert!(share > 0.2, "{thirds:?}");
    }
}

#[test]
fn a_skewed_keys_samples_do_not_lean_to_its_median() {
    // One key: twelve iterations at 10, four at 20 (mean 12.5, median 10). The nine
    // iterations nearest the median would all be 10s; balanced they hold two 20s (taken
    // third and seventh, each when the mean of those taken sat 2.5 below the key's), and
    // their mean is 12.2.
    let text: String = (0..16)
        .map(|i| format!("7,{}\n", if i % 4 == 3 { 20 } else { 10 }))
        .collect();
    let log = log(&format!("seq_len,time_ms\n{text}"));
    let groups = KeyGroups::from_log(&log);
    let rows = Candidates::new(&log, &groups, 0)
        .rows(&log, &groups, 0)
        .to_vec();
    let values = &log.configs[0].metrics[0].values;
    assert_eq!(values[rows[0] as usize], 10.0, "the pick is a median");
    let mean = rows.iter().map(|&r| values[r as usize]).sum::<f64>() / rows.len() as f64;
    assert!((mean - 110.0 / 9.0).abs() < 1e-12, "{rows:?}: {mean}");
}

proptest::proptest! {
    #[test]
    fn total_order_bits_order_as_total_cmp(a in proptest::num::f64::ANY, b in proptest::num::f64::ANY) {
        proptest::prop_assert_eq!(total_order_bits(a).cmp(&total_order_bits(b)), a.total_cmp(&b));
    }

    #[test]
    fn candidates_do_not_depend_on_the_order_they_are_asked_in(
        rows in proptest::collection::vec((1u32..6, 0u32..8), 1..300),
        warmup in 0u64..40,
    ) {
        let mut text = String::from("seq_len,time_ms\n");
        for (k, t) in &rows {
            text.push_str(&format!("{k},{t}\n"));
        }
        let log = log(&text);
        let groups = KeyGroups::from_log(&log);
        let whole = Candidates::new(&log, &groups, warmup);
        let backwards = Candidates::new(&log, &groups, warmup);
        for g in (0..groups.len()).rev() {
            backwards.rows(&log, &groups, g);
        }
        for g in 0..groups.len() {
            let picked = whole.rows(&log, &groups, g);
            proptest::prop_assert_eq!(picked, backwards.rows(&log, &groups, g));
            proptest::prop_assert_eq!(whole.any(&groups, g), !picked.is_empty());
            proptest::prop_assert!(picked.len() <= ALTERNATES + 1);
            proptest::prop_assert!(picked.iter().all(|&r| u64::from(r) >= warmup));
            // Every eligible row is taken when there are few; the first is a median.
            let eligible: Vec<u32> = groups.rows_of(g).iter().copied()
                .filter(|&r| u64::from(r) >= warmup).collect();
            proptest::prop_assert_eq!(picked.len(), eligible.len().min(ALTERNATES + 1));
            if let Some(&first) = picked.first() {
                let v = |r: u32| log.configs[0].metrics[0].values[r as usize];
                let below = eligible.iter().filter(|&&r| v(r) < v(first)).count();
                let above = eligible.iter().filter(|&&r| v(r) > v(first)).count();
                proptest::prop_assert!(below <= eligible.len() / 2 && above <= eligible.len() / 2);
            }
        }
    }
}

/// A seeded log for the cache's test: `rows` iterations, keys on `1..=60` (one column) or
/// `1..=12 x 1..=8` (two), the time rising with the key times U(0.9, 1.1), and a compare
/// configuration of another slope and noise (so the bins pool two configurations and a
/// co-moment).
fn seeded_pair(seed: u64, rows: usize, dims: usize) -> RunLog {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    let keys: Vec<Vec<u32>> = (0..rows)
        .map(|_| match dims {
            1 => vec![rng.gen_range(1..=60)],
            _ => vec![rng.gen_range(1..=12), rng.gen_range(1..=8)],
        })
        .collect();
    let header = if dims == 1 {
        "seq_len"
    } else {
        "src_len,tgt_len"
    };
    let mut text = |slope: f64| {
        let mut text = format!("{header},time_ms\n");
        for key in &keys {
            let size: f64 = key.iter().map(|&k| f64::from(k)).sum();
            let time = (1.0 + slope * size) * rng.gen_range(0.9..1.1);
            let key: Vec<String> = key.iter().map(|k| k.to_string()).collect();
            text.push_str(&format!("{},{time}\n", key.join(",")));
        }
        text
    };
    let (base, new) = (text(0.1), text(0.07));
    let load = |text: &str| {
        let options = crate::runlog::LoadOptions {
            key: header.split(',').map(String::from).collect(),
            ..crate::runlog::LoadOptions::default()
        };
        crate::runlog::load_bytes(
            "t.csv",
            text.as_bytes(),
            crate::runlog::InputFormat::Csv,
            &options,
        )
        .expect("the test log loads")
    };
    crate::runlog::with_compare(load(&base), load(&new)).expect("the same keys")
}

/// A picker hands out a bin it made at an earlier K (`PickCache`) as that bin's SeqPoint made
/// afresh: over seeded logs (one and two key columns, a compare configuration, the whole run
/// and each of three strata of its rows, with and without warm-up), every method, and Ks
/// asked out of order and again, each `select(k)` equals a new picker's, ids included (the
/// plan's seeds read them). The cache's generations swap several times here (a few Ks' bins
/// each), and it holds at most two of them.
#[test]
fn cached_bins_are_the_bins_made_afresh() {
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    for seed in 0..4u64 {
        let dims = 1 + (seed % 2) as usize;
        let log = seeded_pair(seed, 400, dims);
        let third = log.len() / 3;
        let mut parts: Vec<(Option<usize>, KeyGroups)> = vec![(None, KeyGroups::from_log(&log))];
        for s in 0..3 {
            let rows = crate::rows::RowRanges::new(std::iter::once(s * third..(s + 1) * third));
            parts.push((Some(s), KeyGroups::from_rows(&log, &rows)));
        }
        let methods: &[Method] = if dims == 1 {
            &[Method::Optimal, Method::Uniform, Method::Quantile]
        } else {
            &[Method::Quantile, Method::Kmeans]
        };
        for (stratum, groups) in &parts {
            let candidates = Candidates::new(&log, groups, 20 * seed);
            for &method in methods {
                let settings = PickSettings {
                    method,
                    pick: Pick::NearestMean,
                    warmup: 20 * seed,
                    seed,
                    max_bins: 40,
                };
                let picker = BinPicker::new(&log, groups, settings, *stratum).unwrap();
                // k-means fits each K afresh, slowly: fewer Ks.
                let most = if method == Method::Kmeans { 6 } else { 40 };
                let mut ks: Vec<usize> = (1..=most).chain(1..=most).collect();
                ks.shuffle(&mut rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed));
                for k in ks {
                    // A new picker over the same candidates and DP table: an empty cache.
                    let fresh = BinPicker::prepared(
                        &log,
                        groups,
                        &candidates,
                        picker.table(),
                        settings,
                        *stratum,
                    )
                    .unwrap();
                    let cached = picker.select(k).unwrap();
                    let afresh = fresh.select(k).unwrap();
                    assert!(cached == afresh, "seed {seed}, {method:?}, K {k}");
                    assert!(cached.iter().enumerate().all(|(id, sp)| sp.id == id));
                    let bound = 2 * (CACHE_MEMBERS_PER_GROUP + 1) * groups.len();
                    assert!(picker.cache().members() <= bound);
                }
            }
        }
    }
}

/// A pick's listed values are the log's at its own row and each alternate's, in order, on
/// every configuration and metric (the plan's search reads them in place of the log's), and
/// a SeqPoint whose alternates were replaced has none.
#[test]
fn listed_values_are_the_logs_at_the_pick_and_its_alternates() {
    for dims in [1, 2] {
        let log = seeded_pair(7, 300, dims);
        let groups = KeyGroups::from_log(&log);
        let settings = PickSettings {
            method: if dims == 1 {
                Method::Optimal
            } else {
                Method::Quantile
            },
            pick: Pick::NearestMean,
            warmup: 5,
            seed: 7,
            max_bins: 16,
        };
        let picker = BinPicker::new(&log, &groups, settings, None).unwrap();
        for k in [1, 5, 16] {
            for sp in picker.select(k).unwrap() {
                let rows: Vec<usize> = std::iter::once(sp.iteration)
                    .chain(sp.alternates.iter().copied())
                    .map(|it| log.iterations.row_of(it).expect("a row of the log"))
                    .collect();
                assert_eq!(rows[0], sp.row);
                for (c, config) in log.configs.iter().enumerate() {
                    for (m, metric) in config.metrics.iter().enumerate() {
                        let logged: Vec<f64> = rows.iter().map(|&r| metric.values[r]).collect();
                        assert_eq!(sp.listed_values(c, m), Some(&logged[..]));
                    }
                }
                assert_eq!(sp.with_alternates(vec![]).listed_values(0, 0), None);
            }
        }
    }
}
