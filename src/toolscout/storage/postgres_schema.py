"""The shared store's schema in PostgreSQL, as the ordered migrations every replica applies.

Kept apart from :mod:`.postgres` (the store) so the tables read in one place; the store
applies the ones a database lacks under an advisory lock (``PostgresStore._migrate``).
"""

from __future__ import annotations

__all__ = ["MIGRATIONS"]

MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (
        1,
        "sources, tools, blobs, meta",
        """
        CREATE TABLE toolscout.sources (
            source     TEXT PRIMARY KEY,
            kind       TEXT NOT NULL,
            version    BIGINT NOT NULL,
            tool_count INTEGER NOT NULL,
            updated_at DOUBLE PRECISION NOT NULL,
            updated_by TEXT NOT NULL DEFAULT ''
        );
        CREATE SEQUENCE toolscout.versions;
        CREATE TABLE toolscout.tools (
            source     TEXT NOT NULL REFERENCES toolscout.sources (source) ON DELETE CASCADE,
            name       TEXT NOT NULL,
            pos        INTEGER NOT NULL,
            changed_in BIGINT NOT NULL,
            digest     TEXT NOT NULL,
            version    TEXT NOT NULL,
            schema     TEXT NOT NULL,
            record     TEXT NOT NULL,
            PRIMARY KEY (source, name),
            CONSTRAINT tools_name_unique UNIQUE (name)
        );
        CREATE INDEX tools_changed ON toolscout.tools (source, changed_in);
        CREATE TABLE toolscout.blobs (
            ns         TEXT NOT NULL,
            key        TEXT NOT NULL,
            value      BYTEA NOT NULL,
            is_text    BOOLEAN NOT NULL,
            meta       TEXT NOT NULL DEFAULT '{}',
            updated_at DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (ns, key)
        );
        CREATE TABLE toolscout.meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        """,
    ),
)
"""``(version, name, SQL)`` in order. Append, never edit: a replica applies the ones its
database lacks, under an advisory lock, each in the transaction that records it."""
