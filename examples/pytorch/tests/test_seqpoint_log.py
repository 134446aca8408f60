"""Tests of seqpoint_log's writer, padding logic and timed mode, with plain Python lists.

No torch is needed: batches are lists of sequences or objects with a ``.shape``.
"""

import json
import subprocess
import sys

import pytest

import seqpoint_log
from conftest import SRC, without_torch_env


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


class Shaped:
    """Stands in for a tensor: only ``.shape`` is read."""

    def __init__(self, *shape):
        self.shape = shape


def test_module_does_not_import_torch():
    # Imported afresh in a new interpreter, the package (all of it) must not pull torch in.
    code = (
        "import sys, seqpoint_log, seqpoint_log.hf, seqpoint_log.lightning; "
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=without_torch_env())
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_a_lazy_attribute_is_made_once_on_first_use():
    # The callbacks' modules build their class on first access (their frameworks imported
    # only then) and keep it: made once, the same object after, other names an AttributeError.
    import types

    from seqpoint_log._lazy import lazy_attribute

    made = []
    module = types.ModuleType("lazily")
    sys.modules["lazily"] = module
    try:
        module.__getattr__ = lazy_attribute("lazily", "Thing", lambda: made.append(1) or object())
        assert made == []
        first = module.Thing
        assert module.Thing is first and made == [1]
        with pytest.raises(AttributeError, match="module 'lazily' has no attribute 'Other'"):
            module.Other
    finally:
        del sys.modules["lazily"]


def test_padded_length_is_longest_rounded_up():
    assert seqpoint_log.padded_length([3, 7, 5]) == 7
    assert seqpoint_log.padded_length([3, 7, 5], multiple_of=8) == 8
    assert seqpoint_log.padded_length([9], multiple_of=8) == 16
    assert seqpoint_log.padded_length([16], multiple_of=8) == 16
    assert seqpoint_log.padded_length([0, 0]) == 0


def test_padded_length_rejects_bad_lengths():
    with pytest.raises(ValueError, match="empty batch"):
        seqpoint_log.padded_length([])
    with pytest.raises(ValueError, match="negative"):
        seqpoint_log.padded_length([3, -1])
    with pytest.raises(ValueError, match="whole number"):
        seqpoint_log.padded_length([2.5])
    with pytest.raises(ValueError, match="at least 1"):
        seqpoint_log.padded_length([2], multiple_of=0)


def test_describe_batch_of_lists_pads_to_longest():
    batch = [[1, 2, 3], [4], [5, 6, 7, 8, 9]]
    assert seqpoint_log.describe_batch(batch) == {"seq_len": 5, "batch_size": 3}
    assert seqpoint_log.describe_batch(batch, multiple_of=4) == {"seq_len": 8, "batch_size": 3}


def test_describe_batch_of_shaped_values():
    assert seqpoint_log.describe_batch(Shaped(16, 412, 161)) == {"seq_len": 412, "batch_size": 16}
    # Time-major (T, B, F).
    time_major = seqpoint_log.describe_batch(Shaped(412, 16, 161), seq_dim=0, batch_dim=1)
    assert time_major == {"seq_len": 412, "batch_size": 16}
    # (inputs, targets) tuples and dicts use the inputs.
    assert seqpoint_log.describe_batch((Shaped(8, 30), Shaped(8, 30))) == {
        "seq_len": 30,
        "batch_size": 8,
    }
    assert seqpoint_log.describe_batch({"input_ids": Shaped(4, 128), "labels": Shaped(4)}) == {
        "seq_len": 128,
        "batch_size": 4,
    }
    with pytest.raises(ValueError, match="no axis 1"):
        seqpoint_log.describe_batch(Shaped(5))
    with pytest.raises(ValueError, match="pass lengths="):
        seqpoint_log.describe_batch(42)
    # Uncollated (sequence, label) samples are not mistaken for sequences of length 2.
    with pytest.raises(ValueError, match="pass lengths="):
        seqpoint_log.describe_batch([([1, 2, 3, 4], 0), ([1, 2], 1)])


def test_writer_writes_one_object_per_iteration(tmp_path):
    path = tmp_path / "run.jsonl"
    with seqpoint_log.RunLogWriter(path) as writer:
        writer.write(0, epoch=0, seq_len=12, batch_size=4, time_ms=1.5)
        writer.write(1, epoch=0, seq_len=7.0, batch_size=4, time_ms=2)
    rows = read_lines(path)
    assert rows == [
        {"iteration": 0, "epoch": 0, "seq_len": 12, "batch_size": 4, "time_ms": 1.5},
        {"iteration": 1, "epoch": 0, "seq_len": 7, "batch_size": 4, "time_ms": 2.0},
    ]
    # Lengths are written as integers, which the reader requires.
    assert '"seq_len": 7,' in path.read_text()
    with seqpoint_log.RunLogWriter(tmp_path / "traced.jsonl") as writer:
        writer.write(0, seq_len=3, time_ms=1.0, traced=True)
        writer.write(1, seq_len=3, time_ms=1.0, traced=0.0)
    assert [r["traced"] for r in read_lines(tmp_path / "traced.jsonl")] == [1, 0]
    assert '"traced": 1}' in (tmp_path / "traced.jsonl").read_text()


def test_writer_refuses_changing_columns_and_bad_values(tmp_path):
    writer = seqpoint_log.RunLogWriter(tmp_path / "a.jsonl")
    writer.write(0, seq_len=3, time_ms=1.0)
    with pytest.raises(ValueError, match="same columns"):
        writer.write(1, seq_len=3)
    with pytest.raises(ValueError, match="finite"):
        writer.write(1, seq_len=3, time_ms=float("nan"))
    # `traced` is 1 or 0 as `seqpoint project` reads it, never 1.0 or 2.
    with pytest.raises(ValueError, match="traced must be 1 or 0"):
        seqpoint_log.RunLogWriter(tmp_path / "t.jsonl").write(0, seq_len=3, traced=2)
    with pytest.raises(ValueError, match="seq_len must be a whole number"):
        writer.write(1, seq_len=3.5, time_ms=1.0)
    writer.close()
    assert len(read_lines(tmp_path / "a.jsonl")) == 1


def test_writer_never_overwrites_unless_asked(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text("keep\n")
    with pytest.raises(FileExistsError, match="overwrite=True") as caught:
        seqpoint_log.RunLogWriter(path)
    assert caught.value.path == str(path)
    assert path.read_text() == "keep\n"
    with seqpoint_log.RunLogWriter(path, overwrite=True) as writer:
        writer.write(0, seq_len=1)
    assert read_lines(path) == [{"iteration": 0, "seq_len": 1}]


def test_dry_pass_numbers_iterations_across_epochs(tmp_path):
    loader = [[[1] * 3, [1] * 5], [[1] * 2], [[1] * 9, [1] * 4, [1]]]
    count = seqpoint_log.dry_pass(loader, tmp_path / "lengths.jsonl", epochs=2)
    assert count == 6
    rows = read_lines(tmp_path / "lengths.jsonl")
    assert [r["iteration"] for r in rows] == [0, 1, 2, 3, 4, 5]
    assert [r["epoch"] for r in rows] == [0, 0, 0, 1, 1, 1]
    assert [r["seq_len"] for r in rows] == [5, 2, 9, 5, 2, 9]
    assert [r["batch_size"] for r in rows] == [2, 1, 3, 2, 1, 3]
    assert all("time_ms" not in r for r in rows)


def test_dry_pass_with_two_lengths(tmp_path):
    pairs = [([[1] * 4, [1] * 6], [[1] * 5, [1] * 3]), ([[1] * 2], [[1] * 7])]

    def lengths(batch):
        src, tgt = batch
        return {
            "src_len": seqpoint_log.padded_length(len(s) for s in src),
            "tgt_len": seqpoint_log.padded_length(len(t) for t in tgt),
            "batch_size": len(src),
        }

    seqpoint_log.dry_pass(pairs, tmp_path / "mt.jsonl", lengths=lengths)
    rows = read_lines(tmp_path / "mt.jsonl")
    assert [(r["src_len"], r["tgt_len"]) for r in rows] == [(6, 5), (2, 7)]


class FakeClock:
    """Advances by a set amount per step, so times are known exactly."""

    def __init__(self, step_seconds):
        self.now = 100.0
        self.steps = list(step_seconds)
        self.running = False

    def __call__(self):
        if self.running:
            self.now += self.steps.pop(0)
        self.running = not self.running
        return self.now


def test_timed_mode_records_time_energy_and_synchronises(tmp_path):
    synced = []
    clock = FakeClock([0.010, 0.0255])
    counter = iter([50.0, 50.4, 50.4, 51.9])
    path = tmp_path / "run.jsonl"
    with seqpoint_log.TimedLog(
        path,
        synchronize=lambda: synced.append(True),
        energy=lambda: next(counter),
        clock=clock,
    ) as log:
        assert log.measures_energy
        for epoch, (seq_len, batch) in enumerate([(30, 8), (45, 8)]):
            with log.step(epoch=epoch, seq_len=seq_len, batch_size=batch):
                pass
    rows = read_lines(path)
    assert [r["time_ms"] for r in rows] == [10.0, 25.5]
    assert [r["energy_j"] for r in rows] == pytest.approx([0.4, 1.5])
    assert [r["seq_len"] for r in rows] == [30, 45]
    assert [r["iteration"] for r in rows] == [0, 1]
    assert len(synced) == 4  # before and after each step


def test_timed_mode_without_gpu_or_nvml_writes_time_only(tmp_path):
    path = tmp_path / "run.jsonl"
    with seqpoint_log.TimedLog(path, synchronize="auto", energy="auto") as log:
        for batch in [[[1, 2], [3]], [[1, 2, 3, 4]]]:
            with log.step(epoch=0, **seqpoint_log.describe_batch(batch)):
                sum(range(1000))
    rows = read_lines(path)
    assert [r["seq_len"] for r in rows] == [2, 4]
    assert all(r["time_ms"] >= 0 for r in rows)
    if not log.measures_energy:
        assert all("energy_j" not in r for r in rows)


def test_failed_step_is_not_logged(tmp_path):
    path = tmp_path / "run.jsonl"
    with seqpoint_log.TimedLog(path, synchronize=None, energy=None) as log:
        with pytest.raises(RuntimeError):
            with log.step(seq_len=3):
                raise RuntimeError("out of memory")
        with log.step(seq_len=4):
            pass
    rows = read_lines(path)
    assert [(r["iteration"], r["seq_len"]) for r in rows] == [(0, 4)]
