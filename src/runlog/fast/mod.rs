//! The fast way to read a large plain log: lines counted per chunk, columns sized once, chunks
//! parsed in parallel straight into them; on any anomaly `None`, and the careful reader decides.

// Files are read in chunks at offsets, never whole, so memory holds the columns and a few
// buffers. gzip is decompressed on one thread while another parses.

mod delimited;
mod fields;
mod json_lines;
mod numbers;
#[cfg(test)]
mod tests;

use std::fs::File;
use std::io::Read;
use std::ops::Range;
use std::os::unix::fs::FileExt;

use self::delimited::parse_delimited;
use self::fields::{BlockOut, BlockStats, IterationTrack, Layout};
use self::json_lines::{parse_jsonl, JsonLayout};
use super::columns::{wanted_names, ColumnPlan};
use super::error::LoadError;
use super::format::{format_from_extension, sniff_format, InputFormat};
use super::gunzip::{Gunzip, GZIP_MAGIC};
use super::limits::InputLimits;
use super::progress::LoadProgress;
use super::{
    ConfigRole, Configuration, Epochs, Iterations, LoadOptions, MetricColumn, RunLog, SkippedRows,
};
use crate::parallel::{run_jobs, zeroed_column};

const BOM: &[u8] = b"\xEF\xBB\xBF";
/// The header (or first JSON line) must fit in this much.
const HEAD_LIMIT: u64 = 1 << 20;
/// Largest chunk read at once: two of these per thread is the reader's buffer memory.
const MAX_CHUNK: u64 = 1 << 20;
/// Below this, one thread does everything (spawning costs more than it saves).
const PARALLEL_FROM: u64 = 512 << 10;

/// Where the bytes come from: memory, or a file read in chunks at offsets.
pub enum Source<'a> {
    Bytes(&'a [u8]),
    File { file: &'a File, len: u64 },
}

impl Source<'_> {
    fn len(&self) -> u64 {
        match self {
            Source::Bytes(b) => b.len() as u64,
            Source::File { len, .. } => *len,
        }
    }

    /// The bytes of `range`: borrowed from memory, or read into `buf`.
    fn read<'s>(&'s self, range: Range<u64>, buf: &'s mut Vec<u8>) -> Option<&'s [u8]> {
        match self {
            Source::Bytes(b) => b.get(range.start as usize..range.end as usize),
            Source::File { file, .. } => {
                buf.resize((range.end - range.start) as usize, 0);
                file.read_exact_at(buf, range.start).ok()?;
                Some(buf)
            }
        }
    }
}

/// How to read the lines after the head: the resolved columns and the format's parser.
enum Parser {
    Delimited { delimiter: u8, layout: Layout },
    Jsonl(Box<JsonLayout>),
}

impl Parser {
    fn layout(&self) -> &Layout {
        match self {
            Parser::Delimited { layout, .. } => layout,
            Parser::Jsonl(json) => &json.layout,
        }
    }

    fn parse(&self, text: &[u8], out: &mut BlockOut<'_>) -> Option<BlockStats> {
        match self {
            Parser::Delimited { delimiter, layout } => {
                parse_delimited(text, *delimiter, layout, out).ok()
            }
            Parser::Jsonl(json) => parse_jsonl(text, json, out).ok(),
        }
    }

    /// Quotes change how the careful reader splits CSV/TSV lines; JSON is full of them.
    fn quotes_are_anomalies(&self) -> bool {
        matches!(self, Parser::Delimited { .. })
    }
}

/// Resolve the columns from the start of the input. Returns the parser, the plan and where
/// the rows start (relative to `head`).
fn read_head(
    path: &str,
    head: &[u8],
    whole: bool,
    format: InputFormat,
    options: &LoadOptions,
) -> Option<(Parser, ColumnPlan, usize)> {
    let line_end = match memchr::memchr(b'\n', head) {
        Some(i) => i,
        // An input without `\n` whose lines end by a lone `\r` (old Mac line ends): the
        // careful reader splits those lines (`parse::lines`), this reader does not.
        None if whole && memchr::memchr(b'\r', head).is_some() => return None,
        None if whole => head.len(),
        None => return None,
    };
    let line = &head[..line_end];
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    match format {
        InputFormat::Csv | InputFormat::Tsv => {
            let delimiter = if format == InputFormat::Csv {
                b','
            } else {
                b'\t'
            };
            if line.contains(&b'"') || line.contains(&b'\r') {
                return None;
            }
            let header: Vec<String> = std::str::from_utf8(line)
                .ok()?
                .split(delimiter as char)
                .map(|s| s.trim().to_string())
                .collect();
            let plan = ColumnPlan::resolve(path, &header, &options.key, &options.metrics).ok()?;
            let layout = Layout::new(&plan, header.len())?;
            let rows_start = (line_end + 1).min(head.len());
            Some((Parser::Delimited { delimiter, layout }, plan, rows_start))
        }
        InputFormat::Jsonl => {
            let object: serde_json::Map<String, serde_json::Value> =
                serde_json::from_slice(line).ok()?;
            let names: Vec<String> = object.keys().cloned().collect();
            let plan = ColumnPlan::resolve(path, &names, &options.key, &options.metrics).ok()?;
            let layout = Layout::new(&plan, names.len())?;
            let wanted = wanted_names(&options.key, &options.metrics)
                .into_iter()
                .map(|(_, name)| name)
                .collect();
            let json = JsonLayout::new(layout, &names, line, wanted)?;
            Some((Parser::Jsonl(Box::new(json)), plan, 0))
        }
    }
}

/// One chunk's line count and its first and last line ends (absolute offsets).
struct ChunkScan {
    newlines: usize,
    first_newline: Option<u64>,
    last_newline: Option<u64>,
}

/// The growing or preallocated columns of the log being read.
struct Columns {
    dims: usize,
    keys: Vec<u32>,
    metrics: Vec<Vec<f64>>,
    iterations: Option<Vec<u64>>,
}

impl Columns {
    fn zeroed(rows: usize, layout: &Layout, listed: bool) -> Self {
        Columns {
            dims: layout.dims,
            keys: zeroed_column(rows * layout.dims),
            metrics: (0..layout.metrics).map(|_| zeroed_column(rows)).collect(),
            iterations: listed.then(|| zeroed_column(rows)),
        }
    }

    fn rows(&self) -> usize {
        self.keys.len() / self.dims.max(1)
    }

    /// Cut the columns into consecutive blocks of `sizes` rows.
    fn split(&mut self, sizes: &[usize]) -> Vec<BlockOut<'_>> {
        let dims = self.dims;
        let mut keys = self.keys.as_mut_slice();
        let mut metrics: Vec<&mut [f64]> = self.metrics.iter_mut().map(Vec::as_mut_slice).collect();
        let mut iterations = self.iterations.as_deref_mut();
        let mut blocks = Vec::with_capacity(sizes.len());
        for &rows in sizes {
            let (k, rest) = std::mem::take(&mut keys).split_at_mut(rows * dims);
            keys = rest;
            let mut block_metrics = Vec::with_capacity(metrics.len());
            for column in metrics.iter_mut() {
                let (m, rest) = std::mem::take(column).split_at_mut(rows);
                *column = rest;
                block_metrics.push(m);
            }
            let block_iterations = iterations.take().map(|list| {
                let (i, rest) = list.split_at_mut(rows);
                iterations = Some(rest);
                i
            });
            blocks.push(BlockOut {
                keys: k,
                metrics: block_metrics,
                iterations: block_iterations,
            });
        }
        blocks
    }

    /// Close the gaps left by blank lines: block `b` wrote `used[b]` of its `sizes[b]` rows.
    fn compact(&mut self, sizes: &[usize], used: &[usize]) {
        let dims = self.dims;
        let (mut from, mut to) = (0usize, 0usize);
        for (&size, &rows) in sizes.iter().zip(used) {
            if from != to {
                self.keys
                    .copy_within(from * dims..(from + rows) * dims, to * dims);
                for column in &mut self.metrics {
                    column.copy_within(from..from + rows, to);
                }
                if let Some(list) = &mut self.iterations {
                    list.copy_within(from..from + rows, to);
                }
            }
            from += size;
            to += rows;
        }
        self.truncate(to);
    }

    fn truncate(&mut self, rows: usize) {
        self.keys.truncate(rows * self.dims);
        for column in &mut self.metrics {
            column.truncate(rows);
        }
        if let Some(list) = &mut self.iterations {
            list.truncate(rows);
        }
    }

    /// Make room for `more` rows at the end and hand out that tail.
    fn grow(&mut self, more: usize) -> BlockOut<'_> {
        let rows = self.rows();
        self.keys.resize((rows + more) * self.dims, 0);
        for column in &mut self.metrics {
            column.resize(rows + more, 0.0);
        }
        if let Some(list) = &mut self.iterations {
            list.resize(rows + more, 0);
        }
        BlockOut {
            keys: &mut self.keys[rows * self.dims..],
            metrics: self.metrics.iter_mut().map(|c| &mut c[rows..]).collect(),
            iterations: self.iterations.as_mut().map(|l| &mut l[rows..]),
        }
    }
}

/// Everything the blocks found, merged in order.
struct Merged {
    rows: usize,
    iterations: IterationTrack,
    epochs: Epochs,
}

impl Merged {
    fn new() -> Self {
        Merged {
            rows: 0,
            iterations: IterationTrack::new(),
            epochs: Epochs::default(),
        }
    }

    fn absorb(&mut self, stats: &BlockStats) {
        self.rows += stats.rows;
        self.iterations.absorb(&stats.iterations);
        for &(epoch, count) in &stats.epochs {
            self.epochs.push_run(epoch, count);
        }
    }

    /// Iterations need a list (a second parse) when present but not evenly spaced; rows out of
    /// order go to the careful reader, which sorts them and finds duplicates.
    fn needs_list(&self, layout: &Layout) -> Option<bool> {
        if !layout.has_iteration || self.rows <= 1 {
            return Some(false);
        }
        if !self.iterations.increasing {
            return None;
        }
        Some(!self.iterations.spaced)
    }
}

fn finish(
    path: &str,
    plan: ColumnPlan,
    layout: &Layout,
    columns: Columns,
    merged: Merged,
) -> Option<RunLog> {
    if merged.rows == 0 {
        return None;
    }
    let iterations = match (layout.has_iteration, columns.iterations) {
        (false, _) => Iterations::dense(merged.rows),
        (true, Some(list)) => Iterations::from_vec(list),
        (true, None) => Iterations::Spaced {
            start: merged.iterations.first?,
            step: merged.iterations.step.unwrap_or(1),
            len: merged.rows,
        },
    };
    let metrics = plan
        .metric_names
        .iter()
        .cloned()
        .zip(columns.metrics)
        .map(|(name, values)| MetricColumn { name, values })
        .collect();
    Some(RunLog {
        source: path.to_string(),
        key_names: plan.key_names,
        iterations,
        epochs: layout.has_epoch.then_some(merged.epochs),
        keys: columns.keys,
        configs: vec![Configuration {
            role: ConfigRole::Baseline,
            source: path.to_string(),
            metrics,
            measurement_like: plan.measurement_like,
        }],
        skipped: SkippedRows::default(),
        proxy: None,
        iteration_like: plan.iteration_like,
    })
}

/// The fast reader on a regular file already open (`len` bytes), reading it in chunks at
/// offsets (never whole). `Ok(None)` when it cannot be used; the caller then reads the same
/// file the careful way. An error is a limit met (memory).
pub fn read_file(
    path: &str,
    file: &File,
    len: u64,
    options: &LoadOptions,
    progress: &LoadProgress,
) -> Result<Option<RunLog>, LoadError> {
    let mut magic = [0u8; 2];
    if len >= 2 && file.read_exact_at(&mut magic, 0).is_err() {
        return Ok(None);
    }
    if magic == GZIP_MAGIC {
        return read_gzip(path, file, options.format, options, progress);
    }
    let format = match options.format.or_else(|| format_from_extension(path)) {
        Some(format) => format,
        None => {
            // Sniffing looks at the first line: it must be all there.
            let mut head = vec![0u8; len.min(1 << 20) as usize];
            if file.read_exact_at(&mut head, 0).is_err() {
                return Ok(None);
            }
            if head.len() as u64 != len && !head.contains(&b'\n') {
                return Ok(None);
            }
            sniff_format(&head)
        }
    };
    read_plain(path, &Source::File { file, len }, format, options, progress)
}

/// Chunk size and thread count, chosen from the input's size unless a test sets them.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tuning {
    pub chunk: Option<u64>,
    pub threads: Option<usize>,
}

/// Read an uncompressed input (memory or file) the fast way: `Ok(None)` leaves it to the
/// careful reader; an error is a limit met (memory).
pub fn read_plain(
    path: &str,
    source: &Source<'_>,
    format: InputFormat,
    options: &LoadOptions,
    progress: &LoadProgress,
) -> Result<Option<RunLog>, LoadError> {
    read_plain_tuned(path, source, format, options, progress, Tuning::default())
}

pub fn read_plain_tuned(
    path: &str,
    source: &Source<'_>,
    format: InputFormat,
    options: &LoadOptions,
    progress: &LoadProgress,
    tuning: Tuning,
) -> Result<Option<RunLog>, LoadError> {
    if source.len() > options.limits.max_input {
        return Err(options.limits.input_too_large(path, false));
    }
    let Some(scan) = scan_plain(path, source, format, options, progress, tuning) else {
        return Ok(None);
    };
    let capacity: usize = scan.sizes.iter().sum();
    let row_bytes = scan.parser.layout().row_bytes();
    options
        .limits
        .check_memory(path, capacity as u64 * (row_bytes + 8))?;
    Ok(parse_plain(path, source, scan, progress))
}

/// What pass 1 found: the columns, the parser, blocks of whole lines with their line counts,
/// the thread count and the length of the rows' part of the input.
struct PlainScan {
    plan: ColumnPlan,
    parser: Parser,
    blocks: Vec<Range<u64>>,
    sizes: Vec<usize>,
    threads: usize,
    body: u64,
}

/// Pass 1: the head resolved, lines counted per chunk so every column is allocated once, at
/// its final size. `None` on anything the careful reader must see (quotes in CSV/TSV, a line
/// longer than `--max-line`).
fn scan_plain(
    path: &str,
    source: &Source<'_>,
    format: InputFormat,
    options: &LoadOptions,
    progress: &LoadProgress,
    tuning: Tuning,
) -> Option<PlainScan> {
    let len = source.len();
    let mut buf = Vec::new();
    let probe = source.read(0..len.min(3), &mut buf)?;
    let body_start = if probe == BOM { 3 } else { 0 };
    let head_end = len.min(body_start + HEAD_LIMIT);
    let mut head_buf = Vec::new();
    let head = source.read(body_start..head_end, &mut head_buf)?;
    let (parser, plan, rows_offset) = read_head(path, head, head_end == len, format, options)?;
    let rows_start = body_start + rows_offset as u64;
    let body = len - rows_start;
    // The caller counted two units per byte of the file; the head is done already.
    progress.advance(2 * rows_start);

    let threads = tuning.threads.unwrap_or(if body >= PARALLEL_FROM {
        crate::parallel::threads()
    } else {
        1
    });
    let chunk = tuning
        .chunk
        .unwrap_or((body / (8 * threads as u64)).clamp(64 << 10, MAX_CHUNK));
    let chunks: Vec<Range<u64>> = (0..body.div_ceil(chunk))
        .map(|i| rows_start + i * chunk..(rows_start + (i + 1) * chunk).min(len))
        .collect();

    let quotes_matter = parser.quotes_are_anomalies();
    let max_line = options.limits.max_line;
    if rows_start - body_start > max_line + 1 {
        return None;
    }
    let scans = run_jobs(chunks.clone(), threads, |range: Range<u64>, buf| {
        let text = source.read(range.clone(), buf)?;
        if quotes_matter && memchr::memchr(b'"', text).is_some() {
            return None;
        }
        let first = memchr::memchr(b'\n', text);
        let last = memchr::memrchr(b'\n', text);
        if let (Some(first), Some(last)) = (first, last) {
            if has_long_line(&text[first + 1..=last], max_line) {
                return None;
            }
        }
        let scan = ChunkScan {
            newlines: memchr::memchr_iter(b'\n', text).count(),
            first_newline: first.map(|i| range.start + i as u64),
            last_newline: last.map(|i| range.start + i as u64),
        };
        progress.advance(range.end - range.start);
        Some(scan)
    })?;
    let mut blocks: Vec<(Range<u64>, usize)> = Vec::new();
    let mut cursor = rows_start;
    for scan in &scans {
        if let (Some(first), Some(last)) = (scan.first_newline, scan.last_newline) {
            // The line that runs across the chunk boundary.
            if first - cursor > max_line {
                return None;
            }
            blocks.push((cursor..last + 1, scan.newlines));
            cursor = last + 1;
        }
    }
    if cursor < len {
        if len - cursor > max_line {
            return None;
        }
        blocks.push((cursor..len, 1));
    }
    Some(PlainScan {
        plan,
        parser,
        sizes: blocks.iter().map(|b| b.1).collect(),
        blocks: blocks.into_iter().map(|b| b.0).collect(),
        threads,
        body,
    })
}

/// Whether text made of whole lines (each ending in a newline) has one longer than `max`
/// bytes. It steps a window of `max + 1` bytes from line start to line start, so the work is
/// a short backward search per window rather than a look at every line.
fn has_long_line(text: &[u8], max: u64) -> bool {
    let max = usize::try_from(max).unwrap_or(usize::MAX);
    let mut start = 0;
    while text.len() - start > max {
        match memchr::memrchr(b'\n', &text[start..=start + max]) {
            Some(i) => start += i + 1,
            None => return true,
        }
    }
    false
}

/// Pass 2: parse each block into its slice of the columns. Iterations that turn out to be
/// unevenly spaced need a list, and a second go with one.
fn parse_plain(
    path: &str,
    source: &Source<'_>,
    scan: PlainScan,
    progress: &LoadProgress,
) -> Option<RunLog> {
    let PlainScan {
        plan,
        parser,
        blocks,
        sizes,
        threads,
        body,
    } = scan;
    let capacity: usize = sizes.iter().sum();
    for listed in [false, true] {
        let mut columns = Columns::zeroed(capacity, parser.layout(), listed);
        let outs = columns.split(&sizes);
        let jobs: Vec<(Range<u64>, BlockOut<'_>)> = blocks.iter().cloned().zip(outs).collect();
        let stats = run_jobs(jobs, threads, |(range, mut out), buf| {
            let text = source.read(range.clone(), buf)?;
            let stats = parser.parse(text, &mut out)?;
            progress.advance(range.end - range.start);
            Some(stats)
        })?;
        let mut merged = Merged::new();
        for s in &stats {
            merged.absorb(s);
        }
        if merged.needs_list(parser.layout())? && !listed {
            progress.add_total(body);
            continue;
        }
        let used: Vec<usize> = stats.iter().map(|s| s.rows).collect();
        if used != sizes {
            columns.compact(&sizes, &used);
        }
        return finish(path, plan, parser.layout(), columns, merged);
    }
    None
}

/// Counts the compressed bytes read, for progress.
struct Counted<'p, R> {
    inner: R,
    progress: &'p LoadProgress,
}

impl<R: Read> Read for Counted<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        // Two units per compressed byte: the same scale as the plain reader's two passes.
        self.progress.advance(2 * n as u64);
        Ok(n)
    }
}

/// Why decompression stopped early: corrupt data, or a limit the careful reader will name.
struct Stopped;

/// Decompressed text in blocks of whole lines (the last block may lack its final newline).
/// `Err` in the channel means the fast reader stops and the careful reader decides: corrupt
/// data, a line longer than `--max-line`, more than `--max-input` bytes.
fn decompress_blocks(
    file: &File,
    limits: &InputLimits,
    progress: &LoadProgress,
    blocks: std::sync::mpsc::SyncSender<Result<Vec<u8>, Stopped>>,
) {
    let reader = Counted {
        inner: file,
        progress,
    };
    let mut decoder = Gunzip::new(std::io::BufReader::with_capacity(256 << 10, reader));
    let mut carry: Vec<u8> = Vec::new();
    let mut total: u64 = 0;
    loop {
        let mut block = std::mem::take(&mut carry);
        let start = block.len();
        block.resize(start + MAX_CHUNK as usize, 0);
        let mut filled = start;
        let mut eof = false;
        while filled < block.len() {
            match decoder.read(&mut block[filled..]) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(n) => filled += n,
                Err(_) => {
                    let _ = blocks.send(Err(Stopped));
                    return;
                }
            }
        }
        total += (filled - start) as u64;
        if total > limits.max_input {
            let _ = blocks.send(Err(Stopped));
            return;
        }
        block.truncate(filled);
        if !eof {
            // Keep the partial last line for the next block.
            match memchr::memrchr(b'\n', &block[start..]) {
                Some(i) => carry = block.split_off(start + i + 1),
                None if block.len() as u64 > limits.max_line => {
                    let _ = blocks.send(Err(Stopped));
                    return;
                }
                None => {
                    carry = block;
                    continue;
                }
            }
        }
        if !block.is_empty() && blocks.send(Ok(block)).is_err() {
            return;
        }
        if eof {
            return;
        }
    }
}

/// Read a gzip file the fast way: one thread decompresses, this one parses. `Ok(None)` leaves
/// it to the careful reader; an error is a limit met (memory).
pub fn read_gzip(
    path: &str,
    file: &File,
    format: Option<InputFormat>,
    options: &LoadOptions,
    progress: &LoadProgress,
) -> Result<Option<RunLog>, LoadError> {
    let stem = path.strip_suffix(".gz").unwrap_or(path);
    let limits = &options.limits;
    let budget = limits.memory_budget();
    let mut out_of_memory = None;
    let log = std::thread::scope(|scope| {
        let (sender, receiver) = std::sync::mpsc::sync_channel(2);
        scope.spawn(move || decompress_blocks(file, limits, progress, sender));
        let first = receiver.recv().ok()?.ok()?;
        let body = first.strip_prefix(BOM).unwrap_or(&first);
        let format = format
            .or_else(|| format_from_extension(stem))
            .unwrap_or_else(|| sniff_format(body));
        let whole = memchr::memchr(b'\n', body).is_none();
        if body.len() as u64 > limits.max_line && whole {
            return None;
        }
        let (parser, plan, rows_start) = read_head(path, body, whole, format, options)?;
        if rows_start as u64 > limits.max_line + 1 {
            return None;
        }
        let layout = parser.layout().clone();
        let row_bytes = layout.row_bytes();
        let mut columns = Columns::zeroed(0, &layout, false);
        let mut merged = Merged::new();
        let mut parse = |text: &[u8], columns: &mut Columns| -> Option<()> {
            if parser.quotes_are_anomalies() && memchr::memchr(b'"', text).is_some() {
                return None;
            }
            if has_long_line(text, limits.max_line)
                || memchr::memrchr(b'\n', text).map_or(text.len(), |i| text.len() - i - 1) as u64
                    > limits.max_line
            {
                return None;
            }
            let lines = memchr::memchr_iter(b'\n', text).count()
                + usize::from(text.last().is_some_and(|&b| b != b'\n'));
            let needed = (columns.rows() + lines) as u64 * (row_bytes + 8);
            if let Some(budget) = budget.filter(|&b| needed > b) {
                out_of_memory = Some(limits.out_of_memory(path, needed, budget));
                return None;
            }
            let before = columns.rows();
            let mut stats = parser.parse(text, &mut columns.grow(lines))?;
            let mut track = merged.iterations;
            track.absorb(&stats.iterations);
            if layout.has_iteration && !track.spaced && columns.iterations.is_none() {
                // Unevenly spaced from here on: list the rows so far (they were evenly
                // spaced) and read this block again with its list.
                let (first, step) = (
                    merged.iterations.first.unwrap_or(0),
                    merged.iterations.step.unwrap_or(1),
                );
                columns.truncate(before);
                columns.iterations = Some((0..before as u64).map(|r| first + r * step).collect());
                stats = parser.parse(text, &mut columns.grow(lines))?;
            }
            columns.truncate(before + stats.rows);
            merged.absorb(&stats);
            Some(())
        };
        parse(&body[rows_start..], &mut columns)?;
        drop(first);
        for block in receiver.iter() {
            parse(&block.ok()?, &mut columns)?;
        }
        merged.needs_list(&layout)?;
        for column in &mut columns.metrics {
            column.shrink_to_fit();
        }
        columns.keys.shrink_to_fit();
        finish(path, plan, &layout, columns, merged)
    });
    match out_of_memory {
        Some(err) => Err(err),
        None => Ok(log),
    }
}
