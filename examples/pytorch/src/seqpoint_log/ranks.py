"""torchrun: every rank measures its own step, rank 0 writes one row for the job's step.

A step of a data-parallel job takes as long as its slowest rank and is as long as its
longest rank's batch, so the merged row's key is the longest rank's padded length (each
rank's own kept as ``rank<r>_<name>`` columns), its time the slowest rank's, its energy and
batch size the ranks' sum.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Mapping, Optional, Sequence

from .packed import merge_doc_lens

# How the ranks' values of one column make the job's: times and lengths the largest,
# amounts the sum; any other column the largest.
SUMMED = frozenset({"batch_size", "tokens", "energy_j"})


def merge_rank_rows(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The job's row from each rank's row of one step (rank order)."""
    if not rows:
        raise ValueError("no rank's row to merge")
    names = list(rows[0])
    for rank, row in enumerate(rows):
        if list(row) != names:
            raise ValueError(
                f"rank {rank} logged columns {list(row)} but rank 0 logged {names}; every "
                "rank must describe its batch the same way"
            )
    merged: dict[str, Any] = {}
    for name in names:
        values = [row[name] for row in rows]
        if name == "doc_lens" and len(rows) > 1:
            # Every rank's documents: the job's step holds them all, as it sums batch_size.
            merged[name] = merge_doc_lens(values, "rank")
        else:
            merged[name] = sum(values) if name in SUMMED else max(values)
    if len(rows) > 1:
        for name in names:
            if name.endswith("_len"):
                for rank, row in enumerate(rows):
                    merged[f"rank{rank}_{name}"] = row[name]
    return merged


class Ranks:
    """This process's place in a torch.distributed job (rank 0 of 1 outside one)."""

    def __init__(self, rank: int = 0, world: int = 1, dist: Any = None) -> None:
        self.rank, self.world, self._dist = rank, world, dist

    @property
    def writes(self) -> bool:
        """True on the rank that writes the job's files (rank 0)."""
        return self.rank == 0

    @classmethod
    def current(cls, what: str) -> "Ranks":
        """The job this process belongs to, once torch.distributed is set up.

        Under torchrun (``WORLD_SIZE`` > 1) before ``init_process_group`` every rank would
        write the same file: that is an error naming ``what``.
        """
        torch: Any = sys.modules.get("torch")
        dist = getattr(torch, "distributed", None) if torch is not None else None
        if dist is not None and dist.is_available() and dist.is_initialized():
            world = dist.get_world_size()
            if world > 1:
                return cls(dist.get_rank(), world, dist)
            return cls()
        if int(os.environ.get("WORLD_SIZE", "1") or 1) > 1:
            raise RuntimeError(
                f"{what} was created under torchrun (WORLD_SIZE={os.environ['WORLD_SIZE']}) "
                "before torch.distributed.init_process_group(); create it after, so that "
                "rank 0 alone writes the job's log"
            )
        return cls()

    def gather(self, value: Any) -> Optional[list[Any]]:
        """Every rank's ``value`` on rank 0 (rank order), None on the others."""
        if self._dist is None:
            return [value]
        out: Optional[list[Any]] = [None] * self.world if self.rank == 0 else None
        self._dist.gather_object(value, out, dst=0)
        return out

    def agree(self, error: Optional[BaseException]) -> None:
        """Raise on every rank when any rank failed (e.g. rank 0 could not open the log), so
        that no rank waits forever for the others at the next step."""
        if self._dist is None:
            if error is not None:
                raise error
            return
        failures: list[Any] = [None] * self.world
        self._dist.all_gather_object(failures, None if error is None else repr(error))
        if error is not None:
            raise error
        for rank, failure in enumerate(failures):
            if failure is not None:
                raise RuntimeError(f"rank {rank} failed: {failure}")
