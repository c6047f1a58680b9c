"""The paths CHANGELOG.md lists as removed stay removed: an old import fails at once with
Python's own error rather than half-working, and the replacements named there exist."""

from __future__ import annotations

import importlib
import inspect

import pytest

import toolscout.server.app
import toolscout.server.mcp
import toolscout.session
import toolscout.sessions.store
import toolscout.sources.mcp.config
import toolscout.storage
import toolscout.storage.postgres
from toolscout.gateway import Gateway


@pytest.mark.parametrize("module", ["toolscout.store", "toolscout.pgstore", "toolscout.mcp"])
def test_a_removed_module_does_not_import(module: str) -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(module)


def test_removed_names_are_gone_and_their_replacements_are_there() -> None:
    gone = [(toolscout.server.mcp, "build"), (toolscout.server.mcp, "run_with"), (toolscout.session, "StateStore")]
    gone += [(Gateway, m) for m in ("parse_find", "search", "run", "use", "record_search", "record_call")]
    assert [f"{getattr(o, '__name__', o)}.{n}" for o, n in gone if hasattr(o, n)] == []
    assert callable(toolscout.server.app.build_app) and callable(toolscout.server.app.run_with)
    assert toolscout.sessions.store.SessionStore and toolscout.storage.SQLiteStore and toolscout.storage.postgres.PostgresStore
    assert callable(toolscout.sources.mcp.config.parse_config) and callable(toolscout.sources.mcp.config.load_config)


def test_the_entries_take_options_only_through_the_context() -> None:
    assert list(inspect.signature(Gateway.find).parameters) == ["self", "request", "ctx", "loaded", "autocut"]
    assert list(inspect.signature(Gateway.execute).parameters) == ["self", "request", "ctx"]
