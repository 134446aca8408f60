"""What the Hugging Face and Lightning callbacks share: one optimizer step is one iteration,
its micro-batches seen as they run, timed into the log and measured when it is listed."""

from __future__ import annotations

import os
from typing import Any, Callable, Mapping, Optional

from .lengths import describe_batch
from .plan import Document
from .profile import SeqPointProfiler
from .timed import TimedLog, TimedStep


class StepRecorder:
    """Opens the timed log and the profiler at the start of training, and for each optimizer
    step: ``begin`` (before its first micro-batch), ``micro_batch`` (each batch it takes),
    ``end`` (after the optimizer has stepped)."""

    def __init__(
        self,
        log_path: "os.PathLike[str] | str | None" = None,
        seqpoints: Optional[Document] = None,
        out_dir: "os.PathLike[str] | str" = "profiles",
        lengths: Callable[[Any], Mapping[str, Any]] = describe_batch,
        overwrite: bool = False,
        warmup: int = 1,
        **profiler_options: Any,
    ) -> None:
        if log_path is None and seqpoints is None:
            raise ValueError("give log_path= (time every step), seqpoints= (measure the "
                             "listed steps), or both")
        self.log_path, self.seqpoints, self.out_dir = log_path, seqpoints, out_dir
        self.lengths, self.overwrite, self.warmup = lengths, overwrite, warmup
        self.profiler_options = profiler_options
        self.log: Optional[TimedLog] = None
        self.profiler: Optional[SeqPointProfiler] = None
        self._step: Optional[TimedStep] = None
        self.in_step = False
        self.iteration = 0

    def start(self, start_iteration: int) -> None:
        """Training starts (or resumes) at optimizer step ``start_iteration``."""
        self.iteration = start_iteration
        resume = start_iteration if start_iteration > 0 else None
        if self.log_path is not None:
            self.log = TimedLog(self.log_path, overwrite=self.overwrite, start_iteration=resume)
        if self.seqpoints is not None:
            self.profiler = SeqPointProfiler(
                self.seqpoints, self.out_dir, warmup=self.warmup, overwrite=self.overwrite,
                start_iteration=resume, **self.profiler_options)
            self.profiler.__enter__()

    def begin(self, epoch: Optional[int], iteration: int) -> None:
        if iteration != self.iteration:
            raise RuntimeError(f"the trainer is at optimizer step {iteration}, but the log at "
                               f"{self.iteration}: steps were skipped or repeated")
        self.in_step = True
        if self.profiler is not None:
            self.profiler.begin_step()
        if self.log is not None:
            self._step = self.log.step(epoch=epoch, micro_batches=[])
            self._step.__enter__()

    def micro_batch(self, batch: Any) -> None:
        if self._step is not None:
            self._step.micro_batch(**self.lengths(batch))

    def end(self) -> None:
        step, self._step, self.in_step = self._step, None, False
        if step is not None:
            step.__exit__(None, None, None)
        if self.profiler is not None:
            self.profiler.end_step()
        self.iteration += 1

    def close(self, failed: bool = False) -> None:
        self._step, self.in_step = None, False
        if self.profiler is not None:
            profiler, self.profiler = self.profiler, None
            profiler.close(failed=failed)
        if self.log is not None:
            self.log.close()
            self.log = None
