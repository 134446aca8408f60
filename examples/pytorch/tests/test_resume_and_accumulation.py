"""Resumed runs continue their logs (a mismatch is an error, not a mislabel), a failed start
does not block the retry, and an optimizer step over several micro-batches is one iteration
keyed by its longest micro-batch. Plain Python: no torch needed."""

import csv
import json

import pytest

import seqpoint_log


def read_lines(path):
    return [json.loads(line) for line in open(path, encoding="utf-8")]


def timed(path, steps, start=None, **options):
    """Log ``steps`` (seq_len per step) with a clock where every step takes 2 ms."""
    ticks = iter(range(10_000))
    with seqpoint_log.TimedLog(path, synchronize=None, energy=None, start_iteration=start,
                               clock=lambda: next(ticks) * 0.002, **options) as log:
        for seq_len in steps:
            with log.step(epoch=0, seq_len=seq_len, batch_size=4):
                pass
    return log


def test_a_resumed_timed_log_continues_where_it_stopped(tmp_path):
    path = tmp_path / "run.jsonl"
    timed(path, [10, 20, 30])
    log = timed(path, [40, 50], start=3)
    assert log.iteration == 5
    rows = read_lines(path)
    assert [r["iteration"] for r in rows] == [0, 1, 2, 3, 4]
    assert [r["seq_len"] for r in rows] == [10, 20, 30, 40, 50]
    assert all(r["time_ms"] == 2.0 for r in rows)


def test_a_resume_that_does_not_follow_the_log_is_an_error(tmp_path):
    path = tmp_path / "run.jsonl"
    timed(path, [10, 20, 30])
    before = path.read_text()
    with pytest.raises(seqpoint_log.ResumeMismatchError,
                       match=r"ends at iteration 2 \(line 3\).*starts at 3, not start_iteration=10"):
        timed(path, [40], start=10)
    with pytest.raises(seqpoint_log.ResumeMismatchError, match="not start_iteration=1"):
        timed(path, [40], start=1)
    # Without start_iteration an existing log is still never touched.
    with pytest.raises(seqpoint_log.LogExistsError, match="start_iteration="):
        timed(path, [40])
    assert path.read_text() == before


def test_a_resumed_log_keeps_its_columns(tmp_path):
    path = tmp_path / "run.jsonl"
    timed(path, [10])
    ticks = iter(range(100))
    with seqpoint_log.TimedLog(path, synchronize=None, energy=None, start_iteration=1,
                               clock=lambda: next(ticks) * 0.001) as log:
        with pytest.raises(ValueError, match="same columns"):
            with log.step(epoch=0, src_len=3, batch_size=4):
                pass


def test_an_empty_file_from_a_failed_start_does_not_block_the_retry(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text("")  # what a run that died before its first step leaves
    timed(path, [7, 8])
    assert [r["seq_len"] for r in read_lines(path)] == [7, 8]
    lengths = tmp_path / "lengths.jsonl"
    lengths.write_text("\n")
    assert seqpoint_log.dry_pass([[[1, 2]], [[1]]], lengths) == 2


def test_a_torn_last_line_is_named(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text('{"iteration": 0, "seq_len": 3}\n{"iteration": 1, "se')
    with pytest.raises(ValueError, match=r"run.jsonl:2: the last line is not complete"):
        timed(path, [4], start=2)


def profile(tmp_path, start, steps, **options):
    doc = {"schema": "seqpoint/1",
           "seqpoints": [{"id": 0, "iteration": 1, "weight": 1},
                         {"id": 1, "iteration": 4, "weight": 1}]}
    with seqpoint_log.profile_seqpoints(doc, tmp_path / "p", profiler=False, synchronize=None,
                                        energy=None, cuda_ranges=None, start_iteration=start,
                                        **options) as prof:
        for _ in range(steps):
            with prof.step():
                pass
    return prof


def measured(tmp_path):
    with open(tmp_path / "p" / "measured.csv", newline="") as f:
        return [(int(r["iteration"]), int(r["seqpoint"])) for r in csv.DictReader(f)]


def test_profiling_resumes_with_its_iterations(tmp_path):
    with pytest.warns(UserWarning, match="were not reached"):
        profile(tmp_path, None, 3)  # iterations 0-2: measures 1, the run then stops
    assert measured(tmp_path) == [(1, 0)]
    prof = profile(tmp_path, 3, 2)  # resumed at 3: iterations 3, 4
    assert measured(tmp_path) == [(1, 0), (4, 1)]
    assert prof.missed == [] and prof.done


def test_profiling_resumed_before_a_measured_iteration_is_an_error(tmp_path):
    with pytest.warns(UserWarning):
        profile(tmp_path, None, 3)
    with pytest.raises(seqpoint_log.ResumeMismatchError, match="already measured iteration 1"):
        profile(tmp_path, 1, 1)
    with pytest.raises(seqpoint_log.LogExistsError, match="start_iteration="):
        profile(tmp_path, None, 1)
    assert measured(tmp_path) == [(1, 0)]


def test_a_header_only_measured_csv_from_a_failed_start_is_replaced(tmp_path):
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "measured.csv").write_text("iteration,seqpoint,time_ms\n")
    profile(tmp_path, None, 5)
    assert measured(tmp_path) == [(1, 0), (4, 1)]


def test_micro_batches_make_one_iteration_keyed_by_the_longest():
    merged = seqpoint_log.merge_micro_batches([
        {"seq_len": 12, "batch_size": 8},
        {"seq_len": 30, "batch_size": 4},
        {"seq_len": 7, "batch_size": 8},
    ])
    # Longest micro-batch; sequences summed; padded tokens 12*8 + 30*4 + 7*8 = 272.
    assert merged == {"seq_len": 30, "batch_size": 20, "tokens": 272, "micro_batches": 3}
    # Given tokens (real, or packed documents' lengths) are summed as they are.
    packed = seqpoint_log.merge_micro_batches([
        {"seq_len": 64, "batch_size": 2, "tokens": 100},
        {"seq_len": 64, "batch_size": 2, "tokens": 90},
    ])
    assert packed == {"seq_len": 64, "batch_size": 4, "tokens": 190, "micro_batches": 2}
    with pytest.raises(ValueError, match="same columns"):
        seqpoint_log.merge_micro_batches([{"seq_len": 3}, {"src_len": 3}])
    with pytest.raises(ValueError, match="at least one micro-batch"):
        seqpoint_log.merge_micro_batches([])


def test_an_accumulated_step_is_logged_as_one_iteration(tmp_path):
    path = tmp_path / "run.jsonl"
    ticks = iter(range(100))
    with seqpoint_log.TimedLog(path, synchronize=None, energy=None,
                               clock=lambda: next(ticks) * 0.01) as log:
        with log.step(epoch=0) as step:
            for micro in ([[1] * 5, [1] * 9], [[1] * 3]):
                step.micro_batch(**seqpoint_log.describe_batch(micro))
        with log.step(epoch=0, micro_batches=[{"seq_len": 4, "batch_size": 1}]):
            pass
    assert read_lines(path) == [
        {"iteration": 0, "epoch": 0, "seq_len": 9, "batch_size": 3, "tokens": 21,
         "micro_batches": 2, "time_ms": 10.0},
        {"iteration": 1, "epoch": 0, "seq_len": 4, "batch_size": 1, "tokens": 4,
         "micro_batches": 1, "time_ms": 10.0},
    ]


def test_the_dry_pass_groups_micro_batches_as_the_optimizer_does(tmp_path):
    loader = [[[1] * n] for n in (3, 8, 5, 2, 6)]  # five batches of one sequence
    count = seqpoint_log.dry_pass(loader, tmp_path / "l.jsonl", epochs=2, accumulate=2)
    rows = read_lines(tmp_path / "l.jsonl")
    # Per epoch: (3, 8), (5, 2), (6): the last step takes what is left, as trainers do.
    assert count == 6
    assert [(r["epoch"], r["seq_len"], r["micro_batches"]) for r in rows] == [
        (0, 8, 2), (0, 5, 2), (0, 6, 1), (1, 8, 2), (1, 5, 2), (1, 6, 1)]
    assert [r["tokens"] for r in rows[:3]] == [11, 7, 6]
