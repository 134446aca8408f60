"""Replay: measure the listed iterations without training up to them.

The run's batches are drawn from its (deterministic) loader in order, the unlisted ones only
loaded, never computed; each listed batch then runs ``warmup`` untimed steps of its own
shape, ``repeats`` timed ones (their mean is its ``time_ms``, untraced), and, with
torch.profiler, one more under the profiler for its trace. The model is trained on the
replayed batches only: replay measures step times, not a model to keep.

Whether replay serves a set-up (a step's time may depend on what came before it: allocator
state, caches, a learning-rate warm-up, data-dependent work) is measured, not assumed:
``check_replay`` times a few iterations of a real run's timed log again in replay and gives
the difference with its 95% interval.
"""

from __future__ import annotations

import csv
import math
import os
import statistics
import sys
import time
from typing import Any, Callable, Iterable, Iterator, Mapping, Optional, Sequence

from .devices import Reader, resolve_energy, resolve_sync
from .lengths import whole
from .plan import Document, ProfileList
from .timed import set_epoch
from .writer import LogExistsError

# Student's t, two-sided 95%, by degrees of freedom (1-30); 1.96 beyond.
_T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
        2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
        2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t95(df: int) -> float:
    return _T95[df - 1] if 1 <= df <= len(_T95) else 1.96


def epochs(loader: Iterable[Any], count: int) -> Iterator[Any]:
    """The run's batches in order, ``count`` epochs, ``set_epoch`` called as training does."""
    for epoch in range(count):
        set_epoch(loader, epoch)
        yield from loader


def draw(batches: Iterable[Any], iterations: Iterable[int]) -> dict[int, Any]:
    """The batches of ``iterations`` (0-based, across epochs), drawn in order; the loader
    stops after the last one. The others are loaded and dropped, never computed."""
    wanted = set(iterations)
    found: dict[int, Any] = {}
    if not wanted:
        return found
    last = max(wanted)
    for iteration, batch in enumerate(batches):
        if iteration in wanted:
            found[iteration] = batch
        if iteration >= last:
            break
    missing = sorted(wanted - set(found))
    if missing:
        raise ValueError(f"the loader ran out after {len(found)} listed batch(es); iterations "
                         f"{missing[:10]} are past its end (too few epochs?)")
    return found


class Replayer:
    """Times a batch's step: ``warmup`` untimed runs, then the mean of ``repeats`` timed."""

    def __init__(self, train_step: Callable[[Any], Any], warmup: int = 2, repeats: int = 3,
                 synchronize: Any = "auto", energy: Any = "auto",
                 clock: Callable[[], float] = time.perf_counter,
                 device_index: Optional[int] = None) -> None:
        self.train_step = train_step
        self.warmup = whole(warmup, "warmup")
        self.repeats = whole(repeats, "repeats")
        if self.repeats < 1:
            raise ValueError("repeats must be at least 1 timed step per iteration")
        self._choices = (synchronize, energy, device_index)
        self._sync: Optional[Callable[[], None]] = None
        self._energy: Optional[Reader] = None
        self._resolved = False
        self._clock = clock

    def _resolve(self) -> None:
        if not self._resolved:
            synchronize, energy, index = self._choices
            self._sync = resolve_sync(synchronize)
            self._energy = resolve_energy(energy, index)
            self._resolved = True

    @property
    def measures_energy(self) -> bool:
        self._resolve()
        return self._energy is not None

    def measure(self, batch: Any) -> tuple[float, Optional[float]]:
        """Mean time (ms) and energy (J) of the batch's step, after its warm-up."""
        self._resolve()
        for _ in range(self.warmup):
            self.train_step(batch)
        times, energies = [], []
        for _ in range(self.repeats):
            if self._sync:
                self._sync()
            e0 = self._energy() if self._energy else None
            t0 = self._clock()
            self.train_step(batch)
            if self._sync:
                self._sync()
            times.append((self._clock() - t0) * 1000.0)
            if self._energy is not None and e0 is not None:
                energies.append(self._energy() - e0)
        return statistics.fmean(times), (statistics.fmean(energies) if energies else None)


def replay(
    seqpoints: Document,
    batches: Iterable[Any],
    train_step: Callable[[Any], Any],
    out_dir: "os.PathLike[str] | str",
    warmup: int = 2,
    repeats: int = 3,
    profiler: Any = "auto",
    overwrite: bool = False,
    **options: Any,
) -> dict[int, float]:
    """Measure the iterations ``seqpoints`` lists by replaying their batches; returns
    ``{iteration: time_ms}`` and writes ``OUT_DIR/measured.csv`` as ``profile_seqpoints``
    does (times from untraced steps), plus, with torch.profiler (``profiler="auto"``: when
    the program has imported torch), one trace per listed iteration from one more step.
    ``batches``: the run's batches in order, e.g. ``seqpoint_log.epochs(loader, 3)``."""
    listed = ProfileList(seqpoints)
    out = os.fspath(out_dir)
    os.makedirs(out, exist_ok=True)
    measured_path = os.path.join(out, "measured.csv")
    trace = "torch" in sys.modules if profiler == "auto" else bool(profiler)
    traces = [os.path.join(out, listed.trace_name(i)) for i in listed.iterations] if trace else []
    if not overwrite:
        for path in [measured_path, *traces]:
            if os.path.exists(path):
                raise LogExistsError(path)
    replayer = Replayer(train_step, warmup, repeats, **options)
    drawn = draw(batches, listed.iterations)
    results: dict[int, float] = {}
    with open(measured_path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        energy = replayer.measures_energy
        writer.writerow(["iteration", "seqpoint", "time_ms"] + (["energy_j"] if energy else [])
                        + ["traced"])
        for iteration in listed.iterations:
            batch = drawn.pop(iteration)
            ms, joules = replayer.measure(batch)
            row = [str(iteration), str(listed.seqpoint_of[iteration]), f"{ms:.4f}"]
            if energy:
                row.append(f"{joules:.6f}" if joules is not None else "")
            # The timed repetitions ran without the profiler (its trace comes from one more).
            writer.writerow(row + ["0"])
            f.flush()
            results[iteration] = ms
            if trace:
                _trace_one(train_step, batch, os.path.join(out, listed.trace_name(iteration)),
                           iteration)
    return results


def _trace_one(train_step: Callable[[Any], Any], batch: Any, path: str,
               iteration: int) -> None:
    """One more step of the batch under torch.profiler, its trace at ``path``, labelled
    ``ProfilerStep#<iteration>`` as in a run."""
    import torch
    from torch.profiler import ProfilerAction, ProfilerActivity, profile

    activities = [ProfilerActivity.CPU]
    if torch.cuda.is_available():
        activities.append(ProfilerActivity.CUDA)

    def schedule(step: int) -> Any:
        # Recording from the start (step 0, before step_num is set) to the one step()
        return ProfilerAction.RECORD_AND_SAVE if step in (0, iteration) else ProfilerAction.NONE

    prof = profile(activities=activities, schedule=schedule,
                   on_trace_ready=lambda p: p.export_chrome_trace(path + ".partial"))
    prof.step_num = iteration
    with prof:
        train_step(batch)
        prof.step()
    os.replace(path + ".partial", path)


class ReplayCheck:
    """How replayed step times compare with the same iterations' times in a real run."""

    def __init__(self, pairs: Sequence[tuple[int, float, float]]) -> None:
        self.pairs = list(pairs)  # (iteration, run ms, replay ms)
        ratios = [100.0 * (replayed / ran - 1.0) for _, ran, replayed in self.pairs]
        self.n = len(ratios)
        self.mean_pct = statistics.fmean(ratios)
        sd = statistics.stdev(ratios) if self.n > 1 else math.inf
        self.half_width_pct = t95(self.n - 1) * sd / math.sqrt(self.n) if self.n > 1 else math.inf

    @property
    def interval_pct(self) -> tuple[float, float]:
        return self.mean_pct - self.half_width_pct, self.mean_pct + self.half_width_pct

    def serves(self, tolerance_pct: float) -> bool:
        """True when the whole 95% interval lies within ``±tolerance_pct``."""
        lo, hi = self.interval_pct
        return -tolerance_pct <= lo and hi <= tolerance_pct

    def __str__(self) -> str:
        lo, hi = self.interval_pct
        return (f"replayed steps ran {self.mean_pct:+.2f}% against the run's own "
                f"(95% interval {lo:+.2f}% to {hi:+.2f}%, {self.n} iterations)")


def run_times(path: "os.PathLike[str] | str") -> dict[int, float]:
    """``iteration -> time_ms`` of a timed log."""
    import json

    times = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if line.strip():
                row: Mapping[str, Any] = json.loads(line)
                if "time_ms" not in row:
                    raise ValueError(f"{os.fspath(path)}:{number}: no time_ms; expected a "
                                     "timed log (TimedLog) of a real run")
                times[int(row["iteration"])] = float(row["time_ms"])
    return times


def check_replay(
    timed_log: "os.PathLike[str] | str",
    iterations: Iterable[int],
    batches: Iterable[Any],
    train_step: Callable[[Any], Any],
    warmup: int = 2,
    repeats: int = 3,
    **options: Any,
) -> ReplayCheck:
    """Replay ``iterations`` that a real run timed in ``timed_log`` (for instance the first
    hundred steps of the real job, logged with ``TimedLog``) and compare: the mean
    difference of replayed against real step times, with its 95% interval."""
    ran = run_times(timed_log)
    wanted = sorted(set(iterations))
    unknown = [i for i in wanted if i not in ran]
    if unknown:
        raise ValueError(f"{os.fspath(timed_log)} has no time for iterations {unknown[:10]}")
    if len(wanted) < 2:
        raise ValueError("check_replay needs at least 2 iterations for an interval")
    replayer = Replayer(train_step, warmup, repeats, **options)
    drawn = draw(batches, wanted)
    return ReplayCheck([(i, ran[i], replayer.measure(drawn[i])[0]) for i in wanted])
