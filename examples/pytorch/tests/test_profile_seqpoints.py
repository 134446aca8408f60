"""Tests of profiling exactly the SeqPoints: the list, the schedule, profile_seqpoints.

The list and the plain-timing path need no torch; the schedule's actions are checked against
a stand-in ``torch.profiler`` module, and against the real one (with real traces) where torch
is installed.
"""

import csv
import enum
import json
import os
import subprocess
import sys
import types
import warnings

import pytest

import seqpoint_log
from conftest import import_torch, without_torch_env


def seqpoints_doc(points, plan=None):
    """A minimal seqpoint/1 document: ``points`` are (id, iteration); ``plan`` rows
    (iteration, seqpoint)."""
    doc = {
        "schema": "seqpoint/1",
        "seqpoints": [{"id": i, "iteration": it, "weight": 1} for i, it in points],
    }
    if plan is not None:
        doc["plan"] = {"profile": [{"iteration": it, "seqpoint": sp} for it, sp in plan]}
    return doc


def write_doc(tmp_path, doc, name="seqpoints.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


def read_measured(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


class StepClock:
    """Each listed step takes the next of ``durations`` seconds (two reads per step)."""

    def __init__(self, durations):
        self.durations = list(durations)
        self.now = 10.0
        self.reads = 0

    def __call__(self):
        if self.reads % 2 == 1:
            self.now += self.durations.pop(0)
        self.reads += 1
        return self.now


def run_steps(prof, count, work=None):
    for step in range(count):
        with prof.step():
            if work:
                work(step)


def test_list_is_the_seqpoints_or_the_plan(tmp_path):
    plain = seqpoint_log.ProfileList(write_doc(tmp_path, seqpoints_doc([(0, 40), (1, 7)])))
    assert plain.iterations == [7, 40]
    assert plain.seqpoint_of == {40: 0, 7: 1}
    planned = seqpoint_log.ProfileList(
        seqpoints_doc([(0, 40), (1, 7)], plan=[(40, 0), (12, 0), (7, 1), (90, 1)])
    )
    assert planned.iterations == [7, 12, 40, 90]
    assert planned.seqpoint_of[12] == 0 and planned.seqpoint_of[90] == 1
    assert planned.trace_name(12) == "seqpoint-0-iter12.pt.trace.json"
    assert planned.trace_name(12, rank=1) == "seqpoint-0-iter12-rank1.pt.trace.json"
    assert planned.range_name(90) == "seqpoint 1 iter 90"


def test_actions_record_listed_steps_and_warm_up_before_them():
    listed = seqpoint_log.ProfileList(seqpoints_doc([(0, 1), (1, 5), (2, 6), (3, 10)]), warmup=2)
    actions = [listed.action(step) for step in range(12)]
    assert actions == [
        "warmup", "record",            # 1: only one step before it exists
        None, "warmup", "warmup",      # 3, 4 warm up for 5
        "record", "record",            # 5, 6 back to back; 6's warm-up is 5's record
        None, "warmup", "warmup", "record", None,
    ]
    no_warmup = seqpoint_log.ProfileList(seqpoints_doc([(0, 3)]), warmup=0)
    assert [no_warmup.action(s) for s in range(5)] == [None, None, None, "record", None]


def test_bad_documents_are_named(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "seqpoint/1",\n "seqpoints": [}')
    with pytest.raises(ValueError, match=r"bad.json:2:\d+: not JSON"):
        seqpoint_log.ProfileList(bad)
    other = write_doc(tmp_path, {"schema": "seqpoint-projection/1"}, "projection.json")
    with pytest.raises(ValueError, match="schema 'seqpoint-projection/1'; expected 'seqpoint/1'"):
        seqpoint_log.ProfileList(other)
    with pytest.raises(ValueError, match="lists no iteration"):
        seqpoint_log.ProfileList(seqpoints_doc([]))
    with pytest.raises(ValueError, match="listed for SeqPoints 0 and 1"):
        seqpoint_log.ProfileList(seqpoints_doc([(0, 4)], plan=[(4, 0), (4, 1)]))
    with pytest.raises(ValueError, match="must not be negative"):
        seqpoint_log.ProfileList(seqpoints_doc([(0, -3)]))


@pytest.fixture
def stand_in_torch(monkeypatch):
    """A ``torch.profiler`` with only ProfilerAction, as the schedule needs."""

    class ProfilerAction(enum.Enum):
        NONE = 0
        WARMUP = 1
        RECORD = 2
        RECORD_AND_SAVE = 3

    torch = types.ModuleType("torch")
    profiler = types.ModuleType("torch.profiler")
    profiler.ProfilerAction = ProfilerAction
    torch.profiler = profiler
    monkeypatch.setitem(sys.modules, "torch", torch)
    monkeypatch.setitem(sys.modules, "torch.profiler", profiler)
    return ProfilerAction


def test_schedule_maps_the_list_to_profiler_actions(stand_in_torch):
    action = stand_in_torch
    schedule = seqpoint_log.SeqPointSchedule(seqpoints_doc([(0, 4), (1, 2)]), warmup=1)
    assert schedule.iterations == [2, 4]
    assert [schedule(s) for s in range(6)] == [
        action.NONE, action.WARMUP, action.RECORD_AND_SAVE,
        action.WARMUP, action.RECORD_AND_SAVE, action.NONE,
    ]


def test_importing_and_plain_timing_need_no_torch(tmp_path):
    doc = write_doc(tmp_path, seqpoints_doc([(0, 1)]))
    code = (
        "import sys, seqpoint_log\n"
        "with seqpoint_log.profile_seqpoints(%r, %r) as p:\n"
        "    for _ in range(3):\n"
        "        with p.step(): pass\n"
        "print('torch' in sys.modules, p.uses_torch_profiler, sorted(p.measured))"
        % (str(doc), str(tmp_path / "profiles"))
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=without_torch_env())
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False False [1]"


def test_plain_timing_measures_the_listed_iterations_only(tmp_path):
    doc = write_doc(tmp_path, seqpoints_doc([(0, 4), (1, 1)], plan=[(4, 0), (1, 1), (6, 1)]))
    out = tmp_path / "profiles"
    clock = StepClock([0.0125, 0.250, 0.0031])
    seen = []
    with seqpoint_log.profile_seqpoints(doc, out, profiler=False, synchronize=None,
                                        energy=None, cuda_ranges=None, clock=clock) as prof:
        run_steps(prof, 8, seen.append)
        assert prof.done
    assert seen == list(range(8))
    rows = read_measured(out / "measured.csv")
    assert [(r["iteration"], r["seqpoint"], r["time_ms"]) for r in rows] == [
        ("1", "1", "12.5000"),
        ("4", "0", "250.0000"),
        ("6", "1", "3.1000"),
    ]
    # Timed without the profiler: no row is traced.
    assert [r["traced"] for r in rows] == ["0", "0", "0"]
    assert clock.reads == 6  # the clock is read around listed iterations only
    assert prof.trace_files == [] and not prof.uses_torch_profiler
    assert sorted(os.listdir(out)) == ["measured.csv"]


def test_energy_and_synchronisation_around_listed_steps(tmp_path):
    doc = write_doc(tmp_path, seqpoints_doc([(0, 2)]))
    counter = iter([100.0, 101.25])
    synced = []
    with seqpoint_log.profile_seqpoints(doc, tmp_path / "p", profiler=False,
                                        synchronize=lambda: synced.append(1),
                                        energy=lambda: next(counter),
                                        cuda_ranges=None) as prof:
        run_steps(prof, 4)
    rows = read_measured(tmp_path / "p" / "measured.csv")
    assert list(rows[0]) == ["iteration", "seqpoint", "time_ms", "energy_j", "traced"]
    assert (rows[0]["iteration"], float(rows[0]["energy_j"])) == ("2", 1.25)
    assert len(synced) == 2


def test_cuda_ranges_enclose_exactly_the_listed_steps(tmp_path):
    doc = write_doc(tmp_path, seqpoints_doc([(3, 1), (5, 4)]))
    events = []

    class Ranges:
        def start(self, name):
            events.append(("start", name))

        def stop(self):
            events.append(("stop",))

    with seqpoint_log.profile_seqpoints(doc, tmp_path / "p", profiler=False, synchronize=None,
                                        energy=None, cuda_ranges=Ranges()) as prof:
        run_steps(prof, 6, lambda step: events.append(("step", step)))
    assert events == [
        ("step", 0),
        ("start", "seqpoint 3 iter 1"), ("step", 1), ("stop",),
        ("step", 2), ("step", 3),
        ("start", "seqpoint 5 iter 4"), ("step", 4), ("stop",),
        ("step", 5),
    ]


def test_a_failed_step_is_not_measured(tmp_path):
    doc = write_doc(tmp_path, seqpoints_doc([(0, 1)]))
    with pytest.raises(RuntimeError):
        with seqpoint_log.profile_seqpoints(doc, tmp_path / "p", profiler=False,
                                            synchronize=None, energy=None,
                                            cuda_ranges=None) as prof:
            with prof.step():
                pass
            with prof.step():
                raise RuntimeError("out of memory")
    assert read_measured(tmp_path / "p" / "measured.csv") == []
    assert (tmp_path / "p" / "measured.csv").read_text() == "iteration,seqpoint,time_ms,traced\n"


def test_a_short_run_warns_which_iterations_were_missed(tmp_path):
    doc = write_doc(tmp_path, seqpoints_doc([(0, 1), (1, 9)]))
    with pytest.warns(UserWarning, match=r"1 listed iteration\(s\) were not reached .*: 9;"):
        with seqpoint_log.profile_seqpoints(doc, tmp_path / "p", profiler=False,
                                            synchronize=None, energy=None,
                                            cuda_ranges=None) as prof:
            run_steps(prof, 3)
    assert prof.missed == [9] and not prof.done


def test_outputs_are_never_overwritten_unless_asked(tmp_path):
    doc = write_doc(tmp_path, seqpoints_doc([(0, 0)]))
    out = tmp_path / "p"
    out.mkdir()
    (out / "measured.csv").write_text("keep\n")
    with pytest.raises(seqpoint_log.LogExistsError) as caught:
        with seqpoint_log.profile_seqpoints(doc, out, profiler=False):
            pass
    assert caught.value.path == str(out / "measured.csv")
    assert (out / "measured.csv").read_text() == "keep\n"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with seqpoint_log.profile_seqpoints(doc, out, profiler=False, overwrite=True,
                                            synchronize=None, energy=None,
                                            cuda_ranges=None) as prof:
            run_steps(prof, 1)
    assert len(read_measured(out / "measured.csv")) == 1


def test_real_torch_profiler_writes_one_trace_per_listed_iteration(tmp_path):
    torch = import_torch()
    doc = write_doc(tmp_path, seqpoints_doc([(0, 3), (1, 4), (2, 8)], plan=[(3, 0), (4, 1),
                                                                             (8, 2), (0, 2)]))
    out = tmp_path / "profiles"
    x = torch.randn(64, 64)
    with seqpoint_log.profile_seqpoints(doc, out, warmup=1) as prof:
        assert prof.uses_torch_profiler
        for step in range(10):
            with prof.step():
                with torch.profiler.record_function(f"work {step}"):
                    (x @ x).sum()
    expected = {0: 2, 3: 0, 4: 1, 8: 2}
    names = sorted(f"seqpoint-{sp}-iter{it}.pt.trace.json" for it, sp in expected.items())
    assert sorted(os.listdir(out)) == sorted(names + ["measured.csv"])
    assert sorted(prof.trace_files) == sorted(str(out / n) for n in names)
    for iteration, seqpoint in expected.items():
        trace = json.loads((out / f"seqpoint-{seqpoint}-iter{iteration}.pt.trace.json").read_text())
        labels = {e.get("name") for e in trace["traceEvents"]}
        # The trace holds that iteration's work and no other iteration's.
        assert f"work {iteration}" in labels
        assert not {f"work {s}" for s in range(10) if s != iteration} & labels
    rows = read_measured(out / "measured.csv")
    assert [(int(r["iteration"]), int(r["seqpoint"])) for r in rows] == sorted(expected.items())
    assert all(float(r["time_ms"]) > 0 for r in rows)
    # Every row was timed with the profiler recording it: the file says so.
    assert list(rows[0]) == ["iteration", "seqpoint", "time_ms", "traced"]
    assert [r["traced"] for r in rows] == ["1"] * len(expected)
