"""Ranking signals, applied in one finishing step after every mode's ranking.

A signal is what ranking knows besides a backend's scores: that the query *is* a tool's
name, what past sessions called for such a query (learned usage), what the request asks a
tool to do apart from the values it carries (intent). Each is a small object with a
``name`` and ``apply(ranked, query, context) -> ranked``; the index runs
:func:`finish` once per search, whatever the mode, and no mode applies a signal itself.

A signal acts on a :class:`~toolscout.search.ranking.Ranking` before it is cut, in one of
three ways: it rewrites what word matching reads (:meth:`~toolscout.search.ranking.Ranking.match_text`),
it changes every doc's score before the top k is taken (:meth:`~toolscout.search.ranking.Ranking.rescore`,
with an ``explain`` that says what it added to each hit), or it pins a doc first
(:meth:`~toolscout.search.ranking.Ranking.pin`). :func:`finish` then cuts the ranking,
records each signal's share in the hit's ``parts`` (they add up to its score) and ``why``,
applies AutoCut and puts pinned docs first. Signals run in list order; the index's default
list is :func:`default_signals` (intent, usage, fuzzy name, exact name).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from ..model import Tool
from .autocut import autocut
from .intent import identifiers, matching_text, strip_leading
from .ranking import Ranking, ScoredTool
from .resolve import NameResolver

__all__ = [
    "ExactName",
    "FuzzyName",
    "Intent",
    "QueryPrior",
    "Signal",
    "SignalContext",
    "Usage",
    "UsagePrior",
    "default_signals",
    "finish",
]


@dataclass(frozen=True, slots=True)
class SignalContext:
    """What a signal may read about the search it finishes (one snapshot of the index)."""

    tools: Sequence[Tool]
    """Doc id -> tool."""
    generation: int
    """The catalog generation ``tools`` was taken at (learned evidence is cached by it)."""
    resolver: NameResolver
    mask: np.ndarray
    """The docs this request ranks."""
    named: np.ndarray
    """The docs it may name (``kinds`` aside: a caller who names an entry gets it)."""
    terms: Callable[[str], list[str] | None] = lambda query: None
    """The query's analysed terms when the keyword backend has them (shared, not re-analysed)."""


@runtime_checkable
class Signal(Protocol):
    name: str

    def apply(self, ranked: Ranking, query: str, context: SignalContext) -> Ranking:
        """``ranked`` with this signal's change asked for (the finishing step carries it out)."""


class QueryPrior(Protocol):
    def apply(self, scores: np.ndarray, bound: float) -> np.ndarray: ...
    def of(self, docs: Sequence[int], scores: Sequence[float] | None = None, bound: float = 1.0) -> dict[int, float]: ...


class UsagePrior(Protocol):
    """What ranking needs from a usage learner (:class:`toolscout.search.learning.UsageLearner`)."""

    def prior(
        self, query: str, tools: Sequence[Tool], generation: int, terms: Sequence[str] | None = None
    ) -> QueryPrior | None: ...


class Intent:
    """Word matching reads what the request asks a tool to do, without the message or
    quoted values it carries and with the verb tool names use (:mod:`~toolscout.search.intent`)."""

    name = "intent"

    def apply(self, ranked: Ranking, query: str, context: SignalContext) -> Ranking:
        ranked.match_text(matching_text(query))
        return ranked

    def __repr__(self) -> str:
        return "Intent()"


class Usage:
    """Learned usage (:mod:`toolscout.search.learning`): a bounded boost of the tools sessions called
    for such queries, and a sink for tools shown often and never called, applied to the
    mode's scores before the top k is taken (so it can lift a tool into the results)."""

    name = "usage"

    def __init__(self, learner: UsagePrior | None = None) -> None:
        self.learner = learner

    def prior(self, query: str, context: SignalContext) -> QueryPrior | None:
        """This query's prior over ``context.tools`` (``None``: usage changes nothing)."""
        if self.learner is None:
            return None
        return self.learner.prior(query, context.tools, context.generation, context.terms(query))

    def apply(self, ranked: Ranking, query: str, context: SignalContext) -> Ranking:
        if not ranked.rescorable:  # a ranker's own hits: nothing to rescore, nothing to learn from
            return ranked
        prior = self.prior(query, context)
        if prior is not None:
            ranked.rescore(self.name, prior.apply, prior.of)
        return ranked

    def __repr__(self) -> str:
        return f"Usage({self.learner!r})"


class ExactName:
    """A query that is an allowed tool's name (quoted, backticked, any case, ``-``/``.``/space
    for ``_``) returns that tool first in every mode, at the top score, relevance 1."""

    name = "exact name"

    def apply(self, ranked: Ranking, query: str, context: SignalContext) -> Ranking:
        doc = context.resolver.exact(query, context.named)
        if doc is not None:
            ranked.pin(doc, self.name)
        return ranked

    def __repr__(self) -> str:
        return "ExactName()"


_NAME_WORDS = 3
"""A query of at most this many words (politeness stripped) may be a tool's name."""


class FuzzyName:
    """A request that spells a tool's name with a typo or only in part (``create_invoise``,
    ``current_time``, "run `send_emial`") lifts the closest allowed names (seed 002's LIKE
    leg): each by its similarity (rapidfuzz, 0.6..1) times a full match, before the top k
    is taken, so it is found even when no word of it is indexed. Cheap by construction: it
    runs only when the query is an identifier (``snake_case``, dotted, camelCase, kebab-case
    with a digit; at most a few words around it) or backticks one, and no tool is named
    exactly, and looks only at names (a trigram shortlist). ``hybrid`` fuses its own name leg, so this signal leaves it alone."""

    name = "name"

    def __init__(self, per_identifier: int = 3, cutoff: float = 0.6) -> None:
        self.per_identifier = per_identifier
        self.cutoff = cutoff

    def apply(self, ranked: Ranking, query: str, context: SignalContext) -> Ranking:
        if ranked.mode == "hybrid" or not ranked.rescorable:
            return ranked
        # A name asked for: the query is one (or a few words around one: "run create_invoise"),
        # or it is backticked. An identifier inside a longer request is usually a value
        # ("set phone_number to ...", "the eBook ..."), not the tool.
        ticked = "`" in query
        if not ticked and query.count(" ") >= _NAME_WORDS + 8:  # a long request: no name (and no regex run)
            return ranked
        short = len(strip_leading(query).split()) <= _NAME_WORDS
        if not (short or ticked):
            return ranked
        idents = [i for i in identifiers(query) if short or f"`{i}`" in query][:3]
        if not idents or context.resolver.exact(query, context.named) is not None:
            return ranked
        close: dict[int, float] = {}
        for ident in idents:
            for name, similarity in context.resolver.close(ident, self.per_identifier, self.cutoff):
                for doc in context.resolver.docs_named(name):
                    if context.mask[doc]:
                        close[doc] = max(close.get(doc, 0.0), similarity)
        if not close:
            return ranked
        docs = np.fromiter(close, np.int64, len(close))
        lift = np.fromiter(close.values(), np.float64, len(close))

        def adjust(scores: np.ndarray, bound: float) -> np.ndarray:
            scores[docs] += lift * bound
            return scores

        def explain(hits: Sequence[int], scores: Sequence[float] | None, bound: float) -> dict[int, float]:
            return {d: close[d] for d in hits if d in close}

        ranked.rescore(self.name, adjust, explain)
        return ranked

    def __repr__(self) -> str:
        return f"FuzzyName(per_identifier={self.per_identifier}, cutoff={self.cutoff})"


def default_signals(usage: Usage | None = None) -> list[Signal]:
    """Intent, learned usage, fuzzy name, exact name: the order the finishing step applies them in."""
    return [Intent(), usage if usage is not None else Usage(), FuzzyName(), ExactName()]


def finish(
    ranked: Ranking,
    signals: Sequence[Signal],
    query: str,
    context: SignalContext,
    *,
    limit: int,
    autocut_rule: str = "none",
) -> tuple[list[ScoredTool], int]:
    """Apply ``signals`` to ``ranked``, cut it, explain each hit; (hits, total matches).

    The hits are at most ``limit``; AutoCut (``autocut_rule``) shortens the list before
    pinned docs go first; a pinned doc the mode had not counted adds one to the total."""
    for signal in signals:
        ranked = signal.apply(ranked, query, context)
    hits, total = ranked.cut(limit)
    tools = context.tools
    linear = ranked.linear
    bound = ranked.bound if linear and ranked.rescores else 1.0
    docs = [h.doc for h in hits]
    added = [
        (r.signal, r.explain(docs, [h.score for h in hits], bound) if linear else r.explain(docs, None, 1.0))
        for r in ranked.rescores
    ]
    inner = ranked.parts(hits)  # a fused mode that can take its own scores apart
    scored: list[ScoredTool] = []
    for h in hits:
        why, usage, parts = h.why, 0.0, ((ranked.mode, h.score),)
        if inner is not None and h.doc in inner:
            parts = inner[h.doc]
        if added:
            shares = [(name, by_doc.get(h.doc, 0.0)) for name, by_doc in added]
            for name, value in shares:
                if name == Usage.name:
                    usage = value
            if linear:
                for name, value in shares:
                    if value:
                        why = f"{why} + {name}"
                own = h.score - sum(value * bound for _, value in shares)
                parts = ((ranked.mode, own), *((name, value * bound) for name, value in shares if value))
        scored.append(ScoredTool(tools[h.doc], h.score, ranked.relevance(h.score, hits), why, usage, parts))
    if autocut_rule != "none" and scored:
        scored = scored[: autocut([s.score for s in scored], autocut_rule)]
    if ranked.pins:
        top_score = max([s.score for s in scored], default=1.0)
        pinned: list[ScoredTool] = []
        for doc, signal in ranked.pins:
            tool = tools[doc]
            rest = [s for s in scored if s.tool.name != tool.name]
            total += 0 if len(rest) < len(scored) or ranked.matched(doc) else 1
            scored = rest
            pinned.append(ScoredTool(tool, top_score, 1.0, signal, 0.0, ((signal, top_score),)))
        scored = [*pinned, *scored]
    return (scored[:limit] if limit else []), total
