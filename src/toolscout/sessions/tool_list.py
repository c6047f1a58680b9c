"""The tool list a session sends each turn: meta-tools, pinned tools, then revealed ones in
the order found (append-only), each rendered once per format and version.

Kept apart from :class:`~toolscout.session.Session` because building the list is a job of
its own (formats, stubs, the ledger's turn records) while the session decides *what* is in
it. :class:`ToolList` is mixed into ``Session``: it reads the session's decisions
(``_sync``, the pinned and revealed names, ``deferred``) and never changes them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import formats
from ..accounting.ledger import Ledger, count_definitions
from ..codemode.runner import EXECUTE_NAME, CodeLimits, execute_tool
from ..context import Allow
from ..model import Tool
from ..naming import wire_name
from .render import ToolRenderer, baseline_tokens
from .reveal import RevealSet

if TYPE_CHECKING:
    from ..gateway import Gateway

__all__ = ["ToolList"]


class ToolList:
    """The list-building half of a session (see the module docstring)."""

    # set by Session.__init__
    gateway: Gateway
    allow: Allow | None
    call_tool: bool
    use_tool: bool
    code_mode: CodeLimits | None
    stubs: bool
    progressive: bool
    format: str | None
    ledger: Ledger
    reveals: RevealSet
    _pinned: list[str]
    _active: bool
    _renderer: ToolRenderer
    _meta_cache: dict[str, list[dict[str, Any]]]
    _generation: int
    _list_memo: tuple[Any, ...] | None

    if TYPE_CHECKING:  # the session's decisions, defined on Session
        meta_names: tuple[str, ...]

        def _sync(self) -> None: ...
        def _permitted(self, tool: Tool) -> bool: ...
        def is_callable(self, name: str) -> bool: ...
        def deferred(self) -> list[Tool]: ...

    def _listed_metas(self) -> tuple[str, ...]:
        """The meta-tools of the next list: all of them while deferring; below the
        threshold only ``execute`` (in code mode), since every tool is listed anyway."""
        if self._active:
            return self.meta_names
        return (EXECUTE_NAME,) if self.code_mode else ()

    def _render(self, tool: Tool, format: str) -> dict[str, Any]:
        return self._renderer.full(tool, format)

    def meta_tools(self, format: str = "generic") -> list[dict[str, Any]]:
        cached = self._meta_cache.get(format)
        if cached is None:
            cached = self.gateway.meta_tools(format, call_tool=self.call_tool, use_tool=self.use_tool)
            if self.code_mode:
                cached = [*cached, formats.render(execute_tool(self.gateway.visible_categories(self.allow), self.code_mode), format)]
            self._meta_cache[format] = cached
        return cached

    def tool_names(self) -> list[str]:
        """Names in list order (meta-tools first when deferring)."""
        self._sync()
        metas = list(self._listed_metas())
        return [*metas, *(t.name for t, _ in self.listed())]

    def listed(self) -> list[tuple[Tool, bool]]:
        """The catalog tools of the list, in order, each with whether it goes as a stub.

        Normally: pinned tools, then revealed ones in the order found (append-only). With
        ``stubs=True`` while deferring: pinned tools, then every other visible tool in
        catalog order, as a stub until its schema is loaded (found), then in full at the
        same place. The list then never grows; a found tool changes bytes from its place on
        (once), and an evicted one goes back to its stub.
        """
        self._sync()
        catalog = self.gateway.catalog
        if not (self.stubs and self._active and self.progressive):
            return [(t, False) for t in (catalog.get(n) for n in (*self._pinned, *self.reveals.revealed)) if t is not None]
        out = [(t, False) for t in (catalog.get(n) for n in self._pinned) if t is not None]
        out += [(t, not self.is_callable(t.name)) for t in self.deferred()]
        return out

    def stub(self, tool: Tool, format: str = "generic") -> Tool:
        """``tool`` as a stub: its name and one line saying how to load its parameters."""
        return self._renderer.stub(tool, format)[0]

    def stub_tokens(self, format: str = "generic") -> int:
        """Tokens the stubs of the next list cost (0 without ``stubs=True``); the ledger's
        turns count them with the rest of the list."""
        return count_definitions([self._renderer.stub(t, format)[1] for t, stub in self.listed() if stub])

    def tools(self, format: str = "generic", *, record: bool = True, meta: bool = True) -> list[dict[str, Any]]:
        """The tool list for the next request, in ``format``; append-only across turns.

        The returned dicts are cached and shared between turns (that is what keeps their
        bytes identical): do not mutate them. ``record=False`` skips the ledger (which
        keeps references only: tokens are counted when the ledger is read).
        """
        self._sync()
        self.format = format
        # the same list as last turn unless the catalog, the reveal set or the request changed
        key = (format, meta, self._generation, self.reveals.revision, self.stubs, self.progressive)
        memo = self._list_memo
        if memo is not None and memo[0] == key:
            out, names = memo[1], memo[2]
        else:
            metas = self._listed_metas() if meta else ()
            built = [d for n, d in zip(self.meta_names, self.meta_tools(format), strict=True) if n in metas]
            listed_names: list[str] = list(metas)
            for tool, stub in self.listed():
                built.append(self._renderer.stub(tool, format)[1] if stub else self._renderer.full(tool, format))
                listed_names.append(tool.name)
            out, names = tuple(built), tuple(listed_names)
            self._list_memo = (key, out, names)
        if record:
            self.ledger.record(format, out, names, lambda: self.baseline_tokens(format))
        return list(out)

    def record_turn(self, format: str, definitions: list[dict[str, Any]], names: list[str]) -> None:
        """Ledger entry for a list an adapter built itself (native deferral modes)."""
        self.format = format
        self.ledger.record(format, definitions, names, lambda: self.baseline_tokens(format))

    def render(self, name: str, format: str) -> dict[str, Any] | None:
        """One tool's cached definition in ``format`` (``None`` if it is not in the catalog)."""
        tool = self.gateway.catalog.get(name)
        return self._render(tool, format) if tool is not None else None

    def wire(self, name: str) -> str:
        """``name`` as the model sees it in this session's format."""
        return wire_name(name, self.format) if self.format else name

    def baseline_tokens(self, format: str = "generic") -> int:
        """Tokens of the static list: every visible tool's full schema in ``format``."""
        scope = (id(self.gateway.visibility), id(self.allow))
        return baseline_tokens(self.gateway.catalog, format, self._permitted, scope)
