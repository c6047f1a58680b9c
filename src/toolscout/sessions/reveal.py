"""The reveal set: the tools one conversation has been shown beyond its pinned ones.

In list order (append-only: a tool keeps its place, so the bytes before it never change),
bounded (past the limit the least recently used tool outside the batch being added goes,
and a tool the conversation keeps calling goes last), with the version last sent of each
and the tools a provider holds natively. Plain data with its rules and no catalog: the
session decides what may be revealed (:class:`~toolscout.session.Session`) and this keeps
what was. Its :meth:`RevealSet.state` is what a shared store saves.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

from ..model import Tool

__all__ = ["RevealSet"]


class RevealSet:
    """Revealed tools in list order, their recency and versions, the provider's loaded tools."""

    def __init__(self, limit: int) -> None:
        self.limit = max(1, limit)
        self.revealed: OrderedDict[str, None] = OrderedDict()  # reveal order (list order)
        self.loaded: OrderedDict[str, None] = OrderedDict()  # held by the provider (native)
        self.recency: OrderedDict[str, None] = OrderedDict()  # least recently used first
        self.versions: dict[str, str] = {}  # version last sent, per revealed/pinned name
        self.calls: dict[str, int] = {}  # successful calls per tool (auto_pin's "hot")
        self.revision = 0
        """Bumped whenever what the list shows changes (a tool revealed, dropped, loaded or
        unloaded): a session rebuilds its list only then (recency and calls do not count)."""

    def drop(self, name: str) -> None:
        if self.revealed.pop(name, 0) is None:
            self.revision += 1
        self.recency.pop(name, None)
        self.versions.pop(name, None)

    def load(self, name: str) -> None:
        """The provider now holds ``name`` (native loading)."""
        if name not in self.loaded:
            self.loaded[name] = None
            self.revision += 1

    def unload(self, name: str) -> None:
        if self.loaded.pop(name, 0) is None:
            self.revision += 1

    def touch(self, name: str) -> None:
        if name in self.recency:
            self.recency.move_to_end(name)

    def called(self, name: str) -> None:
        self.calls[name] = self.calls.get(name, 0) + 1

    def add(self, tools: Iterable[Tool], batch: set[str], hot: Callable[[str], bool]) -> tuple[list[str], list[str]]:
        """Reveal ``tools`` (already admitted) after those already here; returns the names
        added and the names evicted to make room. A batch never evicts its own members
        (``batch``: every name of the request), and one larger than the limit loads only
        what fits; ``hot`` tools are evicted last."""
        added: list[str] = []
        evicted: list[str] = []
        for tool in tools:
            name = tool.name
            if name in self.revealed:
                self.recency.move_to_end(name)
                continue
            if len(self.revealed) >= self.limit:
                victim = next((n for n in self.recency if n not in batch and not hot(n)), None)
                if victim is None:
                    victim = next((n for n in self.recency if n not in batch), None)
                if victim is None:
                    continue
                self.drop(victim)
                evicted.append(victim)
            self.revealed[name] = None
            self.recency[name] = None
            self.versions[name] = tool.version
            added.append(name)
        if added or evicted:
            self.revision += 1
        return added, evicted

    def state(self) -> dict[str, Any]:
        """The set as small JSON (a shared store keeps it with the session's id and counters)."""
        return {
            "revealed": list(self.revealed),
            "loaded": list(self.loaded),
            "recency": list(self.recency),
            "versions": dict(self.versions),
        }
