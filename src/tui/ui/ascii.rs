//! A terminal whose locale is not UTF-8 gets every drawn character in ASCII: the frame is
//! drawn as usual, then each cell's symbol is replaced by its ASCII stand-in, so no panel
//! needs a second set of glyphs and none can be forgotten.

use ratatui::buffer::{Buffer, Cell};

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
        "◆" => "@",
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
    widen_plus_minus(buffer);
    for cell in buffer.content.iter_mut() {
        let symbol = cell.symbol();
        if !symbol.is_ascii() {
            let replaced = ascii(symbol).chars().next().unwrap_or('?');
            cell.set_char(replaced);
        }
    }
}

/// Cells that end a panel's text on a row: a `±` never takes room across them.
fn wall(symbol: &str) -> bool {
    matches!(
        symbol,
        "│" | "┃"
            | "┌"
            | "┐"
            | "└"
            | "┘"
            | "├"
            | "┤"
            | "┬"
            | "┴"
            | "┼"
            | "╭"
            | "╮"
            | "╰"
            | "╯"
    )
}

/// Each `±` as `+/-`: a lone `+` reads as a sum (`0.27% +1.00%`). The two more cells come
/// from the nearest filler on its row within its panel: a run of spaces (one is kept) or of a
/// border's `─` to its right, else to its left, the text between shifted over, so nothing
/// past the filler moves and no border breaks. With no filler in reach it stays one cell.
fn widen_plus_minus(buffer: &mut Buffer) {
    let area = buffer.area;
    for y in area.top()..area.bottom() {
        let mut row: Vec<Cell> = (area.left()..area.right())
            .map(|x| buffer[(x, y)].clone())
            .collect();
        let mut changed = false;
        let mut at = 0;
        while at < row.len() {
            if row[at].symbol() == "±" && widen_at(&mut row, at) {
                changed = true;
                at += 3;
            } else {
                at += 1;
            }
        }
        if changed {
            for (x, cell) in (area.left()..area.right()).zip(row) {
                buffer[(x, y)] = cell;
            }
        }
    }
}

/// `+/-` in place of the `±` at `at`, if a filler gives room (see `widen_plus_minus`).
fn widen_at(row: &mut Vec<Cell>, at: usize) -> bool {
    let sym = |row: &[Cell], i: usize| row.get(i).map_or("", |c| c.symbol()).to_string();
    let filler = |row: &[Cell], i: usize, step: isize| {
        let (a, b, c) = (
            sym(row, i),
            sym(row, i.wrapping_add_signed(step)),
            sym(row, i.wrapping_add_signed(2 * step)),
        );
        (a == "─" && b == "─") || (a == " " && b == " " && (c == " " || c.is_empty()))
    };
    let mut plus = row[at].clone();
    let mut slash = row[at].clone();
    let mut minus = row[at].clone();
    plus.set_char('+');
    slash.set_char('/');
    minus.set_char('-');
    // Right: the first filler before a wall; its first two cells go.
    let right = (at + 1..row.len())
        .take_while(|&i| !wall(row[i].symbol()))
        .find(|&i| filler(row, i, 1));
    if let Some(i) = right {
        row.drain(i..i + 2);
        row.splice(at..at + 1, [plus, slash, minus]);
        return true;
    }
    // Left: spaces right before it (a right-aligned cell), or a border's `─` (a title on
    // it): their last two cells go. Text on the left never moves over a column's spaces.
    let left = (1..at)
        .rev()
        .take_while(|&i| !wall(row[i].symbol()))
        .find(|&i| filler(row, i, -1) && (i + 1 == at || row[i].symbol() == "─"));
    if let Some(i) = left {
        row.splice(at..at + 1, [plus, slash, minus]);
        row.drain(i - 1..i + 1);
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_glyph_the_explorer_draws_has_an_ascii_stand_in() {
        for glyph in [
            "─", "│", "┌", "┐", "└", "┘", "┤", "┴", "┊", "┆", "█", "▁", "▄", "░", "▲", "◆", "↑",
            "▶", "•", "·", "…", "✓", "✗", "±", "⟳", "→", "←", "◀", "–", "−",
        ] {
            let a = ascii(glyph);
            assert!(a.is_ascii() && a != "?", "{glyph} -> {a}");
        }
        assert_eq!(ascii("q"), "q");
    }

    fn drawn(rows: &[&str]) -> Buffer {
        Buffer::with_lines(rows.iter().copied())
    }

    fn text(buffer: &Buffer) -> Vec<String> {
        let area = buffer.area;
        (area.top()..area.bottom())
            .map(|y| {
                (area.left()..area.right())
                    .map(|x| buffer[(x, y)].symbol())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn plus_minus_takes_room_from_the_nearest_filler_and_never_moves_a_border() {
        let mut b = drawn(&[
            "│plan: 0.27% ±1.00%    │",
            "└── plan: 0.27% ±1.00% ┘",
            "│err %   ±95 %│±1│x ±2 y│",
        ]);
        transliterate(&mut b);
        assert_eq!(
            text(&b),
            [
                "|plan: 0.27% +/-1.00%  | ",
                "+ plan: 0.27% +/-1.00% + ",
                "|err % +/-95 %|+1|x +2 y|",
            ]
        );
    }
}
