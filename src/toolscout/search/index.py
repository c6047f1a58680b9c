"""ToolIndex: the catalog made searchable, kept current, filtered before ranking.

The index subscribes to its catalog and marks itself stale on every change; the next search
rebuilds lazily (the keyword backend re-analyses only tools that changed), unless another
thread called :meth:`ToolIndex.refresh` first (a replica's listener does, right after
applying a change): a rebuild is built aside and swapped in whole. Filters
(searchable, available, platform, category, kinds, excluded names, an ``allow`` predicate) become
one boolean mask over doc ids that the backends rank within, so ``limit`` is always filled
from allowed tools. The mask of an ``allow`` predicate is cached per (predicate, catalog
generation): a policy costs one pass over the catalog per change, not per query.

Modes: ``keyword`` (BM25F), ``regex`` (RE2), any mode registered with :meth:`register_mode`
(a ranker ``(query, limit, mask) -> Ranking | list[Hit]``), and ``auto`` = ``hybrid`` if
registered, else ``keyword``. The index talks to its backends through the
:class:`~toolscout.search.base.Backend` seam (and the optional capabilities beside it), so
any backend that implements it can serve ``keyword``.

Every mode's ranking goes through one finishing step (:func:`~toolscout.search.signals.finish`)
that applies the index's :attr:`ToolIndex.signals`: intent, learned usage and exact names
(a query that is a tool name, quoted, backticked, any case, ``-``/``.``/space for ``_``,
returns that tool first in every mode). ``select:a,b`` returns exactly those tools. Names
are resolved by the index's :class:`~toolscout.search.resolve.NameResolver`, the one every
surface uses.

Queries arrive already checked (:class:`~toolscout.request.FindRequest` trims and bounds
them at the edge); the index trusts them.

With ``snapshots=Store(...)`` a cold start loads the analysed keyword index saved by the
previous run over the same tools instead of re-analysing them.
"""

from __future__ import annotations

import copy
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, TypeAlias, TypeVar

import numpy as np

from ..accounting.telemetry import stage
from ..errors import EmptyQuery, InvalidRequest
from ..model import KINDS, Tool, profiles_of
from .autocut import DEFAULT_RULE
from .base import Backend, Explains, Hit, SharesTerms, can
from .keyword import KeywordBackend
from .keyword_snapshot import restore_keyword, save_keyword
from .ranking import HitsRanking, Ranking, Ranks, ScoredTool
from .regex import RegexBackend
from .resolve import NameResolver, parse_select
from .servers import ServerEvidence
from .sets import rank_set
from .signals import (
    Intent,
    QueryPrior,
    Signal,
    SignalContext,
    Usage,
    UsagePrior,
    default_signals,
    finish,
)
from .sparse import release_freed_memory
from .subintents import split_intents

if TYPE_CHECKING:
    from ..catalog import Catalog, CatalogChange
    from ..storage import Store

__all__ = ["Ranker", "ScoredTool", "SearchOutcome", "ToolIndex"]

Ranker: TypeAlias = Callable[[str, int, np.ndarray], "Ranking | Sequence[Hit]"]
"""A registered mode: ``(query, limit, mask)`` -> a :class:`~toolscout.search.ranking.Ranking`
(signals can rescore it) or its hits, best first (signals can only pin)."""

_B = TypeVar("_B")
_ALLOW_CACHE = 32
_TRIM_AT = 20_000


def _fork(backend: _B) -> _B:
    """A copy of ``backend`` to rebuild while searches read the original: its containers
    are copied (a rebuild may add to them), its arrays shared (a rebuild replaces them)."""
    clone = copy.copy(backend)
    for name, value in vars(backend).items():
        if isinstance(value, dict | list | set):
            setattr(clone, name, value.copy())
    return clone


SET_DEPTH = 10
"""How deep each sub-intent of a multi-step request is ranked before the lists are merged."""


@dataclass(slots=True)
class SearchOutcome:
    hits: list[ScoredTool]
    total_matches: int
    mode: str
    warnings: list[str] = field(default_factory=list)
    elapsed_ms: float = 0.0
    intents: list[str] = field(default_factory=list)
    """The request's sub-intents when it has several (each hit's ``intent`` names the one it
    answers); empty for a single-intent request."""
    best: dict[str, str] = field(default_factory=dict)
    """Each sub-intent's own best tool (its first hit searched alone)."""


class ToolIndex:
    """Search over a :class:`~toolscout.catalog.Catalog`, updated when the catalog changes."""

    def __init__(
        self,
        catalog: Catalog,
        *,
        keyword: Backend | None = None,
        autocut_rule: str = DEFAULT_RULE,
        snapshots: Store | None = None,
        signals: Sequence[Signal] | None = None,
    ) -> None:
        self.catalog = catalog
        self.snapshots = snapshots
        self.autocut_rule = autocut_rule
        self._backends: dict[str, Backend] = {
            "keyword": keyword if keyword is not None else KeywordBackend(),
            "regex": RegexBackend(),
        }
        self._usage = Usage()
        self.signals: list[Signal] = list(signals) if signals is not None else default_signals(self._usage)
        """What the finishing step applies after every mode's ranking, in order
        (:mod:`~toolscout.search.signals`); add to it to add a signal to every mode."""
        self._modes: dict[str, Ranker] = {}
        self._primers: list[Callable[[list[str]], None]] = []
        self._lock = threading.RLock()
        self._build_lock = threading.Lock()  # one rebuild at a time, taken before _lock
        self.wait_for_rebuild = True
        """Whether a search that finds the catalog changed while another thread rebuilds
        waits for that rebuild (read your own writes: the default) or answers from the
        previous snapshot until the swap (a server, whose event loop must never stall; the
        change is then searchable when the rebuild under way, or the next one, lands)."""
        self._stale = True
        self._generation = -1
        self._tools: list[Tool] = []
        self._resolver = NameResolver([])
        self._base = np.zeros(0, dtype=bool)
        self._categories: np.ndarray = np.zeros(0, dtype=np.int32)
        self._category_ids: dict[str, int] = {}
        self._kinds: np.ndarray = np.zeros(0, dtype=np.int8)
        self._kinds_present: frozenset[str] = frozenset()
        self._platform_masks: dict[str, np.ndarray] = {}
        self._allow_masks: OrderedDict[object, np.ndarray] = OrderedDict()
        self._unsubscribe = catalog.subscribe(self._on_change)
        self._servers = ServerEvidence()
        self.co_usage: Callable[[], Mapping[str, Sequence[str]]] | None = None
        """Tools sessions called together (name -> names), for completing a set of tools
        (:mod:`~toolscout.search.sets`); the gateway sets it when it learns from usage."""

    @property
    def usage(self) -> UsagePrior | None:
        """The learned usage prior (:class:`toolscout.search.learning.UsageLearner`), set by the
        gateway; the ``usage`` signal applies it to every mode's scores before the top k."""
        return self._usage.learner

    @usage.setter
    def usage(self, learner: UsagePrior | None) -> None:
        self._usage.learner = learner

    # -- keeping current ------------------------------------------------------------------
    def _on_change(self, change: CatalogChange) -> None:
        self._stale = True

    def refresh(self) -> None:
        """Rebuild now if the catalog changed (searches call this themselves).

        The new snapshot is built without the search lock and swapped in under it, so
        another thread can rebuild ahead of the next search (a replica's listener does,
        right after applying a change): searches running meanwhile keep the old snapshot,
        and one that arrives wanting the new one waits only for the rest of that build, or,
        with :attr:`wait_for_rebuild` off, answers from the old snapshot until the swap.
        Called inside a search (a ranker asking for :attr:`tools`), it never waits: that
        search stays on the snapshot it started with."""
        if not self._stale and self._generation == self.catalog.generation:
            return
        inside = self._lock._is_owned()  # type: ignore[attr-defined]  # RLock: held by this thread
        wait = not inside and (self.wait_for_rebuild or self._generation < 0)
        if not self._build_lock.acquire(blocking=wait):
            return  # another thread is building: the current snapshot answers meanwhile
        try:
            generation = self.catalog.generation
            if not self._stale and self._generation == generation:
                return
            self._stale = False  # a change from here on marks it stale again
            tools = list(self.catalog)
            backends = {name: _fork(b) for name, b in self._backends.items()}
            # Flags, categories and kinds live in the tools' shared profiles: one pass over
            # the distinct profiles, spread to the tools by their profile codes (the
            # snapshot key hashes the profiles' labels too).
            codes, profiles = shared = profiles_of(tools)
            cold = not len(self._tools)
            restored = cold and restore_keyword(self.snapshots, tools, backends["keyword"], shared)
            for name, backend in backends.items():
                if not (restored and name == "keyword"):
                    backend.rebuild(tools)
            if cold and not restored:
                save_keyword(self.snapshots, tools, backends["keyword"], shared)
            of_tool = np.asarray(codes, np.int32)
            del codes, shared
            base = np.fromiter((p.searchable and p.available for p in profiles), bool, len(profiles))[of_tool]
            resolver = NameResolver(tools, suggestable=base)
            category_ids: dict[str, int] = {}
            categories = np.fromiter(
                (category_ids.setdefault(p.category or "", len(category_ids)) for p in profiles), np.int32, len(profiles)
            )[of_tool]
            kind_ids = {k: i for i, k in enumerate(KINDS)}
            kinds = np.fromiter((kind_ids[p.kind] for p in profiles), np.int8, len(profiles))[of_tool]
            del of_tool, profiles
            with self._lock:  # the swap: a search sees the old snapshot or the new one, whole
                self._backends = backends
                self._tools, self._base, self._resolver = tools, base, resolver
                self._category_ids, self._categories = category_ids, categories
                self._kinds, self._kinds_present = kinds, frozenset(KINDS[i] for i in np.unique(kinds))
                self._platform_masks = {}
                self._allow_masks = OrderedDict()
                self._generation = generation
        finally:
            self._build_lock.release()
        if len(tools) >= _TRIM_AT:
            release_freed_memory()

    @property
    def tools(self) -> list[Tool]:
        """Doc id -> Tool, current (what a registered ranker's doc ids refer to)."""
        self.refresh()
        return self._tools

    @property
    def resolver(self) -> NameResolver:
        """The name resolver of the current snapshot (doc ids index :attr:`tools`)."""
        self.refresh()
        return self._resolver

    def backend(self, name: str) -> Backend:
        self.refresh()
        return self._backends[name]

    def explain(self, query: str, name: str) -> list[tuple[str, float, dict[str, float]]]:
        """How ``name``'s keyword score for ``query`` splits over terms and fields
        (:class:`~toolscout.search.base.Explains`), read under the lock a rebuild takes."""
        self.refresh()
        with self._lock:
            keyword = self._backends["keyword"]
            return keyword.explain(query, name) if can(keyword, Explains) else []

    def matching_text(self, query: str) -> str:
        """What word matching reads for ``query`` once the signals rewrote it (the text whose
        terms :meth:`explain` should take apart)."""
        ranked = Ranking("explain", query)
        for signal in self.signals:
            if isinstance(signal, Intent):
                signal.apply(ranked, query, self._context(self._base, self._base))
        return ranked.text

    def register_mode(self, name: str, ranker: Ranker) -> None:
        """Add a search mode (e.g. ``semantic``, ``hybrid``); ``auto`` prefers ``hybrid``."""
        if name in ("keyword", "regex", "auto"):
            raise ValueError(f"mode {name!r} is built in")
        self._modes[name] = ranker

    def register_primer(self, primer: Callable[[list[str]], None]) -> None:
        """``primer(queries)`` readies what a mode needs for several queries at once (the
        dense leg embeds a request and its sub-intents in one encoder call, not one each)."""
        self._primers.append(primer)

    def modes(self) -> list[str]:
        return ["auto", "keyword", "regex", *self._modes]

    def categories(self) -> dict[str, int]:
        return self.catalog.categories()

    def kinds(self) -> frozenset[str]:
        """The kinds of entry the catalog holds (``tool``, ``skill``, ``agent``)."""
        self.refresh()
        return self._kinds_present

    def suggest(self, text: str, n: int = 3) -> list[str]:
        """Did-you-mean: up to ``n`` searchable tool names close to ``text``."""
        resolver = self.resolver
        out = resolver.suggest(text, n)
        if len(resolver.tools) >= _TRIM_AT:
            release_freed_memory()  # the first call built trigram postings
        return out

    # -- filtering --------------------------------------------------------------------------
    def mask(
        self,
        *,
        category: str | None = None,
        allow: Callable[[Tool], bool] | None = None,
        exclude: Collection[str] = (),
        platform: str | None = None,
        kinds: Collection[str] | None = None,
    ) -> np.ndarray:
        """Boolean mask of the docs a request may see (a fresh array the caller may modify).
        ``kinds=None`` keeps every kind."""
        self.refresh()
        m = self._base.copy()
        km = self._kind_mask(kinds)
        if km is not None:
            m &= km
        if platform:
            pm = self._platform_masks.get(platform)
            if pm is None:
                pm = np.fromiter((not t.platforms or platform in t.platforms for t in self._tools), bool, len(self._tools))
                self._platform_masks[platform] = pm
            m &= pm
        if category is not None:
            cid = self._category_ids.get(category)
            if cid is None:
                m[:] = False
            else:
                m &= self._categories == cid
        if allow is not None:
            m &= self._allow_mask(allow)
        for name in exclude:
            doc = self._resolver.resolve(name)
            if doc is not None:
                m[doc] = False
        return m

    def _kind_mask(self, kinds: Collection[str] | None) -> np.ndarray | None:
        """Docs of ``kinds``, or ``None`` when that keeps every doc (the usual all-tools
        catalog costs nothing)."""
        if kinds is None or self._kinds_present.issubset(kinds):
            return None
        wanted = [KINDS.index(k) for k in kinds if k in KINDS]
        return self._kinds == wanted[0] if len(wanted) == 1 else np.isin(self._kinds, np.array(wanted, np.int8))

    def _allow_mask(self, allow: Callable[[Tool], bool]) -> np.ndarray:
        with self._lock:
            cached = self._allow_masks.get(allow)
            if cached is not None:
                self._allow_masks.move_to_end(allow)
                return cached
        am = np.fromiter((bool(allow(t)) for t in self._tools), bool, len(self._tools))
        with self._lock:
            self._allow_masks[allow] = am
            while len(self._allow_masks) > _ALLOW_CACHE:
                self._allow_masks.popitem(last=False)
        return am

    # -- searching --------------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        limit: int,
        mode: str = "auto",
        category: str | None = None,
        allow: Callable[[Tool], bool] | None = None,
        exclude: Collection[str] = (),
        platform: str | None = None,
        autocut: bool = True,
        kinds: Collection[str] | None = None,
    ) -> SearchOutcome:
        """Rank allowed tools for ``query``.

        ``relevance`` is in 0..1: 1.0 for an exact name; for keyword hits the score divided
        by the score a tool matching every query term without limit would get (so a weak
        partial match reads low even when it ranks first); for regex 1.0 for a name and
        description match, 2/3 name only, 1/3 description only; for registered modes the
        score divided by the top score. Raises ``EmptyQuery``, ``InvalidRegex`` or
        ``InvalidRequest`` (unknown mode). ``kinds`` filters ranked results only: an exact
        name or ``select:`` finds an entry of any kind (the caller named it).
        """
        with stage("search"):
            return self._search(query, limit, mode, category, allow, exclude, platform, autocut, kinds)

    def _search(
        self,
        query: str,
        limit: int,
        mode: str,
        category: str | None,
        allow: Callable[[Tool], bool] | None,
        exclude: Collection[str],
        platform: str | None,
        autocut: bool,
        kinds: Collection[str] | None,
    ) -> SearchOutcome:
        start = time.perf_counter()
        if not isinstance(query, str) or not query.strip():
            raise EmptyQuery("the query is empty", categories=self.categories())
        resolved = self.resolve_mode(mode)
        limit = max(0, int(limit))
        q = query.strip()
        self.refresh()  # outside the lock: the swap at the end of a rebuild needs it
        # One consistent snapshot: a rebuild's swap waits for this search.
        with self._lock:
            named = self.mask(category=category, allow=allow, exclude=exclude, platform=platform)
            names = parse_select(q)
            if names is not None:
                outcome = self._select(names, named)
            else:
                km = self._kind_mask(kinds)
                mask = named if km is None else named & km
                outcome = self._rank(q, resolved, mask, limit, autocut, named)
        outcome.elapsed_ms = (time.perf_counter() - start) * 1000.0
        return outcome

    def usage_prior(self, query: str) -> QueryPrior | None:
        """The learned usage prior for ``query`` (``None`` without one); the ``usage``
        signal applies it in every mode."""
        return self._usage.prior(query, self._context(self._base, self._base))

    def _context(self, mask: np.ndarray, named: np.ndarray) -> SignalContext:
        kw = self._backends["keyword"]
        terms = kw.shared_terms if can(kw, SharesTerms) else SignalContext.terms
        return SignalContext(self._tools, self._generation, self._resolver, mask, named, terms)

    def resolve_mode(self, mode: str) -> str:
        """The mode ``mode`` runs as (``auto`` resolved); ``InvalidRequest`` if unknown."""
        if mode == "auto":
            return "hybrid" if "hybrid" in self._modes else "keyword"
        if mode in ("keyword", "regex") or mode in self._modes:
            return mode
        raise InvalidRequest(
            f"unknown search_type {mode!r}",
            hint=f"Use one of: {', '.join(self.modes())}.",
            search_type=mode,
        )

    def _select(self, names: list[str], mask: np.ndarray) -> SearchOutcome:
        hits: list[ScoredTool] = []
        warnings: list[str] = []
        for name in names:
            doc = self._resolver.resolve(name)
            if doc is None or not mask[doc]:
                close = self.suggest(name, 3)
                hint = f" (did you mean {', '.join(close)}?)" if close else ""
                warnings.append(f"unknown tool '{name}'{hint}")
                continue
            if all(h.tool.name != self._tools[doc].name for h in hits):
                hits.append(ScoredTool(self._tools[doc], 1.0, 1.0, "select"))
        # Exactly the names asked for, even beyond ``limit`` (the caller chose them).
        return SearchOutcome(hits, len(hits), "select", warnings)

    def _ranking(self, query: str, mode: str, mask: np.ndarray, limit: int) -> Ranking:
        """``mode``'s ranking of ``query``, not yet cut (the finishing step cuts it)."""
        backend = self._backends.get(mode)
        if backend is not None:
            if can(backend, Ranks):
                return backend.ranking(query, mask)  # type: ignore[attr-defined,no-any-return]
            return HitsRanking(mode, query, lambda text, n: backend.search(text, limit=n, mask=mask), mask)
        ranked = self._modes[mode](query, limit, mask)
        if isinstance(ranked, Ranking):
            return ranked
        return HitsRanking(mode, query, lambda text, n: ranked, mask)

    def _rank(
        self, query: str, mode: str, mask: np.ndarray, limit: int, cut: bool, named: np.ndarray | None = None
    ) -> SearchOutcome:
        """``query`` ranked in ``mode``; a request with several sub-intents as one list that
        covers them all (:mod:`~toolscout.search.sets`, with server evidence:
        :mod:`~toolscout.search.servers`), a single-intent one as it always was."""
        intents = split_intents(query) if limit > 1 and mode != "regex" else []
        if len(intents) < 2:
            return self._rank_one(query, mode, mask, limit, cut, named)
        depth = max(limit, SET_DEPTH)
        if mode != "keyword":
            for prime in self._primers:
                prime([query, *(si.text for si in intents)])
        whole = self._rank_one(query, mode, mask, depth, False, named)
        parts = [(si, self._rank_one(si.text, mode, mask, depth, False, named, counted=False).hits) for si in intents]
        co = self._co_usage()
        picks = self._siblings(query, whole.hits, mask, named, limit)
        hits = rank_set(whole.hits, parts, limit, co_usage=co, by_server=picks, lookup=self._unranked(mask, whole.hits) if co else None)
        total = max([whole.total_matches, *(len(h) for _, h in parts)])
        best = {si.text: found[0].tool.name for si, found in parts if found}
        return SearchOutcome(hits, total, whole.mode, whole.warnings, intents=[si.text for si in intents], best=best)

    def _siblings(
        self, query: str, hits: Sequence[ScoredTool], mask: np.ndarray, named: np.ndarray | None, limit: int
    ) -> list[ScoredTool]:
        """The best unshown sibling of ``query``'s best tool when its server matches too
        (:mod:`~toolscout.search.servers`), by its own words in every mode (the request
        without the server's name is a new text: an embedding mode would encode it again)."""
        servers = self._servers.docs(self._tools, self._generation)
        found = servers.siblings(query, hits, self._resolver, mask, hits[:limit]) if servers is not None else None
        if found is None:
            return []
        text, within = found  # no fallback to another mode: that would encode the text
        context = self._context(within, mask if named is None else named)
        ranking = self._ranking(text, "keyword", within, 1)
        ranking.counted = False  # only the hit is read
        return finish(ranking, self.signals, text, context, limit=1, autocut_rule="none")[0]

    def _co_usage(self) -> Mapping[str, Sequence[str]] | None:
        """Tools sessions called together: :attr:`co_usage` when set, else the usage
        learner's (``None`` without either)."""
        if self.co_usage is not None:
            return self.co_usage()
        learner = self._usage.learner
        together = getattr(learner, "co_usage", None) if learner is not None else None
        return together(self._tools, self._generation) if callable(together) else None

    def _unranked(self, mask: np.ndarray, hits: Sequence[ScoredTool]) -> Callable[[str], ScoredTool | None]:
        """A tool by name as a hit below ``hits`` (``None`` when the caller may not see it:
        the mask decides, as for every other hit)."""
        floor = min((h.score for h in hits), default=0.0)
        low = min((h.relevance for h in hits), default=0.0)

        def lookup(name: str) -> ScoredTool | None:
            doc = self._resolver.doc_of(name)
            if doc is None or doc >= len(mask) or not mask[doc]:
                return None
            return ScoredTool(self._tools[doc], floor, low, why="called together with a listed tool")

        return lookup

    def intents(self, query: str) -> list[str]:
        """``query``'s sub-intents as set-aware ranking uses them (one: a single-intent request)."""
        return [si.text for si in split_intents(query)]

    def _rank_one(
        self,
        query: str,
        mode: str,
        mask: np.ndarray,
        limit: int,
        cut: bool,
        named: np.ndarray | None = None,
        *,
        counted: bool = True,
    ) -> SearchOutcome:
        """``query`` ranked in ``mode`` and finished; ``counted=False``: the caller reads only
        the hits (a sub-intent's), so its total may be the hits' number."""
        ranking = self._ranking(query, mode, mask, limit)
        ranking.counted = counted
        context = self._context(mask, mask if named is None else named)
        rule = self.autocut_rule if cut else "none"
        scored, total = finish(ranking, self.signals, query, context, limit=limit, autocut_rule=rule)
        warnings = list(ranking.warnings)
        other = self._FALLBACK.get(mode)
        if not scored and limit and other is not None and (other == "keyword" or other in self._modes):
            # seed 001: a mode that finds nothing hands the query to the other one ("remember
            # that Alice works at Acme" shares no word with the memory tools; a typo'd word no
            # model knows may still be a keyword)
            ranking = self._ranking(query, other, mask, limit)
            ranking.counted = counted
            found, count = finish(ranking, self.signals, query, context, limit=limit, autocut_rule=rule)
            if found:
                warnings += [*ranking.warnings, f"{mode} search found nothing; these are {other} results"]
                scored, total = found, count
        return SearchOutcome(scored, total, mode, warnings)

    _FALLBACK: ClassVar[dict[str, str]] = {"keyword": "semantic", "semantic": "keyword"}
    """The mode a search falls back to when its own finds nothing (when registered)."""

    def close(self) -> None:
        """Stop following the catalog."""
        self._unsubscribe()
