"""One query's usage prior: the boost and sink a ranking applies, bounded so one voter's
evidence can close a gap but never flip a ranking.

Split from :mod:`.learning` (which builds it) because every ranking mode reads it through
:mod:`.signals` without needing the learner.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["NO_DOCS", "NO_VALS", "Prior"]

NO_DOCS = np.zeros(0, np.int64)
_MARGIN_SHARE = 1.0 / 3.0
"""The share of the gap to its neighbour that one voter's evidence may move a tool by: a
third, so a lift and its neighbour's drop together stay below the gap."""
NO_VALS = np.zeros(0, np.float64)


@dataclass(frozen=True, slots=True)
class Prior:
    """One query's prior: ``boost`` (relevance units, summed over ``docs``; a doc may repeat)
    or ``dense`` (the boost of every doc, when that was cheaper), and ``sink`` (a per-doc
    score multiplier, or ``None``)."""

    docs: np.ndarray
    boost: np.ndarray
    sink: np.ndarray | None
    dense: np.ndarray | None = None
    capped: np.ndarray = dataclasses.field(default_factory=lambda: NO_DOCS)
    """Docs moved on one voter's evidence alone (no key of the query has a second principal
    agreeing): a lift is bounded by a third of the margin to the doc just above, a drop by a
    third of the margin to the doc just below, so one vote (a lift of one tool and a drop of
    its neighbour together) can close a gap but never flip a ranking (issue 32: one session
    moved a tool from #3 to #1)."""
    applied: dict[int, float] = dataclasses.field(default_factory=dict)
    """What :meth:`apply` really added to each capped doc (relevance units), for :meth:`of`."""

    def _boosts(self, docs: np.ndarray) -> np.ndarray:
        if self.dense is not None:
            return self.dense[docs]
        out = np.zeros(len(docs), np.float64)
        for i, doc in enumerate(docs.tolist()):
            out[i] = float(self.boost[self.docs == doc].sum())
        return out

    def apply(self, scores: np.ndarray, bound: float) -> np.ndarray:
        """``scores`` (modified in place) with the sink and the boost (``bound``: a full
        match's score, so the boost is at most ``max_boost`` of it); a :attr:`capped` doc's
        boost is bounded by the margin it would have to overturn."""
        if self.sink is not None:
            scores *= self.sink
        cut: dict[int, float] = {}
        if len(self.capped) and bound > 0:
            for doc, boost in zip(self.capped.tolist(), self._boosts(self.capped).tolist(), strict=True):
                if boost == 0:
                    continue
                own = float(scores[doc])
                if boost > 0:
                    above = scores[scores > own]
                    margin = float(above.min()) - own if len(above) else math.inf
                    cut[doc] = min(boost, _MARGIN_SHARE * margin / bound)
                else:
                    below = scores[(scores < own) & (scores > 0)]
                    margin = own - float(below.max()) if len(below) else math.inf
                    cut[doc] = max(boost, -_MARGIN_SHARE * margin / bound)
            self.applied.clear()
            self.applied.update(cut)
        if self.dense is not None:
            if cut:
                dense = self.dense.copy()
                dense[list(cut)] = list(cut.values())
                scores += dense * bound
            else:
                scores += self.dense * bound
        elif len(self.docs):
            boost = self.boost
            if cut:
                boost = boost.copy()
                for doc, value in cut.items():
                    at = np.flatnonzero(self.docs == doc)
                    boost[at] = 0.0
                    boost[at[0]] = value
            np.add.at(scores, self.docs, boost * bound)
        return scores

    def of(self, docs: Sequence[int], scores: Sequence[float] | None = None, bound: float = 1.0) -> dict[int, float]:
        """What usage changed for each of ``docs`` (the hits), in relevance units: the boost,
        minus what the sink took when the hits' final ``scores`` (and ``bound``) are given."""
        out: dict[int, float] = {}
        if self.dense is not None:
            out = {doc: value for doc, value in zip(docs, self.dense[list(docs)].tolist(), strict=True) if value}
        elif len(self.docs) and docs:
            sel = (self.docs[:, None] == np.asarray(docs)[None, :]).any(axis=1)  # few hits: cheaper than isin
            for doc, value in zip(self.docs[sel].tolist(), self.boost[sel].tolist(), strict=True):
                out[doc] = out.get(doc, 0.0) + value
        for doc in docs:
            if doc in self.applied:
                out[doc] = self.applied[doc]
        if self.sink is not None and scores is not None and bound > 0:
            for doc, score in zip(docs, scores, strict=True):
                factor = float(self.sink[doc])
                if factor < 1.0:  # score = base * factor + boost * bound
                    base = (score - out.get(doc, 0.0) * bound) / factor
                    out[doc] = out.get(doc, 0.0) - base * (1.0 - factor) / bound
        return out
