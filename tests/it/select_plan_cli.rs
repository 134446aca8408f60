//! `select` with profiling plans (`--samples`, `--budget`, `--plan`) and the naive
//! baselines beside SeqPoints, on the real 1- and 2-thread logs.

use crate::common::json_output;
use std::collections::HashMap;

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

const T1: &str = "tests/data/speech_t1.csv";
const T2: &str = "tests/data/speech_t2.csv";

fn select_json(args: &[&str]) -> Value {
    json_output(&[&["select", T1, "--format", "json"], args].concat())
}

/// `iteration -> seq_len` of the log.
fn keys() -> HashMap<u64, u64> {
    let mut reader = csv::Reader::from_path(T1).unwrap();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            (r[0].parse().unwrap(), r[2].parse().unwrap())
        })
        .collect()
}

/// Every planned iteration lies in its SeqPoint's bin, a bin profiled once profiles its
/// SeqPoint's own, no iteration is listed twice, and the bins' samples add up to the plan's
/// total.
fn check_plan(doc: &Value) -> &Value {
    let plan = &doc["plan"];
    let keys = keys();
    let seqpoints = doc["seqpoints"].as_array().unwrap();
    let profile = plan["profile"].as_array().unwrap();
    let mut seen = std::collections::HashSet::new();
    for row in profile {
        let sp = &seqpoints[row["seqpoint"].as_u64().unwrap() as usize];
        let it = row["iteration"].as_u64().unwrap();
        let key = keys[&it];
        assert!(
            sp["bin"]["min"][0].as_u64().unwrap() <= key
                && key <= sp["bin"]["max"][0].as_u64().unwrap()
        );
        assert_eq!(row["key"][0].as_u64().unwrap(), key);
        assert!(seen.insert(it), "iteration {it} listed twice");
    }
    for bin in plan["bins"].as_array().unwrap() {
        let id = bin["seqpoint"].as_u64().unwrap();
        let first = profile.iter().find(|r| r["seqpoint"] == id).unwrap();
        let listed = profile.iter().filter(|r| r["seqpoint"] == id).count() as u64;
        assert_eq!(listed, bin["samples"].as_u64().unwrap());
        if listed == 1 {
            assert_eq!(first["iteration"], seqpoints[id as usize]["iteration"]);
        }
    }
    assert_eq!(plan["iterations"].as_u64().unwrap() as usize, profile.len());
    plan
}

#[test]
fn samples_list_m_iterations_per_seqpoint() {
    let doc = select_json(&["--bins", "8", "--samples", "3"]);
    let plan = check_plan(&doc);
    assert_eq!(plan["rule"], "samples");
    assert_eq!(plan["iterations"], 24);
    // The seqpoint/1 fields are all still there.
    for field in [
        "schema",
        "input",
        "selection",
        "seqpoints",
        "projection",
        "speedup",
        "profiling_reduction",
    ] {
        assert!(doc.get(field).is_some(), "{field}");
    }
    assert_eq!(doc["schema"], "seqpoint/1");
    assert_eq!(doc["selection"]["samples"], 3);
    // A timed baseline alone: seeded draws over each whole bin, the SeqPoint's own drawn as
    // any other (the same with the same seed, others with another); every row in its bin
    // (`check_plan`).
    assert_eq!(
        doc["plan"],
        select_json(&["--bins", "8", "--samples", "3"])["plan"]
    );
    let reseeded = select_json(&["--bins", "8", "--samples", "3", "--seed", "5"]);
    check_plan(&reseeded);
    assert_ne!(doc["plan"]["profile"], reseeded["plan"]["profile"]);
    let beyond_alternates = doc["seqpoints"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|sp| {
            let alternates = sp["alternates"].as_array().unwrap();
            plan["profile"].as_array().unwrap().iter().any(|r| {
                r["seqpoint"] == sp["id"]
                    && r["iteration"] != sp["iteration"]
                    && !alternates.contains(&r["iteration"])
            })
        })
        .count();
    assert!(beyond_alternates >= 4, "{beyond_alternates} of 8 bins");
    // With a compare log the plan stays at the pick's key: each SeqPoint, then its first two
    // alternates (its key's iterations nearest the key's median, then the next-best keys'),
    // whatever the seed.
    let compare = |seed: &str| {
        select_json(&[
            "--compare",
            T2,
            "--bins",
            "8",
            "--samples",
            "3",
            "--seed",
            seed,
        ])
    };
    let paired = compare("0");
    assert_eq!(paired["plan"]["profile"], compare("5")["plan"]["profile"]);
    for sp in paired["seqpoints"].as_array().unwrap() {
        let listed: Vec<&Value> = paired["plan"]["profile"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["seqpoint"] == sp["id"])
            .map(|r| &r["iteration"])
            .collect();
        let alternates = sp["alternates"].as_array().unwrap();
        assert_eq!(listed[0], &sp["iteration"]);
        assert_eq!(listed[1..], [&alternates[0], &alternates[1]]);
    }
}

#[test]
fn samples_csv_has_one_row_per_iteration_to_profile() {
    let out = Command::cargo_bin("seqpoint")
        .unwrap()
        .args([
            "select",
            T1,
            "--bins",
            "4",
            "--samples",
            "2",
            "--format",
            "csv",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("id,iteration,epoch,seq_len,weight,time_ms,sample,samples")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 8);
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row[0], (i / 2).to_string(), "seqpoint id");
        assert_eq!(row[6], (i % 2).to_string(), "sample number");
        assert_eq!(row[7], "2");
    }
}

#[test]
fn budget_is_spread_by_neyman_allocation() {
    let doc = select_json(&["--bins", "8", "--budget", "40"]);
    let plan = check_plan(&doc);
    assert_eq!(plan["rule"], "budget");
    assert_eq!(plan["iterations"], 40);
    // Bins with more weight x spread get more samples: the allocation is ordered like w s
    // up to the one-per-bin minimum and whole numbers.
    let seqpoints = doc["seqpoints"].as_array().unwrap();
    let ws: Vec<f64> = seqpoints
        .iter()
        .map(|sp| {
            sp["weight"].as_f64().unwrap() * sp["bin_stats"]["time_ms"]["sd"].as_f64().unwrap()
        })
        .collect();
    let samples: Vec<u64> = plan["bins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["samples"].as_u64().unwrap())
        .collect();
    for a in 0..ws.len() {
        for b in 0..ws.len() {
            if ws[a] > ws[b] {
                assert!(samples[a] >= samples[b], "{ws:?} {samples:?}");
            }
        }
    }
    // Its interval is narrower than one iteration per SeqPoint's.
    let width = |rows: &Value| {
        let i = &rows[0]["interval"];
        i[1].as_f64().unwrap() - i[0].as_f64().unwrap()
    };
    let one = select_json(&["--bins", "8", "--samples", "1"]);
    assert!(width(&plan["projection"]) < width(&one["projection"]));
    // The top level describes what is to be profiled: the plan.
    assert_eq!(doc["projection"], plan["projection"]);
    assert_eq!(doc["iterations_to_profile"], 40);
    Command::cargo_bin("seqpoint")
        .unwrap()
        .args(["select", T1, "--bins", "8", "--budget", "5"])
        .assert()
        .failure()
        .stderr(predicate::str::contains(
            "--budget 5: fewer than the 8 SeqPoints",
        ));
    Command::cargo_bin("seqpoint")
        .unwrap()
        .args(["select", T1, "--budget", "40", "--samples", "2"])
        .assert()
        .failure()
        .stderr(predicate::str::contains("cannot be used with"));
}

/// A budget's plan draws over each bin, as two or more per SeqPoint do, so it bins as they
/// do (the method's own objective), not for one pick per SeqPoint.
#[test]
fn a_budget_bins_as_plans_drawn_over_the_bins_do() {
    let bins = |args: &[&str]| -> Vec<Value> {
        let doc = select_json(args);
        let seqpoints = doc["seqpoints"].as_array().unwrap();
        seqpoints.iter().map(|sp| sp["bin"].clone()).collect()
    };
    let budget = bins(&["--bins", "8", "--budget", "40"]);
    assert_eq!(budget, bins(&["--bins", "8", "--samples", "2"]));
    // The premise: one pick per SeqPoint bins otherwise on this log.
    assert_ne!(budget, bins(&["--bins", "8"]));
}

/// Under a budget, the target K was chosen for is judged on the plan's own figures, the ones
/// the output shows: met exactly when every figure's error and 95% half-width are within it.
#[test]
fn a_budget_is_judged_on_its_own_figures() {
    let verdicts: Vec<bool> = ["64", "100"]
        .iter()
        .map(|budget| {
            let doc = json_output(&[
                "select",
                T1,
                "--compare",
                T2,
                "--budget",
                budget,
                "--format",
                "json",
            ]);
            let figures: Vec<&Value> = doc["projection"]
                .as_array()
                .unwrap()
                .iter()
                .chain(doc["speedups"].as_array().unwrap())
                .collect();
            let within = figures.iter().all(|f| {
                let projected = f["projected"].as_f64().unwrap();
                let [lo, hi] = [0, 1].map(|i| f["interval"][i].as_f64().unwrap());
                let half_pct = 100.0 * (hi - lo) / 2.0 / projected.abs();
                f["error_pct"].as_f64().unwrap() <= 1.0 && half_pct <= 1.0 + 1e-9
            });
            let met = doc["selection"]["target_met"].as_bool().unwrap();
            assert_eq!(met, within, "--budget {budget}");
            assert_eq!(doc["plan"]["met"], met, "--budget {budget}");
            let table = String::from_utf8(
                Command::cargo_bin("seqpoint")
                    .unwrap()
                    .args(["select", T1, "--compare", T2, "--budget", budget])
                    .output()
                    .unwrap()
                    .stdout,
            )
            .unwrap();
            let verdict = if met {
                "target 1% met"
            } else {
                "target 1% NOT met"
            };
            assert!(
                table.contains(&format!("{verdict} (error and 95% interval) with K = "))
                    && table.contains(&format!("a budget {budget}: error ")),
                "{table}"
            );
            if !met {
                // Its advice, followed, meets the target at the same K.
                let advice = doc["selection"]["advice"].as_str().unwrap().to_string();
                let at = advice.find("(--budget ").expect("a budget advised");
                let advised: String = advice[at + "(--budget ".len()..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                assert!(advised.parse::<u64>().unwrap() > budget.parse().unwrap());
                let followed = json_output(&[
                    "select",
                    T1,
                    "--compare",
                    T2,
                    "--budget",
                    &advised,
                    "--format",
                    "json",
                ]);
                assert_eq!(followed["selection"]["target_met"], true, "{advice}");
                assert_eq!(
                    followed["seqpoints"].as_array().unwrap().len(),
                    doc["seqpoints"].as_array().unwrap().len()
                );
            }
            met
        })
        .collect();
    // The premise: the smaller budget misses and the larger meets on the bundled logs.
    assert_eq!(verdicts, [false, true]);
}

/// No plan the target search lists is larger than a budget needs for the same target: the
/// least budget found to meet it (a budget's advice, at the K the target chose for one
/// iteration per SeqPoint) is at least the cheapest plan's iterations.
#[test]
fn the_cheapest_plan_is_no_larger_than_a_budget_meeting_the_same_target() {
    for target in ["1", "0.7", "0.5"] {
        let plan = select_json(&["--compare", T2, "--target-error", target]);
        assert_eq!(plan["selection"]["target_met"], true, "{target}");
        let planned = plan["iterations_to_profile"].as_u64().unwrap();
        let budget = select_json(&["--compare", T2, "--target-error", target, "--budget", "64"]);
        let advice = budget["selection"]["advice"].as_str().unwrap_or_default();
        let at = advice.find("(--budget ").expect(advice);
        let least: u64 = advice[at + "(--budget ".len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .unwrap();
        assert!(
            planned <= least,
            "{target}%: plan {planned}, budget {least}"
        );
    }
}

#[test]
fn plan_finds_the_cheapest_plan_meeting_the_target() {
    let doc = select_json(&["--compare", T2, "--plan", "--target-error", "1"]);
    let plan = check_plan(&doc);
    assert_eq!(plan["rule"], "target");
    assert_eq!(plan["met"], true);
    for row in plan["projection"].as_array().unwrap() {
        let (lo, hi) = (
            row["interval"][0].as_f64().unwrap(),
            row["interval"][1].as_f64().unwrap(),
        );
        // Met is judged on the projected figure (the actual is unknown to a user): against
        // the actual, a plan met at 0.998% that projects 0.5% high would read 1.003%.
        assert!((hi - lo) / 2.0 <= 0.01 * row["projected"].as_f64().unwrap() * (1.0 + 1e-9));
    }
    // The speedup's interval is held to the target too.
    let speedup = &plan["speedup"];
    let (lo, hi) = (
        speedup["interval"][0].as_f64().unwrap(),
        speedup["interval"][1].as_f64().unwrap(),
    );
    assert!((hi - lo) / 2.0 <= 0.01 * speedup["projected"].as_f64().unwrap() * (1.0 + 1e-9));
    // One SeqPoint per bin and 32 bins does not meet 1% on these logs (the speedup's interval
    // is about ±1.35%: a new configuration's iteration varies by about 4% around its key, and
    // its log says so); the plan meets it, and is what `--target-error` gives by default.
    let k32 = select_json(&["--compare", T2, "--bins", "32"]);
    let s32 = &k32["speedup"]["interval"];
    let half = (s32[1].as_f64().unwrap() - s32[0].as_f64().unwrap()) / 2.0;
    assert!(half > 0.01 * k32["speedup"]["projected"].as_f64().unwrap());
    assert_eq!(
        select_json(&["--compare", T2, "--target-error", "1"])["plan"],
        doc["plan"]
    );
}

#[test]
fn baselines_sit_beside_seqpoints_in_table_and_json() {
    let doc = select_json(&["--compare", T2, "--bins", "16"]);
    let baselines = doc["baselines"].as_array().unwrap();
    let methods: Vec<&str> = baselines
        .iter()
        .map(|b| b["method"].as_str().unwrap())
        .collect();
    assert_eq!(methods, ["first-n", "random", "systematic", "median-sl"]);
    for b in baselines {
        assert_eq!(
            b["errors"].as_array().unwrap().len(),
            2,
            "both configurations"
        );
        assert_eq!(b["speedup_errors"].as_array().unwrap().len(), 1);
        let n = if b["method"] == "median-sl" { 1 } else { 16 };
        assert_eq!(b["iterations"], n);
    }
    assert_eq!(baselines[1]["draws"], 100);
    let random = &baselines[1]["errors"][0];
    assert!(random["worst_error_pct"].as_f64().unwrap() >= random["error_pct"].as_f64().unwrap());
    // On these logs the SeqPoints beat every naive pick of the same size on both totals.
    for (c, row) in doc["projection"].as_array().unwrap().iter().enumerate() {
        let ours = row["error_pct"].as_f64().unwrap();
        for b in baselines {
            assert!(
                ours < b["errors"][c]["error_pct"].as_f64().unwrap(),
                "{} {c}",
                b["method"]
            );
        }
    }
    Command::cargo_bin("seqpoint")
        .unwrap()
        .args(["select", T1, "--compare", T2, "--bins", "16"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "beside naive baselines at the same budget (16 profiled iterations",
        ))
        .stdout(predicate::str::contains("first N after warm-up"))
        .stdout(predicate::str::contains("single median-SL iteration"))
        .stdout(predicate::str::contains("speedup time_ms"));
}

/// Every advice `select` prints is followed, on a corpus of logs, and must then meet the
/// target: `--samples N` and `--max-bins K` are computed, not guessed.
#[test]
fn printed_advice_meets_the_target_when_followed() {
    let dir = tempfile::tempdir().unwrap();
    // A generated run: cost ~ L^1.5, 3% noise, 300 lengths.
    let mut text = String::from("iteration,seq_len,time_ms\n");
    for i in 0..1500u64 {
        let length = 20 + (i * 7919) % 300;
        let noise = 1.0 + 0.03 * (((i * 2654435761) % 1000) as f64 / 500.0 - 1.0);
        text.push_str(&format!(
            "{i},{length},{:.4}\n",
            (10.0 + (length as f64).powf(1.5) / 10.0) * noise
        ));
    }
    let generated = dir.path().join("generated.csv");
    std::fs::write(&generated, text).unwrap();
    let generated = generated.to_str().unwrap().to_string();
    let logs: [Vec<&str>; 3] = [vec![T1], vec![T1, "--compare", T2], vec![&generated]];
    let settings: [&[&str]; 4] = [
        &["--samples", "1", "--target-error", "1"],
        &["--samples", "1", "--target-error", "2", "--max-bins", "12"],
        &["--samples", "1", "--target-error", "0.7"],
        &[
            "--target-by",
            "measured",
            "--target-error",
            "0.3",
            "--max-bins",
            "8",
        ],
    ];
    let mut followed = 0;
    for log in &logs {
        for setting in settings {
            let args: Vec<&str> = log.iter().chain(setting).copied().collect();
            let doc = json_output(&[&["select", "--format", "json"], args.as_slice()].concat());
            let Some(advice) = doc["selection"]["advice"].as_str() else {
                continue;
            };
            for flag in ["--samples", "--max-bins"] {
                let Some(at) = advice.find(&format!("({flag} ")) else {
                    continue;
                };
                let value: String = advice[at + flag.len() + 2..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                // The same command with the advised setting in place of the old one.
                let mut again: Vec<&str> = Vec::new();
                let mut skip = false;
                for a in &args {
                    if skip {
                        skip = false;
                        continue;
                    }
                    if *a == flag {
                        skip = true;
                        continue;
                    }
                    again.push(a);
                }
                again.extend([flag, value.as_str()]);
                let doc =
                    json_output(&[&["select", "--format", "json"], again.as_slice()].concat());
                assert_eq!(
                    doc["selection"]["target_met"], true,
                    "{again:?} after {advice}"
                );
                followed += 1;
            }
        }
    }
    assert!(followed >= 3, "only {followed} advices were followed");
}

fn select_table(dir: &std::path::Path, text: &str, args: &[&str]) -> String {
    let path = dir.join("run.csv");
    std::fs::write(&path, text).unwrap();
    let out = Command::cargo_bin("seqpoint")
        .unwrap()
        .arg("select")
        .arg(&path)
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

#[test]
fn edge_cases_get_a_true_statement() {
    let dir = tempfile::tempdir().unwrap();
    // One iteration: no interval, so never "met", by default or with one sample forced.
    for args in [&[][..], &["--samples", "1"][..]] {
        let out = select_table(dir.path(), "seq_len,time_ms\n10,5\n", args);
        assert!(
            out.contains("target 1% NOT met: one iteration cannot give an interval"),
            "{out}"
        );
        assert!(!out.contains("% met"), "{out}");
    }
    // One unique length: K = 1 is the only binning, and the verdict says so.
    let rows: String = (0..200)
        .map(|i| format!("32,{}\n", 10.0 + f64::from(i % 5) * 0.05))
        .collect();
    let out = select_table(dir.path(), &format!("seq_len,time_ms\n{rows}"), &[]);
    assert!(out.contains("K = 1 is the only binning"), "{out}");
    assert!(out.contains("target 1% met"), "{out}");
    assert!(!out.contains("no K up to 64"), "{out}");
}

#[test]
fn empty_uniform_bins_are_reported() {
    let out = Command::cargo_bin("seqpoint")
        .unwrap()
        .args(["select", T1, "--method", "uniform", "--bins", "16"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    let first = out.lines().next().unwrap();
    assert!(
        first.contains("14 SeqPoints (16 requested, 14 non-empty)"),
        "{first}"
    );
}

#[test]
fn one_cost_figure() {
    // The cost line counts what is to be profiled and its share of the run's time, and the
    // JSON's top level says the same.
    let doc = select_json(&["--bins", "8"]);
    let out = Command::cargo_bin("seqpoint")
        .unwrap()
        .args(["select", T1, "--bins", "8"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    let share = 100.0 * doc["profiled_share"].as_f64().unwrap();
    assert_eq!(doc["iterations_to_profile"], 8);
    assert!(
        out.contains(&format!(
            "profile 8 of 450 iterations (56.2x fewer), {share:.1}% of the run's time"
        )),
        "{out}"
    );
    assert!(!out.contains("profiling reduction"), "{out}");
    let reduction = doc["profiling_reduction"].as_f64().unwrap();
    assert!((1.0 / reduction - share / 100.0).abs() < 1e-12);
}

/// The library's default request is `seqpoint select RUN` with no flags: `answer` gives the
/// very document `select` prints (the cheapest plan meeting the default target), and a fixed
/// K with `--samples` the selection and then its plan.
#[test]
fn the_librarys_answer_is_what_select_prints() {
    use seqpoint::output::json::select_json as document;
    use seqpoint::select::naive::Baselines;
    use seqpoint::select::plan::{PlanAsk, PlanRule};
    use seqpoint::{answer, load_run, BinCount, LoadOptions, SelectOptions, SelectRequest};

    let log = load_run(T1, &LoadOptions::default()).unwrap();
    let fixed = SelectRequest::asked(
        SelectOptions {
            bins: BinCount::Fixed(8),
            // As the flags set them: the intervals assume 3 each, and `select` draws no curve.
            samples: 3,
            error_curve: false,
            ..SelectOptions::default()
        },
        PlanAsk {
            samples: Some(3),
            ..PlanAsk::default()
        },
        1.0,
    );
    assert_eq!(fixed.plan, Some(PlanRule::Samples(3)));
    for (request, flags) in [
        (SelectRequest::default(), &[][..]),
        (fixed, &["--bins", "8", "--samples", "3"][..]),
    ] {
        let found = answer(&log, &request).unwrap();
        assert!(found.plan.is_some(), "{flags:?}");
        let baselines = Baselines::beside(&log, &found.selection);
        let want = document(
            &log,
            &found.selection,
            found.plan.as_ref(),
            None,
            &baselines,
        );
        let out = Command::cargo_bin("seqpoint")
            .unwrap()
            .args([&["select", T1, "--format", "json"][..], flags].concat())
            .output()
            .unwrap();
        assert!(out.status.success(), "{flags:?}");
        assert_eq!(
            String::from_utf8(out.stdout).unwrap().trim_end(),
            want.trim_end(),
            "{flags:?}"
        );
    }
}
