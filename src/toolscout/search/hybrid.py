"""Hybrid search: keyword + dense signals, each weighted by its own confidence per query.

Why not plain Reciprocal Rank Fusion: RRF gives every backend's list the same say on every
query. On tool retrieval one backend is often plainly right and the other lost (a query
using a tool's own words vs. a paraphrase that shares no word with it), and equal-weight RRF
then drags the right answer down: peers' RRF hybrids score below their own best single
backend (docs/hybrid.md has the measurements).

The rule (confidence-weighted standardised scores):

1. Each backend contributes only what it really returned: keyword docs with a positive
   BM25F score, dense docs with a positive similarity, at most ``POOL`` each; never a
   zero-score tail.
2. Each list is standardised over its own candidates: ``z = (score - mean) / std``. Scores
   of different backends are then on one scale, whatever the model or BM25 parameters.
3. The z of a backend's best doc is its confidence for this query: large when one tool
   stands far above the backend's other candidates (it is sure), small when its scores are
   flat (it is guessing). Each list is weighted by that confidence, so for each query the
   sure backend leads; no weight is fixed per data set.
4. A doc's fused score is ``sum over backends of confidence * max(z, 0)`` (a doc below
   its list's mean adds nothing), plus a tiny rank term so every returned doc keeps a place;
   hits carry its square root (the same order, on the linear scale AutoCut's ratio expects).
5. Identifiers in the request: a tool named exactly inside a longer request goes first; a
   close name (did-you-mean) is lifted by one deviation. A query that *is* a tool name is
   answered by the index's exact-name signal in every mode; ``hybrid`` then fills the rest
   of the list from keyword search without running the model (the first result is decided).

Both modes answer with a :class:`~toolscout.search.ranking.Ranking` and apply no signal
themselves: the index's finishing step (:mod:`~toolscout.search.signals`) rewrites the
keyword side's text (intent) and rescores the scores signals may change (``semantic``: the
dense similarities; ``hybrid``: the keyword side, before fusion) before the cut.
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import embed
from ..accounting.telemetry import stage
from ..errors import EmbeddingUnavailable, MissingExtra
from ..progress import step
from .base import Hit, top_docs
from .dense import DenseBackend
from .intent import message_action, strip_leading, verb_variant
from .ranking import Ranking
from .subintents import split_intents

if TYPE_CHECKING:
    from ..embed.base import Embedder
    from ..embed.cache import BlobStore
    from ..model import Tool
    from .index import ToolIndex
    from .keyword import KeywordBackend

__all__ = ["POOL", "FusionInput", "Variant", "confidences", "fuse", "rewrite", "standardise"]

POOL = 100  # candidates taken from each backend
_DENSE_VARIANTS = ("clause", "action", "verb")  # embedded besides the query; a doc scores its best
_TIE = 1e-3  # weight of the rank term that orders docs no z-score lifted


@dataclass(frozen=True, slots=True)
class Variant:
    """One rewritten form of the query and its weight in the cross-variant fusion."""

    text: str
    weight: float
    kind: str  # "original" | "stripped" | "action" | "verb" | "clause" | "identifier"


# A request with several sentences or steps often needs several tools; one vector of the
# whole text averages them away, so each clause is also matched on its own (dense side).
_CLAUSES = re.compile(r"(?<=[.!?;])\s+|\s+(?:and then|then|also|additionally)\s+", re.I)
_CLAUSE_WORDS = 3
_IDENT = re.compile(r"`([^`]+)`|\b([A-Za-z][A-Za-z0-9]*(?:[_.:/-][A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*)\b")


def rewrite(query: str) -> list[Variant]:
    """Weighted variants of the query (seed 002): the original; a form without leading
    question/politeness words; the request without the message or quoted values it carries
    and with the verb tool names use (:mod:`~toolscout.search.intent`); each clause of a
    multi-part request; identifiers it names (``write_file``, ``getWeather``)."""
    q = " ".join(query.split())
    variants = [Variant(q, 1.0, "original")]
    stripped = strip_leading(q)
    if stripped and stripped.lower() != q.rstrip("?!. ").lower():
        variants.append(Variant(stripped, 0.8, "stripped"))
    action = message_action(stripped)
    if action and all(v.text != action for v in variants):
        variants.append(Variant(action, 1.0, "action"))
    verb = verb_variant(action or stripped)
    if verb and all(v.text != verb for v in variants):
        variants.append(Variant(verb, 1.0, "verb"))
    clauses = [c.strip(" ,") for c in _CLAUSES.split(q)]
    clauses = [c for c in clauses if len(c.split()) >= _CLAUSE_WORDS]
    if len(clauses) > 1:
        variants += [Variant(c, 1.0, "clause") for c in clauses]
    for m in _IDENT.finditer(q):
        ident = (m.group(1) or m.group(2)).strip()
        if ident and ident != q and all(v.text != ident for v in variants):
            variants.append(Variant(ident, 0.6, "identifier"))
    return variants


@dataclass(slots=True)
class FusionInput:
    """What the backends returned for one query (only real hits, best first)."""

    kw_docs: np.ndarray
    kw_scores: np.ndarray
    dense_docs: np.ndarray
    dense_scores: np.ndarray


def standardise(scores: np.ndarray) -> np.ndarray:
    """z-scores over one backend's candidates; a lone hit counts as one deviation up."""
    if len(scores) <= 1:
        return np.ones(len(scores))
    std = float(scores.std())
    return (scores - scores.mean()) / std if std > 1e-12 else np.zeros(len(scores))


def confidences(inp: FusionInput) -> tuple[float, float]:
    """(keyword, dense) confidence for this query: the z-score of each backend's best doc."""
    zk = standardise(inp.kw_scores)
    zd = standardise(inp.dense_scores)
    return (float(zk[0]) if len(zk) else 0.0, float(zd[0]) if len(zd) else 0.0)


def fuse(
    inp: FusionInput,
    limit: int,
    *,
    exact: Sequence[int] = (),
    fuzzy: Sequence[int] = (),
    parts: dict[int, dict[str, float]] | None = None,
) -> list[Hit]:
    """Sum of positive z-scores over the backends (module docstring), best first.

    ``fuzzy``: docs whose name is close to an identifier in the query (did-you-mean), lifted
    by one deviation, as a lone hit of a third backend would be. ``exact``: docs the query
    names exactly inside a longer request ("run list_files now"); they go first.
    ``parts``: filled with each returned doc's terms of the fused sum (``keyword``,
    ``semantic``, ``name``, ``rank``: the tie term; ``exact name``), which add up to the
    square of its score.
    """
    # Array arithmetic over the two lists (a few hundred candidates: the loop over them in
    # Python was ~0.5 ms a search), in the order the sum is defined: keyword share, its rank
    # term, semantic share, its rank term; the same floats as adding them one by one.
    lists = []
    for docs, raw in ((inp.kw_docs, inp.kw_scores), (inp.dense_docs, inp.dense_scores)):
        docs = np.asarray(docs, np.int64)
        z = standardise(np.asarray(raw, np.float64))
        n = len(docs)
        weight = max(float(z[0]), 0.0) if n else 0.0  # this backend's confidence for the query
        share = weight * np.maximum(z, 0.0)
        tie = _TIE * (n - np.arange(n)) / n if n else np.zeros(0)
        lists.append((docs, z, share, tie))
    (kd, kz, ks, kt), (dd, dz, ds, dt) = lists
    fuzzy = [int(d) for d in fuzzy]
    exact = [int(d) for d in exact]
    every = np.unique(np.concatenate([kd, dd, np.asarray(fuzzy, np.int64)]))
    k_at = np.searchsorted(every, kd)
    d_at = np.searchsorted(every, dd)
    total = np.zeros(len(every))
    total[k_at] = ks + kt
    semantic = np.zeros(len(every))
    semantic[d_at] = ds
    total += semantic
    semantic_tie = np.zeros(len(every))
    semantic_tie[d_at] = dt
    total += semantic_tie
    if fuzzy:
        total[np.searchsorted(every, np.asarray(fuzzy, np.int64))] += 1.0
    scores = dict(zip(every.tolist(), total.tolist(), strict=True))
    if exact:
        top = max(scores.values(), default=0.0) + 1.0
        for i, d in enumerate(exact):
            scores[d] = top + len(exact) - i
    order = sorted(scores, key=lambda d: (-scores[d], d)) if exact else None
    if order is None:
        pick = np.lexsort((every, -total))[:limit] if limit > 0 else np.zeros(0, np.int64)
        ranked = every[pick].tolist()
    else:
        ranked = order[:limit]
    kw_pos = dict(zip(kd.tolist(), range(len(kd)), strict=True))
    dense_pos = dict(zip(dd.tolist(), range(len(dd)), strict=True))
    fuzzy_set = set(fuzzy)
    hits: list[Hit] = []
    for d in ranked:
        terms: dict[str, float] = {}
        why: list[str] = []
        if d in exact:
            terms = {"exact name": scores[d]}
            why = ["exact name"]
        else:
            i = kw_pos.get(d)
            if i is not None:
                terms["keyword"] = 0.0 + float(ks[i])
                terms["rank"] = 0.0 + float(kt[i])
                if kz[i] > 0:
                    why.append("keyword")
            j = dense_pos.get(d)
            if j is not None:
                terms["semantic"] = 0.0 + float(ds[j])
                terms["rank"] = terms.get("rank", 0.0) + float(dt[j])
                if dz[j] > 0:
                    why.append("semantic")
            if d in fuzzy_set:
                terms["name"] = 1.0
                why.append("name")
        if parts is not None:
            parts[d] = terms
        # A fused score grows with confidence x z, i.e. with the square of how far a doc stands
        # out; its square root is back on the linear scale AutoCut's ratio rule assumes (on the
        # raw sum AutoCut cut 1.4-3.0% of relevant tools away on the public sets, keyword's 0-1.4%).
        hits.append(Hit(d, math.sqrt(scores[d]), "hybrid: " + "+".join(why or ["weak"])))
    return hits


class Ranked(list[Hit]):
    """A ranker's hits plus warnings for the result metadata (e.g. a keyword fallback)."""

    def __init__(self, hits: Sequence[Hit] = (), warnings: Sequence[str] = ()) -> None:
        super().__init__(hits)
        self.warnings = list(warnings)


def keyword_input(
    kw: KeywordBackend, query: str, mask: np.ndarray | None, pool: int = POOL, prior: Any = None
) -> tuple[np.ndarray, np.ndarray]:
    """The keyword backend's real hits (positive score, allowed), best first. ``prior``: any
    ``apply(scores, bound)`` (the signals' rescoring), applied as in keyword mode."""
    if prior is None and kw.sparse:  # no float pass over every doc (docs/search.md#scaling-a-million-tools)
        hits, _total = kw.rank(query, pool, mask)
        docs = np.array([h.doc for h in hits if h.score > 0], np.int64)
        return docs, np.array([h.score for h in hits if h.score > 0], np.float64)
    scores, _used = kw.scores(query)
    if prior is not None:
        scores = prior.apply(scores, kw.max_score(query) or 1.0)
    if mask is not None and len(scores):
        scores = np.where(mask, scores, 0.0)
    return _top(scores, pool, 0.0)


def dense_input(
    dense: DenseBackend, query: str, mask: np.ndarray | None, pool: int = POOL, variants: Sequence[Variant] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The dense backend's candidates above its similarity floor, best first; a doc's score
    is its best similarity to the query or to one of :func:`dense_variants`. ``variants``:
    the query's :func:`rewrite`, when the caller has it already."""
    scores = dense.scores(query, dense_variants(query, variants)).astype(np.float64)
    if mask is not None and len(scores):
        scores = np.where(mask, scores, -np.inf)
    return _top(scores, pool, dense.min_score)


def dense_variants(query: str, variants: Sequence[Variant] | None = None) -> list[str]:
    """The texts the dense leg embeds besides ``query`` (a doc scores its best similarity
    over all of them): the request without its message (``action``), with the verb tool
    names use (``verb``), and each clause of a multi-part request."""
    variants = rewrite(query) if variants is None else variants
    return [v.text for v in variants if v.kind in _DENSE_VARIANTS]


@functools.lru_cache(maxsize=256)
def _asks_several(query: str) -> bool:
    """Whether the request has several sub-intents (then its parts are searched too)."""
    return len(split_intents(query)) > 1


def _plain(text: str) -> str:
    """Lower-case words only: a part found inside a clause whatever the punctuation."""
    return " ".join(_NOT_WORD.sub(" ", text.lower()).split())


_NOT_WORD = re.compile(r"[^\w]+")


def _squash(text: str) -> str:
    return " ".join(text.split())


def _top(scores: np.ndarray, pool: int, floor: float) -> tuple[np.ndarray, np.ndarray]:
    docs = top_docs(scores, pool, floor)  # ties at the cut go to the earlier tools, as in keyword mode
    return docs, scores[docs].astype(np.float64)


class HybridSearch:
    """Adds the ``semantic`` and ``hybrid`` modes to a :class:`~toolscout.search.index.ToolIndex`.

    The dense index follows the catalog lazily: when the index's tool list changes, the next
    query re-embeds only tools whose text changed (the vector cache keeps the rest). If the
    model or endpoint fails, ``hybrid`` answers from keyword search and ``semantic`` returns
    nothing, both with a warning; neither raises.
    """

    def __init__(self, index: ToolIndex, dense: DenseBackend) -> None:
        self.index = index
        self.dense = dense
        self._built: list[Tool] | None = None
        self._error: str | None = None
        self._lock = threading.Lock()
        self._local = threading.local()  # this thread's request: its parts' clauses (prime)

    def _ensure(self) -> str | None:
        """Bring the dense index up to date; the error text if embeddings are unusable."""
        tools = self.index.tools
        with self._lock:
            if tools is not self._built:
                try:
                    self.dense.rebuild(tools)
                    self._error = None
                except EmbeddingUnavailable as exc:
                    self._error = exc.message
                self._built = tools
            return self._error

    def prime(self, queries: list[str]) -> None:
        """Embed every text the dense leg will ask for across ``queries`` (a request and its
        sub-intents: each query and its :func:`dense_variants`) in one encoder call; the
        searches then find them in the LRU.

        A sub-intent found inside a clause of another of ``queries`` ("email it to the
        customer" in "Then email it to the customer.") is not embedded again: its own search,
        next on this thread, reads that clause's vector (and its products with the tools)
        instead, one encoding less for nearly the same words. Only a clause that holds no
        other sub-intent stands for one."""
        if self._ensure() is not None:
            return
        clauses = [(q, v.text) for q in queries if _asks_several(q) for v in rewrite(q) if v.kind == "clause"]
        held: dict[str, list[str]] = {}  # clause -> the other queries inside it
        for query in queries:
            words = _plain(query)
            for q, clause in clauses:
                if q != query and words and f" {words} " in f" {_plain(clause)} ":
                    held.setdefault(clause, []).append(query)
        # A clause holding two parts ("... and email it") stands for neither: each keeps its own.
        aliases = {_squash(parts[0]): clause for clause, parts in held.items() if len(set(parts)) == 1}
        self._local.aliases = aliases
        texts = [t for q in queries for a in (aliases.get(_squash(q), q),) for t in (a, *dense_variants(a))]
        try:
            self.dense.warm(texts)
        except EmbeddingUnavailable:
            return  # each search then reports it with its own warning

    def _names(self, variants: Sequence[Variant], mask: np.ndarray) -> tuple[list[int], list[int]]:
        """Docs named exactly, and docs with a close name, by identifiers in the query."""
        exact: list[int] = []
        fuzzy: list[int] = []
        names = self.index.resolver
        for variant in variants:
            if variant.kind != "identifier":
                continue
            docs = [d for d in names.docs_named(variant.text) if mask[d]]
            if docs:
                exact += [d for d in docs if d not in exact]
                continue
            for name in names.suggest(variant.text, 1):
                fuzzy += [d for d in names.docs_named(name) if mask[d] and d not in fuzzy]
        return exact, fuzzy

    def _is_a_name(self, query: str, mask: np.ndarray) -> bool:
        """The whole query is an allowed tool's name (agents often ask for one by name)."""
        return self.index.resolver.exact(query, mask) is not None

    def _dense(
        self, query: str, mask: np.ndarray, variants: Sequence[Variant] | None = None
    ) -> tuple[tuple[np.ndarray, np.ndarray] | None, list[str]]:
        error = self._ensure()
        alias = getattr(self._local, "aliases", {}).pop(_squash(query), None)  # see prime
        if alias is not None:
            query, variants = alias, None
        warnings = list(self.dense.warnings)
        self.dense.warnings.clear()
        if error is None:
            try:
                return dense_input(self.dense, query, mask, variants=variants), warnings
            except EmbeddingUnavailable as exc:
                error = exc.message
        return None, [*warnings, f"semantic search unavailable ({error}); keyword results only"]

    def semantic(self, query: str, limit: int, mask: np.ndarray) -> Ranking:
        """The ``semantic`` mode's ranking (cut by the index's finishing step)."""
        return SemanticRanking(self, query, mask)

    def hybrid(self, query: str, limit: int, mask: np.ndarray) -> Ranking:
        """The ``hybrid`` mode's ranking (cut by the index's finishing step)."""
        return HybridRanking(self, query, mask)


class SemanticRanking(Ranking):
    """Dense candidates (the pool above the similarity floor); a rescoring signal's boost
    is a share of the best similarity (the :attr:`bound`) and may bring in a doc outside
    the pool. A hit's score is its rescored similarity, so each signal's share is split out."""

    def __init__(self, search: HybridSearch, query: str, mask: np.ndarray) -> None:
        super().__init__("semantic", query)
        self._search = search
        self._mask = mask
        self._bound = 1.0

    @property
    def bound(self) -> float:
        return self._bound

    def cut(self, limit: int) -> tuple[list[Hit], int]:
        mask = self._mask
        dense, warnings = self._search._dense(self.query, mask)
        self.warnings.extend(warnings)
        if dense is None:
            return [], 0
        docs, scores = dense
        if self.rescores and len(docs):  # bounded: a share of the top similarity
            full = np.zeros(len(mask))
            full[docs] = scores
            self._bound = float(scores[0])
            full = np.where(mask, self.adjusted(full, self._bound), 0.0)
            docs, scores = _top(full, POOL, 0.0)
        hits = [Hit(int(d), float(s), "semantic") for d, s in zip(docs[:limit], scores[:limit], strict=True)]
        return hits, len(hits)


class HybridRanking(Ranking):
    """Keyword and dense candidates fused (module docstring). Signals rescore the keyword
    side before fusion, as in keyword mode; the fused score only grows with it."""

    linear = False

    def __init__(self, search: HybridSearch, query: str, mask: np.ndarray) -> None:
        super().__init__("hybrid", query)
        self._search = search
        self._mask = mask
        self._fused: dict[int, dict[str, float]] | None = None
        self._keyword: tuple[np.ndarray, np.ndarray, float] = (np.zeros(0, np.int64), np.zeros(0), 1.0)

    def cut(self, limit: int) -> tuple[list[Hit], int]:
        search, query, mask = self._search, self.query, self._mask
        kw = search.index.backend("keyword")
        rescore = self if self.rescores else None  # its ``apply`` is the signals' rescoring
        with stage("keyword"):
            kd, ks = keyword_input(kw, self.text, mask, prior=rescore)  # type: ignore[arg-type]
        keyword = [Hit(int(d), float(s), "keyword") for d, s in zip(kd[:limit], ks[:limit], strict=True)]
        self._keyword = (kd, ks, kw.max_score(self.text) or 1.0)
        self._fused = {h.doc: {"keyword": h.score} for h in keyword}  # until the dense side answers
        if search._is_a_name(query, mask):  # the exact-name signal puts that tool first; skip the model's ~10 ms
            return keyword, len(keyword)
        variants = rewrite(query)  # once: the dense side and the name signals both read it
        dense, warnings = search._dense(query, mask, variants)
        self.warnings.extend(warnings)
        if dense is None:
            return keyword, len(keyword)
        dd, ds = dense
        with stage("fusion"):
            exact, fuzzy = search._names(variants, mask)
            fused: dict[int, dict[str, float]] = {}
            hits = fuse(FusionInput(kd, ks, dd, ds), limit, exact=exact, fuzzy=fuzzy, parts=fused)
        self._fused = fused
        return hits, len(hits)

    def apply(self, scores: np.ndarray, bound: float) -> np.ndarray:
        """The signals' rescoring of the keyword side (what :func:`keyword_input` calls)."""
        return self.adjusted(scores, bound)

    def parts(self, hits: Sequence[Hit]) -> dict[int, tuple[tuple[str, float], ...]] | None:
        """Each hit's score taken apart (they add up to it): the fused sum's terms, each
        scaled by ``score / sum`` (a hit's score is the sum's square root). The keyword
        side's term is split between BM25F and each rescoring signal in proportion to what
        each added to the doc's keyword score. ``None`` when the keyword list answered alone."""
        fused = self._fused
        if fused is None:
            return None
        kd, ks, bound = self._keyword
        docs = [h.doc for h in hits]
        kw_score = dict(zip(kd.tolist(), ks.tolist(), strict=True))
        added = [
            (r.signal, r.explain(docs, [kw_score.get(d, 0.0) for d in docs], bound)) for r in self.rescores
        ]
        out: dict[int, tuple[tuple[str, float], ...]] = {}
        for h in hits:
            terms = dict(fused.get(h.doc, {}))
            total = sum(terms.values())
            scale = h.score / total if total > 0 else 0.0
            keyword = terms.pop("keyword", 0.0)
            score = kw_score.get(h.doc, 0.0)
            signals = [(name, by_doc.get(h.doc, 0.0) * bound) for name, by_doc in added]
            shares = [(name, keyword * value / score) for name, value in signals if value and score > 0]
            rank = terms.pop("rank", 0.0)  # the tie term: last, it only orders
            rows = [("keyword", keyword - sum(v for _, v in shares)), *shares, *terms.items(), ("rank", rank)]
            out[h.doc] = tuple((name, value * scale) for name, value in rows if value)
        return out


def enable_hybrid(
    index: ToolIndex,
    embedder: Embedder | str = "default",
    *,
    store: BlobStore | None = None,
    progress: bool | None = None,
    query_encoder: Embedder | str | None = "auto",
) -> HybridSearch:
    """Register ``semantic`` and ``hybrid`` on ``index`` (``auto`` then means hybrid).

    ``embedder`` is an :class:`~toolscout.embed.Embedder` or a spec for
    :func:`~toolscout.embed.load_embedder`; ``store`` (a :class:`~toolscout.storage.Store`)
    keeps vectors across restarts. Raises ``MissingExtra`` / ``EmbeddingUnavailable`` here,
    at setup, if the model cannot be loaded at all.

    ``query_encoder`` embeds queries (tools always use ``embedder``): ``"auto"`` (default) is
    the ``"blockwise"`` int8 version of the default model when ``embedder`` is the default
    (1.5x faster, same quality on the six public sets; see
    :func:`~toolscout.embed.load_query_encoder`), else ``embedder`` itself; ``"int8"`` is
    faster still and slightly less exact; ``"model"`` / ``None`` is ``embedder``;
    ``"static"`` a wordpiece table distilled from it (fastest, far less exact); any other
    spec or an :class:`~toolscout.embed.Embedder` of the same vector space is used as given.
    """
    # Loading the model and building the int8 query encoder take seconds on a cold cache: a
    # step, so a terminal shows it (after a second) and a reporter of the caller's sees it.
    with step("loading the embedding model") if progress is not False else contextlib.nullcontext():
        model = embed.load_embedder(embedder)  # looked up when called: tests stand a model in for it
        queries = embed.load_query_encoder(query_encoder, model, store)
    search = HybridSearch(index, DenseBackend(model, store, progress=progress, query_embedder=queries))
    index.register_mode("semantic", search.semantic)
    index.register_mode("hybrid", search.hybrid)
    index.register_primer(search.prime)
    return search


__all__ += ["HybridSearch", "Ranked", "dense_input", "enable_hybrid", "keyword_input"]


def enable_hybrid_if_available(
    index: ToolIndex,
    embedder: Embedder | str = "default",
    *,
    store: BlobStore | None = None,
    query_encoder: Embedder | str | None = "auto",
) -> HybridSearch | None:
    """:func:`enable_hybrid` when the ``embed`` extra (or the given model) can be loaded;
    otherwise ``None`` and the index stays keyword-only (``auto`` = keyword). For servers
    and CLIs that should use embeddings exactly when the user installed them."""
    try:
        return enable_hybrid(index, embedder, store=store, query_encoder=query_encoder)
    except (MissingExtra, EmbeddingUnavailable):
        return None


__all__ += ["enable_hybrid_if_available"]
