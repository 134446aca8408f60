//! `explained` (share of a metric's variance the key explains, and for two lengths whether one
//! alone would do) and `noise` (spread of one iteration's metric within its key group).

use crate::options::{Surface, KEY, SAMPLES};
use std::collections::HashMap;

use super::drift::DriftStrata;
use super::{median, pct, robust, Context, Detail, Finding, Series, Verdict};
use crate::groups::Moments;

/// How much of a metric's variance a grouping of the rows explains.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Explained {
    /// `R^2 = 1 - SS_within / SS_total`, where `SS_total = sum_i (x_i - xbar)^2` and
    /// `SS_within = sum_i (x_i - xbar_g(i))^2` (equivalently between-group over total sum of
    /// squares). 1 when `SS_total` is 0: there is nothing to explain.
    pub share: f64,
    /// `1 - (SS_within / (N - G)) / (SS_total / (N - 1))` for N rows in G groups: the same
    /// share with each group charged one degree of freedom, so a key with many one-iteration
    /// groups gets no credit for "explaining" noise it merely memorises. None when N == G.
    pub adjusted: Option<f64>,
    pub groups: usize,
}

/// The share of the variance of `values` explained by the grouping `group_of_row` (dense group
/// ids `0..groups`). See `Explained` for the definitions.
pub fn explained(values: &[f64], group_of_row: &[u32], groups: usize) -> Explained {
    let n = values.len();
    let mut sums = vec![0.0; groups];
    let mut counts = vec![0u64; groups];
    for (&x, &g) in values.iter().zip(group_of_row) {
        sums[g as usize] += x;
        counts[g as usize] += 1;
    }
    let means: Vec<f64> = sums
        .iter()
        .zip(&counts)
        .map(|(s, &c)| if c > 0 { s / c as f64 } else { 0.0 })
        .collect();
    let mean = sums.iter().sum::<f64>() / n.max(1) as f64;
    let mut total = 0.0;
    let mut within = 0.0;
    for (&x, &g) in values.iter().zip(group_of_row) {
        total += (x - mean).powi(2);
        within += (x - means[g as usize]).powi(2);
    }
    let used = counts.iter().filter(|&&c| c > 0).count();
    if total == 0.0 {
        return Explained {
            share: 1.0,
            adjusted: (n > used).then_some(1.0),
            groups: used,
        };
    }
    Explained {
        share: 1.0 - within / total,
        adjusted: (n > used && n > 1)
            .then(|| 1.0 - (within / (n - used) as f64) / (total / (n - 1) as f64)),
        groups: used,
    }
}

/// Dense group ids of the rows by one length of a two-length key.
fn groups_by_axis(ctx: &Context, axis: usize) -> (Vec<u32>, usize) {
    let mut id_of: HashMap<u32, u32> = HashMap::new();
    let ids = (0..ctx.log.len())
        .map(|r| {
            let next = id_of.len() as u32;
            *id_of.entry(ctx.log.key(r)[axis]).or_insert(next)
        })
        .collect();
    (ids, id_of.len())
}

/// The adjusted share when it exists, else the plain share (every key occurs once).
fn judged(e: &Explained) -> f64 {
    e.adjusted.unwrap_or(e.share)
}

/// `explained`: value = the smallest share over configurations and metrics. Warns when that
/// share, or its adjusted form, is below `explained_min`. For a two-length key, also each
/// length alone; one length "would do" when, on every configuration and metric, its adjusted
/// share is within `alone_tolerance` of both lengths' adjusted share.
pub(crate) fn explained_check(ctx: &Context) -> Finding {
    let key = ctx.key_name();
    let both: Vec<Explained> = ctx
        .series
        .iter()
        .map(|s| explained(s.values, &ctx.group_of_row, ctx.groups.len()))
        .collect();
    let mut details = Vec::new();
    let mut parts = Vec::new();
    for (s, e) in ctx.series.iter().zip(&both) {
        details.push(Detail::of(s, "explained", e.share));
        if let Some(a) = e.adjusted {
            details.push(Detail::of(s, "explained_adjusted", a));
        }
        parts.push(format!(
            "{} of {}{}",
            pct(e.share),
            s.label(),
            e.adjusted
                .map_or(String::new(), |a| format!(" (adjusted {})", pct(a)))
        ));
    }
    let lowest = both.iter().map(|e| e.share).fold(f64::INFINITY, f64::min);
    let lowest_judged = both.iter().map(judged).fold(f64::INFINITY, f64::min);
    let verdict = Verdict::warn_if(lowest.min(lowest_judged) < ctx.options.explained_min);
    let mut figure = format!(
        "{key} explains {} of the variance ({} key groups)",
        parts.join(", "),
        ctx.groups.len()
    );
    let mut advice = if verdict == Verdict::Ok {
        format!("{key} decides the metric here: SeqPoints binned by {key} can stand for the run")
    } else {
        format!(
            "{key} leaves {} of the variance unexplained: something else drives the cost \
             (training phase, data content, system noise); see noise and drift, and consider \
             --strata or several --samples per SeqPoint",
            pct(1.0 - lowest.min(lowest_judged))
        )
    };
    let mut suggest = None;

    if ctx.log.dims() == 2 {
        let mut alone_worst = Vec::new();
        let mut alone_text = Vec::new();
        for axis in 0..2 {
            let name = &ctx.log.key_names[axis];
            let (ids, count) = groups_by_axis(ctx, axis);
            let alone: Vec<Explained> = ctx
                .series
                .iter()
                .map(|s| explained(s.values, &ids, count))
                .collect();
            // Worst shortfall of this length against both, over configurations and metrics.
            let shortfall = alone
                .iter()
                .zip(&both)
                .map(|(a, b)| judged(b) - judged(a))
                .fold(f64::NEG_INFINITY, f64::max);
            for (s, a) in ctx.series.iter().zip(&alone) {
                details.push(Detail::of(s, format!("explained_by_{name}"), a.share));
                if let Some(adj) = a.adjusted {
                    details.push(Detail::of(s, format!("explained_adjusted_by_{name}"), adj));
                }
            }
            let first = &alone[0];
            alone_text.push(format!(
                "{name} alone {} (adjusted {}, {} groups)",
                pct(first.share),
                pct(judged(first)),
                first.groups
            ));
            alone_worst.push((shortfall, name.clone()));
        }
        figure.push_str(&format!(
            "; on {}: {}",
            ctx.series[0].label(),
            alone_text.join(", ")
        ));
        let best = alone_worst
            .iter()
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .expect("two lengths");
        details.push(Detail::run(
            "alone_would_do",
            f64::from(u8::from(best.0 <= ctx.options.alone_tolerance)),
        ));
        if best.0 <= ctx.options.alone_tolerance {
            advice.push_str(&format!(
                "; {} alone would do (its adjusted share is within {} of both lengths'): \
                 --key {} lets select bin one length exactly",
                best.1,
                pct(best.0.max(0.0)),
                best.1
            ));
            suggest = Some(KEY.typed(Surface::CommandLine, &best.1.to_string()));
        } else {
            advice.push_str(&format!(
                "; neither length alone would do ({} alone falls {} short of both): keep {}",
                best.1,
                pct(best.0),
                KEY.typed(Surface::CommandLine, &key.to_string())
            ));
        }
    }
    Finding {
        check: super::Check::Explained,
        verdict,
        value: Some(lowest),
        figure,
        advice,
        suggest,
        details,
    }
}

/// Within-key-group spread of one metric.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Noise {
    /// Median over key groups of `CV_g = s_g / mean_g` (`s_g` the sample standard deviation,
    /// n - 1 denominator), over groups with at least 2 iterations and a positive mean; each
    /// group counts once, whatever its size.
    pub median_cv: f64,
    /// The largest `CV_g`, and its group.
    pub worst_cv: f64,
    pub worst_group: usize,
    /// Groups that entered the median.
    pub groups: usize,
}

/// `Noise` of one metric from its per-group moments; None when no group has 2 iterations.
pub fn noise(moments: &[Moments]) -> Option<Noise> {
    let cvs: Vec<(usize, f64)> = moments
        .iter()
        .enumerate()
        .filter(|(_, m)| m.count >= 2 && m.mean > 0.0)
        .map(|(g, m)| (g, m.sample_variance().sqrt() / m.mean))
        .collect();
    let (worst_group, worst_cv) = cvs
        .iter()
        .copied()
        .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))?;
    let mut values: Vec<f64> = cvs.iter().map(|c| c.1).collect();
    Some(Noise {
        median_cv: median(&mut values)?,
        worst_cv,
        worst_group,
        groups: cvs.len(),
    })
}

/// `noise`: value = the largest median CV over configurations and metrics; warns above
/// `noise_max_cv`. The figure adds the pooled relative MAD (robust to heavy tails).
pub(crate) fn noise_check(ctx: &Context) -> Finding {
    let strata = DriftStrata::of(ctx.log, ctx.options.phases);
    let by = strata.unit();
    let mut details = Vec::new();
    let mut parts = Vec::new();
    let mut headline: Option<f64> = None;
    // The largest within-(key, stratum) median CV; None when some series has too few cells.
    let mut within_headline: Option<f64> = Some(0.0);
    for s in &ctx.series {
        let moments = &ctx.groups.moments[s.config_index][s.metric_index];
        let Some(n) = noise(moments) else { continue };
        let mad = pooled_mad_of(ctx, s);
        details.push(Detail::of(s, "median_cv", n.median_cv));
        details.push(Detail::of(s, "worst_cv", n.worst_cv));
        if let Some(mad) = mad {
            details.push(Detail::of(s, "pooled_mad", mad));
        }
        parts.push(format!(
            "{}: median CV {}, worst {} (key {}, {} iterations){}",
            s.label(),
            pct(n.median_cv),
            pct(n.worst_cv),
            ctx.key_text(n.worst_group),
            moments[n.worst_group].count,
            mad.map_or(String::new(), |m| format!(
                ", median absolute deviation {} of the key median",
                pct(m)
            ))
        ));
        headline = Some(headline.map_or(n.median_cv, |h: f64| h.max(n.median_cv)));
        let within = (strata.len() > 1)
            .then(|| within_stratum_cv(s.values, &ctx.group_of_row, &strata.of_row))
            .flatten();
        match within {
            Some(cv) => {
                details.push(Detail::of(s, format!("median_cv_within_{by}"), cv));
                parts.push(format!("within key and {by}: median CV {}", pct(cv)));
                within_headline = within_headline.map(|h| h.max(cv));
            }
            None => within_headline = None,
        }
    }
    let Some(value) = headline else {
        return Finding {
            check: super::Check::Noise,
            verdict: Verdict::Warn,
            value: None,
            figure: "not measurable: no key occurs twice with a positive mean".to_string(),
            advice: "with every key occurring once, nothing shows how much one iteration varies: \
                     profile several iterations per SeqPoint (--samples) or log a longer run"
                .to_string(),
            suggest: None,
            details,
        };
    };
    let limit = ctx.options.noise_max_cv;
    // The spread is read as drift only where the drift check finds one beyond noise: with a
    // few iterations per key and stratum the within-stratum CV reads low (the median of
    // two-iteration spreads is about 0.67 of the noise), and a noisy run without drift was
    // told `--strata` (11 of 20 runs at 6% noise).
    let (verdict, advice, suggest) = if value > limit
        && within_headline.is_some_and(|w| w <= limit)
        && super::drift::drifts_beyond_noise(ctx, &strata)
    {
        (
            Verdict::Warn,
            format!(
                "one iteration is a poor draw of its key's cost over the whole run (median CV {}), \
                 but within one {by} the spread is only {}: the spread is drift over training \
                 (see drift), which {} removes; more samples per SeqPoint would not",
                pct(value),
                pct(within_headline.unwrap_or(0.0)),
                strata.flag
            ),
            Some(strata.flag.clone()),
        )
    } else if value > limit {
        let samples = ((value / limit).powi(2)).ceil() as u64;
        (
            Verdict::Warn,
            format!(
                "one iteration is a noisy draw of its key's cost (median CV {}): profile about \
                 {samples} iterations per SeqPoint to bring that to {}",
                pct(value),
                pct(limit)
            ),
            Some(SAMPLES.typed(Surface::CommandLine, &samples.to_string())),
        )
    } else {
        (
            Verdict::Ok,
            format!(
                "one profiled iteration per SeqPoint carries about {} of noise; the projection's \
                 interval accounts for it",
                pct(value)
            ),
            None,
        )
    };
    Finding {
        check: super::Check::Noise,
        verdict,
        value: Some(value),
        figure: parts.join("; "),
        advice,
        suggest,
        details,
    }
}

/// Fewest (key, stratum) cells with 2 or more iterations for a within-stratum median CV.
const MIN_CELLS: usize = 5;

/// Median over (key group, stratum) cells of `s / mean` (sample sd, n - 1), over cells with at
/// least 2 iterations and a positive mean: the noise left once drift between strata is set
/// aside. None with fewer than `MIN_CELLS` such cells.
pub fn within_stratum_cv(
    values: &[f64],
    group_of_row: &[u32],
    stratum_of_row: &[u32],
) -> Option<f64> {
    // Welford per cell: (count, mean, m2).
    let mut cells: HashMap<(u32, u32), (u64, f64, f64)> = HashMap::new();
    for ((&x, &g), &s) in values.iter().zip(group_of_row).zip(stratum_of_row) {
        let cell = cells.entry((g, s)).or_insert((0, 0.0, 0.0));
        cell.0 += 1;
        let delta = x - cell.1;
        cell.1 += delta / cell.0 as f64;
        cell.2 += delta * (x - cell.1);
    }
    let mut cvs: Vec<f64> = cells
        .values()
        .filter(|c| c.0 >= 2 && c.1 > 0.0)
        .map(|c| (c.2 / (c.0 - 1) as f64).sqrt() / c.1)
        .collect();
    if cvs.len() < MIN_CELLS {
        return None;
    }
    median(&mut cvs)
}

fn pooled_mad_of(ctx: &Context, s: &Series) -> Option<f64> {
    let medians = ctx.medians(s);
    let counts = &ctx.groups.counts;
    robust::pooled_mad(&robust::deviations(
        s.values,
        &ctx.group_of_row,
        counts,
        medians,
    ))
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{log, log_with};
    use super::super::*;
    use super::*;
    use crate::runlog::LoadOptions;

    #[test]
    fn explained_by_hand() {
        // Groups a = {1, 3}, b = {5, 7}: mean 4; SS_total = 9 + 1 + 1 + 9 = 20;
        // SS_within = 1 + 1 + 1 + 1 = 4: R^2 = 0.8; adjusted = 1 - (4/2) / (20/3) = 0.7.
        let e = explained(&[1.0, 3.0, 5.0, 7.0], &[0, 0, 1, 1], 2);
        assert!((e.share - 0.8).abs() < 1e-12);
        assert!((e.adjusted.unwrap() - 0.7).abs() < 1e-12);
        // Every row its own group: R^2 = 1 but nothing to adjust with.
        let e = explained(&[1.0, 3.0], &[0, 1], 2);
        assert_eq!((e.share, e.adjusted), (1.0, None));
        // Constant metric: nothing to explain.
        assert_eq!(explained(&[2.0, 2.0, 2.0], &[0, 0, 1], 2).share, 1.0);
    }

    #[test]
    fn explained_check_on_a_small_log() {
        // Key 1: 1, 3; key 2: 5, 7 (as above): share 0.8 < 0.9 warns.
        let log = log("seq_len,time_ms\n1,1\n1,3\n2,5\n2,7\n");
        let f = explained_check(&Context::new(&log, &ReportOptions::default()));
        assert_eq!(f.verdict, Verdict::Warn);
        assert!((f.value.unwrap() - 0.8).abs() < 1e-12);
        assert!(f
            .figure
            .contains("80.00% of time_ms baseline (adjusted 70.00%)"));
        let lenient = ReportOptions {
            explained_min: 0.6,
            ..ReportOptions::default()
        };
        let f = explained_check(&Context::new(&log, &lenient));
        assert_eq!(f.verdict, Verdict::Ok);
    }

    fn two_length(text: &str) -> crate::RunLog {
        log_with(
            text,
            &LoadOptions {
                key: vec!["src_len".into(), "tgt_len".into()],
                ..LoadOptions::default()
            },
        )
    }

    #[test]
    fn one_length_alone_would_do_when_the_other_adds_nothing() {
        // time = 10 * src exactly, tgt varies independently: src alone explains everything.
        let mut text = String::from("src_len,tgt_len,time_ms\n");
        for (src, tgt) in [
            (1, 5),
            (1, 6),
            (2, 5),
            (2, 6),
            (1, 5),
            (2, 6),
            (1, 6),
            (2, 5),
        ] {
            text.push_str(&format!("{src},{tgt},{}\n", 10 * src));
        }
        let log = two_length(&text);
        let f = explained_check(&Context::new(&log, &ReportOptions::default()));
        assert_eq!(f.suggest.as_deref(), Some("--key src_len"));
        assert!(f.advice.contains("src_len alone would do"), "{}", f.advice);
        let by_tgt = f
            .details
            .iter()
            .find(|d| d.name == "explained_by_tgt_len")
            .unwrap();
        assert_eq!(by_tgt.value, 0.0);
    }

    #[test]
    fn both_lengths_needed_when_each_carries_cost() {
        // time = src + tgt: each alone leaves half the variance (balanced design).
        let mut text = String::from("src_len,tgt_len,time_ms\n");
        for _ in 0..3 {
            for (src, tgt) in [(1, 1), (1, 3), (3, 1), (3, 3)] {
                text.push_str(&format!("{src},{tgt},{}\n", src + tgt));
            }
        }
        let log = two_length(&text);
        let f = explained_check(&Context::new(&log, &ReportOptions::default()));
        assert_eq!(f.suggest, None);
        assert!(f.advice.contains("neither length alone"), "{}", f.advice);
        let alone = |name: &str| {
            f.details
                .iter()
                .find(|d| d.name == format!("explained_by_{name}"))
                .unwrap()
                .value
        };
        // Deviations +-1 from each length: each explains exactly half.
        assert!((alone("src_len") - 0.5).abs() < 1e-12);
        assert!((alone("tgt_len") - 0.5).abs() < 1e-12);
        assert_eq!(f.value, Some(1.0));
    }

    #[test]
    fn noise_by_hand() {
        // Key 10: 9, 10, 11 -> mean 10, s = 1, CV 0.1. Key 20: 20, 20 -> CV 0.
        // Key 30 occurs once and is left out. Median of {0.1, 0} = 0.05, worst 0.1 at key 10.
        let log = log("seq_len,time_ms\n10,9\n10,10\n10,11\n20,20\n20,20\n30,7\n");
        let ctx = Context::new(&log, &ReportOptions::default());
        let n = noise(&ctx.groups.moments[0][0]).unwrap();
        assert!((n.median_cv - 0.05).abs() < 1e-12);
        assert!((n.worst_cv - 0.1).abs() < 1e-12);
        assert_eq!((n.worst_group, n.groups), (0, 2));
        let f = noise_check(&ctx);
        // 0.05 is not above the 0.05 limit.
        assert_eq!(f.verdict, Verdict::Ok);
        let strict = ReportOptions {
            noise_max_cv: 0.025,
            ..ReportOptions::default()
        };
        let f = noise_check(&Context::new(&log, &strict));
        assert_eq!(f.verdict, Verdict::Warn);
        // (0.05 / 0.025)^2 = 4 samples per SeqPoint.
        assert_eq!(f.suggest.as_deref(), Some("--samples 4"));
    }

    #[test]
    fn within_stratum_cv_by_hand() {
        // Five keys, two epochs; every key holds (10, 12) in epoch 0 and (20, 24) in epoch 1.
        // Within a cell s = sqrt(2) and mean 11 (resp. 2 sqrt(2) and 22): CV = sqrt(2) / 11.
        let mut text = String::from("epoch,seq_len,time_ms\n");
        for key in 1..=5 {
            for (epoch, a, b) in [(0, 10, 12), (1, 20, 24)] {
                text.push_str(&format!("{epoch},{key},{a}\n{epoch},{key},{b}\n"));
            }
        }
        let log = log(&text);
        let ctx = Context::new(&log, &ReportOptions::default());
        let strata = DriftStrata::of(&log, 4);
        let cv = within_stratum_cv(ctx.series[0].values, &ctx.group_of_row, &strata.of_row);
        assert!((cv.unwrap() - 2f64.sqrt() / 11.0).abs() < 1e-12);
        // Over the whole run each key holds 10, 12, 20, 24: the spread is the epochs' drift, and
        // the advice says to bin by epoch rather than to profile more iterations.
        let f = noise_check(&Context::new(
            &log,
            &ReportOptions {
                noise_max_cv: 0.2,
                ..ReportOptions::default()
            },
        ));
        assert_eq!(f.verdict, Verdict::Warn);
        assert_eq!(f.suggest.as_deref(), Some("--strata epoch"));
        // Fewer than 5 cells: no within-stratum figure.
        assert_eq!(within_stratum_cv(&[1.0, 2.0], &[0, 0], &[0, 0]), None);
    }

    #[test]
    fn noise_needs_a_repeated_key() {
        let log = log("seq_len,time_ms\n1,1\n2,2\n");
        let f = noise_check(&Context::new(&log, &ReportOptions::default()));
        assert_eq!((f.verdict, f.value), (Verdict::Warn, None));
    }
}
