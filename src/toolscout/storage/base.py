"""The storage contract: what every engine implements and every other part relies on.

Why a contract: the catalog, the MCP tool-list cache, the embedding cache, rug-pull pins,
index snapshots and the usage log all keep their state in one store, and a gateway runs on
an SQLite file alone or on PostgreSQL when scaled out. Each of those parts is written once,
against :class:`Store`; an engine is one module that implements it (``docs/store.md``).

:class:`Store` is four things:

* **tool records**: a catalog's tools, replaced whole (``save_tools``) and read back in order;
* **key/value blobs**: ``(namespace, key) -> bytes | str`` with JSON metadata, for the parts
  above (``put``/``get``/``keys``/``delete``/``clear``);
* **arrays**: named numpy arrays as one value (index snapshots, vectors);
* **health**: whether the database answers now, for readiness probes.

:class:`SharedStore` adds what replicas need: tools grouped into versioned *sources* and a
feed of **change events** (:class:`SourceChange`) that says which source moved to which
version, so each replica reads only what changed. :class:`Follower` is what a surface asks
about something that follows such a feed (a :class:`~toolscout.scaleout.replica.SharedCatalog`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..model import Tool

__all__ = [
    "BlobStore",
    "ChangeFeed",
    "Entry",
    "Follower",
    "SharedStore",
    "SourceChange",
    "SourceState",
    "SourceWrite",
    "Store",
    "StoreHealth",
]


@dataclass(frozen=True, slots=True)
class Entry:
    """One value of a blob namespace, with the metadata stored next to it."""

    value: bytes | str
    meta: dict[str, Any] = field(default_factory=dict)
    updated_at: float = 0.0

    @property
    def text(self) -> str:
        return self.value if isinstance(self.value, str) else self.value.decode()


@dataclass(frozen=True, slots=True)
class StoreHealth:
    """A store's answer to "can you serve now?" (readiness probes, ``toolscout status``).

    ``engine`` names the implementation (``"sqlite"``, ``"postgresql"``...), ``where`` its
    location without credentials, ``error`` why it is not reachable."""

    engine: str
    where: str
    reachable: bool
    error: str | None = None


@dataclass(frozen=True, slots=True)
class SourceWrite:
    """What :meth:`SharedStore.write_source` did; ``version`` is the source's version after it."""

    source: str
    version: int
    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    stale: bool = False
    """Nothing was written: the source moved past the writer's ``listed_at`` (``version`` is
    where it is now)."""

    @property
    def unchanged(self) -> bool:
        return not (self.added or self.changed or self.removed)


@dataclass(frozen=True, slots=True)
class SourceState:
    """A source as of ``version``: every name in order (``None``: the same names as at
    ``since``), and the tools changed after ``since``."""

    source: str
    version: int
    since: int
    names: tuple[str, ...] | None
    changed: dict[str, Tool] = field(default_factory=dict)
    kind: str = ""


@dataclass(frozen=True, slots=True)
class SourceChange:
    """A change event: ``source`` is now at ``version``. ``base`` (the version the write
    replaced) and ``members`` (whether names came or went) let a follower holding ``base``
    skip re-reading the source's names when only tools' contents changed; ``None`` when
    the writer did not say (a deletion, a whole-catalog save)."""

    source: str
    version: int
    base: int | None = None
    members: bool | None = None


class BlobStore(Protocol):
    """The key/value part of :class:`Store`: all the caches (tool lists, vectors, pins,
    usage events) need."""

    def put(self, ns: str, key: str, value: bytes | str, meta: dict[str, Any] | None = None) -> None: ...
    def get(self, ns: str, key: str) -> Entry | None: ...
    def keys(self, ns: str) -> list[str]: ...
    def delete(self, ns: str, key: str) -> bool: ...


@runtime_checkable
class Store(BlobStore, Protocol):
    """A toolscout store: tool records, key/value blobs, arrays, health.

    Every write is atomic (all or nothing); every method may be called from several threads.
    A database that cannot be reached raises :class:`~toolscout.errors.StoreUnavailable`;
    misuse and damaged data raise :class:`~toolscout.errors.StoreError`."""

    engine: str
    """The engine's name, as registered with :func:`~toolscout.storage.register_engine`."""
    where: str
    """Where the data lives, for messages: a path, or ``host:port/db`` (never credentials)."""

    # -- tool records
    def save_tools(self, tools: Iterable[Tool]) -> int: ...
    def load_tools(self) -> list[Tool]: ...
    def tool_names(self) -> list[str]: ...
    def info(self) -> dict[str, str]: ...

    # -- blobs (beyond BlobStore)
    def put_many(self, ns: str, items: Iterable[tuple[str, bytes | str, dict[str, Any] | None]]) -> int: ...
    def clear(self, ns: str) -> int: ...

    # -- arrays
    def put_arrays(self, ns: str, key: str, arrays: Mapping[str, Any], meta: dict[str, Any] | None = None) -> None: ...
    def get_arrays(self, ns: str, key: str) -> dict[str, Any] | None: ...

    # -- lifecycle
    def health(self) -> StoreHealth: ...
    def close(self) -> None: ...
    def __enter__(self) -> Any: ...
    def __exit__(self, *exc: object) -> None: ...


class ChangeFeed(Protocol):
    """A subscription to a :class:`SharedStore`'s change events (one connection)."""

    def poll(self, timeout: float) -> list[SourceChange]:
        """The events that arrived within ``timeout`` s (possibly none); raises
        :class:`~toolscout.errors.StoreUnavailable` once the connection is lost."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class SharedStore(Store, Protocol):
    """A store many replicas share: tools grouped into versioned sources, and change events.

    A write to one source is one transaction that emits one :class:`SourceChange`; a
    follower reads only the rows changed since the version it holds."""

    def write_source(
        self,
        source: str,
        tools: Iterable[Tool],
        *,
        kind: str = "catalog",
        base: int | None = None,
        unchanged: Collection[str] = (),
        listed_at: int | None = None,
    ) -> SourceWrite: ...
    def delete_source(self, source: str) -> int | None: ...
    def read_source(self, source: str, since: int = 0, *, same_names_at: int | None = None) -> SourceState | None: ...
    def read_all(self) -> list[SourceState]: ...
    def source_versions(self) -> dict[str, int]: ...
    def sources(self) -> list[dict[str, Any]]: ...
    def listen(self) -> ChangeFeed: ...


@runtime_checkable
class Follower(Protocol):
    """Something kept in step with a :class:`SharedStore`'s change feed (a
    :class:`~toolscout.scaleout.replica.SharedCatalog`). Surfaces test for it with ``isinstance``
    instead of probing attributes: readiness reads :meth:`status`, the gateway rebuilds its
    index in :meth:`after_apply`, the server binds its loop and closes it."""

    def status(self) -> dict[str, Any]:
        """``engine``, ``store`` (where), ``connected``, ``last_error``, ``sources``, ``tools``."""
        ...

    def after_apply(self, callback: Callable[[], None]) -> None: ...
    def bind_loop(self, loop: asyncio.AbstractEventLoop) -> None: ...
    def close(self, timeout: float = 5.0) -> None: ...
