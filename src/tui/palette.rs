//! How many colours the terminal shows, and output that keeps to them. The terminal library
//! writes every colour in the 256-colour form (`ESC[38;5;6m`, even for the eight basic
//! ones), which a vt100 or GNU screen (`TERM=screen`, eight colours) may show as garbage or
//! as the wrong colour. A terminal of eight colours gets them in their own form (`ESC[36m`);
//! one without colour gets none (the theme draws with characters and bold/reverse only).

use std::io::{self, Write};

/// The colours a terminal shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Palette {
    /// None at all (vt100 and its kin, `dumb`).
    None,
    /// The eight basic colours, in their own escape codes (`screen`, `xterm`, `linux`).
    Eight,
    /// 256 colours or more (`*-256color`, `COLORTERM=truecolor`).
    Full,
}

/// The palette `TERM` (and `COLORTERM`) name, as terminfo would say it: an unknown terminal
/// gets eight colours, which every colour terminal shows.
pub fn palette_for(term: Option<&str>, colorterm: Option<&str>) -> Palette {
    let term = term.unwrap_or("").trim().to_ascii_lowercase();
    let colorterm = colorterm.unwrap_or("").to_ascii_lowercase();
    if term.is_empty() || term == "dumb" || term.starts_with("vt") {
        return Palette::None;
    }
    let full = term.contains("256col")
        || term.contains("direct")
        || term.contains("truecolor")
        || colorterm == "truecolor"
        || colorterm == "24bit";
    if full {
        Palette::Full
    } else {
        Palette::Eight
    }
}

/// This terminal's palette, from the environment.
pub fn palette() -> Palette {
    palette_for(
        std::env::var("TERM").ok().as_deref(),
        std::env::var("COLORTERM").ok().as_deref(),
    )
}

/// A writer that rewrites 256-colour and true-colour codes into the eight basic colours'
/// (bright ones to their base, the rest to the default colour); everything else passes as
/// written. Escape sequences split across writes are held until complete.
pub struct EightColours<W: Write> {
    inner: W,
    /// False on a terminal of 256 colours or more: everything passes as written.
    rewrite: bool,
    /// The start of an escape sequence not yet complete.
    held: Vec<u8>,
}

/// Longer than any colour code: a sequence this long is passed on as it is.
const LONGEST: usize = 64;

impl<W: Write> EightColours<W> {
    pub fn new(inner: W) -> Self {
        EightColours {
            inner,
            rewrite: true,
            held: Vec::new(),
        }
    }

    /// Rewriting only where `palette` needs it (a terminal of eight colours).
    pub fn for_palette(inner: W, palette: Palette) -> Self {
        EightColours {
            rewrite: palette == Palette::Eight,
            ..EightColours::new(inner)
        }
    }

    /// The held bytes, complete or given up on, as they go out.
    fn release(&mut self, out: &mut Vec<u8>) {
        let held = std::mem::take(&mut self.held);
        match held
            .strip_prefix(b"\x1b[")
            .and_then(|s| s.strip_suffix(b"m"))
        {
            Some(params) => {
                out.extend_from_slice(b"\x1b[");
                out.extend_from_slice(eight_colour_sgr(params).as_bytes());
                out.push(b'm');
            }
            None => out.extend_from_slice(&held),
        }
    }
}

impl<W: Write> Write for EightColours<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.rewrite {
            return self.inner.write(buf);
        }
        let mut out = Vec::with_capacity(buf.len());
        for &b in buf {
            if self.held.is_empty() {
                if b == 0x1b {
                    self.held.push(b);
                } else {
                    out.push(b);
                }
                continue;
            }
            self.held.push(b);
            let csi = self.held[1] == b'[';
            let done = if !csi {
                // Not a control sequence: nothing to rewrite.
                true
            } else {
                self.held.len() > 2 && (0x40..=0x7e).contains(&b)
            };
            if done || self.held.len() >= LONGEST {
                self.release(&mut out);
            }
        }
        self.inner.write_all(&out)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// SGR parameters with each `38;5;N` / `48;5;N` / `38;2;R;G;B` in eight-colour form.
fn eight_colour_sgr(params: &[u8]) -> String {
    let text = String::from_utf8_lossy(params);
    let parts: Vec<&str> = text.split(';').collect();
    let mut kept: Vec<String> = Vec::new();
    let mut i = 0;
    while i < parts.len() {
        let base = match parts[i] {
            "38" => Some(30),
            "48" => Some(40),
            _ => None,
        };
        match (base, parts.get(i + 1).copied()) {
            (Some(base), Some("5")) => {
                let n: u32 = parts.get(i + 2).and_then(|n| n.parse().ok()).unwrap_or(999);
                kept.push(match n {
                    // Grey (bright black) on an eight-colour terminal would be black: the
                    // default colour instead.
                    0..=7 => (base + n).to_string(),
                    8 => (base + 9).to_string(),
                    9..=15 => (base + n - 8).to_string(),
                    _ => (base + 9).to_string(),
                });
                i += 3;
            }
            (Some(base), Some("2")) => {
                kept.push((base + 9).to_string());
                i += 5;
            }
            _ => {
                kept.push(parts[i].to_string());
                i += 1;
            }
        }
    }
    kept.join(";")
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::crossterm::queue;
    use ratatui::crossterm::style::{Color, SetBackgroundColor, SetForegroundColor};

    #[test]
    fn each_term_gets_the_colours_it_shows() {
        for term in ["vt100", "vt220", "dumb", ""] {
            assert_eq!(palette_for(Some(term), None), Palette::None, "{term}");
        }
        for term in ["screen", "xterm", "linux", "tmux", "rxvt-unicode"] {
            assert_eq!(palette_for(Some(term), None), Palette::Eight, "{term}");
        }
        for term in ["xterm-256color", "screen-256color", "tmux-256color"] {
            assert_eq!(palette_for(Some(term), None), Palette::Full, "{term}");
        }
        assert_eq!(palette_for(Some("xterm"), Some("truecolor")), Palette::Full);
        assert_eq!(palette_for(None, None), Palette::None);
    }

    /// What the terminal library writes for these colours, through the filter.
    fn written(colours: &[(Color, bool)], chunk: usize) -> String {
        let mut raw = Vec::new();
        for &(colour, background) in colours {
            if background {
                queue!(raw, SetBackgroundColor(colour)).unwrap();
            } else {
                queue!(raw, SetForegroundColor(colour)).unwrap();
            }
            raw.extend_from_slice(b"x");
        }
        let mut out = EightColours::new(Vec::new());
        // In small pieces too: a code split across writes is rewritten whole.
        for piece in raw.chunks(chunk) {
            out.write_all(piece).unwrap();
        }
        String::from_utf8(out.inner).unwrap()
    }

    #[test]
    fn the_eight_colours_go_out_in_their_own_codes_and_nothing_in_256_colour_form() {
        let colours = [
            (Color::Cyan, false),
            (Color::DarkCyan, false),
            (Color::Red, true),
            (Color::DarkGrey, false),
            (Color::AnsiValue(200), false),
            (Color::Rgb { r: 1, g: 2, b: 3 }, true),
            (Color::Reset, false),
        ];
        for chunk in [1, 2, 3, 1000] {
            let text = written(&colours, chunk);
            assert!(!text.contains("38;5") && !text.contains("48;"), "{text:?}");
            assert_eq!(
                text, "\x1b[36mx\x1b[36mx\x1b[41mx\x1b[39mx\x1b[39mx\x1b[49mx\x1b[39mx",
                "chunk {chunk}"
            );
        }
        // Other sequences pass as written.
        let mut out = EightColours::new(Vec::new());
        out.write_all(b"\x1b[2J\x1b[1;1Hab\x1b]52;c;eA==\x07")
            .unwrap();
        assert_eq!(out.inner, b"\x1b[2J\x1b[1;1Hab\x1b]52;c;eA==\x07");
    }
}
