"""A mode's ranking of one query, as the finishing step's signals see it.

Every mode (keyword, regex, semantic, hybrid, any registered one) answers with a
:class:`Ranking`: nothing is computed until the finishing step (:func:`toolscout.search.signals.finish`)
cuts it, so a signal can still change what the mode matches (:meth:`Ranking.match_text`),
the scores the top k is taken from (:meth:`Ranking.rescore`) and what goes first whatever
the scores (:meth:`Ranking.pin`). A mode says how its scores become hits (:meth:`Ranking.cut`);
it never applies a signal itself.

A ranking that only has hits (a third-party backend or ranker returning ``list[Hit]``) is
a :class:`HitsRanking`: signals can pin in it, not rescore it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from ..model import Tool
from .hit import Hit

__all__ = ["Adjust", "Explain", "HitsRanking", "Ranking", "Ranks", "Rescore", "ScoredTool"]

Adjust = Callable[[np.ndarray, float], np.ndarray]
"""``(scores, bound) -> scores`` (may modify ``scores``): a signal's change to every doc's
score; ``bound`` is a full match's score, so a bounded boost is a share of it."""
Explain = Callable[[Sequence[int], Sequence[float] | None, float], dict[int, float]]
"""``(docs, scores, bound) -> {doc: what the signal added}``, in relevance units (a share of
``bound``); ``scores``: the hits' final scores, or ``None`` where they are not the rescored
scores themselves (a fused mode), then only the signal's own addition is reported."""


@dataclass(frozen=True, slots=True)
class ScoredTool:
    tool: Tool
    score: float
    relevance: float  # 0..1; see ToolIndex.search
    why: str = ""
    usage: float = 0.0
    """What learned usage added, in relevance units (:mod:`toolscout.search.learning`)."""
    parts: tuple[tuple[str, float], ...] = ()
    """The score taken apart: the mode's own share, then each signal's (they add up to
    ``score``); a pinned tool's score is all its signal's."""
    intent: str | None = None
    """The sub-intent of a multi-step request this tool was found for
    (:mod:`~toolscout.search.subintents`); ``None`` for a single-intent request."""


@dataclass(frozen=True, slots=True)
class Rescore:
    signal: str
    adjust: Adjust
    explain: Explain


class Ranking:
    """One query's ranking in one mode, before the finishing step (module docstring)."""

    linear = True
    """Whether a hit's score is the rescored score itself (then each signal's share of it is
    known exactly and named in ``why``); a fused mode's score only grows with it."""
    rescorable = True
    """Whether signals can change the scores before the cut (a list of hits cannot)."""
    counted = True
    """Whether the caller reads :meth:`cut`'s total: a sub-search of a multi-step request
    does not (only its hits), so a mode may skip counting its matches and give the hits'
    number (a million-tool keyword search saves a pass over every doc)."""

    def __init__(self, mode: str, query: str) -> None:
        self.mode = mode
        self.query = query
        self.text = query
        """What word matching reads (a signal may rewrite it: :mod:`~toolscout.search.intent`)."""
        self.rescores: list[Rescore] = []
        self.pins: list[tuple[int, str]] = []
        self.warnings: list[str] = []

    # -- what signals call ----------------------------------------------------------------
    def match_text(self, text: str) -> None:
        """Match ``text`` instead of the query's words (modes that match no words ignore it)."""
        self.text = text

    def rescore(self, signal: str, adjust: Adjust, explain: Explain) -> None:
        """Change every doc's score before the top k is taken (in the order signals ask)."""
        if self.rescorable:
            self.rescores.append(Rescore(signal, adjust, explain))

    def pin(self, doc: int, signal: str) -> None:
        """Put ``doc`` first, at the top score, whatever it scored (after AutoCut)."""
        self.pins.append((doc, signal))

    # -- what the finishing step calls ----------------------------------------------------
    def adjusted(self, scores: np.ndarray, bound: float) -> np.ndarray:
        """``scores`` after every signal's rescoring, in order (for :meth:`cut`)."""
        for r in self.rescores:
            scores = r.adjust(scores, bound)
        return scores

    @property
    def bound(self) -> float:
        """A full match's score: what rescoring boosts are a share of."""
        return 1.0

    def cut(self, limit: int) -> tuple[list[Hit], int]:
        """The best ``limit`` hits after rescoring, best first, and how many docs matched."""
        raise NotImplementedError

    def matched(self, doc: int) -> bool:
        """Whether ``doc`` is counted in :meth:`cut`'s total (asked after the cut)."""
        return False

    def parts(self, hits: Sequence[Hit]) -> dict[int, tuple[tuple[str, float], ...]] | None:
        """A fused mode's own split of each hit's score into named parts adding up to it,
        signals' shares included (asked after the cut); ``None``: the finishing step splits
        a linear score itself, else the mode's score is one part."""
        return None

    def relevance(self, score: float, hits: Sequence[Hit]) -> float:
        """0..1 for a hit's ``score``: by default its share of the best hit's."""
        top = hits[0].score if hits and hits[0].score > 0 else 1.0
        return max(0.0, min(1.0, score / top))


class HitsRanking(Ranking):
    """A mode that answers with hits only: ``produce(text, limit)``, filtered to ``mask``."""

    linear = False
    rescorable = False

    def __init__(self, mode: str, query: str, produce: Callable[[str, int], Sequence[Hit]], mask: np.ndarray) -> None:
        super().__init__(mode, query)
        self._produce = produce
        self._mask = mask

    def cut(self, limit: int) -> tuple[list[Hit], int]:
        ranked = self._produce(self.text, limit)
        self.warnings.extend(getattr(ranked, "warnings", ()))  # e.g. hybrid's keyword fallback
        mask = self._mask
        hits = [h for h in ranked if 0 <= h.doc < len(mask) and mask[h.doc]]
        return hits[:limit], len(hits)


@runtime_checkable
class Ranks(Protocol):
    """A backend capability (:mod:`toolscout.search.base`): a ranking signals may rescore
    before the top k is taken."""

    def ranking(self, query: str, mask: np.ndarray) -> Ranking:
        """This query's ranking within ``mask``, computed when the finishing step cuts it."""
