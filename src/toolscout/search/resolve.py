"""Every way a model names a tool, resolved in one place.

Models call tools by the catalog name, by that name in quotes or backticks, in another
spelling (``Send-Email``, ``send.email``), by the *wire name* a host API forced on it
(``formats`` shorten names OpenAI, Anthropic or Gemini reject), or by the upstream's own
name without the server prefix. ``select:a,b`` asks for tools by name, and a name that
matches nothing deserves did-you-mean suggestions. A query that *is* a tool's name (up to
case, separators, quotes and backticks) gets that tool first in every search mode
(:meth:`NameResolver.exact`), and ``use_tool`` runs it without asking
(:func:`is_clear_winner`): the exact-name rule and ``select:`` are written here only. The index, the hybrid ranker, the
gateway, :class:`~toolscout.session.Session` and the MCP server all ask this resolver, so
a name that works on one surface works on every surface.

A resolver is an immutable view of one snapshot of the index's tool list (doc ids are
positions in it); the index makes a new one when the catalog changes. Lookups that need
more than a dict (wire names, unprefixed names, suggestions) build their tables on first
use, so a catalog that never sees such a name never pays for them.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from itertools import compress
from operator import attrgetter, ne

import numpy as np

from ..model import Tool
from ..naming import WIRE_FORMATS, wire_name
from .suggest import NameSuggester, normalize_name, normalize_names

__all__ = [
    "SELECT_PREFIX",
    "NameResolver",
    "bare",
    "exact_match",
    "is_clear_winner",
    "is_exact_name",
    "parse_select",
    "select_names",
]

SELECT_PREFIX = "select:"

_Docs = int | list[int]
_CHUNK = 65_536
_hash = hash  # a test forces collisions through it


def select_names(query: str) -> list[str] | None:
    """The names of a ``select:a,b`` query (``None`` if ``query`` is not one)."""
    text = query.strip()
    if text[: len(SELECT_PREFIX)].lower() != SELECT_PREFIX:
        return None
    names = (bare(n) for n in text[len(SELECT_PREFIX) :].split(","))
    return list(dict.fromkeys(n for n in names if n))


def parse_select(query: str) -> tuple[str, ...] | None:
    """The names a ``select:a, `b`, "c"`` query asks for, each once, in order, without quotes
    or backticks (``()`` for ``select:`` alone); ``None`` if ``query`` is not one."""
    names = select_names(query)
    return None if names is None else tuple(names)


def is_exact_name(query: str, name: str) -> bool:
    """Whether ``query`` is ``name`` up to case, ``-``/``.``/``/``/space for ``_``, and
    surrounding quotes or backticks: the rule :meth:`NameResolver.exact` applies."""
    return normalize_name(query) == normalize_name(name)


def is_clear_winner(query: str, ranked: Sequence[tuple[str, float]], margin: float) -> bool:
    """Whether the first of ``ranked`` (``(name, relevance)``, best first) is plainly the tool
    ``query`` means: the only one, or named exactly by the query (:func:`is_exact_name`), or
    at least ``margin`` times as relevant as the second. ``use_tool`` runs only such a tool."""
    if not ranked:
        return False
    if len(ranked) == 1:
        return True
    (name, first), (_, second) = ranked[0], ranked[1]
    return is_exact_name(query, name) or first >= margin * second


def exact_match(query: str, resolver: NameResolver, allowed: Sequence[bool] | np.ndarray | None = None) -> Tool | None:
    """The allowed tool ``query`` names exactly (:meth:`NameResolver.exact`), or ``None``."""
    doc = resolver.exact(query, allowed)
    return None if doc is None else resolver.tools[doc]


def bare(name: str) -> str:
    """``name`` without surrounding whitespace, quotes or backticks."""
    return name.strip().strip("`'\"").strip()


def _add(table: dict[str, _Docs], key: str, doc: int) -> None:
    # One int per key; a list only where keys collide (rare).
    prev = table.get(key)
    if prev is None:
        table[key] = doc
    elif isinstance(prev, list):
        prev.append(doc)
    else:
        table[key] = [prev, doc]


def _as_list(found: _Docs | None) -> list[int]:
    return [] if found is None else found if isinstance(found, list) else [found]


class _HashTable:
    """Keys -> docs as two arrays: each key's ``hash()`` sorted, and the doc it came from.
    A lookup finds the docs whose key has the text's hash (binary search) and the caller
    checks them against the text, so a collision is never a wrong answer. At 1M names this
    is 12 bytes a name built in two C-level passes, where a dict was ~100 bytes a name
    (entries and int objects) and its inserts, spread over memory, ~0.4 s."""

    __slots__ = ("_docs", "_hashes")

    def __init__(self, hashes: np.ndarray, docs: np.ndarray) -> None:
        order = np.argsort(hashes, kind="stable")  # equal hashes keep doc order
        self._hashes = hashes[order]
        self._docs = docs[order].astype(np.int32)

    def candidates(self, text: str) -> list[int]:
        """Docs whose key may be ``text`` (same hash), in doc order."""
        h = _hash(text)
        hashes = self._hashes
        i = hashes.searchsorted(h)  # the method: np.searchsorted's dispatch costs ~5 µs more
        if i == len(hashes) or hashes[i] != h:
            return []
        return self._docs[i : hashes.searchsorted(h, "right")].tolist()  # type: ignore[no-any-return]


class NameResolver:
    """Name -> doc id for one snapshot of tools."""

    def __init__(self, tools: Sequence[Tool], *, suggestable: Sequence[bool] | None = None) -> None:
        self.tools = tools
        names = list(map(attrgetter("name"), tools))
        n = len(names)
        self._exact = _HashTable(np.fromiter(map(_hash, names), np.int64, n), np.arange(n, dtype=np.int32))
        # Only names that normalising changes: most catalog names are already normal
        # (``send_email``); their keys are hashed a chunk at a time and not kept.
        changed: list[int] = []
        hashes: list[int] = []
        for start in range(0, n, _CHUNK):  # a chunk at a time: few keys alive at once
            part = names[start : start + _CHUNK]
            keys = normalize_names(part)
            differ = list(map(ne, keys, part))
            hashes.extend(map(_hash, compress(keys, differ)))
            changed.extend(compress(range(start, start + len(part)), differ))
            del keys, part, differ
        self._by_norm = _HashTable(np.array(hashes, np.int64), np.array(changed, np.int32))
        del names, changed, hashes
        self._suggestable = suggestable
        self._wire: dict[str, int] | None = None
        self._original: dict[str, _Docs] | None = None
        self._suggester: NameSuggester | None = None
        self._lock = threading.Lock()

    def doc_of(self, name: str) -> int | None:
        """The doc of exactly this catalog name."""
        tools = self.tools
        return next((d for d in self._exact.candidates(name) if tools[d].name == name), None)

    def docs_named(self, text: str) -> list[int]:
        """Docs whose name equals ``text`` up to case, separators, quotes and backticks."""
        key = normalize_name(text)
        tools = self.tools
        docs = [d for d in self._by_norm.candidates(key) if normalize_name(tools[d].name) == key]
        same = self.doc_of(key)  # a tool named exactly ``key`` (kept out of _by_norm)
        if same is None or normalize_name(key) != key:
            return docs
        return [same] if not docs else sorted([*docs, same])

    def exact(self, query: str, allowed: Sequence[bool] | np.ndarray | None = None) -> int | None:
        """The doc ``query`` names exactly (up to case, separators, quotes and backticks)
        among ``allowed`` docs (every doc if ``None``); the tool spelled exactly as the bare
        query when several normalise alike, else the first. Any search mode puts it first."""
        docs = [d for d in self.docs_named(query) if allowed is None or allowed[d]]
        if not docs:
            return None
        plain = bare(query)
        tools = self.tools
        return next((d for d in docs if tools[d].name == plain), docs[0])

    def resolve(self, name: str) -> int | None:
        """The doc a model means by ``name``, or ``None``; never a guess between two tools.

        In order: the exact name; the name without quotes or backticks; a wire name of any
        host format; a unique match up to case and separators; a unique upstream name
        without its server prefix.
        """
        doc = self.doc_of(name)
        if doc is not None:
            return doc
        stripped = bare(name)
        doc = self.doc_of(stripped)
        if doc is not None:
            return doc
        doc = self._wire_names().get(stripped)
        if doc is not None:
            return doc
        for docs in (self.docs_named(stripped), _as_list(self._originals().get(normalize_name(stripped)))):
            if docs:
                return docs[0] if len(docs) == 1 else None
        return None

    def tool(self, name: str) -> Tool | None:
        doc = self.resolve(name)
        return None if doc is None else self.tools[doc]

    def suggest(self, text: str, n: int = 3) -> list[str]:
        """Did-you-mean: up to ``n`` searchable names close to ``text``."""
        return self._suggesting().suggest(text, n)

    def close(self, text: str, n: int = 3, cutoff: float = 0.5) -> list[tuple[str, float]]:
        """Up to ``n`` searchable names close to ``text`` with their similarity (0..1)."""
        return self._suggesting().scored(text, n, cutoff=cutoff)

    def _suggesting(self) -> NameSuggester:
        with self._lock:
            if self._suggester is None:
                ok = self._suggestable
                names = [t.name for i, t in enumerate(self.tools) if ok is None or ok[i]]
                self._suggester = NameSuggester(names)
            return self._suggester

    def _wire_names(self) -> dict[str, int]:
        """Wire name -> doc, for names some host format renames (built on first use)."""
        table = self._wire
        if table is None:
            table = {}
            for i, t in enumerate(self.tools):
                for fmt in WIRE_FORMATS:
                    wire = wire_name(t.name, fmt)
                    if wire != t.name:
                        table.setdefault(wire, i)
            self._wire = table
        return table

    def _originals(self) -> dict[str, _Docs]:
        """Normalised upstream name (before prefixing) -> docs, for prefixed tools."""
        table = self._original
        if table is None:
            table = {}
            for i, t in enumerate(self.tools):
                if t.original_name and t.original_name != t.name:
                    _add(table, normalize_name(t.original_name), i)
            self._original = table
        return table
