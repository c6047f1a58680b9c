"""The pure catalog: tool records, their handlers and change events, in memory.

:class:`BaseCatalog` sits at the bottom of the layers (it imports only the model, errors and,
for typing, the store): the search index, the gateway and every source depend on it, and
none of its methods reads a file. The catalog users create, :class:`toolscout.Catalog`
(module :mod:`toolscout.catalog`), is this structure plus the loaders of the sources layer
(``tool``, ``load``, ``add_definitions``, ``load_skills``, ``load_agents``, ``save``,
``open``); a subclass rather than injected hooks, so a pure catalog has no I/O methods at
all and the import graph shows exactly who needs the loaders.

Names are unique. Adding a name that already exists from another origin raises
:class:`~toolscout.errors.NameCollision` naming both origins; load the second source with
``prefix="..."`` to namespace it (``{prefix}_{name}``, the original name is kept for calls).
Adding the same name from the *same* origin replaces it (a reload).
"""

from __future__ import annotations

import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from operator import attrgetter
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from .errors import NameCollision
from .model import Tool

if TYPE_CHECKING:
    from .storage import Store

__all__ = ["BaseCatalog", "CatalogChange", "Handler", "ListingSuperseded", "prefixed", "prefixed_name", "weak_listener"]

Handler: TypeAlias = Callable[[dict[str, Any]], Any]
"""Runs a tool: takes the validated arguments dict, returns a value, an awaitable, or a
:class:`~toolscout.model.CallResult` (passed through as is, e.g. from an MCP upstream)."""
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class CatalogChange:
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()


def prefixed(tool: Tool, prefix: str | None) -> Tool:
    if not prefix:
        return tool
    return tool.replace(name=f"{prefix}_{tool.name}", original_name=tool.call_name)


def prefixed_name(name: str, prefix: str | None) -> str:
    return f"{prefix}_{name}" if prefix else name


class ListingSuperseded(Exception):
    """A shared catalog refused a source's listing: another writer changed that source after
    the listing began, so writing it could put back what the other writer removed. List
    again and pass :attr:`version` as ``listed_at``: a listing that starts after the refusal
    is at least as new as anything written so far."""

    def __init__(self, source_id: str, version: int) -> None:
        super().__init__(f"source '{source_id}' changed to version {version} while it was being listed")
        self.source_id = source_id
        self.version = version


class BaseCatalog:
    """Tools by unique name, their handlers, and a change event after every write."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        self._handlers: dict[str, Handler] = {}
        self._listeners: list[Callable[[CatalogChange], None]] = []
        self.generation = 0
        self.store: Store | None = None
        """The store this catalog was opened from, if any (the index keeps snapshots there)."""
        self.default_kinds: tuple[str, ...] = ("tool",)
        """What ``find_tools`` ranks when a request names no ``kinds`` (a gateway's own
        ``default_kinds`` wins): tools only, so loading skills or agents changes no
        existing search until asked for."""
        if tools:
            self.extend(tools)

    # -- reading -----------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def handler(self, name: str) -> Handler | None:
        return self._handlers.get(name)

    def categories(self) -> dict[str, int]:
        """Searchable, available tools per category, largest first (skills and agents are
        not counted: searches leave them out unless asked, so listing them would mislead)."""
        counts = Counter(
            t.category or "uncategorized"
            for t in self._tools.values()
            if t.searchable and t.available and t.kind == "tool"
        )
        return dict(counts.most_common())

    # -- writing -----------------------------------------------------------------
    def add(self, tool: Tool, handler: Handler | None = None, *, replace: bool = False) -> Tool:
        self.extend([tool], handlers={tool.name: handler} if handler else None, replace=replace)
        return tool

    def extend(
        self,
        tools: Iterable[Tool],
        *,
        handlers: Mapping[str, Handler | None] | None = None,
        replace: bool = False,
    ) -> list[Tool]:
        """Add many tools at once; all or nothing if any name collides."""
        batch = list(tools)
        seen: dict[str, Tool] = {}
        for tool in batch:
            if tool.name in seen:
                raise NameCollision(
                    f"tool name '{tool.name}' is declared twice: by {seen[tool.name].origin} "
                    f"and by {tool.origin}",
                    name=tool.name,
                    origins=[seen[tool.name].origin, tool.origin],
                )
            seen[tool.name] = tool
            old = self._tools.get(tool.name)
            if old is not None and not replace and old.origin != tool.origin:
                raise NameCollision(
                    f"tool name '{tool.name}' from {tool.origin} is already taken by {old.origin}",
                    name=tool.name,
                    origins=[old.origin, tool.origin],
                )
        for tool in batch:
            self._tools[tool.name] = tool
            handler = (handlers or {}).get(tool.name)
            if handler is not None:
                self._handlers[tool.name] = handler
        if batch:
            self._emit(CatalogChange(added=tuple(seen)))
        return batch

    def set_handler(self, name: str, handler: Handler) -> None:
        if name not in self._tools:
            raise KeyError(name)
        self._handlers[name] = handler

    def remove(self, *names: str) -> None:
        gone = tuple(n for n in names if self._tools.pop(n, None) is not None)
        for n in gone:
            self._handlers.pop(n, None)
        if gone:
            self._emit(CatalogChange(removed=gone))

    def claim(self, source_id: str, pairs: Iterable[tuple[Tool, T]]) -> tuple[list[tuple[Tool, T]], list[str]]:
        """The pairs whose tool names are free, or already ``source_id``'s (first one wins),
        and a reason for each of the others: two sources never silently share a name."""
        claimed: list[tuple[Tool, T]] = []
        clashes: list[str] = []
        seen: set[str] = set()
        for tool, item in pairs:
            other = self.get(tool.name)
            if tool.name in seen or (other is not None and other.source_id != source_id):
                owner = other.source_id if other is not None else source_id
                clashes.append(f"{tool.name}: name already used by '{owner}' (set a prefix)")
                continue
            seen.add(tool.name)
            claimed.append((tool, item))
        return claimed, clashes

    def listing_mark(self, source_id: str) -> int | None:
        """What a listing of ``source_id`` that starts now hands :meth:`replace_source` as
        ``listed_at``. None here: one process holds this catalog, so no other writer can
        overtake a listing; a shared catalog returns the source's version."""
        return None

    def replace_source(
        self,
        source_id: str,
        tools: Iterable[Tool],
        *,
        handlers: Mapping[str, Handler | None] | None = None,
        listed_at: int | None = None,
    ) -> CatalogChange:
        """Swap every tool of one source for a new list (an upstream's tools/list refresh).
        ``listed_at`` (from :meth:`listing_mark`) matters only to a shared catalog."""
        new = {t.name: t for t in tools}
        old = {n for n, t in self._tools.items() if t.source_id == source_id}
        removed = tuple(sorted(old - set(new)))
        for n in removed:
            self._tools.pop(n, None)
            self._handlers.pop(n, None)
        # Tools are immutable: the same object is unchanged, without comparing every field.
        changed = tuple(n for n, t in new.items() if (old_tool := self._tools.get(n)) is not t and old_tool != t)
        for n in changed:
            other = self._tools.get(n)
            if other is not None and other.source_id != source_id:
                raise NameCollision(
                    f"tool name '{n}' from {new[n].origin} is already taken by {other.origin}",
                    name=n,
                    origins=[other.origin, new[n].origin],
                )
        for n in changed:
            self._tools[n] = new[n]
        for n, h in (handlers or {}).items():
            if h is not None and n in self._tools:
                self._handlers[n] = h
        change = CatalogChange(added=changed, removed=removed)
        if changed or removed:
            self._emit(change)
        return change

    def subscribe(self, listener: Callable[[CatalogChange], None]) -> Callable[[], None]:
        """Call ``listener`` after every change; returns a function that unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def _emit(self, change: CatalogChange) -> None:
        self.generation += 1
        for listener in list(self._listeners):
            listener(change)

    def _adopt(self, tools: list[Tool]) -> None:
        """Take tools read back from a store into an empty catalog: their names are unique
        (the store's key), so :meth:`extend`'s per-tool checks are skipped (1M tools)."""
        names = list(map(attrgetter("name"), tools))
        table = dict(zip(names, tools, strict=True))
        if len(table) != len(tools) or self._tools:
            self.extend(tools)  # not what a store holds: the checked way
            return
        self._tools = table
        if tools:
            self._emit(CatalogChange(added=tuple(names)))


def weak_listener(method: Callable[[], Any]) -> Callable[[], None]:
    """``method`` called through a weak reference: a callback held by a long-lived catalog
    neither keeps a discarded gateway alive nor keeps working for it."""
    ref = weakref.WeakMethod(method)  # type: ignore[arg-type]

    def call() -> None:
        bound = ref()
        if bound is not None:
            bound()

    return call
