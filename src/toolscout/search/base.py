"""The seam every search backend plugs into.

A backend is pure: it is rebuilt from (or updated with) a sequence of tools, addressed by
their position ("doc id") in that sequence, and answers a query with scored doc ids. It
never sees policies or sessions: the index hands it a boolean mask of the docs allowed for
this request, so filters apply before ranking and ``limit`` is honoured.

:class:`Backend` is all the index requires: ``name``, ``rebuild`` and ``search``. What the
shipped backends do beyond that is a capability the index asks for by protocol, never by
concrete class, so a third-party backend that implements only the seam still works (its
mode then returns its own hits, which the signals can pin but not rescore):

* :class:`~toolscout.search.ranking.Ranks`: a lazy :class:`~toolscout.search.ranking.Ranking`
  the finishing step's signals (usage, intent) can rescore before the cut
  (:mod:`toolscout.search.signals`); it lives beside ``Ranking``;
* :class:`Snapshots`: the analysed index as arrays, so a cold start loads it from a store;
* :class:`Explains`: a score taken apart by term and field (the console);
* :class:`SharesTerms`: the query's analysed terms, when they are the standard analyzer's
  (the usage prior is keyed by them; sharing saves analysing the query twice).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from .hit import Hit

if TYPE_CHECKING:
    from ..model import Tool

__all__ = ["Backend", "Explains", "Hit", "SharesTerms", "Snapshots", "can", "top_docs"]



@runtime_checkable
class Backend(Protocol):
    name: str

    def rebuild(self, tools: Sequence[Tool]) -> None:
        """Index ``tools``; doc id ``i`` is ``tools[i]``."""

    def search(self, query: str, *, limit: int, mask: np.ndarray | None = None) -> list[Hit]:
        """Best first; only docs with ``mask[doc]`` true; only docs that really matched."""


@runtime_checkable
class Snapshots(Protocol):
    """A backend whose analysed index can be saved to and loaded from a store's arrays."""

    def snapshot_key(self, tools: Sequence[Tool], profiles: tuple[list[int], list[Any]] | None = None) -> str:
        """Identifies an index over exactly ``tools`` with these settings."""

    def snapshot_parts(self) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """(what searching needs, what only a rebuild needs); the first holds ``vocab``."""

    def restore(
        self,
        tools: Sequence[Tool],
        arrays: dict[str, np.ndarray],
        counts: Callable[[], dict[str, np.ndarray] | None] | None = None,
    ) -> bool:
        """Load a snapshot over the same ``tools``; False (and no change) if it does not fit."""


@runtime_checkable
class Explains(Protocol):
    def explain(self, query: str, name: str) -> list[tuple[str, float, dict[str, float]]]:
        """``(term, score, {field: part})`` for each query term ``name`` holds."""


@runtime_checkable
class SharesTerms(Protocol):
    def shared_terms(self, query: str) -> list[str] | None:
        """The query's distinct terms as the standard analyzer gives them, or ``None``."""


_CAN: dict[tuple[type, type], bool] = {}


def can(backend: object, capability: type) -> bool:
    """``isinstance(backend, capability)`` for the capability protocols above, remembered
    per class: a runtime protocol check walks the protocol's members (~10 µs), too much for
    every search. A backend's capabilities are its class's methods, not added per instance."""
    key = (type(backend), capability)
    found = _CAN.get(key)
    if found is None:
        found = _CAN[key] = isinstance(backend, capability)
    return found


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
