"""Usage evidence derived from a learner's events: flat arrays per search, per key (query
term or pair) the tools it lifts or sinks, per tool the sink, and co-usage.

Split from :mod:`.learning` so the learner keeps recording, storing and serving, and this
module the numbers (docs/learning.md has the formulas). Pure functions of the events and
the learner's settings: a rebuild on a worker thread reads nothing the learner changes.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from .analyzer import analyze

__all__ = ["Derived", "Flat", "OwnTerms", "Settings", "derive", "evidence", "sum_of_session_max", "voter"]

OwnTerms = dict[tuple[str, str], frozenset[str]]
"""A tool's ``(name, description)`` -> its analysed words: kept between rebuilds."""


class Settings(Protocol):
    """What a derivation reads of its learner."""

    half_life_s: float
    min_sessions: int
    max_sink: float


_PER_KEY = 64
_CHUNK = 2_000_000  # (key, tool) entries expanded at once while deriving: bounds memory


class Flat:
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


def sum_of_session_max(code: np.ndarray, weight: np.ndarray, n_sessions: int) -> tuple[np.ndarray, np.ndarray]:
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
class Derived:
    """Arrays for one (catalog generation, usage version): what a search reads."""

    generation: int
    version: int
    terms: dict[str, tuple[np.ndarray, np.ndarray, float]]  # term -> (docs, weight * p, weight)
    unseen_weight: float
    sink: np.ndarray | None  # multiplier per doc (1 - sink), or None when nothing sinks
    co: dict[str, list[str]]
    solo: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    """term -> the docs it lifts on one voter's choice alone (no second principal agrees)."""


def derive(
    settings: Settings, own_terms: OwnTerms, events: list[dict[str, Any]], tools: Sequence[Any], generation: int, version: int, now: float
) -> Derived:
    """The arrays a search reads for one catalog generation and usage version: per key
    the evidence (:func:`evidence`), per tool the sink, and co-usage."""
    doc_of = {t.name: i for i, t in enumerate(tools)}
    shown: dict[str, dict[str, float]] = {}
    chosen: dict[str, dict[str, float]] = {}
    together: dict[str, set[str]] = {}  # session -> tools it called successfully
    flat = Flat()
    for e in events:
        s = voter(e)
        w = 0.5 ** (max(0.0, now - e["t"]) / settings.half_life_s) if settings.half_life_s > 0 else 1.0
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
    terms = evidence(settings, own_terms, flat, tools, solo)
    m = max(1, len(flat.session_id))
    sink = None
    if settings.max_sink > 0 and tools:
        factor = np.ones(len(tools), np.float64)
        for tool, per in shown.items():
            doc = doc_of.get(tool)
            n_shown = sum(per.values())
            if doc is None or n_shown < 5 * settings.min_sessions:
                continue
            unchosen = max(0.0, 1.0 - sum(chosen.get(tool, {}).values()) / n_shown)
            factor[doc] = 1.0 - settings.max_sink * unchosen * min(1.0, n_shown / 50.0)
        sink = factor if (factor < 1.0).any() else None
    co_counts: dict[str, dict[str, int]] = {}
    for called in together.values():
        for a in called:
            for b in called:
                if a != b:
                    co_counts.setdefault(a, {})[b] = co_counts.setdefault(a, {}).get(b, 0) + 1
    co = {
        a: [b for b, n in sorted(bs.items(), key=lambda kv: (-kv[1], kv[0])) if n >= settings.min_sessions][:3]
        for a, bs in co_counts.items()
    }
    return Derived(generation, version, terms, math.log1p(m), sink, {a: bs for a, bs in co.items() if bs}, solo)

def evidence(
    settings: Settings, own_terms: OwnTerms, flat: Flat, tools: Sequence[Any], solo: dict[str, np.ndarray] | None = None
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
    searched_keys, searched = sum_of_session_max(keys * n_sessions + s_ev[ev_of_key], w_ev[ev_of_key], n_sessions)
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
    spare = float(settings.min_sessions - 1)
    lift = chose.copy()
    if spare > 0:
        called = np.flatnonzero(chose > 0)
        own = _own_codes(own_terms, flat.key_id, tools, np.unique(doc[called]), n_tools)
        d_c, k_c = doc[called], key[called]
        grounded = np.isin(part_a[k_c] * n_tools + d_c, own) & np.isin(part_b[k_c] * n_tools + d_c, own)
        lacks = called[~grounded]
        lift[lacks] = np.maximum(0.0, chose[lacks] - spare)
    r0 = flat.base_rate()
    beta = r0 / (1.0 - r0)
    v = (lift - beta * (offered - chose)) / (offered + float(settings.min_sessions))
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

def _own_codes(cache: OwnTerms, key_id: Mapping[str, int], tools: Sequence[Any], docs: np.ndarray, n_tools: int) -> np.ndarray:
    """``term id * n_tools + doc`` for every logged term that occurs in the own name or
    description of each of ``docs``: the words a call may credit without agreement."""
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


def voter(event: Mapping[str, Any]) -> str:
    """Whom an event counts for: its principal (``v``) when the edge knew one, else its
    session. One voter's events weigh as one session's, however many sessions it names."""
    found = event.get("v")
    return found if isinstance(found, str) else event["s"]
