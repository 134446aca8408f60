"""The run log on disk: one JSON object per iteration, the same columns on every line; never
overwritten unless asked, continued (not relabelled) when a run resumes."""

from __future__ import annotations

import json
import math
import os
from typing import IO, Any, Optional, Literal

from .lengths import is_count, whole
from .packed import doc_lens_value


class LogExistsError(FileExistsError):
    """The log file exists and overwriting it was not asked for."""

    def __init__(self, path: str, hint: str = "pass overwrite=True or choose another path"):
        super().__init__(f"{path} exists; {hint}")
        self.path = path


class ResumeMismatchError(ValueError):
    """A resumed run's first iteration does not follow the last one the log holds."""


def _is_blank(path: str) -> bool:
    """True for a file with nothing in it but white space: what a run that failed before its
    first step leaves. Such a file is not a log anyone would want kept."""
    with open(path, "rb") as f:
        return not f.read(4096).strip() and not f.read(1)


def last_logged(path: str) -> tuple[list[str], int, int]:
    """``(columns, last iteration, line count)`` of an existing JSON Lines log.

    Errors name the file and line: the log must end in a whole line (each is flushed whole,
    so a torn last line means the file was changed by something else).
    """
    columns: Optional[list[str]] = None
    last = -1
    count = 0
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            if not line.endswith("\n"):
                raise ValueError(f"{path}:{number}: the last line is not complete; expected "
                                 "one JSON object per line, each ending in a newline")
            try:
                row = json.loads(line)
                iteration = row["iteration"]
            except (json.JSONDecodeError, TypeError, KeyError) as e:
                raise ValueError(f"{path}:{number}: expected a JSON object with an "
                                 f"'iteration', as seqpoint_log writes ({e})") from None
            if columns is None:
                columns = list(row)
            last = whole(iteration, f"{path}:{number}: iteration")
            count += 1
    return columns or [], last, count


class RunLogWriter:
    """Writes one JSON object per iteration; every line has the columns of the first.

    ``seqpoint`` takes its columns from the first line, so a later line with other columns
    is refused here rather than silently misread there. Each line is flushed as it is
    written: a run that crashes keeps the iterations it logged.

    An existing file is refused (``LogExistsError``) unless ``overwrite=True``, except an
    empty one (a start that failed before its first step) and, with ``start_iteration=N``,
    a log whose last iteration is N-1: that log is continued, its columns kept. A log that
    ends elsewhere is a ``ResumeMismatchError`` naming both iterations.
    """

    def __init__(
        self, path: "os.PathLike[str] | str", overwrite: bool = False,
        start_iteration: Optional[int] = None,
    ) -> None:
        self.path = os.fspath(path)
        self._columns: Optional[list[str]] = None
        self.rows = 0
        self.next_iteration = 0 if start_iteration is None else whole(
            start_iteration, "start_iteration")
        mode = "w"
        if os.path.exists(self.path) and not overwrite and not _is_blank(self.path):
            if start_iteration is None:
                raise LogExistsError(self.path, "pass start_iteration= to continue it, "
                                     "overwrite=True to replace it, or choose another path")
            columns, last, count = last_logged(self.path)
            if last != self.next_iteration - 1:
                raise ResumeMismatchError(
                    f"{self.path} ends at iteration {last} (line {count}), so a run resumed "
                    f"there starts at {last + 1}, not start_iteration={self.next_iteration}; "
                    "pass the step the run really resumes from"
                )
            self._columns = columns
            mode = "a"
        self._file: IO[str] = open(self.path, mode, encoding="utf-8")

    def write(self, iteration: int, epoch: Optional[int] = None, **columns: Any) -> None:
        """Write one iteration. Lengths (``*_len``) and counts (``batch_size``, ``tokens``,
        ``micro_batches``) must be whole numbers; anything else is a finite number."""
        row: dict[str, Any] = {"iteration": whole(iteration, "iteration")}
        if epoch is not None:
            row["epoch"] = whole(epoch, "epoch")
        for name, value in columns.items():
            if name == "doc_lens":
                # A list, not a number: seqpoint derives its packed keys from it.
                row[name] = doc_lens_value(value)
            elif name == "traced":
                # 1 or 0 as `seqpoint project` reads it: whether torch.profiler recorded
                # the step (its time then includes the profiler's overhead).
                if value not in (0, 1):
                    raise ValueError(f"traced must be 1 or 0 (or a bool), got {value!r}")
                row[name] = int(value)
            elif is_count(name):
                row[name] = whole(value, name)
            else:
                if hasattr(value, "item"):
                    value = value.item()
                number = float(value)
                if not math.isfinite(number):
                    raise ValueError(f"{name} must be a finite number, got {number}")
                row[name] = number
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
        self.next_iteration = row["iteration"] + 1

    @property
    def columns(self) -> Optional[list[str]]:
        """The log's columns: the first line's (an existing log's when continued), None
        before any line."""
        return self._columns

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()

    def __enter__(self) -> "RunLogWriter":
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self.close()
        return False
