//! Fuzz the JSONL reader: any bytes either load into a valid run log or give a clean error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use seqpoint::runlog::InputFormat;

fuzz_target!(|data: &[u8]| {
    let (control, body) = seqpoint_fuzz::split(data);
    seqpoint_fuzz::load_and_check("run.jsonl", body, InputFormat::Jsonl, control);
});
