"""Hugging Face ``Trainer``: ``seqpoint_log.hf.SeqPointCallback`` logs each optimizer step's
lengths and time, and, given a SeqPoints file, profiles exactly the listed steps::

    from seqpoint_log.hf import SeqPointCallback
    trainer = Trainer(..., callbacks=[SeqPointCallback("run.jsonl")])
    # later: SeqPointCallback(seqpoints="seqpoints.json", out_dir="profiles")

A ``TrainerCallback`` never sees the batch, so the callback reads each micro-batch's
``input_ids`` from a forward pre-hook on the model (training forwards only). One optimizer
step is one iteration (``gradient_accumulation_steps`` micro-batches, keyed as
``merge_micro_batches`` says), numbered by ``state.global_step``: a resumed run continues
its log. Importing this module imports no transformers; the class is made on first use.
"""

from __future__ import annotations

from typing import Any

from ._lazy import lazy_attribute

__all__ = ["SeqPointCallback"]


def _make() -> Any:
    from transformers import TrainerCallback

    from .frameworks import StepRecorder

    class SeqPointCallback(TrainerCallback):  # type: ignore[misc]
        """Logs (``log_path``) and/or profiles (``seqpoints``, ``out_dir``) the optimizer
        steps; ``lengths(batch)`` reads a micro-batch's columns (default
        ``describe_batch``, which reads ``input_ids``); other options as for
        ``profile_seqpoints``."""

        def __init__(self, log_path: Any = None, **options: Any) -> None:
            self.recorder = StepRecorder(log_path, **options)
            self._hook: Any = None

        def _forward(self, module: Any, args: Any, kwargs: Any) -> None:
            if module.training and self.recorder.in_step:
                self.recorder.micro_batch(kwargs if kwargs or not args else args[0])

        def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None,
                           **kwargs: Any) -> None:
            if model is None:
                raise RuntimeError("SeqPointCallback needs the model (the Trainer passes it)")
            self.recorder.start(state.global_step)
            self._hook = model.register_forward_pre_hook(self._forward, with_kwargs=True)

        def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.recorder.begin(int(state.epoch or 0), state.global_step)

        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.recorder.end()

        def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if self._hook is not None:
                self._hook.remove()
                self._hook = None
            self.recorder.close()

    return SeqPointCallback


__getattr__ = lazy_attribute(__name__, "SeqPointCallback", _make)
