"""A module attribute made on first use (PEP 562), for the framework callbacks: the class
subclasses the framework's own, so it can only be built once the framework is imported, and
importing ``seqpoint_log.hf`` or ``seqpoint_log.lightning`` must not import it."""

from __future__ import annotations

import sys
from typing import Any, Callable


def lazy_attribute(module: str, name: str, make: Callable[[], Any]) -> Callable[[str], Any]:
    """The module ``__getattr__`` that builds ``name`` with ``make()`` on first access and
    keeps it in the module, so later accesses find it there without calling again."""

    def __getattr__(attribute: str) -> Any:
        if attribute != name:
            raise AttributeError(f"module {module!r} has no attribute {attribute!r}")
        value = make()
        setattr(sys.modules[module], name, value)
        return value

    return __getattr__
