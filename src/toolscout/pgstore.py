"""Deprecated: the PostgreSQL store moved to :mod:`toolscout.storage.postgres` (one release
of overlap). Open it with :func:`toolscout.storage.open_store` (``postgresql://...``)."""

from __future__ import annotations

import warnings
from typing import Any

from .storage import postgres

_NAMES = (
    "CHANNEL",
    "MIGRATIONS",
    "SCHEMA",
    "PostgresStore",
    "SourceState",
    "SourceWrite",
    "describe_dsn",
    "is_postgres_url",
)

__all__ = list(_NAMES)


def __getattr__(name: str) -> Any:
    if name not in _NAMES:
        raise AttributeError(f"module 'toolscout.pgstore' has no attribute {name!r}")
    warnings.warn(
        f"toolscout.pgstore.{name} is deprecated; use toolscout.storage.postgres.{name} "
        "(toolscout.pgstore goes in the next release)",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(postgres, name)
