"""``open_catalog(spec)``: the one way a catalog argument becomes a catalog.

The CLI's ``CATALOG`` argument, the console, ``audit`` and replicas all go through it. A spec
is ``demo`` (the catalog that ships with toolscout, every tool callable), a
``postgresql://`` URL (the shared catalog every replica serves), a directory holding
``tools.jsonl``, a declaration file (``.yaml``/``.yml``/``.json``/``.jsonl``), a store
written by ``Catalog.save`` or a gateway's tool-list cache (``serve --cache``: the upstream
servers' tools as last listed). Anything else is a :class:`~toolscout.errors.ConfigError` that
says what a spec may be.
"""

from __future__ import annotations

import os
import re

from ..catalog import DECLARATION_SUFFIXES, Catalog
from ..demo import demo_catalog
from ..errors import ConfigError
from ..scaleout.replica import SharedCatalog
from ..storage import SharedStore, is_store_url, open_store
from .files import tools_file
from .mcp.offline import cached_tools

__all__ = ["DEMO", "SPEC_HINT", "open_catalog"]

_SQLITE_HEADER = b"SQLite format 3\x00"

DEMO = "demo"
SPEC_HINT = (
    "Pass a declaration file (.yaml, .json, .jsonl), a store saved with Catalog.save, a directory "
    "holding tools.jsonl, a postgresql:// URL, or 'demo'."
)
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def open_catalog(spec: str | os.PathLike[str], *, listen: bool = False, kind: str = "catalog") -> Catalog:
    """The catalog ``spec`` names, loaded (the demo's with handlers; a store's with its
    :attr:`~toolscout.catalog_base.BaseCatalog.store` set for index snapshots).

    For a URL of a shared engine (``postgresql://``) this is a :class:`~toolscout.scaleout.replica.SharedCatalog`:
    ``listen`` follows other replicas' writes on a background thread (a one-off command
    reads once and leaves it off), ``kind`` labels the sources it writes. An empty spec, a
    URL of another scheme or a path with nothing at it raises :class:`ConfigError` (code
    ``config_error``; ``details`` has the ``spec``, or only a URL's ``scheme``); a file that
    is neither a declaration file nor a store raises what its loader raises
    (``invalid_declaration``, ``store_error``).
    """
    text = os.fspath(spec)
    if not text.strip():
        raise ConfigError("no catalog given", hint=SPEC_HINT, spec=text)
    if text == DEMO:
        return demo_catalog(skills_and_agents=True)  # the catalog `toolscout demo` shows
    if is_store_url(text):  # a store by URL: open_store picks the engine from the scheme
        store = open_store(text)
        if isinstance(store, SharedStore):  # the shared catalog, as every replica on it serves it
            return SharedCatalog(store, kind=kind, listen=listen)
        catalog = Catalog()
        catalog._adopt(store.load_tools() or cached_tools(store))
        catalog.store = store
        return catalog
    if _URL.match(text):
        scheme = text.split("://", 1)[0]  # not the whole URL: it may carry a password
        raise ConfigError(f"unknown catalog spec: no catalog engine for {scheme}://", hint=SPEC_HINT, scheme=scheme)
    path = tools_file(text)
    if path is None:
        raise ConfigError(f"no catalog at {text!r}", hint=SPEC_HINT, spec=text)
    if path.suffix not in DECLARATION_SUFFIXES and not _is_sqlite(path):
        raise ConfigError(  # not "delete it and save again": it is someone's file, not a damaged store
            f"{text} is not a catalog: neither a declaration file (.yaml, .yml, .json, .jsonl) nor a toolscout store",
            hint=SPEC_HINT,
            spec=text,
        )
    catalog = Catalog.open(path)
    if not len(catalog) and catalog.store is not None:  # a gateway's cache: the upstreams' tool lists
        catalog._adopt(cached_tools(catalog.store))
    return catalog


def _is_sqlite(path: os.PathLike[str]) -> bool:
    """Whether the file starts as an SQLite database does (an empty file counts: a new store)."""
    try:
        with open(path, "rb") as f:
            head = f.read(len(_SQLITE_HEADER))
    except OSError:
        return True  # let the store's own open say what is wrong
    return not head or head == _SQLITE_HEADER
