"""Persisted upstream tool lists, so a restart answers ``find_tools`` before any server is up.

Each server's raw ``tools/list`` is stored in the toolscout store (namespace ``mcp.tools``)
with the hash of the server's config and the time it was fetched. A changed config
invalidates the entry (the server might now list other tools); an unchanged one is served
even when the server is down, which keeps its tools searchable.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ...storage import open_store
from ...storage.paths import cache_dir, keyed_name

__all__ = ["CachedList", "ToolListCache", "default_cache_path"]

NAMESPACE = "mcp.tools"


class _Blobs(Protocol):
    """The part of :class:`toolscout.storage.Store` this cache needs."""

    def put(self, ns: str, key: str, value: bytes | str, meta: dict[str, Any] | None = None) -> None: ...
    def get(self, ns: str, key: str) -> Any: ...


@dataclass(frozen=True, slots=True)
class CachedList:
    tools: list[dict[str, Any]]
    fetched_at: float
    config_hash: str


class ToolListCache:
    def __init__(self, store: _Blobs) -> None:
        self._store = store

    @property
    def store(self) -> Any:
        """The underlying store (the gateway keeps embedding vectors there too)."""
        return self._store

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> ToolListCache:
        """The cache in the store at ``path`` (a file, or any :func:`open_store` URL)."""
        return cls(open_store(path))

    def save(self, server: str, config_hash: str, tools: list[dict[str, Any]]) -> None:
        meta = {"config_hash": config_hash, "fetched_at": time.time(), "count": len(tools)}
        self._store.put(NAMESPACE, server, json.dumps(tools, separators=(",", ":")), meta)

    def load(self, server: str, config_hash: str) -> CachedList | None:
        """The cached list, or ``None`` if absent, unreadable, or fetched under another config."""
        entry = self._store.get(NAMESPACE, server)
        if entry is None or entry.meta.get("config_hash") != config_hash:
            return None
        try:
            value = entry.value if isinstance(entry.value, str) else entry.value.decode()
            tools = json.loads(value)
        except (ValueError, UnicodeDecodeError):
            return None
        if not isinstance(tools, list):
            return None
        return CachedList(tools, float(entry.meta.get("fetched_at", 0.0)), config_hash)


def default_cache_path(config_path: str | os.PathLike[str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/toolscout/mcp-<name>-<hash of its full path>.db``: one cache per
    config file, so two projects' ``servers.json`` keep apart their tool lists (and the audit
    log, when no store is set)."""
    if not config_path:
        return cache_dir() / "mcp-gateway.db"
    return cache_dir() / keyed_name("mcp", config_path)
