//! The README and docs/ pages checked against the code, so they cannot drift: the explorer's
//! key table is the keymap's own rendering, every relative link resolves, and every shown
//! `$ seqpoint ...` output is what the binary prints (`...` lines elide, nothing else differs).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use seqpoint::tui::keymap::help_markdown;

const KEYS_BEGIN: &str = "<!-- keys:begin -->";
const KEYS_END: &str = "<!-- keys:end -->";
/// Put right above a fence whose command is too slow for a debug build; `SEQPOINT_DOCS_SLOW=1`
/// runs those too.
const SLOW_MARK: &str = "<!-- docs-check: slow -->";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md and every docs/*.md, in a fixed order.
fn pages() -> Vec<PathBuf> {
    let mut pages: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ exists")
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    pages.insert(0, root().join("README.md"));
    pages
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn shown(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

// ---- the key table -------------------------------------------------------------------------

/// The text between each begin/end marker pair, as byte ranges of `text`.
fn key_blocks(text: &str, page: &str) -> Vec<std::ops::Range<usize>> {
    let mut blocks = Vec::new();
    let mut from = 0;
    while let Some(begin) = text[from..].find(KEYS_BEGIN) {
        let start = from + begin + KEYS_BEGIN.len();
        let end = start
            + text[start..]
                .find(KEYS_END)
                .unwrap_or_else(|| panic!("{page}: {KEYS_BEGIN} without {KEYS_END}"));
        blocks.push(start..end);
        from = end + KEYS_END.len();
    }
    blocks
}

#[test]
fn key_tables_in_the_docs_are_the_keymaps_rendering() {
    let table = format!("\n{}", help_markdown());
    let bless = std::env::var_os("SEQPOINT_BLESS").is_some_and(|v| v == "1");
    let mut explorer_blocks = 0;
    for path in pages() {
        let page = shown(&path);
        let text = read(&path);
        let blocks = key_blocks(&text, &page);
        if page == "docs/explorer.md" {
            explorer_blocks = blocks.len();
        }
        if bless {
            let mut blessed = text.clone();
            for block in blocks.iter().rev() {
                blessed.replace_range(block.clone(), &table);
            }
            if blessed != text {
                std::fs::write(&path, blessed).unwrap();
                println!("docs_pages: SEQPOINT_BLESS=1 rewrote the key table in {page}");
            }
            continue;
        }
        for block in blocks {
            assert_eq!(
                &text[block], table,
                "{page}: the key table differs from keymap::help_markdown() \
                 (SEQPOINT_BLESS=1 cargo test --test it docs_pages rewrites it)"
            );
        }
    }
    assert_eq!(
        explorer_blocks, 1,
        "docs/explorer.md carries the key table once"
    );
}

// ---- links ---------------------------------------------------------------------------------

/// The page's lines outside fenced code blocks, with inline code spans removed.
fn prose_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let mut prose = String::new();
        for (i, part) in line.split('`').enumerate() {
            if i % 2 == 0 {
                prose.push_str(part);
            }
        }
        lines.push(prose);
    }
    lines
}

/// Targets of `[text](target)` links in the prose.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    for line in prose_lines(text) {
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(close) = after.find(')') else { break };
            targets.push(after[..close].trim().to_string());
            rest = &after[close..];
        }
    }
    targets
}

/// The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as `-`,
/// a repeated heading numbered from `-1`.
fn anchors(text: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    let mut in_fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        }
        if in_fence || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#').trim();
        let slug: String = title
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut anchor = slug.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{slug}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

#[test]
fn heading_anchors_follow_githubs_rule() {
    let text =
        "# Two words\n## JSON output (`seqpoint/1`)\n```\n# not a heading\n```\n# Two words\n";
    let found = anchors(text);
    let want: HashSet<String> = ["two-words", "json-output-seqpoint1", "two-words-1"]
        .map(String::from)
        .into();
    assert_eq!(found, want);
}

#[test]
fn every_relative_link_points_to_a_file_and_heading_that_exist() {
    let mut broken = Vec::new();
    let mut linked_pages = HashSet::new();
    for path in pages() {
        let page = shown(&path);
        let text = read(&path);
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((file, anchor)) => (file, Some(anchor)),
                None => (target.as_str(), None),
            };
            let linked = if file.is_empty() {
                path.clone()
            } else {
                path.parent().unwrap().join(file)
            };
            if !linked.exists() {
                broken.push(format!("{page}: ({target}): no file {}", linked.display()));
                continue;
            }
            if page == "README.md" {
                linked_pages.insert(linked.canonicalize().unwrap());
            }
            if let Some(anchor) = anchor {
                if !anchors(&read(&linked)).contains(anchor) {
                    broken.push(format!("{page}: ({target}): no heading #{anchor}"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    // The README is where a reader starts: every docs page is reachable from it.
    for path in pages().iter().skip(1) {
        assert!(
            linked_pages.contains(&path.canonicalize().unwrap()),
            "README.md does not link {}",
            shown(path)
        );
    }
}

// ---- shown command outputs -----------------------------------------------------------------

/// One `$ seqpoint ...` command shown in a page, with the output lines shown under it.
struct Shown {
    at: String,
    args: Vec<String>,
    output: Vec<String>,
    slow: bool,
}

/// Every command in fenced blocks that open with `$ seqpoint`; a block may show several.
fn shown_commands(page: &str, text: &str) -> Vec<Shown> {
    let lines: Vec<&str> = text.lines().collect();
    let mut commands = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].trim_start().starts_with("```") {
            i += 1;
            continue;
        }
        let slow = i > 0 && lines[i - 1].trim() == SLOW_MARK;
        let mut end = i + 1;
        while end < lines.len() && !lines[end].trim_start().starts_with("```") {
            end += 1;
        }
        let body = &lines[i + 1..end.min(lines.len())];
        if body.first().is_some_and(|l| l.starts_with("$ seqpoint")) {
            for (offset, line) in body.iter().enumerate() {
                if let Some(command) = line.strip_prefix("$ ") {
                    let args = words(command, page);
                    commands.push(Shown {
                        at: format!("{page}:{}", i + 2 + offset),
                        args: args[1..].to_vec(),
                        output: Vec::new(),
                        slow,
                    });
                } else {
                    commands.last_mut().unwrap().output.push(line.to_string());
                }
            }
        }
        i = end + 1;
    }
    commands
}

/// A shown command's words; quoting is not needed by any example, so it is refused.
fn words(command: &str, page: &str) -> Vec<String> {
    assert!(
        !command.contains(['"', '\'', '\\', '|', '>', '<', '$']),
        "{page}: `{command}` needs a shell; show a plain command"
    );
    command.split_whitespace().map(String::from).collect()
}

/// Whether `actual` shows as `shown`: lines equal up to trailing spaces, a line `...` elides
/// any number of lines (none too); the shown lines between two elisions stand together in
/// the output, in order, and the first and last stand at its start and end unless elided.
/// Returns the first shown segment that is not found.
fn elided_match(shown: &[String], actual: &str) -> Result<(), String> {
    let actual: Vec<&str> = actual.lines().map(str::trim_end).collect();
    let mut segments: Vec<Vec<&str>> = vec![Vec::new()];
    for line in shown {
        if line.trim() == "..." {
            segments.push(Vec::new());
        } else {
            segments.last_mut().unwrap().push(line.trim_end());
        }
    }
    // Trailing blank lines of either side carry nothing.
    let trim = |lines: &mut Vec<&str>| {
        while lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
    };
    let mut actual = actual;
    trim(&mut actual);
    let last = segments.len() - 1;
    trim(&mut segments[last]);
    let mut at = 0;
    for (i, segment) in segments.iter().enumerate() {
        let anchored_start = i == 0;
        let anchored_end = i == last;
        let fits = |start: usize| {
            start + segment.len() <= actual.len()
                && actual[start..start + segment.len()] == segment[..]
                && (!anchored_end || start + segment.len() == actual.len())
        };
        let found = if anchored_start {
            fits(0).then_some(0)
        } else if anchored_end {
            let start = actual.len().checked_sub(segment.len());
            start.filter(|&s| s >= at && fits(s))
        } else {
            (at..=actual.len()).find(|&s| fits(s))
        };
        match found {
            Some(start) => at = start + segment.len(),
            None => return Err(segment.join("\n")),
        }
    }
    Ok(())
}

fn lines(text: &str) -> Vec<String> {
    text.lines().map(String::from).collect()
}

#[test]
fn an_honest_abbreviation_matches_and_a_changed_figure_does_not() {
    let output = "head\n\n a 1\n b 2\n c 3\n d 4\n\ntotal 10\nnote\n";
    let honest = lines("head\n\n a 1\n ...\n d 4\n\ntotal 10\n...");
    assert_eq!(elided_match(&honest, output), Ok(()));
    assert_eq!(elided_match(&lines(output), output), Ok(()));
    // A figure changed, a line dropped without `...`, lines out of order, a shown end that
    // is not the end: each fails.
    for wrong in [
        "head\n\n a 1\n ...\n d 5\n\ntotal 10\n...",
        "head\n\n a 1\n c 3\n ...",
        "head\n ...\n c 3\n b 2\n ...",
        "head\n...\ntotal 10",
        "...\n a 1\n",
        "head\n\n a 1\n b 2\n c 3\n d 4\n\ntotal 10\nnote\nmore",
    ] {
        assert!(elided_match(&lines(wrong), output).is_err(), "{wrong:?}");
    }
}

#[test]
fn shown_command_outputs_are_what_the_binary_prints() {
    let run_slow = std::env::var_os("SEQPOINT_DOCS_SLOW").is_some_and(|v| v == "1");
    let mut checked = 0;
    let mut skipped = Vec::new();
    let mut wrong = Vec::new();
    for path in pages() {
        let page = shown(&path);
        for command in shown_commands(&page, &read(&path)) {
            if command.slow && !run_slow {
                skipped.push(command.at);
                continue;
            }
            let out = Command::new(env!("CARGO_BIN_EXE_seqpoint"))
                .args(&command.args)
                .current_dir(root())
                .env("NO_COLOR", "1")
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success(),
                "{}: seqpoint {} failed: {}",
                command.at,
                command.args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            );
            checked += 1;
            if let Err(segment) = elided_match(&command.output, &stdout) {
                wrong.push(format!(
                    "{}: seqpoint {}: these shown lines are not in the output:\n{segment}\n\
                     --- the output:\n{stdout}",
                    command.at,
                    command.args.join(" ")
                ));
            }
        }
    }
    if !skipped.is_empty() {
        // In the log even when the test passes (the harness keeps a passing test's prints).
        crate::common::note(&format!(
            "docs_pages: SKIPPED {} slow example(s), SEQPOINT_DOCS_SLOW=1 runs them: {}",
            skipped.len(),
            skipped.join(", ")
        ));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
    assert!(checked >= 3, "only {checked} shown commands were checked");
}
