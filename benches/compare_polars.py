#!/usr/bin/env python3
"""The job of `seqpoint select RUN --bins 16 --method quantile` written in polars, for a
side-by-side timing (benches/run_compare.sh runs both).

Steps, as seqpoint does them: read the log; group iterations by seq_len (count, sum, mean,
variance, min, max, median of time_ms); cut the sorted lengths into K quantile bins by
iteration mass; per bin take the length whose mean time is nearest the bin's mean, and of
its iterations, sorted by time then iteration, the ones at the quantiles 1/2, 1/4, 3/4, ...
(the SeqPoint and 8 alternates; of two middles, the earlier iteration); project the whole
run's time as sum(weight * time) with a 95% interval from the within-bin spread.

Usage: compare_polars.py RUN.csv [K]
Needs polars (pip install polars).
"""

import math
import sys

import polars as pl

Z95 = 1.959963984540054
# The quantiles of a key's sorted iterations that are profiled, in order (seqpoint's pick).
SPREAD = [0.5, 0.25, 0.75, 0.125, 0.625, 0.375, 0.875, 0.0625, 0.5625]


def spread_ranks(n: int) -> list[int]:
    """Rank floor(q n) for each quantile, else the nearest rank not yet taken (lower first)."""
    taken, ranks = set(), []
    for q in SPREAD[:n]:
        at = min(math.floor(q * n), n - 1)
        for d in range(n):
            free = next((r for r in (at - d, at + d) if 0 <= r < n and r not in taken), None)
            if free is not None:
                break
        taken.add(free)
        ranks.append(free)
    return ranks


def main() -> None:
    path = sys.argv[1]
    k = int(sys.argv[2]) if len(sys.argv) > 2 else 16
    runs = pl.read_csv(path, columns=["iteration", "epoch", "seq_len", "time_ms"])
    n = runs.height

    groups = (
        runs.group_by("seq_len")
        .agg(
            count=pl.len(),
            total=pl.col("time_ms").sum(),
            mean=pl.col("time_ms").mean(),
            var=pl.col("time_ms").var(),
            min=pl.col("time_ms").min(),
            max=pl.col("time_ms").max(),
            median=pl.col("time_ms").median(),
        )
        .sort("seq_len")
    )
    # Quantile bins: a group belongs to the quantile its mass midpoint falls in.
    groups = groups.with_columns(
        before=pl.col("count").cum_sum() - pl.col("count"),
    ).with_columns(
        bin=((k * (pl.col("before") + pl.col("count") / 2) / n).floor().cast(pl.Int64)).clip(0, k - 1)
    )
    bins = groups.group_by("bin").agg(
        weight=pl.col("count").sum(),
        bin_mean=(pl.col("count") * pl.col("mean")).sum() / pl.col("count").sum(),
        # Pooled within-bin sum of squares: within-group plus between-group parts.
        m2=(pl.col("var").fill_null(0) * (pl.col("count") - 1)).sum(),
        lo=pl.col("seq_len").min(),
        hi=pl.col("seq_len").max(),
    )
    groups = groups.join(bins.select("bin", "bin_mean"), on="bin")
    pooled_between = groups.group_by("bin").agg(
        between=(pl.col("count") * (pl.col("mean") - pl.col("bin_mean")) ** 2).sum()
    )
    bins = bins.join(pooled_between, on="bin")
    # Representative: the length whose mean is nearest the bin mean (ties: shorter length).
    reps = (
        groups.with_columns(dist=(pl.col("mean") - pl.col("bin_mean")).abs())
        .sort(["bin", "dist", "seq_len"])
        .group_by("bin", maintain_order=True)
        .first()
        .select("bin", "seq_len", "median")
    )
    # Its iterations sorted by time, then iteration; those at the spread ranks, in order.
    members = (
        runs.join(reps.select("bin", "seq_len"), on="seq_len")
        .sort(["bin", "time_ms", "iteration"])
        .partition_by("bin", as_dict=True, maintain_order=True)
    )
    rows = []
    for (b,), sorted_rows in members.items():
        n = sorted_rows.height
        ranks = spread_ranks(n)
        # Of two middles, equally near the median, the earlier iteration is the SeqPoint.
        if n >= 2 and n % 2 == 0:
            lower = n // 2 - 1
            if sorted_rows["iteration"][lower] < sorted_rows["iteration"][ranks[0]]:
                if lower in ranks:
                    at = ranks.index(lower)
                    ranks[0], ranks[at] = ranks[at], ranks[0]
                else:
                    ranks[0] = lower
        picked = sorted_rows[ranks]
        rows.append(
            {
                "bin": b,
                "iteration": picked["iteration"][0],
                "seq_len": picked["seq_len"][0],
                "time_ms": picked["time_ms"][0],
                "alternates": picked["iteration"][1:].to_list(),
            }
        )
    picks = pl.DataFrame(rows)
    table = bins.join(picks, on="bin").sort("bin")
    actual = runs["time_ms"].sum()
    projected = 0.0
    variance = 0.0
    for row in table.iter_rows(named=True):
        w = row["weight"]
        projected += w * row["time_ms"]
        s2 = (row["m2"] + row["between"]) / (w - 1) if w > 1 else 0.0
        variance += w * w * max(0.0, 1.0 - 1.0 / w) * s2
    half = Z95 * math.sqrt(variance)
    print(f"{path}: {n} iterations, {table.height} SeqPoints, method quantile (polars)")
    print(f"{'id':>4} {'iteration':>10} {'key':>6} {'bin':>12} {'weight':>9} {'time_ms':>10}")
    for row in table.iter_rows(named=True):
        print(
            f"{row['bin']:>4} {row['iteration']:>10} {row['seq_len']:>6} "
            f"{str(row['lo']) + '-' + str(row['hi']):>12} {row['weight']:>9} {row['time_ms']:>10.3f}"
        )
    error = 100 * abs(projected - actual) / actual
    print(
        f"time_ms actual {actual:.6g} projected {projected:.6g} error {error:.3f}% "
        f"95% interval [{projected - half:.5g}, {projected + half:.5g}]"
    )


if __name__ == "__main__":
    main()
