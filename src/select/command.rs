//! The `seqpoint select ...` command line equivalent to a selection, so a selection found by
//! hand in the explorer is reproducible in a script (and recorded in exports).

use crate::binning::Method;
use crate::options::{
    Opt, BINS, BUDGET, COMPARE, COST, EXCLUDE, INPUT_FORMAT, KEY, MAX_BINS, MAX_INPUT, MAX_LINE,
    MAX_MEMORY, METHOD, METRIC, PICK, PLAN, SAMPLES, SEED, SKIP_BAD, STRATA, TARGET_BY,
    TARGET_ERROR, WARMUP,
};
use crate::pick::Pick;
use crate::runlog::{InputFormat, LoadOptions};
use crate::select::plan::PlanAsk;
use crate::select::{BinCount, SelectOptions, Strata, TargetRule, DEFAULT_MAX_BINS};

/// Quote an argument for a POSIX shell only when it needs it.
pub fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./:=,+@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// A `seqpoint select` command line being written, each option spelt as `options`
/// spells it, so that every command the tool prints is one `select` accepts.
#[derive(Debug, Clone)]
pub struct CommandLine {
    words: Vec<String>,
}

impl CommandLine {
    /// `seqpoint select RUN`.
    pub fn select(run: &str) -> Self {
        CommandLine {
            words: vec!["seqpoint".into(), "select".into(), shell_word(run)],
        }
    }

    /// `--flag value`, the value quoted for a shell where it needs it.
    pub fn option(&mut self, option: Opt, value: impl ToString) -> &mut Self {
        self.words.push(format!("--{}", option.flag));
        self.words.push(shell_word(&value.to_string()));
        self
    }

    /// `--flag` of a switch.
    pub fn switch(&mut self, option: Opt) -> &mut Self {
        self.words.push(format!("--{}", option.flag));
        self
    }

    /// The command as one line.
    pub fn text(&self) -> String {
        self.words.join(" ")
    }
}

/// The command line that reproduces `options` and the profiling asked for (`ask`) on `run`.
/// Sample runs are named by their `sample:` names, which the CLI also accepts. Defaults are
/// left out.
pub fn select_command(
    run: &str,
    load: &LoadOptions,
    options: &SelectOptions,
    ask: &PlanAsk,
    method: Method,
    pick: Pick,
) -> String {
    let mut line = CommandLine::select(run);
    if let Some(compare) = &load.compare {
        line.option(COMPARE, compare);
    }
    if !load.key.is_empty() {
        line.option(KEY, load.key.join(","));
    }
    for metric in &load.metrics {
        line.option(METRIC, metric);
    }
    if let Some(format) = load.format {
        let name = match format {
            InputFormat::Csv => "csv",
            InputFormat::Tsv => "tsv",
            InputFormat::Jsonl => "jsonl",
        };
        line.option(INPUT_FORMAT, name);
    }
    match options.bins {
        BinCount::Fixed(k) => line.option(BINS, k),
        BinCount::Target(t) => {
            line.option(TARGET_ERROR, t);
            if options.target_by == TargetRule::Measured {
                line.option(TARGET_BY, "measured");
            }
            if options.max_bins != DEFAULT_MAX_BINS {
                line.option(MAX_BINS, options.max_bins);
            }
            &mut line
        }
    };
    line.option(METHOD, method.name());
    line.option(PICK, pick.name());
    if options.warmup > 0 {
        line.option(WARMUP, options.warmup);
    }
    for range in options.exclude.texts() {
        line.option(EXCLUDE, range);
    }
    if options.seed != 0 {
        line.option(SEED, options.seed);
    }
    if options.samples != 1 {
        line.option(SAMPLES, options.samples);
    }
    if options.strata != Strata::None {
        line.option(STRATA, options.strata);
    }
    if load.cost != crate::runlog::cost::Cost::Linear {
        line.option(COST, load.cost);
    }
    let limits = &load.limits;
    let defaults = crate::runlog::InputLimits::default();
    if limits.max_line != defaults.max_line {
        line.option(MAX_LINE, limits.max_line);
    }
    if limits.max_input != defaults.max_input {
        line.option(MAX_INPUT, limits.max_input);
    }
    if let Some(memory) = limits.max_memory {
        line.option(MAX_MEMORY, memory);
    }
    match load.skip_bad_share {
        Some(share) if load.skip_bad && share != crate::runlog::SKIP_BAD_SHARE => {
            // `--skip-bad=PCT` is one word: the share is no separate value.
            line.words
                .push(format!("--{}={}%", SKIP_BAD.flag, 100.0 * share));
        }
        _ if load.skip_bad => {
            line.switch(SKIP_BAD);
        }
        _ => {}
    }
    // What the options cannot say: `--samples 1` forces one per SeqPoint where a plan would
    // be made; a plan or a budget asked for.
    if ask.samples == Some(1) {
        line.option(SAMPLES, 1);
    }
    if ask.plan {
        line.switch(PLAN);
    }
    if let Some(budget) = ask.budget {
        line.option(BUDGET, budget);
    }
    line.text()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_when_needed() {
        assert_eq!(shell_word("runs/a.csv"), "runs/a.csv");
        assert_eq!(shell_word("my run.csv"), "'my run.csv'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }

    #[test]
    fn command_names_every_non_default() {
        let load = LoadOptions {
            compare: Some("b.csv".into()),
            ..LoadOptions::default()
        };
        let options = SelectOptions {
            bins: BinCount::Fixed(12),
            warmup: 5,
            ..SelectOptions::default()
        };
        assert_eq!(
            select_command("a.csv", &load, &options, &PlanAsk::default(), Method::Quantile, Pick::Median),
            "seqpoint select a.csv --compare b.csv --bins 12 --method quantile --pick median --warmup 5"
        );
        // How the log was read is part of reproducing it.
        let load = LoadOptions {
            format: Some(InputFormat::Tsv),
            skip_bad: true,
            ..LoadOptions::default()
        };
        assert_eq!(
            select_command(
                "a.txt",
                &load,
                &options,
                &PlanAsk::default(),
                Method::Optimal,
                Pick::NearestMean
            ),
            "seqpoint select a.txt --input-format tsv --bins 12 --method optimal \
             --pick nearest-mean --warmup 5 --skip-bad"
        );
        // A share other than the default is given with the switch, as one word.
        let load = LoadOptions {
            skip_bad_share: Some(0.6),
            ..load
        };
        let line = select_command(
            "a.txt",
            &load,
            &options,
            &PlanAsk::default(),
            Method::Optimal,
            Pick::NearestMean,
        );
        assert!(line.ends_with(" --warmup 5 --skip-bad=60%"), "{line}");
        let load = LoadOptions {
            skip_bad_share: Some(crate::runlog::SKIP_BAD_SHARE),
            ..load
        };
        let line = select_command(
            "a.txt",
            &load,
            &options,
            &PlanAsk::default(),
            Method::Optimal,
            Pick::NearestMean,
        );
        assert!(line.ends_with(" --warmup 5 --skip-bad"), "{line}");
        // Raised limits are part of the command: without them it would be refused.
        let load = LoadOptions {
            limits: crate::runlog::InputLimits {
                max_line: 4 << 20,
                max_memory: Some(1 << 30),
                ..Default::default()
            },
            ..LoadOptions::default()
        };
        assert_eq!(
            select_command(
                "a.csv",
                &load,
                &options,
                &PlanAsk::default(),
                Method::Optimal,
                Pick::Median
            ),
            "seqpoint select a.csv --bins 12 --method optimal --pick median --warmup 5 \
             --max-line 4194304 --max-memory 1073741824"
        );
    }
}
