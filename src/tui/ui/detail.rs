//! A SeqPoint's detail (Enter on the table): its alternates, the iterations to profile
//! instead if the chosen one cannot be, and the key groups its bin stands for.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph, Row, Table};
use ratatui::Frame;

use super::table::{bin_text, column_decimals, column_number};
use super::theme::Theme;
use crate::groups::key_text;
use crate::text::numbers::{count, readable as num, share};
use crate::tui::app::{App, Overlay};

pub fn render(frame: &mut Frame, area: Rect, app: &mut App, t: &Theme) {
    let Overlay::Detail { scroll } = app.overlay else {
        return;
    };
    let (Some(index), Some(shown)) = (app.selected_seqpoint(), &app.shown) else {
        return;
    };
    let session = app.session;
    let selection = &shown.selection;
    let sp = &selection.seqpoints[index];
    let total: u64 = selection.seqpoints.iter().map(|s| s.weight).sum();
    let popup = area.centered(Constraint::Percentage(92), Constraint::Percentage(86));
    frame.render_widget(Clear, popup);
    let groups = &session.strata.groups[sp.stratum.unwrap_or(0)];
    // Worked out once, the first time a detail is opened (a gather of the metric by group).
    let medians = groups.medians(&session.log, 0, 0);
    let members = sp.bin.groups.len();
    // Rows left for key groups: the popup less borders, the about lines and the heading.
    let visible = popup.height.saturating_sub(2 + 6 + 1) as usize;
    let last_start = members.saturating_sub(visible);
    let scroll = scroll.min(last_start);
    app.overlay = Overlay::Detail { scroll };
    app.popup_rows = Some(visible.max(1));
    let position = if last_start > 0 {
        format!(
            " key groups {}–{} of {members} · ↑↓ scroll ·",
            scroll + 1,
            (scroll + visible).min(members)
        )
    } else {
        String::new()
    };
    let block = Block::bordered()
        .title(Span::styled(format!(" SeqPoint {} ", sp.id), t.title()))
        .title_bottom(Line::styled(format!("{position} Esc close "), t.dim()).right_aligned());
    let inner = block.inner(popup);
    frame.render_widget(block, popup);

    let key_names = session.log.key_names.join(",");
    // The plan's iterations for this SeqPoint, all of them: the plan profiles each.
    let planned = shown.planned_iterations(&session.log, index);
    let profiled = match &planned {
        Some(planned) if planned.len() > 1 => format!(
            "profile {} iterations (the plan's): {}",
            planned.len(),
            planned
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => format!("profile iteration {}", sp.iteration),
    };
    // Each profiled iteration's epoch: one "(epoch e)" after a list of several read as theirs.
    let epochs = match shown.planned_epochs(&session.log, index) {
        Some(epochs) if epochs.len() > 1 => format!(
            " (epochs {})",
            epochs
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => sp.epoch.map_or(String::new(), |e| format!(" (epoch {e})")),
    };
    let mut about = vec![
        Line::from(vec![
            Span::styled(profiled, t.strong()),
            Span::raw(epochs),
            Span::raw(format!(" · {key_names} {}", key_text(&sp.key))),
        ]),
        Line::raw(format!(
            "bin {} · {} key groups · weight {} ({}% of {}){}",
            bin_text(sp),
            count(sp.bin.groups.len() as u64),
            count(sp.weight),
            share(100.0 * sp.weight as f64 / total.max(1) as f64, 1),
            count(total),
            sp.stratum
                .map_or(String::new(), |s| format!(" · {}", session.strata.names[s])),
        )),
    ];
    let metric = session
        .log
        .metric_names()
        .first()
        .cloned()
        .unwrap_or_default();
    let alternates = if planned.as_ref().is_some_and(|p| p.len() > 1) {
        // The plan profiles several already: alternates stand in for any that cannot be.
        let rest: Vec<String> = sp
            .alternates
            .iter()
            .filter(|a| !planned.as_ref().is_some_and(|p| p.contains(a)))
            .map(u64::to_string)
            .collect();
        if rest.is_empty() {
            "none beyond the plan's".to_string()
        } else {
            rest.join(", ")
        }
    } else if sp.alternates.is_empty() {
        "none (no other iteration in this bin after warm-up)".to_string()
    } else {
        sp.alternates
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    about.push(Line::from(vec![
        Span::styled("alternates: ", t.dim()),
        Span::raw(alternates),
    ]));
    about.push(Line::styled(
        format!("the bin's key groups: iterations (iters) and {metric} per key group"),
        t.dim(),
    ));
    // Its logged values, every metric and configuration (the table may leave some out).
    let mut values = vec![Span::styled("logged: ", t.dim())];
    let names = session.log.metric_names();
    for (c, config) in sp.values.iter().enumerate() {
        let role = session.log.configs[c].role.name();
        for (m, v) in config.iter().enumerate() {
            if values.len() > 1 {
                values.push(Span::styled(" · ", t.dim()));
            }
            values.push(Span::raw(format!("{} {role} {}", names[m], num(*v))));
        }
    }
    about.insert(2, Line::from(values));
    let about_height = 6u16.min(inner.height);
    let [about_area, groups_area] =
        Layout::vertical([Constraint::Length(about_height), Constraint::Fill(1)]).areas(inner);
    // A narrow popup cannot wrap them all into its rows: each is then cut with `…`.
    let about = super::fit_rows(about, about_area.width as usize, about_area.height as usize);
    frame.render_widget(Paragraph::new(about), about_area);

    // One number of decimals for the bin's values (the largest's), and room for its largest
    // count with separators, so that scrolling never changes either.
    let decimals = column_decimals(sp.bin.groups.iter().flat_map(|&g| {
        let m = &groups.moments[0][0][g];
        [m.min, m.max]
    }));
    let value = |v: f64| column_number(v, decimals);
    let iters_width = sp
        .bin
        .groups
        .iter()
        .map(|&g| count(groups.counts[g]).chars().count())
        .max()
        .unwrap_or(0)
        .max(5);
    // The widest value is the largest or the most negative: the min's or the max's.
    let value_width = sp
        .bin
        .groups
        .iter()
        .flat_map(|&g| {
            let m = &groups.moments[0][0][g];
            [value(m.min), value(m.max)]
        })
        .map(|text| text.chars().count())
        .max()
        .unwrap_or(0)
        .max(8) as u16;
    let rows = sp.bin.groups.iter().skip(scroll).take(visible).map(|&g| {
        let m = &groups.moments[0][0][g];
        let mine = groups.key(g) == sp.key.as_slice();
        let row = Row::new([
            key_text(groups.key(g)),
            count(groups.counts[g]),
            value(m.mean),
            value(medians[g]),
            value(m.min),
            value(m.max),
            if mine { "◀".into() } else { String::new() },
        ]);
        if mine {
            row.style(t.seqpoint())
        } else {
            row
        }
    });
    // The metric is named in the heading above: the columns stay narrow enough for 60.
    let mean = "mean".to_string();
    let widths = [
        Constraint::Length(key_names.chars().count().max(7) as u16),
        Constraint::Length(iters_width as u16),
        Constraint::Length(value_width),
        Constraint::Length(value_width),
        Constraint::Length(value_width),
        Constraint::Length(value_width),
        Constraint::Length(1),
    ];
    let header = Row::new([
        key_names,
        "iters".into(),
        mean,
        "median".into(),
        "min".into(),
        "max".into(),
        String::new(),
    ])
    .style(t.strong());
    frame.render_widget(Table::new(rows, widths).header(header), groups_area);
}
