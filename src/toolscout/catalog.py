"""The catalog you create: the pure :class:`~toolscout.catalog_base.BaseCatalog` plus loaders.

:class:`Catalog` adds what the README shows (the ``tool`` decorator, ``load``,
``add_definitions``, ``load_skills``, ``load_agents``, ``add_source``, ``save`` and
``Catalog.open``) on top of the in-memory structure. Each method only hands its input to a
loader of :mod:`toolscout.sources` and adds the tools it returns, so this module belongs to
the sources layer; the search index, the gateway and the sources themselves take the pure
``BaseCatalog`` (every ``Catalog`` is one). Opening any catalog spec (a store, a directory,
``demo``, a ``postgresql://`` URL) is :func:`toolscout.sources.open.open_catalog`.

Names are unique. Adding a name that already exists from another origin raises
:class:`~toolscout.errors.NameCollision` naming both origins; load the second source with
``prefix="..."`` to namespace it (``{prefix}_{name}``, the original name is kept for calls).
Adding the same name from the *same* origin replaces it (a reload).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, overload

from .catalog_base import BaseCatalog, CatalogChange, Handler, prefixed, prefixed_name
from .errors import DeclarationError
from .model import Tool
from .sources import Source
from .sources.agents import load_agents
from .sources.declarations import load_declarations
from .sources.definitions import tools_from_definitions
from .sources.functions import function_tool
from .sources.skills import load_skills
from .storage import SQLiteStore, load_tools, save_catalog

__all__ = ["BaseCatalog", "Catalog", "CatalogChange", "Handler"]

DECLARATION_SUFFIXES = frozenset({".yaml", ".yml", ".json", ".jsonl"})
"""Files :meth:`Catalog.open` reads as declarations; any other path is a store."""


class Catalog(BaseCatalog):
    """A :class:`BaseCatalog` that loads tools from functions, files and definitions, and
    saves to / opens from a store."""

    last_skipped: list[DeclarationError]
    """The entries the last ``load``/``load_skills``/``load_agents`` with ``skip_invalid=True`` left out."""

    # -- sources -----------------------------------------------------------------
    @overload
    def tool(self, fn: Callable[..., Any], /) -> Callable[..., Any]: ...
    @overload
    def tool(self, fn: None = None, /, **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]: ...

    def tool(self, fn: Callable[..., Any] | None = None, /, **options: Any) -> Any:
        """Decorator: register a sync or async function as a tool (schema from type hints).

        Options are :class:`Tool` fields (``name``, ``description``, ``category``, ``tags``,
        ``annotations``, ``permission``, ``defer``, ``searchable``...).
        """

        def register(func: Callable[..., Any]) -> Callable[..., Any]:
            self.add_function(func, **options)
            return func

        return register(fn) if fn is not None else register

    def add_function(self, fn: Callable[..., Any], **options: Any) -> Tool:
        tool, handler = function_tool(fn, **options)
        return self.add(tool, handler, replace=True)

    def load(
        self,
        path: str | os.PathLike[str],
        *,
        prefix: str | None = None,
        skip_invalid: bool = False,
        lang: str | None = None,
    ) -> list[Tool]:
        """Load a declaration file (``.yaml``/``.yml``, ``.json``, ``.jsonl``).

        A malformed entry raises :class:`DeclarationError` naming the file, line and field,
        and nothing from that file is added, unless ``skip_invalid=True`` (then the bad
        entries are skipped and listed in ``self.last_skipped``).
        """
        tools, skipped = load_declarations(Path(path), skip_invalid=skip_invalid, lang=lang)
        self.last_skipped = skipped
        return self.extend([prefixed(t, prefix) for t in tools])

    def add_definitions(
        self,
        definitions: Iterable[Mapping[str, Any]],
        *,
        prefix: str | None = None,
        source: str = "definitions",
        handlers: Mapping[str, Handler] | None = None,
    ) -> list[Tool]:
        """Add tool definitions you already have: OpenAI (Chat or Responses), Anthropic,
        MCP, Gemini or the generic seed-001 shape; the format is detected per entry."""
        tools = [prefixed(t, prefix) for t in tools_from_definitions(definitions, source=source)]
        mapped = {prefixed_name(n, prefix): h for n, h in (handlers or {}).items()}
        return self.extend(tools, handlers=mapped)

    def add_source(
        self, source: Source | Iterable[tuple[Tool, Handler | None]], *, prefix: str | None = None
    ) -> list[Tool]:
        """Add every tool of a :class:`~toolscout.sources.Source` (or of an iterable of
        ``(tool, handler)`` pairs, e.g. ``tools_from_openapi(...)``), all or nothing."""
        pairs = list(source.load() if isinstance(source, Source) else source)
        tools = [prefixed(tool, prefix) for tool, _ in pairs]
        handlers = {t.name: h for t, (_, h) in zip(tools, pairs, strict=True)}
        return self.extend(tools, handlers=handlers)

    def load_skills(
        self, path: str | os.PathLike[str], *, prefix: str | None = None, skip_invalid: bool = False
    ) -> list[Tool]:
        """Add every Agent Skills folder (a ``SKILL.md`` with ``name`` and ``description``
        front matter) under ``path`` as an entry of kind ``skill``; calling one returns its
        instructions. Found only when a search asks for skills (``kinds``) unless
        :attr:`default_kinds` includes them."""
        pairs, self.last_skipped = load_skills(path, skip_invalid=skip_invalid)
        return self.add_source(pairs, prefix=prefix)

    def load_agents(
        self, path: str | os.PathLike[str], *, prefix: str | None = None, skip_invalid: bool = False
    ) -> list[Tool]:
        """Add A2A agent cards (a ``.json`` file, or a folder of them) as entries of kind
        ``agent``; calling one returns its card's essentials."""
        pairs, self.last_skipped = load_agents(path, skip_invalid=skip_invalid)
        return self.add_source(pairs, prefix=prefix)

    # -- persistence ---------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the catalog (records only; handlers are code) to a SQLite store, atomically."""
        save_catalog(self, Path(path))

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Catalog:
        """Load a catalog written by :meth:`save` (or any declaration file, by extension)."""
        p = Path(path)
        catalog = cls()
        if p.suffix in DECLARATION_SUFFIXES:
            catalog.load(p)
            return catalog
        catalog._adopt(load_tools(p))
        catalog.store = SQLiteStore(p)
        return catalog
