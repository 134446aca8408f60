//! The projection panel: projected against actual per configuration and metric, error and
//! 95% interval (over the target: bold, and red with colour), speedup, profiling reduction.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Paragraph, Row, Table};
use ratatui::Frame;

use super::cut_line;
use super::theme::Theme;
use crate::groups::key_text;
use crate::output::table::{cost_line, luck_note, plan_shortfall, rule_text};
use crate::project::Projection;
use crate::runlog::ConfigRole;
use crate::select::plan::{PlanRule, ProfilePlan};
use crate::select::{Advice, MoreBins, Selection, TargetRule};
use crate::text::numbers::{readable, share};
use crate::tui::app::{App, Shown};

/// A percentage for the table, flagged with `!` when over the target.
fn pct_cell(value: Option<f64>, target: f64, t: &Theme) -> Cell<'static> {
    match value {
        None => number("-".into()),
        // A figure the data cannot bound (`estimate::CANNOT_BOUND`): no number to show.
        Some(v) if !v.is_finite() => number("none!".into()).style(t.bad()),
        Some(v) if v > target => number(format!("{v:.2}!")).style(t.bad()),
        // A space where the `!` would be keeps the decimals aligned.
        Some(v) => number(format!("{v:.2} ")),
    }
}

/// Numbers right-aligned, so their digits line up.
fn number(text: String) -> Cell<'static> {
    Cell::from(Line::from(text).right_aligned())
}

/// Rows the panel needs for its numbers: the table, the profiling line and the verdict.
pub fn needed_height(app: &App) -> u16 {
    let rows = app.shown.as_ref().map_or(3, |s| {
        s.projection().totals.len() + s.projection().speedups.len()
    });
    // Borders, the table's heading and rows, two summary lines.
    2 + 1 + rows as u16 + 2
}

/// `narrow`: the error curve is not on screen (under 80 columns): the border says so.
pub fn render(frame: &mut Frame, area: Rect, app: &App, t: &Theme, narrow: bool) {
    let stale = app.current().is_none();
    let title = if stale && app.shown.is_some() {
        " Projection (updating…) "
    } else {
        " Projection "
    };
    let mut block = Block::bordered().title(Span::styled(title, t.title()));
    let inner = block.inner(area);
    let Some(shown) = &app.shown else {
        frame.render_widget(block, area);
        frame.render_widget(Paragraph::new("computing…").style(t.dim()), inner);
        return;
    };
    let selection = &shown.selection;
    let target = app.settings.target_pct;
    let rows = table_rows(app, shown.projection(), target, t);
    let width = inner.width as usize;
    let summary_lines = summary(app, shown, t);
    let table_height = (rows.len() as u16 + 1).min(inner.height);
    let room = inner.height.saturating_sub(table_height) as usize;
    // Lines that fit; a cut line ends with `…`, and the border says where the rest is.
    let (summary_lines, cut) = fit(summary_lines, width, room, t);
    let mut notes = Vec::new();
    if cut {
        notes.push(Span::styled(" i", t.key()));
        notes.push(Span::styled(" in full ", t.dim()));
    }
    if narrow {
        notes.push(Span::styled(" error curve from 80 columns ", t.dim()));
    }
    if !notes.is_empty() {
        block = block.title_bottom(Line::from(notes).right_aligned());
    }
    frame.render_widget(block, area);
    let summary_height = summary_lines.len() as u16;
    let [table_area, summary_area, list_area] = Layout::vertical([
        Constraint::Length(table_height),
        Constraint::Length(summary_height),
        Constraint::Fill(1),
    ])
    .areas(inner);
    let names = app.session.log.metric_names();
    let first = if names.len() == 1 {
        names[0].clone()
    } else {
        String::new()
    };
    let header = Row::new([
        Cell::from(first),
        number("projected".into()),
        number("actual".into()),
        number("err %".into()),
        // Six cells: `+/-95%` in ASCII.
        number(if t.ascii { "+/-95%" } else { "±95 %" }.into()),
    ])
    .style(t.dim());
    let table = Table::new(
        rows,
        [
            // Totals print in at most 9 characters (`readable`), percentages in 6 with the
            // mark.
            Constraint::Fill(1),
            Constraint::Length(9),
            Constraint::Length(9),
            Constraint::Length(6),
            Constraint::Length(6),
        ],
    )
    .header(header)
    .column_spacing(1);
    frame.render_widget(table, table_area);
    frame.render_widget(Paragraph::new(summary_lines), summary_area);
    if list_area.height >= 4 {
        seqpoint_list(frame, list_area, app, selection, t);
    }
}

/// `lines` within `width` x `height`, the first lines first: a line wraps onto the rows the
/// lines after it leave spare, else it ends with `…`; when lines are left out, the last one
/// shown ends with `[i]` (`i` shows them all). Also says whether anything was cut.
fn fit(
    lines: Vec<Line<'static>>,
    width: usize,
    height: usize,
    t: &Theme,
) -> (Vec<Line<'static>>, bool) {
    let total = lines.len();
    let mut cut = total > height;
    let mut shown: Vec<Line> = Vec::new();
    for (i, line) in lines.into_iter().take(height).enumerate() {
        // Rows the lines after this one need, one each.
        let after = total.min(height) - i - 1;
        let spare = height - shown.len() - after;
        let rows = super::wrap_line(&line, width);
        if rows.len() <= spare {
            shown.extend(rows);
        } else {
            cut |= line.width() > width;
            shown.push(cut_line(line, width));
        }
    }
    if total > height {
        if let Some(last) = shown.pop() {
            let mut last = cut_line(last, width.saturating_sub(4));
            last.spans.push(Span::styled(" [i]", t.key()));
            shown.push(last);
        }
    }
    (shown, cut)
}

/// On a tall terminal, the iterations to profile right under their projection.
/// On a tall terminal, the iterations to profile right under their projection; the selected
/// one (↑↓) is marked and kept in view.
fn seqpoint_list(frame: &mut Frame, area: Rect, app: &App, selection: &Selection, t: &Theme) {
    let seqpoints = &selection.seqpoints;
    let total: u64 = seqpoints.iter().map(|s| s.weight).sum();
    let room = area.height as usize - 1;
    let cut = seqpoints.len() > room;
    let visible = if cut { room - 1 } else { seqpoints.len() };
    let selected = app.selected_seqpoint();
    let first = selected.map_or(0, |s| (s + 1).saturating_sub(visible));
    let rows: Vec<Row> = seqpoints
        .iter()
        .enumerate()
        .skip(first)
        .take(visible)
        .map(|(i, sp)| {
            let row = Row::new([
                number(sp.iteration.to_string()),
                number(key_text(&sp.key)),
                number(super::count(sp.weight)),
                // Never "0.0" for a bin that holds iterations (`<0.1`), as in the table.
                number(share(100.0 * sp.weight as f64 / total.max(1) as f64, 1)),
            ]);
            if Some(i) == selected {
                row.style(t.selected())
            } else {
                row
            }
        })
        .collect();
    let header = Row::new([
        number("iteration".into()),
        number("key".into()),
        number("weight".into()),
        number("share %".into()),
    ])
    .style(t.dim());
    let widths = [
        Constraint::Length(11),
        Constraint::Length(11),
        // A weight of ten million with its separators.
        Constraint::Length(10),
        Constraint::Length(8),
    ];
    frame.render_widget(Table::new(rows, widths).header(header), area);
    if cut {
        let last = Rect::new(area.x, area.bottom() - 1, area.width, 1);
        let more = format!(
            "… {} of {} shown · ↑↓ scroll · Tab: the table",
            visible,
            seqpoints.len()
        );
        frame.render_widget(
            Paragraph::new(super::cut(&more, area.width as usize)).style(t.dim()),
            last,
        );
    }
}

fn table_rows(app: &App, projection: &Projection, target: f64, t: &Theme) -> Vec<Row<'static>> {
    let compare = app.session.log.configs.len() > 1;
    let metrics = app.session.log.metric_names().len();
    let mut rows: Vec<Row> = projection
        .totals
        .iter()
        .map(|row| {
            // One metric: it heads the table and the rows name the configurations.
            let label = match (metrics > 1, compare, row.config) {
                (false, _, ConfigRole::Baseline) => "baseline".to_string(),
                (false, _, ConfigRole::Compare) => "compare".to_string(),
                (true, false, _) => row.metric.clone(),
                (true, true, ConfigRole::Baseline) => format!("base {}", row.metric),
                (true, true, ConfigRole::Compare) => format!("cmp {}", row.metric),
            };
            Row::new([
                Cell::from(label),
                number(readable(row.projected)),
                number(row.actual.map_or("-".into(), readable)),
                pct_cell(row.error_pct, target, t),
                pct_cell(Some(row.half_width_pct), target, t),
            ])
        })
        .collect();
    for s in &projection.speedups {
        let half = (s.interval[1] - s.interval[0]) / 2.0;
        let label = if metrics > 1 {
            format!("speedup {}", s.metric)
        } else {
            "speedup".to_string()
        };
        rows.push(Row::new([
            Cell::from(label),
            number(format!("{:.4}", s.projected)),
            number(s.actual.map_or("-".into(), |a| format!("{a:.4}"))),
            pct_cell(s.error_pct, target, t),
            pct_cell(Some(100.0 * half / s.projected.abs()), target, t),
        ]));
    }
    rows
}

/// The summary under the table, one line each, most important first: what to profile, the
/// verdict, then each advice as the `:` command that follows it.
pub fn summary(app: &App, shown: &Shown, t: &Theme) -> Vec<Line<'static>> {
    t.lines(summary_lines(app, shown, t))
}

fn summary_lines(app: &App, shown: &Shown, t: &Theme) -> Vec<Line<'static>> {
    let selection = &shown.selection;
    let projection = shown.projection();
    // The cost in the words `select` prints.
    let mut lines = vec![Line::from(cost_line(
        &app.session.log,
        selection,
        projection,
        shown.iterations(),
    ))];
    if let Some(plan) = shown
        .plan
        .as_ref()
        .filter(|p| matches!(p.rule, PlanRule::Target(_)))
    {
        lines.extend(plan_verdict(app, selection, plan, t));
        if projection.proxy {
            lines.push(proxy_line(t));
        }
        return lines;
    }
    let rule = rule_text(app.session.base.target_by);
    let target = app.settings.target_pct;
    // A budget's plan is judged on the target by its own figures, as `select` judges it.
    let budget = match shown.plan.as_ref().map(|p| p.rule) {
        Some(PlanRule::Budget(b)) => Some(b),
        _ => None,
    };
    match (&selection.target, budget) {
        (Some(_), _) if shown.target_met() == Some(true) => {
            let by = budget.map_or(String::new(), |b| format!(" with a budget of {b}"));
            lines.push(Line::from(vec![
                Span::styled("✓ ", t.good()),
                Span::raw(format!("target {target}% met ({rule}){by}")),
            ]));
            // `select`'s own words when the error met it by luck (a wide interval).
            let note = luck_note(projection);
            if !note.is_empty() {
                lines.push(Line::styled(note.trim_end().to_string(), t.bad()));
            }
        }
        (Some(_), Some(b)) => {
            lines.push(Line::styled(
                format!(
                    "✗ target {target}% not met with a budget of {b}: error {:.2}%, {}",
                    projection.worst_error_pct(),
                    crate::output::table::plus_minus(projection.worst_half_width_pct(), 2)
                ),
                t.bad(),
            ));
            lines.extend(budget_advice_line(shown, t));
        }
        (Some(outcome), None) => match &outcome.advice {
            Some(advice) => {
                let best = &advice.best;
                lines.push(Line::styled(
                    format!(
                        "✗ target {target}% not met up to K = {}{}; best K = {}: error {:.2}%, {}",
                        advice.max_bins,
                        if advice.per_stratum {
                            " per stratum"
                        } else {
                            ""
                        },
                        best.k,
                        best.worst_error_pct,
                        crate::output::table::plus_minus(best.worst_half_width_pct, 2)
                    ),
                    t.bad(),
                ));
                lines.extend(advice_lines(advice, t));
            }
            None => lines.push(Line::styled(format!("✗ target {target}% not met"), t.bad())),
        },
        (None, _) => {
            let worst = projection
                .worst_error_pct()
                .max(match app.session.base.target_by {
                    TargetRule::Interval => projection.worst_half_width_pct(),
                    TargetRule::Measured => 0.0,
                });
            if worst <= target {
                lines.push(Line::from(vec![
                    Span::styled("✓ ", t.good()),
                    Span::raw(format!("within target {target}% ({rule})")),
                ]));
            } else {
                lines.push(Line::styled(
                    format!("✗ over target {target}% ({rule}): worst {worst:.2}%"),
                    t.bad(),
                ));
                lines.push(Line::from(vec![
                    Span::styled("  → a", t.key()),
                    Span::raw(" auto-K finds the smallest K that meets it"),
                ]));
            }
        }
    }
    if projection.proxy {
        lines.push(proxy_line(t));
    }
    lines
}

fn proxy_line(t: &Theme) -> Line<'static> {
    Line::styled(
        "no metric in the log: proxy cost, errors are proxy errors",
        t.dim(),
    )
}

/// The verdict on the target's plan, as `select` gives it: met with one sample per SeqPoint,
/// met with a plan (K bins x samples), or not met and the closest reached.
fn plan_verdict(
    app: &App,
    selection: &Selection,
    plan: &ProfilePlan,
    t: &Theme,
) -> Vec<Line<'static>> {
    // The plan's own target: while a new one is computed, the verdict shown stays its own.
    let target = match plan.rule {
        PlanRule::Target(t) => t,
        _ => app.settings.target_pct,
    };
    // With strata, K is per stratum (as the header says it), the bins in all beside it.
    let k = match per_stratum_k(selection) {
        Some(k) => format!("{k} per stratum ({} bins)", selection.bins()),
        None => selection.bins().to_string(),
    };
    let widest = plan.projection.worst_half_width_pct();
    if let Some(shortfall) = plan_shortfall(selection, plan) {
        return vec![Line::styled(
            format!("✗ target {target}% not met: {shortfall}"),
            t.bad(),
        )];
    }
    let most = plan.bins.iter().map(|b| b.samples()).max().unwrap_or(1);
    let how = if most == 1 {
        format!("K = {k}, one sample per SeqPoint")
    } else {
        format!(
            "a plan: K = {k} x 1-{most} samples = {} iterations",
            plan.iterations()
        )
    };
    vec![Line::from(vec![
        Span::styled("✓ ", t.good()),
        Span::raw(format!("target {target}% met (±{widest:.2}%) with {how}")),
    ])]
}

/// K per stratum when strata split the run: one K (`21`) or their range (`20-22`).
pub fn per_stratum_k(selection: &Selection) -> Option<String> {
    if selection.strata.len() <= 1 {
        return None;
    }
    let ks = selection.strata.iter().map(|o| o.k);
    let (least, most) = (ks.clone().min()?, ks.max()?);
    Some(if least == most {
        least.to_string()
    } else {
        format!("{least}-{most}")
    })
}

/// Each advice as the `:` command that follows it (the CLI's advice names the flags).
/// What meets the target a budget misses at this K, as the `:` command that follows it.
fn budget_advice_line(shown: &Shown, t: &Theme) -> Option<Line<'static>> {
    match shown.plan.as_ref()?.meeting_budget? {
        Some(b) => Some(Line::from(vec![
            Span::styled(format!("  → :budget {b}"), t.key()),
            Span::raw(" meets it at this K"),
        ])),
        None => Some(Line::styled(
            "  no budget meets it at this K".to_string(),
            t.dim(),
        )),
    }
}

fn advice_lines(advice: &Advice, t: &Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if let Some(samples) = advice.samples {
        lines.push(Line::from(vec![
            Span::styled(format!("  → :samples {samples}"), t.key()),
            Span::raw(format!(" profile about {samples} iterations per SeqPoint")),
        ]));
    }
    match advice.bins {
        MoreBins::Unneeded => {}
        MoreBins::Allow(max_bins) => lines.push(Line::from(vec![
            Span::styled(format!("  → :max-bins {max_bins}"), t.key()),
            Span::raw(" allow more bins"),
        ])),
        MoreBins::NoneUpTo(limit) => lines.push(Line::styled(
            format!("  no K up to {limit} meets it either"),
            t.dim(),
        )),
        MoreBins::CannotHelp(unique) => lines.push(Line::styled(
            format!("  every key has its own bin (K = {unique}): more bins cannot help"),
            t.dim(),
        )),
    }
    lines
}
