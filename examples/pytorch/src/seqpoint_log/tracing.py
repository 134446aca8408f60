"""Whether a step ran under torch.profiler's recording, for the logs that time steps: a
recorded step's time includes the profiler's overhead (a few percent), and ``seqpoint
project`` says so of the rows marked ``traced`` 1."""

from __future__ import annotations

import sys

# SeqPointProfilers now open with torch.profiler on: a TimedLog that starts its first step
# while one is open gives each row a `traced` column.
_open_tracers = 0


def tracer_opened() -> None:
    global _open_tracers
    _open_tracers += 1


def tracer_closed() -> None:
    global _open_tracers
    _open_tracers = max(0, _open_tracers - 1)


def tracer_open() -> bool:
    """True while a ``profile_seqpoints`` with torch.profiler is open in this process."""
    return _open_tracers > 0


def profiler_recording() -> bool:
    """True while torch.profiler records (a listed step under ``profile_seqpoints``, or any
    profiler's active steps); False in its wait and warm-up steps, and without torch."""
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    return bool(torch._C._autograd._profiler_enabled())
