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

import numpy as np

if TYPE_CHECKING:
    import numpy as np

    from ..model import Tool

__all__ = ["Backend", "Hit", "top_docs"]


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


def top_docs(scores: np.ndarray, k: int, floor: float) -> np.ndarray:
    """The ``k`` best docs scoring above ``floor``, best first; equal scores go to the
    earlier doc, at the cut too (``argpartition`` alone picks among ties by chance, so two
    paths over the same scores could order tied docs differently)."""
    docs = np.flatnonzero(scores > floor)
    if k <= 0:
        return docs[:0]
    if len(docs) > k:
        values = scores[docs]
        kth = np.partition(values, len(values) - k)[len(values) - k]
        above = docs[values > kth]
        docs = np.concatenate([above, docs[values == kth][: k - len(above)]])
    return docs[np.lexsort((docs, -scores[docs]))]
