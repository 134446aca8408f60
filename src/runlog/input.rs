//! Getting an input's bytes: a file, standard input (`-`) or a bundled `sample:` name,
//! gunzipped when compressed, with its format. Shared by the run-log and measurements readers.
//!
//! An input is opened once and read once, front to back, so a named pipe or a process
//! substitution (`<(zcat run.csv.gz)`) works like a file. Reading is bounded by `InputLimits`:
//! it stops at the first line longer than `--max-line`, past `--max-input` bytes, or when the
//! load would need more memory than the machine has, instead of growing without end.
//!
//! A stream is checked as it arrives: once its first 64 KiB (and again its first 4 MiB) are
//! in, the caller's parser reads those whole lines ([`Probe`]), and an error it finds there is
//! returned at once, so `yes 'not,a,header' | seqpoint select -` stops at 1:1 instead of
//! reading until memory runs out.

use std::fs::File;
use std::io::{BufReader, Read, Seek};

use super::error::LoadError;
use super::format::{format_from_extension, sniff_format, InputFormat};
use super::gunzip::{gzip_problem, Gunzip, GZIP_MAGIC};
use super::limits::InputLimits;

/// How an input is named in messages: `<stdin>` for `-`, any other path as it is (not yet
/// escaped for a terminal: `text::shown::shown_path` does that where it is printed).
pub(crate) fn input_name(path: &str) -> &str {
    if path == "-" {
        "<stdin>"
    } else {
        path
    }
}

/// What standard input is when it is `/dev/null`, which has nothing to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NullStdin {
    /// Redirected from `/dev/null` (`< /dev/null`, a job runner's or a subprocess's null
    /// input): opened for reading only.
    Redirected,
    /// Closed (`<&-`): the Rust runtime opens a closed standard input as `/dev/null` for
    /// reading and writing before `main` (as does a `<> /dev/null`, which cannot be told
    /// from it).
    Closed,
}

/// Standard input, when it is `/dev/null` (or closed): `None` for anything else, which
/// is read as it is (a file, a pipe, a terminal).
fn null_stdin() -> Option<NullStdin> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::MetadataExt;
    let null = std::fs::metadata("/dev/null").ok()?;
    let stdin = std::io::stdin();
    let Ok(file) = std::os::fd::AsFd::as_fd(&stdin).try_clone_to_owned() else {
        return Some(NullStdin::Closed);
    };
    let file = File::from(file);
    let meta = file.metadata().ok()?;
    if !(meta.rdev() == null.rdev() && meta.dev() == null.dev() && meta.ino() == null.ino()) {
        return None;
    }
    // SAFETY: F_GETFL reads the descriptor's flags; the descriptor is open (owned above).
    let flags = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETFL) };
    Some(if flags >= 0 && flags & libc::O_ACCMODE == libc::O_RDONLY {
        NullStdin::Redirected
    } else {
        NullStdin::Closed
    })
}

/// The error for `-` read from a standard input that is `/dev/null`: what it is, and how to
/// give the input instead (true of every input read through `-`: a run log, measurements, a
/// SeqPoints file).
fn null_stdin_error(null: NullStdin) -> LoadError {
    let what = match null {
        NullStdin::Redirected => "standard input is /dev/null",
        NullStdin::Closed => "standard input is closed (or /dev/null)",
    };
    LoadError::file(
        input_name("-"),
        format!(
            "{what}, so `-` has nothing to read; expected the file piped or redirected in \
             (`- < FILE`, `cat FILE | ...`), or its name in place of `-`"
        ),
    )
}

/// An input opened once: standard input, a regular file (with its length) or anything else
/// readable (a pipe, a character device).
pub(crate) enum Opened {
    Stdin,
    File {
        file: File,
        regular_len: Option<u64>,
    },
}

/// Open `path` (`-` is standard input) once. A directory is refused by name.
pub(crate) fn open_input(path: &str) -> Result<Opened, LoadError> {
    if path == "-" {
        if let Some(null) = null_stdin() {
            return Err(null_stdin_error(null));
        }
        return Ok(Opened::Stdin);
    }
    let io_error = |e: std::io::Error| LoadError::Io {
        path: path.to_string(),
        reason: e.to_string(),
    };
    let file = File::open(path).map_err(io_error)?;
    let meta = file.metadata().map_err(io_error)?;
    if meta.is_dir() {
        return Err(LoadError::file(
            path,
            "is a directory; expected a run log file (CSV, TSV or JSON Lines, optionally .gz)",
        ));
    }
    let regular_len = meta.is_file().then_some(meta.len());
    Ok(Opened::File { file, regular_len })
}

/// The bytes of an input (a file, `-` for standard input, or a bundled `sample:` name),
/// gunzipped, and its format: `format` if given, else from the extension, else sniffed.
/// Shared by every reader of tabular input (run logs, measurements).
pub(crate) fn read_input(
    path: &str,
    format: Option<InputFormat>,
    limits: &InputLimits,
    probe: Probe<'_>,
) -> Result<(std::borrow::Cow<'static, [u8]>, InputFormat), LoadError> {
    if let Some(bytes) = super::sample::sample_bytes(path) {
        return Ok((bytes.into(), format.unwrap_or(InputFormat::Csv)));
    }
    let opened = open_input(path)?;
    let (bytes, format) = read_opened(path, opened, format, limits, probe)?;
    Ok((bytes.into(), format))
}

/// The caller's parser run on the first whole lines of an input still being read: an error it
/// returns at a line before the last one read is the input's error (the rest cannot mend it).
/// It is given the name for messages, the lines and their format.
pub(crate) type Probe<'a> = &'a dyn Fn(&str, &[u8], InputFormat) -> Result<(), LoadError>;

/// Sizes at which an input being read is probed.
const PROBE_AT: [usize; 2] = [64 << 10, 4 << 20];

/// Run `probe` on the whole lines of `text` (an input's start): an error located on a line
/// before the last one is returned; any other outcome waits for the whole input.
fn probe_prefix(
    path: &str,
    text: &[u8],
    format: Option<InputFormat>,
    stem: &str,
    probe: Probe<'_>,
) -> Result<(), LoadError> {
    let Some(last_newline) = memchr::memrchr(b'\n', text) else {
        return Ok(());
    };
    check_encoding(path, &text[..last_newline + 1])?;
    let format = format
        .or_else(|| format_from_extension(stem))
        .unwrap_or_else(|| sniff_format(&text[..last_newline + 1]));
    let end = match format {
        // A newline inside a quoted field is not the end of a row.
        InputFormat::Csv | InputFormat::Tsv => whole_lines_end(text),
        _ => Some(last_newline + 1),
    };
    let Some(end) = end else {
        return Ok(());
    };
    let lines = &text[..end];
    let complete = memchr::memchr_iter(b'\n', lines).count() as u64;
    match probe(path, lines, format) {
        Err(e) if e.line().is_some_and(|line| line < complete) => Err(e),
        _ => Ok(()),
    }
}

/// The end of the last whole line of `text` that is outside a quoted CSV field (an even
/// number of quotes before it), if any.
fn whole_lines_end(text: &[u8]) -> Option<usize> {
    let mut quotes = 0usize;
    let mut end = None;
    for (i, &b) in text.iter().enumerate() {
        match b {
            b'"' => quotes += 1,
            b'\n' if quotes.is_multiple_of(2) => end = Some(i + 1),
            _ => {}
        }
    }
    end
}

/// Read an opened input to its end into memory (a regular file from its start), within the
/// limits, gunzipped, and checked for what is certainly not a UTF-8 log.
pub(crate) fn read_opened(
    path: &str,
    opened: Opened,
    format: Option<InputFormat>,
    limits: &InputLimits,
    probe: Probe<'_>,
) -> Result<(Vec<u8>, InputFormat), LoadError> {
    let shown = input_name(path);
    let io_error = |e: std::io::Error| LoadError::Io {
        path: shown.to_string(),
        reason: e.to_string(),
    };
    let (reader, size_hint): (Box<dyn Read>, Option<u64>) = match opened {
        Opened::Stdin => (Box::new(std::io::stdin().lock()), None),
        Opened::File {
            mut file,
            regular_len,
        } => {
            if regular_len.is_some() {
                // The fast reader may have read from it already.
                file.rewind().map_err(io_error)?;
            }
            (Box::new(file), regular_len)
        }
    };
    let (prefix, reader) = read_prefix(reader).map_err(io_error)?;
    let compressed = prefix == GZIP_MAGIC;
    let reader = BufReader::with_capacity(256 << 10, std::io::Cursor::new(prefix).chain(reader));
    let stem = if compressed {
        path.strip_suffix(".gz").unwrap_or(path)
    } else {
        path
    };
    let probe_start = |text: &[u8]| probe_prefix(shown, text, format, stem, probe);
    let (bytes, stem) = if compressed {
        let bytes = collect(shown, Gunzip::new(reader), None, limits, true, &probe_start)?;
        if bytes.starts_with(&GZIP_MAGIC) {
            return Err(LoadError::file(
                shown,
                "decompresses to gzip data again (the file was compressed twice); expected \
                 text inside one layer of gzip: decompress it once with gzip -dc and read the \
                 result",
            ));
        }
        (bytes, stem)
    } else {
        let bytes = collect(shown, reader, size_hint, limits, false, &probe_start)?;
        (bytes, stem)
    };
    check_encoding(shown, &bytes)?;
    let format = format
        .or_else(|| format_from_extension(stem))
        .unwrap_or_else(|| sniff_format(&bytes));
    if format == InputFormat::Csv {
        super::parse::check_quotes(shown, &bytes, limits)?;
    }
    Ok((bytes, format))
}

/// The first two bytes (fewer at the end of the input), read one call at a time as a pipe
/// delivers them; the reader continues after them.
fn read_prefix<R: Read>(mut reader: R) -> std::io::Result<(Vec<u8>, R)> {
    let mut prefix = [0u8; 2];
    let mut filled = 0;
    while filled < prefix.len() {
        match reader.read(&mut prefix[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok((prefix[..filled].to_vec(), reader))
}

/// Memory a careful load needs per line beyond the text itself (iteration, key, two metrics,
/// line number): the estimate checked against the machine while reading.
const CAREFUL_BYTES_PER_LINE: u64 = 40;

/// Read everything into memory, checking each line's length as it arrives, probing the start
/// (`probe`), and stopping at the first limit met or error found.
fn collect<R: Read>(
    path: &str,
    mut reader: R,
    size_hint: Option<u64>,
    limits: &InputLimits,
    compressed: bool,
    probe: &dyn Fn(&[u8]) -> Result<(), LoadError>,
) -> Result<Vec<u8>, LoadError> {
    let mut probes = PROBE_AT.iter().copied().peekable();
    let mut out: Vec<u8> = Vec::new();
    if let Some(len) = size_hint.filter(|&len| len <= limits.max_input) {
        // A regular file says its size: refuse one that cannot fit before reading it.
        limits.check_memory(path, len)?;
        out.reserve_exact(len as usize);
    }
    let budget = limits.memory_budget();
    let mut lines = LineLengths::new(limits.max_line);
    let mut chunk = vec![0u8; 256 << 10];
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(read_error(path, e, compressed)),
        };
        let text = &chunk[..n];
        if let Some(line) = lines.feed(text) {
            return Err(limits.line_too_long(path, line));
        }
        if (out.len() + n) as u64 > limits.max_input {
            return Err(limits.input_too_large(path, compressed));
        }
        let needed = (out.len() + n) as u64 + lines.count * CAREFUL_BYTES_PER_LINE;
        if let Some(budget) = budget.filter(|&b| needed > b) {
            return Err(limits.out_of_memory(path, needed, budget));
        }
        if out.try_reserve(n).is_err() {
            return Err(limits.allocation_failed(path, needed));
        }
        out.extend_from_slice(text);
        if probes.next_if(|&at| out.len() >= at).is_some() {
            probe(&out)?;
        }
    }
    Ok(out)
}

fn read_error(path: &str, e: std::io::Error, compressed: bool) -> LoadError {
    if compressed {
        if let Some(message) = gzip_problem(&e) {
            return LoadError::file(path, message);
        }
        return LoadError::file(
            path,
            format!("truncated or corrupt gzip data ({e}); expected a complete .gz file"),
        );
    }
    LoadError::Io {
        path: path.to_string(),
        reason: e.to_string(),
    }
}

/// Line lengths of text fed piece by piece: the 1-based number of the first line longer than
/// the limit, if any.
pub(crate) struct LineLengths {
    max: u64,
    /// Bytes of the current line seen so far.
    current: u64,
    /// Newlines seen so far.
    pub count: u64,
}

impl LineLengths {
    pub(crate) fn new(max: u64) -> Self {
        LineLengths {
            max,
            current: 0,
            count: 0,
        }
    }

    pub(crate) fn feed(&mut self, text: &[u8]) -> Option<u64> {
        let mut start = 0;
        for newline in memchr::memchr_iter(b'\n', text) {
            if self.current + (newline - start) as u64 > self.max {
                return Some(self.count + 1);
            }
            self.current = 0;
            self.count += 1;
            start = newline + 1;
        }
        self.current += (text.len() - start) as u64;
        (self.current > self.max).then_some(self.count + 1)
    }
}

/// The first line longer than `limits.max_line` in text already in memory, as an error.
pub(crate) fn check_line_lengths(
    path: &str,
    text: &[u8],
    limits: &InputLimits,
) -> Result<(), LoadError> {
    match LineLengths::new(limits.max_line).feed(text) {
        Some(line) => Err(limits.line_too_long(path, line)),
        None => Ok(()),
    }
}

/// UTF-16 text (with or without its byte-order mark) is named, with the command that
/// converts it; any other encoding is left to the field checks.
pub(crate) fn check_encoding(path: &str, text: &[u8]) -> Result<(), LoadError> {
    if let Some((format, unpack)) = compressed_format(text) {
        return Err(LoadError::file(
            path,
            format!(
                "the file is {format} data, not text; expected CSV, TSV or JSON Lines, plain or \
                 gzip-compressed: unpack it first (e.g. {unpack})"
            ),
        ));
    }
    if let Some(encoding) = utf32_encoding(text) {
        return Err(LoadError::file(
            path,
            format!(
                "the file is UTF-32 text; expected UTF-8: convert it with iconv -f {encoding} \
                 -t UTF-8 and read the result"
            ),
        ));
    }
    if let Some(encoding) = utf16_encoding(text) {
        return Err(LoadError::file(
            path,
            format!(
                "the file is UTF-16 text; expected UTF-8: convert it with iconv -f {encoding} \
                 -t UTF-8 and read the result"
            ),
        ));
    }
    Ok(())
}

/// An archive or compression other than gzip, by its magic bytes: its name and the command
/// that unpacks it to standard output.
fn compressed_format(text: &[u8]) -> Option<(&'static str, &'static str)> {
    const MAGIC: [(&[u8], &str, &str); 6] = [
        (b"PK\x03\x04", "zip", "unzip -p FILE > run.csv"),
        (b"BZh", "bzip2", "bzip2 -dc FILE > run.csv"),
        (b"\xFD7zXZ\x00", "xz", "xz -dc FILE > run.csv"),
        (b"\x28\xB5\x2F\xFD", "zstd", "zstd -dc FILE > run.csv"),
        (b"7z\xBC\xAF\x27\x1C", "7-Zip", "7z x FILE"),
        (b"\x04\x22\x4D\x18", "LZ4", "lz4 -dc FILE > run.csv"),
    ];
    MAGIC
        .iter()
        .find(|(magic, ..)| {
            // `BZh` is followed by the block size digit: not a CSV header that starts "BZh".
            text.starts_with(magic)
                && (magic != b"BZh" || text.get(3).is_some_and(|d| (b'1'..=b'9').contains(d)))
                && (magic != b"BZh" || text.get(4..10) == Some(b"\x31\x41\x59\x26\x53\x59"))
        })
        .map(|&(_, name, unpack)| (name, unpack))
}

/// The iconv name of the UTF-32 the text is in, if it is: by its byte-order mark, or ASCII
/// with three zero bytes in every four.
fn utf32_encoding(text: &[u8]) -> Option<&'static str> {
    if text.starts_with(b"\xFF\xFE\x00\x00") || text.starts_with(b"\x00\x00\xFE\xFF") {
        return Some("UTF-32");
    }
    let quads: Vec<&[u8]> = text[..text.len().min(64)].chunks_exact(4).collect();
    if quads.len() < 4 {
        return None;
    }
    let count = |f: fn(&[u8]) -> bool| quads.iter().filter(|q| f(q)).count() * 4 >= quads.len() * 3;
    if count(|q| q[0] != 0 && q[1..] == [0, 0, 0]) {
        Some("UTF-32LE")
    } else if count(|q| q[3] != 0 && q[..3] == [0, 0, 0]) {
        Some("UTF-32BE")
    } else {
        None
    }
}

/// The iconv name of the UTF-16 the text is in, if it is: `UTF-16` when a byte-order mark
/// says which (iconv reads the mark), else the byte order the zero bytes show.
fn utf16_encoding(text: &[u8]) -> Option<&'static str> {
    if text.starts_with(b"\xFF\xFE") || text.starts_with(b"\xFE\xFF") {
        return Some("UTF-16");
    }
    // Without a mark: ASCII text in UTF-16 has a zero byte in every pair.
    let pairs: Vec<&[u8]> = text[..text.len().min(64)].chunks_exact(2).collect();
    if pairs.len() < 4 {
        return None;
    }
    let little = pairs.iter().filter(|p| p[1] == 0 && p[0] != 0).count();
    let big = pairs.iter().filter(|p| p[0] == 0 && p[1] != 0).count();
    if little * 4 >= pairs.len() * 3 {
        Some("UTF-16LE")
    } else if big * 4 >= pairs.len() * 3 {
        Some("UTF-16BE")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_lengths_are_tracked_across_pieces() {
        let mut lines = LineLengths::new(4);
        assert_eq!(lines.feed(b"abcd\nab"), None);
        assert_eq!(lines.feed(b"cd"), None);
        assert_eq!(lines.feed(b"\n1234"), None);
        assert_eq!(lines.feed(b"5"), Some(3));
        let mut lines = LineLengths::new(4);
        assert_eq!(lines.feed(b"a\nb\nabcde\n"), Some(3));
    }

    #[test]
    fn utf32_and_other_compressions_are_named() {
        let le: Vec<u8> = "seq_len,time_ms\n1,2\n"
            .chars()
            .flat_map(|c| (c as u32).to_le_bytes())
            .collect();
        assert_eq!(utf32_encoding(&le), Some("UTF-32LE"));
        assert_eq!(utf16_encoding(&le), None);
        let be: Vec<u8> = "seq_len\n1\n"
            .chars()
            .flat_map(|c| (c as u32).to_be_bytes())
            .collect();
        assert_eq!(utf32_encoding(&be), Some("UTF-32BE"));
        let mut marked = b"\xFF\xFE\x00\x00".to_vec();
        marked.extend(&le);
        let err = check_encoding("r.csv", &marked).unwrap_err().to_string();
        assert_eq!(
            err,
            "r.csv: the file is UTF-32 text; expected UTF-8: convert it with iconv -f UTF-32 -t \
             UTF-8 and read the result"
        );
        for (bytes, name) in [
            (&b"PK\x03\x04\x14\x00"[..], "zip"),
            (b"BZh91AY&SY\x00", "bzip2"),
            (b"\xFD7zXZ\x00\x00", "xz"),
            (b"\x28\xB5\x2F\xFD\x00", "zstd"),
        ] {
            let err = check_encoding("r.csv", bytes).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("r.csv: the file is {name} data, not text")),
                "{err}"
            );
        }
        assert!(check_encoding("r.csv", b"BZh,seq_len\n1,2\n").is_ok());
        assert!(check_encoding("r.csv", b"seq_len,time_ms\n1,2\n").is_ok());
    }

    #[test]
    fn utf16_is_recognised_with_or_without_its_mark() {
        let utf16: Vec<u8> = "seq_len,time_ms\n1,2\n"
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        assert_eq!(utf16_encoding(&utf16), Some("UTF-16LE"));
        let big: Vec<u8> = "seq_len\n1\n"
            .encode_utf16()
            .flat_map(u16::to_be_bytes)
            .collect();
        assert_eq!(utf16_encoding(&big), Some("UTF-16BE"));
        assert_eq!(utf16_encoding(b"\xFF\xFEs\x00"), Some("UTF-16"));
        assert_eq!(utf16_encoding(b"seq_len,time_ms\n1,2\n"), None);
        assert_eq!(utf16_encoding("é,ü\n".as_bytes()), None);
    }
}
