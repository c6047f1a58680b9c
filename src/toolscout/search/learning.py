"""Learning from usage: which found tools a model then calls, fed back into ranking.

Why: a gateway sees, across sessions, which of the tools it found were actually chosen.
Ranking that ignores this ranks a query the same way on day 100 as on day 1.

What is kept (per session, no argument values): a search event = the query's analysed
terms (the keyword analyzer's, not the raw text) and the pairs of adjacent terms, the names
it found, and which of them the session then called and whether each call succeeded. Events
live in a :class:`~toolscout.storage.Store` namespace (the catalog's SQLite file by default, the
shared PostgreSQL store when scaled out; any :class:`~toolscout.storage.BlobStore` will do), or
only in memory when there is no store. They are written by a background thread
(:mod:`.usage_writer`), not inside the search or call that recorded them: :meth:`UsageLearner.close`
(or a normal interpreter exit) writes what is queued, and a crash loses the events still queued.

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
when the usage version or the catalog generation changes; a log under ``inline_below``
events is always rebuilt inline (exact right after its events, on any machine); beyond
that, once a rebuild costs over 1 ms,
no more often than every 50x its cost, so a busy gateway spends at most ~2% of its time
rebuilding (and may rank with a prior a few events old). Once one costs over 50 ms it runs
on a worker thread and no search waits for it: searches keep the previous prior meanwhile
(none, if the catalog changed since).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise
from typing import Any

import numpy as np

from ..storage import BlobStore
from .analyzer import analyze
from .usage_evidence import Derived, OwnTerms, derive, voter
from .usage_prior import NO_DOCS, NO_VALS, Prior
from .usage_writer import EventWriter

__all__ = ["Prior", "UsageLearner", "learner_for", "replay_log", "voter"]

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
        self._derived: Derived | None = None
        self._own_terms: OwnTerms = {}
        self._built_at = 0.0
        self._build_cost = 0.0
        self._worker: threading.Thread | None = None  # a rebuild too slow for a search to wait for
        self.inline_below = _INLINE_BELOW
        """Events: a smaller log is always rebuilt inline (exact right after its events)."""
        self.background_from = _BACKGROUND_FROM
        """Seconds: a rebuild that took longer last time runs on a worker thread."""
        self._writer = EventWriter(store, NS) if store is not None else None
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
        if self._writer is not None:  # queued: written off the request path (usage_writer.py)
            self._writer.put(key, json.dumps(event, separators=(",", ":")))

    def flush(self) -> None:
        """Write every recorded event to the store now (they are written in the background;
        :mod:`.usage_writer` says what a crash loses)."""
        if self._writer is not None:
            self._writer.flush()

    def close(self) -> None:
        """Write what is queued and stop the background writer; an interpreter that exits
        normally does this by itself. Events recorded later are written at once."""
        if self._writer is not None:
            self._writer.close()

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
            self.flush()  # ours first: a queued event must not be read back older than it is
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

    def _build(self, events: list[dict[str, Any]], tools: Sequence[Any], generation: int, version: int, now: float) -> Derived:
        return derive(self, self._own_terms, events, tools, generation, version, now)

    # -- deriving -----------------------------------------------------------------------
    def _derive(self, tools: Sequence[Any], generation: int) -> Derived | None:
        """The derived prior for this catalog generation. A rebuild that cost over
        ``background_from`` last time runs on a worker thread while searches keep the
        previous prior (or none, if the catalog changed since); a cheap one runs here."""
        d = self._derived
        current = d is not None and d.generation == generation
        if current and d.version == self.version:  # type: ignore[union-attr]
            return d
        if len(self._events) < self.inline_below:  # measured cost is machine speed: size decides "small"
            return self._rebuild(tools, generation)
        now = time.time()
        if current and self._build_cost > 0.001 and now - self._built_at < 50 * self._build_cost:
            return d  # a costly rebuild ran very recently: serve the slightly older prior
        if d is not None and self._build_cost > self.background_from:
            self._build_in_background(tools, generation)
            return d if current else None
        return self._rebuild(tools, generation)

    def _rebuild(self, tools: Sequence[Any], generation: int) -> Derived:
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
        capped = np.fromiter(sorted(lone - agreed), np.int64) if lone - agreed else NO_DOCS
        if not docs:
            return None if d.sink is None else Prior(NO_DOCS, NO_VALS, d.sink)
        all_docs = docs[0] if len(docs) == 1 else np.concatenate(docs)
        all_vals = (vals[0] if len(vals) == 1 else np.concatenate(vals)) * (self.max_boost / total)
        clip = reach > total  # pairs could push a tool past max_boost: sum per tool and clip
        if len(tools) <= 65_536 + 32 * len(all_docs):  # a dense pass is cheaper than sorting
            dense = np.bincount(all_docs, weights=all_vals, minlength=len(tools))
            if clip:
                np.clip(dense, -self.max_boost, self.max_boost, out=dense)
            return Prior(NO_DOCS, NO_VALS, d.sink, dense, capped)
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
