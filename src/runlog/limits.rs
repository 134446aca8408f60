//! What reading one input may cost: the longest line, the most bytes (after decompression) and
//! the memory the load needs, checked against what the machine has. Defaults are far above any
//! real run log, so only a wrong file (`/dev/zero`, a gzip bomb, a binary) meets them; each
//! refusal names the limit and the flag that raises it, and reading stops there.

use super::error::LoadError;
use crate::options::{Surface, MAX_LINE, MAX_MEMORY};

/// `--max-line`: a row of a real log is well under a kilobyte.
pub const DEFAULT_MAX_LINE: u64 = 1 << 20;
/// `--max-input`: about two billion rows of text.
pub const DEFAULT_MAX_INPUT: u64 = 64 << 30;

/// Limits on one input. `max_memory: None` means the memory the machine has available when
/// the load starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputLimits {
    /// Longest line, or quoted CSV field, in bytes (`--max-line`).
    pub max_line: u64,
    /// Most bytes one input may hold, decompressed (`--max-input`).
    pub max_input: u64,
    /// Most memory one load may need (`--max-memory`); `None`: what is available.
    pub max_memory: Option<u64>,
}

impl Default for InputLimits {
    fn default() -> Self {
        InputLimits {
            max_line: DEFAULT_MAX_LINE,
            max_input: DEFAULT_MAX_INPUT,
            max_memory: None,
        }
    }
}

/// Estimates below this are not checked against the machine (reading `/proc` costs more
/// than such a load).
const MEMORY_CHECK_FROM: u64 = 64 << 20;

impl InputLimits {
    /// A line longer than `--max-line`, at 1-based `line`.
    pub(crate) fn line_too_long(&self, path: &str, line: u64) -> LoadError {
        LoadError::at(
            path,
            line,
            None,
            format!(
                "line longer than {} (the --max-line limit); expected one short row per line: \
                 is this a run log? stopped reading here (raise the limit with --max-line)",
                format_size(self.max_line)
            ),
        )
    }

    /// A quoted CSV field longer than `--max-line`, opened at `line`, field `column`.
    pub(crate) fn field_too_long(&self, path: &str, line: u64, column: u64) -> LoadError {
        LoadError::at(
            path,
            line,
            Some(column),
            format!(
                "quoted field longer than {} (the {max_line} limit); expected a closing '\"' \
                 soon after the opening one (raise the limit with {max_line})",
                format_size(self.max_line),
                max_line = MAX_LINE.typed(Surface::CommandLine, "")
            ),
        )
    }

    /// More than `--max-input` bytes (decompressed when `compressed`).
    pub(crate) fn input_too_large(&self, path: &str, compressed: bool) -> LoadError {
        let what = if compressed {
            "decompresses to more than"
        } else {
            "holds more than"
        };
        LoadError::file(
            path,
            format!(
                "{what} {} (the --max-input limit); stopped reading there (raise the limit \
                 with --max-input)",
                format_size(self.max_input)
            ),
        )
    }

    /// The memory a load may use: `--max-memory`, else what the machine has available.
    /// `None` when neither is known (then nothing is checked).
    pub(crate) fn memory_budget(&self) -> Option<u64> {
        match self.max_memory {
            // What the user allows, but never more than an address-space limit leaves.
            Some(max) => Some(address_space_room().map_or(max, |room| room.min(max))),
            None => available_memory(),
        }
    }

    /// Refuse a load estimated to need `needed` bytes when that is over the budget.
    pub(crate) fn check_memory(&self, path: &str, needed: u64) -> Result<(), LoadError> {
        if needed < MEMORY_CHECK_FROM && self.max_memory.is_none_or(|m| needed <= m) {
            return Ok(());
        }
        match self.memory_budget() {
            Some(budget) if needed > budget => Err(self.out_of_memory(path, needed, budget)),
            _ => Ok(()),
        }
    }

    /// The system refused memory the load asked for (an address-space limit such as
    /// `ulimit -v`, or an overcommitted machine): an error, not an abort.
    pub(crate) fn allocation_failed(&self, path: &str, needed: u64) -> LoadError {
        LoadError::file(
            path,
            format!(
                "reading it needs more than {} and the system gave no more memory (an \
                 address-space limit such as ulimit -v?); stopped reading there (split the log, \
                 or raise the limit)",
                format_size(needed)
            ),
        )
    }

    pub(crate) fn out_of_memory(&self, path: &str, needed: u64, budget: u64) -> LoadError {
        let have = if self.max_memory.is_some() {
            format!("the {} limit", MAX_MEMORY.typed(Surface::CommandLine, ""))
        } else {
            "the memory this process can have now: what the machine has available, under any \
             container cap or address-space limit"
                .to_string()
        };
        LoadError::file(
            path,
            format!(
                "reading it needs at least {}, more than {} ({}); stopped reading there \
                 (raise the limit with {}, or split the log)",
                format_size(needed),
                format_size(budget),
                have,
                MAX_MEMORY.typed(Surface::CommandLine, "")
            ),
        )
    }
}

/// Memory available to a new allocation now, if known: Linux's `MemAvailable`, or less when
/// a control group (a container) caps this process lower.
fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    let machine = kib.checked_mul(1024)?;
    let room = [cgroup_room(), address_space_room()]
        .into_iter()
        .flatten()
        .fold(machine, u64::min);
    Some(room)
}

/// Room left under the process's address-space limit (`ulimit -v`, `prlimit --as`), if one
/// is set: the limit less what the process has mapped already.
fn address_space_room() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } != 0
        || limit.rlim_cur == libc::RLIM_INFINITY
    {
        return None;
    }
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmSize:"))?;
    let mapped_kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(limit.rlim_cur.saturating_sub(mapped_kib * 1024))
}

/// Room left under a cgroup v2 memory cap (`memory.max` minus `memory.current`), if any.
fn cgroup_room() -> Option<u64> {
    let read = |name: &str| -> Option<u64> {
        std::fs::read_to_string(format!("/sys/fs/cgroup/{name}"))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    Some(read("memory.max")?.saturating_sub(read("memory.current")?))
}

const UNITS: [(&str, u64); 5] = [
    ("TiB", 1 << 40),
    ("GiB", 1 << 30),
    ("MiB", 1 << 20),
    ("KiB", 1 << 10),
    ("bytes", 1),
];

/// A size for messages: `1 MiB`, `64 GiB`, `1.5 GiB`, `300 bytes`.
pub fn format_size(bytes: u64) -> String {
    let (unit, scale) = UNITS
        .iter()
        .copied()
        .find(|&(_, scale)| bytes >= scale)
        .unwrap_or(("bytes", 1));
    if scale == 1 {
        return format!("{bytes} bytes");
    }
    let value = bytes as f64 / scale as f64;
    if bytes.is_multiple_of(scale) {
        format!("{} {unit}", bytes / scale)
    } else {
        format!("{value:.1} {unit}")
    }
}

/// A size as a user writes it: `1048576`, `512K`, `1M`, `1MiB`, `64G`, `1.5g`, `2T`
/// (binary units: K is 1024 bytes).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let scale: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => {
            return Err(format!(
                "'{text}': expected a size such as 1048576, 512K, 4M or 64G"
            ))
        }
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("'{text}': expected a size such as 1048576, 512K, 4M or 64G"))?;
    let bytes = value * scale as f64;
    if !(1.0..1.8e19).contains(&bytes) {
        return Err(format!(
            "'{text}': expected a size of at least 1 byte and below 16 EiB"
        ));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_and_print_in_binary_units() {
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        assert_eq!(parse_size("1M"), Ok(1 << 20));
        assert_eq!(parse_size("1MiB"), Ok(1 << 20));
        assert_eq!(parse_size("64g"), Ok(64 << 30));
        assert_eq!(parse_size("1.5K"), Ok(1536));
        assert!(parse_size("0").is_err());
        assert!(parse_size("12 apples").is_err());
        assert!(parse_size("").is_err());
        assert_eq!(format_size(DEFAULT_MAX_LINE), "1 MiB");
        assert_eq!(format_size(DEFAULT_MAX_INPUT), "64 GiB");
        assert_eq!(format_size(1536), "1.5 KiB");
        assert_eq!(format_size(300), "300 bytes");
    }

    #[test]
    fn memory_is_checked_against_the_flag_or_the_machine() {
        let limits = InputLimits {
            max_memory: Some(1000),
            ..InputLimits::default()
        };
        assert!(limits.check_memory("run.csv", 1000).is_ok());
        assert_eq!(
            limits
                .check_memory("run.csv", 2048)
                .unwrap_err()
                .to_string(),
            "run.csv: reading it needs at least 2 KiB, more than 1000 bytes (the --max-memory \
             limit); stopped reading there (raise the limit with --max-memory, or split the log)"
        );
        // Small loads are never refused by the machine's figure.
        assert!(InputLimits::default()
            .check_memory("run.csv", 1 << 20)
            .is_ok());
    }
}
