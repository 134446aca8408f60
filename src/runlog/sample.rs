//! The bundled sample run: real measured logs of a DeepSpeech2-like model on a 2-core CPU
//! (1 thread and 2 threads), embedded so `seqpoint` works from any folder.

pub const SAMPLE_NAME: &str = "sample:speech_t1.csv";
pub const SAMPLE_COMPARE_NAME: &str = "sample:speech_t2.csv";
const SAMPLE_T1: &[u8] = include_bytes!("../../assets/speech_t1.csv");
const SAMPLE_T2: &[u8] = include_bytes!("../../assets/speech_t2.csv");

/// The bytes of a bundled file by its `sample:` name.
pub fn sample_bytes(name: &str) -> Option<&'static [u8]> {
    match name {
        SAMPLE_NAME => Some(SAMPLE_T1),
        SAMPLE_COMPARE_NAME => Some(SAMPLE_T2),
        _ => None,
    }
}
