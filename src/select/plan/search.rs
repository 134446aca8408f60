//! The search for the cheapest sample counts that meet a target at one K: a guess from the
//! variance parts, filled and trimmed on the listed rows' own figures (running sums keep each
//! step O(K)), then polished by trading samples between bins.

use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::AddAssign;

use crate::estimate::{baseline_parts_of, new_and_speedup_parts_of, BinSums, VarianceParts};
use crate::pick::SeqPoint;
use crate::runlog::RunLog;
use crate::stats::{half_width_pct, variance_of_half_width};

use super::allocation::{fewest_samples, fewest_samples_with_bias};
use super::design::PlanDesign;
use super::running::{running as running_figures, RunningFigure, RunningSums};

/// What a target's plan profiles for each SeqPoint, as the search sees it: its own row, then
/// its alternates' rows (the rows the plan takes first, in its order: at the key `draw_rows`'
/// alternates, over the bin the draws `PlanDesign::seqpoints` lists in their place), so that
/// the search judges every figure from the very values the plan's interval will be computed
/// from. Beyond them (a bin with more iterations than it lists) the plan's further draws are
/// taken as the listed rows again, keeping their mean and their spread. Kept as running
/// sums, so that the figures at any sample counts cost a step per bin.
///
/// It also holds the search's current samples, as a cursor: the search moves it a bin at a
/// time (`set`) or wholesale (`move_to`) and reads the figures there (`worst_pct_here`,
/// `meets_here`). A fill or a trim changes a bin or two between projections, so a projection
/// reads only the bins set since the last one: finding them by comparing every bin's samples
/// with the last projection's took a pass per projection, a fifth of a search with
/// `--strata` at K = 500.
pub(super) struct ListedRows<'a> {
    log: &'a RunLog,
    seqpoints: &'a [SeqPoint],
    /// Running sums over each bin's first rows, up to its cap, on every metric.
    sums: RunningSums,
    /// What the search has cost so far (a `Cell`: the figures are read through `&self`).
    work: Cell<SearchWork>,
    /// The fewest samples each bin takes (`PlanDesign::at_least`): where the search starts
    /// and the trim stops.
    least: Vec<u64>,
    /// The cursor and the figures as last read (a `RefCell`: read through `&self`).
    reading: RefCell<Reading>,
}

/// The search's current samples, and the figures as the last projection read them.
#[derive(Default)]
struct Reading {
    /// The current samples; empty until the cursor is first moved.
    now: Vec<u64>,
    /// The samples the bins were last read at; empty until the first projection, which
    /// reads every bin.
    read: Vec<u64>,
    /// The bins set since the last projection, each once (`flagged` marks them); some may
    /// be back at their samples as read.
    dirty: Vec<usize>,
    flagged: Vec<bool>,
    /// `[metric][bin]`: the bins at `read`'s samples (each `BinSums` the same, value for
    /// value, as read whole).
    bins: Vec<Vec<BinSums>>,
    /// `[metric][figure]`: every figure at `read`'s samples as running sums over the bins
    /// (`running`); `None` where they cannot follow.
    running: Option<Vec<Vec<RunningFigure>>>,
}

impl Reading {
    fn set(&mut self, b: usize, samples: u64) {
        if self.now[b] == samples {
            return;
        }
        self.now[b] = samples;
        if !self.flagged[b] {
            self.flagged[b] = true;
            self.dirty.push(b);
        }
    }

    fn move_to(&mut self, samples: &[u64]) {
        if self.now.len() != samples.len() {
            *self = Reading {
                now: samples.to_vec(),
                flagged: vec![false; samples.len()],
                ..Reading::default()
            };
            return;
        }
        for (b, &s) in samples.iter().enumerate() {
            self.set(b, s);
        }
    }
}

/// What target searches cost, counted as they run: the projections they made (every figure
/// at one set of sample counts) and the bins those read. A projection reads again only the
/// bins whose samples changed (`running`), so the projections and the bins read are what a
/// search's time follows, free of the machine's load: a test can hold them to a bound where
/// a timed test would be flaky. Counting is always on (two additions per projection).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct SearchWork {
    /// Searches made (`samples_for_target` calls): one per K costed, one per K polished.
    pub(super) searches: u64,
    /// Projections made (`ListedRows::figures`), each over every bin and metric.
    pub(super) projections: u64,
    /// Bins read, per metric, over those projections: every bin at a search's first, then
    /// those whose samples changed.
    pub(super) bins_read: u64,
    /// The most projections one search made: a few per bin of its K when the search's cost
    /// follows K, as it should; one or more per planned sample when it follows the plan's
    /// size (the cliff in `--max-bins`: at the K with a bin per key, the plan jumps to tens of
    /// thousands of samples).
    pub(super) largest: u64,
}

impl AddAssign for SearchWork {
    fn add_assign(&mut self, other: SearchWork) {
        self.searches += other.searches;
        self.projections += other.projections;
        self.bins_read += other.bins_read;
        self.largest = self.largest.max(other.largest);
    }
}
impl<'a> ListedRows<'a> {
    /// The listed rows of each SeqPoint, as many as its cap (`caps[b]`) allows.
    pub(super) fn new(log: &'a RunLog, seqpoints: &'a [SeqPoint], caps: &[u64]) -> Self {
        let design = PlanDesign::of(log);
        let sums = RunningSums::over(log, seqpoints, design, caps);
        ListedRows {
            log,
            seqpoints,
            sums,
            work: Cell::new(SearchWork::default()),
            least: design.at_least(vec![1; caps.len()], caps),
            reading: RefCell::new(Reading::default()),
        }
    }

    /// What the figures read so far have cost.
    pub(super) fn work(&self) -> SearchWork {
        self.work.get()
    }

    /// Moves the cursor to `samples`, every bin.
    pub(super) fn move_to(&self, samples: &[u64]) {
        self.reading.borrow_mut().move_to(samples);
    }

    /// Sets bin `b`'s samples at the cursor (moved to the search's samples before).
    pub(super) fn set(&self, b: usize, samples: u64) {
        self.reading.borrow_mut().set(b, samples);
    }

    /// Brings the bins (and the running figures) to the cursor's samples: only the bins set
    /// since the last projection are read again, in bin order (the running figures' sums
    /// then add and take off in the order a pass over every bin did).
    fn read_here(&self) {
        let compare = self.log.configs.len() > 1;
        // Counted, not named: `metric_names` allocates, and this runs once per projection.
        let metrics = self.log.configs[0].metrics.len();
        let mut reading = self.reading.borrow_mut();
        let reading = &mut *reading;
        let mut read = 0;
        if reading.read.len() != reading.now.len() {
            reading.bins = (0..metrics)
                .map(|m| {
                    reading
                        .now
                        .iter()
                        .enumerate()
                        .map(|(b, &s)| self.sums.bin(b, &self.seqpoints[b], m, s))
                        .collect()
                })
                .collect();
            reading.read = reading.now.clone();
            reading.running = running_figures(&reading.bins, compare);
            read = metrics * reading.now.len();
            for &b in &reading.dirty {
                reading.flagged[b] = false;
            }
            reading.dirty.clear();
        }
        reading.dirty.sort_unstable();
        for &b in &reading.dirty {
            reading.flagged[b] = false;
            let s = reading.now[b];
            if s == reading.read[b] {
                continue;
            }
            reading.read[b] = s;
            for m in 0..metrics {
                let bin = self.sums.bin(b, &self.seqpoints[b], m, s);
                if let Some(running) = reading.running.as_mut() {
                    for figure in &mut running[m] {
                        figure.set(b, &bin);
                    }
                }
                reading.bins[m][b] = bin;
            }
            read += metrics;
        }
        reading.dirty.clear();
        self.work.set({
            let mut work = self.work.get();
            work.projections += 1;
            work.bins_read += read as u64;
            work
        });
    }

    /// Every figure's variance parts at `samples`: each configuration's total of each metric,
    /// and each speedup, with the values of those samples (so their bias is the one at
    /// `samples`).
    pub(super) fn figures(&self, samples: &[u64]) -> Vec<VarianceParts> {
        self.move_to(samples);
        self.read_here();
        self.parts_as_read()
    }

    /// `figures` at the samples last read.
    fn parts_as_read(&self) -> Vec<VarianceParts> {
        let compare = self.log.configs.len() > 1;
        let mut figures = Vec::new();
        for bins in &self.reading.borrow().bins {
            figures.push(baseline_parts_of(bins));
            if compare {
                let (new, speedup) = new_and_speedup_parts_of(bins);
                figures.push(new);
                figures.push(speedup);
            }
        }
        figures
    }

    /// The widest 95% half-width over every figure, in percent: what the plan's projection
    /// will report at `samples` (`Projection::worst_half_width_pct`).
    pub(super) fn worst_pct(&self, samples: &[u64]) -> f64 {
        self.move_to(samples);
        self.worst_pct_here()
    }

    /// `worst_pct` at the cursor. Off the running figures where they follow (`running`),
    /// else off every figure's parts.
    pub(super) fn worst_pct_here(&self) -> f64 {
        self.read_here();
        if let Some(running) = self.reading.borrow().running.as_ref() {
            return running
                .iter()
                .flatten()
                .map(RunningFigure::half_width_pct)
                .fold(0.0, f64::max);
        }
        self.worst_of_parts()
    }

    /// The widest half-width at the cursor, off every figure's parts (where the running
    /// figures cannot follow).
    fn worst_of_parts(&self) -> f64 {
        let samples = self.reading.borrow().read.clone();
        self.parts_as_read()
            .iter()
            .map(|parts| half_width_pct(parts.value, parts.variance(&samples)))
            .fold(0.0, f64::max)
    }

    /// Whether every figure meets `target_pct` at `samples`: `within_target(worst_pct)`.
    pub(super) fn meets(&self, samples: &[u64], target_pct: f64) -> bool {
        self.move_to(samples);
        self.meets_here(target_pct)
    }

    /// `meets` at the cursor: off the running figures without solving for their half-widths
    /// where they follow.
    pub(super) fn meets_here(&self, target_pct: f64) -> bool {
        self.read_here();
        if let Some(running) = self.reading.borrow().running.as_ref() {
            return running.iter().flatten().all(|f| f.meets(target_pct));
        }
        within_target(self.worst_of_parts(), target_pct)
    }
}

/// A first guess at the samples meeting the target, from the figures' parts at `samples`:
/// the fewest per figure (`fewest_samples`), the most over the figures; the caps where a
/// figure's bias at `samples` leaves no room.
pub(super) fn guess_samples(
    listed: &ListedRows,
    samples: &[u64],
    caps: &[u64],
    target_pct: f64,
) -> Vec<u64> {
    let mut guess = listed.least.clone();
    for mut parts in listed.figures(samples) {
        parts.bias = 0.0;
        let allowed = variance_of_half_width(target_pct / 100.0 * parts.value.abs());
        let need = fewest_samples(&parts, caps, allowed).unwrap_or_else(|| caps.to_vec());
        for (g, n) in guess.iter_mut().zip(need) {
            *g = (*g).max(n);
        }
    }
    guess
}

/// Where a fill that has spent its pace one sample at a time jumps to: for each figure the
/// fewest samples that bring its interval within the target from its parts at `samples`,
/// its bias kept (`fewest_samples_with_bias`); never fewer than `samples` has. Where no
/// count meets a figure on its parts at `samples` (its bias alone fills the target: the
/// bias moves as samples spread, so more may still meet), every bin grows by a quarter.
/// `None` when every bin is full.
pub(super) fn jump_samples(
    listed: &ListedRows,
    samples: &[u64],
    caps: &[u64],
    target_pct: f64,
) -> Option<Vec<u64>> {
    let mut jump = samples.to_vec();
    for parts in listed.figures(samples) {
        let allowed = variance_of_half_width(target_pct / 100.0 * parts.value.abs());
        let need = fewest_samples_with_bias(&parts, caps, allowed).unwrap_or_else(|| {
            samples
                .iter()
                .zip(caps)
                .map(|(&s, &cap)| (s + s.div_ceil(4)).min(cap))
                .collect()
        });
        for (j, n) in jump.iter_mut().zip(need) {
            *j = (*j).max(n);
        }
    }
    (jump != samples).then_some(jump)
}

/// Samples per SeqPoint bringing every figure's 95% interval within the target: every
/// configuration's total of every metric, and every speedup, each computed as the plan's
/// projection will compute it at those samples. The known offsets of the profiled iterations
/// from their keys' means (the bias) change with the samples, and not monotonically (the
/// spread picks lean one way, then the other), so the search judges each candidate by the
/// final interval itself: a guess from the parts' sample sizes (refined twice at its own
/// samples), then one more sample where it narrows the widest figure most until the target
/// is met, then one fewer wherever the target still holds, until no single sample can go.
/// `None` when no plan within the caps meets it.
pub(super) fn samples_for_target(
    log: &RunLog,
    seqpoints: &[SeqPoint],
    caps: &[u64],
    target_pct: f64,
    search: TargetSearch,
) -> Option<Vec<u64>> {
    counted_samples_for_target(log, seqpoints, caps, target_pct, search).0
}

/// `samples_for_target`, with what the search cost.
pub(super) fn counted_samples_for_target(
    log: &RunLog,
    seqpoints: &[SeqPoint],
    caps: &[u64],
    target_pct: f64,
    search: TargetSearch,
) -> (Option<Vec<u64>>, SearchWork) {
    let caps: Vec<u64> = caps.iter().map(|&c| c.max(1)).collect();
    let listed = ListedRows::new(log, seqpoints, &caps);
    let samples = search_on(&listed, &caps, target_pct, search);
    let work = listed.work();
    let work = SearchWork {
        searches: 1,
        largest: work.projections,
        ..work
    };
    (samples, work)
}

/// `samples_for_target` on the listed rows.
fn search_on(
    listed: &ListedRows,
    caps: &[u64],
    target_pct: f64,
    search: TargetSearch,
) -> Option<Vec<u64>> {
    // A figure the data cannot bound even with every candidate profiled (a bin of keys the
    // baseline cannot tell apart, not profiled whole: `estimate::CANNOT_BOUND`) is met by no
    // plan at this K: said at once, not after filling every bin one sample at a time.
    if !listed.worst_pct(caps).is_finite() {
        return None;
    }
    let mut samples = listed.least.clone();
    for _ in 0..3 {
        if listed.meets(&samples, target_pct) {
            break;
        }
        let guess = guess_samples(listed, &samples, caps, target_pct);
        if guess == samples {
            break;
        }
        samples = guess;
    }
    // Two starts, the cheaper kept: from the guess, and from one sample per SeqPoint (the
    // guess may overshoot a bin that a sample elsewhere would have spared). The second adds
    // one sample at a time, about ten projections each: only for plans up to
    // `FROM_ONES_LIMIT` and `FROM_ONES_WORK`.
    let cost = |s: &[u64]| s.iter().sum::<u64>();
    let pace = Some(fill_pace(caps.len()));
    let from_guess = fill_and_trim(listed, samples, caps, target_pct, pace)?;
    let mut samples = from_guess;
    let bins = caps.len() as u64;
    if cost(&samples) <= FROM_ONES_LIMIT && bins * cost(&samples) <= FROM_ONES_WORK {
        let from_ones = fill_and_trim(listed, listed.least.clone(), caps, target_pct, None);
        if let Some(from_ones) = from_ones.filter(|s| cost(s) < cost(&samples)) {
            samples = from_ones;
        }
    }
    if search == TargetSearch::Polished {
        polish(listed, &mut samples, caps, target_pct);
    }
    Some(samples)
}

/// How hard `samples_for_target` looks: the greedy fill and trim (the cost of every K in the
/// cheapest plan's search), or that polished by `polish` (the Ks that may win, and the plan).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TargetSearch {
    Greedy,
    Polished,
}

/// From `samples`, one more sample where it narrows the widest figure most until the target
/// is met, then one fewer wherever it still holds (the most sampled bins first) until no
/// single sample can go. `None` when the caps are reached first.
///
/// With a `pace` (projections), a fill that has not met the target after that many
/// projections, one sample at a time, jumps instead (`jump_samples`, two projections a jump)
/// until it meets, and its trim makes one round: the guess, which leaves the figures' biases
/// out, can fall thousands of samples short (on a 20,000-row `--compare` pair at 0.1%,
/// 3,500-3,700 where 8,900-12,800 were needed, the speedup's bias about a quarter of the target), and
/// the fill took a projection per sample, up to 15,392 in one search. Fills that meet
/// within their pace (every plan of the bundled sample, the flows and the benchmark cases)
/// are the one-at-a-time fill's, to the sample.
pub(super) fn fill_and_trim(
    listed: &ListedRows,
    mut samples: Vec<u64>,
    caps: &[u64],
    target_pct: f64,
    pace: Option<u64>,
) -> Option<Vec<u64>> {
    // One more sample where it narrows the widest figure most. Lazily: each bin's gain is
    // kept from when it was last computed, and only the best-looking bin is computed again
    // (its gain still leading, it is taken), as every step changes all gains but little.
    let mut worst = listed.worst_pct(&samples);
    let mut gains = StaleGains::new(samples.len());
    let paced_from = listed.work().projections;
    let mut jumped = false;
    while !within_target(worst, target_pct) {
        if jumped || pace.is_some_and(|pace| listed.work().projections - paced_from >= pace) {
            samples = jump_samples(listed, &samples, caps, target_pct)?;
            worst = listed.worst_pct(&samples);
            jumped = true;
            continue;
        }
        let chosen = loop {
            let leader = gains.take_best(&samples, caps)?;
            // The cursor stands at `samples` (`worst_pct` above, or the last step).
            listed.set(leader, samples[leader] + 1);
            let after = listed.worst_pct_here();
            listed.set(leader, samples[leader]);
            // While no figure is bounded yet (nothing shows the new configuration's noise), a
            // sample gains all if it bounds them and nothing otherwise: never `inf - inf`.
            let fresh = match (worst.is_finite(), after.is_finite()) {
                (true, _) => worst - after,
                (false, true) => f64::MAX,
                (false, false) => 0.0,
            };
            let stale_best = gains.best(&samples, caps).unwrap_or(f64::NEG_INFINITY);
            gains.set(leader, fresh);
            if fresh >= stale_best {
                break (leader, after);
            }
        };
        samples[chosen.0] += 1;
        listed.set(chosen.0, samples[chosen.0]);
        gains.set(chosen.0, f64::INFINITY);
        worst = chosen.1;
    }
    let rounds = jumped.then_some(1);
    Some(trim_rounds(listed, samples, None, target_pct, rounds))
}

/// Each bin's gain as last computed (infinite until it is: every bin is tried once), the
/// best first: a heap whose entries a newer gain for the same bin leaves stale, skipped when
/// they come up. The best is the largest gain, of the lowest bin among equals.
struct StaleGains {
    heap: BinaryHeap<(TotalOrder, Reverse<usize>, u64)>,
    /// Each bin's latest entry (its third field).
    latest: Vec<u64>,
}

/// An `f64` ordered by `total_cmp`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct TotalOrder(f64);

impl Eq for TotalOrder {}

impl PartialOrd for TotalOrder {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for TotalOrder {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

impl StaleGains {
    fn new(bins: usize) -> StaleGains {
        StaleGains {
            heap: (0..bins)
                .map(|b| (TotalOrder(f64::INFINITY), Reverse(b), 0))
                .collect(),
            latest: vec![0; bins],
        }
    }

    /// Drops the stale entries on top, and those of bins at their caps.
    fn settle(&mut self, samples: &[u64], caps: &[u64]) {
        while let Some(&(_, Reverse(b), entry)) = self.heap.peek() {
            if entry == self.latest[b] && samples[b] < caps[b] {
                return;
            }
            self.heap.pop();
        }
    }

    /// The best gain of a bin below its cap.
    fn best(&mut self, samples: &[u64], caps: &[u64]) -> Option<f64> {
        self.settle(samples, caps);
        self.heap.peek().map(|&(gain, _, _)| gain.0)
    }

    /// The best bin below its cap, its entry taken out (`set` puts its next one in).
    fn take_best(&mut self, samples: &[u64], caps: &[u64]) -> Option<usize> {
        self.settle(samples, caps);
        let (_, Reverse(b), _) = self.heap.pop()?;
        self.latest[b] += 1;
        Some(b)
    }

    fn set(&mut self, b: usize, gain: f64) {
        self.latest[b] += 1;
        self.heap
            .push((TotalOrder(gain), Reverse(b), self.latest[b]));
    }
}

/// How many projections a fill from a guess makes one sample at a time before it jumps
/// (`fill_and_trim`): its first step computes every bin's gain (`bins` projections). The
/// longest such fills of the bundled sample's plans made 122 at K = 22 and 108 at K = 16
/// (paces 244 and 232), the flows' 85 at K = 13 (226), the cliff case's 517 at K = 489
/// (1,178): none jumps.
pub(super) fn fill_pace(bins: usize) -> u64 {
    2 * bins as u64 + 200
}

/// One fewer sample wherever the target still holds, the most sampled bins first, until no
/// single sample can go. A bin goes down past one miss: the bias is not monotone, so two
/// fewer may meet where one fewer misses.
/// Bin `kept`, when given, keeps its samples.
pub(super) fn trim(
    listed: &ListedRows,
    samples: Vec<u64>,
    kept: Option<usize>,
    target_pct: f64,
) -> Vec<u64> {
    trim_rounds(listed, samples, kept, target_pct, None)
}

/// `trim`, stopped after `rounds` rounds when given: after a fill that jumped, the rounds
/// after the first take a sample or two of thousands for two projections per bin each (at
/// K = 430 on a 20,000-row `--compare` pair at 0.1%: 4,852, then 4,851, then 4,851 again, 860
/// projections a round).
fn trim_rounds(
    listed: &ListedRows,
    mut samples: Vec<u64>,
    kept: Option<usize>,
    target_pct: f64,
    rounds: Option<usize>,
) -> Vec<u64> {
    for _ in 0..rounds.unwrap_or(usize::MAX) {
        // The cursor follows `samples` a bin at a time from here.
        listed.move_to(&samples);
        let mut order: Vec<usize> = (0..samples.len())
            .filter(|&b| samples[b] > listed.least[b] && Some(b) != kept)
            .collect();
        order.sort_by(|&a, &b| samples[b].cmp(&samples[a]).then(a.cmp(&b)));
        let mut trimmed = false;
        for b in order {
            // Down from one fewer, the lowest that meets kept, until two in a row miss.
            let had = samples[b];
            let (mut fewest, mut misses) = (had, 0);
            for m in (listed.least[b]..had).rev() {
                listed.set(b, m);
                if listed.meets_here(target_pct) {
                    (fewest, misses) = (m, 0);
                } else {
                    misses += 1;
                    if misses == 2 {
                        break;
                    }
                }
            }
            samples[b] = fewest;
            listed.set(b, fewest);
            trimmed |= fewest < had;
        }
        if !trimmed {
            return samples;
        }
    }
    samples
}

/// The plans a greedy fill and trim cannot reach (one more sample in one bin letting several
/// go in others), found by trying each: one more sample in a bin, then the trim; kept when it
/// costs less, until no bin gives a cheaper plan. Each round costs about `K` trims, so it is
/// tried only while `K` times the plan's size stays within `POLISH_WORK` projections.
pub(super) fn polish(listed: &ListedRows, samples: &mut Vec<u64>, caps: &[u64], target_pct: f64) {
    let cost = |s: &[u64]| s.iter().sum::<u64>();
    while (samples.len() as u64) * cost(samples) <= POLISH_WORK {
        let cheaper = (0..samples.len())
            .filter(|&b| samples[b] < caps[b])
            .find_map(|b| {
                let mut more = samples.clone();
                more[b] += 1;
                let trimmed = trim(listed, more, Some(b), target_pct);
                (cost(&trimmed) < cost(samples)).then_some(trimmed)
            });
        match cheaper {
            // The bin given one more kept its samples through that trim: now it may lose one.
            Some(found) => *samples = trim(listed, found, None, target_pct),
            None => return,
        }
    }
}

/// The most projections (bins times planned iterations) a plan's polish may cost per round.
pub(super) const POLISH_WORK: u64 = 20_000;

/// The largest plan (iterations) the target search also builds up from one sample per
/// SeqPoint: that start costs a projection per sample, so on plans of tens of thousands of
/// iterations (a 0.01% target on a large run) it would take minutes for the last few samples.
pub(super) const FROM_ONES_LIMIT: u64 = 5_000;

/// The most bin reads (`K` times the plan's iterations) for which the target search also
/// builds up from one sample per SeqPoint: that start costs about ten projections of `K` bins
/// per planned sample. With `--compare` at a 0.1% target on 100,000 rows, the plans of
/// 2,600-2,900 iterations at K 410-441 took the search past eight minutes at `--max-bins 500`.
pub(super) const FROM_ONES_WORK: u64 = 100_000;

/// How many Ks, the cheapest by their greedy cost, the cheapest plan's search polishes. On
/// the bundled speech pair the polish took the plan from 89 iterations to 82 when it was
/// added (80 now that the picks no longer lean early), found among the four cheapest; it
/// costs about a tenth of a second per K there.
pub(super) const POLISHED_KS: usize = 6;

/// Whether a worst 95% half-width (in percent) meets `target_pct` (`stats::meets_target`).
pub(super) fn within_target(worst_pct: f64, target_pct: f64) -> bool {
    crate::stats::meets_target(worst_pct, target_pct)
}

#[cfg(test)]
mod tests {
    use std::ops::ControlFlow;

    use super::super::cheapest_plan_counted;
    use super::super::rows::{representative_caps, strata_groups, BinCandidates};
    use super::{fill_and_trim, fill_pace, guess_samples, within_target, ListedRows, SearchWork};
    use crate::runlog::RunLog;
    use crate::select::{run_selection, BinCount, SelectOptions, StrataGroups};
    use crate::stats::half_width_pct;

    /// splitmix64's finalizer: a fixed hash, so the logs and the test are deterministic.
    fn mix(x: u64) -> u64 {
        let h = x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        let h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        h ^ (h >> 31)
    }

    /// The cliff case's shape at `rows` rows: keys uniform on 1..=490 (the low bits of the
    /// row's hash), time (a + b k) x U(1 - spread, 1 + spread) (its high bits, after `seed`).
    fn shaped_log(rows: u64, (a, b, spread): (f64, f64, f64), seed: u64) -> RunLog {
        let mut text = String::from("seq_len,time_ms\n");
        for i in 1..=rows {
            let key = 1 + mix(i) % 490;
            let u = (mix(i ^ (seed << 40)) >> 11) as f64 / (1u64 << 53) as f64;
            let time = (a + b * key as f64) * (1.0 - spread + 2.0 * spread * u);
            text.push_str(&format!("{key},{time:.6}\n"));
        }
        crate::runlog::test_log(&text)
    }

    /// The cliff case: time (3 + 0.05 k) x U(0.97, 1.03).
    fn cliff_log(rows: u64) -> RunLog {
        shaped_log(rows, (3.0, 0.05, 0.03), 0)
    }

    /// The most projections one search may make at `max_bins`: `10 + 8 K` (see below).
    fn bound(max_bins: usize) -> u64 {
        10 + 8 * max_bins as u64
    }

    /// What the cheapest plan's search for `target_pct` costs with `--max-bins max_bins`.
    fn work_at(log: &RunLog, max_bins: usize, target_pct: f64) -> SearchWork {
        let options = SelectOptions {
            max_bins,
            ..SelectOptions::default()
        };
        let strata = StrataGroups::for_options(log, &options).unwrap();
        let mut work = SearchWork::default();
        let mut go_on = |_, _| ControlFlow::Continue(());
        let found =
            cheapest_plan_counted(log, &strata, &options, target_pct, &mut go_on, &mut work);
        assert!(found.unwrap().is_some(), "never stopped");
        work
    }

    /// The cliff (`--target-error 0.01` on 500,000 rows: `--max-bins 300` 0.24 s, `--max-bins
    /// 500` over two minutes) was the search at the Ks with about a bin per key costing a
    /// projection or more per sample of its plan. A search's projections must be a few per bin
    /// instead: the caps check, up to three guesses, the fill from the guess, and the trim,
    /// whose rounds try each bin once more and stop two misses below its last hit. So the most
    /// projections any one search makes must stay within `10 + 8 K`, linear in `--max-bins` as
    /// it goes 100 -> 300 -> 500. Measured here: 6, 6 and 987 (K = 490, 2.0 per bin; on another
    /// draw of the same shape 1,988 at K = 488, 4.1 per bin). The plans at K 488-490 hold
    /// 30,306-44,823 samples: the search that also built up from one sample per SeqPoint on
    /// plans that large (before `FROM_ONES_LIMIT`) made 90,667 projections at K = 488 (186 per
    /// bin, 23 times the bound; 445,778 in all at `--max-bins 500`, against 8,832 now), and
    /// before running sums each of those read every planned sample. The polish, which can try
    /// a trim per bin, never runs on plans this large (`POLISH_WORK`).
    #[test]
    fn a_search_costs_a_few_projections_per_bin_whatever_its_plans_size() {
        let log = cliff_log(50_000);
        for max_bins in [100, 300, 500] {
            let work = work_at(&log, max_bins, 0.01);
            let bound = bound(max_bins);
            assert!(
                work.largest <= bound,
                "--max-bins {max_bins}: one search made {} projections, over 10 + 8 K = {bound} \
                 ({work:?})",
                work.largest
            );
            // Every K up to `--max-bins` (490 keys here) is costed once, a few polished.
            assert!(work.searches >= max_bins.min(490) as u64, "{work:?}");
            assert!(work.projections <= work.searches * work.largest, "{work:?}");
        }
    }

    /// The same bound with `--compare`: on a 20,000-row pair of this shape, `--target-error
    /// 0.1 --max-bins 500` makes 2,800-12,800-sample plans at K 385-490. Each of those
    /// searches also built up from one sample per SeqPoint, 26,590-28,424 projections each
    /// (3,515,862 in all, 247 s in a release build) until `FROM_ONES_WORK` gated that start
    /// (947,655 in all); then the fill from the guess, which leaves the speedup's bias out,
    /// still added 5,000-9,500 samples one at a time at K 385-430, 15,392 projections in one
    /// search. Now that fill jumps past its pace (`fill_pace`): 2,826 at most in one search,
    /// 235,211 in all.
    #[test]
    fn a_compare_search_costs_a_few_projections_per_bin_whatever_its_plans_size() {
        let baseline = shaped_log(20_000, (3.0, 0.05, 0.03), 1);
        let new = shaped_log(20_000, (2.0, 0.03, 0.05), 2);
        let log = crate::runlog::with_compare(baseline, new).unwrap();
        for max_bins in [100, 300, 500] {
            let work = work_at(&log, max_bins, 0.1);
            assert!(
                work.largest <= bound(max_bins),
                "--max-bins {max_bins}: {work:?}"
            );
        }
    }

    /// The fill at its pace (`fill_pace`, then jumps) against the fill one sample at a time,
    /// from the same guess, on the 20,000-row pair above at 0.1%: where the guess falls
    /// thousands short (K 390, 395, 430) the paced fill jumps and ends on a plan meeting the
    /// target, no larger (8,558 / 12,131 / 4,713 iterations against 11,871 / 12,716 / 8,428),
    /// within the projections' bound (1,846-2,047 against 10,836-15,270); where the guess is
    /// near (K 470) it never jumps and is the same plan at the same cost. Not at every K:
    /// the jump's one round of trim can leave a few samples the slow fill does not (K 435:
    /// 4,615 against 4,555; K 440: 3,379 against 3,375).
    #[test]
    fn a_paced_fill_meets_the_target_with_no_larger_plan_than_one_sample_at_a_time() {
        let baseline = shaped_log(20_000, (3.0, 0.05, 0.03), 1);
        let new = shaped_log(20_000, (2.0, 0.03, 0.05), 2);
        let log = crate::runlog::with_compare(baseline, new).unwrap();
        let target = 0.1;
        for (k, jumps) in [(390, true), (395, true), (430, true), (470, false)] {
            let options = SelectOptions {
                bins: BinCount::Fixed(k),
                ..SelectOptions::default()
            };
            let selection = super::super::plans_selection_at(&log, &options, k);
            let groups = strata_groups(&log, &options).unwrap();
            let seqpoints = &selection.seqpoints;
            let caps: Vec<u64> = BinCandidates::of_each(&log, &groups, seqpoints, options.warmup)
                .iter()
                .map(|c| c.count() as u64 + 1)
                .collect();
            let caps = representative_caps(seqpoints, &caps);
            let listed = ListedRows::new(&log, seqpoints, &caps);
            let guess = guess_samples(&listed, &vec![1; caps.len()], &caps, target);
            let spent = |from: u64| listed.work().projections - from;
            let before = listed.work().projections;
            let one_at_a_time = fill_and_trim(&listed, guess.clone(), &caps, target, None);
            let slow = spent(before);
            let before = listed.work().projections;
            let pace = Some(fill_pace(caps.len()));
            let paced = fill_and_trim(&listed, guess, &caps, target, pace);
            let fast = spent(before);
            let (one_at_a_time, paced) = (one_at_a_time.unwrap(), paced.unwrap());
            let cost = |s: &[u64]| s.iter().sum::<u64>();
            let said = format!(
                "K {k}: one at a time {} in {slow} projections, paced {} in {fast}",
                cost(&one_at_a_time),
                cost(&paced)
            );
            assert!(within_target(listed.worst_pct(&paced), target), "{said}");
            assert!(cost(&paced) <= cost(&one_at_a_time), "{said}");
            assert!(fast <= bound(k), "{said}");
            if jumps {
                assert!(slow > bound(k) && fast < slow, "{said}");
            } else {
                assert_eq!((&paced, fast), (&one_at_a_time, slow), "{said}");
            }
        }
    }

    /// The running figures (`running`) read what every figure's parts read, step after step
    /// of a search that moves one bin at a time (the cursor, a bin tried and taken back
    /// between) or many (a jump), over far more steps than the sums take to be added up
    /// again: the same widest half-width to 1e-9 and the same verdict on the target, on a
    /// timed log alone and with `--compare`.
    #[test]
    fn the_running_figures_read_what_the_figures_parts_read() {
        let baseline = shaped_log(20_000, (3.0, 0.05, 0.03), 1);
        let new = shaped_log(20_000, (2.0, 0.03, 0.05), 2);
        let pair = crate::runlog::with_compare(baseline.clone(), new).unwrap();
        for (log, k) in [(&baseline, 40), (&pair, 40), (&pair, 200)] {
            let options = SelectOptions {
                bins: BinCount::Fixed(k),
                ..SelectOptions::default()
            };
            let selection = run_selection(log, &options).unwrap();
            let groups = strata_groups(log, &options).unwrap();
            let seqpoints = &selection.seqpoints;
            let caps: Vec<u64> = BinCandidates::of_each(log, &groups, seqpoints, options.warmup)
                .iter()
                .map(|c| c.count() as u64 + 1)
                .collect();
            let caps = representative_caps(seqpoints, &caps);
            let listed = ListedRows::new(log, seqpoints, &caps);
            let whole = |s: &[u64]| {
                listed
                    .figures(s)
                    .iter()
                    .map(|p| half_width_pct(p.value, p.variance(s)))
                    .fold(0.0, f64::max)
            };
            let mut samples = vec![1u64; caps.len()];
            listed.move_to(&samples);
            for step in 0..20 * k as u64 {
                let h = mix(step + 1000 * k as u64);
                let running = if h.is_multiple_of(50) {
                    // A jump: every bin anywhere within its caps.
                    for (b, s) in samples.iter_mut().enumerate() {
                        *s = 1 + mix(h ^ b as u64) % caps[b];
                    }
                    listed.worst_pct(&samples)
                } else {
                    // A step of the cursor, as a fill or a trim moves it: a bin tried and
                    // taken back (read, or not), then the step.
                    let b = (h >> 8) as usize % caps.len();
                    let other = (h >> 20) as usize % caps.len();
                    listed.set(other, caps[other]);
                    if (h >> 30).is_multiple_of(2) {
                        listed.worst_pct_here();
                    }
                    listed.set(other, samples[other]);
                    let up = !(h >> 40).is_multiple_of(3);
                    samples[b] = if up {
                        (samples[b] + 1).min(caps[b])
                    } else {
                        (samples[b] - 1).max(1)
                    };
                    listed.set(b, samples[b]);
                    listed.worst_pct_here()
                };
                assert!(
                    listed.reading.borrow().running.is_some(),
                    "K {k}: the figures follow"
                );
                let expected = whole(&samples);
                let said = format!("K {k}, step {step}: running {running}, whole {expected}");
                assert!((running - expected).abs() <= 1e-9 * expected, "{said}");
                for target in [0.5 * expected, expected * (1.0 + 1e-6), 2.0 * expected] {
                    let verdict = listed.meets(&samples, target);
                    assert_eq!(
                        verdict,
                        within_target(expected, target),
                        "{said} at {target}"
                    );
                }
            }
        }
    }
}
