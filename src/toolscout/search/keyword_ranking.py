"""Keyword mode's ranking for the index's finishing step (:mod:`toolscout.search.signals`).

Apart from :mod:`toolscout.search.keyword` because it is the ranking protocol's side of
keyword search: which path a query takes (the large-catalog top k, or the rescored score
vector when a signal changes the scores), not how BM25F is computed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from .base import Hit
from .ranking import Ranking

__all__ = ["KeywordRanking", "KeywordScorer"]


class KeywordScorer(Protocol):
    """What the ranking asks of :class:`~toolscout.search.keyword.KeywordBackend` (a
    protocol, so this module does not import the backend that imports it)."""

    def max_score(self, query: str) -> float: ...
    def rank(self, query: str, limit: int, mask: np.ndarray | None = None, count: bool = True) -> tuple[list[Hit], int]: ...
    def scores(self, query: str) -> tuple[np.ndarray, list[tuple[str, int]]]: ...
    def top(self, scores: np.ndarray, used: list[tuple[str, int]], limit: int) -> tuple[list[Hit], int]: ...
    def matches(self, query: str, doc: int) -> bool: ...


class KeywordRanking(Ranking):
    """Keyword mode's ranking: BM25F scores of the (possibly rewritten) text. Without a
    rescoring signal it takes :meth:`KeywordBackend.rank`'s path (no pass over every doc
    on a large catalog); with one, the dense score vector is rescored before the top k."""

    def __init__(self, backend: KeywordScorer, query: str, mask: np.ndarray) -> None:
        super().__init__("keyword", query)
        self._kw = backend
        self._mask = mask
        self._scores: np.ndarray | None = None  # the rescored, masked scores (rescored path)
        self._bound: float | None = None

    @property
    def bound(self) -> float:
        if self._bound is None:
            self._bound = self._kw.max_score(self.text) or 1.0
        return self._bound

    def cut(self, limit: int) -> tuple[list[Hit], int]:
        kw, text, mask = self._kw, self.text, self._mask
        bound = self.bound
        if not self.rescores:  # no pass over every doc (docs/search.md#scaling)
            return kw.rank(text, limit, None if mask.all() else mask, self.counted)
        scores, used = kw.scores(text)
        scores = np.where(mask, self.adjusted(scores, bound), 0.0)  # bounded: a share of a full match
        self._scores = scores
        return kw.top(scores, used, limit)

    def matched(self, doc: int) -> bool:
        if self._scores is None:
            return self._kw.matches(self.text, doc)
        return bool(self._scores[doc] > 0)

    def relevance(self, score: float, hits: Sequence[Hit]) -> float:
        return min(1.0, score / self.bound)
