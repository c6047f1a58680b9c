"""Deprecated: the SQLite store moved to :mod:`toolscout.storage` (one release of overlap).

``toolscout.store.Store`` is now :class:`toolscout.storage.SQLiteStore` (``toolscout.storage.Store``
is the contract every engine implements); open any store with :func:`toolscout.storage.open_store`.
"""

from __future__ import annotations

import warnings
from typing import Any

from . import storage
from .storage import sqlite

_MOVED: dict[str, tuple[Any, str]] = {
    "Store": (storage.SQLiteStore, "toolscout.storage.SQLiteStore"),
    "Entry": (storage.Entry, "toolscout.storage.Entry"),
    "FORMAT_VERSION": (storage.FORMAT_VERSION, "toolscout.storage.FORMAT_VERSION"),
    "load_tools": (storage.load_tools, "toolscout.storage.load_tools"),
    "save_catalog": (storage.save_catalog, "toolscout.storage.save_catalog"),
    "tools_digest": (storage.tools_digest, "toolscout.storage.tools_digest"),
    "_COLUMNS_NS": (sqlite._COLUMNS_NS, "toolscout.storage.sqlite._COLUMNS_NS"),
}

__all__ = ["FORMAT_VERSION", "Entry", "Store", "load_tools", "save_catalog", "tools_digest"]  # noqa: F822


def __getattr__(name: str) -> Any:
    moved = _MOVED.get(name)
    if moved is None:
        raise AttributeError(f"module 'toolscout.store' has no attribute {name!r}")
    warnings.warn(
        f"toolscout.store.{name} is deprecated; use {moved[1]} (toolscout.store goes in the next release)",
        DeprecationWarning,
        stacklevel=2,
    )
    return moved[0]
