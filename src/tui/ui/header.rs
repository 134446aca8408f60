//! The header (the run: file, iterations, unique keys, epochs, metrics, configurations; and
//! the current settings) and the footer (an export being made, progress, messages, or the
//! main keys).

use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::cut_line;
use super::theme::Theme;
use crate::tui::app::App;
use crate::tui::keymap;

/// Header rows for a terminal this high: the run, its metrics and the settings from 23
/// rows (an 80x24 window less a status line keeps the compare log named); the run and the
/// settings from 19; the settings alone below.
pub fn height(terminal_height: u16) -> u16 {
    match terminal_height {
        23.. => 3,
        19..=22 => 2,
        _ => 1,
    }
}

pub fn render(frame: &mut Frame, area: Rect, app: &App, t: &Theme) {
    let width = area.width as usize;
    let [run, measured, mut settings] = lines(app, t, false);
    if settings.width() > width {
        // Too wide: the method and pick without their labels, so the plan still shows.
        settings = lines(app, t, true).into_iter().last().unwrap_or(settings);
    }
    let lines = match area.height {
        3.. => vec![run, measured, settings],
        2 => vec![run, settings],
        _ => {
            // One row: the settings, after the file's name.
            let mut one = vec![Span::styled(
                format!(" {} ·", file_name(&app.session.log.source)),
                t.dim(),
            )];
            one.extend(settings.spans);
            vec![Line::from(one)]
        }
    };
    // What does not fit ends with `…`; `i` shows these lines in full.
    let lines: Vec<Line> = lines.into_iter().map(|l| cut_line(l, width)).collect();
    frame.render_widget(Paragraph::new(lines), area);
}

/// The run, its metrics and configurations, and the settings: the header's three lines, in
/// full (the header cuts them to its width; the full view `i` wraps them). `compact` leaves
/// the labels `method` and `pick` and the strata's name out of the settings (their values
/// name the first two; the run's line has the epochs).
pub fn lines(app: &App, t: &Theme, compact: bool) -> [Line<'static>; 3] {
    let log = &app.session.log;
    let groups = app.session.groups();
    let sep = || Span::styled(" · ", t.dim());
    let mut run = vec![
        Span::styled(" seqpoint ", t.title()),
        Span::styled(log.source.clone(), t.strong()),
        sep(),
        // Iterations left out (`:exclude`) are not the run's any more: say what is kept.
        Span::raw(if app.session.base.exclude.is_empty() {
            format!("{} iterations", super::count(log.len() as u64))
        } else {
            // In `select`'s words.
            let kept = groups.iterations();
            let all = log.len() as u64;
            format!(
                "{} of {} iterations ({} excluded)",
                super::count(kept),
                super::count(all),
                super::count(all - kept)
            )
        }),
        sep(),
        Span::raw(format!(
            "{} unique {}",
            super::count(groups.len() as u64),
            log.key_names.join(",")
        )),
    ];
    if let Some(epochs) = log.epoch_count() {
        run.push(sep());
        run.push(Span::raw(format!(
            "{epochs} epoch{}",
            if epochs == 1 { "" } else { "s" }
        )));
    }
    let mut measured = vec![Span::styled(" metrics ", t.dim())];
    measured.push(Span::raw(match log.proxy {
        Some(cost) => format!("none (proxy cost {cost})"),
        None => log.metric_names().join(", "),
    }));
    for c in &log.configs {
        measured.push(sep());
        measured.push(Span::styled(format!("{} ", c.role.name()), t.dim()));
        measured.push(Span::raw(file_name(&c.source).to_string()));
    }

    let s = &app.settings;
    // K first: on a narrow terminal the end of the line goes.
    let mut settings = vec![Span::raw(" ")];
    let per_stratum = if app.session.strata.split && compact {
        " per stratum".to_string()
    } else if app.session.strata.split {
        format!(" per stratum ({})", app.session.base.strata)
    } else {
        String::new()
    };
    if s.auto {
        // With strata: each stratum's K, as the verdict says it.
        let k = app.current().map_or("…".to_string(), |selection| {
            super::projection::per_stratum_k(selection)
                .or_else(|| app.shown_k().map(|k| k.to_string()))
                .unwrap_or_else(|| "…".to_string())
        });
        settings.push(Span::styled(format!("K = {k}"), t.strong()));
        settings.push(Span::raw(per_stratum));
        settings.push(Span::styled(
            format!(" auto-K for {}%", s.target_pct),
            t.key(),
        ));
        let met = app.current_shown().and_then(|shown| shown.target_met());
        if met == Some(false) {
            settings.push(Span::styled(" (not met)", t.bad()));
        }
    } else {
        settings.push(Span::styled(format!("K = {}", s.k), t.strong()));
        // Uniform bins and k-means can leave bins empty: say how many hold iterations, as
        // `select` does ("64 requested, 42 non-empty").
        if let Some(selection) = app.current().filter(|sel| sel.strata.len() <= 1) {
            if selection.bins() != s.k {
                settings.push(Span::raw(format!(" ({} non-empty)", selection.bins())));
            }
        }
        settings.push(Span::raw(format!(
            "{per_stratum} · target {}%",
            s.target_pct
        )));
    }
    let (method, pick) = if compact {
        (" · ", " · ")
    } else {
        (" · method ", " · pick ")
    };
    settings.extend([
        Span::styled(method, t.dim()),
        Span::styled(s.method.name(), t.strong()),
        Span::styled(pick, t.dim()),
        Span::styled(s.pick.name(), t.strong()),
    ]);
    if let Some(plan) = app
        .current_shown()
        .and_then(|shown| shown.plan.as_ref())
        .filter(|p| p.bins.iter().any(|b| b.samples() > 1))
    {
        settings.push(Span::raw(format!(
            " · plan {} iterations",
            super::count(plan.iterations())
        )));
    } else if app.session.base.samples > 1 {
        settings.push(Span::raw(format!(
            " · {} samples per SeqPoint",
            app.session.base.samples
        )));
    }
    if app.session.base.warmup > 0 {
        settings.push(Span::raw(format!(" · warm-up {}", app.session.base.warmup)));
    }
    [Line::from(run), Line::from(measured), Line::from(settings)]
}

/// The last part of a path: the folder is on the first line already.
fn file_name(source: &str) -> &str {
    source.rsplit(['/', '\\']).next().unwrap_or(source)
}

/// A progress bar of `width` cells.
pub fn bar(done: usize, total: usize, width: usize) -> String {
    let filled = (done * width).checked_div(total).unwrap_or(0).min(width);
    format!("{}{}", "█".repeat(filled), "░".repeat(width - filled))
}

pub fn render_footer(frame: &mut Frame, area: Rect, app: &App, t: &Theme) {
    let line = if let Some(exporting) = &app.exporting {
        Line::from(vec![
            Span::styled(" ⟳ exporting", t.key()),
            Span::raw(format!(" {}", exporting.json_path.display())),
            Span::styled("  Esc cancels", t.dim()),
        ])
    } else if app.building.is_some() {
        // Reading the log again (`:metric`) has a measure of its progress; grouping has not.
        match &app.reading {
            Some(reading) => {
                let permille = (reading.fraction() * 1000.0) as usize;
                Line::from(vec![
                    Span::styled(" ⟳ reading the log again ", t.key()),
                    Span::styled(bar(permille, 1000, 16), t.dim()),
                    Span::styled("  Esc cancels", t.dim()),
                ])
            }
            None => Line::from(vec![
                Span::styled(" ⟳ new session options", t.key()),
                Span::styled("  Esc cancels · last result shown meanwhile", t.dim()),
            ]),
        }
    } else if let Some(pending) = &app.pending {
        let count = if pending.total > 0 {
            format!(" {}/{} ", pending.done, pending.total)
        } else {
            " ".to_string()
        };
        Line::from(vec![
            Span::styled(format!(" ⟳ {}", pending.label), t.key()),
            Span::raw(count),
            Span::styled(bar(pending.done, pending.total, 16), t.dim()),
            Span::styled("  last result shown meanwhile", t.dim()),
        ])
    } else if let Some(status) = app
        .status
        .as_ref()
        // The export popup shows its own messages in full.
        .filter(|_| !matches!(app.overlay, crate::tui::app::Overlay::Export(_)))
    {
        let style = if status.error { t.bad() } else { t.good() };
        let text = format!(" {}", status.text);
        if text.chars().count() > area.width as usize {
            // Too long for one row: the start, and where to read the rest.
            let more = " (i: in full)";
            let room = (area.width as usize).saturating_sub(more.len());
            Line::from(vec![
                Span::styled(super::cut(&text, room), style),
                Span::styled(more, t.dim()),
            ])
        } else {
            Line::styled(text, style)
        }
    } else {
        // The most used keys; `?` lists them all.
        let mut keys = keymap::footer_hints(area.width >= 110);
        // On a narrow terminal the least used hints go first; `?` and `q` stay.
        let width_of = |keys: &[keymap::Hint]| -> usize {
            keys.iter()
                .map(|h| h.label.chars().count() + h.what.chars().count() + 3)
                .sum()
        };
        while width_of(&keys) > area.width as usize && keys.len() > 2 {
            keys.remove(keys.len() - 3);
        }
        let mut spans = vec![Span::raw(" ")];
        for (i, hint) in keys.iter().enumerate() {
            spans.push(Span::styled(hint.label, t.key()));
            let gap = if i + 1 < keys.len() { "  " } else { "" };
            spans.push(Span::styled(format!(" {}{gap}", hint.what), t.dim()));
        }
        cut_line(Line::from(spans), area.width as usize)
    };
    frame.render_widget(Paragraph::new(line), area);
}
