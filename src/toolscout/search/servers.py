"""Server-aware evidence: a tool is also found through its server and its siblings.

Why: a tool's own text is often a few words ("Get Order", "Count"), and a request says what
it wants in the words of the whole service ("the details of my recent orders, the products
I ordered and the delivery date"). The service (an MCP server, an API, a category) says it
in its description and in the names and descriptions of all its tools together, so the
request meets the server where it misses each tool. Tool-to-Agent retrieval (LiveMCPBench)
retrieves tools and their servers side by side and maps a server back to its tools; this is
that idea with toolscout's analyzer and BM25, in every mode (nothing copied).

How:

* **Servers as documents.** Tools are grouped by server (:func:`server_of`: an MCP
  upstream's name, else the tool's category); a group of two or more tools becomes one
  document: the server's name, its description when the catalog has one
  (``meta["server_description"]``), and its tools' names and descriptions
  (:data:`SIBLINGS` at most, so one huge group costs a bounded document). A lone tool is
  no server: its document would be the tool itself, counted twice.
* **Two kinds of evidence must agree.** When the request's best tool (its own text) sits
  on the server whose document matches the request best (the server's text), that
  server's best sibling for the request, among those the list would not show, takes one
  slot (:mod:`~toolscout.search.sets`): never the first, never a step's own best tool's.
  Taking the best server's best tool without that agreement was measured and lost on every
  dev set: a server document is coarser evidence than a tool's own text.
* **A server's name brings nothing in.** Every sibling shares it ("github_..."), so the
  sibling is ranked with the request's words minus those of the server's name: it must
  match what the request asks of it.
* **A hidden server never competes**: a server none of whose tools the request may see
  scores nothing.
* It runs for requests of several steps only: on a single-intent request the same rule
  moved single-tool nDCG down on a set of big category groups and cost a third more
  time, for next to no gain (docs/benchmarks.md#set-retrieval-server-aware).
* Nothing is weighted: the inputs are ranks (the best server, the best tool, its best
  sibling), and BM25's usual k1 and b.

The server documents are built once per catalog snapshot, lazily, by the first search that
asks for them. Limitation: a server's document holds all its tools' text, also those a
policy hides from some callers; only the slot it fills is filtered (an allowed sibling).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..model import Tool
from .analyzer import analyze
from .ranking import ScoredTool
from .resolve import NameResolver

__all__ = ["INLINE_BUILD", "SIBLINGS", "ServerDocs", "ServerEvidence", "server_of"]

SIBLINGS = 100
"""Tools whose text goes into one server's document (a bound on its size, not a weight)."""
_K1, _B = 1.2, 0.75  # BM25's usual defaults (the keyword backend's too)
INLINE_BUILD = 20_000
"""Catalogs up to this many tools build their server documents inside the first search that
needs them (0.1-0.2 s at 13.6k tools); larger ones in a background thread, and
their searches go without server evidence until it is ready (a 1M-tool catalog must not
hold a search for the better part of a minute)."""


def server_of(tool: Tool) -> str | None:
    """The server (or service) ``tool`` belongs to: an MCP upstream's name, else its
    category; ``None`` for a tool with neither."""
    server = tool.meta.get("server") if tool.meta else None
    if isinstance(server, str) and server:
        return server
    if tool.source == "mcp" and tool.source_id:
        return tool.source_id
    return tool.category or None


def _description(tool: Tool) -> str:
    found = tool.meta.get("server_description") if tool.meta else None
    return found if isinstance(found, str) else ""


@dataclass(frozen=True, slots=True)
class _Columns:
    """A sparse matrix by column (compressed sparse column arrays): column ``c``'s rows are
    ``indices[indptr[c]:indptr[c+1]]``, its values the same slice of ``data``. Plain numpy,
    so the path that starts a server imports no scipy (tests/cli/test_startup.py)."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray


class ServerDocs:
    """The servers of one catalog snapshot as documents scored by BM25 (its usual k1 and b),
    with the analyzer every search uses. Its own small index, not the keyword backend's:
    one sparse matrix (servers x terms, by column: :class:`_Columns`) whose columns a
    request's terms pick and sum."""

    def __init__(self, tools: Sequence[Tool], generation: int) -> None:
        self.generation = generation
        groups: dict[str, list[int]] = {}
        for doc, tool in enumerate(tools):
            if tool.kind != "tool":
                continue
            key = server_of(tool)
            if key is not None:
                groups.setdefault(key, []).append(doc)
        kept = {k: v for k, v in groups.items() if len(v) >= 2}
        self.keys: list[str] = list(kept)
        self._ids = {key: sid for sid, key in enumerate(self.keys)}
        self.members: list[np.ndarray] = [np.asarray(v, np.int64) for v in kept.values()]
        self.of_tool = np.full(len(tools), -1, np.int32)
        for sid, docs in enumerate(self.members):
            self.of_tool[docs] = sid
        # Tools ordered by server, and where each server's run starts: which servers hold an
        # allowed tool is then one reduction per request (a hidden server never competes).
        self._order = np.concatenate(self.members) if self.members else np.zeros(0, np.int64)
        self._starts = np.cumsum([0, *(len(m) for m in self.members[:-1])]).astype(np.int64)
        self._vocab: dict[str, int] = {}
        self._weights: _Columns | None = None
        if len(self.keys) >= 2:
            self._weights = self._bm25([self._document(key, [tools[d] for d in docs[:SIBLINGS]]) for key, docs in zip(self.keys, self.members, strict=True)])

    @staticmethod
    def _document(key: str, siblings: Sequence[Tool]) -> str:
        described = next((d for d in map(_description, siblings) if d), "")
        return " ".join([key, described, *(f"{t.original_name or t.name}. {t.description}" for t in siblings)])

    def _bm25(self, texts: Sequence[str]) -> _Columns:
        rows: list[int] = []
        cols: list[int] = []
        tfs: list[int] = []
        lengths = np.zeros(len(texts), np.float64)
        for row, text in enumerate(texts):
            terms = analyze(text)
            lengths[row] = len(terms)
            for term, tf in Counter(terms).items():
                rows.append(row)
                cols.append(self._vocab.setdefault(term, len(self._vocab)))
                tfs.append(tf)
        r, c, tf = np.asarray(rows), np.asarray(cols), np.asarray(tfs, np.float64)
        df = np.bincount(c, minlength=len(self._vocab))
        n = len(texts)
        idf = np.log1p((n - df + 0.5) / (df + 0.5))
        norm = _K1 * (1 - _B + _B * lengths / max(lengths.mean(), 1.0))
        values = idf[c] * tf * (_K1 + 1) / (tf + norm[r])
        order = np.argsort(c, kind="stable")
        indptr = np.concatenate([[0], np.cumsum(np.bincount(c, minlength=len(self._vocab)))])
        return _Columns(indptr, r[order], values[order].astype(np.float32))

    @property
    def active(self) -> bool:
        """Whether the catalog has servers to find tools through (two or more)."""
        return self._weights is not None

    def scores(self, text: str, allowed: np.ndarray) -> np.ndarray:
        """Each server's BM25 score for ``text``; 0 for a server with no allowed tool."""
        if self._weights is None:
            return np.zeros(0, np.float32)
        w = self._weights
        cols = [self._vocab[t] for t in dict.fromkeys(analyze(text)) if t in self._vocab]
        if not cols:
            return np.zeros(len(self.keys), np.float32)
        # The picked columns' entries summed per server (their slices joined and a bincount:
        # scipy's column slicing costs more than the sum on a request's few terms).
        spans = [(int(w.indptr[c]), int(w.indptr[c + 1])) for c in cols]
        rows = np.concatenate([w.indices[a:z] for a, z in spans])
        values = np.concatenate([w.data[a:z] for a, z in spans])
        out = np.bincount(rows, weights=values, minlength=len(self.keys))
        top = int(np.argmax(out))
        if not allowed[self.members[top]].any():  # rare: a filtered request; else no pass
            out[~np.logical_or.reduceat(allowed[self._order], self._starts)] = 0.0
        return out

    def best(self, text: str, allowed: np.ndarray) -> int | None:
        """The server whose document matches ``text`` best among those with an allowed
        tool (the first of equals), if any matches."""
        found = self.scores(text, allowed)
        if not len(found):
            return None
        top = int(np.argmax(found))
        return top if found[top] > 0 else None

    def siblings(
        self, text: str, hits: Sequence[ScoredTool], resolver: NameResolver, allowed: np.ndarray, shown: Sequence[ScoredTool]
    ) -> tuple[str, np.ndarray] | None:
        """``text`` without the words of the server's name, and the mask of the unshown
        siblings of ``hits``' best tool, when its server is also the server whose document
        matches ``text`` best (two kinds of evidence agree); else ``None``. The server's
        name is taken out because every sibling shares it ("github_..."): a sibling must
        match what the request asks of it, not the server's name."""
        if not hits or self._weights is None:
            return None
        key = server_of(hits[0].tool)
        sid = self._ids.get(key, -1) if key is not None else -1
        if sid < 0:
            return None
        # Its siblings the list shows (found by server, then resolved: names cost a lookup).
        listed = [resolver.resolve(h.tool.name) for h in shown if server_of(h.tool) == key]
        if len(listed) >= len(self.members[sid]) or self.best(text, allowed) != sid:  # the cheap tests first
            return None
        within = np.zeros(len(allowed), bool)
        within[self.members[sid]] = True
        within &= allowed
        within[[d for d in listed if d is not None]] = False
        if not within.any():
            return None
        rest = self._without_name(text, sid)
        return (rest, within) if rest else None

    def _without_name(self, text: str, sid: int) -> str:
        named = set(analyze(self.keys[sid]))
        return " ".join(w for w in text.split() if not (set(analyze(w)) & named))


class ServerEvidence:
    """The :class:`ServerDocs` of an index's current snapshot: built when first asked for
    (never for a catalog nobody sends a request of several steps), inline for a catalog up
    to :data:`INLINE_BUILD` tools, else in the background (:meth:`docs` answers ``None``
    until then)."""

    def __init__(self) -> None:
        self._docs: ServerDocs | None = None
        self._lock = threading.Lock()
        self._building: tuple[int, threading.Thread] | None = None

    def docs(self, tools: Sequence[Tool], generation: int) -> ServerDocs | None:
        """The documents of ``tools`` (the snapshot of ``generation``), or ``None`` while a
        large catalog's are being built."""
        found = self._docs
        if found is not None and found.generation == generation:
            return found
        if len(tools) <= INLINE_BUILD:
            self._docs = found = ServerDocs(tools, generation)
            return found
        with self._lock:
            if self._building is None or self._building[0] != generation:
                worker = threading.Thread(target=self._build, args=(tools, generation), name="toolscout-server-docs", daemon=True)
                self._building = (generation, worker)
                worker.start()
        return None

    def _build(self, tools: Sequence[Tool], generation: int) -> None:
        built = ServerDocs(tools, generation)
        with self._lock:
            current = self._docs
            if current is None or current.generation < generation:
                self._docs = built

    def wait(self) -> None:
        """Until a background build under way has finished (tests, benchmarks)."""
        building = self._building
        if building is not None:
            building[1].join()
