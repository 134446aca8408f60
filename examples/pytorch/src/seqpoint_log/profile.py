"""Measuring exactly the listed iterations of a training run: their times (``measured.csv``,
which ``seqpoint project`` reads) and, with torch.profiler, one trace each.

Steps are marked either torch.profiler's way, a bare ``prof.step()`` at the end of each
step, or seqpoint's, ``with prof.step():`` around it. The two differ only at the first call
(the end of iteration 0, or the start of it): the handle ``step()`` returns is entered at
once in the ``with`` form and dropped at once when bare, and whichever happens first decides.
"""

from __future__ import annotations

import csv
import json
import os
import sys
import time
import warnings
from typing import Any, Callable, Optional, Literal

from .devices import Reader, cuda_ranges, resolve_energy, resolve_sync
from .lengths import whole
from .plan import Document, ProfileList, SeqPointSchedule
from .ranks import Ranks
from .tracing import tracer_closed, tracer_opened
from .writer import LogExistsError, ResumeMismatchError

Stamp = tuple[float, Optional[float]]  # (clock, energy counter) at one end of a step


class _Pending:
    """The first ``step()`` call's readings, until it is known whether it ended iteration 0."""

    def __init__(self, stamp: Optional[Stamp]) -> None:
        self.stamp = stamp


class StepHandle:
    """What ``prof.step()`` returns: a context manager for the ``with`` form; dropped, it
    is the bare form's end of a step."""

    def __init__(self, owner: "SeqPointProfiler", pending: Optional[_Pending]) -> None:
        self._owner, self._pending, self._entered = owner, pending, False

    def __enter__(self) -> "StepHandle":
        self._entered = True
        self._owner._enter_handle(self._pending)
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> Literal[False]:
        self._owner._exit_handle(ok=exc_type is None)
        return False

    def __del__(self) -> None:
        if not self._entered:
            self._owner._dropped_handle(self._pending)


def _read_measured(path: str) -> tuple[list[str], list[dict[str, str]]]:
    """Header and rows of an existing measured.csv; errors name the file and line."""
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader, [])
        rows = []
        for number, fields in enumerate(reader, start=2):
            if len(fields) != len(header) or not fields[0].isdigit():
                raise ValueError(f"{path}:{number}: expected {len(header)} fields "
                                 f"({','.join(header)}) as profile_seqpoints writes them")
            rows.append(dict(zip(header, fields)))
    if header[:3] != ["iteration", "seqpoint", "time_ms"]:
        raise ValueError(f"{path}:1: header {','.join(header)}; expected "
                         "iteration,seqpoint,time_ms as profile_seqpoints writes it")
    return header, rows


class SeqPointProfiler:
    """Measures exactly the iterations a seqpoint/1 document lists; see profile_seqpoints."""

    def __init__(
        self,
        seqpoints: Document,
        out_dir: "os.PathLike[str] | str",
        warmup: int = 1,
        profiler: Any = "auto",
        synchronize: Any = "auto",
        energy: Any = "auto",
        cuda_ranges: Any = "auto",
        device_index: Optional[int] = None,
        clock: Callable[[], float] = time.perf_counter,
        overwrite: bool = False,
        start_iteration: Optional[int] = None,
        on_trace_ready: Optional[Callable[[Any], None]] = None,
        **profiler_options: Any,
    ) -> None:
        if "schedule" in profiler_options:
            raise TypeError("profile_seqpoints sets the schedule itself (SeqPointSchedule); "
                            "pass torch.profiler.profile(schedule=SeqPointSchedule(...)) "
                            "to run your own profiler instead")
        self.listed = ProfileList(seqpoints, warmup)
        self.out_dir = os.fspath(out_dir)
        self.measured_path = os.path.join(self.out_dir, "measured.csv")
        self._profiler_choice = profiler
        self._profiler_options = profiler_options
        self._user_trace_ready = on_trace_ready
        self._choices = (synchronize, energy, cuda_ranges)
        self._sync: Optional[Callable[[], None]] = None
        self._energy: Optional[Reader] = None
        self._ranges: Any = None
        self._device_index = device_index
        self._clock = clock
        self._overwrite = overwrite
        self.start_iteration = 0 if start_iteration is None else whole(
            start_iteration, "start_iteration")
        self._resume = start_iteration is not None
        self._resolved = False
        self._file: Any = None
        self._header: Optional[list[str]] = None
        self._header_written = False
        self._torch_profiler: Any = None
        self.uses_torch_profiler = False
        self.iteration = self.start_iteration
        self.measured: dict[int, float] = {}
        self.trace_files: list[str] = []
        self.ranks = Ranks()
        # The step in progress and how steps are marked.
        self._mode: Optional[str] = None  # "with" or "bare", once known
        self._pending: Optional[_Pending] = None
        self._in_iteration = False
        self._listed_now = False
        self._ranges_on = False
        self._t0 = 0.0
        self._energy0: Optional[float] = None
        self._tracing: Optional[int] = None
        self._error: Optional[BaseException] = None

    @property
    def iterations(self) -> list[int]:
        return self.listed.iterations

    @property
    def done(self) -> bool:
        """True once every listed iteration has run: a profiling-only run may stop here."""
        return self.iteration > self.listed.iterations[-1]

    @property
    def missed(self) -> list[int]:
        """Listed iterations not measured (so far)."""
        return [i for i in self.listed.iterations if i not in self.measured]

    def _trace_path(self, iteration: int) -> str:
        rank = self.ranks.rank if self.ranks.world > 1 else None
        return os.path.join(self.out_dir, self.listed.trace_name(iteration, rank))

    def _wants_torch_profiler(self) -> bool:
        if self._profiler_choice == "auto":
            # A program that has not imported torch does not run torch ops to profile.
            return "torch" in sys.modules
        return bool(self._profiler_choice)

    # --- opening ------------------------------------------------------------------------

    def __enter__(self) -> "SeqPointProfiler":
        self.ranks = Ranks.current("profile_seqpoints")
        os.makedirs(self.out_dir, exist_ok=True)
        use_profiler = self._wants_torch_profiler()
        error = None
        try:
            if use_profiler and self._user_trace_ready is None and not self._overwrite:
                for iteration in self.listed.iterations:
                    path = self._trace_path(iteration)
                    if iteration >= self.start_iteration and os.path.exists(path):
                        raise LogExistsError(path)
            if self.ranks.writes:
                self._open_measured()
        except Exception as e:  # passed to every rank by agree()
            error = e
        self.ranks.agree(error)
        if use_profiler:
            self._start_torch_profiler()
        self._begin()
        return self

    def _open_measured(self) -> None:
        path = self.measured_path
        mode = "w" if self._overwrite else "x"
        if os.path.exists(path) and not self._overwrite:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = [line for line in f.read(1 << 16).splitlines() if line.strip()]
            header_only = len(lines) <= 1 and (not lines or lines[0].startswith("iteration,"))
            if not self._resume and not header_only:
                raise LogExistsError(path, "pass start_iteration= to continue it, "
                                     "overwrite=True to replace it, or choose another folder")
            header, rows = _read_measured(path) if lines else ([], [])
            late = [int(r["iteration"]) for r in rows
                    if int(r["iteration"]) >= self.start_iteration]
            if late:
                raise ResumeMismatchError(
                    f"{path} already measured iteration {late[0]}, at or after "
                    f"start_iteration={self.start_iteration}; pass the step the run really "
                    "resumes from")
            if rows:
                self._header, self._header_written, mode = header, True, "a"
                for r in rows:
                    self.measured[int(r["iteration"])] = float(r["time_ms"])
            else:
                mode = "w"  # a start that failed before measuring: nothing to keep
        self._file = open(path, mode, encoding="utf-8")

    def _start_torch_profiler(self) -> None:
        import torch
        from torch.profiler import ProfilerActivity, profile

        options = dict(self._profiler_options)
        if "activities" not in options:
            activities = [ProfilerActivity.CPU]
            if torch.cuda.is_available():
                activities.append(ProfilerActivity.CUDA)
            options["activities"] = activities
        prof = profile(
            schedule=SeqPointSchedule(self.listed, start_iteration=self.start_iteration),
            on_trace_ready=self._trace_ready,
            **options,
        )
        if self.ranks.world == 1 and not torch.distributed.is_initialized():
            # torch writes distributedInfo only under torch.distributed; tools that read
            # traces by rank (Holistic Trace Analysis) need it in every trace.
            preset = getattr(prof, "preset_metadata_json", None)
            if preset is not None:
                preset("distributedInfo", json.dumps({"backend": "none", "rank": 0,
                                                      "world_size": 1}))
        prof.__enter__()
        self._torch_profiler = prof
        self.uses_torch_profiler = True
        tracer_opened()

    def _resolve(self) -> None:
        # Decided at the first step, not at construction: the model is often moved to the
        # GPU after the profiler is set up. Once, so every row has the same columns.
        if self._resolved:
            return
        synchronize, energy, ranges = self._choices
        self._sync = resolve_sync(synchronize)
        self._ranges = cuda_ranges() if ranges == "auto" else ranges
        self._energy = resolve_energy(energy, self._device_index)
        self._resolved = True

    # --- the steps ----------------------------------------------------------------------

    def step(self) -> StepHandle:
        """Marks the steps: ``prof.step()`` bare at the end of each, or ``with prof.step():``
        around each. Every iteration goes through it, listed or not."""
        if self._file is None and self.ranks.writes:
            raise RuntimeError("use profile_seqpoints(...) in a with statement")
        self._raise_deferred()
        if self._pending is not None:
            self._end_bare()  # a bare call whose handle is still held somewhere
        if self._mode == "bare":
            self._end()
            self._begin()
            return StepHandle(self, None)
        if self._mode == "with":
            return StepHandle(self, None)
        self._pending = _Pending(self._stamp())
        return StepHandle(self, self._pending)

    def begin_step(self) -> None:
        """For a framework callback: the step that was begun at the end of the last one (or
        at ``__enter__``) starts its clock here, at the step itself."""
        if self._mode == "with":
            raise RuntimeError("begin_step() and `with prof.step():` do not mix")
        self._mode = "bare"
        self._begin()

    def end_step(self) -> None:
        """For a framework callback: the step ends here (as a bare ``prof.step()``)."""
        if self._mode == "with":
            raise RuntimeError("end_step() and `with prof.step():` do not mix")
        self._mode = "bare"
        self._end()
        self._begin()

    def _enter_handle(self, pending: Optional[_Pending]) -> None:
        self._raise_deferred()
        if self._mode == "bare":
            raise RuntimeError("prof.step() was used bare (at the end of each step) and now "
                               "as `with prof.step():`; use one form throughout the run")
        if pending is not None and pending is self._pending:
            self._pending = None
        self._mode = "with"
        self._begin()

    def _exit_handle(self, ok: bool) -> None:
        if ok:
            self._end()
        else:
            self._abandon()  # a failed step is not a measurement

    def _dropped_handle(self, pending: Optional[_Pending]) -> None:
        try:
            if pending is not None and pending is self._pending:
                self._end_bare()
            elif self._mode == "with":
                raise RuntimeError("prof.step() was used as `with prof.step():` and now "
                                   "bare; use one form throughout the run")
        except BaseException as e:  # raised from __del__ it would be lost: kept for later
            self._error = self._error or e

    def _raise_deferred(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _end_bare(self) -> None:
        pending, self._pending = self._pending, None
        self._mode = "bare"
        self._end(pending.stamp if pending is not None else None)
        self._begin()

    def _stamp(self) -> Optional[Stamp]:
        """Clock and energy now (after the GPU's queued work), when a listed step is running."""
        if not (self._in_iteration and self._listed_now):
            return None
        if self._sync:
            self._sync()
        energy = self._energy() if self._energy else None
        return self._clock(), energy

    def _begin(self) -> None:
        self._resolve()
        if self._in_iteration:
            # The with form's first step: the iteration was begun at __enter__ (for the
            # bare form); its clock starts again here, at the step itself.
            if self._listed_now:
                if self._sync:
                    self._sync()
                self._energy0 = self._energy() if self._energy else None
                self._t0 = self._clock()
            return
        self._in_iteration = True
        self._listed_now = self.iteration in self.listed.seqpoint_of
        if not self._listed_now:
            return
        if self._sync:
            self._sync()
        if self._ranges:
            self._ranges.start(self.listed.range_name(self.iteration))
            self._ranges_on = True
        self._energy0 = self._energy() if self._energy else None
        self._t0 = self._clock()

    def _stop_ranges(self) -> None:
        if self._ranges_on:
            self._ranges.stop()
            self._ranges_on = False

    def _abandon(self) -> None:
        self._stop_ranges()
        self._in_iteration = False

    def _end(self, stamp: Optional[Stamp] = None) -> None:
        if not self._in_iteration:
            raise RuntimeError("a step ended that had not begun; mark each step once")
        iteration = self.iteration
        measurement = None
        if self._listed_now:
            if stamp is None:
                stamp = self._stamp()
            assert stamp is not None
            t1, energy1 = stamp
            energy = None
            if energy1 is not None and self._energy0 is not None:
                energy = energy1 - self._energy0
            measurement = ((t1 - self._t0) * 1000.0, energy)
            self._stop_ranges()
        if self._torch_profiler is not None:
            # Ends the step for torch.profiler; after a listed iteration its on_trace_ready
            # writes the trace. Its warning that each cycle's events are cleared describes
            # exactly what is wanted here (one trace per iteration): not shown.
            self._tracing = iteration if measurement is not None else None
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*clears events at the end of each cycle")
                self._torch_profiler.step()
            self._tracing = None
        if measurement is not None:
            self._write_row(iteration, *measurement)
        self.iteration += 1
        self._in_iteration = False

    def _trace_ready(self, prof: Any) -> None:
        """torch.profiler's on_trace_ready: the trace of the listed iteration just run."""
        iteration = self._tracing
        if iteration is None:
            return  # a step that failed, or a run that stopped inside a listed step
        if self._user_trace_ready is not None:
            self._user_trace_ready(prof)
            return
        path = self._trace_path(iteration)
        temporary = os.path.join(self.out_dir, f".{os.path.basename(path)}.partial")
        prof.export_chrome_trace(temporary)
        os.replace(temporary, path)
        self.trace_files.append(path)

    def _write_header(self) -> None:
        if self._header_written or self._file is None:
            return
        columns = ["iteration", "seqpoint", "time_ms"]
        if self._energy:
            columns.append("energy_j")
        columns.append("traced")
        self._file.write(",".join(columns) + "\n")
        self._file.flush()
        self._header, self._header_written = columns, True

    def _write_row(self, iteration: int, elapsed_ms: float, energy: Optional[float]) -> None:
        # The job's step: as long as its slowest rank, its energy every rank's.
        measured = self.ranks.gather((elapsed_ms, energy))
        self.measured[iteration] = elapsed_ms
        if measured is None or self._file is None:
            return
        elapsed_ms = max(ms for ms, _ in measured)
        self.measured[iteration] = elapsed_ms
        self._write_header()
        assert self._header is not None
        fields = [str(iteration), str(self.listed.seqpoint_of[iteration]), f"{elapsed_ms:.4f}"]
        if "energy_j" in self._header:
            if any(e is None for _, e in measured):
                raise ValueError(f"{self.measured_path} has energy_j, but this run measures "
                                 "no energy; resume with the same energy= setting")
            fields.append(f"{sum(e for _, e in measured if e is not None):.6f}")
        if "traced" in self._header:
            # The step ran under torch.profiler (recording it costs a few percent of its
            # time): `seqpoint project` says so. A file begun without the column (an older
            # run resumed) keeps its columns.
            fields.append("1" if self.uses_torch_profiler else "0")
        self._file.write(",".join(fields) + "\n")
        self._file.flush()

    # --- closing ------------------------------------------------------------------------

    def close(self, failed: bool = False) -> None:
        if self._pending is not None and not failed:
            self._end_bare()
        self._pending = None
        self._abandon()  # the step begun by the last bare call, which never ran
        if self._torch_profiler is not None:
            profiler, self._torch_profiler = self._torch_profiler, None
            tracer_closed()
            profiler.__exit__(None, None, None)
        if self._file is not None and not self._file.closed:
            self._write_header()
            self._file.close()
        if not failed:
            self._raise_deferred()
        if not failed and self.missed:
            shown = ", ".join(str(i) for i in self.missed[:10])
            more = f" and {len(self.missed) - 10} more" if len(self.missed) > 10 else ""
            warnings.warn(
                f"{len(self.missed)} listed iteration(s) were not reached (the run had "
                f"{self.iteration}): {shown}{more}; `seqpoint project` will name them missing",
                stacklevel=3,
            )

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> Literal[False]:
        self.close(failed=exc_type is not None)
        return False


def profile_seqpoints(seqpoints: Document, out_dir: "os.PathLike[str] | str", warmup: int = 1,
                      profiler: Any = "auto", **options: Any) -> SeqPointProfiler:
    """Profile exactly the iterations ``seqpoints`` (a seqpoint/1 file) lists, nothing else.

    A context manager; mark every training step, torch.profiler's way or seqpoint's::

        with profile_seqpoints("seqpoints.json", "profiles/") as prof:
            for batch in loader:
                train_step(batch)
                prof.step()            # bare, at the end of each step
            # or:  with prof.step(): train_step(batch)
                if prof.done:          # optional: every listed iteration has run
                    break

    Writes ``OUT_DIR/measured.csv`` (``iteration,seqpoint,time_ms``, ``energy_j`` with NVML,
    then ``traced``), one row per listed iteration as it runs, which ``seqpoint project
    seqpoints.json OUT_DIR/measured.csv`` reads as it is; ``time_ms`` is the step's own wall
    time (synchronised on CUDA), and ``traced`` is 1 when torch.profiler recorded the step:
    its time then includes the profiler's overhead, which ``seqpoint project`` notes (the
    projection reads high by it). For untraced times of the same iterations, run with
    ``profiler=False`` or measure them with ``replay`` (untraced repetitions, traced 0). With torch.profiler (``profiler="auto"``: when the program has
    imported torch; ``True``/``False`` to choose) it runs with ``SeqPointSchedule`` and
    writes one Chrome trace per listed iteration,
    ``OUT_DIR/seqpoint-<id>-iter<n>.pt.trace.json`` (``-rank<r>`` under torchrun), each
    with ``distributedInfo``; ``on_trace_ready=`` (e.g. ``tensorboard_trace_handler``) is
    called instead, once per listed iteration, and then seqpoint writes no trace itself.
    Other keyword arguments go to ``torch.profiler.profile`` (e.g. ``record_shapes=True``).
    Without it, the same object only times the listed iterations. On CUDA each listed
    iteration is an NVTX range ``seqpoint <id> iter <n>`` inside
    ``torch.cuda.profiler.start()``/``stop()`` (``cuda_ranges=None`` turns that off).

    ``start_iteration=N``: a run resumed at step N (``measured.csv`` is continued; rows at or
    after N are an error). Existing outputs are never overwritten unless
    ``overwrite=True``. Options as for ``TimedLog``: ``synchronize``, ``energy``,
    ``device_index``, ``clock``. Under torchrun every rank traces its own step and rank 0
    writes the job's rows (the slowest rank's time).
    """
    return SeqPointProfiler(seqpoints, out_dir, warmup=warmup, profiler=profiler, **options)
