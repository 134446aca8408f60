//! `shape`: the run at a glance: iterations, unique keys, how concentrated the keys are, epochs.

use super::{pct, Check, Context, Detail, Finding, Verdict};

/// Below this many iterations the checks have too little to go on.
const SHORT_RUN: usize = 20;
/// How many of the most frequent keys the concentration figure covers.
const TOP: usize = 10;

/// The share of iterations in the `TOP` most frequent key groups.
pub fn top_share(counts: &[u64]) -> f64 {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return 0.0;
    }
    let mut sorted = counts.to_vec();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    sorted.iter().take(TOP).sum::<u64>() as f64 / total as f64
}

/// `shape`: value = iterations. Warns when the run is short (under 20 iterations) or when
/// there are more than half as many unique keys as iterations (most keys occur once or twice,
/// so per-key checks are weak and each SeqPoint's iteration is a single draw).
pub(crate) fn shape(ctx: &Context) -> Finding {
    let n = ctx.log.len();
    let unique = ctx.groups.len();
    let top = top_share(&ctx.groups.counts);
    let epochs = ctx.log.epoch_count();
    let mut details = vec![
        Detail::run("iterations", n as f64),
        Detail::run("unique_keys", unique as f64),
        Detail::run("top10_share", top),
    ];
    if let Some(e) = epochs {
        details.push(Detail::run("epochs", f64::from(e)));
    }
    let figure = format!(
        "{n} iterations, {unique} unique keys ({:.1} iterations per key), the {TOP} most \
         frequent keys cover {} of iterations, {}",
        n as f64 / unique.max(1) as f64,
        pct(top),
        match epochs {
            Some(e) => format!("{e} epochs"),
            None => "no epoch column".to_string(),
        }
    );
    let (verdict, advice) = if n < SHORT_RUN {
        (
            Verdict::Warn,
            format!(
                "only {n} iteration{}: too few to check much; log a longer run",
                if n == 1 { "" } else { "s" }
            ),
        )
    } else if 2 * unique > n {
        (
            Verdict::Warn,
            "most keys occur once or twice: per-key checks are weak and each SeqPoint's \
             iteration is a single draw; log a longer run or profile several iterations per \
             SeqPoint (--samples)"
                .to_string(),
        )
    } else {
        (
            Verdict::Ok,
            "keys recur often enough for per-key checks and for SeqPoints to have alternates"
                .to_string(),
        )
    };
    Finding {
        check: Check::Shape,
        verdict,
        value: Some(n as f64),
        figure,
        advice,
        suggest: None,
        details,
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::log;
    use super::super::*;
    use super::*;

    #[test]
    fn top_share_by_hand() {
        // 12 keys: counts 12, 11, ..., 1 (78 iterations); the top 10 hold 78 - 2 - 1 = 75.
        let counts: Vec<u64> = (1..=12).rev().collect();
        assert!((top_share(&counts) - 75.0 / 78.0).abs() < 1e-12);
        assert_eq!(top_share(&[3, 1]), 1.0);
    }

    #[test]
    fn shape_of_a_small_log() {
        let mut text = String::from("epoch,seq_len,time_ms\n");
        for i in 0..24 {
            text.push_str(&format!("{},{},1\n", i / 12, 10 + i % 3));
        }
        let log = log(&text);
        let f = shape(&Context::new(&log, &ReportOptions::default()));
        assert_eq!((f.verdict, f.value), (Verdict::Ok, Some(24.0)));
        assert!(f
            .figure
            .starts_with("24 iterations, 3 unique keys (8.0 iterations per key)"));
        assert!(f.figure.contains("cover 100.00%") && f.figure.ends_with("2 epochs"));
        // Every key once: warn.
        let log = log_unique();
        let f = shape(&Context::new(&log, &ReportOptions::default()));
        assert_eq!(f.verdict, Verdict::Warn);
        assert!(f.advice.contains("once or twice"));
    }

    fn log_unique() -> crate::RunLog {
        let mut text = String::from("seq_len,time_ms\n");
        for i in 0..30 {
            text.push_str(&format!("{},1\n", 10 + i));
        }
        log(&text)
    }
}
