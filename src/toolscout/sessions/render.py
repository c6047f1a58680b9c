"""Tool definitions as a session sends them: rendered once per format and version, and
stubs for deferred tools (seed 003's stub mode).

The same dict goes out every turn for the same tool, format and version: that identity is
what keeps a list's bytes, and a provider's prompt cache, unchanged between turns. A
session's lists share one :class:`ToolRenderer`; the static list's size (what the ledger
compares against) is counted once per catalog generation, format and scope for every
session of the process (:func:`baseline_tokens`).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

from .. import formats
from ..accounting.ledger import count_definitions
from ..context import Allow
from ..model import DeferPolicy, Tool
from ..naming import wire_name

__all__ = ["ToolRenderer", "baseline_tokens", "both"]


class ToolRenderer:
    """One session's rendered definitions and stubs, cached by ``(format, name)`` and kept
    while the tool's version stays the same."""

    def __init__(self, find_name: Callable[[], str]) -> None:
        self._find_name = find_name  # the find meta-tool's name a stub tells the model to call
        self._full: dict[tuple[str, str], tuple[str, dict[str, Any]]] = {}
        self._stubs: dict[tuple[str, str], tuple[str, Tool, dict[str, Any]]] = {}

    def full(self, tool: Tool, format: str) -> dict[str, Any]:
        """``tool``'s whole definition in ``format``."""
        key = (format, tool.name)
        cached = self._full.get(key)
        if cached is not None and cached[0] == tool.version:
            return cached[1]
        rendered = formats.render(tool, format)
        self._full[key] = (tool.version, rendered)
        return rendered

    def stub(self, tool: Tool, format: str) -> tuple[Tool, dict[str, Any]]:
        """``tool`` as a stub (its name and one line saying how to load its parameters),
        as a record and rendered in ``format``."""
        key = (format, tool.name)
        cached = self._stubs.get(key)
        if cached is not None and cached[0] == tool.version:
            return cached[1], cached[2]
        wire = wire_name(tool.name, format)
        line = f"{tool.summary(100)} (Load first: {self._find_name()} select:{wire})"
        record = Tool(tool.name, line, source=tool.source, annotations=tool.annotations, defer=DeferPolicy.ALWAYS)
        rendered = formats.render(record, format)
        self._stubs[key] = (tool.version, record, rendered)
        return record, rendered


@lru_cache(maxsize=256)
def both(mine: Allow, edge: Allow) -> Allow:
    """Both rules as one predicate, the same object for the same pair (the index caches
    one mask per predicate object)."""
    return lambda tool: mine(tool) and edge(tool)


_BASELINES: OrderedDict[tuple[Any, ...], int] = OrderedDict()


def baseline_tokens(catalog: Iterable[Tool] | Any, format: str, permitted: Callable[[Tool], bool], scope: tuple[Any, ...]) -> int:
    """Tokens of the static list (every permitted tool's full schema in ``format``), kept
    for the 64 most recent ``(catalog, generation, format, scope)``: every session over
    the same catalog and rules shares one count."""
    key = (id(catalog), catalog.generation, format, *scope)
    value = _BASELINES.get(key)
    if value is None:
        value = count_definitions([formats.render(t, format) for t in catalog if permitted(t)])
        _BASELINES[key] = value
        if len(_BASELINES) > 64:
            _BASELINES.popitem(last=False)
    return value
