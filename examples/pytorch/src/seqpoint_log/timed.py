"""The two ways to log a run: a dry pass over the loader (lengths only), and the timed log
that wraps each training step (lengths, ``time_ms``, ``energy_j``)."""

from __future__ import annotations

import os
import time
import warnings
from typing import Any, Callable, Iterable, Mapping, Optional, Literal

from .devices import Reader, resolve_energy, resolve_sync
from .lengths import describe_batch, merge_micro_batches, whole
from .ranks import Ranks, merge_rank_rows
from .tracing import profiler_recording, tracer_open
from .writer import RunLogWriter

Lengths = Callable[[Any], Mapping[str, Any]]


def _open_writer(ranks: Ranks, path: Any, overwrite: bool,
                 start_iteration: Optional[int]) -> Optional[RunLogWriter]:
    """The job's writer on rank 0 (None elsewhere); a failure to open it fails every rank."""
    writer, error = None, None
    if ranks.writes:
        try:
            writer = RunLogWriter(path, overwrite=overwrite, start_iteration=start_iteration)
        except Exception as e:  # passed to every rank by agree()
            error = e
    ranks.agree(error)
    return writer


def set_epoch(loader: Any, epoch: int) -> int:
    """Call ``set_epoch(epoch)`` on the loader and its samplers that have one (a
    ``DistributedSampler`` shuffles by epoch), as a training loop does; how many were called."""
    seen: set[int] = set()
    candidates = [loader, getattr(loader, "sampler", None), getattr(loader, "batch_sampler", None)]
    batch_sampler = candidates[-1]
    candidates.append(getattr(batch_sampler, "sampler", None))
    called = 0
    for candidate in candidates:
        method = getattr(candidate, "set_epoch", None)
        if candidate is None or id(candidate) in seen or not callable(method):
            continue
        seen.add(id(candidate))
        method(epoch)
        called += 1
    return called


def dry_pass(
    loader: Iterable[Any],
    path: "os.PathLike[str] | str",
    epochs: int = 1,
    lengths: Lengths = describe_batch,
    overwrite: bool = False,
    accumulate: int = 1,
) -> int:
    """Walk ``loader`` ``epochs`` times without training; log each iteration's lengths.

    ``lengths(batch)`` returns the length columns (default: ``describe_batch``). Before each
    epoch the loader's samplers get ``set_epoch(epoch)`` as in training (a
    ``DistributedSampler`` reshuffles by it). ``accumulate=K``: each optimizer step takes K
    batches (gradient accumulation; the last step of an epoch takes what is left), logged as
    one iteration keyed by ``merge_micro_batches``. Under torchrun every rank walks its own
    shard and rank 0 writes the job's rows (see ``merge_rank_rows``). Returns the number of
    iterations.

    The iteration numbers match a later training run only if the loader yields the same
    batches in the same order: seed its sampler (``DataLoader(..., generator=g)`` with
    ``g.manual_seed(s)`` before each use), or log in timed mode during the real run.
    """
    accumulate = whole(accumulate, "accumulate")
    if accumulate < 1:
        raise ValueError("accumulate must be at least 1 batch per optimizer step")
    ranks = Ranks.current("dry_pass")
    writer = _open_writer(ranks, path, overwrite, None)
    iteration = 0

    def emit(epoch: int, group: list[Mapping[str, Any]]) -> None:
        nonlocal iteration
        columns = dict(group[0]) if accumulate == 1 else merge_micro_batches(group)
        rows = ranks.gather(columns)
        if writer is not None and rows is not None:
            writer.write(iteration, epoch=epoch, **merge_rank_rows(rows))
        iteration += 1

    try:
        for epoch in range(epochs):
            set_epoch(loader, epoch)
            group: list[Mapping[str, Any]] = []
            for batch in loader:
                group.append(lengths(batch))
                if len(group) == accumulate:
                    emit(epoch, group)
                    group = []
            if group:
                emit(epoch, group)
    finally:
        if writer is not None:
            writer.close()
    return iteration


class TimedStep:
    """One training step being timed (see ``TimedLog.step``)."""

    def __init__(self, log: "TimedLog", epoch: Optional[int], columns: Mapping[str, Any],
                 micro_batches: Optional[Iterable[Mapping[str, Any]]]) -> None:
        self.log, self.epoch = log, epoch
        self.columns = dict(columns)
        self.micro: Optional[list[Mapping[str, Any]]] = (
            None if micro_batches is None else list(micro_batches))
        if self.micro is not None and self.columns:
            raise ValueError("give a step its lengths or its micro_batches, not both")
        self.t0 = 0.0
        self.energy0: Optional[float] = None
        self.recorded = False

    def micro_batch(self, **columns: Any) -> None:
        """Add one micro-batch of this optimizer step (gradient accumulation)."""
        if self.columns:
            raise ValueError("this step was given its lengths already; give micro-batches "
                             "instead of lengths, not both")
        if self.micro is None:
            self.micro = []
        self.micro.append(columns)

    def row(self) -> dict[str, Any]:
        """The step's length columns: its own, or its micro-batches' merged."""
        if self.micro is not None:
            return merge_micro_batches(self.micro)
        if not self.columns:
            raise ValueError("a step needs its lengths: log.step(seq_len=..., batch_size=...) "
                             "or step.micro_batch(...) for each micro-batch")
        return dict(self.columns)

    def __enter__(self) -> "TimedStep":
        log = self.log
        if log._sync:
            log._sync()
        self.energy0 = log._energy() if log._energy else None
        self.recorded = profiler_recording()
        self.t0 = log._clock()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> Literal[False]:
        log = self.log
        if exc_type is not None:
            return False  # a failed step is not a measurement
        if log._sync:
            log._sync()
        elapsed_ms = (log._clock() - self.t0) * 1000.0
        row = self.row()
        row["time_ms"] = round(elapsed_ms, 4)
        if self.energy0 is not None and log._energy is not None:
            row["energy_j"] = round(log._energy() - self.energy0, 6)
        log._note_traced(row, self.recorded or profiler_recording())
        log._record(self.epoch, row)
        return False


class TimedLog:
    """Times each training step and writes lengths, ``time_ms`` and, if known, ``energy_j``.

    ``synchronize``: a function waiting for the GPU, ``"auto"`` (``torch.cuda.synchronize``
    when the program uses CUDA) or None. ``energy``: a function returning a counter in
    joules, ``"auto"`` (NVML through pynvml, when available) or None. ``clock`` returns
    seconds. The automatic choices are made at the first step, once, so every line has the
    same columns. ``device_index`` is NVML's index of the GPU (default: the current CUDA
    device, which differs from NVML's numbering when CUDA_VISIBLE_DEVICES reorders GPUs).

    A log whose first step starts inside ``profile_seqpoints`` with torch.profiler (or while
    torch.profiler records) has a ``traced`` column: 1 where torch.profiler recorded the
    step, whose ``time_ms`` then includes the profiler's overhead, which ``seqpoint project``
    notes when it reads this log as the measurements. Another log warns once at a step
    recorded by a profiler opened after its first step (its rows cannot say which).

    ``start_iteration=N``: a run resumed at step N; the log's iterations continue from N
    (an existing log must end at N-1, and is appended to). Under torchrun (created after
    ``init_process_group``) every rank times its step and rank 0 writes one row per step.
    """

    def __init__(
        self,
        path: "os.PathLike[str] | str",
        synchronize: Any = "auto",
        energy: Any = "auto",
        clock: Callable[[], float] = time.perf_counter,
        device_index: Optional[int] = None,
        overwrite: bool = False,
        start_iteration: Optional[int] = None,
    ) -> None:
        self._sync_choice, self._energy_choice = synchronize, energy
        self._sync: Optional[Callable[[], None]] = None
        self._energy: Optional[Reader] = None
        self._resolved = False
        self._device_index = device_index
        self._clock = clock
        self.ranks = Ranks.current("TimedLog")
        self.writer = _open_writer(self.ranks, path, overwrite, start_iteration)
        self.iteration = 0 if start_iteration is None else whole(start_iteration,
                                                                   "start_iteration")
        self._traced_column = False
        self._warned_traced = False

    def _resolve(self) -> None:
        # Decided at the first step, not at construction: the model is often moved to the
        # GPU after the log is opened.
        if self._resolved:
            return
        self._sync = resolve_sync(self._sync_choice)
        self._energy = resolve_energy(self._energy_choice, self._device_index)
        self._traced_column = tracer_open() or profiler_recording()
        self._resolved = True

    def _note_traced(self, row: dict[str, Any], recorded: bool) -> None:
        """The step's ``traced`` column, when the log has one; else a warning, once, that a
        recorded step's time carries the profiler's overhead unmarked."""
        if self._traced_column:
            row["traced"] = 1 if recorded else 0
        elif recorded and not self._warned_traced:
            self._warned_traced = True
            warnings.warn(
                f"TimedLog: iteration {self.iteration} ran while torch.profiler recorded it, "
                "so its time_ms includes the profiler's overhead, and this log has no "
                "'traced' column to say so (it had none at its first step); open "
                "profile_seqpoints before the log's first step to mark such rows",
                stacklevel=3)

    @property
    def measures_energy(self) -> bool:
        self._resolve()
        return self._energy is not None

    def step(self, epoch: Optional[int] = None,
             micro_batches: Optional[Iterable[Mapping[str, Any]]] = None,
             **lengths: Any) -> TimedStep:
        """A context manager around one training (optimizer) step; the lengths name the
        batch. With gradient accumulation, pass ``micro_batches=[describe_batch(mb), ...]``
        or call ``.micro_batch(**describe_batch(mb))`` on the step for each: the step is one
        iteration keyed by ``merge_micro_batches``."""
        self._resolve()
        return TimedStep(self, epoch, lengths, micro_batches)

    def _record(self, epoch: Optional[int], row: dict[str, Any]) -> None:
        rows = self.ranks.gather(row)
        if self.writer is not None and rows is not None:
            merged = merge_rank_rows(rows)  # traced: 1 when any rank's step was recorded
            columns = self.writer.columns
            if columns is not None and ("traced" in columns) != ("traced" in merged):
                # A resumed log keeps its columns: a log begun without the column stays
                # without it, one begun with it marks this run's steps 0.
                if "traced" in columns:
                    merged["traced"] = 0
                else:
                    del merged["traced"]
            self.writer.write(self.iteration, epoch=epoch, **merged)
        self.iteration += 1

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()

    def __enter__(self) -> "TimedLog":
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self.close()
        return False
