//! 1-D binning over many distinct keys whose mean cost is noisy (not monotone in the key):
//! prints the time to build the `optimal` table (every K up to 64) per number of distinct
//! keys, for what `optimal` uses on such values (`Solver::Auto`: the exact bounded search up
//! to `EXACT_UP_TO` keys, the blocked fallback past it) and, where it finishes in reasonable
//! time, the plain DP. For the fallback it prints the largest gap over K (how far above the
//! optimum its bins may be, against a proven lower bound) and, where the plain DP ran, the
//! real distance. A last row takes values with no trend at all (pure noise).
//!
//!     cargo bench --bench distinct_keys        # 10^4, 10^5 and 10^6 keys: minutes
//!     KEYS=10000,100000 MAX_K=32 PLAIN_UP_TO=100000 NOISE_ONLY=0 cargo bench --bench distinct_keys
//!     REPEAT=3 cargo bench --bench distinct_keys      # the median of three builds
//!
//! The machine's load average is printed beside the figures: timings on a shared machine
//! are only comparable at similar load.

use std::time::Instant;

use seqpoint::binning::{OptimalTable, Solver, EXACT_UP_TO};
use seqpoint::testkit::distinct::noisy_groups;

fn env_list(name: &str, default: &[usize]) -> Vec<usize> {
    std::env::var(name)
        .ok()
        .map(|v| v.split(',').filter_map(|s| s.trim().parse().ok()).collect())
        .unwrap_or_else(|| default.to_vec())
}

/// CPU seconds (user and system, all threads) this process has used: on a shared machine
/// the figure that does not depend on the other work running.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// Wall and CPU seconds of `work`.
fn timed<T>(work: impl FnOnce() -> T) -> (f64, f64, T) {
    let (started, cpu) = (Instant::now(), cpu_seconds());
    let out = work();
    (started.elapsed().as_secs_f64(), cpu_seconds() - cpu, out)
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn main() {
    let keys = env_list("KEYS", &[10_000, 100_000, 1_000_000]);
    let max_k = env_list("MAX_K", &[64])[0];
    let plain_up_to = env_list("PLAIN_UP_TO", &[10_000])[0];
    let noise = 0.05;
    let repeat = env_list("REPEAT", &[1])[0].max(1);
    println!(
        "exact 1-D DP, K up to {max_k}, noise {noise} (relative), load average {}",
        load_average()
    );
    println!(
        "exact up to {EXACT_UP_TO} keys; the gap is the largest over K, in % of the objective"
    );
    println!(
        "{:>10} {:>20} {:>20} {:>14} {:>10} {:>10}",
        "keys", "auto", "plain", "cost at K max", "gap", "real gap"
    );
    let noise_only = env_list("NOISE_ONLY", &[10_000])[0];
    let cases = keys.iter().map(|&u| (u, false)).chain([(noise_only, true)]);
    for (u, pure) in cases.filter(|c| c.0 > 0) {
        let (counts, mut values) = noisy_groups(u, noise, 1);
        if pure {
            // The same noise around one level: no trend left.
            values.iter_mut().enumerate().for_each(|(g, v)| {
                let l = (g + 1) as f64;
                *v /= 20.0 + 0.05 * l + 2.0e-5 * l * l;
            });
        }
        let mut runs: Vec<(f64, f64, OptimalTable)> = (0..repeat)
            .map(|_| timed(|| OptimalTable::build(&counts, &values, max_k, Solver::Auto)))
            .collect();
        runs.sort_by(|a, b| a.0.total_cmp(&b.0));
        let (wall, cpu, fast) = runs.swap_remove(runs.len() / 2);
        let ks = 1..=max_k.min(u);
        let gap = ks.clone().map(|k| fast.gap(k)).fold(0.0, f64::max);
        let mut real_gap = None;
        let plain = (u <= plain_up_to).then(|| {
            let (wall, cpu, plain) =
                timed(|| OptimalTable::build(&counts, &values, max_k, Solver::Plain));
            for k in ks.clone() {
                let (best, got) = (plain.cost(k), fast.cost(k));
                if fast.is_exact() {
                    assert_eq!(best, got, "the solvers disagree at K {k}");
                }
                assert!(got >= fast.lower_bound(k), "the bound fails at K {k}");
                assert!(
                    fast.lower_bound(k) <= best * (1.0 + 1e-9),
                    "the bound fails at K {k}"
                );
                let real = (got - best) / got;
                real_gap = Some(real_gap.map_or(real, |r: f64| r.max(real)));
            }
            format!("{wall:.3} s ({cpu:.3})")
        });
        let percent = |g: f64| format!("{:.3}%", 100.0 * g);
        println!(
            "{:>10} {:>20} {:>20} {:>14.6e} {:>10} {:>10}{}",
            u,
            format!("{wall:.3} s ({cpu:.3})"),
            plain.unwrap_or_else(|| "-".to_string()),
            fast.cost(max_k),
            if fast.is_exact() {
                "exact".to_string()
            } else {
                percent(gap)
            },
            real_gap.map_or_else(|| "-".to_string(), percent),
            if pure { "  (pure noise)" } else { "" }
        );
    }
    println!("load average after: {}", load_average());
}
