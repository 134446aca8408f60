//! The fast reader must give exactly the careful reader's RunLog on every valid input, and
//! leave everything else to it (so messages never change).

use std::io::Write;

use proptest::prelude::*;

use super::{read_plain_tuned, Source, Tuning};
use crate::runlog::careful::load_bytes_careful;
use crate::runlog::*;
use crate::testkit::scale::{log_bytes, write_log, GenFormat, GenSpec};

fn fast(
    bytes: &[u8],
    format: InputFormat,
    options: &LoadOptions,
    tuning: Tuning,
) -> Option<RunLog> {
    read_plain_tuned(
        "t",
        &Source::Bytes(bytes),
        format,
        options,
        &LoadProgress::default(),
        tuning,
    )
    .expect("within the limits")
}

fn careful(bytes: &[u8], format: InputFormat, options: &LoadOptions) -> Result<RunLog, LoadError> {
    load_bytes_careful("t", bytes, format, options)
}

/// One cell's text: how a user's tool might have written a number.
fn count_text(value: u64, style: u8) -> String {
    match style % 6 {
        0..=2 => value.to_string(),
        3 => format!("{value}.0"),
        4 => format!(" {value} "),
        _ => format!("+{value}"),
    }
}

fn metric_text(value: f64, style: u8) -> String {
    match style % 8 {
        0 | 1 => format!("{value:.3}"),
        2 => format!("{}", value.round()),
        3 => format!("{value:e}"),
        4 => format!("{value}"),
        5 => format!("{value:.19}"),
        6 => format!(" {value:.2}"),
        _ => format!("{:.0}.", value.floor()),
    }
}

/// JSON renders numbers in its own grammar only.
fn json_count(value: u64, style: u8) -> String {
    match style % 4 {
        0 | 1 => value.to_string(),
        2 => format!("{value}.0"),
        _ => format!("\"{value}\""),
    }
}

fn json_metric(value: f64, style: u8) -> String {
    match style % 6 {
        0 | 1 => format!("{value:.3}"),
        2 => format!("{}", value.round() as u64),
        3 => format!("{value:e}"),
        4 => format!("{value:.17}"),
        _ => format!("\"{value:.2}\""),
    }
}

#[derive(Debug, Clone)]
struct Shape {
    format: InputFormat,
    /// 0: no column, 1: 0..N-1, 2: start + step, 3: gaps.
    iteration: u8,
    epoch: bool,
    two_keys: bool,
    metrics: usize,
    extra: bool,
    crlf: bool,
    final_newline: bool,
    order_seed: u8,
}

fn shape() -> impl Strategy<Value = Shape> {
    (
        prop_oneof![
            Just(InputFormat::Csv),
            Just(InputFormat::Tsv),
            Just(InputFormat::Jsonl)
        ],
        0u8..4,
        any::<bool>(),
        any::<bool>(),
        0usize..3,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<u8>(),
    )
        .prop_map(
            |(
                format,
                iteration,
                epoch,
                two_keys,
                metrics,
                extra,
                crlf,
                final_newline,
                order_seed,
            )| {
                Shape {
                    format,
                    iteration,
                    epoch,
                    two_keys,
                    metrics,
                    extra,
                    crlf,
                    final_newline,
                    order_seed,
                }
            },
        )
}

type Row = (u64, bool, u32, u32, f64, f64, u8, u8);

/// Render a valid log of `shape` and return it with the load options that read it.
fn render(shape: &Shape, rows: &[Row]) -> (Vec<u8>, LoadOptions) {
    let mut columns: Vec<&str> = Vec::new();
    if shape.iteration > 0 {
        columns.push("iteration");
    }
    if shape.epoch {
        columns.push("epoch");
    }
    columns.push("src_len");
    if shape.two_keys {
        columns.push("tgt_len");
    }
    let metric_names = ["time_ms", "energy_j"];
    columns.extend(&metric_names[..shape.metrics]);
    if shape.extra {
        columns.push("note");
    }
    // A shuffled column order, the same for every row.
    let mut order: Vec<usize> = (0..columns.len()).collect();
    let mut s = u32::from(shape.order_seed);
    for i in (1..order.len()).rev() {
        s = s.wrapping_mul(1_103_515_245).wrapping_add(12345);
        order.swap(i, (s >> 8) as usize % (i + 1));
    }
    let newline = if shape.crlf { "\r\n" } else { "\n" };
    let sep = if shape.format == InputFormat::Tsv {
        "\t"
    } else {
        ","
    };
    let mut text = String::new();
    if shape.format != InputFormat::Jsonl {
        let header: Vec<&str> = order.iter().map(|&i| columns[i]).collect();
        text.push_str(&header.join(sep));
        text.push_str(newline);
    }
    let (mut iteration, mut epoch) = (
        match shape.iteration {
            2 => 7,
            _ => 0,
        },
        0u64,
    );
    for (r, &(gap, next_epoch, a, b, m1, m2, style, blank)) in rows.iter().enumerate() {
        if r > 0 {
            iteration += match shape.iteration {
                2 => 3,
                3 => gap,
                _ => 1,
            };
        }
        if next_epoch {
            epoch += 1;
        }
        let json = shape.format == InputFormat::Jsonl;
        let cell = |name: &str| -> String {
            let st = style.wrapping_add(name.len() as u8);
            match name {
                "iteration" if json => json_count(iteration, st),
                "iteration" => count_text(iteration, st),
                "epoch" if json => json_count(epoch, st),
                "epoch" => count_text(epoch, st),
                "src_len" if json => json_count(u64::from(a), st),
                "src_len" => count_text(u64::from(a), st),
                "tgt_len" if json => json_count(u64::from(b), st),
                "tgt_len" => count_text(u64::from(b), st),
                "time_ms" if json => json_metric(m1, st),
                "time_ms" => metric_text(m1, st),
                "energy_j" if json => json_metric(m2, st),
                "energy_j" => metric_text(m2, st),
                _ if json => {
                    ["\"a note\"", "true", "null", "-1.5e3"][style as usize % 4].to_string()
                }
                _ => ["warm", "", "x y", "-"][style as usize % 4].to_string(),
            }
        };
        let cells: Vec<String> = order.iter().map(|&i| cell(columns[i])).collect();
        if json {
            let members: Vec<String> = order
                .iter()
                .zip(&cells)
                .map(|(&i, c)| format!("\"{}\": {c}", columns[i]))
                .collect();
            text.push('{');
            text.push_str(&members.join(if style % 2 == 0 { "," } else { ", " }));
            text.push('}');
        } else {
            text.push_str(&cells.join(sep));
        }
        if r + 1 < rows.len() || shape.final_newline {
            text.push_str(newline);
        }
        if blank % 13 == 0 && r + 1 < rows.len() {
            text.push_str(if blank % 2 == 0 { "" } else { "  " });
            text.push_str(newline);
        }
    }
    let options = LoadOptions {
        key: if shape.two_keys {
            vec!["src_len".into(), "tgt_len".into()]
        } else {
            vec!["src_len".into()]
        },
        ..LoadOptions::default()
    };
    (text.into_bytes(), options)
}

fn row() -> impl Strategy<Value = Row> {
    (
        1u64..4,
        prop::bool::weighted(0.05),
        0u32..5000,
        1u32..300,
        0.0f64..5000.0,
        0.0f64..1.0e6,
        any::<u8>(),
        any::<u8>(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    #[test]
    fn fast_reader_equals_careful_reader_on_valid_logs(
        shape in shape(),
        rows in prop::collection::vec(row(), 1..120),
        chunk in 1u64..400,
        threads in 1usize..4,
    ) {
        let (bytes, options) = render(&shape, &rows);
        let expected = careful(&bytes, shape.format, &options);
        prop_assert!(expected.is_ok(), "the test wrote an invalid log: {:?}\n{}", expected.err(), String::from_utf8_lossy(&bytes));
        let tuning = Tuning { chunk: Some(chunk), threads: Some(threads) };
        let got = fast(&bytes, shape.format, &options, tuning);
        prop_assert!(got.is_some(), "fast reader gave up on a valid log:\n{}", String::from_utf8_lossy(&bytes));
        prop_assert_eq!(got.unwrap(), expected.unwrap());
        // And the public entry point agrees.
        prop_assert_eq!(load_bytes("t", &bytes, shape.format, &options).unwrap(), careful(&bytes, shape.format, &options).unwrap());
    }

    #[test]
    fn anything_the_fast_reader_rejects_reads_as_the_careful_reader_says(
        shape in shape(),
        rows in prop::collection::vec(row(), 1..40),
        cut in any::<prop::sample::Index>(),
        junk in prop_oneof![Just("\""), Just("x"), Just("-"), Just(","), Just("\t"), Just("\r"), Just("\n"), Just("{"), Just("\u{feff}"), Just("\u{e9}")],
    ) {
        let (mut bytes, options) = render(&shape, &rows);
        let at = cut.index(bytes.len() + 1);
        bytes.splice(at..at, junk.bytes());
        let expected = careful(&bytes, shape.format, &options).map_err(|e| e.to_string());
        let got = load_bytes("t", &bytes, shape.format, &options).map_err(|e| e.to_string());
        prop_assert_eq!(got, expected);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]
    /// The line limit holds whatever the chunks: the fast reader gives up exactly when some
    /// line is longer than `--max-line` (however the chunks cut it), and the public entry
    /// point then names the first such line; otherwise it reads what the careful reader reads.
    #[test]
    fn the_line_limit_holds_across_chunks(
        notes in prop::collection::vec(0usize..60, 1..40),
        max_line in 12u64..70,
        chunk in 1u64..200,
        threads in 1usize..4,
    ) {
        let mut text = String::from("seq_len,note\n");
        for (i, &len) in notes.iter().enumerate() {
            text.push_str(&format!("{},{}\n", i % 7 + 1, "n".repeat(len)));
        }
        let options = LoadOptions {
            limits: InputLimits { max_line, ..InputLimits::default() },
            ..LoadOptions::default()
        };
        let first_long = text.lines().position(|l| l.len() as u64 > max_line);
        let tuning = Tuning { chunk: Some(chunk), threads: Some(threads) };
        let got = fast(text.as_bytes(), InputFormat::Csv, &options, tuning);
        prop_assert_eq!(got.is_none(), first_long.is_some());
        let loaded = load_bytes("t", text.as_bytes(), InputFormat::Csv, &options);
        match first_long {
            Some(index) => prop_assert!(
                loaded.as_ref().unwrap_err().to_string().starts_with(&format!("t:{}: line longer than", index + 1)),
                "{:?}", loaded.err()
            ),
            None => prop_assert_eq!(got.unwrap(), careful(text.as_bytes(), InputFormat::Csv, &options).unwrap()),
        }
    }
}

/// A key the first JSON line lacks: one that names a column sends the file to the careful
/// reader (which reads it as a column or says why), any other is ignored on the fast path.
#[test]
fn json_keys_after_the_first_line_are_columns_when_they_name_one() {
    let options = LoadOptions::default();
    let tuning = Tuning::default();
    let late_metric = b"{\"seq_len\": 1}\n{\"seq_len\": 2, \"Time_ms\": 3}\n";
    assert!(fast(late_metric, InputFormat::Jsonl, &options, tuning).is_none());
    let late_note = b"{\"seq_len\": 1}\n{\"seq_len\": 2, \"note\": 3}\n";
    let got = fast(late_note, InputFormat::Jsonl, &options, tuning).unwrap();
    assert_eq!(
        got,
        careful(late_note, InputFormat::Jsonl, &options).unwrap()
    );
    assert_eq!(got.keys, vec![1, 2]);
}

#[test]
fn gapped_iterations_are_listed_and_unsorted_ones_go_careful() {
    let text = "iteration,seq_len,time_ms\n0,5,1\n1,6,2\n5,7,3\n";
    let tuning = Tuning {
        chunk: Some(8),
        threads: Some(2),
    };
    let log = fast(
        text.as_bytes(),
        InputFormat::Csv,
        &LoadOptions::default(),
        tuning,
    )
    .unwrap();
    assert_eq!(log.iterations, Iterations::Listed(vec![0, 1, 5]));
    let unsorted = "iteration,seq_len\n3,5\n1,6\n";
    assert!(fast(
        unsorted.as_bytes(),
        InputFormat::Csv,
        &LoadOptions::default(),
        tuning
    )
    .is_none());
    let log = load_bytes(
        "t",
        unsorted.as_bytes(),
        InputFormat::Csv,
        &LoadOptions::default(),
    )
    .unwrap();
    assert_eq!(log.iterations.to_vec(), vec![1, 3]);
}

#[test]
fn generated_files_read_the_same_every_way() {
    let spec = GenSpec {
        rows: 30_000,
        energy: true,
        buckets: 24,
        ..GenSpec::default()
    };
    let dir = tempfile::tempdir().unwrap();
    for (name, format) in [
        ("run.csv", GenFormat::Csv),
        ("run.tsv", GenFormat::Tsv),
        ("run.jsonl", GenFormat::Jsonl),
    ] {
        let bytes = log_bytes(&spec, 0, format);
        let input_format = match format {
            GenFormat::Csv => InputFormat::Csv,
            GenFormat::Tsv => InputFormat::Tsv,
            GenFormat::Jsonl => InputFormat::Jsonl,
        };
        let mut expected = careful(&bytes, input_format, &LoadOptions::default()).unwrap();
        assert_eq!(expected.len(), 30_000);
        assert_eq!(
            expected.iterations,
            Iterations::Spaced {
                start: 0,
                step: 1,
                len: 30_000
            }
        );
        let plain = dir.path().join(name);
        std::fs::write(&plain, &bytes).unwrap();
        let gz = dir.path().join(format!("{name}.gz"));
        let mut enc = flate2::write::GzEncoder::new(
            std::fs::File::create(&gz).unwrap(),
            flate2::Compression::fast(),
        );
        write_log(&spec, 0, format, &mut enc).unwrap();
        enc.finish().unwrap().flush().unwrap();
        for file in [&plain, &gz] {
            let path = file.to_str().unwrap();
            let progress = LoadProgress::new();
            let got = load_run_with_progress(path, &LoadOptions::default(), &progress).unwrap();
            expected.source = path.to_string();
            expected.configs[0].source = path.to_string();
            assert_eq!(got, expected, "{path}");
            assert!(progress.is_finished() && progress.total() > 0);
        }
    }
}

#[test]
fn a_bad_row_deep_in_a_big_file_is_reported_as_before() {
    let spec = GenSpec {
        rows: 50_000,
        ..GenSpec::default()
    };
    let mut bytes = log_bytes(&spec, 0, GenFormat::Csv);
    // Break row 40,000 (line 40,002 with the header) by giving it a negative time.
    let line_start = bytes
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .nth(40_000)
        .map(|(i, _)| i + 1)
        .unwrap();
    let comma = line_start + bytes[line_start..].iter().rposition_in_line();
    bytes.insert(comma + 1, b'-');
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.csv");
    std::fs::write(&path, &bytes).unwrap();
    let err = load_run(path.to_str().unwrap(), &LoadOptions::default()).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(":40002:4: column 'time_ms': found \"-"),
        "{text}"
    );
    assert!(text.ends_with("expected a non-negative number"), "{text}");
}

/// Position of the last comma of the line starting the slice.
trait LastCommaInLine {
    fn rposition_in_line(self) -> usize;
}

impl<'a, I: Iterator<Item = &'a u8>> LastCommaInLine for I {
    fn rposition_in_line(self) -> usize {
        let line: Vec<u8> = self.take_while(|&&b| b != b'\n').copied().collect();
        line.iter().rposition(|&b| b == b',').unwrap()
    }
}

#[test]
fn a_lone_carriage_return_in_an_input_without_newlines_ends_a_line() {
    // Old Mac line ends: with no `\n` anywhere, the careful reader splits at `\r`, so a `\r`
    // where JSON allows white space cuts this one-row log mid-object. The fast reader must
    // leave it to the careful one, not read the object across it.
    let bytes = b"{\"time_ms\": \"0.00\",\"energy_j\"\r: 8.5,\"iteration\": 0,\"src_len\": 100}";
    let options = LoadOptions {
        key: vec!["src_len".into()],
        ..LoadOptions::default()
    };
    let expected = careful(bytes, InputFormat::Jsonl, &options).map_err(|e| e.to_string());
    assert!(expected.is_err(), "{expected:?}");
    let got = load_bytes("t", bytes, InputFormat::Jsonl, &options).map_err(|e| e.to_string());
    assert_eq!(got, expected);
    assert!(fast(bytes, InputFormat::Jsonl, &options, Tuning::default()).is_none());
}
