//! Fuzz the `seqpoint/1` JSON reader that `project` uses (`parse_select_doc`): any bytes give a
//! document or a clean error; a document writes back out and reads back unchanged, and
//! projecting measurements equal to its own SeqPoints' values never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use seqpoint::doc::SelectDoc;
use seqpoint::runlog::measured::{Identified, Measurements, Sample};
use seqpoint::project::document::{parse_select_doc, project_measurements, ProjectOptions};

fuzz_target!(|data: &[u8]| {
    let doc = match parse_select_doc("seqpoints.json", data) {
        Ok(doc) => doc,
        Err(err) => {
            let message = err.to_string();
            assert!(!message.chars().any(char::is_control), "{message:?}");
            return;
        }
    };
    let text = serde_json::to_string(&doc).expect("a parsed document serialises");
    let again: SelectDoc = serde_json::from_str(&text).expect("written JSON reads back");
    assert_eq!(again, doc, "round trip changed the document");

    // Measurements equal to the SeqPoints' own values of each metric the document names.
    let metric_names = doc.input.metrics.clone();
    let samples = doc
        .seqpoints
        .iter()
        .map(|sp| {
            let values: Option<Vec<f64>> = metric_names
                .iter()
                .map(|m| sp.metrics.get(m).copied())
                .collect();
            values.map_or_else(Vec::new, |values| {
                vec![Sample {
                    iteration: Some(sp.iteration),
                    line: 2,
                    values,
                }]
            })
        })
        .collect();
    let measured = Measurements {
        source: "measured.csv".to_string(),
        metric_names,
        identified_by: Identified::SeqPoint,
        samples,
    };
    for allow_missing in [false, true] {
        let options = ProjectOptions {
            allow_missing,
            ..ProjectOptions::default()
        };
        if let Err(err) = project_measurements("seqpoints.json", &doc, &measured, &options) {
            let message = err.to_string();
            assert!(!message.chars().any(char::is_control), "{message:?}");
        }
    }
});
