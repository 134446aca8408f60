"""Which iterations to profile: the seqpoint/1 document `seqpoint select -o` writes, read as
a list of iterations (each with its SeqPoint) and as a torch.profiler schedule."""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Mapping, Optional, Union

from .lengths import whole

SEQPOINTS_SCHEMA = "seqpoint/1"

Document = Union[Mapping[str, Any], "os.PathLike[str]", str]


def read_seqpoints_document(path: "os.PathLike[str] | str") -> dict[str, Any]:
    """A seqpoint/1 document as a dict; errors name the file and what was expected."""
    path = os.fspath(path)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(
            f"{path}:{e.lineno}:{e.colno}: not JSON ({e.msg}); expected the SeqPoints file "
            "written by `seqpoint select -o seqpoints.json`"
        ) from None
    schema = doc.get("schema") if isinstance(doc, dict) else None
    if schema != SEQPOINTS_SCHEMA:
        raise ValueError(
            f"{path}: schema {schema!r}; expected {SEQPOINTS_SCHEMA!r} (the file "
            "`seqpoint select -o seqpoints.json` writes)"
        )
    result: dict[str, Any] = doc
    return result


class ProfileList:
    """The iterations a seqpoint/1 document asks to profile, and the SeqPoint of each.

    The plan's ``profile`` list when the document has one (several iterations per SeqPoint),
    else each SeqPoint's own iteration. Iterations are numbered as the logger writes them:
    from 0, counting across epochs (one optimizer step each). ``warmup`` steps before each
    listed iteration are marked for warm-up (a profiler's start-up cost then falls outside
    the measured step). Plain Python: no torch needed.
    """

    def __init__(self, seqpoints: Document, warmup: int = 1) -> None:
        doc = seqpoints if isinstance(seqpoints, Mapping) else read_seqpoints_document(seqpoints)
        source = doc.get("plan", {}) or {}
        rows = source.get("profile")
        if rows:
            pairs = [(row["iteration"], row["seqpoint"]) for row in rows]
        else:
            pairs = [(sp["iteration"], sp["id"]) for sp in doc.get("seqpoints", [])]
        if not pairs:
            raise ValueError("the SeqPoints file lists no iteration to profile")
        self.seqpoint_of: dict[int, int] = {}
        for iteration, seqpoint in pairs:
            iteration = whole(iteration, "an iteration to profile")
            seqpoint = whole(seqpoint, "a SeqPoint id")
            known = self.seqpoint_of.setdefault(iteration, seqpoint)
            if known != seqpoint:
                raise ValueError(
                    f"iteration {iteration} is listed for SeqPoints {known} and {seqpoint}"
                )
        self.iterations = sorted(self.seqpoint_of)
        self.warmup = whole(warmup, "warmup")
        self._warmup_steps = {
            step
            for iteration in self.iterations
            for step in range(max(0, iteration - self.warmup), iteration)
        } - set(self.iterations)

    def action(self, step: int) -> Optional[str]:
        """``"record"`` for a listed iteration, ``"warmup"`` just before one, else None."""
        if step in self.seqpoint_of:
            return "record"
        if step in self._warmup_steps:
            return "warmup"
        return None

    def trace_name(self, iteration: int, rank: Optional[int] = None) -> str:
        """``seqpoint-<id>-iter<n>.pt.trace.json`` (``-rank<r>`` before the suffix in a job
        of several ranks): the suffix TensorBoard and Holistic Trace Analysis look for."""
        ranked = "" if rank is None else f"-rank{rank}"
        return f"seqpoint-{self.seqpoint_of[iteration]}-iter{iteration}{ranked}.pt.trace.json"

    def range_name(self, iteration: int) -> str:
        return f"seqpoint {self.seqpoint_of[iteration]} iter {iteration}"


class SeqPointSchedule:
    """A torch.profiler schedule that records exactly the listed iterations.

    ``torch.profiler.profile(schedule=SeqPointSchedule("seqpoints.json", warmup=1), ...)``:
    ``RECORD_AND_SAVE`` at each listed iteration (so ``on_trace_ready`` runs once per
    iteration), ``WARMUP`` for the ``warmup`` steps before each, ``NONE`` otherwise. The
    profiler's step number plus ``start_iteration`` is the iteration: call ``prof.step()``
    once per iteration from the run's first (the resumed run's first with
    ``start_iteration``). ``iterations`` is the sorted list. Building one imports torch.
    """

    def __init__(self, seqpoints: "Document | ProfileList", warmup: int = 1,
                 start_iteration: int = 0) -> None:
        from torch.profiler import ProfilerAction

        if isinstance(seqpoints, ProfileList):
            self.listed = seqpoints
        else:
            self.listed = ProfileList(seqpoints, warmup)
        self.start_iteration = whole(start_iteration, "start_iteration")
        self._actions = {
            "record": ProfilerAction.RECORD_AND_SAVE,
            "warmup": ProfilerAction.WARMUP,
            None: ProfilerAction.NONE,
        }

    @property
    def iterations(self) -> list[int]:
        return self.listed.iterations

    def __call__(self, step: int) -> Any:
        _refuse_lightning_profiler(sys._getframe(1))
        return self._actions[self.listed.action(step + self.start_iteration)]


# Lightning's PyTorchProfiler, whose ScheduleWrapper stops asking the schedule after its
# first RECORD_AND_SAVE and counts training_step calls rather than optimizer steps.
_LIGHTNING_PROFILERS = ("lightning.pytorch.profilers", "pytorch_lightning.profilers")


def _refuse_lightning_profiler(caller: Any) -> None:
    """An error, where it would otherwise record one listed iteration and say nothing, when
    the schedule is asked by Lightning's PyTorchProfiler (it asks at construction)."""
    owner = caller.f_locals.get("self") if caller is not None else None
    if owner is not None and type(owner).__module__.startswith(_LIGHTNING_PROFILERS):
        raise TypeError(
            "SeqPointSchedule inside Lightning's PyTorchProfiler would record only the first "
            "listed iteration (its schedule wrapper stops after the first recorded step, and "
            "counts training_step calls, not optimizer steps); use "
            "seqpoint_log.lightning.SeqPointCallback(seqpoints=...) instead, which profiles "
            "every listed step with torch.profiler itself")
