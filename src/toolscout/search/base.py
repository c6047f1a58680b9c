"""The seam every search backend plugs into.

A backend is pure: it is rebuilt from (or updated with) a sequence of tools, addressed by
their position ("doc id") in that sequence, and answers a query with scored doc ids. It
never sees policies or sessions: the index hands it a boolean mask of the docs allowed for
this request, so filters apply before ranking and ``limit`` is honoured.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np

    from ..model import Tool

__all__ = ["Backend", "Hit"]


@dataclass(frozen=True, slots=True)
class Hit:
    doc: int
    score: float
    why: str = ""


@runtime_checkable
class Backend(Protocol):
    name: str

    def rebuild(self, tools: Sequence[Tool]) -> None:
        """Index ``tools``; doc id ``i`` is ``tools[i]``."""

    def search(self, query: str, *, limit: int, mask: np.ndarray | None = None) -> list[Hit]:
        """Best first; only docs with ``mask[doc]`` true; only docs that really matched."""
