#!/usr/bin/env bash
# Run one fuzz target for SECONDS (default 600) on the nightly toolchain, starting from the
# committed seeds; crashes land in fuzz/artifacts/TARGET/. Usage: fuzz/run.sh TARGET [SECONDS]
set -euo pipefail
cd "$(dirname "$0")"
target=$1
seconds=${2:-600}
mkdir -p "corpus/$target"
exec cargo +nightly fuzz run "$target" "corpus/$target" "seeds/$target" -- \
  -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
