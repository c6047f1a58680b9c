"""Learning from usage: which found tools a model then calls, fed back into ranking.

Why: a gateway sees, across sessions, which of the tools it found were actually chosen.
Ranking that ignores this ranks a query the same way on day 100 as on day 1.

What is kept (per session, no argument values): a search event = the query's analysed
terms (the keyword analyzer's, not the raw text) and the pairs of adjacent terms, the names
it found, and which of them the session then called and whether each call succeeded. Events
live in a :class:`~toolscout.storage.Store` namespace (the catalog's SQLite file by default, the
shared PostgreSQL store when scaled out; any :class:`~toolscout.storage.BlobStore` will do), or
only in memory when there is no store.

What ranking gets (see docs/learning.md):

* a **boost** per query, from evidence keyed by query term and by pair of adjacent terms: for
  key k and tool d, over *distinct sessions* (one session counts at most once, however often
  it repeats; sessions of one principal count as one, so a caller that names many sessions
  or opens many connections votes once: the edge passes the principal as the ``voter``), the sessions that searched k and were offered d (shown or called) and those
  that called it. The evidence is the choice rate's deviation from the log's base rate,
  shrunk by ``min_sessions`` pseudo-sessions: ``(called' - beta * passed_over) / (offered +
  min_sessions)``, with ``beta = r0 / (1 - r0)`` and ``r0`` the share of offered tools a
  session calls. Tools called after similar queries rise; tools shown and passed over sink.
  Only searches followed by a credited call count: one that was not (the session gave up,
  or called on another replica, where the search is not known) tells nothing about its
  tools, as a query without clicks says nothing in click models.
  ``called'`` counts every session for keys whose words all occur in d's own name or
  description (a poisoner cannot choose them), and only sessions beyond ``min_sessions - 1``
  otherwise (words a tool does not contain need agreement). Keys are weighted by rarity (a
  pair at most its two terms together, a query's pairs together at most its terms),
  averaged over the query's terms, added to the keyword score and clipped to ``max_boost`` of
  a full match either way: one session moves a tool by at most ``2 * max_boost / (1 +
  min_sessions)`` (0.2 of a full match by default), a flood of poisoned sessions by at most
  ``max_boost``;
* a **sink** per tool: tools shown in many sessions and never chosen lose at most
  ``max_sink`` of their score;
* **co-usage**: tools called in the same session by at least ``min_sessions`` sessions.

Evidence decays with a half-life (``half_life_days``). Derived arrays are rebuilt lazily
when the usage version or the catalog generation changes; a log under ``_INLINE_BELOW``
events is always rebuilt inline (exact right after its events, on any machine); beyond
that, once a rebuild costs over 1 ms,
no more often than every 50x its cost, so a busy gateway spends at most ~2% of its time
rebuilding (and may rank with a prior a few events old). Once one costs over 50 ms it runs
on a worker thread and no search waits for it: searches keep the previous prior meanwhile
(none, if the catalog changed since).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

from ..storage import BlobStore
from .analyzer import analyze

__all__ = ["Prior", "UsageLearner", "learner_for", "replay_log"]

NS = "usage.events"
_MAX_FOUND = 10
_RECENT_SEARCHES = 8  # per session: a call is credited to the latest search that found it
_MAX_SESSIONS = 10_000
_BACKGROUND_FROM = 0.05  # s: a rebuild that took longer last time runs off the search path
_INLINE_BELOW = 100  # events: a smaller log is rebuilt inline, exact whatever the machine's speed


def query_terms(query: str) -> list[str]:
    """The analysed, de-duplicated terms a query is keyed by."""
    return sorted(set(analyze(query)))


def query_pairs(terms: Sequence[str]) -> list[str]:
    """Keys for adjacent pairs of a query's distinct analysed terms (``terms`` in the order
    they first occur, as the keyword backend's ``terms`` gives them): "building code"
    tells tools apart where "building" and "code" alone do not."""
    return [f"{a} {b}" for a, b in pairwise(terms)]


_NO_DOCS = np.zeros(0, np.int64)
_MARGIN_SHARE = 1.0 / 3.0
"""The share of the gap to its neighbour that one voter's evidence may move a tool by: a
third, so a lift and its neighbour's drop together stay below the gap."""
_NO_VALS = np.zeros(0, np.float64)


@dataclass(frozen=True, slots=True)
class Prior:
    """One query's prior: ``boost`` (relevance units, summed over ``docs``; a doc may repeat)
    or ``dense`` (the boost of every doc, when that was cheaper), and ``sink`` (a per-doc
    score multiplier, or ``None``)."""

    docs: np.ndarray
    boost: np.ndarray
    sink: np.ndarray | None
    dense: np.ndarray | None = None
    capped: np.ndarray = dataclasses.field(default_factory=lambda: _NO_DOCS)
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


_PER_KEY = 64
_CHUNK = 2_000_000  # (key, tool) entries expanded at once while deriving: bounds memory


class _Flat:
    """The searches of a log as flat arrays, for deriving evidence with numpy: per event its
    keys (terms and term pairs), the tools it offered (shown or called) and how each was taken."""

    def __init__(self) -> None:
        self.key_id: dict[str, int] = {}
        self.session_id: dict[str, int] = {}
        self.keys: list[int] = []
        self.n_keys: list[int] = []
        self.tools: list[int] = []
        self.took: list[float] = []  # 1 called, 0.5 called and failed, 0 shown and not called
        self.n_tools: list[int] = []
        self.weight: list[float] = []
        self.session: list[int] = []
        self.rates: dict[int, list[int]] = {}  # session -> [tools called, tools offered]

    def add(self, event: dict[str, Any], weight: float, doc_of: Mapping[str, int]) -> None:
        pairs = event.get("p")
        keys = [k for k in (*event["q"], *(pairs if isinstance(pairs, list) else ())) if isinstance(k, str)]
        ids = self.key_id
        self.keys.extend(ids.setdefault(k, len(ids)) for k in keys)
        self.n_keys.append(len(keys))
        calls: dict[str, bool] = event.get("c", {})
        offered = [(doc_of[t], 1.0 if ok else 0.5) for t, ok in calls.items() if t in doc_of]
        offered += [(doc_of[t], 0.0) for t in dict.fromkeys(event.get("f", ())) if t in doc_of and t not in calls]
        self.tools.extend(d for d, _ in offered)
        self.took.extend(t for _, t in offered)
        self.n_tools.append(len(offered))
        self.weight.append(weight)
        self.session.append(self.session_id.setdefault(voter(event), len(self.session_id)))
        rate = self.rates.setdefault(self.session[-1], [0, 0])
        rate[0] += sum(1 for t in calls if t in doc_of)
        rate[1] += len(offered)

    def base_rate(self) -> float:
        """The share of offered tools a session calls, averaged over sessions (so one session,
        however many events it logs, weighs as one), at most 0.5."""
        rates = [c / o for c, o in self.rates.values() if o]
        return min(0.5, sum(rates) / len(rates)) if rates else 0.5


def _sum_of_session_max(code: np.ndarray, weight: np.ndarray, n_sessions: int) -> tuple[np.ndarray, np.ndarray]:
    """``code`` = group * n_sessions + session: per group, the sum over its sessions of each
    session's largest ``weight`` (a session counts once however often it repeats).
    Returns (groups, sums), groups ascending."""
    order = np.argsort(code, kind="stable")
    c = code[order]
    starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
    best = np.maximum.reduceat(weight[order], starts)
    group = c[starts] // n_sessions
    first = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    return group[first], np.add.reduceat(best, first)


@dataclass(slots=True)
class _Derived:
    """Arrays for one (catalog generation, usage version): what a search reads."""

    generation: int
    version: int
    terms: dict[str, tuple[np.ndarray, np.ndarray, float]]  # term -> (docs, weight * p, weight)
    unseen_weight: float
    sink: np.ndarray | None  # multiplier per doc (1 - sink), or None when nothing sinks
    co: dict[str, list[str]]
    solo: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    """term -> the docs it lifts on one voter's choice alone (no second principal agrees)."""


class UsageLearner:
    """Records search -> call events and turns them into a bounded ranking prior."""

    def __init__(
        self,
        store: BlobStore | None = None,
        *,
        half_life_days: float = 30.0,
        min_sessions: int = 2,
        max_boost: float = 0.3,
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
        self.ranking_version = 0
        """Bumped only by what can change a ranking (a credited call, a reload, a credited
        event evicted): a search alone is not evidence, so a result cache survives it."""
        self._lock = threading.RLock()
        self._events: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._recent: OrderedDict[str, list[str]] = OrderedDict()  # session -> event keys
        self._derived: _Derived | None = None
        self._own_terms: dict[tuple[str, str], frozenset[str]] = {}
        self._built_at = 0.0
        self._build_cost = 0.0
        self._worker: threading.Thread | None = None  # a rebuild too slow for a search to wait for
        if store is not None:
            self._load()

    # -- recording ----------------------------------------------------------------------
    def record_search(self, session: str, result: Any, voter: str | None = None) -> None:
        """A gateway's find (a :class:`~toolscout.results.FindResult`) as a search: only a
        ranking that found something counts (not ``select:`` or a whole namespace)."""
        if result.error is None and result.found and result.search_type not in ("select", "namespace"):
            extra = {"voter": voter} if voter not in (None, session) else {}  # a learner without voters still works
            self.searched(session, result.query, [t.name for t in result.found], **extra)

    def record_call(self, session: str, tool: str, ok: bool, voter: str | None = None) -> None:
        """A gateway's call of ``tool`` in ``session`` (never its arguments)."""
        self.called(session, tool, ok, **({"voter": voter} if voter not in (None, session) else {}))

    def searched(
        self, session: str, query: str, found: Sequence[str], *, now: float | None = None, voter: str | None = None
    ) -> str | None:
        """A session's search found ``found`` (its top results); returns the event key.
        ``voter``: whom the search counts for (the caller's principal; default the session):
        evidence counts each voter once, however many sessions it names."""
        seq = list(dict.fromkeys(analyze(query)))
        if not seq or not found:
            return None
        key = uuid.uuid4().hex
        event = {"s": str(session), "t": now or time.time(), "q": sorted(seq), "p": query_pairs(seq), "f": list(found), "c": {}}
        if voter is not None and voter != event["s"]:
            event["v"] = str(voter)
        with self._lock:
            self._add(key, event)
            keys = self._recent.pop(event["s"], [])
            keys.append(key)
            self._recent[event["s"]] = keys[-_RECENT_SEARCHES:]
            while len(self._recent) > _MAX_SESSIONS:
                self._recent.popitem(last=False)
        self._save(key, event)
        return key

    def called(self, session: str, tool: str, ok: bool, *, now: float | None = None, voter: str | None = None) -> None:
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
                if voter is not None and voter != session:
                    event["v"] = str(voter)
                self._add(key, event)
            event = self._events[key]
            event["c"][tool] = bool(event["c"].get(tool)) or bool(ok)
            event["t"] = max(event["t"], now or time.time())
            self.version += 1
            self.ranking_version += 1
        self._save(key, event)

    def _add(self, key: str, event: dict[str, Any]) -> None:
        self._events[key] = event
        self._events.move_to_end(key)
        while len(self._events) > self.max_events:
            _, dropped = self._events.popitem(last=False)
            if dropped.get("c"):
                self.ranking_version += 1
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
            self.ranking_version += 1

    def reload(self) -> None:
        """Read events other processes wrote to a shared store."""
        if self.store is not None:
            self._load()

    def __len__(self) -> int:
        return len(self._events)

    def hot_tools(self, n: int) -> list[str]:
        """The ``n`` tools most sessions called successfully, most first (seed 001's "keep
        your most-used tools loaded"). One session counts once per tool however often it
        calls, so one busy or hostile session cannot make a tool hot; ties by name."""
        if n <= 0:
            return []
        callers: dict[str, set[str]] = {}
        with self._lock:
            for event in self._events.values():
                for tool, ok in event.get("c", {}).items():
                    if ok:
                        callers.setdefault(tool, set()).add(event.get("s", ""))
        ranked = sorted(callers.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        return [tool for tool, _ in ranked[:n]]

    # -- deriving -----------------------------------------------------------------------
    def _derive(self, tools: Sequence[Any], generation: int) -> _Derived | None:
        """The derived prior for this catalog generation. A rebuild that cost over
        ``_BACKGROUND_FROM`` last time runs on a worker thread while searches keep the
        previous prior (or none, if the catalog changed since); a cheap one runs here."""
        d = self._derived
        current = d is not None and d.generation == generation
        if current and d.version == self.version:  # type: ignore[union-attr]
            return d
        if len(self._events) < _INLINE_BELOW:  # measured cost is machine speed: size decides "small"
            return self._rebuild(tools, generation)
        now = time.time()
        if current and self._build_cost > 0.001 and now - self._built_at < 50 * self._build_cost:
            return d  # a costly rebuild ran very recently: serve the slightly older prior
        if d is not None and self._build_cost > _BACKGROUND_FROM:
            self._build_in_background(tools, generation)
            return d if current else None
        return self._rebuild(tools, generation)

    def _rebuild(self, tools: Sequence[Any], generation: int) -> _Derived:
        with self._lock:
            events = list(self._events.values())
            version = self.version
        now = time.time()
        started = time.perf_counter()
        built = self._build(events, tools, generation, version, now)
        self._build_cost = time.perf_counter() - started
        self._built_at = now
        self._derived = built
        return built

    def _build_in_background(self, tools: Sequence[Any], generation: int) -> None:
        with self._lock:
            if self._worker is not None and self._worker.is_alive():
                return
            self._worker = threading.Thread(
                target=self._rebuild, args=(tools, generation), name="toolscout-usage-prior", daemon=True
            )
            self._worker.start()

    def _build(self, events: list[dict[str, Any]], tools: Sequence[Any], generation: int, version: int, now: float) -> _Derived:
        doc_of = {t.name: i for i, t in enumerate(tools)}
        shown: dict[str, dict[str, float]] = {}
        chosen: dict[str, dict[str, float]] = {}
        together: dict[str, set[str]] = {}  # session -> tools it called successfully
        flat = _Flat()
        for e in events:
            s = voter(e)
            w = 0.5 ** (max(0.0, now - e["t"]) / self.half_life_s) if self.half_life_s > 0 else 1.0
            calls: dict[str, bool] = e.get("c", {})
            for tool in e.get("f", ()):
                per = shown.setdefault(tool, {})
                per[s] = max(per.get(s, 0.0), w)
            for tool, ok in calls.items():
                per = chosen.setdefault(tool, {})
                per[s] = max(per.get(s, 0.0), w)
                if ok:
                    together.setdefault(s, set()).add(tool)
            if e["q"] and calls:  # a search nothing was credited to says nothing about its tools
                flat.add(e, w, doc_of)
        solo: dict[str, np.ndarray] = {}
        terms = self._evidence(flat, tools, solo)
        m = max(1, len(flat.session_id))
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
        return _Derived(generation, version, terms, math.log1p(m), sink, {a: bs for a, bs in co.items() if bs}, solo)

    def _evidence(
        self, flat: _Flat, tools: Sequence[Any], solo: dict[str, np.ndarray] | None = None
    ) -> dict[str, tuple[np.ndarray, np.ndarray, float]]:
        """Per key (term or term pair): the tools with evidence, ``weight * v`` and ``weight``.

        For key k and tool d, over distinct sessions (each once, at its largest weight):
        ``offered`` = sessions that searched k and were shown or called d, ``took`` = those
        that called it (a failed call half). ``v = (took' - beta * (offered - took)) /
        (offered + min_sessions)``: the choice rate's deviation from the log's base rate
        ``r0`` (``beta = r0 / (1 - r0)``), shrunk towards 0 by ``min_sessions`` pseudo-sessions.
        ``took'`` is ``took`` when every term of k occurs in d's own name or description,
        else ``took - (min_sessions - 1)`` (at least 0): words a tool does not contain need
        agreement between sessions before they lift it. ``solo`` (when given) receives, per
        key, the tools lifted on one voter's choice alone (see :class:`Prior`)."""
        n_events = len(flat.n_keys)
        if not n_events or not flat.key_id or not tools:
            return {}
        n_sessions = max(1, len(flat.session_id))
        n_tools = len(tools)
        nk = np.asarray(flat.n_keys, np.int64)
        nt = np.asarray(flat.n_tools, np.int64)
        w_ev = np.asarray(flat.weight, np.float64)
        s_ev = np.asarray(flat.session, np.int64)
        keys = np.asarray(flat.keys, np.int64)
        docs = np.asarray(flat.tools, np.int64)
        took = np.asarray(flat.took, np.float64)
        k_start = np.cumsum(nk) - nk
        t_start = np.cumsum(nt) - nt
        ev_of_key = np.repeat(np.arange(n_events), nk)
        searched_keys, searched = _sum_of_session_max(keys * n_sessions + s_ev[ev_of_key], w_ev[ev_of_key], n_sessions)
        n_key = np.zeros(len(flat.key_id), np.float64)
        n_key[searched_keys] = searched
        # (key, tool) pairs, session by session: events grouped by session and expanded in
        # chunks cut at session boundaries, so a session's events are always reduced together
        order = np.argsort(s_ev, kind="stable")
        size = (nk * nt)[order]
        cum = np.r_[0, np.cumsum(size)]
        s_sorted = s_ev[order]
        bounds = np.r_[np.flatnonzero(np.r_[True, s_sorted[1:] != s_sorted[:-1]]), n_events]
        parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
        a = 0
        while a < n_events:
            b = int(bounds[max(np.searchsorted(cum[bounds], cum[a] + _CHUNK, side="right") - 1, 0)])
            if b <= a:
                b = int(bounds[np.searchsorted(bounds, a, side="right")])
            ev = order[a:b]
            a = b
            reps = nk[ev] * nt[ev]
            n = int(reps.sum())
            if n == 0:
                continue
            ev_rep = np.repeat(ev, reps)
            j = np.arange(n) - np.repeat(np.cumsum(reps) - reps, reps)
            per = nt[ev_rep]
            pos = t_start[ev_rep] + j % per
            w = w_ev[ev_rep]
            code = (keys[k_start[ev_rep] + j // per] * n_tools + docs[pos]) * n_sessions + s_ev[ev_rep]
            srt = np.argsort(code)
            c = code[srt]
            starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
            offered = np.maximum.reduceat(w[srt], starts)
            chose = np.maximum.reduceat((w * took[pos])[srt], starts)
            pair = c[starts] // n_sessions
            first = np.flatnonzero(np.r_[True, pair[1:] != pair[:-1]])
            # distinct voters behind each pair's evidence: who chose it (a lift), who was
            # shown it (a drop); each voter once, whatever its weight
            voters = np.add.reduceat((chose > 0).astype(np.float64), first) + 1j * np.add.reduceat(
                (offered > 0).astype(np.float64), first
            )
            parts.append((pair[first], np.add.reduceat(offered, first), np.add.reduceat(chose, first), voters))
        if not parts:
            return {}
        pair = np.concatenate([p[0] for p in parts])
        srt = np.argsort(pair, kind="stable")
        pair = pair[srt]
        first = np.flatnonzero(np.r_[True, pair[1:] != pair[:-1]])
        offered = np.add.reduceat(np.concatenate([p[1] for p in parts])[srt], first)
        chose = np.add.reduceat(np.concatenate([p[2] for p in parts])[srt], first)
        voters = np.add.reduceat(np.concatenate([p[3] for p in parts])[srt], first)
        pair = pair[first]
        key, doc = pair // n_tools, pair % n_tools
        names = list(flat.key_id)
        # a pair's two terms (a term: itself twice), to test words and to cap pair weights
        part_a = np.arange(len(names), dtype=np.int64)
        part_b = part_a.copy()
        for name, k in flat.key_id.items():
            if " " in name:
                a, b = name.split(" ", 1)
                part_a[k], part_b[k] = flat.key_id.get(a, k), flat.key_id.get(b, k)
        spare = float(self.min_sessions - 1)
        lift = chose.copy()
        if spare > 0:
            called = np.flatnonzero(chose > 0)
            own = self._own_codes(flat.key_id, tools, np.unique(doc[called]), n_tools)
            d_c, k_c = doc[called], key[called]
            grounded = np.isin(part_a[k_c] * n_tools + d_c, own) & np.isin(part_b[k_c] * n_tools + d_c, own)
            lacks = called[~grounded]
            lift[lacks] = np.maximum(0.0, chose[lacks] - spare)
        r0 = flat.base_rate()
        beta = r0 / (1.0 - r0)
        v = (lift - beta * (offered - chose)) / (offered + float(self.min_sessions))
        keep = np.abs(v) > 1e-12
        key, doc, v, voters = key[keep], doc[keep], v[keep], voters[keep]
        m = max(1, n_sessions)
        weight = np.log1p(m / np.maximum(n_key, 1e-12))
        weight = np.minimum(weight, weight[part_a] + weight[part_b])  # a pair weighs at most its two terms
        out: dict[str, tuple[np.ndarray, np.ndarray, float]] = {}
        edges = np.r_[np.flatnonzero(np.r_[True, key[1:] != key[:-1]]), len(key)] if len(key) else np.zeros(1, np.int64)
        for lo, hi in zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True):
            k = int(key[lo])
            wk = float(weight[k])
            d_k, v_k, n_k = doc[lo:hi], v[lo:hi], voters[lo:hi]
            if hi - lo > _PER_KEY:  # the strongest evidence only: a query's cost stays small
                top = np.argpartition(-np.abs(v_k), _PER_KEY)[:_PER_KEY]
                d_k, v_k, n_k = d_k[top], v_k[top], n_k[top]
            out[names[k]] = (d_k.copy(), v_k * wk, wk)
            lone = ((v_k > 0) & (n_k.real < 2)) | ((v_k < 0) & (n_k.imag < 2))
            if solo is not None and lone.any():
                solo[names[k]] = d_k[lone].copy()
        return out

    def _own_codes(self, key_id: Mapping[str, int], tools: Sequence[Any], docs: np.ndarray, n_tools: int) -> np.ndarray:
        """``term id * n_tools + doc`` for every logged term that occurs in the own name or
        description of each of ``docs``: the words a call may credit without agreement."""
        cache = self._own_terms
        codes: list[int] = []
        for doc in docs.tolist():
            tool = tools[doc]
            own = cache.get((tool.name, tool.description))
            if own is None:
                if len(cache) > 100_000:
                    cache.clear()
                own = cache[(tool.name, tool.description)] = frozenset(analyze(f"{tool.name} {tool.description}"))
            codes.extend(key_id[t] * n_tools + doc for t in own if t in key_id)
        return np.asarray(codes, np.int64)

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
        total = 0.0  # the query's term weights: a full match of usage evidence
        reach = 0.0  # weights of the keys with evidence, pairs included
        paired = 0.0  # weights of the pairs with evidence
        pair_at: list[int] = []
        seq = list(dict.fromkeys(analyze(query))) if terms is None else list(terms)
        lone: set[int] = set()
        agreed: set[int] = set()
        for key in (*seq, *query_pairs(seq)):
            pair = " " in key
            found = d.terms.get(key)
            if found is not None:
                solo_docs = d.solo.get(key)
                lifted = found[0][found[1] != 0].tolist()
                alone = set(solo_docs.tolist()) if solo_docs is not None else set()
                lone.update(x for x in lifted if x in alone)
                agreed.update(x for x in lifted if x not in alone)
            if found is None:
                if not pair:
                    total += d.unseen_weight
                continue
            t_docs, weighted, weight = found
            if not pair:  # a pair adds evidence for its terms, not terms to match
                total += weight
            else:
                paired += weight
                pair_at.append(len(vals))
            reach += weight
            docs.append(t_docs)
            vals.append(weighted)
        if paired > total:  # a query's pairs weigh together at most its terms
            for i in pair_at:
                vals[i] = vals[i] * (total / paired)
        capped = np.fromiter(sorted(lone - agreed), np.int64) if lone - agreed else _NO_DOCS
        if not docs:
            return None if d.sink is None else Prior(_NO_DOCS, _NO_VALS, d.sink)
        all_docs = docs[0] if len(docs) == 1 else np.concatenate(docs)
        all_vals = (vals[0] if len(vals) == 1 else np.concatenate(vals)) * (self.max_boost / total)
        clip = reach > total  # pairs could push a tool past max_boost: sum per tool and clip
        if len(tools) <= 65_536 + 32 * len(all_docs):  # a dense pass is cheaper than sorting
            dense = np.bincount(all_docs, weights=all_vals, minlength=len(tools))
            if clip:
                np.clip(dense, -self.max_boost, self.max_boost, out=dense)
            return Prior(_NO_DOCS, _NO_VALS, d.sink, dense, capped)
        if clip:
            all_docs, inverse = np.unique(all_docs, return_inverse=True)
            all_vals = np.clip(np.bincount(inverse, weights=all_vals), -self.max_boost, self.max_boost)
        return Prior(all_docs, all_vals, d.sink, None, capped)

    def co_usage(self, tools: Sequence[Any], generation: int) -> Mapping[str, list[str]]:
        """Tool name -> tools sessions usually called together with it (best first, at most 3)."""
        if not self._events:
            return {}
        d = self._derive(tools, generation)
        return d.co if d is not None else {}

    def also_used_with(self, name: str, tools: Sequence[Any], generation: int) -> list[str]:
        """Tools sessions usually called together with ``name`` (best first, at most 3)."""
        return list(self.co_usage(tools, generation).get(name, ()))


def voter(event: Mapping[str, Any]) -> str:
    """Whom an event counts for: its principal (``v``) when the edge knew one, else its
    session. One voter's events weigh as one session's, however many sessions it names."""
    found = event.get("v")
    return found if isinstance(found, str) else event["s"]


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


def learner_for(learn: bool | str | UsageLearner, index: Any, store: BlobStore | None) -> UsageLearner | None:
    """A gateway's ``learn`` option, set on its ``index`` (which ranks with the learner as a
    prior). ``"auto"`` (default): on when there is a store the user owns (``usage_store``,
    or the catalog's SQLite file), so usage persists where the catalog does; ``True``: on
    (in memory without a store); ``False``: off, and the index ranks without a prior."""
    if learn is False or learn == "off":
        index.usage = None
        return None
    if isinstance(learn, UsageLearner):
        learner = learn
    else:
        if learn == "auto" and store is None:
            return None
        learner = UsageLearner(store)
    index.usage = learner
    return learner
