"""torch.profiler's own habits with profile_seqpoints, on real torch: a bare ``prof.step()``
at the end of each step, the user's ``on_trace_ready``, and traces that trace tools read
(``*.pt.trace.json`` with ``distributedInfo``)."""

import csv
import json
import os

import pytest

import seqpoint_log
from conftest import import_torch


def doc(*iterations):
    return {
        "schema": "seqpoint/1",
        "seqpoints": [{"id": i, "iteration": it, "weight": 1} for i, it in enumerate(iterations)],
    }


def traced_labels(path):
    events = json.loads(open(path).read())["traceEvents"]
    return {e.get("name") for e in events}


def run_bare(torch, prof, steps):
    x = torch.randn(48, 48)
    for step in range(steps):
        with torch.profiler.record_function(f"work {step}"):
            (x @ x).sum()
        prof.step()  # torch.profiler's habit: the end of each step


def test_a_bare_step_at_the_end_of_each_step_records_exactly_the_listed_ones(tmp_path):
    torch = import_torch()
    # Iterations 0 and 1 listed: the first call, where the two forms differ, is measured.
    listed = {0: 0, 1: 1, 6: 2}
    out = tmp_path / "p"
    with seqpoint_log.profile_seqpoints(doc(*listed), out) as prof:
        run_bare(torch, prof, 9)
    assert prof.iteration == 9 and prof.missed == []
    for iteration, seqpoint in listed.items():
        labels = traced_labels(out / f"seqpoint-{seqpoint}-iter{iteration}.pt.trace.json")
        assert f"work {iteration}" in labels and f"ProfilerStep#{iteration}" in labels
        assert not {f"work {s}" for s in range(9) if s != iteration} & labels
    with open(out / "measured.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [(int(r["iteration"]), int(r["seqpoint"])) for r in rows] == sorted(listed.items())
    assert all(float(r["time_ms"]) > 0 for r in rows)


def test_bare_steps_time_from_one_call_to_the_next(tmp_path):
    # Plain timing with a known clock: each bare call ends the step begun by the last one.
    # The clock is read at the ends of listed steps only: these four readings, no more.
    ticks = iter([0.0, 0.5, 2.0, 3.0])
    out = tmp_path / "p"
    with seqpoint_log.profile_seqpoints(doc(0, 2), out, profiler=False, synchronize=None,
                                        energy=None, cuda_ranges=None,
                                        clock=lambda: next(ticks)) as prof:
        for _ in range(4):
            prof.step()
    with open(out / "measured.csv", newline="") as f:
        rows = [(r["iteration"], r["time_ms"]) for r in csv.DictReader(f)]
    # Iteration 0 from __enter__ (0.0) to the first call (0.5); iteration 2 from the second
    # call (2.0) to the third (3.0).
    assert rows == [("0", "500.0000"), ("2", "1000.0000")]


def test_the_two_forms_do_not_mix(tmp_path):
    with pytest.raises(RuntimeError, match="use one form"):
        with seqpoint_log.profile_seqpoints(doc(3), tmp_path / "a", profiler=False) as prof:
            prof.step()
            with prof.step():
                pass
    with pytest.raises(RuntimeError, match="use one form"):
        with seqpoint_log.profile_seqpoints(doc(3), tmp_path / "b", profiler=False) as prof:
            with prof.step():
                pass
            prof.step()
            prof.step()


def test_the_users_on_trace_ready_gets_the_traces_and_seqpoint_writes_none(tmp_path):
    torch = import_torch()
    board = tmp_path / "board"
    out = tmp_path / "p"
    seen = []

    def handler(prof):
        seen.append(prof.step_num - 1)  # torch hands a trace over once the next step began
        torch.profiler.tensorboard_trace_handler(str(board), worker_name="w")(prof)

    with seqpoint_log.profile_seqpoints(doc(2, 5), out, on_trace_ready=handler) as prof:
        run_bare(torch, prof, 7)
    assert seen == [2, 5]
    assert sorted(os.listdir(out)) == ["measured.csv"] and prof.trace_files == []
    traces = sorted(os.listdir(board))
    assert len(traces) == 2 and all(t.endswith(".pt.trace.json") for t in traces)
    found = sorted(int(l.split("#")[1]) for t in traces for l in traced_labels(board / t)
                   if l and l.startswith("ProfilerStep#"))
    assert found == [2, 5]
    for t in traces:
        assert json.loads((board / t).read_text())["distributedInfo"]["rank"] == 0


def test_default_traces_carry_distributed_info(tmp_path):
    torch = import_torch()
    with seqpoint_log.profile_seqpoints(doc(1), tmp_path / "p") as prof:
        run_bare(torch, prof, 2)
    (trace,) = prof.trace_files
    assert trace.endswith("seqpoint-0-iter1.pt.trace.json")
    info = json.loads(open(trace).read())["distributedInfo"]
    assert (info["rank"], info["world_size"]) == (0, 1)


def test_a_schedule_of_our_own_is_refused(tmp_path):
    with pytest.raises(TypeError, match="sets the schedule itself"):
        seqpoint_log.profile_seqpoints(doc(1), tmp_path / "p", schedule=lambda s: None)


def test_a_timed_log_inside_profile_seqpoints_marks_the_steps_it_recorded(tmp_path):
    # The timed log of every step, run inside profile_seqpoints (to check the projection
    # against the whole run, or to give `project` the full log): the listed steps ran under
    # torch.profiler, and their rows say so, as measured.csv's do.
    torch = import_torch()
    listed = (2, 5)
    with seqpoint_log.TimedLog(tmp_path / "run.jsonl") as log:
        with seqpoint_log.profile_seqpoints(doc(*listed), tmp_path / "p") as prof:
            x = torch.randn(48, 48)
            for step in range(7):
                with log.step(epoch=0, seq_len=4 + step, batch_size=2):
                    (x @ x).sum()
                prof.step()
    rows = [json.loads(line) for line in open(tmp_path / "run.jsonl")]
    assert [r["traced"] for r in rows] == [int(i in listed) for i in range(7)]
    with open(tmp_path / "p" / "measured.csv", newline="") as f:
        assert [r["traced"] for r in csv.DictReader(f)] == ["1", "1"]
    # Without a profiler the log has no such column.
    with seqpoint_log.TimedLog(tmp_path / "plain.jsonl") as log:
        with log.step(epoch=0, seq_len=4, batch_size=2):
            (x @ x).sum()
    assert "traced" not in json.loads(open(tmp_path / "plain.jsonl").readline())


def test_a_step_recorded_by_a_profiler_the_log_did_not_see_coming_warns_once(tmp_path):
    # A profiler opened after the log's first step: the columns are fixed, so the log
    # cannot mark the recorded rows; it says so once instead of staying silent.
    torch = import_torch()
    x = torch.randn(48, 48)
    with seqpoint_log.TimedLog(tmp_path / "run.jsonl") as log:
        with log.step(epoch=0, seq_len=4, batch_size=2):
            pass
        with pytest.warns(UserWarning, match="iteration 1 ran while torch.profiler recorded") as said:
            with torch.profiler.profile():
                for _ in range(3):
                    with log.step(epoch=0, seq_len=4, batch_size=2):
                        (x @ x).sum()
    assert len([w for w in said if "torch.profiler recorded" in str(w.message)]) == 1


def test_a_resumed_timed_log_keeps_its_traced_column_or_its_absence(tmp_path):
    torch = import_torch()
    x = torch.randn(48, 48)
    for begun_traced in (False, True):
        path = tmp_path / f"run-{begun_traced}.jsonl"
        first = seqpoint_log.profile_seqpoints(doc(0), tmp_path / f"a-{begun_traced}",
                                               profiler=begun_traced)
        with first as prof, seqpoint_log.TimedLog(path) as log:
            with log.step(epoch=0, seq_len=4, batch_size=2):
                (x @ x).sum()
            prof.step()
        # Resumed at 1 inside a tracing profiler listing iteration 1.
        with seqpoint_log.profile_seqpoints(doc(1), tmp_path / f"b-{begun_traced}",
                                            start_iteration=1) as prof, \
                seqpoint_log.TimedLog(path, start_iteration=1) as log:
            with log.step(epoch=0, seq_len=4, batch_size=2):
                (x @ x).sum()
            prof.step()
        rows = [json.loads(line) for line in open(path)]
        if begun_traced:
            assert [r["traced"] for r in rows] == [1, 1]
        else:
            assert all("traced" not in r for r in rows)
