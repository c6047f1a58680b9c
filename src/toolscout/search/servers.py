"""Server-aware evidence: a tool is also found through its server and its siblings.

Why: a tool's own text is often a few words ("Get Order", "Count"), and a request says what
it wants in the words of the whole service ("the details of my recent orders, the products
I ordered and the delivery date"). The service (an MCP server, an API, a category) says it
in its description and in the names and descriptions of all its tools together, so the
request meets the server where it misses each tool. Tool-to-Agent retrieval (LiveMCPBench)
retrieves tools and their servers side by side and maps a server back to its tools; this is
that idea with toolscout's keyword analysis, in every mode (nothing copied).

How:

* **Servers as documents.** Tools are grouped by server (:func:`server_of`: an MCP
  upstream's name, else the tool's category); a group of two or more tools becomes one
  document: the server's name, its description when the catalog has one
  (``meta["server_description"]``), and its tools' names and descriptions
  (:data:`SIBLINGS` at most, so one huge group costs a bounded document). A lone tool is
  no server: its document would be the tool itself, counted twice.
* **A server fills a slot, it does not take the list.** For each thing a request asks
  (each sub-intent, or the whole request), the best-matching server's best tool for that
  thing (ranked by the tool's own evidence within the server, in the request's mode) takes
  one slot when the list would not show it. At most one per sub-intent, so a server whose
  name a request happens to say ("github") adds one tool, not ten; the whole request's
  own order above it is kept (:mod:`~toolscout.search.sets`).
* Nothing is weighted: the inputs are ranks (the best server, its best tool). A catalog
  with fewer than two servers has no server evidence.

The server documents are built once per catalog snapshot, lazily, on the first search
that asks for them (a second small keyword index: a few percent of the tools' own).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..model import Tool
from .analyzer import analyze
from .keyword import KeywordBackend
from .ranking import ScoredTool
from .resolve import NameResolver

__all__ = ["SIBLINGS", "ServerDocs", "server_of"]

SIBLINGS = 100
"""Tools whose text goes into one server's document (a bound on its size, not a weight)."""


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


class ServerDocs:
    """The servers of one catalog snapshot as a keyword-searchable set of documents."""

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
        self.members: list[np.ndarray] = [np.asarray(v, np.int64) for v in kept.values()]
        self.of_tool = np.full(len(tools), -1, np.int32)
        for sid, docs in enumerate(self.members):
            self.of_tool[docs] = sid
        self._backend: KeywordBackend | None = None
        if len(self.keys) >= 2:
            pseudo = [self._document(key, [tools[d] for d in docs[:SIBLINGS]]) for key, docs in zip(self.keys, self.members, strict=True)]
            self._backend = KeywordBackend(variant="bm25")
            self._backend.rebuild(pseudo)

    @staticmethod
    def _document(key: str, siblings: Sequence[Tool]) -> Tool:
        described = next((d for d in map(_description, siblings) if d), "")
        text = " ".join([described, *(f"{t.original_name or t.name}. {t.description}" for t in siblings)])
        return Tool(key, text[:200_000])

    @property
    def active(self) -> bool:
        """Whether the catalog has servers to find tools through (two or more)."""
        return self._backend is not None

    def best(self, text: str, allowed: np.ndarray, k: int = 1) -> list[int]:
        """The ``k`` servers whose documents best match ``text`` among those with an
        allowed tool (server ids, best first)."""
        if self._backend is None:
            return []
        hits = self._backend.search(text, limit=k * 4 + 4)
        out: list[int] = []
        for hit in hits:
            if allowed[self.members[hit.doc]].any():
                out.append(hit.doc)
                if len(out) >= k:
                    break
        return out

    def siblings(
        self, text: str, hits: Sequence[ScoredTool], resolver: NameResolver, allowed: np.ndarray, shown: Sequence[ScoredTool]
    ) -> tuple[str, np.ndarray] | None:
        """``text`` without the words of the server's name, and the mask of the unshown
        siblings of ``hits``' best tool, when its server is also the server whose document
        matches ``text`` best (two kinds of evidence agree); else ``None``. The server's
        name is taken out because every sibling shares it ("github_..."): a sibling must
        match what the request asks of it, not the server's name."""
        if not hits:
            return None
        doc = resolver.resolve(hits[0].tool.name)
        sid = int(self.of_tool[doc]) if doc is not None and doc < len(self.of_tool) else -1
        if sid < 0 or self.best(text, allowed, 1) != [sid]:
            return None
        within = np.zeros(len(allowed), bool)
        within[self.members[sid]] = True
        within &= allowed
        for hit in shown:
            other = resolver.resolve(hit.tool.name)
            if other is not None and other < len(within):
                within[other] = False
        rest = self._without_name(text, sid)
        return (rest, within) if rest and within.any() else None

    def _without_name(self, text: str, sid: int) -> str:
        named = set(analyze(self.keys[sid]))
        return " ".join(w for w in text.split() if not (set(analyze(w)) & named))

    def name(self, sid: int) -> str:
        return self.keys[sid]
