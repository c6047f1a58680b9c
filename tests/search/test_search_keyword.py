"""BM25F keyword backend: ranking sanity, field weighting, incremental rebuild."""

from __future__ import annotations

import numpy as np
import pytest

from toolscout.model import Tool
from toolscout.search.analyzer import analyze
from toolscout.search.base import Backend
from toolscout.search.keyword import KeywordBackend, tool_fields


def _tools() -> list[Tool]:
    return [
        Tool("send_email", "Send an email message to a recipient.", {"type": "object", "properties": {"to": {"type": "string", "description": "Recipient address"}}}),
        Tool("get_weather", "Current weather and forecast for a city.", {"type": "object", "properties": {"city": {"type": "string"}}}),
        Tool("create_invoice", "Create an invoice for a customer.", category="billing", tags=("payments",)),
        Tool("list_files", "List the files in a directory."),
        Tool("web_search", "", descriptions={"zh-CN": "搜索网页并返回结果"}, display={"zh-CN": "网页搜索"}),
    ]


def _names(backend: KeywordBackend, query: str, limit: int = 5, mask: np.ndarray | None = None) -> list[str]:
    return [backend._tools[h.doc].name for h in backend.search(query, limit=limit, mask=mask)]


@pytest.fixture
def backend() -> KeywordBackend:
    b = KeywordBackend()
    b.rebuild(_tools())
    return b


def test_is_a_backend(backend: KeywordBackend) -> None:
    assert isinstance(backend, Backend)


def test_ranks_the_obvious_tool_first(backend: KeywordBackend) -> None:
    assert _names(backend, "send an email")[0] == "send_email"
    assert _names(backend, "what is the weather forecast in Paris")[0] == "get_weather"
    assert _names(backend, "listing files")[0] == "list_files"  # stemming


def test_only_matching_docs_are_returned(backend: KeywordBackend) -> None:
    assert _names(backend, "weather") == ["get_weather"]
    assert _names(backend, "zebra quantum") == []


def test_parameters_category_tags_and_i18n_are_indexed(backend: KeywordBackend) -> None:
    assert _names(backend, "recipient")[0] == "send_email"  # parameter description
    assert _names(backend, "city")[0] == "get_weather"  # parameter name
    assert _names(backend, "billing") == ["create_invoice"]  # category
    assert _names(backend, "payments") == ["create_invoice"]  # tag
    assert _names(backend, "网页搜索") == ["web_search"]  # other-language display/description


def test_name_field_outweighs_description() -> None:
    b = KeywordBackend()
    b.rebuild([
        Tool("archive_notes", "Backup notes: stores a backup copy of notes in cold storage."),
        Tool("backup_database", "Stores the database in cold storage."),
    ])
    assert _names(b, "backup")[0] == "backup_database"


def test_mask_filters_before_ranking(backend: KeywordBackend) -> None:
    mask = np.ones(5, dtype=bool)
    mask[0] = False
    assert "send_email" not in _names(backend, "send email", mask=mask)


def test_limit_and_top_k(backend: KeywordBackend) -> None:
    assert len(backend.search("a the files email weather invoice", limit=2)) == 2
    assert backend.search("email", limit=0) == []


def test_rebuild_reuses_unchanged_rows_and_sees_new_tools(backend: KeywordBackend) -> None:
    tools = [*backend._tools[1:], Tool("post_message", "Post a chat message to a channel.")]
    backend.rebuild(tools)
    assert _names(backend, "send email") == []  # removed
    assert _names(backend, "chat message")[0] == "post_message"  # added
    assert _names(backend, "weather")[0] == "get_weather"  # kept


def test_max_score_bounds_every_score(backend: KeywordBackend) -> None:
    hits = backend.search("send email", limit=5)
    assert 0 < hits[0].score <= backend.max_score("send email")


def test_fields_read_nested_parameters() -> None:
    tool = Tool("t", "d", {"type": "object", "properties": {"filter": {"type": "object", "properties": {"status": {"description": "open or closed"}}}}})
    fields = tool_fields(tool)
    assert "status" in fields["param_names"] and "open or closed" in fields["param_text"]


def test_enum_values_are_searchable() -> None:
    b = KeywordBackend()
    b.rebuild([
        Tool("convert", "Convert a value.", {"type": "object", "properties": {"unit": {"enum": ["celsius", "fahrenheit"]}}}),
        Tool("other", "Something else."),
    ])
    assert _names(b, "fahrenheit") == ["convert"]


def test_empty_catalog_and_empty_query() -> None:
    b = KeywordBackend()
    b.rebuild([])
    assert b.search("anything", limit=5) == []
    b.rebuild(_tools())
    assert b.search("", limit=5) == []


def test_rebuild_analyses_only_new_tools() -> None:
    seen: list[str] = []

    def counting(text: str) -> list[str]:
        seen.append(text)
        return analyze(text)

    b = KeywordBackend(analyzer=counting)
    tools = _tools()
    b.rebuild(tools)
    seen.clear()
    new = Tool("post_message", "Post a chat message.")
    b.rebuild([*tools, new])
    # one tool's fields (each distinct text once), not the whole catalog
    assert "Post a chat message." in seen and set(seen) <= set(tool_fields(new).values())
    assert len(seen) <= len(tool_fields(new))  # at most once per field
    assert [b._tools[h.doc].name for h in b.search("chat", limit=3)] == ["post_message"]


def test_every_process_numbers_a_catalogs_terms_alike() -> None:
    """Replicas sharing a store reuse each other's index snapshots only if they number terms
    alike; a set's order follows the hash seed, first-seen order does not."""
    import os
    import subprocess
    import sys

    code = (
        "from toolscout.model import Tool\n"
        "from toolscout.search.keyword import KeywordBackend\n"
        "kw = KeywordBackend()\n"
        "kw.rebuild([Tool(f't{i}', f'word{i} shared alpha beta gamma delta {i * 7}') for i in range(60)])\n"
        "arrays, _ = kw.snapshot_parts()\n"
        "print(bytes(arrays['vocab']).decode().replace(chr(10), ' '))\n"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outs) == 1, outs
