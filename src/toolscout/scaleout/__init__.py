"""Running several gateway processes on one catalog: the shared catalog every replica
follows from a shared store's change feed (:mod:`.replica`). Shared *sessions* live with
the other session stores (:mod:`toolscout.sessions.redis`)."""

from .replica import SharedCatalog, sync_source

__all__ = ["SharedCatalog", "sync_source"]
