"""What a batch is, as the log's columns: padded lengths, batch size, and, for an optimizer
step over several micro-batches, the one key that step is logged under."""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping, Sequence

from .packed import doc_lens_lists

#: Columns written as whole numbers (besides every ``*_len``): the reader wants lengths as
#: integers, and counts are counts.
COUNT_COLUMNS = frozenset({"batch_size", "tokens", "micro_batches"})


def is_count(name: str) -> bool:
    """True for the columns that hold whole numbers: ``*_len`` and ``COUNT_COLUMNS``."""
    return name.endswith("_len") or name in COUNT_COLUMNS


def whole(value: Any, name: str) -> int:
    """A length or count as a non-negative int; torch/numpy integer scalars are accepted."""
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


def padded_length(lengths: Iterable[Any], multiple_of: int = 1) -> int:
    """The length a batch is padded to: its longest sequence, rounded up to a multiple.

    ``lengths`` are the unpadded lengths of the batch's sequences. ``multiple_of`` mirrors
    collators that pad to a multiple of 8 (tensor cores) or to a bucket width.
    """
    values = [whole(n, "a sequence length") for n in lengths]
    if not values:
        raise ValueError("an empty batch has no padded length")
    multiple_of = whole(multiple_of, "multiple_of")
    if multiple_of < 1:
        raise ValueError("multiple_of must be at least 1")
    return int(math.ceil(max(values) / multiple_of)) * multiple_of


def _is_sequence_of_sequences(batch: Any) -> bool:
    # Tuples are left out on purpose: a list of (sequence, label) samples would otherwise
    # read as sequences of length 2.
    return (
        isinstance(batch, list)
        and len(batch) > 0
        and all(isinstance(s, (list, str, bytes)) for s in batch)
    )


def describe_batch(
    batch: Any, seq_dim: int = 1, batch_dim: int = 0, multiple_of: int = 1
) -> dict[str, int]:
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
            "seq_len": whole(shape[seq_dim], "seq_len"),
            "batch_size": whole(shape[batch_dim], "batch_size"),
        }
    if _is_sequence_of_sequences(batch):
        return {
            "seq_len": padded_length([len(s) for s in batch], multiple_of),
            "batch_size": len(batch),
        }
    if isinstance(batch, Mapping):
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


def merge_micro_batches(micro_batches: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The columns of one optimizer step made of several micro-batches (gradient accumulation).

    The step is one iteration, keyed by its longest micro-batch:

    - every ``*_len`` column: the largest over the micro-batches (the step's padded length);
    - ``batch_size``: the sum (sequences in the step);
    - ``tokens``: the sum of each micro-batch's ``tokens`` when given (e.g. its real,
      unpadded tokens, or its documents' lengths summed when sequences are packed), else of
      its padded tokens, ``seq_len * batch_size``;
    - ``micro_batches``: how many there were;
    - ``doc_lens`` (packed sequences): one list per micro-batch, of its documents' lengths
      (the per-micro-batch form seqpoint reads); ``tokens`` is then left to ``seqpoint``, which
      derives it from the lengths, rather than written from the padded shape.

    Each micro-batch is a dict as ``describe_batch`` returns, with any further length
    columns; all of them must have the same columns.
    """
    if not micro_batches:
        raise ValueError("an optimizer step needs at least one micro-batch")
    names = list(micro_batches[0])
    for index, micro in enumerate(micro_batches):
        if list(micro) != names:
            raise ValueError(
                f"micro-batch {index} has columns {list(micro)}, but micro-batch 0 has "
                f"{names}; every micro-batch needs the same columns"
            )
        unknown = [n for n in micro if not is_count(n) and n != "doc_lens"]
        if unknown:
            raise ValueError(
                f"micro-batch {index} has columns {unknown} that are neither lengths "
                "(*_len), counts (batch_size, tokens) nor doc_lens"
            )
    merged: dict[str, Any] = {}
    for name in names:
        if name == "doc_lens":
            # Each micro-batch's documents as one list, whatever rows they were packed in.
            merged[name] = [[n for part in doc_lens_lists(micro[name]) for n in part]
                            for micro in micro_batches]
            continue
        values = [whole(micro[name], name) for micro in micro_batches]
        merged[name] = sum(values) if name in ("batch_size", "tokens") else max(values)
    if ("tokens" not in merged and "doc_lens" not in merged and "seq_len" in merged
            and "batch_size" in merged):
        merged["tokens"] = sum(
            whole(m["seq_len"], "seq_len") * whole(m["batch_size"], "batch_size")
            for m in micro_batches
        )
    merged["micro_batches"] = len(micro_batches)
    return merged
