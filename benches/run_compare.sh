#!/usr/bin/env bash
# Side-by-side: `seqpoint select RUN --bins 16 --method quantile` against the same job in
# polars (benches/compare_polars.py), on one generated CSV (iteration,epoch,seq_len,time_ms),
# in page cache. Reports best wall time (hyperfine when installed, else a /usr/bin/time loop)
# and peak resident memory of each.
#
#   benches/run_compare.sh [ROWS]          # default 10000000 (about 211 MB)
#
# polars: set POLARS_PYTHON to a python that has it, or the script makes a venv:
#   python3 -m venv target/polars-venv && target/polars-venv/bin/pip install polars
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-10000000}
RUNS=${RUNS:-5}
DIR=target/bench-data/compare
FILE=$DIR/run$ROWS.csv
mkdir -p "$DIR"

cargo build --release --quiet --bin seqpoint --example gen_run
SEQPOINT=target/release/seqpoint
if [ ! -f "$FILE" ]; then
    target/release/examples/gen_run --rows "$ROWS" -o "$FILE"
fi

PY=${POLARS_PYTHON:-}
if [ -z "$PY" ]; then
    if python3 -c 'import polars' 2>/dev/null; then
        PY=python3
    else
        if [ ! -x target/polars-venv/bin/python ]; then
            python3 -m venv target/polars-venv
            target/polars-venv/bin/pip install --quiet polars
        fi
        PY=target/polars-venv/bin/python
    fi
fi
echo "file: $FILE ($(du -m "$FILE" | cut -f1) MB, $ROWS rows); polars $("$PY" -c 'import polars; print(polars.__version__)'); $(nproc) cores; load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# Warm the page cache, and check both give the same SeqPoints.
cat "$FILE" > /dev/null
ours=$("$SEQPOINT" select "$FILE" --bins 16 --method quantile | awk '$1 ~ /^[0-9]+$/ && NF == 7 {print $2, $3}')
theirs=$("$PY" benches/compare_polars.py "$FILE" | awk '$1 ~ /^[0-9]+$/ && NF == 6 {print $2, $3}')
if [ "$ours" = "$theirs" ]; then echo "same SeqPoints (iteration, key) from both"; else echo "WARNING: the SeqPoints differ"; fi

SEL="$SEQPOINT select $FILE --bins 16 --method quantile"
POL="$PY benches/compare_polars.py $FILE"
if command -v hyperfine > /dev/null; then
    hyperfine --warmup 1 --runs "$RUNS" --style basic -N --export-markdown "$DIR/hyperfine.md" \
        -n seqpoint "$SEL" -n polars "$POL" > /dev/null 2>&1 || \
    hyperfine --warmup 1 --runs "$RUNS" --style basic --export-markdown "$DIR/hyperfine.md" \
        -n seqpoint "$SEL" -n polars "$POL" > /dev/null
    cat "$DIR/hyperfine.md"
fi

# Best wall time and peak RSS over RUNS runs each, interleaved so both see the same load.
best() { sort -n | head -1; }
: > "$DIR/seqpoint.times"; : > "$DIR/polars.times"
for _ in $(seq "$RUNS"); do
    /usr/bin/time -f "%e %M %U %S" -a -o "$DIR/seqpoint.times" $SEL > /dev/null
    /usr/bin/time -f "%e %M %U %S" -a -o "$DIR/polars.times" $POL > /dev/null
done
echo
echo "| tool | best wall s | median wall s | CPU s (user+sys, best run) | peak RSS MB |"
echo "|---|---|---|---|---|"
for tool in seqpoint polars; do
    f=$DIR/$tool.times
    wall=$(cut -d' ' -f1 "$f" | best)
    median=$(cut -d' ' -f1 "$f" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    cpu=$(sort -n "$f" | head -1 | awk '{printf "%.2f", $3 + $4}')
    rss=$(cut -d' ' -f2 "$f" | sort -n | head -1)
    echo "| $tool | $wall | $median | $cpu | $((rss / 1024)) |"
done
s=$(cut -d' ' -f1 "$DIR/seqpoint.times" | best); p=$(cut -d' ' -f1 "$DIR/polars.times" | best)
echo
echo "seqpoint is $(awk -v s="$s" -v p="$p" 'BEGIN {printf "%.1f", p / s}')x faster than polars (best wall times)"
