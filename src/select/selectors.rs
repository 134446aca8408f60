//! Selectors: one method and pick over every stratum, asked for any K; the error-versus-K
//! curve, and the choice of K (fixed, or by the error target) that makes a `Selection`.

use std::ops::ControlFlow;
use std::sync::Arc;

use super::strata::StrataGroups;
use super::target::{
    smallest_meeting, Advice, CurvePoint, MoreBins, TargetChoice, TargetOutcome, TargetRule,
    TargetSearch,
};
use super::{
    method_and_pick, BinCount, Progress, SelectError, SelectOptions, Selection, StratumOutcome,
};
use crate::binning::{Method, Objective, OptimalTable, Solver};
use crate::estimate::ASSUMED_PROXY_CV;
use crate::groups::KeyGroups;
use crate::pick::{BinPicker, Pick, PickSettings, SeqPoint};
use crate::project::project;
use crate::runlog::RunLog;

/// The largest K the binners prepare for (the exact DP table's size).
fn table_bins(options: &SelectOptions) -> usize {
    match options.bins {
        BinCount::Fixed(k) => k.max(options.max_bins),
        BinCount::Target(_) => options.max_bins.max(1),
    }
}

/// One method and pick over every stratum, built once (the exact DP table with it) and then
/// asked for any K in O(groups): what `select` runs once and the explorer keeps between keys.
pub struct Selectors<'a> {
    log: &'a RunLog,
    strata: &'a StrataGroups,
    pub(super) pickers: Vec<BinPicker<'a>>,
    method: Method,
    pick: Pick,
}

/// The exact binning's objective for a selection over `groups` with these options'
/// profiling (`samples` per SeqPoint, or a budget drawn over the bins). At one per SeqPoint,
/// each bin is measured at its SeqPoint alone, the key nearest its mean, whose own noise
/// stands for the bin's whole share (`Objective::Draws`, one iteration's squared within-key
/// noise as the estimate takes it for the whole run: the baseline's pooled over its keys, a
/// proxy cost's assumed as its plans assume it). Two or more, or a budget, are drawn over the
/// whole bin, so its spread is sampled, not stood for by the pick: the method's own objective
/// (`Objective::Spread`), as for plans sized by noise.
fn selection_objective(log: &RunLog, groups: &KeyGroups, options: &SelectOptions) -> Objective {
    if options.samples > 1 || options.drawn_over_bins {
        return Objective::Spread;
    }
    let logged = groups
        .run_cv2
        .first()
        .and_then(|metrics| metrics.first())
        .copied()
        .flatten()
        .unwrap_or(0.0);
    let cv2 = if log.proxy.is_some() {
        logged.max(ASSUMED_PROXY_CV.powi(2))
    } else {
        logged
    };
    // A log that shows no noise: the picks add none, and the method's own table serves.
    if cv2 > 0.0 && cv2.is_finite() {
        Objective::Draws { cv2 }
    } else {
        Objective::Spread
    }
}

impl<'a> Selectors<'a> {
    /// Resolves the default method and pick as `select` does; `options.bins` and
    /// `options.max_bins` size the exact DP table (any K still works beyond it, slower).
    /// `progress` is told how far the exact DP tables are built (the only slow part: seconds
    /// for a plain DP over many thousand key groups); `None` when it stopped them. The bins
    /// are for `options.samples` iterations per SeqPoint (`selection_objective`).
    pub fn new(
        log: &'a RunLog,
        strata: &'a StrataGroups,
        options: &SelectOptions,
        progress: Progress,
    ) -> Result<Option<Self>, SelectError> {
        let objective = |groups: &KeyGroups| selection_objective(log, groups, options);
        Self::binning_for(log, strata, options, &objective, progress)
    }

    /// `new`, for plans that size each bin's samples by its noise: the bins minimise the
    /// method's own objective (`Objective::Spread`).
    pub fn for_plans(
        log: &'a RunLog,
        strata: &'a StrataGroups,
        options: &SelectOptions,
        progress: Progress,
    ) -> Result<Option<Self>, SelectError> {
        Self::binning_for(log, strata, options, &|_| Objective::Spread, progress)
    }

    fn binning_for(
        log: &'a RunLog,
        strata: &'a StrataGroups,
        options: &SelectOptions,
        objective: &dyn Fn(&KeyGroups) -> Objective,
        progress: Progress,
    ) -> Result<Option<Self>, SelectError> {
        if options.warmup != strata.warmup {
            return Err(SelectError::Invalid(format!(
                "key groups prepared for warm-up {}, asked for {}",
                strata.warmup, options.warmup
            )));
        }
        if options.exclude != strata.exclude {
            return Err(SelectError::Invalid(format!(
                "key groups prepared excluding [{}], asked to exclude [{}]",
                strata.exclude.texts().join(", "),
                options.exclude.texts().join(", ")
            )));
        }
        let (method, pick) = method_and_pick(log, options);
        let prepared = table_bins(options);
        let settings = PickSettings {
            method,
            pick,
            warmup: options.warmup,
            seed: options.seed,
            max_bins: prepared,
        };
        let count = strata.groups.len();
        let mut pickers = Vec::with_capacity(count);
        for (i, g) in strata.groups.iter().enumerate() {
            let objective = objective(g);
            let mut table = strata.table(i, prepared, objective);
            if table.is_none() && method == Method::Optimal && g.dims == 1 {
                // Built here rather than inside the selector, so that it reports and stops.
                let built = OptimalTable::build_with_progress(
                    &g.counts,
                    &g.binning_values(),
                    prepared,
                    Solver::Auto,
                    objective,
                    &mut |done, levels| progress(i * levels + done, count * levels),
                );
                let Some(built) = built else {
                    return Ok(None);
                };
                let built = Arc::new(built);
                strata.keep_table(i, built.clone());
                table = Some(built);
            }
            pickers.push(BinPicker::prepared(
                log,
                g,
                &strata.candidates[i],
                table,
                settings,
                strata.split.then_some(i),
            )?);
        }
        Ok(Some(Selectors {
            log,
            strata,
            pickers,
            method,
            pick,
        }))
    }

    pub fn method(&self) -> Method {
        self.method
    }

    pub fn pick(&self) -> Pick {
        self.pick
    }

    /// Strata the run is split into (1 without `--strata`).
    pub fn strata(&self) -> usize {
        self.pickers.len()
    }

    /// Whether this K is answered in O(groups) in every stratum: from the exact DP table,
    /// by uniform or quantile cuts, or from a k-means fit made already (the curve's).
    pub fn ready(&self, k: usize) -> bool {
        self.pickers.iter().all(|s| s.ready(k))
    }

    /// The same K in every stratum, projected over the whole run.
    /// The SeqPoints of the same K in every stratum, in stratum order.
    pub fn seqpoints(&self, k: usize) -> Result<Vec<SeqPoint>, SelectError> {
        let mut seqpoints = Vec::new();
        for picker in &self.pickers {
            seqpoints.extend(picker.select(k)?);
        }
        Ok(seqpoints)
    }

    pub fn curve_point(&self, k: usize, samples: u64) -> Result<CurvePoint, SelectError> {
        let seqpoints = self.seqpoints(k)?;
        Ok(CurvePoint::of(
            self.log,
            &self.strata.actual,
            k,
            &seqpoints,
            samples,
        ))
    }

    /// How many K the error-versus-K curve covers for these options (none when not asked).
    pub fn curve_len(&self, options: &SelectOptions) -> usize {
        if options.error_curve {
            table_bins(options).min(self.strata.largest())
        } else {
            0
        }
    }

    /// The error-versus-K curve, K = 1..=`curve_len`; `None` when `progress` stopped it.
    pub fn curve(
        &self,
        options: &SelectOptions,
        progress: Progress,
    ) -> Result<Option<Vec<CurvePoint>>, SelectError> {
        let len = self.curve_len(options);
        let mut curve = Vec::with_capacity(len);
        let finished = self.points_in_order(len, options.samples, &mut |point| {
            curve.push(point);
            progress(point.k, len)
        })?;
        Ok(finished.then_some(curve))
    }

    /// The target search of a run without strata (the smallest K that meets the target, else
    /// the one that misses least), over K = 1..=`limit` computed on every core in K order,
    /// stopping at the first that meets it: what `TargetSearch` finds, sooner.
    fn search_one_stratum(
        &self,
        limit: usize,
        target: f64,
        rule: TargetRule,
        samples: u64,
        progress: Progress,
    ) -> Result<Option<(Vec<usize>, CurvePoint)>, SelectError> {
        let mut choice = TargetChoice::new(target, rule);
        let finished = self.points_in_order(limit, samples, &mut |point| {
            if choice.offer(point) {
                return ControlFlow::Break(());
            }
            progress(point.k, limit)
        })?;
        if !finished && !choice.met {
            return Ok(None);
        }
        Ok(choice.chosen())
    }

    /// Hands `visit` the point of each K = 1..=`len` in K order until it answers `Break`;
    /// false when it did. The points are computed on every core (k-means takes a while per K).
    fn points_in_order(
        &self,
        len: usize,
        samples: u64,
        visit: &mut dyn FnMut(CurvePoint) -> ControlFlow<()>,
    ) -> Result<bool, SelectError> {
        self.visit_in_order(len, |i| self.curve_point(i + 1, samples), visit)
    }

    /// `parallel::visit_in_order` over work that asks these selectors for bins: on every core,
    /// but for k-means on the calling thread, as its fits run in parallel under the lock of
    /// their chain (`parallel::visit_sequentially` says why; they use every core themselves).
    pub fn visit_in_order<T: Send, E: Send>(
        &self,
        len: usize,
        compute: impl Fn(usize) -> Result<T, E> + Sync,
        visit: &mut dyn FnMut(T) -> ControlFlow<()>,
    ) -> Result<bool, E> {
        if self.method == Method::Kmeans {
            crate::parallel::visit_sequentially(len, compute, visit)
        } else {
            crate::parallel::visit_in_order(len, compute, visit)
        }
    }

    /// What would meet a missed target, computed, not guessed: the fewest `--samples` per
    /// SeqPoint with which the best K meets it (its error must already be within the target),
    /// and the smallest K beyond `--max-bins` (up to twice it) that meets it as it stands.
    /// Following either re-runs the same search and meets the target. Bins are only advised
    /// without strata (a per-stratum K is searched, not read off one curve).
    fn advice(
        &self,
        best: &CurvePoint,
        target: f64,
        options: &SelectOptions,
    ) -> Result<Advice, SelectError> {
        let actual = &self.strata.actual;
        let samples = if best.worst_error_pct <= target {
            // Two or more per SeqPoint bin by the method's own objective
            // (`selection_objective`): judged on the bins `--samples` will make.
            let several = SelectOptions {
                samples: options.samples.max(2),
                ..options.clone()
            };
            let seqpoints = if several.samples == options.samples {
                self.seqpoints(best.k)?
            } else {
                let go_on = &mut |_, _| ControlFlow::Continue(());
                Selectors::new(self.log, self.strata, &several, go_on)?
                    .expect("never stopped")
                    .seqpoints(best.k)?
            };
            let largest = seqpoints.iter().map(|sp| sp.weight).max().unwrap_or(1);
            let meets = |m: u64| {
                CurvePoint::of(self.log, actual, best.k, &seqpoints, m)
                    .meets(target, options.target_by)
            };
            // Doubling, then bisection: the interval narrows as the samples grow.
            let mut high = options.samples.max(1).saturating_mul(2);
            while high < largest && !meets(high) {
                high = high.saturating_mul(2);
            }
            let high = high.min(largest);
            if meets(high) {
                // `--samples` may be past every bin's size (up to u64::MAX).
                let mut low = options.samples.max(1).min(high);
                let mut high = high;
                while low + 1 < high {
                    let mid = (low + high) / 2;
                    if meets(mid) {
                        high = mid;
                    } else {
                        low = mid;
                    }
                }
                Some(high)
            } else {
                None
            }
        } else {
            None
        };
        let per_stratum = self.pickers.len() > 1;
        let unique = self.strata.largest();
        let bins = if options.max_bins >= unique {
            if best.worst_error_pct > target || samples.is_none() {
                MoreBins::CannotHelp(unique)
            } else {
                MoreBins::Unneeded
            }
        } else if per_stratum {
            MoreBins::Unneeded
        } else {
            let limit = options.max_bins.saturating_mul(2).min(unique);
            // One exact DP table reaching `limit` answers every K past `--max-bins` (a table
            // per K would be built otherwise: seconds on many key groups).
            let wider = Selectors::new(
                self.log,
                self.strata,
                &SelectOptions {
                    method: Some(self.method),
                    pick: Some(self.pick),
                    bins: BinCount::Target(target),
                    max_bins: limit,
                    ..options.clone()
                },
                &mut |_, _| ControlFlow::Continue(()),
            )?
            .expect("never stopped");
            let first = options.max_bins + 1;
            let mut found = MoreBins::NoneUpTo(limit);
            wider.visit_in_order(
                (limit + 1).saturating_sub(first),
                |i| wider.curve_point(first + i, options.samples),
                &mut |point: CurvePoint| {
                    if point.meets(target, options.target_by) {
                        found = MoreBins::Allow(point.k);
                        return ControlFlow::Break(());
                    }
                    ControlFlow::Continue(())
                },
            )?;
            found
        };
        Ok(Advice {
            target_pct: target,
            max_bins: options.max_bins,
            per_stratum,
            best: *best,
            samples,
            bins,
        })
    }

    /// The selection for `options` (fixed K, or the error-target search), carrying `curve`;
    /// `None` when `progress` stopped the search.
    pub fn choose(
        &self,
        options: &SelectOptions,
        curve: Vec<CurvePoint>,
        progress: Progress,
    ) -> Result<Option<Selection>, SelectError> {
        let (log, strata) = (self.log, self.strata);
        let mut chosen: Vec<Vec<SeqPoint>> = Vec::new();
        let mut outcomes = Vec::new();
        let mut target = None;
        let ks = match options.bins {
            BinCount::Fixed(k) => vec![k; self.pickers.len()],
            BinCount::Target(pct) => {
                let max_bins = table_bins(options);
                let limits: Vec<usize> = strata
                    .groups
                    .iter()
                    .map(|g| max_bins.min(g.len()))
                    .collect();
                let search = TargetSearch {
                    log,
                    pickers: &self.pickers,
                    actual: &strata.actual,
                    strata_actual: &strata.stratum_actual,
                    limits: &limits,
                    target: pct,
                    rule: options.target_by,
                    samples: options.samples,
                };
                let from_curve = match limits.as_slice() {
                    [limit] => smallest_meeting(&curve, *limit, pct, options.target_by),
                    _ => None,
                };
                let found = match (from_curve, limits.as_slice()) {
                    (Some(found), _) => Some(found),
                    (None, [limit]) => self.search_one_stratum(
                        *limit,
                        pct,
                        options.target_by,
                        options.samples,
                        progress,
                    )?,
                    _ => search.run(progress)?,
                };
                let Some((ks, point)) = found else {
                    return Ok(None);
                };
                // One iteration cannot give an interval: nothing to measure its noise against.
                let met = point.meets(pct, options.target_by) && log.len() >= 2;
                target = Some(TargetOutcome {
                    target_pct: pct,
                    rule: options.target_by,
                    met,
                    advice: if met || log.len() < 2 {
                        None
                    } else {
                        Some(self.advice(&point, pct, options)?)
                    },
                });
                ks
            }
        };
        for (i, picker) in self.pickers.iter().enumerate() {
            let seqpoints = picker.select(ks[i])?;
            let own = CurvePoint::of(
                log,
                &strata.stratum_actual[i],
                ks[i],
                &seqpoints,
                options.samples,
            );
            outcomes.push(StratumOutcome {
                name: strata.names[i].clone(),
                iterations: strata.groups[i].iterations(),
                k: ks[i],
                // With a fixed K there is no target to miss.
                met: match options.bins {
                    BinCount::Fixed(_) => true,
                    BinCount::Target(pct) => own.meets(pct, options.target_by),
                },
                worst_error_pct: own.worst_error_pct,
                worst_half_width_pct: own.worst_half_width_pct,
            });
            chosen.push(seqpoints);
        }
        let mut seqpoints: Vec<SeqPoint> = chosen.into_iter().flatten().collect();
        for (id, sp) in seqpoints.iter_mut().enumerate() {
            sp.id = id;
        }
        let projection = project(log, &strata.actual, &seqpoints, options.samples);
        let binning_gap = self
            .pickers
            .iter()
            .zip(&ks)
            .filter_map(|(picker, &k)| picker.table().filter(|t| !t.is_exact()).map(|t| t.gap(k)))
            .reduce(f64::max);
        Ok(Some(Selection {
            method: self.method,
            pick: self.pick,
            options: options.clone(),
            seqpoints,
            projection,
            target,
            strata: outcomes,
            curve,
            unique_keys: strata.unique_keys(),
            binning_gap,
        }))
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::runlog::test_log as log;
    use crate::select::{run_selection_on, Strata};

    #[test]
    fn advised_bins_equal_the_smallest_fixed_k_that_meets_the_target() {
        // 90 lengths, each costing its square: more bins keep bringing the error down.
        let rows: String = (0..900u32)
            .map(|i| {
                let key = 10 + (i.wrapping_mul(2_654_435_761) >> 9) % 90;
                let cost = f64::from(key * key);
                format!("{key},{cost}\n")
            })
            .collect();
        let log = log(&format!("seq_len,time_ms\n{rows}"));
        let mut advised = Vec::new();
        for method in [Method::Optimal, Method::Quantile] {
            let cases = [2.0, 1.0, 0.5, 0.2, 0.05, 0.01]
                .into_iter()
                .flat_map(|t| [(t, 2), (t, 3), (t, 5)]);
            for (target, max_bins) in cases {
                let options = SelectOptions {
                    method: Some(method),
                    bins: BinCount::Target(target),
                    max_bins,
                    ..SelectOptions::default()
                };
                let case = format!("{} target {target} max {max_bins}", method.name());
                let selection = crate::select::run_selection(&log, &options).unwrap();
                let Some(advice) = selection.target.unwrap().advice else {
                    continue; // met within --max-bins: nothing advised
                };
                // Brute force: each K past the limit selected on its own (a DP table of its
                // own size), judged by its own projection.
                let limit = (2 * max_bins).min(90);
                let want = (max_bins + 1..=limit)
                    .find(|&k| {
                        let fixed = SelectOptions {
                            bins: BinCount::Fixed(k),
                            max_bins: k,
                            ..options.clone()
                        };
                        let s = crate::select::run_selection(&log, &fixed).unwrap();
                        let actual = crate::project::actual_totals(&log);
                        CurvePoint::of(&log, &actual, k, &s.seqpoints, 1)
                            .meets(target, options.target_by)
                    })
                    .map_or(MoreBins::NoneUpTo(limit), MoreBins::Allow);
                assert_eq!(advice.bins, want, "{case}");
                advised.push(advice.bins);
            }
        }
        assert!(advised.iter().any(|b| matches!(b, MoreBins::Allow(_))));
        assert!(advised.iter().any(|b| matches!(b, MoreBins::NoneUpTo(_))));
    }

    /// One iteration per SeqPoint bins for the picks alone, at the run's pooled within-key
    /// noise: keys 1 and 2 alternate by 10% and 20% of their means, `(0.1^2 + 0.2^2) x 4 / 3
    /// / 2` over their three degrees of freedom each; a proxy cost's at least the 4% its
    /// plans assume. Two per SeqPoint, and the cheapest plan's search, bin by the spread.
    #[test]
    fn one_iteration_per_seqpoint_bins_for_the_picks_alone() {
        let timed = log("seq_len,time_ms\n1,9\n1,11\n1,9\n1,11\n2,80\n2,120\n2,80\n2,120\n3,300\n");
        let strata = StrataGroups::new(&timed, Strata::None, 0).unwrap();
        let objective = |options: &SelectOptions, plans: bool| {
            let go_on = &mut |_, _| ControlFlow::Continue(());
            let selectors = if plans {
                Selectors::for_plans(&timed, &strata, options, go_on)
            } else {
                Selectors::new(&timed, &strata, options, go_on)
            };
            let selectors = selectors.unwrap().unwrap();
            selectors.pickers[0].table().unwrap().objective()
        };
        let one = SelectOptions {
            bins: BinCount::Fixed(2),
            ..SelectOptions::default()
        };
        let Objective::Draws { cv2 } = objective(&one, false) else {
            panic!("one per SeqPoint bins for the picks alone");
        };
        let run = (0.01 + 0.04) * 4.0 / 3.0 / 2.0;
        assert!((cv2 - run).abs() < 1e-12, "{cv2} vs {run}");
        let two = SelectOptions {
            samples: 2,
            ..one.clone()
        };
        assert_eq!(objective(&two, false), Objective::Spread);
        assert_eq!(objective(&one, true), Objective::Spread);

        let lengths = crate::runlog::load_run_bytes(
            "lengths.csv",
            b"seq_len\n1\n1\n2\n3\n",
            crate::runlog::InputFormat::Csv,
            &crate::runlog::LoadOptions::default(),
        )
        .unwrap();
        assert!(
            lengths.proxy.is_some(),
            "a log of lengths projects on a proxy cost"
        );
        let groups = &StrataGroups::new(&lengths, Strata::None, 0).unwrap().groups[0];
        let assumed = ASSUMED_PROXY_CV.powi(2);
        assert_eq!(
            selection_objective(&lengths, groups, &SelectOptions::default()),
            Objective::Draws { cv2: assumed }
        );
    }

    #[test]
    fn preparing_selectors_reports_and_can_be_stopped_without_keeping_a_table() {
        let log = log("seq_len,time_ms\n1,1\n2,4\n3,9\n4,16\n5,25\n6,36\n");
        let strata = StrataGroups::new(&log, Strata::None, 0).unwrap();
        let options = SelectOptions {
            bins: BinCount::Fixed(3),
            method: Some(Method::Optimal),
            ..SelectOptions::default()
        };
        let objective = selection_objective(&log, &strata.groups[0], &options);
        let stopped =
            Selectors::new(&log, &strata, &options, &mut |_, _| ControlFlow::Break(())).unwrap();
        assert!(stopped.is_none());
        assert!(
            strata.table(0, 3, objective).is_none(),
            "a stopped build is not kept"
        );

        let mut reports = Vec::new();
        let selectors = Selectors::new(&log, &strata, &options, &mut |d, t| {
            reports.push((d, t));
            ControlFlow::Continue(())
        })
        .unwrap()
        .unwrap();
        assert_eq!(
            reports.last().map(|r| r.0 == r.1),
            Some(true),
            "{reports:?}"
        );
        assert!(
            strata.table(0, 3, objective).is_some(),
            "the finished table is kept"
        );
        let via_plain = run_selection_on(&log, &strata, &options).unwrap();
        let point = selectors.curve_point(3, 1).unwrap();
        assert_eq!(point.bins, via_plain.bins());
    }

    #[test]
    fn the_curve_holds_every_k_in_order_and_stops_when_told() {
        let rows: String = (0..300)
            .map(|i| format!("{},{}\n", 10 + i % 37, (10 + i % 37) * 3 + i % 5))
            .collect();
        let log = log(&format!("seq_len,time_ms\n{rows}"));
        let strata = StrataGroups::new(&log, Strata::None, 0).unwrap();
        let options = SelectOptions {
            bins: BinCount::Target(1.0),
            method: Some(Method::Kmeans),
            max_bins: 20,
            error_curve: true,
            ..SelectOptions::default()
        };
        let selectors = Selectors::new(&log, &strata, &options, &mut |_, _| {
            ControlFlow::Continue(())
        })
        .unwrap()
        .expect("never stopped");
        let mut reports = Vec::new();
        let curve = selectors
            .curve(&options, &mut |d, t| {
                reports.push((d, t));
                ControlFlow::Continue(())
            })
            .unwrap()
            .unwrap();
        assert_eq!(reports, (1..=20).map(|d| (d, 20)).collect::<Vec<_>>());
        for (i, point) in curve.iter().enumerate() {
            let alone = selectors.curve_point(i + 1, options.samples).unwrap();
            assert_eq!(point.k, i + 1);
            assert_eq!(point.worst_error_pct, alone.worst_error_pct);
        }
        let mut told = 0;
        let stopped = selectors.curve(&options, &mut |_, _| {
            told += 1;
            ControlFlow::Break(())
        });
        assert!(stopped.unwrap().is_none());
        assert_eq!(told, 1);
    }
}
