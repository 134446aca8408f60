"""Packed batches: a step's document lengths (``doc_lens``), as ``seqpoint`` reads them into
its derived keys (``tokens``, ``attn``, ``docs``, ``max_doc``)."""

from typing import Any, Union

DocLens = Union[list[int], list[list[int]]]


def _ints(values: Any, what: str) -> list[int]:
    if hasattr(values, "tolist"):
        values = values.tolist()
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{what}: a document length must be a whole number of at least 1, got {v!r}")
        out.append(v)
    if not out:
        raise ValueError(f"{what}: a micro-batch needs at least one document length")
    return out


def lengths_from_cu_seqlens(cu_seqlens: Any) -> list[int]:
    """The document lengths of one packed row from its cumulative offsets (``cu_seqlens`` as
    flash-attention takes them: ``[0, 512, 1536, ...]``). Repeated offsets (padding some
    kernels ask for) are empty documents and are left out."""
    offsets = cu_seqlens.tolist() if hasattr(cu_seqlens, "tolist") else list(cu_seqlens)
    lengths = [b - a for a, b in zip(offsets, offsets[1:])]
    if any(n < 0 for n in lengths):
        raise ValueError(f"cu_seqlens must not decrease, got {offsets}")
    return [n for n in lengths if n > 0]


def doc_lens_value(value: Any) -> DocLens:
    """``doc_lens`` as written: a list of lengths, or one list per micro-batch."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    value = list(value)
    if value and all(isinstance(v, (list, tuple)) or hasattr(v, "tolist") for v in value):
        return [_ints(v, "doc_lens") for v in value]
    return _ints(value, "doc_lens")


def doc_lens_lists(value: Any) -> list[list[int]]:
    """``doc_lens`` as one list per micro-batch: a flat list is one micro-batch's."""
    lengths = doc_lens_value(value)
    if lengths and isinstance(lengths[0], list):
        return [list(v) for v in lengths if isinstance(v, list)]
    return [[v for v in lengths if isinstance(v, int)]]


def merge_doc_lens(values: Any, what: str) -> list[list[int]]:
    """The ``doc_lens`` of one step made of several parts (``what``: micro-batches, or
    ranks under torchrun): each part's documents kept as its own list (a part's own
    micro-batches stay apart), so that the derived keys (``tokens``, ``attn``, ``docs``,
    ``max_doc``) count every document of the step once."""
    merged: list[list[int]] = []
    for index, value in enumerate(values):
        try:
            merged.extend(doc_lens_lists(value))
        except ValueError as e:
            raise ValueError(f"{what} {index}: {e}") from None
    return merged
