"""Replay: the listed batches are drawn from the loader and measured on their own (warm-up,
timed repeats, one traced step), the others never computed; check_replay compares replayed
with real step times, with an interval."""

import csv
import json

import pytest

import seqpoint_log
from conftest import import_torch


def doc(*iterations):
    return {"schema": "seqpoint/1",
            "seqpoints": [{"id": i, "iteration": it, "weight": 1}
                          for i, it in enumerate(iterations)]}


class Loader:
    """Batches 0..n-1 as ints, recording how far it was drawn and set_epoch calls."""

    def __init__(self, n):
        self.n, self.drawn, self.epochs = n, 0, []

    def set_epoch(self, epoch):
        self.epochs.append(epoch)

    def __iter__(self):
        for i in range(self.n):
            self.drawn += 1
            yield ("batch", i)


def test_replay_computes_only_the_listed_batches_and_stops_after_the_last(tmp_path):
    loader = Loader(5)
    computed = []
    # Each timed step takes (batch index + 1) ms: hand-computable means.
    now = [0.0]

    def clock():
        return now[0]

    def train_step(batch):
        computed.append(batch)
        now[0] += (batch[1] + 1) / 1000.0

    times = seqpoint_log.replay(doc(6, 2), seqpoint_log.epochs(loader, 3), train_step,
                                tmp_path / "p", warmup=2, repeats=3, profiler=False,
                                synchronize=None, energy=None, clock=clock)
    # Iteration 2 is batch 2 of epoch 0, iteration 6 batch 1 of epoch 1.
    assert computed == [("batch", 2)] * 5 + [("batch", 1)] * 5
    assert loader.epochs == [0, 1] and loader.drawn == 7  # stopped after iteration 6
    assert times == pytest.approx({2: 3.0, 6: 2.0})
    with open(tmp_path / "p" / "measured.csv", newline="") as f:
        rows = [(r["iteration"], r["seqpoint"], r["time_ms"], r["traced"])
                for r in csv.DictReader(f)]
    # Timed without the profiler (its traces, when asked for, come from one more step).
    assert rows == [("2", "1", "3.0000", "0"), ("6", "0", "2.0000", "0")]
    with pytest.raises(seqpoint_log.LogExistsError):
        seqpoint_log.replay(doc(1), Loader(3), train_step, tmp_path / "p", profiler=False)
    with pytest.raises(ValueError, match="past its end"):
        seqpoint_log.replay(doc(9), Loader(3), train_step, tmp_path / "q", profiler=False)


def test_replay_traces_each_listed_iteration_apart_from_its_timed_steps(tmp_path):
    torch = import_torch()
    x = torch.randn(32, 32)
    calls = []

    def train_step(batch):
        calls.append(batch)
        with torch.profiler.record_function(f"work {batch}"):
            (x @ x).sum()

    seqpoint_log.replay(doc(3, 4), iter(range(10)), train_step, tmp_path / "p", warmup=1,
                        repeats=2)
    assert calls == [3] * 4 + [4] * 4  # warm-up, two timed, one traced
    for seqpoint, iteration in enumerate((3, 4)):
        trace = json.loads((tmp_path / "p" / f"seqpoint-{seqpoint}-iter{iteration}.pt.trace.json")
                           .read_text())
        labels = {e.get("name") for e in trace["traceEvents"]}
        assert f"ProfilerStep#{iteration}" in labels and f"work {iteration}" in labels


def test_check_replay_gives_the_difference_with_its_interval(tmp_path):
    log = tmp_path / "run.jsonl"
    ran = {0: 10.0, 1: 20.0, 2: 40.0, 3: 80.0}
    log.write_text("".join(json.dumps({"iteration": i, "seq_len": 4, "time_ms": t}) + "\n"
                           for i, t in ran.items()))
    # Replayed steps run 10%, 10%, 5% and 15% over: mean 10%, sd 4.082%, t(3) = 3.182.
    over = {0: 1.10, 1: 1.10, 2: 1.05, 3: 1.15}
    now = [0.0]

    def train_step(i):
        now[0] += ran[i] * over[i] / 1000.0

    check = seqpoint_log.check_replay(log, [0, 1, 2, 3], iter(range(4)), train_step,
                                      warmup=0, repeats=1, synchronize=None, energy=None,
                                      clock=lambda: now[0])
    assert check.n == 4 and check.mean_pct == pytest.approx(10.0)
    assert check.half_width_pct == pytest.approx(3.182 * 4.0825 / 2, rel=1e-4)
    assert not check.serves(5.0) and check.serves(20.0)
    assert "+10.00%" in str(check)
