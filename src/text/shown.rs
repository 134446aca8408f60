//! How a file name is shown to the user: in errors, "wrote" lines and table headers alike.
//! A name may hold any byte but `/` and NUL; control characters (ESC and OSC sequences could
//! retitle, recolour or garble the terminal), Unicode direction overrides (which reorder what
//! follows) and bytes that are not UTF-8 are shown escaped, never sent raw.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// `path` as text safe to print on a terminal: `\u{1b}` for ESC, `\xFF` for a byte that is
/// not UTF-8, everything else as is.
pub fn shown_path(path: impl AsRef<Path>) -> String {
    let bytes = path.as_ref().as_os_str().as_bytes();
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c.is_control() || is_direction_control(c) {
                out.extend(c.escape_unicode());
            } else {
                out.push(c);
            }
        }
        for byte in chunk.invalid() {
            out.push_str(&format!("\\x{byte:02X}"));
        }
    }
    out
}

/// `path` as one word of a command a user may paste into a shell (bash, zsh, ksh): as is when
/// plain, in single quotes when it has spaces or quotes, and in `$'...'` when it holds a
/// control character, a direction override or a byte that is not UTF-8, which are written
/// `\n`, `\x1b`, `\xff`: safe on the terminal and, unlike [`shown_path`]'s `\u{1b}`, the
/// same name once pasted.
pub fn shell_path(path: impl AsRef<Path>) -> String {
    let bytes = path.as_ref().as_os_str().as_bytes();
    let plain = |b: u8| b.is_ascii_alphanumeric() || b"-_./:=,+@%".contains(&b);
    if !bytes.is_empty() && bytes.iter().all(|&b| plain(b)) {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let special = bytes.utf8_chunks().any(|chunk| {
        !chunk.invalid().is_empty()
            || chunk
                .valid()
                .chars()
                .any(|c| c.is_control() || is_direction_control(c))
    });
    if !special {
        let text = String::from_utf8_lossy(bytes);
        return format!("'{}'", text.replace('\'', "'\\''"));
    }
    let mut out = String::from("$'");
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                c if c.is_control() || is_direction_control(c) => {
                    let mut buf = [0u8; 4];
                    for byte in c.encode_utf8(&mut buf).bytes() {
                        out.push_str(&format!("\\x{byte:02x}"));
                    }
                }
                c => out.push(c),
            }
        }
        for byte in chunk.invalid() {
            out.push_str(&format!("\\x{byte:02x}"));
        }
    }
    out.push('\'');
    out
}

/// A message as text safe to print on a terminal: control characters (but line breaks and
/// tabs) and direction overrides escaped as in [`shown_path`]. The binary passes every error
/// through this last, so a file name quoted raw anywhere in a message still cannot reach the
/// terminal as an escape sequence.
pub fn terminal_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if (c.is_control() && c != '\n' && c != '\t') || is_direction_control(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// Bidirectional embeddings, overrides and isolates: invisible, and they reorder the text after
/// them ("Trojan Source").
fn is_direction_control(c: char) -> bool {
    matches!(c, '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn plain_names_are_unchanged() {
        assert_eq!(
            shown_path("runs/speech t1 (été).csv"),
            "runs/speech t1 (été).csv"
        );
    }

    #[test]
    fn control_characters_direction_overrides_and_bad_bytes_are_escaped() {
        assert_eq!(
            shown_path("a\u{1b}]0;pwned\u{7}b\n.csv"),
            "a\\u{1b}]0;pwned\\u{7}b\\u{a}.csv"
        );
        assert_eq!(shown_path("x\u{202E}vsc.exe"), "x\\u{202e}vsc.exe");
        assert_eq!(shown_path("\u{9b}31m"), "\\u{9b}31m");
        let raw = OsStr::from_bytes(b"bad\xff\x1b.csv");
        assert_eq!(shown_path(raw), "bad\\xFF\\u{1b}.csv");
        // Whatever the input, nothing below U+0020 or DEL or C1 is left.
        let all: String = (0u8..=0x7f)
            .map(char::from)
            .chain(['\u{85}', '\u{9f}'])
            .collect();
        assert!(!shown_path(all.as_str()).chars().any(char::is_control));
    }

    #[test]
    fn a_name_for_a_shell_is_safe_and_names_the_same_file() {
        assert_eq!(shell_path("runs/a.svg"), "runs/a.svg");
        assert_eq!(shell_path("my run.svg"), "'my run.svg'");
        assert_eq!(shell_path("it's.svg"), "'it'\\''s.svg'");
        assert_eq!(shell_path("f\n.svg"), "$'f\\n.svg'");
        assert_eq!(
            shell_path("a\u{1b}]0;x\u{7}'b\\.svg"),
            "$'a\\x1b]0;x\\x07\\'b\\\\.svg'"
        );
        assert_eq!(shell_path("x\u{202e}y"), "$'x\\xe2\\x80\\xaey'");
        assert_eq!(shell_path(OsStr::from_bytes(b"bad\xff")), "$'bad\\xff'");
        // Nothing a terminal obeys is left, and no `\u{..}` that names another file.
        for name in ["f\n.svg", "a\u{1b}[2J", "\u{9b}x"] {
            let word = shell_path(name);
            assert!(
                !word.chars().any(char::is_control) && !word.contains("\\u{"),
                "{word}"
            );
        }
    }

    #[test]
    fn messages_keep_their_line_breaks_and_lose_escape_sequences() {
        assert_eq!(
            terminal_text("a.csv:3: bad\n\tx\u{1b}[2J\u{9b}\u{202e}"),
            "a.csv:3: bad\n\tx\\u{1b}[2J\\u{9b}\\u{202e}"
        );
        // Already escaped text is left as it is.
        let once = shown_path("x\u{1b}y");
        assert_eq!(terminal_text(&once), once);
    }
}
