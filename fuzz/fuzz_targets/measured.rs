//! Fuzz the measurement reader of `project` (`parse_measured`) against a real `seqpoint/1`
//! document (3 SeqPoints of the bundled sample), then `project_measurements` on what it read.
//! Any bytes give measurements or a clean error naming the file; projecting never panics.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use seqpoint::doc::SelectDoc;
use seqpoint::runlog::measured::parse_measured;
use seqpoint::project::document::{
    parse_select_doc, project_measurements, ProjectOptions, RunLength,
};

fn doc() -> &'static SelectDoc {
    static DOC: OnceLock<SelectDoc> = OnceLock::new();
    DOC.get_or_init(|| {
        parse_select_doc(
            "seqpoints.json",
            include_bytes!("../seeds/select_doc/sample_k3.json"),
        )
        .expect("the seed document is valid")
    })
}

fuzz_target!(|data: &[u8]| {
    let (control, body) = seqpoint_fuzz::split(data);
    let (format, path, options) = seqpoint_fuzz::measured_setup(control);
    let measured = match parse_measured(path, body, format, doc(), &options) {
        Ok(measured) => measured,
        Err(err) => {
            seqpoint_fuzz::check_error(&err, path);
            return;
        }
    };
    assert_eq!(measured.samples.len(), doc().seqpoints.len());
    let run_length = match (control >> 4) & 3 {
        0 => RunLength::Logged,
        1 => RunLength::Epochs(f64::from(control >> 6) * 2.5),
        _ => RunLength::Iterations(u64::from(control >> 6) * 1000),
    };
    let options = ProjectOptions {
        allow_missing: control & 0x80 != 0,
        run_length,
        // A target in one setting of two: the judgement and the top-up list run on any input.
        target_error_pct: (control & 0x40 != 0).then_some(1.0),
    };
    if let Ok(report) = project_measurements("seqpoints.json", doc(), &measured, &options) {
        let text = serde_json::to_string(&report).expect("the report serialises");
        assert!(!text.is_empty());
    } else if let Err(err) = project_measurements("seqpoints.json", doc(), &measured, &options) {
        let message = err.to_string();
        assert!(!message.chars().any(char::is_control), "{message:?}");
    }
});
