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

3. **Profiling the SeqPoints**: after ``seqpoint select lengths.jsonl -o seqpoints.json``,
   measure exactly the listed iterations (the plan's ``profile`` list when there is one, else
   the SeqPoints) and nothing else, with torch.profiler (one Chrome trace per iteration) or
   plain timing, into the ``measured.csv`` that ``seqpoint project`` reads::

       with seqpoint_log.profile_seqpoints("seqpoints.json", "profiles/") as prof:
           for epoch in range(epochs):
               for batch in loader:
                   with prof.step():
                       train_step(batch)

   On CUDA each listed iteration is also an NVTX range ``seqpoint <id> iter <n>`` between
   ``torch.cuda.profiler.start()`` and ``stop()``, for Nsight Systems and Nsight Compute.
   ``SeqPointSchedule("seqpoints.json")`` is the bare torch.profiler schedule.

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
    "ProfileList",
    "RunLogWriter",
    "SeqPointProfiler",
    "SeqPointSchedule",
    "TimedLog",
    "describe_batch",
    "dry_pass",
    "nvml_energy_reader",
    "padded_length",
    "profile_seqpoints",
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


# --- Profiling exactly the SeqPoints -------------------------------------------------------

SEQPOINTS_SCHEMA = "seqpoint/1"


def _read_seqpoints_document(path):
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
    return doc


class ProfileList:
    """The iterations a seqpoint/1 document asks to profile, and the SeqPoint of each.

    The plan's ``profile`` list when the document has one (several iterations per SeqPoint),
    else each SeqPoint's own iteration. Iterations are numbered as the logger writes them:
    from 0, counting across epochs. ``warmup`` steps before each listed iteration are
    marked for warm-up (a profiler's start-up cost then falls outside the measured step).
    Plain Python: no torch needed.
    """

    def __init__(self, seqpoints, warmup=1):
        doc = seqpoints if isinstance(seqpoints, dict) else _read_seqpoints_document(seqpoints)
        source = doc.get("plan", {}) or {}
        rows = source.get("profile")
        if rows:
            pairs = [(row["iteration"], row["seqpoint"]) for row in rows]
        else:
            pairs = [(sp["iteration"], sp["id"]) for sp in doc.get("seqpoints", [])]
        if not pairs:
            raise ValueError("the SeqPoints file lists no iteration to profile")
        self.seqpoint_of = {}
        for iteration, seqpoint in pairs:
            iteration = _length(iteration, "an iteration to profile")
            seqpoint = _length(seqpoint, "a SeqPoint id")
            known = self.seqpoint_of.setdefault(iteration, seqpoint)
            if known != seqpoint:
                raise ValueError(
                    f"iteration {iteration} is listed for SeqPoints {known} and {seqpoint}"
                )
        self.iterations = sorted(self.seqpoint_of)
        self.warmup = _length(warmup, "warmup")
        self._warmup_steps = {
            step
            for iteration in self.iterations
            for step in range(max(0, iteration - self.warmup), iteration)
        } - set(self.iterations)

    def action(self, step):
        """``"record"`` for a listed iteration, ``"warmup"`` just before one, else None."""
        if step in self.seqpoint_of:
            return "record"
        if step in self._warmup_steps:
            return "warmup"
        return None

    def trace_name(self, iteration):
        return f"seqpoint-{self.seqpoint_of[iteration]}-iter{iteration}.json"

    def range_name(self, iteration):
        return f"seqpoint {self.seqpoint_of[iteration]} iter {iteration}"


class SeqPointSchedule:
    """A torch.profiler schedule that records exactly the listed iterations.

    ``torch.profiler.profile(schedule=SeqPointSchedule("seqpoints.json", warmup=1), ...)``:
    ``RECORD_AND_SAVE`` at each listed iteration (so ``on_trace_ready`` runs once per
    iteration), ``WARMUP`` for the ``warmup`` steps before each, ``NONE`` otherwise. The
    profiler's step number is the iteration: call ``prof.step()`` once per iteration from the
    run's first. ``iterations`` is the sorted list. Building one imports torch.
    """

    def __init__(self, seqpoints, warmup=1):
        from torch.profiler import ProfilerAction

        if isinstance(seqpoints, ProfileList):
            self.listed = seqpoints
        else:
            self.listed = ProfileList(seqpoints, warmup)
        self._actions = {
            "record": ProfilerAction.RECORD_AND_SAVE,
            "warmup": ProfilerAction.WARMUP,
            None: ProfilerAction.NONE,
        }

    @property
    def iterations(self):
        return self.listed.iterations

    def __call__(self, step):
        return self._actions[self.listed.action(step)]


class _TorchCudaRanges:
    """Marks a listed iteration for Nsight: cudaProfilerStart/Stop around an NVTX range."""

    def __init__(self, torch):
        self._torch = torch

    def start(self, name):
        self._torch.cuda.profiler.start()
        self._torch.cuda.nvtx.range_push(name)

    def stop(self):
        self._torch.cuda.nvtx.range_pop()
        self._torch.cuda.profiler.stop()


def _cuda_ranges():
    """Nsight marks when the program already uses CUDA, else None."""
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
            return _TorchCudaRanges(torch)
    except Exception:
        return None
    return None


class _ProfiledStep:
    def __init__(self, owner):
        self.owner = owner

    def __enter__(self):
        owner = self.owner
        self.iteration = owner.iteration
        self.listed = self.iteration in owner.listed.seqpoint_of
        if not self.listed:
            return self
        if owner._sync:
            owner._sync()
        if owner._ranges:
            owner._ranges.start(owner.listed.range_name(self.iteration))
        self.energy0 = owner._energy() if owner._energy else None
        self.t0 = owner._clock()
        return self

    def __exit__(self, exc_type, exc, tb):
        owner = self.owner
        if exc_type is not None:
            if self.listed and owner._ranges:
                owner._ranges.stop()
            return False  # a failed step is not a measurement
        if self.listed:
            if owner._sync:
                owner._sync()
            elapsed_ms = (owner._clock() - self.t0) * 1000.0
            energy = None
            if self.energy0 is not None:
                energy = owner._energy() - self.energy0
            if owner._ranges:
                owner._ranges.stop()
            owner._pending = (self.iteration, elapsed_ms, energy)
        if owner._torch_profiler is not None:
            # Ends the step for torch.profiler; after a listed iteration its on_trace_ready
            # writes the trace and the row. Its warning that each cycle's events are cleared
            # describes exactly what is wanted here (one trace per iteration): not shown.
            import warnings

            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=".*clears events at the end of each cycle")
                owner._torch_profiler.step()
        if owner._pending is not None:
            owner._write_row()
        owner.iteration += 1
        return False


class SeqPointProfiler:
    """Measures exactly the iterations a seqpoint/1 document lists; see profile_seqpoints."""

    def __init__(
        self,
        seqpoints,
        out_dir,
        warmup=1,
        profiler="auto",
        synchronize="auto",
        energy="auto",
        cuda_ranges="auto",
        device_index=None,
        clock=time.perf_counter,
        overwrite=False,
        **profiler_options,
    ):
        self.listed = ProfileList(seqpoints, warmup)
        self.out_dir = os.fspath(out_dir)
        self.measured_path = os.path.join(self.out_dir, "measured.csv")
        self._profiler_choice = profiler
        self._profiler_options = profiler_options
        self._sync = synchronize
        self._energy = energy
        self._ranges = cuda_ranges
        self._device_index = device_index
        self._clock = clock
        self._overwrite = overwrite
        self._resolved = False
        self._file = None
        self._header_written = False
        self._pending = None
        self._torch_profiler = None
        self.uses_torch_profiler = False
        self.iteration = 0
        self.measured = {}
        self.trace_files = []

    @property
    def iterations(self):
        return self.listed.iterations

    @property
    def done(self):
        """True once every listed iteration has run: a profiling-only run may stop here."""
        return self.iteration > self.listed.iterations[-1]

    @property
    def missed(self):
        """Listed iterations not measured (so far)."""
        return [i for i in self.listed.iterations if i not in self.measured]

    def _trace_path(self, iteration):
        return os.path.join(self.out_dir, self.listed.trace_name(iteration))

    def _wants_torch_profiler(self):
        if self._profiler_choice == "auto":
            # A program that has not imported torch does not run torch ops to profile.
            return "torch" in sys.modules
        return bool(self._profiler_choice)

    def __enter__(self):
        os.makedirs(self.out_dir, exist_ok=True)
        use_profiler = self._wants_torch_profiler()
        outputs = [self.measured_path]
        if use_profiler:
            outputs += [self._trace_path(i) for i in self.listed.iterations]
        if not self._overwrite:
            for path in outputs:
                if os.path.exists(path):
                    raise LogExistsError(path)
        self._file = open(self.measured_path, "w" if self._overwrite else "x", encoding="utf-8")
        if use_profiler:
            import torch
            from torch.profiler import ProfilerActivity, profile

            options = dict(self._profiler_options)
            if "activities" not in options:
                activities = [ProfilerActivity.CPU]
                if torch.cuda.is_available():
                    activities.append(ProfilerActivity.CUDA)
                options["activities"] = activities
            self._torch_profiler = profile(
                schedule=SeqPointSchedule(self.listed),
                on_trace_ready=self._trace_ready,
                **options,
            )
            self._torch_profiler.__enter__()
            self.uses_torch_profiler = True
        return self

    def _resolve(self):
        # Decided at the first step, not at construction: the model is often moved to the
        # GPU after the profiler is set up. Once, so every row has the same columns.
        if self._resolved:
            return
        if self._sync == "auto":
            self._sync = _cuda_synchronizer()
        if self._ranges == "auto":
            self._ranges = _cuda_ranges()
        if self._energy == "auto":
            index = self._device_index
            if index is None:
                index = _current_cuda_device()
            self._energy = nvml_energy_reader(index) if index is not None else None
        self._resolved = True
        self._write_header()

    def _write_header(self):
        if self._header_written:
            return
        columns = ["iteration", "seqpoint", "time_ms"]
        if self._energy:
            columns.append("energy_j")
        self._file.write(",".join(columns) + "\n")
        self._file.flush()
        self._header_written = True

    def step(self):
        """A context manager around one training step; every iteration goes through it."""
        if self._file is None:
            raise RuntimeError("use profile_seqpoints(...) in a with statement")
        self._resolve()
        return _ProfiledStep(self)

    def _trace_ready(self, prof):
        """torch.profiler's on_trace_ready: the trace and the row of the iteration just run."""
        iteration = self.iteration
        if self._pending is None or self._pending[0] != iteration:
            return  # a step that failed: no measurement, no trace
        path = self._trace_path(iteration)
        temporary = os.path.join(self.out_dir, f".{os.path.basename(path)}.partial")
        prof.export_chrome_trace(temporary)
        os.replace(temporary, path)
        self.trace_files.append(path)
        self._write_row()

    def _write_row(self):
        iteration, elapsed_ms, energy = self._pending
        self._pending = None
        fields = [str(iteration), str(self.listed.seqpoint_of[iteration]), f"{elapsed_ms:.4f}"]
        if self._energy:
            fields.append(f"{energy:.6f}")
        self._file.write(",".join(fields) + "\n")
        self._file.flush()
        self.measured[iteration] = elapsed_ms

    def close(self, failed=False):
        if self._torch_profiler is not None:
            profiler, self._torch_profiler = self._torch_profiler, None
            profiler.__exit__(None, None, None)
        if self._file is not None and not self._file.closed:
            self._write_header()
            self._file.close()
        if not failed and self.missed:
            import warnings

            shown = ", ".join(str(i) for i in self.missed[:10])
            more = f" and {len(self.missed) - 10} more" if len(self.missed) > 10 else ""
            warnings.warn(
                f"{len(self.missed)} listed iteration(s) were not reached (the run had "
                f"{self.iteration}): {shown}{more}; `seqpoint project` will name them missing",
                stacklevel=3,
            )

    def __exit__(self, exc_type, exc, tb):
        self.close(failed=exc_type is not None)
        return False


def profile_seqpoints(seqpoints, out_dir, warmup=1, profiler="auto", **options):
    """Profile exactly the iterations ``seqpoints`` (a seqpoint/1 file) lists, nothing else.

    A context manager; wrap every training step in ``prof.step()``::

        with profile_seqpoints("seqpoints.json", "profiles/") as prof:
            for epoch in range(epochs):
                for batch in loader:
                    with prof.step():
                        train_step(batch)
                if prof.done:          # optional: every listed iteration has run
                    break

    Writes ``OUT_DIR/measured.csv`` (``iteration,seqpoint,time_ms`` and ``energy_j`` with
    NVML), one row per listed iteration as it runs, which ``seqpoint project seqpoints.json
    OUT_DIR/measured.csv`` reads as it is; ``time_ms`` is the step's own wall time
    (synchronised on CUDA). With torch.profiler (``profiler="auto"``: when the program has
    imported torch; ``True``/``False`` to choose) it runs with ``SeqPointSchedule`` and
    writes one Chrome trace per listed iteration, ``OUT_DIR/seqpoint-<id>-iter<n>.json``
    (open it in Perfetto or chrome://tracing); other keyword arguments go to
    ``torch.profiler.profile`` (e.g. ``record_shapes=True``). Without it, the same object only
    times the listed iterations, for users who profile with something else. On CUDA each
    listed iteration is an NVTX range ``seqpoint <id> iter <n>`` inside
    ``torch.cuda.profiler.start()``/``stop()`` (``cuda_ranges=None`` turns that off).

    Existing outputs are never overwritten unless ``overwrite=True``. Options as for
    ``TimedLog``: ``synchronize``, ``energy``, ``device_index``, ``clock``.
    """
    return SeqPointProfiler(seqpoints, out_dir, warmup=warmup, profiler=profiler, **options)
