"""Learning from usage: which found tools a model then calls, fed back into ranking.

Why: a gateway sees, across sessions, which of the tools it found were actually chosen.
Ranking that ignores this ranks a query the same way on day 100 as on day 1.

What is kept (per session, no argument values): a search event = the query's analysed
terms (the keyword analyzer's, not the raw text), the names it found, and which of them the
session then called and whether each call succeeded. Events live in a
:class:`~toolscout.store.Store` namespace (the catalog's SQLite file by default; any object
with the same ``put``/``get``/``keys`` interface, e.g. the PostgreSQL store, when scaled out),
or only in memory when there is no store.

What ranking gets (see docs/learning.md):

* a **boost** per query: for each query term, the share of sessions that searched that
  term and then called the tool, counted over *distinct sessions* (one session counts at
  most once per term and tool, however often it repeats) and only beyond ``min_sessions - 1``
  of them (one session alone never lifts a tool); terms are weighted by how rare they are
  in the log, averaged over the query's terms (a new query shares evidence with logged ones
  through term overlap). Added to the keyword score as at most ``max_boost`` of a full
  match, so a flood of poisoned events moves a tool by a bounded amount;
* a **sink** per tool: tools shown in many sessions and never chosen lose at most
  ``max_sink`` of their score;
* **co-usage**: tools called in the same session by at least ``min_sessions`` sessions.

Evidence decays with a half-life (``half_life_days``). Derived arrays are rebuilt lazily
when the usage version or the catalog generation changes; once a rebuild costs over 1 ms,
no more often than every 50x its cost, so a busy gateway spends at most ~2% of its time
rebuilding (and may rank with a prior a few events old).
"""

from __future__ import annotations

import contextlib
import json
import math
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .search.analyzer import analyze

__all__ = ["Prior", "UsageLearner", "replay_log"]

NS = "usage.events"
_MAX_FOUND = 10
_RECENT_SEARCHES = 8  # per session: a call is credited to the latest search that found it
_MAX_SESSIONS = 10_000


def query_terms(query: str) -> list[str]:
    """The analysed, de-duplicated terms a query is keyed by."""
    return sorted(set(analyze(query)))


_NO_DOCS = np.zeros(0, np.int64)
_NO_VALS = np.zeros(0, np.float64)


@dataclass(frozen=True, slots=True)
class Prior:
    """One query's prior: ``boost`` (relevance units, summed over ``docs``; a doc may repeat)
    and ``sink`` (a per-doc score multiplier, or ``None``)."""

    docs: np.ndarray
    boost: np.ndarray
    sink: np.ndarray | None

    def apply(self, scores: np.ndarray, bound: float) -> np.ndarray:
        """``scores`` (modified in place) with the sink and the boost (``bound``: a full
        match's score, so the boost is at most ``max_boost`` of it)."""
        if self.sink is not None:
            scores *= self.sink
        if len(self.docs):
            np.add.at(scores, self.docs, self.boost * bound)
        return scores

    def of(self, docs: Sequence[int], scores: Sequence[float] | None = None, bound: float = 1.0) -> dict[int, float]:
        """What usage changed for each of ``docs`` (the hits), in relevance units: the boost,
        minus what the sink took when the hits' final ``scores`` (and ``bound``) are given."""
        out: dict[int, float] = {}
        if len(self.docs) and docs:
            sel = (self.docs[:, None] == np.asarray(docs)[None, :]).any(axis=1)  # few hits: cheaper than isin
            for doc, value in zip(self.docs[sel].tolist(), self.boost[sel].tolist(), strict=True):
                out[doc] = out.get(doc, 0.0) + value
        if self.sink is not None and scores is not None and bound > 0:
            for doc, score in zip(docs, scores, strict=True):
                factor = float(self.sink[doc])
                if factor < 1.0:  # score = base * factor + boost * bound
                    base = (score - out.get(doc, 0.0) * bound) / factor
                    out[doc] = out.get(doc, 0.0) - base * (1.0 - factor) / bound
        return out


@dataclass(slots=True)
class _Derived:
    """Arrays for one (catalog generation, usage version): what a search reads."""

    generation: int
    version: int
    terms: dict[str, tuple[np.ndarray, np.ndarray, float]]  # term -> (docs, weight * p, weight)
    unseen_weight: float
    sink: np.ndarray | None  # multiplier per doc (1 - sink), or None when nothing sinks
    co: dict[str, list[str]]


class UsageLearner:
    """Records search -> call events and turns them into a bounded ranking prior."""

    def __init__(
        self,
        store: Any = None,
        *,
        half_life_days: float = 30.0,
        min_sessions: int = 2,
        max_boost: float = 0.5,
        max_sink: float = 0.05,
        max_events: int = 200_000,
    ) -> None:
        self.store = store
        self.half_life_s = half_life_days * 86_400.0
        self.min_sessions = max(1, int(min_sessions))
        self.max_boost = max_boost
        self.max_sink = max_sink
        self.max_events = max_events
        self.version = 0
        self._lock = threading.RLock()
        self._events: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._recent: OrderedDict[str, list[str]] = OrderedDict()  # session -> event keys
        self._derived: _Derived | None = None
        self._built_at = 0.0
        self._build_cost = 0.0
        if store is not None:
            self._load()

    # -- recording ----------------------------------------------------------------------
    def searched(self, session: str, query: str, found: Sequence[str], *, now: float | None = None) -> str | None:
        """A session's search found ``found`` (its top results); returns the event key."""
        terms = query_terms(query)
        if not terms or not found:
            return None
        key = uuid.uuid4().hex
        event = {"s": str(session), "t": now or time.time(), "q": terms, "f": list(found), "c": {}}
        with self._lock:
            self._add(key, event)
            keys = self._recent.pop(event["s"], [])
            keys.append(key)
            self._recent[event["s"]] = keys[-_RECENT_SEARCHES:]
            while len(self._recent) > _MAX_SESSIONS:
                self._recent.popitem(last=False)
        self._save(key, event)
        return key

    def called(self, session: str, tool: str, ok: bool, *, now: float | None = None) -> None:
        """A session called ``tool``: credited to its latest search that found it, else kept
        as a search-less call (co-usage evidence only)."""
        session = str(session)
        with self._lock:
            key = next(
                (k for k in reversed(self._recent.get(session, [])) if tool in self._events.get(k, {}).get("f", ())),
                None,
            )
            if key is None:
                key = f"calls-{session}"
                event = self._events.get(key) or {"s": session, "t": now or time.time(), "q": [], "f": [], "c": {}}
                self._add(key, event)
            event = self._events[key]
            event["c"][tool] = bool(event["c"].get(tool)) or bool(ok)
            event["t"] = max(event["t"], now or time.time())
            self.version += 1
        self._save(key, event)

    def _add(self, key: str, event: dict[str, Any]) -> None:
        self._events[key] = event
        self._events.move_to_end(key)
        while len(self._events) > self.max_events:
            self._events.popitem(last=False)
        self.version += 1

    def _save(self, key: str, event: dict[str, Any]) -> None:
        if self.store is None:
            return
        # usage is a courtesy: a store problem never fails a search or a call
        with contextlib.suppress(Exception):
            self.store.put(NS, key, json.dumps(event, separators=(",", ":")))

    def _load(self) -> None:
        """Read the store's events; drop from it those beyond ``max_events`` or decayed to
        nothing (10 half-lives), and skip malformed ones (a bad row never stops a start)."""
        try:
            keys = self.store.keys(NS)
        except Exception:
            return
        loaded: list[tuple[str, dict[str, Any]]] = []
        for key in keys:
            with contextlib.suppress(Exception):
                entry = self.store.get(NS, key)
                event = json.loads(entry.text) if entry is not None else None
                if _valid(event):
                    loaded.append((key, event))
        loaded.sort(key=lambda kv: kv[1]["t"])
        horizon = time.time() - 10 * self.half_life_s if self.half_life_s > 0 else float("-inf")
        keep = [kv for kv in loaded if kv[1]["t"] >= horizon][-self.max_events :]
        kept = {k for k, _ in keep}
        for key, _ in loaded:
            if key not in kept:
                with contextlib.suppress(Exception):
                    self.store.delete(NS, key)
        with self._lock:
            for key, event in keep:
                self._events[key] = event
            self.version += 1

    def reload(self) -> None:
        """Read events other processes wrote to a shared store."""
        if self.store is not None:
            self._load()

    def __len__(self) -> int:
        return len(self._events)

    # -- deriving -----------------------------------------------------------------------
    def _derive(self, tools: Sequence[Any], generation: int) -> _Derived | None:
        d = self._derived
        if d is not None and d.generation == generation and d.version == self.version:
            return d
        now = time.time()
        costly = self._build_cost > 0.001
        if d is not None and d.generation == generation and costly and now - self._built_at < 50 * self._build_cost:
            return d  # a costly rebuild ran very recently: serve the slightly older prior
        with self._lock:
            events = list(self._events.values())
            version = self.version
        started = time.perf_counter()
        built = self._build(events, tools, generation, version, now)
        self._build_cost = time.perf_counter() - started
        self._built_at = now
        self._derived = built
        return built

    def _build(self, events: list[dict[str, Any]], tools: Sequence[Any], generation: int, version: int, now: float) -> _Derived:
        doc_of = {t.name: i for i, t in enumerate(tools)}
        searched: dict[str, dict[str, float]] = {}  # term -> session -> weight
        pairs: dict[str, dict[str, dict[str, float]]] = {}  # term -> tool -> session -> weight
        shown: dict[str, dict[str, float]] = {}
        chosen: dict[str, dict[str, float]] = {}
        together: dict[str, set[str]] = {}  # session -> tools it called successfully
        sessions: set[str] = set()
        for e in events:
            s = e["s"]
            w = 0.5 ** (max(0.0, now - e["t"]) / self.half_life_s) if self.half_life_s > 0 else 1.0
            calls: dict[str, bool] = e.get("c", {})
            if e["q"]:
                sessions.add(s)
            for term in e["q"]:
                by = searched.setdefault(term, {})
                by[s] = max(by.get(s, 0.0), w)
                for tool, ok in calls.items():
                    per = pairs.setdefault(term, {}).setdefault(tool, {})
                    per[s] = max(per.get(s, 0.0), w if ok else w / 2)
            for tool in e.get("f", ()):
                per = shown.setdefault(tool, {})
                per[s] = max(per.get(s, 0.0), w)
            for tool, ok in calls.items():
                per = chosen.setdefault(tool, {})
                per[s] = max(per.get(s, 0.0), w)
                if ok:
                    together.setdefault(s, set()).add(tool)
        m = max(1, len(sessions))
        spare = self.min_sessions - 1
        terms: dict[str, tuple[np.ndarray, np.ndarray, float]] = {}
        for term, by_tool in pairs.items():
            n_t = sum(searched[term].values())
            docs, ps = [], []
            for tool, per in by_tool.items():
                doc = doc_of.get(tool)
                agreed = sum(per.values()) - spare  # one session alone (or fewer than min) lifts nothing
                if doc is None or agreed <= 0:
                    continue
                docs.append(doc)
                ps.append(agreed / (n_t - spare + 1.0))
            if docs:
                weight = math.log1p(m / n_t)
                terms[term] = (np.array(docs, np.int64), np.array(ps, np.float64) * weight, weight)
        sink = None
        if self.max_sink > 0 and tools:
            factor = np.ones(len(tools), np.float64)
            for tool, per in shown.items():
                doc = doc_of.get(tool)
                n_shown = sum(per.values())
                if doc is None or n_shown < 5 * self.min_sessions:
                    continue
                unchosen = max(0.0, 1.0 - sum(chosen.get(tool, {}).values()) / n_shown)
                factor[doc] = 1.0 - self.max_sink * unchosen * min(1.0, n_shown / 50.0)
            sink = factor if (factor < 1.0).any() else None
        co_counts: dict[str, dict[str, int]] = {}
        for called in together.values():
            for a in called:
                for b in called:
                    if a != b:
                        co_counts.setdefault(a, {})[b] = co_counts.setdefault(a, {}).get(b, 0) + 1
        co = {
            a: [b for b, n in sorted(bs.items(), key=lambda kv: (-kv[1], kv[0])) if n >= self.min_sessions][:3]
            for a, bs in co_counts.items()
        }
        return _Derived(generation, version, terms, math.log1p(m), sink, {a: bs for a, bs in co.items() if bs})

    # -- reading ------------------------------------------------------------------------
    def prior(
        self, query: str, tools: Sequence[Any], generation: int, terms: Sequence[str] | None = None
    ) -> Prior | None:
        """The prior for ``query`` over ``tools`` (``None`` when usage changes nothing).
        Sparse, so a query costs in proportion to its evidence, not to the catalog.
        ``terms``: the query's distinct analysed terms, when the caller has them."""
        if not self._events:
            return None
        d = self._derive(tools, generation)
        if d is None:
            return None
        docs: list[np.ndarray] = []
        vals: list[np.ndarray] = []
        total = 0.0
        for term in query_terms(query) if terms is None else terms:
            found = d.terms.get(term)
            if found is None:
                total += d.unseen_weight
                continue
            t_docs, weighted, weight = found
            total += weight
            docs.append(t_docs)
            vals.append(weighted)
        if not docs:
            return None if d.sink is None else Prior(_NO_DOCS, _NO_VALS, d.sink)
        all_docs = docs[0] if len(docs) == 1 else np.concatenate(docs)
        all_vals = (vals[0] if len(vals) == 1 else np.concatenate(vals)) * (self.max_boost / total)
        return Prior(all_docs, all_vals, d.sink)

    def co_usage(self, tools: Sequence[Any], generation: int) -> Mapping[str, list[str]]:
        """Tool name -> tools sessions usually called together with it (best first, at most 3)."""
        if not self._events:
            return {}
        d = self._derive(tools, generation)
        return d.co if d is not None else {}

    def also_used_with(self, name: str, tools: Sequence[Any], generation: int) -> list[str]:
        """Tools sessions usually called together with ``name`` (best first, at most 3)."""
        return list(self.co_usage(tools, generation).get(name, ()))


def _valid(event: Any) -> bool:
    """A stored event has the shape :meth:`UsageLearner.searched` writes."""
    return (
        isinstance(event, dict)
        and isinstance(event.get("s"), str)
        and isinstance(event.get("t"), int | float)
        and isinstance(event.get("q"), list)
        and all(isinstance(t, str) for t in event["q"])
        and isinstance(event.get("f"), list)
        and isinstance(event.get("c"), dict)
    )


def replay_log(learner: UsageLearner, lines: Iterable[Mapping[str, Any]], found_for: Any) -> int:
    """Replay usage-log records ``{"query", "called", "session"?}`` into ``learner``.

    ``found_for(query)`` gives the names a search shows for it (the gateway's own search),
    so "found but not chosen" is learned too. A record without ``session`` is its own
    session. Returns the number of records replayed."""
    n = 0
    for i, rec in enumerate(lines):
        query = rec.get("query")
        called = rec.get("called") or []
        if not isinstance(query, str) or not isinstance(called, list):
            continue
        session = str(rec.get("session") or f"log-{i}")
        chosen = [c for c in called if isinstance(c, str)]
        found = chosen + [f for f in found_for(query) if f not in chosen]
        learner.searched(session, query, found[: max(_MAX_FOUND, len(chosen))])
        for name in chosen:
            learner.called(session, name, True)
        n += 1
    return n
