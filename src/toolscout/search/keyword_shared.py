"""A multi-step request's keyword sums, shared by its sub-searches on a large catalog.

A request of several steps is ranked in each sub-intent and whole
(:meth:`toolscout.search.index.ToolIndex._rank`). On a large catalog each keyword search
adds every posting of its terms into a float32 accumulator (the step that costs most: ~1.7
ns a posting, a million postings for a long request at a million tools), so the whole
request read again every posting its sub-intents had just read.

Here the sub-searches run first, and each whose terms are all the whole request's and none
yet counted adds its accumulator, already summed, into a second one (one pass over the docs
in memory order, a fraction of re-reading the postings); the whole request's search then
reads only the postings of the terms no sub-search brought. The whole request's
accumulator then holds the same terms' scores summed in another order, which the top-k's
float32 margin allows for (:func:`~toolscout.search.sparse.candidate_pool`: a bound that
holds for any order of positive float32 additions), and its hits are scored again exactly
as before (float64, query-term order): the same hits, scores and counts.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RequestSums"]


class RequestSums:
    """One request's shared sums (see the module docstring): ``acc`` is a zeroed float32
    vector over every doc, ``whole`` the whole request's term ids."""

    def __init__(self, acc: np.ndarray, whole: list[int]) -> None:
        self._acc: np.ndarray | None = acc
        self._whole = frozenset(whole)
        self._added: set[int] = set()
        self.dirty = False
        """Whether ``acc`` holds sums (to be zeroed when the request ends)."""

    def offer(self, ids: list[int], summed: np.ndarray) -> None:
        """A sub-search summed the terms ``ids`` into ``summed``: add its sums to the whole
        request's when those terms are the whole request's and none was added yet."""
        acc, terms = self._acc, set(ids)
        if acc is None or not terms <= self._whole or terms & self._added:
            return
        np.add(acc, summed, out=acc)
        self._added |= terms
        self.dirty = True

    def take(self, ids: list[int]) -> tuple[np.ndarray, list[int]] | None:
        """For the whole request's search (``ids``: exactly its terms): the accumulator with
        the sub-searches' sums, and the terms still to add; once. ``None`` for any other
        search, or when no sub-search added anything."""
        acc = self._acc
        if acc is None or not self._added or frozenset(ids) != self._whole or len(ids) != len(self._whole):
            return None
        self._acc = None
        return acc, [i for i in ids if i not in self._added]
