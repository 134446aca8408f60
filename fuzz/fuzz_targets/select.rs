//! Fuzz the whole `select` chain: load a fuzzed CSV run (and, after a `==` line, a fuzzed
//! `--compare` log), then `run_selection` with fuzzed settings. Nothing may panic; a result
//! must have weights summing to N (less the excluded iterations), no excluded SeqPoint, and a
//! `seqpoint/1` document that reads back unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use seqpoint::doc::SelectDoc;
use seqpoint::output::{csv::seqpoints_csv, json::select_document};
use seqpoint::pick::Pick;
use seqpoint::select::{BinCount, Exclusion, SelectOptions, Strata, TargetRule};
use seqpoint::{run_selection, Method};

fn settings(c: [u8; 3]) -> SelectOptions {
    let method = match c[0] & 7 {
        0..=3 => Some(Method::ALL[usize::from(c[0] & 3)]),
        _ => None,
    };
    let pick = match (c[0] >> 3) & 7 {
        p @ 0..=3 => Some(Pick::ALL[usize::from(p)]),
        _ => None,
    };
    let bins = if c[1] & 1 == 0 {
        BinCount::Fixed(usize::from((c[1] >> 1) & 15))
    } else {
        // 0.0 and 25.5 included: an invalid and a loose target.
        BinCount::Target(f64::from(c[1] >> 3) * 0.85)
    };
    let strata = match c[2] & 3 {
        0 | 1 => Strata::None,
        2 => Strata::Epoch,
        _ => Strata::Phases(usize::from((c[2] >> 2) & 3) + 1),
    };
    SelectOptions {
        method,
        pick,
        bins,
        max_bins: usize::from((c[2] >> 4) & 7) + 1,
        target_by: if c[0] & 0x40 == 0 {
            TargetRule::Interval
        } else {
            TargetRule::Measured
        },
        warmup: u64::from(c[2] >> 6) * 3,
        seed: u64::from(c[0] >> 7),
        samples: u64::from(c[1] >> 7) + u64::from(c[2] & 0x80 == 0),
        // A budget's bins (drawn over), on a pattern of the bits `exclusion` leaves alone.
        drawn_over_bins: c[1] & 0x60 == 0x40,
        strata,
        exclude: exclusion(c),
        error_curve: false,
    }
}

/// One in four settings leaves a few iterations out (`--exclude`): from iteration 0 to 7 on,
/// up to 4 of them, which may reach past the run (a clean error) or leave nothing.
fn exclusion(c: [u8; 3]) -> Exclusion {
    if c[1] & 0x60 != 0x60 {
        return Exclusion::default();
    }
    let first = u64::from(c[2] & 7);
    let last = first + u64::from((c[2] >> 3) & 3);
    Exclusion::parse(&[format!("{first}-{last}")]).expect("a well-formed range")
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 4 {
        return;
    }
    let control = data[0];
    let mut options = settings([data[1], data[2], data[3]]);
    options.error_curve = control & 0x80 != 0;
    let body = &data[4..];
    let (run, compare) = match body.windows(4).position(|w| w == b"\n==\n") {
        Some(at) => (&body[..at + 1], Some(&body[at + 4..])),
        None => (body, None),
    };
    let dir = std::env::temp_dir().join(format!("seqpoint-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let run_path = dir.join("run.csv");
    std::fs::write(&run_path, run).expect("temp file");
    let mut load = seqpoint_fuzz::options_from(control);
    if let Some(compare) = compare {
        let compare_path = dir.join("compare.csv");
        std::fs::write(&compare_path, compare).expect("temp file");
        load.compare = Some(compare_path.to_str().expect("utf-8").to_string());
    }
    let run_path = run_path.to_str().expect("utf-8").to_string();
    let log = match seqpoint::load_run(&run_path, &load) {
        Ok(log) => log,
        Err(err) => {
            let message = err.to_string();
            assert!(!message.chars().any(char::is_control), "{message:?}");
            return;
        }
    };
    seqpoint_fuzz::check_log(&log, &load);
    let selection = match run_selection(&log, &options) {
        Ok(selection) => selection,
        Err(err) => {
            let message = err.to_string();
            assert!(!message.is_empty() && !message.chars().any(char::is_control));
            return;
        }
    };
    // The iterations an exclusion leaves out are in no weight.
    let n = log.len() as u64 - options.exclude.excluded_rows(&log);
    assert_eq!(
        selection.seqpoints.iter().map(|s| s.weight).sum::<u64>(),
        n,
        "weights sum to N"
    );
    for sp in &selection.seqpoints {
        assert!(!options.exclude.excludes_row(&log, sp.row), "an excluded SeqPoint");
    }
    for sp in &selection.seqpoints {
        assert_eq!(log.iterations.get(sp.row), sp.iteration);
        assert_eq!(log.key(sp.row), &sp.key[..]);
    }
    let doc = select_document(&log, &selection, None);
    let text = serde_json::to_string_pretty(&doc).expect("document serialises");
    let back: SelectDoc = serde_json::from_str(&text).expect("written JSON reads back");
    assert_eq!(back, doc, "JSON round trip changed the document");
    let _ = seqpoints_csv(&log, &selection);
    let _ = seqpoint::output::table::selection_table(&log, &selection);
});
