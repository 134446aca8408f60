//! Styles for every panel in one place, so NO_COLOR turns all colour off: without colour the
//! screen relies on characters and bold/reverse only.

use ratatui::style::{Color, Modifier, Style};

#[derive(Debug, Clone, Copy)]
pub struct Theme {
    pub colour: bool,
    /// Text in ASCII (a locale that is not UTF-8): `±` is written `+/-` before layout.
    pub ascii: bool,
}

/// Bins alternate between these so neighbours stand apart (8 basic colours only: no true
/// colour needed).
const BIN_COLOURS: [Color; 2] = [Color::Cyan, Color::Blue];
/// Clusters of a two-length key, by bin index.
const CLUSTER_COLOURS: [Color; 6] = [
    Color::Cyan,
    Color::Green,
    Color::Yellow,
    Color::Magenta,
    Color::Blue,
    Color::Red,
];

impl Theme {
    pub fn new(colour: bool) -> Self {
        Theme {
            colour,
            ascii: false,
        }
    }

    pub fn with_ascii(self, ascii: bool) -> Self {
        Theme { ascii, ..self }
    }

    /// `±`, or `+/-` in ASCII: a lone `+` would read as a sum (`0.27% +1.00%`).
    pub fn pm(&self) -> &'static str {
        if self.ascii {
            "+/-"
        } else {
            "±"
        }
    }

    /// `lines` with `±` as `pm` says, before they are wrapped or cut to a width.
    pub fn lines(
        &self,
        lines: Vec<ratatui::text::Line<'static>>,
    ) -> Vec<ratatui::text::Line<'static>> {
        if !self.ascii {
            return lines;
        }
        lines
            .into_iter()
            .map(|mut line| {
                for span in &mut line.spans {
                    if span.content.contains('±') {
                        span.content = span.content.replace('±', "+/-").into();
                    }
                }
                line
            })
            .collect()
    }

    fn fg(&self, colour: Color) -> Style {
        if self.colour {
            Style::new().fg(colour)
        } else {
            Style::new()
        }
    }

    pub fn plain(&self) -> Style {
        Style::new()
    }

    pub fn title(&self) -> Style {
        self.fg(Color::Cyan).add_modifier(Modifier::BOLD)
    }

    pub fn strong(&self) -> Style {
        Style::new().add_modifier(Modifier::BOLD)
    }

    /// Secondary text: labels, axes, hints.
    pub fn dim(&self) -> Style {
        if self.colour {
            Style::new().fg(Color::DarkGray)
        } else {
            Style::new()
        }
    }

    pub fn key(&self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }

    /// Errors over the target, failures: bold (and red with colour).
    pub fn bad(&self) -> Style {
        self.fg(Color::Red).add_modifier(Modifier::BOLD)
    }

    pub fn good(&self) -> Style {
        self.fg(Color::Green)
    }

    pub fn bar(&self, bin: usize) -> Style {
        self.fg(BIN_COLOURS[bin % BIN_COLOURS.len()])
    }

    pub fn cluster(&self, bin: usize) -> Style {
        self.fg(CLUSTER_COLOURS[bin % CLUSTER_COLOURS.len()])
    }

    pub fn boundary(&self) -> Style {
        self.dim()
    }

    pub fn seqpoint(&self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }

    /// The selected SeqPoint or table row.
    pub fn selected(&self) -> Style {
        Style::new().add_modifier(Modifier::REVERSED)
    }

    pub fn band(&self) -> Style {
        self.dim()
    }

    pub fn target(&self) -> Style {
        self.fg(Color::Magenta)
    }

    pub fn error_line(&self) -> Style {
        self.fg(Color::Yellow).add_modifier(Modifier::BOLD)
    }
}
