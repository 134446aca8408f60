//! Fuzz the gzip path of `load_path`: raw bytes behind a gzip magic number, valid gzip of
//! fuzzed text, and valid gzip cut short or followed by junk. Each loads or errs cleanly.
#![no_main]

use std::io::Write;

use flate2::write::GzEncoder;
use flate2::Compression;
use libfuzzer_sys::fuzz_target;

fn gzip(body: &[u8]) -> Vec<u8> {
    let mut encoder = GzEncoder::new(Vec::new(), Compression::fast());
    encoder.write_all(body).expect("in memory");
    encoder.finish().expect("in memory")
}

fuzz_target!(|data: &[u8]| {
    let (control, rest) = seqpoint_fuzz::split(data);
    let (shape, body) = seqpoint_fuzz::split(rest);
    let file = match shape & 3 {
        // Arbitrary bytes the reader must take for gzip.
        0 => [&[0x1f, 0x8b][..], body].concat(),
        // A complete gzip stream of fuzzed text.
        1 => gzip(body),
        // Cut short at a fuzzed point.
        2 => {
            let mut z = gzip(body);
            let cut = (usize::from(shape >> 4) * z.len()) / 16;
            z.truncate(cut.max(2));
            z
        }
        // A complete stream followed by a second member or junk.
        _ => {
            let mut z = gzip(body);
            if shape & 4 == 0 {
                z.extend(gzip(b"seq_len\n1\n"));
            } else {
                z.extend_from_slice(&body[..body.len().min(8)]);
            }
            z
        }
    };
    let name = match (shape >> 2) & 3 {
        0 => "run.csv.gz",
        1 => "run.tsv.gz",
        2 => "run.jsonl.gz",
        _ => "run.gz",
    };
    let dir = std::env::temp_dir().join(format!("seqpoint-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, &file).expect("temp file");
    let path = path.to_str().expect("utf-8 temp path").to_string();
    let options = seqpoint_fuzz::options_from(control);
    match seqpoint::runlog::load_path(&path, &options) {
        Ok(log) => seqpoint_fuzz::check_log(&log, &options),
        Err(err) => seqpoint_fuzz::check_error(&err, &path),
    }
});
