#!/usr/bin/env bash
# Side by side on one generated CSV (iteration,epoch,seq_len,time_ms), in page cache:
#   1. `seqpoint select RUN --bins 16 --method quantile --format json` against the same job in
#      polars (benches/compare_polars.py) and against `wc -l RUN` (the floor: one pass over the
#      bytes), run in turn (seqpoint, polars, wc, seqpoint, ...) so all see the same load; the
#      ratio of each pair, and its median, is what to quote on a shared or noisy machine;
#   2. peak resident memory of each, and seqpoint's bytes per iteration;
#   3. k-means auto-K (`--method kmeans`) against the exact DP (`--method optimal`) on the
#      same log, both choosing K for the default error target.
#
#   benches/run_compare.sh [ROWS]      # default 10000000 (about 211 MB)
#   RUNS=5 KMEANS_RUNS=3 benches/run_compare.sh
#
# polars: set POLARS_PYTHON to a python that has it, or the script makes a venv:
#   python3 -m venv target/polars-venv && target/polars-venv/bin/pip install polars
# Needs bash 5 (wall times from EPOCHREALTIME) and GNU time (/usr/bin/time, peak memory).
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-10000000}
RUNS=${RUNS:-5}
KMEANS_RUNS=${KMEANS_RUNS:-3}
TARGET=${CARGO_TARGET_DIR:-target}
DIR=$TARGET/bench-data/compare
FILE=$DIR/run$ROWS.csv
mkdir -p "$DIR"

cargo build --release --quiet --bin seqpoint --example gen_run
SEQPOINT=$TARGET/release/seqpoint
if [ ! -f "$FILE" ]; then
    "$TARGET/release/examples/gen_run" --rows "$ROWS" -o "$FILE"
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
echo "file: $FILE ($(du -mL "$FILE" | cut -f1) MB, $ROWS rows); polars $("$PY" -c 'import polars; print(polars.__version__)'); $(nproc) cores; load average: $(cut -d' ' -f1-3 /proc/loadavg)"

# Warm the page cache, and check both give the same SeqPoints.
cat "$FILE" > /dev/null
ours=$("$SEQPOINT" select "$FILE" --bins 16 --method quantile | awk '$1 ~ /^[0-9]+$/ && NF == 7 {print $2, $3}')
theirs=$("$PY" benches/compare_polars.py "$FILE" | awk '$1 ~ /^[0-9]+$/ && NF == 6 {print $2, $3}')
if [ "$ours" = "$theirs" ]; then echo "same SeqPoints (iteration, key) from both"; else echo "WARNING: the SeqPoints differ"; fi

# One run of a command: appends "wall_s peak_kib cpu_s" to the file named first.
measure() {
    local out=$1
    shift
    local start=$EPOCHREALTIME
    /usr/bin/time -f "%M %U %S" -o "$DIR/time.tmp" "$@" > /dev/null
    local end=$EPOCHREALTIME
    awk -v s="$start" -v e="$end" '{printf "%.4f %d %.3f\n", e - s, $1, $2 + $3}' \
        "$DIR/time.tmp" >> "$out"
}
median() { sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
column_of() { cut -d' ' -f"$2" "$DIR/$1.runs"; }
# The median over runs of (A's figure / B's figure), pair by pair.
pair_ratio() { paste -d' ' "$DIR/$1.runs" "$DIR/$2.runs" | awk '{print $1 / $4}' | median; }

SEL=("$SEQPOINT" select "$FILE" --bins 16 --method quantile --format json)
POL=("$PY" benches/compare_polars.py "$FILE")
WC=(wc -l "$FILE")
# One warm-up each, not counted.
measure /dev/null "${SEL[@]}"; measure /dev/null "${POL[@]}"; measure /dev/null "${WC[@]}"
: > "$DIR/seqpoint.runs"; : > "$DIR/polars.runs"; : > "$DIR/wc.runs"
for _ in $(seq "$RUNS"); do
    measure "$DIR/seqpoint.runs" "${SEL[@]}"
    measure "$DIR/polars.runs" "${POL[@]}"
    measure "$DIR/wc.runs" "${WC[@]}"
done
echo
echo "$RUNS runs each, in turn; medians:"
echo "| command | wall s | CPU s (user+sys) | peak RSS MiB |"
echo "|---|---|---|---|"
for tool in seqpoint polars wc; do
    echo "| $tool | $(column_of $tool 1 | median) | $(column_of $tool 3 | median) |" \
        "$(column_of $tool 2 | median | awk '{printf "%.1f", $1 / 1024}') |"
done
echo
echo "seqpoint is $(pair_ratio polars seqpoint | awk '{printf "%.2f", $1}')x faster than polars" \
    "(median of the $RUNS pairwise wall-time ratios polars/seqpoint)"
echo "seqpoint takes $(pair_ratio seqpoint wc | awk '{printf "%.1f", $1}')x the wall time of wc -l" \
    "(median of the $RUNS pairwise ratios)"
echo "seqpoint peak: $(column_of seqpoint 2 | median | awk -v n="$ROWS" '{printf "%.1f", $1 * 1024 / n}')" \
    "bytes per iteration (whole process); polars uses" \
    "$(paste -d' ' "$DIR/polars.runs" "$DIR/seqpoint.runs" | awk '{print $2 / $5}' | median | awk '{printf "%.1f", $1}')x the memory"

# k-means auto-K against the exact DP, same log, each choosing K for the error target.
KM=("$SEQPOINT" select "$FILE" --method kmeans --format json)
DP=("$SEQPOINT" select "$FILE" --method optimal --format json)
: > "$DIR/kmeans.runs"; : > "$DIR/optimal.runs"
for _ in $(seq "$KMEANS_RUNS"); do
    measure "$DIR/kmeans.runs" "${KM[@]}"
    measure "$DIR/optimal.runs" "${DP[@]}"
done
echo
echo "k-means auto-K: $(column_of kmeans 1 | median) s wall, exact DP: $(column_of optimal 1 | median) s" \
    "(medians of $KMEANS_RUNS); k-means takes $(pair_ratio kmeans optimal | awk '{printf "%.2f", $1}')x" \
    "the exact DP's time (median of pairwise ratios)"
rm -f "$DIR/time.tmp"
