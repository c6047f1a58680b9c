"""Start-up cost: what ``toolscout serve`` must not import before its first answer, and the
numpy-only keyword build that makes this possible (it must equal the scipy path exactly)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from toolscout.model import Tool
from toolscout.search import sparse
from toolscout.search.keyword import KeywordBackend


def _tools(n: int = 40) -> list[Tool]:
    words = ["send", "email", "weather", "city", "invoice", "customer", "file", "directory", "search", "web"]
    out = []
    for i in range(n):
        w = [words[(i * k + 3) % len(words)] for k in range(1, 5)]
        schema = {"type": "object", "properties": {w[2]: {"type": "string", "description": f"the {w[3]} {w[0]}"}}}
        out.append(Tool(f"{w[0]}_{w[1]}_{i}", f"{w[0].title()} the {w[1]} {w[1]} of a {w[3]}.", schema, category=w[2]))
    return out


def _state(b: KeywordBackend) -> list[np.ndarray]:
    arrays = [b._scores.data, b._scores.indices, b._scores.indptr, b._idf]
    for m in b._raw.values():
        arrays += [m.data, m.indices, m.indptr]
    return arrays


@pytest.mark.parametrize("weights", [None, {"name": 3.0, "description": 0.0, "labels": 1.0}])
def test_numpy_build_equals_the_scipy_build(monkeypatch: pytest.MonkeyPatch, weights: dict[str, float] | None) -> None:
    tools = _tools()
    small = KeywordBackend(weights=weights)
    small.rebuild(tools)
    small.rebuild(tools[7:] + tools[:5])  # incremental: reuse, reorder, drop two
    monkeypatch.setattr(sparse, "SCIPY_ABOVE", 0)  # every build through scipy
    big = KeywordBackend(weights=weights)
    big.rebuild(tools)
    big.rebuild(tools[7:] + tools[:5])
    assert small._vocab == big._vocab
    for a, b in zip(_state(small), _state(big), strict=True):
        assert a.dtype.kind == b.dtype.kind and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-6)
    for q in ("send email", "weather city", "invoice customer directory"):
        assert [(h.doc, round(h.score, 4)) for h in small.search(q, limit=5)] == [
            (h.doc, round(h.score, 4)) for h in big.search(q, limit=5)
        ]


def test_zero_weight_field_adds_no_matches() -> None:
    b = KeywordBackend(weights={"name": 1.0, "description": 0.0})
    b.rebuild([Tool("alpha", "banana split"), Tool("banana", "yellow fruit")])
    assert [b._tools[h.doc].name for h in b.search("banana", limit=5)] == ["banana"]
    assert b._scores.data.all()


def test_restore_refuses_inconsistent_arrays() -> None:
    tools = _tools(5)
    b = KeywordBackend()
    b.rebuild(tools)
    snap = b.snapshot()
    bad = dict(snap, **{"name.indptr": snap["name.indptr"][::-1].copy()})
    fresh = KeywordBackend()
    assert not fresh.restore(tools, bad)
    assert fresh.restore(tools, snap)
    assert [h.doc for h in fresh.search("send", limit=3)] == [h.doc for h in b.search("send", limit=3)]


def test_serve_path_imports_stay_light() -> None:
    """What the CLI and the gateway import before serving: no scipy, jsonschema or rich, and
    nothing of the HTTP API or metrics (stdio never needs them)."""
    code = (
        "import sys, json, toolscout.cli, toolscout.server.app, toolscout.server.mcp, toolscout.sources.mcp.cache, toolscout.sources.mcp.config;"
        "print(json.dumps([m for m in ('scipy', 'jsonschema', 'rich', 'tiktoken', 'fastapi', 'prometheus_client') if m in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []

