//! The `seqpoint select ...` command line equivalent to a selection, so a selection found by
//! hand in the explorer is reproducible in a script (and recorded in exports).

use crate::binning::Method;
use crate::pick::Pick;
use crate::runlog::{InputFormat, LoadOptions};
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

/// The command line that reproduces `options` on `run`. Sample runs are named by their
/// `sample:` names, which the CLI also accepts. Defaults are left out.
pub fn select_command(
    run: &str,
    load: &LoadOptions,
    options: &SelectOptions,
    method: Method,
    pick: Pick,
) -> String {
    let mut words = vec![
        "seqpoint".to_string(),
        "select".to_string(),
        shell_word(run),
    ];
    let mut flag = |name: &str, value: String| {
        words.push(name.to_string());
        words.push(shell_word(&value));
    };
    if let Some(compare) = &load.compare {
        flag("--compare", compare.clone());
    }
    if !load.key.is_empty() {
        flag("--key", load.key.join(","));
    }
    for metric in &load.metrics {
        flag("--metric", metric.clone());
    }
    if let Some(format) = load.format {
        let name = match format {
            InputFormat::Csv => "csv",
            InputFormat::Tsv => "tsv",
            InputFormat::Jsonl => "jsonl",
        };
        flag("--input-format", name.into());
    }
    match options.bins {
        BinCount::Fixed(k) => flag("--bins", k.to_string()),
        BinCount::Target(t) => {
            flag("--target-error", t.to_string());
            if options.target_by == TargetRule::Measured {
                flag("--target-by", "measured".into());
            }
            if options.max_bins != DEFAULT_MAX_BINS {
                flag("--max-bins", options.max_bins.to_string());
            }
        }
    }
    flag("--method", method.name().to_string());
    flag("--pick", pick.name().to_string());
    if options.warmup > 0 {
        flag("--warmup", options.warmup.to_string());
    }
    for range in options.exclude.texts() {
        flag("--exclude", range);
    }
    if options.seed != 0 {
        flag("--seed", options.seed.to_string());
    }
    if options.samples != 1 {
        flag("--samples", options.samples.to_string());
    }
    if options.strata != Strata::None {
        flag("--strata", options.strata.to_string());
    }
    if load.cost != crate::runlog::cost::Cost::Linear {
        flag("--cost", load.cost.to_string());
    }
    let limits = &load.limits;
    let defaults = crate::runlog::InputLimits::default();
    if limits.max_line != defaults.max_line {
        flag("--max-line", limits.max_line.to_string());
    }
    if limits.max_input != defaults.max_input {
        flag("--max-input", limits.max_input.to_string());
    }
    if let Some(memory) = limits.max_memory {
        flag("--max-memory", memory.to_string());
    }
    if load.skip_bad {
        words.push("--skip-bad".into());
    }
    words.join(" ")
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
            select_command("a.csv", &load, &options, Method::Quantile, Pick::Median),
            "seqpoint select a.csv --compare b.csv --bins 12 --method quantile --pick median --warmup 5"
        );
        // How the log was read is part of reproducing it.
        let load = LoadOptions {
            format: Some(InputFormat::Tsv),
            skip_bad: true,
            ..LoadOptions::default()
        };
        assert_eq!(
            select_command("a.txt", &load, &options, Method::Optimal, Pick::NearestMean),
            "seqpoint select a.txt --input-format tsv --bins 12 --method optimal \
             --pick nearest-mean --warmup 5 --skip-bad"
        );
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
            select_command("a.csv", &load, &options, Method::Optimal, Pick::Median),
            "seqpoint select a.csv --bins 12 --method optimal --pick median --warmup 5 \
             --max-line 4194304 --max-memory 1073741824"
        );
    }
}
