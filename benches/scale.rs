//! Scale benchmark: prints one table of load speed and peak memory per format, grouping, the
//! exact DP, auto-K and one TUI-style recompute, on a generated run of ROWS iterations
//! (default 10,000,000; data cached under target/bench-data/).
//!
//!     cargo bench --bench scale
//!     ROWS=1000000 cargo bench --bench scale
//!     BENCH_KMEANS=1 cargo bench --bench scale   # also a k-means recompute (minutes)
//!
//! Each load runs in a child process (this binary, `--child-load`) so its peak resident memory
//! is its own. Times are the best of several runs; CPU time is user + system of all threads.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use seqpoint::binning::{Method, OptimalTable, Solver};
use seqpoint::pick::Pick;
use seqpoint::runlog::MetricColumn;
use seqpoint::select::{run_selection_on, BinCount, SelectOptions, Strata, StrataGroups};
use seqpoint::testkit::scale::{write_log, GenFormat, GenSpec};
use seqpoint::{Cost, KeyGroups, LoadOptions, RunLog};

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

fn peak_rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Best wall time and the CPU time of that run.
fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, f64, T) {
    let mut best: Option<(Duration, f64, T)> = None;
    for _ in 0..runs {
        let (t, c) = (Instant::now(), cpu_seconds());
        let out = f();
        let (wall, cpu) = (t.elapsed(), cpu_seconds() - c);
        if best.as_ref().is_none_or(|b| wall < b.0) {
            best = Some((wall, cpu, out));
        }
    }
    best.expect("at least one run")
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

/// Child mode: load one file (and group it), print
/// `wall_s cpu_s rows peak_bytes group_s groups peak_bytes_after_load`.
fn child(path: &str) {
    let (t, c) = (Instant::now(), cpu_seconds());
    let log = seqpoint::load_run(path, &LoadOptions::default()).expect("bench file loads");
    let (load, load_cpu) = (t.elapsed().as_secs_f64(), cpu_seconds() - c);
    let load_peak = peak_rss_bytes();
    let t = Instant::now();
    let groups = KeyGroups::from_log(&log);
    let group = t.elapsed().as_secs_f64();
    println!(
        "{load} {load_cpu} {} {} {group} {} {load_peak}",
        log.len(),
        peak_rss_bytes(),
        groups.len()
    );
}

fn data_files(rows: u64) -> Vec<(String, PathBuf)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/bench-data")
        .join(rows.to_string());
    std::fs::create_dir_all(&dir).expect("bench data folder");
    let spec = GenSpec {
        rows,
        ..GenSpec::default()
    };
    let mut files = Vec::new();
    for (label, name, format, gz) in [
        ("csv", "run.csv", GenFormat::Csv, false),
        ("tsv", "run.tsv", GenFormat::Tsv, false),
        ("jsonl", "run.jsonl", GenFormat::Jsonl, false),
        ("csv.gz", "run.csv.gz", GenFormat::Csv, true),
        ("jsonl.gz", "run.jsonl.gz", GenFormat::Jsonl, true),
    ] {
        let path = dir.join(name);
        if !path.exists() {
            eprintln!("generating {}", path.display());
            let tmp = path.with_extension("partial");
            let file =
                std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&tmp).unwrap());
            if gz {
                let mut enc = flate2::write::GzEncoder::new(file, flate2::Compression::default());
                write_log(&spec, 0, format, &mut enc).unwrap();
                enc.finish().unwrap();
            } else {
                let mut file = file;
                write_log(&spec, 0, format, &mut file).unwrap();
                std::io::Write::flush(&mut file).unwrap();
            }
            std::fs::rename(&tmp, &path).unwrap();
        }
        files.push((label.to_string(), path));
    }
    files
}

fn warm_page_cache(path: &Path) {
    let _ = std::fs::read(path);
}

/// A copy of the log whose metric is the linear proxy cost: group means then rise with the
/// key, which is the case the divide-and-conquer DP serves.
fn monotone_copy(log: &RunLog) -> RunLog {
    let mut copy = log.clone();
    copy.configs[0].metrics = vec![MetricColumn {
        name: "proxy".into(),
        values: log
            .keys
            .iter()
            .map(|&k| Cost::Linear.of_key(&[k]))
            .collect(),
    }];
    copy.proxy = Some(Cost::Linear);
    copy
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child-load") {
        child(&args[i + 1]);
        return;
    }
    let rows: u64 = std::env::var("ROWS")
        .ok()
        .and_then(|r| r.replace('_', "").parse().ok())
        .unwrap_or(10_000_000);
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let files = data_files(rows);
    let exe = std::env::current_exe().expect("own path");
    println!(
        "seqpoint scale benchmark: {rows} iterations, best of {runs} runs, {} cores",
        seqpoint::parallel::threads()
    );
    println!();
    println!("| input | size MB | load wall | load CPU | MB/s | rows/s | peak RSS MB, loaded | bytes/row | peak RSS MB, with key groups | bytes/row | group wall |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for (label, path) in &files {
        warm_page_cache(path);
        let size = std::fs::metadata(path).unwrap().len() as f64;
        let mut best: Option<Vec<f64>> = None;
        for _ in 0..runs {
            let out = Command::new(&exe)
                .args(["--child-load", path.to_str().unwrap()])
                .output()
                .expect("child runs");
            let fields: Vec<f64> = String::from_utf8_lossy(&out.stdout)
                .split_whitespace()
                .filter_map(|f| f.parse().ok())
                .collect();
            assert_eq!(
                fields.len(),
                7,
                "child said: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            if best.as_ref().is_none_or(|b| fields[0] < b[0]) {
                best = Some(fields);
            }
        }
        let b = best.unwrap();
        println!(
            "| {label} | {:.0} | {:.0} ms | {:.0} ms | {:.0} | {:.1} M | {:.0} | {:.1} | {:.0} | {:.1} | {:.0} ms |",
            size / 1e6,
            b[0] * 1e3,
            b[1] * 1e3,
            size / 1e6 / b[0],
            b[2] / b[0] / 1e6,
            b[6] / 1e6,
            b[6] / b[2],
            b[3] / 1e6,
            b[3] / b[2],
            b[4] * 1e3,
        );
    }
    for (label, path) in files.iter().filter(|(l, _)| l.ends_with(".gz")) {
        let (wall, cpu, bytes) = best_of(runs, || {
            let file = std::fs::File::open(path).unwrap();
            let mut decoder = flate2::read::MultiGzDecoder::new(std::io::BufReader::new(file));
            std::io::copy(&mut decoder, &mut std::io::sink()).unwrap()
        });
        println!(
            "| {label}: decompression alone (one core) | {:.0} | {} | {:.0} ms | {:.0} (of text) | | | | | | |",
            bytes as f64 / 1e6,
            ms(wall),
            cpu * 1e3,
            bytes as f64 / 1e6 / wall.as_secs_f64()
        );
    }
    println!();

    let csv = &files[0].1;
    let log = seqpoint::load_run(csv.to_str().unwrap(), &LoadOptions::default()).unwrap();
    let (group_wall, group_cpu, groups) = best_of(runs, || KeyGroups::from_log(&log));
    let (prep_wall, prep_cpu, prepared) =
        best_of(runs, || StrataGroups::new(&log, Strata::None, 0).unwrap());
    println!("| step ({} key groups) | wall | CPU |", groups.len());
    println!("|---|---|---|");
    println!(
        "| group (KeyGroups::from_log) | {} | {:.0} ms |",
        ms(group_wall),
        group_cpu * 1e3
    );
    println!(
        "| prepare (groups + candidates + totals) | {} | {:.0} ms |",
        ms(prep_wall),
        prep_cpu * 1e3
    );

    // The exact DP over these groups, up to 64 bins.
    let values = groups.binning_values();
    let mut sorted = values.clone();
    sorted.sort_by(f64::total_cmp);
    let monotone = seqpoint::binning::is_monotone(&values);
    for (name, vals, solver) in [
        (
            "DP, monotone means, divide and conquer",
            &sorted,
            Solver::Auto,
        ),
        ("DP, measured means, plain", &values, Solver::Plain),
    ] {
        let (wall, cpu, _) = best_of(runs, || {
            OptimalTable::build(&groups.counts, vals, 64, solver)
        });
        println!(
            "| {name} (K 64, U {}) | {} | {:.0} ms |",
            groups.len(),
            ms(wall),
            cpu * 1e3
        );
    }

    // Auto-K (error target) with the exact DP, on measured times and on a monotone proxy.
    let target = |method| SelectOptions {
        method: Some(method),
        bins: BinCount::Target(1.0),
        max_bins: 64,
        ..SelectOptions::default()
    };
    let p = StrataGroups::new(&log, Strata::None, 0).unwrap();
    let (wall, cpu, sel) = best_of(1, || {
        run_selection_on(&log, &p, &target(Method::Optimal)).unwrap()
    });
    println!(
        "| auto-K, optimal, measured means ({}; DP built) -> K {} | {} | {:.0} ms |",
        if monotone { "monotone" } else { "not monotone" },
        sel.bins(),
        ms(wall),
        cpu * 1e3
    );
    let monotone_log = monotone_copy(&log);
    let mp = StrataGroups::new(&monotone_log, Strata::None, 0).unwrap();
    let (wall, cpu, sel) = best_of(1, || {
        run_selection_on(&monotone_log, &mp, &target(Method::Optimal)).unwrap()
    });
    println!(
        "| auto-K, optimal, monotone proxy (DP built) -> K {} | {} | {:.0} ms |",
        sel.bins(),
        ms(wall),
        cpu * 1e3
    );
    let (wall, cpu, _) = best_of(runs, || {
        run_selection_on(&monotone_log, &mp, &target(Method::Optimal)).unwrap()
    });
    println!(
        "| auto-K again (DP table cached) | {} | {:.0} ms |",
        ms(wall),
        cpu * 1e3
    );
    drop(monotone_log);
    drop(mp);

    // One TUI-style recompute each: K, method, pick changed on a prepared log.
    let fixed = |k, method, pick| SelectOptions {
        method: Some(method),
        pick: Some(pick),
        bins: BinCount::Fixed(k),
        max_bins: 64,
        ..SelectOptions::default()
    };
    let _ = run_selection_on(
        &log,
        &prepared,
        &fixed(16, Method::Optimal, Pick::NearestMean),
    );
    for (name, options) in [
        (
            "recompute: K 16 -> 17 (optimal)",
            fixed(17, Method::Optimal, Pick::NearestMean),
        ),
        (
            "recompute: method -> quantile (K 16)",
            fixed(16, Method::Quantile, Pick::NearestMean),
        ),
        (
            "recompute: pick -> median (quantile, K 16)",
            fixed(16, Method::Quantile, Pick::Median),
        ),
        (
            "recompute: method -> uniform (K 16)",
            fixed(16, Method::Uniform, Pick::NearestMean),
        ),
    ] {
        let (wall, cpu, _) = best_of(runs.max(5), || {
            run_selection_on(&log, &prepared, &options).unwrap()
        });
        println!("| {name} | {} | {:.1} ms |", ms(wall), cpu * 1e3);
    }
    // k-means (linfa) bins each K from scratch: one K alone, and (on request) the whole
    // recompute with its 64-K curve.
    let binner = seqpoint::binning::Binner::new(&groups, Method::Kmeans, 0, 64).unwrap();
    let (wall, cpu, _) = best_of(1, || binner.bins(16).unwrap());
    println!(
        "| k-means bins alone, K 16 | {} | {:.0} ms |",
        ms(wall),
        cpu * 1e3
    );
    if std::env::var("BENCH_KMEANS").is_ok_and(|v| v == "1") {
        let options = fixed(16, Method::Kmeans, Pick::NearestMean);
        let (wall, cpu, _) = best_of(1, || run_selection_on(&log, &prepared, &options).unwrap());
        println!(
            "| recompute: method -> kmeans (K 16) | {} | {:.0} ms |",
            ms(wall),
            cpu * 1e3
        );
    }
}
