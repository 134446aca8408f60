//! The options of a selection, each written once: its flag and `:` command, the value it
//! takes, its default, its help, and the one check of its range. clap's flags, the explorer's
//! `:` command line, the equivalent command line and `check_options` all read this file, so a
//! value one of them accepts is accepted by all, and an error names the option, not a flag.

use std::fmt;

use crate::text::numbers::as_typed;

/// The largest K tried for an error target unless the user says otherwise (`--max-bins`).
pub const DEFAULT_MAX_BINS: usize = 64;
/// The error target, in percent, unless the user says otherwise (`--target-error`).
pub const DEFAULT_TARGET_PCT: f64 = 1.0;
/// The finest error target accepted, in percent: finer is below the run-to-run noise of any
/// measured time, so no K or number of samples could be computed to meet it.
pub const MIN_TARGET_PCT: f64 = 0.01;
/// The coarsest error target accepted, in percent.
pub const MAX_TARGET_PCT: f64 = 100.0;

/// What an option's value is, and the range it must lie in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Values {
    /// A whole number of at least `least`.
    Count { least: u64 },
    /// A percentage from `least` to `most`, inclusive (a trailing `%` is allowed).
    Percent { least: f64, most: f64 },
    /// Any other value: a name, a range or a column, parsed by its own type.
    Word,
    /// No value: the option is a switch.
    Switch,
}

/// One option: how the command line and the explorer spell it, and what it takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Opt {
    /// The flag's long name, without `--`.
    pub flag: &'static str,
    /// The explorer's `:` command, when the explorer can change it.
    pub command: Option<&'static str>,
    /// The value's placeholder in help (`PCT`); empty for a switch.
    pub value_name: &'static str,
    pub values: Values,
    /// A value the explorer's help shows as an example (`:target 0.5`).
    pub example: &'static str,
    /// One line for the explorer's command help.
    pub summary: &'static str,
    /// The flag's help (`seqpoint select --help`).
    pub help: &'static str,
}

/// Where an option is typed, which decides how it is spelt in a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// `--target-error 0.5`
    CommandLine,
    /// `:target 0.5`
    Explorer,
}

impl Opt {
    /// The option with its value as the user typed it on `surface`: `--target-error 0.5` or
    /// `:target 0.5` (the flag's spelling where the explorer has no command for it).
    pub fn typed(&self, surface: Surface, value: &str) -> String {
        typed(self.flag, self.command, surface, value)
    }
    /// A value of a `Count` option: a whole number within its range.
    pub fn count(&self, text: &str) -> Result<u64, OptionError> {
        let n = text.parse::<u64>().map_err(|_| self.out_of_range(text))?;
        self.check_count(n).map_err(|_| self.out_of_range(text))?;
        Ok(n)
    }

    /// A value of a `Percent` option, as typed (`0.5` or `0.5%`), within its range.
    pub fn percent(&self, text: &str) -> Result<f64, OptionError> {
        let pct = parse_percent(text).map_err(|_| self.out_of_range(text))?;
        self.check_percent(pct)
            .map_err(|_| self.out_of_range(text))?;
        Ok(pct)
    }

    /// A count the option was given some other way (clap, the library): within its range.
    pub fn check_count(&self, n: u64) -> Result<(), OptionError> {
        match self.values {
            Values::Count { least } if n < least => Err(self.out_of_range(&n.to_string())),
            _ => Ok(()),
        }
    }

    /// A percentage the option was given some other way: within its range.
    pub fn check_percent(&self, pct: f64) -> Result<(), OptionError> {
        match self.values {
            Values::Percent { least, most }
                if !(pct.is_finite() && (least..=most).contains(&pct)) =>
            {
                Err(self.out_of_range(&as_typed(pct)))
            }
            _ => Ok(()),
        }
    }

    /// `value` (as given) is not in the option's range: the one wording of every surface.
    fn out_of_range(&self, value: &str) -> OptionError {
        let expected = match self.values {
            Values::Percent { least, most } if *self == TARGET_ERROR => format!(
                "a percentage from {least} to {most}; a target finer than {least}% is below \
                 the run-to-run noise of any measured time, and no K or number of samples \
                 would be computed to meet it"
            ),
            Values::Percent { least, most } => format!("a percentage from {least} to {most}"),
            Values::Count { least } => format!("a whole number of at least {least}"),
            Values::Word | Values::Switch => "a value it takes".into(),
        };
        self.error(value, format!("expected {expected}"))
    }

    pub fn error(&self, value: &str, problem: String) -> OptionError {
        OptionError {
            flag: self.flag,
            command: self.command,
            value: value.to_string(),
            problem,
            instead: None,
        }
    }
}

/// An option named as `surface` spells it, with its value: `--target-error 0.5`, `:target
/// 0.5` (the flag's spelling where the explorer has no command for it).
fn typed(flag: &str, command: Option<&str>, surface: Surface, value: &str) -> String {
    let name = match (surface, command) {
        (Surface::Explorer, Some(command)) => format!(":{command}"),
        _ => format!("--{flag}"),
    };
    if value.is_empty() {
        name
    } else {
        format!("{name} {value}")
    }
}

/// A percentage as typed: a number, optionally followed by `%`. The parser clap and the
/// explorer both use, so `--target-error 0.5%` and `:target 0.5%` mean the same.
pub fn parse_percent(text: &str) -> Result<f64, String> {
    let number = text.trim().strip_suffix('%').unwrap_or(text.trim());
    number
        .parse::<f64>()
        .map_err(|_| format!("{text:?} is not a percentage (a number such as 0.5 or 0.5%)"))
}

/// A value an option cannot take: which option, the value as given, and why. Worded for the
/// command line by `Display`; the explorer words it with `worded(Surface::Explorer)`.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionError {
    /// The option's flag and `:` command (as in its `Opt`).
    pub flag: &'static str,
    pub command: Option<&'static str>,
    pub value: String,
    pub problem: String,
    /// Another option's value that would do, named on each surface as it is typed there.
    pub instead: Option<(&'static Opt, String)>,
}

impl OptionError {
    /// The same error, ending with "use `option value`" in the words of each surface.
    pub fn instead(mut self, option: &'static Opt, value: &str) -> Self {
        self.instead = Some((option, value.to_string()));
        self
    }

    pub fn worded(&self, surface: Surface) -> String {
        let option = typed(self.flag, self.command, surface, &self.value);
        match &self.instead {
            Some((other, value)) => {
                format!(
                    "{option}: {}; use {}",
                    self.problem,
                    other.typed(surface, value)
                )
            }
            None => format!("{option}: {}", self.problem),
        }
    }
}

impl fmt::Display for OptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.worded(Surface::CommandLine))
    }
}

impl std::error::Error for OptionError {}

pub const METHOD: Opt = Opt {
    flag: "method",
    command: Some("method"),
    value_name: "NAME",
    values: Values::Word,
    example: "kmeans",
    summary: "optimal, uniform, quantile or kmeans",
    help: "Binning method (default: optimal for one length, kmeans for two)",
};

pub const PICK: Opt = Opt {
    flag: "pick",
    command: Some("pick"),
    value_name: "NAME",
    values: Values::Word,
    example: "median",
    summary: "nearest-mean, median, centroid or mode",
    help: "Representative per bin (default: nearest-mean with a metric, median without)",
};

pub const BINS: Opt = Opt {
    flag: "bins",
    command: Some("k"),
    value_name: "K",
    values: Values::Count { least: 1 },
    example: "8",
    summary: "K bins per stratum (leaves auto-K)",
    help: "Number of bins (overrides --target-error)",
};

pub const TARGET_ERROR: Opt = Opt {
    flag: "target-error",
    command: Some("target"),
    value_name: "PCT",
    values: Values::Percent {
        least: MIN_TARGET_PCT,
        most: MAX_TARGET_PCT,
    },
    example: "0.5",
    summary: "error target in percent (0.01 to 100)",
    help: "Error target in percent (0.01 to 100): the smallest K that meets it is chosen",
};

pub const TARGET_BY: Opt = Opt {
    flag: "target-by",
    command: None,
    value_name: "TARGET_BY",
    values: Values::Word,
    example: "measured",
    summary: "interval or measured",
    help: "What must meet the target: error and 95% interval, or the measured error alone",
};

pub const MAX_BINS: Opt = Opt {
    flag: "max-bins",
    command: Some("max-bins"),
    value_name: "K",
    values: Values::Count { least: 1 },
    example: "128",
    summary: "the largest K auto-K tries",
    help: "Largest K tried for the error target (at least 1)",
};

pub const WARMUP: Opt = Opt {
    flag: "warmup",
    command: Some("warmup"),
    value_name: "N",
    values: Values::Count { least: 0 },
    example: "5",
    summary: "never pick the first N iterations (they still count)",
    help: "The first N iterations are never chosen (they still count in totals)",
};

pub const EXCLUDE: Opt = Opt {
    flag: "exclude",
    command: Some("exclude"),
    value_name: "A-B",
    values: Values::Word,
    example: "0-420",
    summary: "leave out iterations A to B",
    help: "Leave iterations A-B (inclusive, the run's iteration numbers) out: in no total, \
           never picked; repeatable, overlapping ranges merge (e.g. a window slowed by another \
           process)",
};

pub const SEED: Opt = Opt {
    flag: "seed",
    command: Some("seed"),
    value_name: "N",
    values: Values::Count { least: 0 },
    example: "3",
    summary: "seed of random draws",
    help: "Seed for k-means (and any random draw)",
};

pub const SAMPLES: Opt = Opt {
    flag: "samples",
    command: Some("samples"),
    value_name: "M",
    values: Values::Count { least: 1 },
    example: "2",
    summary: "profiled iterations per SeqPoint",
    help: "Profiled iterations per SeqPoint: the intervals assume M, and M > 1 lists the \
           iterations to profile (the SeqPoint, its alternates, then seeded draws from its \
           bin). Default with --target-error: the least profiling that meets it (one per \
           SeqPoint where that suffices, else a plan); --samples 1 forces one per SeqPoint",
};

pub const BUDGET: Opt = Opt {
    flag: "budget",
    command: Some("budget"),
    value_name: "B",
    values: Values::Count { least: 1 },
    example: "80",
    summary: "profile B iterations in all",
    help: "Profile B iterations in all, spread over the bins by Neyman allocation \
           (m_b ~ w_b s_b)",
};

pub const PLAN: Opt = Opt {
    flag: "plan",
    command: Some("plan"),
    value_name: "",
    values: Values::Switch,
    example: "",
    summary: "the cheapest plan meeting the target",
    help: "With --target-error: the cheapest plan (bins and samples per bin) whose 95% \
           interval meets the target",
};

pub const STRATA: Opt = Opt {
    flag: "strata",
    command: Some("strata"),
    value_name: "STRATA",
    values: Values::Word,
    example: "epoch",
    summary: "none, epoch or phases:P",
    help: "Bin training phases separately: none, epoch, phases:P",
};

pub const METRIC: Opt = Opt {
    flag: "metric",
    command: Some("metric"),
    value_name: "COL",
    values: Values::Word,
    example: "energy_j",
    summary: "metric column (reloads the log)",
    help: "Metric column (repeatable); default time_ms and energy_j where present",
};

/// The options of how a run log is read, shared by every command that reads one.
pub const COMPARE: Opt = Opt {
    flag: "compare",
    command: None,
    value_name: "FILE",
    values: Values::Word,
    example: "new.csv",
    summary: "a second configuration's log",
    help: "A second configuration's log over the same iterations (aligned by iteration)",
};

pub const KEY: Opt = Opt {
    flag: "key",
    command: Some("key"),
    value_name: "COL[,COL2]",
    values: Values::Word,
    example: "src_len,tgt_len",
    summary: "key column(s), derived too: fit, tokens,attn (reloads)",
    help: "Key column(s): one length, or two for translation (src_len,tgt_len)",
};

/// `project`'s measurements of the listed iterations, as the explorer's `:measured` reads
/// them (the two-stage flow: the target judged on the new configuration).
pub const MEASURED: Opt = Opt {
    flag: "measured",
    command: Some("measured"),
    value_name: "FILES",
    values: Values::Word,
    example: "measured.csv",
    summary: "judge the target on the listed iterations measured",
    help: "Measurements of the listed iterations on the new configuration",
};

/// `project --top-up`: the iterations still to measure, written as a SeqPoints file.
pub const TOP_UP: Opt = Opt {
    flag: "top-up",
    command: Some("top-up"),
    value_name: "FILE",
    values: Values::Word,
    example: "next.json",
    summary: "write what :measured says to measure next (JSON and CSV)",
    help: "Write the iterations still to measure as a SeqPoints file",
};

/// The key columns a `--key` / `:key` value names: one, or two for translation, each named
/// once and none empty.
pub fn key_columns(text: &str) -> Result<Vec<String>, OptionError> {
    let names: Vec<String> = text.split(',').map(|n| n.trim().to_string()).collect();
    if names.len() > 2 {
        return Err(KEY.error(
            text,
            format!(
                "one or two key columns (a length, or src_len,tgt_len), not {}",
                names.len()
            ),
        ));
    }
    if names.iter().any(String::is_empty) {
        return Err(KEY.error(
            text,
            "an empty column name; expected COL or COL1,COL2".into(),
        ));
    }
    if let [a, b] = names.as_slice() {
        if a == b {
            return Err(KEY.error(
                text,
                "names the same column twice; give it once, or two different columns".into(),
            ));
        }
    }
    Ok(names)
}

pub const INPUT_FORMAT: Opt = Opt {
    flag: "input-format",
    command: None,
    value_name: "INPUT_FORMAT",
    values: Values::Word,
    example: "tsv",
    summary: "csv, tsv or jsonl",
    help: "Input format, overriding the file extension",
};

pub const SKIP_BAD: Opt = Opt {
    flag: "skip-bad",
    command: None,
    value_name: "",
    values: Values::Switch,
    example: "",
    summary: "skip bad rows",
    help: "Skip bad rows (and report them) instead of stopping at the first; refused when more \
           than half the rows are bad, unless --skip-bad=PCT allows that share (100% keeps \
           whatever is left)",
};

pub const COST: Opt = Opt {
    flag: "cost",
    command: None,
    value_name: "COST",
    values: Values::Word,
    example: "quadratic",
    summary: "linear, quadratic or power:P",
    help: "Proxy cost when the log has no metric: linear, quadratic or power:P",
};

pub const MODEL: Opt = Opt {
    flag: "model",
    command: None,
    value_name: "SHAPE",
    values: Values::Word,
    example: "layers=24,hidden=2048,vocab=50304",
    summary: "the model's shape, for --key flops",
    help: "With --key flops: the model's shape, layers=L,hidden=H[,vocab=V]; a step's FLOPs \
           are 6 x parameters x tokens + 12 x L x H x the sum of squared document lengths",
};

pub const MAX_LINE: Opt = Opt {
    flag: "max-line",
    command: None,
    value_name: "SIZE",
    values: Values::Word,
    example: "4M",
    summary: "longest line an input may have",
    help: "Longest line (or quoted field) an input may have, e.g. 4M",
};

pub const MAX_INPUT: Opt = Opt {
    flag: "max-input",
    command: None,
    value_name: "SIZE",
    values: Values::Word,
    example: "256G",
    summary: "most bytes an input may hold",
    help: "Most bytes an input may hold once decompressed, e.g. 256G",
};

pub const MAX_MEMORY: Opt = Opt {
    flag: "max-memory",
    command: None,
    value_name: "SIZE",
    values: Values::Word,
    example: "16G",
    summary: "most memory a load may need",
    help: "Most memory a load may need (default: what the machine has available), e.g. 16G",
};

pub const RUN_ITERATIONS: Opt = Opt {
    flag: "run-iterations",
    command: None,
    value_name: "N",
    values: Values::Count { least: 1 },
    example: "100000",
    summary: "iterations of the whole run",
    help: "The whole run has N iterations: scales the weights",
};

pub const RUN_EPOCHS: Opt = Opt {
    flag: "run-epochs",
    command: None,
    value_name: "E",
    values: Values::Word,
    example: "90",
    summary: "epochs of the whole run",
    help: "The whole run has E epochs (the log covers its own epochs of them): scales the weights",
};

pub const ALLOW_MISSING: Opt = Opt {
    flag: "allow-missing",
    command: None,
    value_name: "",
    values: Values::Switch,
    example: "",
    summary: "project without the SeqPoints not measured",
    help: "Project even when some SeqPoints were not measured, saying which and their share",
};

pub const FORCE: Opt = Opt {
    flag: "force",
    command: None,
    value_name: "",
    values: Values::Switch,
    example: "",
    summary: "replace an existing output file",
    help: "Overwrite the output file if it exists (a regular file only: a device, named pipe \
           or socket is never replaced; a read-only file needs --replace-read-only too)",
};

pub const REPLACE_READ_ONLY: Opt = Opt {
    flag: "replace-read-only",
    command: None,
    value_name: "",
    values: Values::Switch,
    example: "",
    summary: "replace a read-only output file as well",
    help: "With --force, also replace a read-only output file, when its folder is yours (the \
           new file keeps the old one's owner and mode)",
};

/// The options a selection takes, in the order help and the equivalent command line list
/// them.
pub const SELECT_OPTIONS: [Opt; 13] = [
    METHOD,
    PICK,
    BINS,
    TARGET_ERROR,
    TARGET_BY,
    MAX_BINS,
    WARMUP,
    EXCLUDE,
    SEED,
    SAMPLES,
    BUDGET,
    PLAN,
    STRATA,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_is_accepted_exactly_within_its_range() {
        for ok in ["0.01", "0.5", "0.5%", "1", "100", "100%"] {
            assert!(TARGET_ERROR.percent(ok).is_ok(), "{ok}");
        }
        for bad in [
            "0.001", "0.00999", "0", "-1", "100.5", "inf", "NaN", "one", "", "%",
        ] {
            assert!(TARGET_ERROR.percent(bad).is_err(), "{bad}");
        }
        let e = TARGET_ERROR.percent("0.001").unwrap_err();
        assert!(e.to_string().starts_with("--target-error 0.001: "), "{e}");
        assert!(
            e.worded(Surface::Explorer).starts_with(":target 0.001: "),
            "{e:?}"
        );
        // The check of a parsed value (clap's, the library's) says what the typed one says.
        assert_eq!(TARGET_ERROR.check_percent(0.001).unwrap_err(), e);
    }

    #[test]
    fn counts_refuse_below_their_least_and_words() {
        assert_eq!(BINS.count("8"), Ok(8));
        assert!(BINS
            .count("0")
            .unwrap_err()
            .to_string()
            .contains("at least 1"));
        assert_eq!(
            BINS.count("eight").unwrap_err().to_string(),
            "--bins eight: expected a whole number of at least 1"
        );
        assert_eq!(WARMUP.count("0"), Ok(0));
        assert!(SAMPLES.check_count(0).is_err() && SAMPLES.check_count(1).is_ok());
    }

    #[test]
    fn an_option_is_spelt_as_the_surface_types_it() {
        assert_eq!(BINS.typed(Surface::CommandLine, "8"), "--bins 8");
        assert_eq!(BINS.typed(Surface::Explorer, "8"), ":k 8");
        // No `:` command: the flag's spelling in both.
        assert_eq!(
            TARGET_BY.typed(Surface::Explorer, "measured"),
            "--target-by measured"
        );
        assert_eq!(PLAN.typed(Surface::CommandLine, ""), "--plan");
    }

    #[test]
    fn an_error_and_what_to_use_instead_are_worded_in_one_surface() {
        let e = METHOD
            .error("optimal", "needs a one-length key".into())
            .instead(&METHOD, "kmeans");
        assert_eq!(
            e.worded(Surface::CommandLine),
            "--method optimal: needs a one-length key; use --method kmeans"
        );
        assert_eq!(
            e.worded(Surface::Explorer),
            ":method optimal: needs a one-length key; use :method kmeans"
        );
        assert_eq!(e.to_string(), e.worded(Surface::CommandLine));
    }

    #[test]
    fn flags_and_commands_are_each_named_once() {
        let load = [
            COMPARE,
            KEY,
            METRIC,
            INPUT_FORMAT,
            SKIP_BAD,
            COST,
            MODEL,
            MAX_LINE,
            MAX_INPUT,
            MAX_MEMORY,
            RUN_ITERATIONS,
            RUN_EPOCHS,
            ALLOW_MISSING,
            FORCE,
            REPLACE_READ_ONLY,
        ];
        let mut flags: Vec<_> = SELECT_OPTIONS.iter().chain(&load).map(|o| o.flag).collect();
        let mut commands: Vec<_> = SELECT_OPTIONS.iter().filter_map(|o| o.command).collect();
        let (f, c) = (flags.len(), commands.len());
        flags.sort_unstable();
        flags.dedup();
        commands.sort_unstable();
        commands.dedup();
        assert_eq!((flags.len(), commands.len()), (f, c));
    }
}
