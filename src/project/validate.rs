//! A `seqpoint/1` document is checked before anything is projected from it: a hand-edited or
//! damaged file must not turn into a confident wrong answer. Each error names the document, the
//! JSON path of the field (`seqpoints[3].weight`) and what was expected. Also the run length
//! asked of `project` (`--run-iterations`, `--run-epochs`) against what the document logged.

use std::collections::HashMap;

use crate::doc::SelectDoc;
use crate::options::{Surface, RUN_EPOCHS, RUN_ITERATIONS};
use crate::project::request::{ProjectError, RunLength};
use crate::text::numbers::as_typed;

/// The longest run projected: 2^53 iterations, the largest count an f64 holds exactly (and
/// about 285 years of training at a million iterations a second).
pub const MAX_RUN_ITERATIONS: f64 = 9_007_199_254_740_992.0;

/// Check what `project` trusts in the document: the logged iteration count, each SeqPoint's
/// weight (positive, together exactly the run), its id and iteration (each once), and its bin
/// statistics (finite, standard deviations not negative).
pub fn check_document(path: &str, doc: &SelectDoc) -> Result<(), ProjectError> {
    let bad = |field: String, found: String, expected: &str| ProjectError::Document {
        path: path.to_string(),
        message: format!("{field} is {found}; expected {expected}"),
    };
    let iterations = doc.input.iterations;
    if iterations == 0 {
        return Err(bad(
            "input.iterations".into(),
            "0".into(),
            "the number of iterations in the run log, at least 1",
        ));
    }
    let mut ids: HashMap<usize, usize> = HashMap::new();
    let mut its: HashMap<u64, usize> = HashMap::new();
    let mut weights: u128 = 0;
    let mut excluded: u128 = 0;
    for (i, sp) in doc.seqpoints.iter().enumerate() {
        let at = format!("seqpoints[{i}]");
        if sp.weight == 0 {
            return Err(bad(
                format!("{at}.weight"),
                "0".into(),
                "the number of iterations its bin holds, at least 1",
            ));
        }
        if sp.weight > iterations {
            return Err(bad(
                format!("{at}.weight"),
                sp.weight.to_string(),
                &format!(
                    "the number of iterations its bin holds, at most the run's {iterations} \
                     (input.iterations)"
                ),
            ));
        }
        weights += u128::from(sp.weight);
        excluded += u128::from(sp.excluded);
        if let Some(first) = ids.insert(sp.id, i) {
            return Err(bad(
                format!("{at}.id"),
                format!("{}, as is seqpoints[{first}].id", sp.id),
                "each SeqPoint's id once",
            ));
        }
        if let Some(first) = its.insert(sp.iteration, i) {
            return Err(bad(
                format!("{at}.iteration"),
                format!("{}, as is seqpoints[{first}].iteration", sp.iteration),
                "each SeqPoint's iteration once (one representative per bin)",
            ));
        }
        for (metric, stats) in &sp.bin_stats {
            let field = format!("{at}.bin_stats{}", member(metric));
            if !stats.mean.is_finite() {
                return Err(bad(
                    format!("{field}.mean"),
                    stats.mean.to_string(),
                    "a finite mean",
                ));
            }
            if !(stats.sd.is_finite() && stats.sd >= 0.0) {
                return Err(bad(
                    format!("{field}.sd"),
                    stats.sd.to_string(),
                    "a standard deviation: finite and not negative",
                ));
            }
            // The picked key's noise and offset feed the interval: a hand-edited value there
            // would widen or collapse it without a word.
            if let Some(cv) = stats.key_cv.filter(|cv| !(cv.is_finite() && *cv >= 0.0)) {
                return Err(bad(
                    format!("{field}.key_cv"),
                    cv.to_string(),
                    "a coefficient of variation: finite and not negative",
                ));
            }
            if let Some(at) = stats.excluded_mean.filter(|m| !m.is_finite()) {
                return Err(bad(
                    format!("{field}.excluded_mean"),
                    at.to_string(),
                    "a finite mean",
                ));
            }
            if let Some(offset) = stats.key_offset.filter(|o| !o.is_finite()) {
                return Err(bad(
                    format!("{field}.key_offset"),
                    offset.to_string(),
                    "a finite offset",
                ));
            }
            // Moments of `v ln^k v` about a mean of 1: the even ones and the first (Jensen's) are
            // never negative; a hand-edited one would bend the trend's correction.
            if let Some(levels) = stats.levels.filter(|l| {
                !(l.iter().all(|m| m.is_finite()) && l[0] >= 0.0 && l[1] >= 0.0 && l[3] >= 0.0)
            }) {
                return Err(bad(
                    format!("{field}.levels"),
                    format!("{levels:?}"),
                    "four finite moments, the first, second and fourth not negative",
                ));
            }
            if let Some(count) = stats.key_count.filter(|&c| c == 0 || c > stats.count) {
                return Err(bad(
                    format!("{field}.key_count"),
                    count.to_string(),
                    "the picked key's iterations: at least 1 and at most the bin's count",
                ));
            }
        }
    }
    if weights != u128::from(iterations) {
        return Err(ProjectError::Document {
            path: path.to_string(),
            message: format!(
                "the SeqPoints' weights (seqpoints[].weight) sum to {weights}; expected the \
                 run's {iterations} iterations (input.iterations): every iteration is in \
                 exactly one bin"
            ),
        });
    }
    // Excluded iterations placed in bins count in the projection: at most the log's.
    let logged_excluded = doc.input.excluded_iterations;
    if excluded > u128::from(logged_excluded) {
        return Err(ProjectError::Document {
            path: path.to_string(),
            message: format!(
                "the SeqPoints' excluded iterations (seqpoints[].excluded) sum to {excluded};                  expected at most the {logged_excluded} iterations the selection left out                  (input.excluded_iterations)"
            ),
        });
    }
    Ok(())
}

/// `.name` for a plain key, `["a b"]` otherwise, as JSON paths write members.
fn member(key: &str) -> String {
    let plain = !key.is_empty()
        && !key.starts_with(|c: char| c.is_ascii_digit())
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        format!(".{key}")
    } else {
        format!("[{}]", crate::runlog::error::printable(&format!("{key:?}")))
    }
}

/// The projected run must hold the logged one and stay a count an f64 holds exactly.
/// Run after the basic checks of the flags (at least 1, a positive finite number of epochs).
pub fn check_run_length(doc: &SelectDoc, length: RunLength) -> Result<(), ProjectError> {
    let logged = crate::project::run_bins::logged_iterations(doc);
    let (option, asked, run) = match length {
        RunLength::Logged => return Ok(()),
        RunLength::Iterations(n) => {
            if n < logged {
                return Err(ProjectError::Invalid(format!(
                    "{} is fewer than the {logged} iterations the SeqPoints were chosen from; \
                     the whole run includes the logged part: pass at least {logged}",
                    RUN_ITERATIONS.typed(Surface::CommandLine, &n.to_string())
                )));
            }
            (RUN_ITERATIONS, n.to_string(), n as f64)
        }
        RunLength::Epochs(e) => {
            let Some(epochs) = doc.input.epochs.filter(|&e| e > 0) else {
                return Ok(());
            };
            if e < f64::from(epochs) {
                return Err(ProjectError::Invalid(format!(
                    "{} is fewer than the {epochs} epochs the SeqPoints were chosen from; the \
                     whole run includes the logged part: pass at least {epochs}",
                    RUN_EPOCHS.typed(Surface::CommandLine, &e.to_string())
                )));
            }
            let run = logged as f64 * e / f64::from(epochs);
            (RUN_EPOCHS, as_typed(e), run)
        }
    };
    if run > MAX_RUN_ITERATIONS {
        let run = if run.is_finite() {
            format!("{run:.2e}")
        } else {
            "more than 1e308".into()
        };
        return Err(ProjectError::Invalid(format!(
            "{} makes a run of {run} iterations; expected at most {MAX_RUN_ITERATIONS} (2^53, \
             the largest count projected exactly)",
            option.typed(Surface::CommandLine, &asked)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::BinStats;
    use crate::output::json::select_document;
    use crate::runlog::test_log;
    use crate::select::{run_selection, BinCount, SelectOptions};

    /// Three bins over six iterations (weights 2, 2, 2 or as the DP splits them).
    fn doc() -> SelectDoc {
        let log = test_log(
            "iteration,epoch,seq_len,time_ms\n0,0,10,1\n1,0,20,3\n2,0,30,6\n3,1,10,1\n4,1,20,3\n5,1,30,6\n",
        );
        let options = SelectOptions {
            bins: BinCount::Fixed(3),
            ..SelectOptions::default()
        };
        let selection = run_selection(&log, &options).unwrap();
        select_document(&log, &selection, None)
    }

    fn message(doc: &SelectDoc) -> String {
        check_document("s.json", doc).unwrap_err().to_string()
    }

    #[test]
    fn a_written_document_passes() {
        check_document("s.json", &doc()).unwrap();
    }

    #[test]
    fn weights_must_be_positive_and_sum_to_the_run() {
        let mut d = doc();
        d.seqpoints[1].weight = 0;
        assert_eq!(
            message(&d),
            "s.json: seqpoints[1].weight is 0; expected the number of iterations its bin \
             holds, at least 1"
        );
        let mut d = doc();
        d.seqpoints[0].weight = u64::MAX;
        assert!(message(&d).starts_with(&format!(
            "s.json: seqpoints[0].weight is {}; expected",
            u64::MAX
        )));
        let mut d = doc();
        d.seqpoints[0].weight += 1;
        assert_eq!(
            message(&d),
            "s.json: the SeqPoints' weights (seqpoints[].weight) sum to 7; expected the run's \
             6 iterations (input.iterations): every iteration is in exactly one bin"
        );
        let mut d = doc();
        d.input.iterations = 0;
        assert!(message(&d).starts_with("s.json: input.iterations is 0; expected"));
    }

    #[test]
    fn ids_and_iterations_appear_once() {
        let mut d = doc();
        d.seqpoints[2].id = d.seqpoints[0].id;
        assert_eq!(
            message(&d),
            format!(
                "s.json: seqpoints[2].id is {0}, as is seqpoints[0].id; expected each \
                 SeqPoint's id once",
                d.seqpoints[0].id
            )
        );
        let mut d = doc();
        d.seqpoints[1].iteration = d.seqpoints[0].iteration;
        assert!(
            message(&d).contains("seqpoints[1].iteration is"),
            "{}",
            message(&d)
        );
    }

    #[test]
    fn the_picked_keys_statistics_are_checked_too() {
        let stats = |key_cv, key_offset, key_count| BinStats {
            count: 2,
            mean: 1.0,
            sd: 0.5,
            key_cv,
            key_offset,
            key_count,
            excluded_mean: None,
            levels: None,
        };
        let spread = |levels| BinStats {
            levels: Some(levels),
            ..stats(None, None, None)
        };
        for (bad, field, expected) in [
            (
                stats(Some(-0.1), None, None),
                "key_cv",
                "a coefficient of variation",
            ),
            (
                stats(None, Some(f64::NAN), None),
                "key_offset",
                "a finite offset",
            ),
            (
                stats(None, None, Some(0)),
                "key_count",
                "the picked key's iterations",
            ),
            (
                stats(None, None, Some(3)),
                "key_count",
                "the picked key's iterations",
            ),
            (
                spread([-0.01, 0.0, 0.0, 0.0]),
                "levels",
                "four finite moments",
            ),
            (
                spread([0.01, 0.02, 0.0, -1.0]),
                "levels",
                "four finite moments",
            ),
        ] {
            let mut d = doc();
            d.seqpoints[0].bin_stats.insert("t".into(), bad);
            let said = message(&d);
            assert!(
                said.contains(&format!("seqpoints[0].bin_stats.t.{field} is"))
                    || said.contains(&format!("seqpoints[0].bin_stats[\"t\"].{field} is")),
                "{said}"
            );
            assert!(said.contains(expected), "{said}");
        }
        let mut d = doc();
        d.seqpoints[0]
            .bin_stats
            .insert("t".into(), stats(Some(0.1), Some(-0.2), Some(2)));
        assert!(check_document("s.json", &d).is_ok());
    }

    #[test]
    fn bin_statistics_are_finite_and_spreads_not_negative() {
        for sd in [-1.0, f64::INFINITY, f64::NAN] {
            let mut d = doc();
            d.seqpoints[0].bin_stats.insert(
                "time ms".into(),
                BinStats {
                    count: 2,
                    mean: 1.0,
                    sd,
                    key_cv: None,
                    key_offset: None,
                    key_count: None,
                    excluded_mean: None,
                    levels: None,
                },
            );
            assert_eq!(
                message(&d),
                format!(
                    "s.json: seqpoints[0].bin_stats[\"time ms\"].sd is {sd}; expected a \
                     standard deviation: finite and not negative"
                )
            );
        }
        let mut d = doc();
        d.seqpoints[0].bin_stats.get_mut("time_ms").unwrap().mean = f64::NAN;
        assert!(message(&d).contains("seqpoints[0].bin_stats.time_ms.mean is NaN"));
    }

    #[test]
    fn the_run_holds_the_log_and_stays_exact() {
        let d = doc();
        check_run_length(&d, RunLength::Iterations(6)).unwrap();
        check_run_length(&d, RunLength::Epochs(2.0)).unwrap();
        let short = check_run_length(&d, RunLength::Iterations(5)).unwrap_err();
        assert!(short
            .to_string()
            .starts_with("--run-iterations 5 is fewer than the 6"));
        let short = check_run_length(&d, RunLength::Epochs(1.5)).unwrap_err();
        assert!(short
            .to_string()
            .starts_with("--run-epochs 1.5 is fewer than the 2 epochs"));
        let huge = check_run_length(&d, RunLength::Epochs(1e308)).unwrap_err();
        assert_eq!(
            huge.to_string(),
            "--run-epochs 1e308 makes a run of more than 1e308 iterations; expected at most \
             9007199254740992 (2^53, the largest count projected exactly)"
        );
        let long = check_run_length(&d, RunLength::Epochs(1e16)).unwrap_err();
        assert!(long
            .to_string()
            .starts_with("--run-epochs 1e16 makes a run of 3.00e16"));
        check_run_length(&d, RunLength::Iterations(1 << 53)).unwrap();
        assert!(check_run_length(&d, RunLength::Iterations((1 << 53) + 2)).is_err());
    }
}
