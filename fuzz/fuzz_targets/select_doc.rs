//! Fuzz the `seqpoint/1` JSON reader: any bytes either parse into a `SelectDoc` or give an
//! error; a parsed document writes back out and reads back to the same document.
#![no_main]

use libfuzzer_sys::fuzz_target;
use seqpoint::export::SelectDoc;

fuzz_target!(|data: &[u8]| {
    let Ok(doc) = serde_json::from_slice::<SelectDoc>(data) else {
        return;
    };
    let text = serde_json::to_string(&doc).expect("a parsed document serialises");
    let again: SelectDoc = serde_json::from_str(&text).expect("written JSON reads back");
    assert_eq!(again, doc, "round trip changed the document");
    let pretty = serde_json::to_string_pretty(&doc).expect("serialises");
    let again: SelectDoc = serde_json::from_str(&pretty).expect("pretty JSON reads back");
    assert_eq!(again, doc, "pretty round trip changed the document");
});
