//! `warmup` and `outliers`: iterations far from their key group's median, by a robust rule
//! (median + `mad_factor` pooled MADs), either leading the run (warm-up) or anywhere after it.

use crate::options::{Surface, WARMUP};
use std::collections::BTreeMap;

use super::{pct, Check, Context, Detail, Finding, Series, Verdict};

/// Key groups smaller than this are not judged: a median of 3 is the smallest that one
/// aberrant value cannot drag past the others (with 2, either value could be the odd one).
pub const JUDGED_MIN: u64 = 3;

/// Each row's relative deviation from its key group's median, `r_i = x_i / med_g(i) - 1`,
/// for rows whose group has at least `JUDGED_MIN` iterations and a positive median; None
/// for the rows that cannot be judged.
pub fn deviations(
    values: &[f64],
    group_of_row: &[u32],
    counts: &[u64],
    medians: &[f64],
) -> Vec<Option<f64>> {
    values
        .iter()
        .zip(group_of_row)
        .map(|(&x, &g)| {
            let (count, median) = (counts[g as usize], medians[g as usize]);
            (count >= JUDGED_MIN && median > 0.0).then(|| x / median - 1.0)
        })
        .collect()
}

/// The pooled relative MAD: the median of `|r_i|` over judged rows. Pooled over the whole run
/// because a group of 3 to 5 iterations gives too unstable a MAD of its own (two equal values
/// make it 0). None when no row is judged.
pub fn pooled_mad(deviations: &[Option<f64>]) -> Option<f64> {
    let mut abs: Vec<f64> = deviations.iter().flatten().map(|r| r.abs()).collect();
    super::median(&mut abs)
}

/// Warm-up length: the largest `n` such that row `n - 1` is far above its key's median
/// (`r > limit`) and at least half of the judged rows among the first `n` are. Gaps are
/// allowed (a judged row in between that is not slow), an isolated slow row later is not
/// warm-up. 0 when the first judged rows are ordinary.
pub fn warmup_length(deviations: &[Option<f64>], limit: f64) -> usize {
    let mut judged = 0usize;
    let mut slow = 0usize;
    let mut length = 0;
    for (row, r) in deviations.iter().enumerate() {
        let Some(r) = r else { continue };
        judged += 1;
        if *r > limit {
            slow += 1;
            if 2 * slow >= judged {
                length = row + 1;
            }
        }
    }
    length
}

/// The "far" threshold on `|r|`: `mad_factor` pooled MADs (a hair above 0 when the MAD is 0,
/// so that exact ties with the median are never far).
fn limit(ctx: &Context, mad: f64) -> f64 {
    ctx.options.mad_factor * mad + 1e-12
}

struct Judged<'a> {
    series: Series<'a>,
    deviations: Vec<Option<f64>>,
    mad: f64,
}

fn judged_series<'a>(ctx: &Context<'a>) -> Vec<Judged<'a>> {
    ctx.series
        .iter()
        .filter_map(|s| {
            let medians = ctx.medians(s);
            let deviations = deviations(s.values, &ctx.group_of_row, &ctx.groups.counts, medians);
            let mad = pooled_mad(&deviations)?;
            Some(Judged {
                series: *s,
                deviations,
                mad,
            })
        })
        .collect()
}

fn not_judged(check: Check) -> Finding {
    Finding {
        check,
        verdict: Verdict::Warn,
        value: None,
        figure: format!(
            "not measurable: no key occurs {JUDGED_MIN} or more times with a positive median"
        ),
        advice: "log a longer run (or several epochs) so keys recur; until then, inspect the \
                 first iterations by hand"
            .to_string(),
        suggest: None,
        details: Vec::new(),
    }
}

/// `warmup`: value = the suggested `--warmup N` (rows), the largest warm-up length over
/// configurations and metrics; warns when it is above 0. The figure also says how the first
/// iteration compares with its key's median, judged or not.
pub(crate) fn warmup(ctx: &Context) -> Finding {
    let judged = judged_series(ctx);
    if judged.is_empty() {
        return not_judged(Check::Warmup);
    }
    let mut details = Vec::new();
    let mut first = Vec::new();
    let mut length = 0;
    for j in &judged {
        let limit = limit(ctx, j.mad);
        let n = warmup_length(&j.deviations, limit);
        length = length.max(n);
        details.push(Detail::of(&j.series, "warmup", n as f64));
        details.push(Detail::of(&j.series, "pooled_mad", j.mad));
        if let Some(r) = j.deviations[0] {
            details.push(Detail::of(&j.series, "first_iteration_ratio", 1.0 + r));
            first.push(format!("{:.3} ({})", 1.0 + r, j.series.label()));
        }
    }
    let factor = ctx.options.mad_factor;
    let rule = format!(
        "far = more than {factor} pooled MADs above it: {} on {}",
        pct(limit(ctx, judged[0].mad)),
        judged[0].series.label()
    );
    let first_text = if first.is_empty() {
        format!(
            "iteration {} not judged (its key occurs fewer than {JUDGED_MIN} times)",
            ctx.log.iterations.get(0)
        )
    } else {
        format!(
            "iteration {} over its key's median: {}",
            ctx.log.iterations.get(0),
            first.join(", ")
        )
    };
    if length == 0 {
        return Finding {
            check: Check::Warmup,
            verdict: Verdict::Ok,
            value: Some(0.0),
            figure: format!(
                "no leading iteration is far above its key's median ({rule}); {first_text}"
            ),
            advice: "no warm-up to skip: any iteration may be a SeqPoint".to_string(),
            suggest: None,
            details,
        };
    }
    let slowest = judged
        .iter()
        .flat_map(|j| {
            j.deviations[..length]
                .iter()
                .enumerate()
                .filter_map(move |(row, r)| r.map(|r| (r, row, j)))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .expect("a warm-up row is judged");
    // As `select --warmup` counts: rows of the whole run, excluded ones included.
    let flag = ctx.warmup_flag(length);
    Finding {
        check: Check::Warmup,
        verdict: Verdict::Warn,
        value: Some(flag as f64),
        figure: format!(
            "the first {length} iterations run slow: iteration {} is {:.2}x its key's median \
             (key {}, {}) ({rule}); {first_text}",
            ctx.log.iterations.get(slowest.1),
            1.0 + slowest.0,
            ctx.key_text(ctx.group_of_row[slowest.1] as usize),
            slowest.2.series.label()
        ),
        advice: format!(
            "pass --warmup {flag} so that no SeqPoint is a warm-up iteration (they still \
             count in the totals)"
        ),
        suggest: Some(WARMUP.typed(Surface::CommandLine, &flag.to_string())),
        details,
    }
}

/// When a slow window starts the run, the warm-up found is its first part: `--warmup` would
/// only keep those iterations from being picked while the whole window still counts in every
/// total, so the warm-up finding points at the window instead of suggesting it.
pub(crate) fn within_slow_start(ctx: &Context, warmup: &mut Finding, windows: &[(usize, usize)]) {
    let Some(&(_, last)) = windows.iter().find(|w| w.0 == 0) else {
        return;
    };
    if warmup.verdict != Verdict::Warn || warmup.value.is_none() {
        return;
    }
    let flag = warmup.value.unwrap_or(0.0) as usize;
    let length = ctx.checked_rows_before(flag);
    let iterations = &ctx.log.iterations;
    warmup.advice = format!(
        "the first {length} iterations are the start of a slow window (iterations {}-{}, see \
         neighbours): --warmup {flag} would only keep them from being picked, while the \
         whole window still counts in every total; deal with the window instead",
        iterations.get(0),
        iterations.get(last)
    );
    warmup.suggest = None;
}

/// How many iterations the `outliers` figure lists by number.
const WHERE_SHOWN: usize = 8;

/// `outliers`: judged rows at or after the warm-up and outside slow windows whose `|r|` exceeds `mad_factor` pooled
/// MADs, on any configuration or metric. value = how many distinct iterations. Warns when the
/// outliers' excess over their key medians, `sum (x_i - med_g)`, is more than
/// `outlier_excess_max` of the metric's total on some configuration and metric: that is the
/// part of the total a SeqPoint chosen near its key's median cannot show.
pub(crate) fn outliers(ctx: &Context, warmup: usize, windows: &[(usize, usize)]) -> Finding {
    let in_window = |row: usize| windows.iter().any(|&(a, b)| (a..=b).contains(&row));
    let judged = judged_series(ctx);
    if judged.is_empty() {
        return not_judged(Check::Outliers);
    }
    let mut rows: BTreeMap<usize, ()> = BTreeMap::new();
    let mut worst: Option<(f64, usize, usize)> = None;
    let mut details = Vec::new();
    let mut largest_excess: f64 = 0.0;
    let mut excess_text = Vec::new();
    for (index, j) in judged.iter().enumerate() {
        let limit = limit(ctx, j.mad);
        let medians = ctx.medians(&j.series);
        let mut count = 0;
        let mut excess = 0.0;
        for (row, r) in j.deviations.iter().enumerate().skip(warmup) {
            let Some(r) = *r else { continue };
            if in_window(row) {
                continue;
            }
            if r.abs() <= limit {
                continue;
            }
            count += 1;
            rows.insert(row, ());
            excess += j.series.values[row] - medians[ctx.group_of_row[row] as usize];
            if worst.is_none_or(|w| r.abs() > w.0.abs()) {
                worst = Some((r, row, index));
            }
        }
        let total: f64 = j.series.values.iter().sum();
        let share = if total > 0.0 { excess / total } else { 0.0 };
        largest_excess = largest_excess.max(share.abs());
        details.push(Detail::of(&j.series, "outliers", f64::from(count)));
        details.push(Detail::of(&j.series, "excess_share", share));
        excess_text.push(format!("{} on {}", pct(share), j.series.label()));
    }
    let count = rows.len();
    let Some((r, row, index)) = worst else {
        return Finding {
            check: Check::Outliers,
            verdict: Verdict::Ok,
            value: Some(0.0),
            figure: format!(
                "no iteration is more than {} pooled MADs from its key's median",
                ctx.options.mad_factor
            ),
            advice: "nothing to clean: every judged iteration is typical of its key".to_string(),
            suggest: None,
            details,
        };
    };
    let shown: Vec<String> = rows
        .keys()
        .take(WHERE_SHOWN)
        .map(|&r| ctx.log.iterations.get(r).to_string())
        .collect();
    let mut place = format!(
        "at iterations {}{}",
        shown.join(", "),
        if count > WHERE_SHOWN { ", ..." } else { "" }
    );
    if let Some(epochs) = &ctx.log.epochs {
        let mut per_epoch: BTreeMap<u32, usize> = BTreeMap::new();
        for &r in rows.keys() {
            *per_epoch.entry(epochs[r]).or_default() += 1;
        }
        let text: Vec<String> = per_epoch
            .iter()
            .map(|(e, n)| format!("epoch {e}: {n}"))
            .collect();
        place.push_str(&format!(" ({})", text.join(", ")));
    }
    let judged_rows = judged[0]
        .deviations
        .iter()
        .enumerate()
        .skip(warmup)
        .filter(|&(row, r)| r.is_some() && !in_window(row))
        .count();
    let figure = format!(
        "{count} of {judged_rows} judged iterations are more than {} pooled MADs from their \
         key's median, {place}; worst: iteration {} at {:.2}x its key's median (key {}, {}); \
         their excess over the key medians, as a share of the total: {}",
        ctx.options.mad_factor,
        ctx.log.iterations.get(row),
        1.0 + r,
        ctx.key_text(ctx.group_of_row[row] as usize),
        judged[index].series.label(),
        excess_text.join(", ")
    );
    let verdict = Verdict::warn_if(largest_excess > ctx.options.outlier_excess_max);
    let advice = if verdict == Verdict::Warn {
        format!(
            "outliers carry {} of the total that SeqPoints picked near their key's median will \
             not show: look at those iterations (throttling, checkpoints, data-loading stalls) \
             and expect the projection to fall short by about that much",
            pct(largest_excess)
        )
    } else {
        format!(
            "they shift the total by at most {}: SeqPoints are picked near their key's median, \
             so the outliers do not distort the choice",
            pct(largest_excess)
        )
    };
    Finding {
        check: Check::Outliers,
        verdict,
        value: Some(count as f64),
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
    fn deviations_and_pooled_mad_by_hand() {
        // Key 10: 10, 11, 9, 20 -> median 10.5; key 20: 20, 20 (2 rows: not judged).
        let log = log("seq_len,time_ms\n10,20\n10,11\n20,20\n10,9\n10,10\n20,20\n");
        let ctx = Context::new(&log, &ReportOptions::default());
        let d = deviations(
            ctx.series[0].values,
            &ctx.group_of_row,
            &ctx.groups.counts,
            ctx.medians(&ctx.series[0]),
        );
        let expect = [
            Some(20.0 / 10.5 - 1.0),
            Some(11.0 / 10.5 - 1.0),
            None,
            Some(9.0 / 10.5 - 1.0),
            Some(10.0 / 10.5 - 1.0),
            None,
        ];
        for (a, b) in d.iter().zip(expect) {
            assert_eq!(a.is_some(), b.is_some());
            if let (Some(a), Some(b)) = (a, b) {
                assert!((a - b).abs() < 1e-12);
            }
        }
        // |r| = 0.905, 0.0476, 0.143, 0.0476: median = (0.0476 + 0.143) / 2 = 1 / 10.5.
        assert!((pooled_mad(&d).unwrap() - 1.0 / 10.5).abs() < 1e-12);
    }

    #[test]
    fn warmup_length_rule_by_hand() {
        let d = |v: &[Option<f64>]| v.to_vec();
        // Slow, slow, ordinary, slow, then ordinary: prefix 4 has 3 slow of 4 judged.
        let rows = d(&[
            Some(1.0),
            Some(1.0),
            Some(0.0),
            Some(1.0),
            Some(0.0),
            Some(0.0),
        ]);
        assert_eq!(warmup_length(&rows, 0.5), 4);
        // Unjudged rows neither count nor break the run.
        let rows = d(&[Some(1.0), None, None, Some(1.0), Some(0.0)]);
        assert_eq!(warmup_length(&rows, 0.5), 4);
        // A late slow row is not warm-up: 1 slow of 5 judged.
        let rows = d(&[Some(0.0), Some(0.0), Some(0.0), Some(0.0), Some(1.0)]);
        assert_eq!(warmup_length(&rows, 0.5), 0);
        // Far below the median is not warm-up.
        assert_eq!(warmup_length(&d(&[Some(-1.0), Some(0.0)]), 0.5), 0);
    }

    /// Keys 10 and 20, four iterations each, 1% apart, except iteration 0 (cold start, 2x)
    /// and iteration 6 (a stall, 1.5x).
    const COLD: &str =
        "seq_len,time_ms\n10,200\n20,200\n10,101\n20,202\n10,99\n20,198\n10,150\n20,200\n10,100\n";

    #[test]
    fn warmup_finds_the_cold_start_and_suggests_skipping_it() {
        let log = log(COLD);
        let f = warmup(&Context::new(&log, &ReportOptions::default()));
        // Key 10: 200, 101, 99, 150, 100 -> median 101: r0 = 0.980. Key 20: median 200.
        // |r| over 9 rows: .980, 0, 0, .01, .0198, .01, .485, 0, .0099 -> pooled MAD 0.01,
        // so "far" is 5% above the median: only iteration 0 (and the lone iteration 6).
        assert_eq!(f.verdict, Verdict::Warn);
        assert_eq!(f.value, Some(1.0));
        assert_eq!(f.suggest.as_deref(), Some("--warmup 1"));
        assert!(f.figure.contains("iteration 0 is 1.98x"), "{}", f.figure);
    }

    #[test]
    fn with_excluded_iterations_the_warmup_counts_rows_of_the_whole_run() {
        // COLD after three rows that `--exclude 0-2` leaves out: the cold start is row 3 of
        // the run, so `select --warmup 4 --exclude 0-2` is what skips it.
        let text = COLD.replacen(
            "seq_len,time_ms\n",
            "seq_len,time_ms\n10,100\n20,200\n10,100\n",
            1,
        );
        let log = log(&text);
        let options = ReportOptions {
            exclude: crate::select::Exclusion::parse(&["0-2"]).unwrap(),
            ..ReportOptions::default()
        };
        let f = &crate::report::run_checks(&log, &options)[2];
        assert_eq!(f.check, Check::Warmup);
        assert_eq!(f.value, Some(4.0));
        assert_eq!(f.suggest.as_deref(), Some("--warmup 4"));
        assert!(f.advice.contains("pass --warmup 4 "), "{}", f.advice);
        assert!(f.figure.contains("iteration 3 is 1.98x"), "{}", f.figure);
    }

    #[test]
    fn outliers_after_the_warmup_by_hand() {
        let log = log(COLD);
        let ctx = Context::new(&log, &ReportOptions::default());
        let f = outliers(&ctx, 1, &[]);
        // Iteration 6 (150 vs median 101) is the only outlier after warm-up; its excess 49 is
        // 49 / 1450 = 3.38% of the total: above 1%.
        assert_eq!(f.value, Some(1.0));
        assert_eq!(f.verdict, Verdict::Warn);
        let share = f.details.iter().find(|d| d.name == "excess_share").unwrap();
        assert!((share.value - 49.0 / 1450.0).abs() < 1e-12);
        assert!(f.figure.contains("at iterations 6"), "{}", f.figure);
        assert!(f.figure.contains("1.49x"), "{}", f.figure);
        // Without the warm-up, iteration 0 counts too.
        assert_eq!(outliers(&ctx, 0, &[]).value, Some(2.0));
    }

    #[test]
    fn clean_runs_have_no_warmup_or_outliers() {
        let log = log("seq_len,time_ms\n1,10\n1,10.1\n1,9.9\n2,20\n2,20.2\n2,19.8\n");
        let ctx = Context::new(&log, &ReportOptions::default());
        assert_eq!(warmup(&ctx).verdict, Verdict::Ok);
        let f = outliers(&ctx, 0, &[]);
        assert_eq!((f.verdict, f.value), (Verdict::Ok, Some(0.0)));
    }
}
