"""Write the per-iteration run log that ``seqpoint`` reads, from a PyTorch training loop.

Drop this one file next to your training script. It has two modes:

1. **Dry pass** (no training, no profiling): walk the DataLoader once and write every
   iteration's padded length(s) and batch size. This is all SeqPoint needs to choose bins
   and representative iterations before anything is measured::

       import seqpoint_log
       seqpoint_log.dry_pass(loader, "lengths.jsonl", epochs=3)

2. **Timed mode**: wrap the training step. Each step's wall time is recorded (with
   ``torch.cuda.synchronize()`` before and after when the model runs on a GPU, so queued
   kernels are counted in the step that launched them) and, when ``pynvml`` is installed and
   the GPU exposes it, the energy the GPU used during the step (NVML's total-energy counter,
   read before and after)::

       with seqpoint_log.TimedLog("run.jsonl") as log:
           for epoch in range(epochs):
               for batch in loader:
                   with log.step(epoch=epoch, **seqpoint_log.describe_batch(batch)):
                       train_step(batch)

Output: JSON Lines, one object per iteration, every line with the same columns::

    {"iteration": 0, "epoch": 0, "seq_len": 412, "batch_size": 16, "time_ms": 81.37}

``iteration`` counts from 0 across epochs; ``seq_len`` is the padded length of the batch
(``src_len`` and ``tgt_len`` for translation); ``time_ms`` and ``energy_j`` appear in timed
mode. Then: ``seqpoint select run.jsonl``.

The module imports torch only when it needs it (to synchronise a GPU), so it works with plain
Python lists, and its own tests need no torch.
"""

import json
import math
import os
import sys
import time

__all__ = [
    "LogExistsError",
    "RunLogWriter",
    "TimedLog",
    "describe_batch",
    "dry_pass",
    "nvml_energy_reader",
    "padded_length",
]


def _length(value, name):
    """A length as a non-negative int; torch/numpy integer scalars are accepted."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a whole number of steps, got {value!r}")
    if hasattr(value, "item") and not isinstance(value, (int, float)):
        value = value.item()
    if isinstance(value, float):
        if not value.is_integer():
            raise ValueError(f"{name} must be a whole number of steps, got {value!r}")
        value = int(value)
    if not isinstance(value, int):
        raise ValueError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if value < 0:
        raise ValueError(f"{name} must not be negative, got {value}")
    return value


def padded_length(lengths, multiple_of=1):
    """The length a batch is padded to: its longest sequence, rounded up to a multiple.

    ``lengths`` are the unpadded lengths of the batch's sequences. ``multiple_of`` mirrors
    collators that pad to a multiple of 8 (tensor cores) or to a bucket width.
    """
    lengths = [_length(n, "a sequence length") for n in lengths]
    if not lengths:
        raise ValueError("an empty batch has no padded length")
    multiple_of = _length(multiple_of, "multiple_of")
    if multiple_of < 1:
        raise ValueError("multiple_of must be at least 1")
    longest = max(lengths)
    return int(math.ceil(longest / multiple_of)) * multiple_of


def _is_sequence_of_sequences(batch):
    # Tuples are left out on purpose: a list of (sequence, label) samples would otherwise
    # read as sequences of length 2.
    return (
        isinstance(batch, list)
        and len(batch) > 0
        and all(isinstance(s, (list, str, bytes)) for s in batch)
    )


def describe_batch(batch, seq_dim=1, batch_dim=0, multiple_of=1):
    """Padded length and batch size of a batch, as ``{"seq_len": T, "batch_size": B}``.

    Understands the common shapes:

    - a tensor (anything with ``.shape``), ``seq_dim`` being its time axis (1 for
      batch-first ``(B, T, ...)``, 0 for ``(T, B, ...)`` with ``batch_dim=1``);
    - a list of unpadded sequences (lists), padded here to the longest (``multiple_of``);
    - a dict (Hugging Face style): its ``input_ids``, else its first tensor value;
    - a tuple or list ``(inputs, targets, ...)``: its first element.

    For translation, or anything else, build the dict yourself, e.g.
    ``{"src_len": src.shape[1], "tgt_len": tgt.shape[1], "batch_size": src.shape[0]}``.
    """
    if hasattr(batch, "shape"):
        shape = tuple(batch.shape)
        if len(shape) <= max(seq_dim, batch_dim):
            raise ValueError(
                f"a batch of shape {shape} has no axis {max(seq_dim, batch_dim)}; "
                "pass seq_dim= and batch_dim= to describe_batch"
            )
        return {
            "seq_len": _length(shape[seq_dim], "seq_len"),
            "batch_size": _length(shape[batch_dim], "batch_size"),
        }
    if _is_sequence_of_sequences(batch):
        return {
            "seq_len": padded_length([len(s) for s in batch], multiple_of),
            "batch_size": len(batch),
        }
    if isinstance(batch, dict):
        if "input_ids" in batch:
            return describe_batch(batch["input_ids"], seq_dim, batch_dim, multiple_of)
        for value in batch.values():
            if hasattr(value, "shape"):
                return describe_batch(value, seq_dim, batch_dim, multiple_of)
    if isinstance(batch, (list, tuple)) and batch:
        return describe_batch(batch[0], seq_dim, batch_dim, multiple_of)
    raise ValueError(
        f"cannot tell the padded length of a {type(batch).__name__} batch; pass lengths= "
        "a function returning e.g. {'seq_len': ..., 'batch_size': ...}"
    )


class LogExistsError(FileExistsError):
    """The log file exists and overwriting it was not asked for."""

    def __init__(self, path):
        super().__init__(f"{path} exists; pass overwrite=True or choose another path")
        self.path = path


class RunLogWriter:
    """Writes one JSON object per iteration; every line has the columns of the first.

    ``seqpoint`` takes its columns from the first line, so a later line with other columns
    is refused here rather than silently misread there. Each line is flushed as it is
    written: a run that crashes keeps the iterations it logged.
    """

    def __init__(self, path, overwrite=False):
        self.path = os.fspath(path)
        if not overwrite and os.path.exists(self.path):
            raise LogExistsError(self.path)
        self._file = open(self.path, "w", encoding="utf-8")
        self._columns = None
        self.rows = 0

    def write(self, iteration, epoch=None, **columns):
        """Write one iteration. Lengths (``*_len``, ``batch_size``) must be whole numbers."""
        row = {"iteration": _length(iteration, "iteration")}
        if epoch is not None:
            row["epoch"] = _length(epoch, "epoch")
        for name, value in columns.items():
            if name.endswith("_len") or name == "batch_size":
                row[name] = _length(value, name)
            else:
                if hasattr(value, "item"):
                    value = value.item()
                value = float(value)
                if not math.isfinite(value):
                    raise ValueError(f"{name} must be a finite number, got {value}")
                row[name] = value
        if self._columns is None:
            self._columns = list(row)
        elif list(row) != self._columns:
            raise ValueError(
                f"iteration {row['iteration']} has columns {list(row)}, but the log's "
                f"columns are {self._columns}; every iteration needs the same columns"
            )
        self._file.write(json.dumps(row) + "\n")
        self._file.flush()
        self.rows += 1

    def close(self):
        if not self._file.closed:
            self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def dry_pass(loader, path, epochs=1, lengths=describe_batch, overwrite=False):
    """Walk ``loader`` ``epochs`` times without training; log each batch's lengths.

    ``lengths(batch)`` returns the length columns (default: ``describe_batch``). Returns the
    number of iterations written.

    The iteration numbers match a later training run only if the loader yields the same
    batches in the same order: seed its sampler (``DataLoader(..., generator=g)`` with
    ``g.manual_seed(s)`` before each use), or log in timed mode during the real run.
    """
    iteration = 0
    with RunLogWriter(path, overwrite=overwrite) as writer:
        for epoch in range(epochs):
            for batch in loader:
                writer.write(iteration, epoch=epoch, **lengths(batch))
                iteration += 1
    return iteration


def nvml_energy_reader(device_index=0):
    """A function returning the GPU's energy counter in joules, or None where unavailable.

    Uses NVML's total energy since the driver loaded (Volta and newer). The counter is
    updated every few milliseconds, so steps much shorter than that get coarse energies.
    """
    try:
        import pynvml  # from the nvidia-ml-py package
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(device_index)
        pynvml.nvmlDeviceGetTotalEnergyConsumption(handle)
    except Exception:  # NVML reports unsupported devices and missing drivers as errors
        return None
    return lambda: pynvml.nvmlDeviceGetTotalEnergyConsumption(handle) / 1000.0


def _cuda_synchronizer():
    """torch.cuda.synchronize when the program already uses CUDA, else None.

    torch is looked up in sys.modules rather than imported: a program that has not imported
    torch is not timing GPU work, and importing it here would cost seconds.
    """
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    try:
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            return torch.cuda.synchronize
    except Exception:
        return None
    return None


class _Step:
    def __init__(self, log, epoch, columns):
        self.log, self.epoch, self.columns = log, epoch, columns

    def __enter__(self):
        log = self.log
        if log._sync:
            log._sync()
        self.energy0 = log._energy() if log._energy else None
        self.t0 = log._clock()
        return self

    def __exit__(self, exc_type, exc, tb):
        log = self.log
        if exc_type is not None:
            return False  # a failed step is not a measurement
        if log._sync:
            log._sync()
        elapsed_ms = (log._clock() - self.t0) * 1000.0
        row = dict(self.columns)
        row["time_ms"] = round(elapsed_ms, 4)
        if self.energy0 is not None:
            row["energy_j"] = round(log._energy() - self.energy0, 6)
        log.writer.write(log.iteration, epoch=self.epoch, **row)
        log.iteration += 1
        return False


class TimedLog:
    """Times each training step and writes lengths, ``time_ms`` and, if known, ``energy_j``.

    ``synchronize``: a function waiting for the GPU, ``"auto"`` (``torch.cuda.synchronize``
    when the program uses CUDA) or None. ``energy``: a function returning a counter in
    joules, ``"auto"`` (NVML through pynvml, when available) or None. ``clock`` returns
    seconds. The automatic choices are made at the first step, once, so every line has the
    same columns. ``device_index`` is NVML's index of the GPU (default: the current CUDA
    device, which differs from NVML's numbering when CUDA_VISIBLE_DEVICES reorders GPUs).
    """

    def __init__(
        self,
        path,
        synchronize="auto",
        energy="auto",
        clock=time.perf_counter,
        device_index=None,
        overwrite=False,
    ):
        self._sync = synchronize
        self._energy = energy
        self._device_index = device_index
        self._clock = clock
        self.writer = RunLogWriter(path, overwrite=overwrite)
        self.iteration = 0

    def _resolve(self):
        # Decided at the first step, not at construction: the model is often moved to the
        # GPU after the log is opened.
        if self._sync == "auto":
            self._sync = _cuda_synchronizer()
        if self._energy == "auto":
            index = self._device_index
            if index is None:
                index = _current_cuda_device()
            self._energy = nvml_energy_reader(index) if index is not None else None

    @property
    def measures_energy(self):
        self._resolve()
        return self._energy is not None

    def step(self, epoch=None, **lengths):
        """A context manager around one training step; the lengths name the batch."""
        self._resolve()
        return _Step(self, epoch, lengths)

    def close(self):
        self.writer.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _current_cuda_device():
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_available():
            return torch.cuda.current_device()
    except Exception:
        return None
    return None
