//! What the fast path's block parsers share: which field feeds which column, where a block's rows
//! go, what a block found, and one value stored as the careful reader checks it. Anything unusual
//! is an `Anomaly`, and the caller re-reads the file with the careful reader so messages stay exact.

use crate::runlog::columns::ColumnPlan;
use crate::runlog::parse::{parse_count, parse_length, parse_metric};

/// The block cannot be read the fast way; the careful reader decides (and words any error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Anomaly;

/// What one column of the input feeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Skip,
    Iteration,
    Epoch,
    Key(usize),
    Metric(usize),
}

/// Which field feeds which column, resolved once per file.
#[derive(Debug, Clone)]
pub struct Layout {
    pub roles: Vec<Role>,
    pub dims: usize,
    pub metrics: usize,
    pub has_iteration: bool,
    pub has_epoch: bool,
}

impl Layout {
    /// `None` when one field plays two parts (e.g. `--metric seq_len`) or a key is derived:
    /// the careful reader handles those.
    pub fn new(plan: &ColumnPlan, fields: usize) -> Option<Layout> {
        // Keys derived from doc_lens lists are the careful reader's: a list is no number.
        if plan.derived.iter().any(Option::is_some) {
            return None;
        }
        let mut roles = vec![Role::Skip; fields];
        let mut assign = |index: usize, role: Role| -> Option<()> {
            let slot = roles.get_mut(index)?;
            if *slot != Role::Skip {
                return None;
            }
            *slot = role;
            Some(())
        };
        if let Some(i) = plan.iteration {
            assign(i, Role::Iteration)?;
        }
        if let Some(e) = plan.epoch {
            assign(e, Role::Epoch)?;
        }
        for (slot, &k) in plan.keys.iter().enumerate() {
            assign(k, Role::Key(slot))?;
        }
        for (slot, &m) in plan.metrics.iter().enumerate() {
            assign(m, Role::Metric(slot))?;
        }
        Some(Layout {
            roles,
            dims: plan.keys.len(),
            metrics: plan.metrics.len(),
            has_iteration: plan.iteration.is_some(),
            has_epoch: plan.epoch.is_some(),
        })
    }
}

impl Layout {
    /// Bytes of columns one row takes (keys and metrics).
    pub fn row_bytes(&self) -> u64 {
        4 * self.dims as u64 + 8 * self.metrics as u64
    }
}

/// Where a block's rows go: slices of the final columns, sized by the block's line count.
pub struct BlockOut<'a> {
    pub keys: &'a mut [u32],
    pub metrics: Vec<&'a mut [f64]>,
    /// Only when iteration numbers are not evenly spaced and must be listed.
    pub iterations: Option<&'a mut [u64]>,
}

impl BlockOut<'_> {
    pub(super) fn capacity(&self, dims: usize) -> usize {
        self.keys.len() / dims.max(1)
    }
}

/// Iteration numbers seen in a block: enough to tell whether they are evenly spaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IterationTrack {
    pub first: Option<u64>,
    pub last: u64,
    pub step: Option<u64>,
    pub spaced: bool,
    pub increasing: bool,
}

impl IterationTrack {
    pub fn new() -> Self {
        IterationTrack {
            first: None,
            last: 0,
            step: None,
            spaced: true,
            increasing: true,
        }
    }

    #[inline]
    pub fn push(&mut self, value: u64) {
        if self.first.is_none() {
            self.first = Some(value);
        } else {
            if value <= self.last {
                self.increasing = false;
            }
            let gap = value.wrapping_sub(self.last);
            match self.step {
                None => self.step = Some(gap),
                Some(step) if step != gap => self.spaced = false,
                Some(_) => {}
            }
        }
        self.last = value;
    }

    /// Continue this track with the next block's.
    pub fn absorb(&mut self, next: &IterationTrack) {
        let Some(first) = next.first else { return };
        if self.first.is_none() {
            *self = *next;
            return;
        }
        self.push(first);
        if let Some(step) = next.step {
            match self.step {
                Some(s) if s != step => self.spaced = false,
                _ => {}
            }
        }
        self.spaced &= next.spaced;
        self.increasing &= next.increasing;
        self.last = next.last;
    }
}

/// What a block found besides its column values.
#[derive(Debug, Clone, Default)]
pub struct BlockStats {
    pub rows: usize,
    pub iterations: IterationTrack,
    /// `(epoch, rows)` runs.
    pub epochs: Vec<(u32, usize)>,
}

impl BlockStats {
    pub fn new() -> Self {
        BlockStats {
            rows: 0,
            iterations: IterationTrack::new(),
            epochs: Vec::new(),
        }
    }

    #[inline]
    fn push_epoch(&mut self, epoch: u32) {
        match self.epochs.last_mut() {
            Some((e, n)) if *e == epoch => *n += 1,
            _ => self.epochs.push((epoch, 1)),
        }
    }
}

/// One parsed value, already checked as the careful reader checks it.
pub(super) enum Value {
    Count(u64),
    Length(u32),
    Metric(f64),
}

/// Parse one field the careful way (the reader's own functions: same values, same rules).
pub(super) fn careful_value(raw: &[u8], role: Role) -> Result<Value, Anomaly> {
    match role {
        Role::Iteration | Role::Epoch => parse_count(raw).map(Value::Count),
        Role::Key(_) => parse_length(raw).map(Value::Length),
        Role::Metric(_) => parse_metric(raw).map(Value::Metric),
        Role::Skip => Ok(Value::Count(0)),
    }
    .map_err(|_| Anomaly)
}

pub(super) struct RowValues {
    pub(super) iteration: u64,
    pub(super) epoch: u32,
}

/// Store one field's value in its column.
#[inline(always)]
pub(super) fn store(
    value: Value,
    role: Role,
    row: usize,
    dims: usize,
    out: &mut BlockOut<'_>,
    current: &mut RowValues,
) -> Result<(), Anomaly> {
    match (role, value) {
        (Role::Iteration, Value::Count(v)) => current.iteration = v,
        (Role::Epoch, Value::Count(v)) => current.epoch = u32::try_from(v).map_err(|_| Anomaly)?,
        (Role::Key(slot), Value::Length(v)) => out.keys[row * dims + slot] = v,
        (Role::Metric(slot), Value::Metric(v)) => out.metrics[slot][row] = v,
        _ => return Err(Anomaly),
    }
    Ok(())
}

/// Finish a row: iteration and epoch bookkeeping.
#[inline(always)]
pub(super) fn end_row(
    layout: &Layout,
    stats: &mut BlockStats,
    current: &RowValues,
    out: &mut BlockOut<'_>,
) {
    if layout.has_iteration {
        stats.iterations.push(current.iteration);
        if let Some(list) = out.iterations.as_deref_mut() {
            list[stats.rows] = current.iteration;
        }
    }
    if layout.has_epoch {
        stats.push_epoch(current.epoch);
    }
    stats.rows += 1;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn track_tells_spaced_from_gapped_iterations() {
        let mut a = IterationTrack::new();
        for v in [0, 2, 4] {
            a.push(v);
        }
        let mut b = IterationTrack::new();
        for v in [6, 8] {
            b.push(v);
        }
        let mut whole = a;
        whole.absorb(&b);
        assert!(whole.spaced && whole.increasing);
        assert_eq!((whole.first, whole.last, whole.step), (Some(0), 8, Some(2)));
        let mut c = IterationTrack::new();
        c.push(11);
        whole.absorb(&c);
        assert!(!whole.spaced && whole.increasing);
        let mut d = IterationTrack::new();
        d.push(3);
        whole.absorb(&d);
        assert!(!whole.increasing);
    }
}
