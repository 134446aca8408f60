"""Write the per-iteration run log that ``seqpoint`` reads, from a PyTorch training loop, and
profile exactly the iterations it lists. ``pip install ./examples/pytorch``.

1. **Dry pass** (no training, no profiling): walk the DataLoader once and write every
   iteration's padded length(s) and batch size, all SeqPoint needs to choose::

       seqpoint_log.dry_pass(loader, "lengths.jsonl", epochs=3)

2. **Timed mode**: wrap the training step; its wall time (synchronised on CUDA) and, with
   ``pynvml``, its GPU energy are logged::

       with seqpoint_log.TimedLog("run.jsonl") as log:
           for epoch in range(epochs):
               for batch in loader:
                   with log.step(epoch=epoch, **seqpoint_log.describe_batch(batch)):
                       train_step(batch)

3. **Profiling the SeqPoints** listed by ``seqpoint select lengths.jsonl -o seqpoints.json``,
   with torch.profiler (one trace per listed iteration) or plain timing, into the
   ``measured.csv`` that ``seqpoint project`` reads::

       with seqpoint_log.profile_seqpoints("seqpoints.json", "profiles/") as prof:
           for batch in loader:
               train_step(batch)
               prof.step()          # or: with prof.step(): train_step(batch)

Gradient accumulation (one optimizer step = one iteration, see ``merge_micro_batches``),
resumed runs (``start_iteration=``) and torchrun (rank 0 writes the job's rows) are
handled by the same calls; ``seqpoint_log.hf`` and ``seqpoint_log.lightning`` hold the
callbacks for Hugging Face's Trainer and Lightning; ``replay`` measures the listed
iterations without training up to them (``check_replay`` says whether that serves). Importing the package imports no torch.
"""

from .devices import nvml_energy_reader
from .lengths import describe_batch, merge_micro_batches, padded_length
from .plan import SEQPOINTS_SCHEMA, ProfileList, SeqPointSchedule
from .profile import SeqPointProfiler, StepHandle, profile_seqpoints
from .packed import doc_lens_value, lengths_from_cu_seqlens
from .ranks import merge_rank_rows
from .replay import ReplayCheck, check_replay, epochs, replay
from .timed import TimedLog, TimedStep, dry_pass, set_epoch
from .writer import LogExistsError, ResumeMismatchError, RunLogWriter

__version__ = "0.2.0"

__all__ = [
    "doc_lens_value",
    "lengths_from_cu_seqlens",
    "SEQPOINTS_SCHEMA",
    "LogExistsError",
    "ProfileList",
    "ReplayCheck",
    "ResumeMismatchError",
    "RunLogWriter",
    "SeqPointProfiler",
    "SeqPointSchedule",
    "StepHandle",
    "TimedLog",
    "TimedStep",
    "check_replay",
    "describe_batch",
    "dry_pass",
    "epochs",
    "merge_micro_batches",
    "merge_rank_rows",
    "nvml_energy_reader",
    "padded_length",
    "profile_seqpoints",
    "replay",
    "set_epoch",
]
