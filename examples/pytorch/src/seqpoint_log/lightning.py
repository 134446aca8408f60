"""Lightning: ``seqpoint_log.lightning.SeqPointCallback`` logs each optimizer step's lengths
and time, and, given a SeqPoints file, profiles exactly the listed steps with torch.profiler
itself (use it instead of Lightning's ``PyTorchProfiler``, whose schedule wrapper stops
after the first recorded step)::

    from seqpoint_log.lightning import SeqPointCallback
    trainer = L.Trainer(..., callbacks=[SeqPointCallback("run.jsonl")])
    # later: SeqPointCallback(seqpoints="seqpoints.json", out_dir="profiles")

One optimizer step is one iteration (``accumulate_grad_batches`` batches, keyed as
``merge_micro_batches`` says), numbered by ``trainer.global_step``: a resumed run continues
its log. Importing this module imports no lightning; the class is made on first use.
"""

from __future__ import annotations

from typing import Any

from ._lazy import lazy_attribute

__all__ = ["SeqPointCallback"]


def _make() -> Any:
    from lightning.pytorch import Callback

    from .frameworks import StepRecorder

    class SeqPointCallback(Callback):  # type: ignore[misc]
        """Logs (``log_path``) and/or profiles (``seqpoints``, ``out_dir``) the optimizer
        steps; ``lengths(batch)`` reads a batch's columns (default ``describe_batch``);
        other options as for ``profile_seqpoints``."""

        def __init__(self, log_path: Any = None, **options: Any) -> None:
            self.recorder = StepRecorder(log_path, **options)
            self._step_at = -1

        def on_train_start(self, trainer: Any, pl_module: Any) -> None:
            from lightning.pytorch.profilers import PyTorchProfiler

            if self.recorder.seqpoints is not None and isinstance(trainer.profiler,
                                                                   PyTorchProfiler):
                raise RuntimeError(
                    "SeqPointCallback(seqpoints=...) runs torch.profiler itself; drop the "
                    "Trainer's PyTorchProfiler (its schedule wrapper stops after the first "
                    "recorded step, so it would record one listed step)")
            self.recorder.start(trainer.global_step)

        def on_train_batch_start(self, trainer: Any, pl_module: Any, batch: Any,
                                 batch_idx: int) -> None:
            if not self.recorder.in_step:
                self._step_at = trainer.global_step
                self.recorder.begin(trainer.current_epoch, trainer.global_step)
            self.recorder.micro_batch(batch)

        def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any,
                               batch_idx: int) -> None:
            if trainer.global_step != self._step_at:  # the optimizer stepped
                self.recorder.end()

        def on_train_end(self, trainer: Any, pl_module: Any) -> None:
            self.recorder.close()

        def on_exception(self, trainer: Any, pl_module: Any, exception: BaseException) -> None:
            self.recorder.close(failed=True)

    return SeqPointCallback


__getattr__ = lazy_attribute(__name__, "SeqPointCallback", _make)
