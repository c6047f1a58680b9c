"""Where toolscout keeps state: one :class:`Store` contract, engines behind it, one way to open one.

``open_store(url_or_path)`` is the only place an engine is chosen: a plain path (or
``sqlite:///path``) opens the SQLite file, ``postgresql://`` (``postgres://``) the shared
PostgreSQL store, and any scheme registered with :func:`register_engine` its engine. Adding
an engine is one module implementing :class:`Store` (or :class:`SharedStore`, to be shared
by replicas) and one :func:`register_engine` call; nothing else changes (docs/store.md).

The stores toolscout has, one name per kind:

* :class:`Store`: a catalog's tool records and the blobs and arrays of the parts above it
  (tool-list cache, vectors, pins, usage events, index snapshots); engines
  :class:`SQLiteStore` and :class:`PostgresStore`;
* a *session store* (:class:`~toolscout.sessions.store.SessionStore`): conversations between
  requests, in memory or in Redis;
* the *vector cache* (:class:`~toolscout.embed.VectorCache`) and the *usage log*
  (:class:`~toolscout.search.learning.UsageLearner`) are users of a :class:`Store`, not stores.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ..errors import ConfigError, StoreError, StoreUnavailable
from ._codec import tools_digest
from .base import (
    BlobStore,
    ChangeFeed,
    Entry,
    Follower,
    SharedStore,
    SourceChange,
    SourceState,
    SourceWrite,
    Store,
    StoreHealth,
)
from .postgres import PostgresStore, describe_dsn
from .sqlite import FORMAT_VERSION, SQLiteStore, load_tools, save_catalog

__all__ = [
    "FORMAT_VERSION",
    "BlobStore",
    "ChangeFeed",
    "Entry",
    "Follower",
    "PostgresStore",
    "SQLiteStore",
    "SharedStore",
    "SourceChange",
    "SourceState",
    "SourceWrite",
    "Store",
    "StoreError",
    "StoreHealth",
    "StoreUnavailable",
    "describe_dsn",
    "engines",
    "is_store_url",
    "load_tools",
    "open_store",
    "register_engine",
    "save_catalog",
    "store_scheme",
    "tools_digest",
    "unregister_engine",
]

Opener = Callable[[str], Store]
"""Opens a store from its URL (the whole string, scheme included)."""

_ENGINES: dict[str, Opener] = {}


def register_engine(scheme: str, opener: Opener) -> None:
    """Make ``open_store("{scheme}://...")`` call ``opener(url)``. Registering a scheme
    again replaces its engine (a test's fake, a subclass with other defaults)."""
    if not scheme or not scheme.replace("+", "").replace("-", "").replace(".", "").isalnum():
        raise ConfigError(f"not a URL scheme: {scheme!r}")
    _ENGINES[scheme.lower()] = opener


def unregister_engine(scheme: str) -> None:
    """Forget an engine registered with :func:`register_engine` (tests)."""
    _ENGINES.pop(scheme.lower(), None)


def engines() -> list[str]:
    """The registered URL schemes, sorted."""
    return sorted(_ENGINES)


def store_scheme(spec: object) -> str | None:
    """The URL scheme of ``spec`` (``"postgresql"`` for ``postgresql://...``), or ``None``
    when it is a path (a path has no ``scheme://``; ``C:\\dir`` is a path)."""
    if not isinstance(spec, str) or "://" not in spec:
        return None
    scheme = spec.split("://", 1)[0].lower()
    return scheme if len(scheme) > 1 and scheme.replace("+", "").replace("-", "").replace(".", "").isalnum() else None


def is_store_url(spec: object) -> bool:
    """Whether ``spec`` names a registered engine by URL (not a file path): a ``--store`` or
    catalog argument to hand to :func:`open_store` rather than to a file loader."""
    scheme = store_scheme(spec)
    return scheme is not None and scheme in _ENGINES


def open_store(url_or_path: str | os.PathLike[str]) -> Store:
    """Open the store ``url_or_path`` names: a path (or ``sqlite:///path``) is an SQLite
    file, created if missing; a URL goes to the engine registered for its scheme.

    Raises :class:`~toolscout.errors.ConfigError` for a scheme no engine handles (or
    :class:`~toolscout.errors.MissingExtra` when the engine's extra is not installed),
    :class:`~toolscout.errors.StoreError` for a file that is not a store, and
    :class:`~toolscout.errors.StoreUnavailable` for a database that cannot be reached."""
    if isinstance(url_or_path, os.PathLike):
        return SQLiteStore(Path(url_or_path))
    scheme = store_scheme(url_or_path)
    if scheme is None:
        return SQLiteStore(url_or_path)
    opener = _ENGINES.get(scheme)
    if opener is None:
        raise ConfigError(
            f"no store engine for {scheme}:// URLs",
            hint=f"Use a file path, or one of: {', '.join(f'{s}://' for s in engines())}.",
            scheme=scheme,
        )
    return opener(url_or_path)


register_engine("sqlite", SQLiteStore.from_url)
register_engine("postgresql", PostgresStore)
register_engine("postgres", PostgresStore)
