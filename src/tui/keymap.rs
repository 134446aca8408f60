//! The key bindings, written once: `input::action_for` looks keys up here, the help overlay
//! lists these rows and the footer shows their hints, so the three cannot drift apart.

use ratatui::crossterm::event::KeyCode;

use KeyCode::{BackTab, Char, Down, End, Enter, Esc, Home, Left, PageDown, PageUp, Right, Tab, Up};

/// Everything a key can ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// K down / up (leaves auto-K at the K it found).
    FewerBins,
    MoreBins,
    /// K down / up by ten.
    FewerBinsTen,
    MoreBinsTen,
    /// Error target down / up one step.
    LowerTarget,
    RaiseTarget,
    ToggleAuto,
    CycleMethod,
    CyclePick,
    ToggleLogScale,
    /// Iterations per key, or a metric's total per key.
    CycleMeasure,
    NextView,
    PreviousView,
    Export,
    ShowCommand,
    /// The result in full: verdict, advice, the last message, what the marks mean.
    About,
    Help,
    Quit,
    /// Esc: close a popup, leave the table for the overview; never quits.
    Back,
    /// Ctrl-Z: give the terminal back and stop; `fg` resumes.
    Suspend,
    /// Ctrl-L: clear the terminal and draw the screen again.
    Redraw,
    /// `:` opens the command line.
    CommandLine,
    /// `/`: find a SeqPoint by iteration or key.
    Search,
    /// `n` / `N`: the next / previous match of the last search.
    SearchNext,
    SearchPrevious,
    /// Up / Down on the `:` line: an earlier / later line entered.
    RecallOlder,
    RecallNewer,
    /// `o`: the table's next order.
    CycleSort,
    /// `u`: the settings before the last change.
    Undo,
    /// Table and detail navigation.
    Up,
    Down,
    PageUp,
    PageDown,
    First,
    Last,
    /// Enter: open the selected SeqPoint's detail.
    Open,
    /// Leave a popup (Esc in a popup).
    Close,
    /// The export prompt's line editing.
    Type(char),
    Erase,
    EraseForward,
    CursorLeft,
    CursorRight,
    CursorStart,
    CursorEnd,
    ClearInput,
    Submit,
    /// Tab on the command line.
    Complete,
    /// The overwrite question.
    ConfirmOverwrite,
    DeclineOverwrite,
}

impl Action {
    /// Moves the table's selection, or scrolls the detail.
    pub fn moves(self) -> bool {
        matches!(
            self,
            Action::Up
                | Action::Down
                | Action::PageUp
                | Action::PageDown
                | Action::First
                | Action::Last
        )
    }
}

/// Keys that do one action, and how the help and the footer present them.
#[derive(Debug, Clone, Copy)]
pub struct Binding {
    pub keys: &'static [KeyCode],
    /// With Ctrl held, and only then: a binding without it never answers Ctrl+its key
    /// (Ctrl-L redraws, Ctrl-H is a Backspace on many terminals). Shift is ignored (Shift-t
    /// arrives as `T`).
    pub ctrl: bool,
    pub action: Action,
    pub help: Option<Help>,
    pub footer: Option<Hint>,
}

/// A binding's place in the help overlay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Help {
    /// Its own row: the keys as shown, and what they do.
    Row(&'static str, &'static str),
    /// Told by the row above (`T` under `t / T`, Shift-Tab under `Tab`).
    Above,
}

/// A footer hint: `label` in the key colour, then `what`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hint {
    pub label: &'static str,
    pub what: &'static str,
    /// Position in the footer: the most used keys first, `?` and `q` last.
    pub rank: u8,
    /// Shown only on a wide terminal.
    pub wide: bool,
}

impl Binding {
    const fn new(keys: &'static [KeyCode], action: Action) -> Self {
        Binding {
            keys,
            ctrl: false,
            action,
            help: None,
            footer: None,
        }
    }

    const fn help(self, keys: &'static str, what: &'static str) -> Self {
        Binding {
            help: Some(Help::Row(keys, what)),
            ..self
        }
    }

    const fn above(self) -> Self {
        Binding {
            help: Some(Help::Above),
            ..self
        }
    }

    const fn hint(self, label: &'static str, what: &'static str, rank: u8) -> Self {
        self.footer_hint(label, what, rank, false)
    }

    const fn wide_hint(self, label: &'static str, what: &'static str, rank: u8) -> Self {
        self.footer_hint(label, what, rank, true)
    }

    const fn footer_hint(
        self,
        label: &'static str,
        what: &'static str,
        rank: u8,
        wide: bool,
    ) -> Self {
        Binding {
            footer: Some(Hint {
                label,
                what,
                rank,
                wide,
            }),
            ..self
        }
    }

    fn matches(&self, code: KeyCode, ctrl: bool) -> bool {
        self.ctrl == ctrl && self.keys.contains(&code)
    }
}

/// The main screen, in the order the help lists them (docs/explorer.md shows `help_markdown`).
pub const MAIN: &[Binding] = &[
    Binding::new(&[Char('h'), Left], Action::FewerBins)
        .help("h / ←", "fewer bins (K − 1); leaves auto-K")
        .hint("h/l", "K", 0),
    Binding::new(&[Char('l'), Right], Action::MoreBins)
        .help("l / →", "more bins (K + 1); leaves auto-K"),
    Binding::new(&[Char('H')], Action::FewerBinsTen).help("H / L", "K − 10 / K + 10"),
    Binding::new(&[Char('L')], Action::MoreBinsTen).above(),
    Binding::new(&[Char('t')], Action::LowerTarget)
        .help("t / T", "error target down / up")
        .hint("t/T", "target", 1),
    Binding::new(&[Char('T')], Action::RaiseTarget).above(),
    Binding::new(&[Char('a')], Action::ToggleAuto)
        .help("a", "auto-K: the smallest K that meets the target")
        .hint("a", "auto", 2),
    Binding::new(&[Char('m')], Action::CycleMethod)
        .help("m", "next binning method")
        .hint("m", "method", 3),
    Binding::new(&[Char('p')], Action::CyclePick)
        .help("p", "next representative pick")
        .hint("p", "pick", 4),
    Binding::new(&[Char('s')], Action::ToggleLogScale)
        .help("s", "log scale for the distribution")
        .wide_hint("s", "log", 10),
    Binding::new(&[Char('c')], Action::CycleMeasure)
        .help("c", "distribution of iterations, or of a metric's total")
        .wide_hint("c", "measure", 11),
    Binding::new(&[Tab], Action::NextView)
        .help("Tab", "switch view: overview / SeqPoints table")
        .hint("Tab", "view", 5),
    // Two views: back is the same switch.
    Binding::new(&[BackTab], Action::PreviousView).above(),
    Binding::new(&[Up, Char('k')], Action::Up)
        .help("↑ ↓ j k", "select a SeqPoint (the ▶ row, the ▲ mark)"),
    Binding::new(&[Down, Char('j')], Action::Down).above(),
    Binding::new(&[PageUp, Char('b')], Action::PageUp)
        .help("PgUp PgDn", "a page up / down (also b, Space)"),
    Binding::new(&[PageDown, Char(' ')], Action::PageDown).above(),
    Binding::new(&[Home, Char('g')], Action::First).help("g / G", "first / last (Home End)"),
    Binding::new(&[End, Char('G')], Action::Last).above(),
    Binding::new(&[Char('u')], Action::Undo).help(
        "u",
        "undo the last change: K, target, method, pick or a : option",
    ),
    Binding::new(&[Char('/')], Action::Search)
        .help("/", "find any iteration (the bin it falls in) or a key"),
    Binding::new(&[Char('n')], Action::SearchNext).help("n / N", "next / previous match"),
    Binding::new(&[Char('N')], Action::SearchPrevious).above(),
    Binding::new(&[Char('o')], Action::CycleSort)
        .help("o", "order the table: id, iteration, key, weight, metric"),
    Binding::new(&[Enter], Action::Open)
        .help("Enter", "SeqPoint detail: alternates, the bin's key groups"),
    Binding::new(&[Char('e')], Action::Export)
        .help("e", "export JSON + CSV list (asks for the path)")
        .hint("e", "export", 6),
    Binding::new(&[Char('y')], Action::ShowCommand)
        .help(
            "y",
            "copy the equivalent `seqpoint select` command (OSC 52)",
        )
        .wide_hint("y", "copy cmd", 7),
    Binding::new(&[Char('i')], Action::About)
        .help("i", "the result in full: verdict, advice, marks")
        .wide_hint("i", "in full", 9),
    Binding::new(&[Char(':')], Action::CommandLine)
        .help(
            ":",
            "command line: :k 8, :target 0.5, :samples 2 … (Tab completes)",
        )
        .hint(":", "command", 8),
    Binding::new(&[Char('?')], Action::Help)
        .help("?", "this help")
        .hint("?", "help", 20),
    Binding::new(&[Esc], Action::Back).help("Esc", "back: close a popup, leave the table"),
    Binding::new(&[Char('q')], Action::Quit)
        .help("q", "quit")
        .hint("q", "quit", 21),
];

/// Keys that mean the same in every overlay, checked before the overlay's own.
pub const ANYWHERE: &[Binding] = &[
    Binding {
        ctrl: true,
        ..Binding::new(&[Char('c'), Char('C')], Action::Quit).help("Ctrl-C", "quit from anywhere")
    },
    Binding {
        ctrl: true,
        ..Binding::new(&[Char('q'), Char('Q')], Action::Quit).help("Ctrl-Q", "quit from anywhere")
    },
    Binding {
        ctrl: true,
        ..Binding::new(&[Char('z'), Char('Z')], Action::Suspend)
            .help("Ctrl-Z", "suspend to the shell; fg comes back")
    },
    Binding {
        ctrl: true,
        ..Binding::new(&[Char('l'), Char('L')], Action::Redraw)
            .help("Ctrl-L", "clear the terminal and draw the screen again")
    },
];

/// The help popup.
pub const HELP: &[Binding] = &[Binding::new(
    &[Esc, Enter, Char('q'), Char('?')],
    Action::Close,
)];

/// The command-line popup: `y` opened it, so `y` closes it too; ← → scroll a long line.
pub const COMMAND: &[Binding] = &[
    Binding::new(
        &[Esc, Enter, Char('q'), Char('?'), Char('y')],
        Action::Close,
    ),
    Binding::new(&[Left], Action::CursorLeft),
    Binding::new(&[Right], Action::CursorRight),
];

/// The result in full: `i` opened it, so `i` closes it; it scrolls with the movement keys.
pub const ABOUT: &[Binding] = &[Binding::new(
    &[Esc, Enter, Char('q'), Char('i')],
    Action::Close,
)];

/// The SeqPoint detail; it scrolls with the main screen's movement keys (`movement`).
pub const DETAIL: &[Binding] = &[Binding::new(&[Esc, Enter, Char('q')], Action::Close)];

/// The export's "overwrite? y/n" question.
pub const OVERWRITE: &[Binding] = &[
    Binding::new(&[Char('y'), Char('Y')], Action::ConfirmOverwrite),
    Binding::new(&[Char('n'), Char('N'), Esc], Action::DeclineOverwrite),
];

/// The action a table binds to a key.
pub fn lookup(table: &[Binding], code: KeyCode, ctrl: bool) -> Option<Action> {
    table
        .iter()
        .find(|b| b.matches(code, ctrl))
        .map(|b| b.action)
}

/// The main screen's movement keys (the detail and full-result popups scroll with them).
pub fn movement(code: KeyCode, ctrl: bool) -> Option<Action> {
    MAIN.iter()
        .filter(|b| b.action.moves())
        .find(|b| b.matches(code, ctrl))
        .map(|b| b.action)
}

/// The help overlay's rows, in order: the main screen's, then the keys that work anywhere.
pub fn help_rows() -> impl Iterator<Item = (&'static str, &'static str)> {
    MAIN.iter().chain(ANYWHERE).filter_map(|b| match b.help {
        Some(Help::Row(keys, what)) => Some((keys, what)),
        _ => None,
    })
}

/// The help overlay's rows as a Markdown table, the one docs/explorer.md carries (a test
/// compares the two, so the page cannot drift from the keys).
pub fn help_markdown() -> String {
    let mut table = String::from("| key | does |\n|---|---|\n");
    for (keys, what) in help_rows() {
        // A `|` would end the cell; none is in the table today, but a new row could add one.
        let cell = |text: &str| text.replace('|', "\\|");
        table.push_str(&format!("| `{}` | {} |\n", cell(keys), cell(what)));
    }
    table
}

/// The footer's hints, in footer order; the `wide` ones only when there is room.
pub fn footer_hints(wide: bool) -> Vec<Hint> {
    let mut hints: Vec<Hint> = MAIN
        .iter()
        .filter_map(|b| b.footer)
        .filter(|h| wide || !h.wide)
        .collect();
    hints.sort_by_key(|h| h.rank);
    hints
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::app::{ExportPrompt, Overlay, Overwrite};
    use crate::tui::input::action_for;
    use ratatui::crossterm::event::{KeyEvent, KeyModifiers};

    /// A key as the help and the footer write it.
    fn named(name: &str) -> KeyCode {
        match name {
            "←" => Left,
            "→" => Right,
            "↑" => Up,
            "↓" => Down,
            "Tab" => Tab,
            "Enter" => Enter,
            "Esc" => Esc,
            "PgUp" => PageUp,
            "PgDn" => PageDown,
            _ => {
                let mut chars = name.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => Char(c),
                    _ => panic!("no key is called {name:?}"),
                }
            }
        }
    }

    /// The keys a label names: `h / ←`, `↑ ↓ j k`, `t/T`, `Ctrl-C` (with whether Ctrl).
    fn keys_of(label: &str) -> Vec<(KeyCode, bool)> {
        if let Some(key) = label.strip_prefix("Ctrl-") {
            return vec![(named(&key.to_lowercase()), true)];
        }
        // `/` itself, not a separator.
        if label == "/" {
            return vec![(Char('/'), false)];
        }
        label
            .split([' ', '/'])
            .filter(|s| !s.is_empty())
            .map(|s| (named(s), false))
            .collect()
    }

    fn press(code: KeyCode, ctrl: bool, overlay: &Overlay) -> Option<Action> {
        let modifiers = if ctrl {
            KeyModifiers::CONTROL
        } else {
            KeyModifiers::NONE
        };
        action_for(KeyEvent::new(code, modifiers), overlay)
    }

    /// Each help row and the bindings it tells about (itself and the `Above` ones after it).
    fn help_groups() -> Vec<(&'static str, Vec<&'static Binding>)> {
        let mut groups: Vec<(&str, Vec<&Binding>)> = Vec::new();
        for b in MAIN.iter().chain(ANYWHERE) {
            match b.help {
                Some(Help::Row(label, _)) => groups.push((label, vec![b])),
                Some(Help::Above) => groups.last_mut().expect("a row above").1.push(b),
                None => panic!("{:?} is missing from the help", b.action),
            }
        }
        groups
    }

    #[test]
    fn every_main_key_is_in_the_help_under_a_row_that_names_its_keys() {
        for (label, bindings) in help_groups() {
            let named = keys_of(label);
            // The row's own binding has a key the label names.
            let own = bindings[0];
            assert!(
                own.keys.iter().any(|k| named.contains(&(*k, own.ctrl))),
                "{label:?} names none of {:?}'s keys",
                own.action
            );
            // Every key the label names does one of the row's actions.
            for (code, ctrl) in named {
                let action = press(code, ctrl, &Overlay::None);
                assert!(
                    bindings.iter().any(|b| Some(b.action) == action),
                    "{label:?}: {code:?} does {action:?}"
                );
            }
        }
    }

    #[test]
    fn every_footer_hint_names_keys_that_do_its_action() {
        let hints = footer_hints(true);
        for (at, b) in MAIN.iter().enumerate() {
            let Some(hint) = b.footer else { continue };
            // `h/l K`: the first key does the hint's own action, the next the binding's
            // after it (more bins), as the help lists them.
            for (i, (code, ctrl)) in keys_of(hint.label).into_iter().enumerate() {
                assert_eq!(
                    press(code, ctrl, &Overlay::None),
                    Some(MAIN[at + i].action),
                    "{:?}: {code:?}",
                    hint.label
                );
            }
        }
        let mut ranks: Vec<u8> = hints.iter().map(|h| h.rank).collect();
        ranks.dedup();
        assert_eq!(ranks.len(), hints.len(), "two hints share a place");
        assert!(footer_hints(false).len() < hints.len());
    }

    #[test]
    fn no_key_is_bound_twice_in_one_overlay() {
        let detail: Vec<Binding> = DETAIL
            .iter()
            .chain(MAIN.iter().filter(|b| b.action.moves()))
            .copied()
            .collect();
        let about: Vec<Binding> = ABOUT
            .iter()
            .chain(MAIN.iter().filter(|b| b.action.moves()))
            .copied()
            .collect();
        let tables: [(&str, &[Binding]); 6] = [
            ("main", MAIN),
            ("help", HELP),
            ("command", COMMAND),
            ("detail", &detail),
            ("about", &about),
            ("overwrite", OVERWRITE),
        ];
        for (name, table) in tables {
            let mut seen = Vec::new();
            for b in table.iter().chain(ANYWHERE) {
                for &code in b.keys {
                    assert!(
                        !seen.contains(&(code, b.ctrl)),
                        "{name}: {code:?} is bound twice"
                    );
                    seen.push((code, b.ctrl));
                }
            }
        }
    }

    #[test]
    fn every_binding_does_what_the_table_says_in_its_overlay() {
        let confirm = Overlay::Export(ExportPrompt {
            input: String::new(),
            cursor: 0,
            confirm: Some(Overwrite {
                set: crate::tui::save::ExportSet {
                    files: Vec::new(),
                    overwrite: false,
                },
                existing: Vec::new(),
            }),
        });
        let overlays: [(&[Binding], Overlay); 6] = [
            (MAIN, Overlay::None),
            (HELP, Overlay::Help { scroll: 0 }),
            (COMMAND, Overlay::Command { scroll: 0 }),
            (DETAIL, Overlay::Detail { scroll: 0 }),
            (ABOUT, Overlay::About { scroll: 0 }),
            (OVERWRITE, confirm),
        ];
        for (table, overlay) in &overlays {
            for b in table.iter().chain(ANYWHERE) {
                for &code in b.keys {
                    assert_eq!(press(code, b.ctrl, overlay), Some(b.action), "{code:?}");
                }
            }
        }
        for b in MAIN.iter().filter(|b| b.action.moves()) {
            let detail = Overlay::Detail { scroll: 0 };
            assert_eq!(press(b.keys[0], false, &detail), Some(b.action));
        }
    }
}
