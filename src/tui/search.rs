//! `/`: where an iteration or a key stands among the SeqPoints. Any iteration of the log is
//! found, not only the profiled ones: the SeqPoint whose bin holds it (its key group, in its
//! stratum). `n` / `N` step through the matches of the last search. A plain function of the
//! shown result and the typed text, so the keys only move the table's selection.

use crate::groups::key_text;
use crate::pick::SeqPoint;
use crate::tui::app::{App, Overlay, Status};

/// What a search found: the SeqPoints it matches (indices into the selection, in the
/// table's order) and the sentence that says where.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub seqpoints: Vec<usize>,
    pub said: String,
}

/// The SeqPoints `wanted` matches, or why none does.
///
/// A number is first an iteration: the SeqPoint profiling it (the pick, an alternate or a
/// plan's further sample), else the one whose bin holds it. Otherwise, or when the log has no
/// such iteration, a key: the SeqPoints whose bins hold it, else those whose key reads like it.
pub fn find(app: &App, wanted: &str) -> Result<Found, String> {
    let wanted = wanted.trim();
    if wanted.is_empty() {
        return Err("type an iteration or a key to find".into());
    }
    let Some(shown) = app.current_shown().or(app.shown.as_ref()) else {
        return Err("nothing on screen yet to search".into());
    };
    let seqpoints = &shown.selection.seqpoints;
    let order = app.row_order();
    let in_order = |test: &dyn Fn(usize, &SeqPoint) -> bool| -> Vec<usize> {
        order
            .iter()
            .copied()
            .filter(|&i| test(i, &seqpoints[i]))
            .collect()
    };
    let log = &app.session.log;
    if let Ok(n) = wanted.parse::<u64>() {
        let picked = in_order(&|_, sp| sp.iteration == n);
        if let Some(&i) = picked.first() {
            let said = format!("iteration {n}: SeqPoint {} profiles it", seqpoints[i].id);
            return Ok(Found {
                seqpoints: picked,
                said,
            });
        }
        let planned = in_order(&|i, sp| {
            sp.alternates.contains(&n)
                || shown
                    .planned_iterations(log, i)
                    .is_some_and(|its| its.contains(&n))
        });
        if let Some(&i) = planned.first() {
            let said = format!(
                "iteration {n}: listed for SeqPoint {} (an alternate or a further sample)",
                seqpoints[i].id
            );
            return Ok(Found {
                seqpoints: planned,
                said,
            });
        }
        if let Some(row) = log.iterations.row_of(n) {
            return in_bin(app, seqpoints, &order, n, row);
        }
    }
    let key: Option<Vec<u32>> = wanted
        .split(',')
        .map(|part| part.trim().parse::<u32>().ok())
        .collect();
    if let Some(key) = key.filter(|k| k.len() == log.dims()) {
        let holding = bins_holding(app, seqpoints, &order, &key, None);
        if let Some(&i) = holding.first() {
            let said = format!(
                "key {}: in the bin of SeqPoint {}{}",
                key_text(&key),
                seqpoints[i].id,
                more(holding.len())
            );
            return Ok(Found {
                seqpoints: holding,
                said,
            });
        }
    }
    let like = in_order(&|_, sp| key_text(&sp.key).contains(wanted));
    if let Some(&i) = like.first() {
        let said = format!(
            "{wanted:?}: SeqPoint {}'s key {}{}",
            seqpoints[i].id,
            key_text(&seqpoints[i].key),
            more(like.len())
        );
        return Ok(Found {
            seqpoints: like,
            said,
        });
    }
    let span = match log.len() {
        0 => String::new(),
        len => format!(
            " (iterations {}-{})",
            log.iteration(0),
            log.iteration(len - 1)
        ),
    };
    Err(format!(
        "{wanted:?}: no iteration of the log{span} and no key like it"
    ))
}

/// ` (3 matches: n / N)` when there is more than one.
fn more(count: usize) -> String {
    if count > 1 {
        format!(" ({count} matches: n / N)")
    } else {
        String::new()
    }
}

/// The SeqPoint whose bin holds the iteration of `row`: its key group in its own stratum; an
/// excluded iteration has none, and is placed by its key as `project` counts it.
fn in_bin(
    app: &App,
    seqpoints: &[SeqPoint],
    order: &[usize],
    n: u64,
    row: usize,
) -> Result<Found, String> {
    let strata = &app.session.strata;
    let key = app.session.log.key(row);
    let own = strata.groups.iter().enumerate().find_map(|(s, groups)| {
        let g = groups.group_of(key)?;
        groups.rows_of(g).contains(&(row as u32)).then_some(s)
    });
    let holding = bins_holding(app, seqpoints, order, key, own);
    let Some(&i) = holding.first() else {
        return Err(format!(
            "iteration {n} (key {}) is in no bin: left out by :exclude",
            key_text(key)
        ));
    };
    let sp = &seqpoints[i];
    let bin = format!("{}-{}", key_text(&sp.bin_min), key_text(&sp.bin_max));
    let how = if own.is_some() {
        "falls in"
    } else {
        "is excluded; its key is in"
    };
    Ok(Found {
        seqpoints: vec![i],
        said: format!(
            "iteration {n} (key {}) {how} SeqPoint {}'s bin {bin}, which profiles iteration {}",
            key_text(key),
            sp.id,
            sp.iteration
        ),
    })
}

/// The SeqPoints whose bins hold `key` (in `stratum` only, when given), in table order.
fn bins_holding(
    app: &App,
    seqpoints: &[SeqPoint],
    order: &[usize],
    key: &[u32],
    stratum: Option<usize>,
) -> Vec<usize> {
    let strata = &app.session.strata;
    order
        .iter()
        .copied()
        .filter(|&i| {
            let sp = &seqpoints[i];
            let s = sp.stratum.unwrap_or(0);
            stratum.is_none_or(|want| want == s)
                && strata
                    .groups
                    .get(s)
                    .and_then(|groups| groups.group_of(key))
                    .is_some_and(|g| sp.bin.groups.contains(&g))
        })
        .collect()
}

/// Enter on `/`: select the first match and say where it is; a failed search closes the
/// prompt and says why on the same line.
pub fn submit(app: &mut App) {
    let Overlay::Search(prompt) = &app.overlay else {
        return;
    };
    let wanted = prompt.input.trim().to_string();
    app.overlay = Overlay::None;
    match find(app, &wanted) {
        Ok(found) => {
            app.search = Some(wanted);
            select(app, found.seqpoints[0]);
            app.status = Some(Status {
                text: found.said,
                error: false,
            });
        }
        Err(why) => {
            app.status = Some(Status {
                text: why,
                error: true,
            });
        }
    }
}

/// `n` / `N`: the next (or previous) match of the last search after the selected row,
/// round the table's end.
pub fn step(app: &mut App, forward: bool) {
    let Some(wanted) = app.search.clone() else {
        app.status = Some(Status {
            text: "no search yet: / finds an iteration or a key".into(),
            error: true,
        });
        return;
    };
    let found = match find(app, &wanted) {
        Ok(found) => found,
        Err(why) => {
            app.status = Some(Status {
                text: why,
                error: true,
            });
            return;
        }
    };
    let order = app.row_order();
    let rows: Vec<usize> = found
        .seqpoints
        .iter()
        .filter_map(|&i| order.iter().position(|&o| o == i))
        .collect();
    let at = app.table.selected().unwrap_or(0);
    let next = if forward {
        rows.iter()
            .copied()
            .find(|&r| r > at)
            .or(rows.first().copied())
    } else {
        rows.iter()
            .rev()
            .copied()
            .find(|&r| r < at)
            .or(rows.last().copied())
    };
    let Some(next) = next else { return };
    app.table.select(Some(next));
    let place = rows.iter().position(|&r| r == next).unwrap_or(0) + 1;
    app.status = Some(Status {
        text: format!("{wanted}: match {place} of {}", rows.len()),
        error: false,
    });
}

/// Select SeqPoint `index` in the table, whatever its row.
fn select(app: &mut App, index: usize) {
    if let Some(row) = app.row_order().iter().position(|&i| i == index) {
        app.table.select(Some(row));
    }
}
