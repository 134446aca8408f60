//! The `:` command line: every setting the screen may advise, typed in place (`:k 8`,
//! `:target 0.5`, `:samples 2`, `:strata epoch` …). Parsing and completion are plain
//! functions of the typed text; `update` applies what they return.

use crate::binning::Method;
use crate::options::{
    Opt, Surface, BINS, BUDGET, EXCLUDE, KEY, MAX_BINS, MEASURED, METHOD, METRIC, PICK, PLAN,
    SAMPLES, SEED, STRATA, TARGET_ERROR, TOP_UP, WARMUP,
};
use crate::pick::Pick;
use crate::select::{parse_iteration_range, IterationRange, Strata};

/// What a command line asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// A fixed K (leaves auto-K).
    K(usize),
    /// The error target, in percent.
    Target(f64),
    /// Auto-K on.
    Auto,
    Method(Method),
    Pick(Pick),
    /// Options fixed for a session: the explorer starts it again with the new value.
    Samples(u64),
    MaxBins(usize),
    Strata(Strata),
    Warmup(u64),
    Seed(u64),
    /// The cheapest plan (bins x samples) meeting the target (`--plan`).
    Plan,
    /// Leave iterations A-B out (`--exclude A-B`), added to those left out already.
    Exclude(IterationRange),
    /// `:exclude none`: every iteration back in.
    IncludeAll,
    /// B profiled iterations in all, by Neyman allocation (`--budget B`).
    Budget(u64),
    /// Another metric column: the log is read again with `--metric NAME`.
    Metric(String),
    /// Other key columns (a derived one such as `fit`, or `tokens,attn`): the log is read
    /// again with `--key NAMES`, and the distribution shows that key.
    Key(Vec<String>),
    /// Measurements of the listed iterations on the new configuration: the target judged
    /// on them, as `project --target-error` judges it.
    Measured(Vec<String>),
    /// Write the iterations `:measured` says to measure next (`project --top-up FILE`).
    TopUp(String),
}

/// `auto`, the one command that is the explorer's own rather than an option of `select`.
const AUTO: (&str, &str, &str) = ("auto", "", "auto-K: the smallest K that meets the target");

/// A `select` option as a command: its `:` name, value and summary, all from `options`.
const fn entry(option: Opt) -> (&'static str, &'static str, &'static str) {
    match option.command {
        Some(name) => (name, option.value_name, option.summary),
        None => panic!("an option without a `:` command"),
    }
}

/// The commands, their argument and what they do, in the order the help lists them:
/// completion and the help read this.
pub const COMMANDS: &[(&str, &str, &str)] = &[
    entry(BINS),
    entry(TARGET_ERROR),
    AUTO,
    entry(METHOD),
    entry(PICK),
    entry(SAMPLES),
    entry(MAX_BINS),
    entry(STRATA),
    entry(WARMUP),
    entry(SEED),
    entry(METRIC),
    entry(KEY),
    entry(PLAN),
    entry(BUDGET),
    entry(EXCLUDE),
    entry(MEASURED),
    entry(TOP_UP),
];

/// The option a command sets (none for `auto`).
fn option_of(command: &str) -> Option<Opt> {
    [
        BINS,
        TARGET_ERROR,
        METHOD,
        PICK,
        SAMPLES,
        MAX_BINS,
        STRATA,
        WARMUP,
        SEED,
        METRIC,
        KEY,
        PLAN,
        BUDGET,
        EXCLUDE,
        MEASURED,
        TOP_UP,
    ]
    .into_iter()
    .find(|o| o.command == Some(command))
}

/// Words a command's argument may take, for completion.
fn values(command: &str) -> Vec<&'static str> {
    match command {
        "method" => Method::ALL.iter().map(|m| m.name()).collect(),
        "pick" => Pick::ALL.iter().map(|p| p.name()).collect(),
        "strata" => vec!["none", "epoch", "phases:"],
        "exclude" => vec!["none"],
        // The keys a packed run derives (`doc_lens`); a log's own columns are typed out.
        "key" => vec![
            crate::runlog::packed::FIT_KEY,
            crate::runlog::packed::FLOPS_KEY,
            "tokens,attn",
        ],
        _ => Vec::new(),
    }
}

/// Tab: the line completed as far as it is unambiguous, or `None` when nothing fits.
pub fn complete(line: &str) -> Option<String> {
    let (name, rest) = match line.split_once(' ') {
        Some((name, rest)) => (name, Some(rest)),
        None => (line, None),
    };
    match rest {
        None => {
            let fits: Vec<&str> = COMMANDS
                .iter()
                .map(|c| c.0)
                .filter(|c| c.starts_with(name))
                .collect();
            let common = common_prefix(&fits)?;
            // One command: a space after it, ready for its argument.
            let takes = COMMANDS.iter().any(|c| c.0 == common && !c.1.is_empty());
            Some(if fits.len() == 1 && takes {
                format!("{common} ")
            } else {
                common
            })
        }
        Some(arg) => {
            let fits: Vec<&str> = values(name)
                .into_iter()
                .filter(|v| v.starts_with(arg.trim_start()))
                .collect();
            common_prefix(&fits).map(|v| format!("{name} {v}"))
        }
    }
}

/// What the commands starting with the typed word are, for the line under the prompt.
pub fn suggestions(line: &str) -> Vec<(&'static str, &'static str, &'static str)> {
    let name = line.split(' ').next().unwrap_or("");
    let exact: Vec<_> = COMMANDS.iter().copied().filter(|c| c.0 == name).collect();
    if !exact.is_empty() {
        return exact;
    }
    COMMANDS
        .iter()
        .copied()
        .filter(|c| c.0.starts_with(name))
        .collect()
}

fn common_prefix(words: &[&str]) -> Option<String> {
    let first = words.first()?;
    let mut len = first.len();
    for w in &words[1..] {
        len = first
            .char_indices()
            .zip(w.chars())
            .take_while(|((_, a), b)| a == b)
            .count()
            .min(len);
    }
    Some(first.chars().take(len).collect())
}

/// The command a line asks for, or what is wrong with it (said in the prompt, in place).
pub fn parse<'a>(line: &'a str) -> Result<Command, String> {
    let mut words = line.split_whitespace();
    let Some(name) = words.next() else {
        return Err("type a command: k, target, samples, method … (Tab completes)".into());
    };
    let values: Vec<&'a str> = words.collect();
    let arg = values.first().copied();
    // `:measured` takes each round's file; every other command one value.
    if let (Some(extra), false) = (values.get(1), name == "measured") {
        return Err(format!(
            "{name}: one value expected, {extra:?} is one too many"
        ));
    }
    let Some((name, what, _)) = COMMANDS.iter().find(|c| c.0 == name) else {
        return Err(format!(
            "no command {name:?}; known: {}",
            COMMANDS.iter().map(|c| c.0).collect::<Vec<_>>().join(", ")
        ));
    };
    if let (true, Some(arg)) = (what.is_empty(), arg) {
        // A switch given a value would silently drop it: refused, so nothing is ignored.
        let hint = if *name == "auto" {
            format!(" (:target {arg} sets the target auto-K meets)")
        } else {
            String::new()
        };
        return Err(format!(
            ":{name} takes no value; {arg:?} is one too many{hint}"
        ));
    }
    let option = option_of(name);
    let need = |arg: Option<&'a str>| -> Result<&'a str, String> {
        let example = option.map_or("", |o| o.example);
        arg.ok_or_else(|| format!(":{name} needs {what}: e.g. :{name} {example}"))
    };
    // Counts and percentages are checked by their option, as `select` checks its flags.
    let count = |arg: Option<&'a str>, option: Opt| -> Result<u64, String> {
        option
            .count(need(arg)?)
            .map_err(|e| e.worded(Surface::Explorer))
    };
    Ok(match *name {
        "k" => Command::K(count(arg, BINS)? as usize),
        "budget" => Command::Budget(count(arg, BUDGET)?),
        "target" => Command::Target(
            TARGET_ERROR
                .percent(need(arg)?)
                .map_err(|e| e.worded(Surface::Explorer))?,
        ),
        "auto" => Command::Auto,
        "method" => {
            let text = need(arg)?;
            Command::Method(
                Method::ALL
                    .into_iter()
                    .find(|m| m.name() == text)
                    .ok_or_else(|| format!(":method: {text:?} is not one of {}", list(name)))?,
            )
        }
        "pick" => {
            let text = need(arg)?;
            Command::Pick(
                Pick::ALL
                    .into_iter()
                    .find(|p| p.name() == text)
                    .ok_or_else(|| format!(":pick: {text:?} is not one of {}", list(name)))?,
            )
        }
        "samples" => Command::Samples(count(arg, SAMPLES)?),
        "max-bins" => Command::MaxBins(count(arg, MAX_BINS)? as usize),
        "strata" => Command::Strata(
            need(arg)?
                .parse::<Strata>()
                .map_err(|e| format!(":strata: {e}"))?,
        ),
        "warmup" => Command::Warmup(count(arg, WARMUP)?),
        "seed" => Command::Seed(count(arg, SEED)?),
        "metric" => Command::Metric(need(arg)?.to_string()),
        "key" => Command::Key(
            crate::options::key_columns(need(arg)?).map_err(|e| e.worded(Surface::Explorer))?,
        ),
        // Each round's file, as `project` takes them: the first stage's, then each top-up's.
        "measured" => {
            need(arg)?;
            Command::Measured(values.iter().map(|v| v.to_string()).collect())
        }
        "top-up" => Command::TopUp(need(arg)?.to_string()),
        "plan" => Command::Plan,
        "exclude" if need(arg)? == "none" => Command::IncludeAll,
        "exclude" => Command::Exclude(
            parse_iteration_range(need(arg)?).map_err(|e| format!(":exclude: {e}"))?,
        ),
        _ => unreachable!("every command in COMMANDS is parsed above"),
    })
}

fn list(name: &str) -> String {
    values(name).join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_advertised_command_parses() {
        let cases = [
            ("k 8", Command::K(8)),
            ("target 0.5", Command::Target(0.5)),
            ("target 0.5%", Command::Target(0.5)),
            ("samples 2", Command::Samples(2)),
            ("strata epoch", Command::Strata(Strata::Epoch)),
            ("method kmeans", Command::Method(Method::Kmeans)),
            ("pick median", Command::Pick(Pick::Median)),
            ("warmup 5", Command::Warmup(5)),
            ("seed 3", Command::Seed(3)),
            ("max-bins 128", Command::MaxBins(128)),
            ("auto", Command::Auto),
            ("plan", Command::Plan),
            ("budget 80", Command::Budget(80)),
        ];
        for (line, want) in cases {
            assert_eq!(parse(line), Ok(want), "{line}");
        }
        assert_eq!(
            parse("exclude 0-420"),
            Ok(Command::Exclude(IterationRange {
                first: 0,
                last: 420
            }))
        );
        assert_eq!(
            parse("metric energy_j"),
            Ok(Command::Metric("energy_j".into()))
        );
        // Each round's file: the first stage's, then the top-up's.
        assert_eq!(
            parse("measured first.csv  second.csv"),
            Ok(Command::Measured(vec![
                "first.csv".into(),
                "second.csv".into()
            ]))
        );
    }

    #[test]
    fn mistakes_are_explained() {
        for (line, says) in [
            ("k", ":k needs K"),
            ("k 0", "at least 1"),
            ("k eight", ":k eight: expected a whole number of at least 1"),
            (
                "target 120",
                ":target 120: expected a percentage from 0.01 to 100",
            ),
            (
                "target 0.001",
                ":target 0.001: expected a percentage from 0.01 to 100",
            ),
            ("method fastest", "optimal, uniform"),
            ("exclude 9-3", "reversed"),
            ("zoom 2", "no command \"zoom\""),
            ("k 8 9", "one too many"),
            ("auto 5", ":auto takes no value; \"5\" is one too many"),
            ("auto 5", ":target 5"),
            ("plan x", ":plan takes no value; \"x\" is one too many"),
            ("", "type a command"),
        ] {
            let e = parse(line).unwrap_err();
            assert!(e.contains(says), "{line:?}: {e}");
        }
    }

    #[test]
    fn tab_completes_names_and_values() {
        assert_eq!(complete("ta").as_deref(), Some("target "));
        assert_eq!(complete("s").as_deref(), Some("s"));
        assert_eq!(complete("sa").as_deref(), Some("samples "));
        assert_eq!(complete("au").as_deref(), Some("auto"));
        assert_eq!(complete("method k").as_deref(), Some("method kmeans"));
        assert_eq!(complete("pick m").as_deref(), Some("pick m"));
        assert_eq!(complete("pick me").as_deref(), Some("pick median"));
        assert_eq!(complete("zz"), None);
        assert_eq!(suggestions("s").len(), 3);
    }
}
