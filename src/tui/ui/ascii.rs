//! A terminal whose locale is not UTF-8 gets every drawn character in ASCII: the frame is
//! drawn as usual, then each cell's symbol is replaced by its ASCII stand-in, so no panel
//! needs a second set of glyphs and none can be forgotten.

use ratatui::buffer::Buffer;

/// Whether the locale's character set is UTF-8 (`LC_ALL`, else `LC_CTYPE`, else `LANG`, as
/// the C library reads them; none set means the "C" locale: ASCII).
pub fn locale_is_utf8() -> bool {
    let locale = ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .filter_map(|name| std::env::var(name).ok())
        .find(|value| !value.is_empty())
        .unwrap_or_default()
        .to_ascii_lowercase();
    locale.contains("utf-8") || locale.contains("utf8")
}

/// The ASCII stand-in of a drawn symbol.
pub fn ascii(symbol: &str) -> &str {
    if symbol.is_ascii() {
        return symbol;
    }
    match symbol {
        "─" | "━" | "┄" | "╌" | "–" | "−" => "-",
        "│" | "┃" | "┆" | "┊" => "|",
        "┌" | "┐" | "└" | "┘" | "├" | "┤" | "┬" | "┴" | "┼" | "╭" | "╮" | "╰" | "╯" => {
            "+"
        }
        "█" | "▇" | "▆" => "#",
        "▅" | "▄" | "▃" => "=",
        "▂" | "▁" => "_",
        "░" | "▒" | "▓" => ":",
        "▲" | "↑" => "^",
        "▼" | "↓" => "v",
        "▶" | "→" | "▸" => ">",
        "◀" | "←" => "<",
        "•" | "●" => "*",
        "·" => ".",
        "…" => "~",
        "✓" => "v",
        "✗" => "x",
        "±" => "+",
        "⟳" => "*",
        "∞" => "*",
        "×" => "x",
        _ => "?",
    }
}

/// Replace every symbol of `buffer` by its ASCII stand-in.
pub fn transliterate(buffer: &mut Buffer) {
    for cell in buffer.content.iter_mut() {
        let symbol = cell.symbol();
        if !symbol.is_ascii() {
            let replaced = ascii(symbol).chars().next().unwrap_or('?');
            cell.set_char(replaced);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_glyph_the_explorer_draws_has_an_ascii_stand_in() {
        for glyph in [
            "─", "│", "┌", "┐", "└", "┘", "┤", "┴", "┊", "┆", "█", "▁", "▄", "░", "▲", "↑", "▶",
            "•", "·", "…", "✓", "✗", "±", "⟳", "→", "←", "◀", "–", "−",
        ] {
            let a = ascii(glyph);
            assert!(a.is_ascii() && a != "?", "{glyph} -> {a}");
        }
        assert_eq!(ascii("q"), "q");
    }
}
