"""A bounded cache of search outcomes for repeated queries (seed 001: "cache search
results for common queries").

Agents repeat themselves: the same few requests ("send an email", "list open issues") come
back in every conversation. A keyword search is already about a millisecond, but a hybrid
one embeds the query and fuses two rankings, and both rebuild a visibility mask for a new
caller. The cache keeps the index's *outcome* (ranked hits, mode, warnings, match count),
not a rendered answer: what the caller already holds (``loaded``) and how the surface
renders it still apply per request.

Correctness before hit rate. The key holds everything the ranking depends on: the
normalised request, the caller's visibility predicate (the same object for the same rule,
see :meth:`Visibility.predicate`), the catalog generation (every change bumps it, so a
changed catalog is never answered from the cache) and the learned-usage version (a credited
call changes the ranking; a search alone does not). An entry is never shared between
callers who may see different tools.
"""

from __future__ import annotations

import threading
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

__all__ = ["CacheStats", "FindCache", "find_key", "normalise_query"]

DEFAULT_SIZE = 1024


def normalise_query(query: str) -> str:
    """Case, width and spacing folded: "Send  an Email" and "send an email" are one entry."""
    return " ".join(unicodedata.normalize("NFKC", query).casefold().split())


@dataclass(frozen=True, slots=True)
class CacheStats:
    hits: int
    misses: int
    size: int
    capacity: int

    @property
    def hit_rate(self) -> float:
        asked = self.hits + self.misses
        return self.hits / asked if asked else 0.0


class FindCache:
    """Search outcomes by key, least recently used evicted past ``size`` entries."""

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self.capacity = max(1, int(size))
        self._entries: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple[Any, ...]) -> Any | None:
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return found

    def put(self, key: tuple[Any, ...], value: Any) -> None:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(self.hits, self.misses, len(self._entries), self.capacity)


def find_key(query: str, *parts: Any) -> tuple[Any, ...]:
    """The cache key of one search: the normalised query, then everything else the outcome
    depends on (limit, mode, category, exclusions, kinds, autocut, the caller's visibility
    predicate and ``allow``, the catalog generation and the learner's ranking version), so
    a change to any of them is a miss, never a stale answer."""
    return (normalise_query(query), *parts)
