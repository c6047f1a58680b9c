"""benchmarks/peers.py: metrics from worker runs, query subsets, skipping, one real worker."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

from _paths import ROOT
from toolscout.eval import EvalQuery


def _load():
    spec = importlib.util.spec_from_file_location("peers_bench", ROOT / "benchmarks" / "peers.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["peers_bench"] = module
    spec.loader.exec_module(module)
    return module


peers = _load()


def q(id_: str, *relevant: str, split: str | None = None, groups=()) -> EvalQuery:
    return EvalQuery(id_, f"query {id_}", tuple(relevant), tuple(frozenset(g) for g in groups), split)


def run(*rows: tuple[str, list[str], float]) -> dict:
    return {
        "build_s": 0.5,
        "version": "1.0",
        "results": [{"id": i, "ranked": r, "ms": ms} for i, r, ms in rows],
    }


def test_score_follows_the_readme_definitions() -> None:
    queries = [q("a", "x"), q("b", "y", "z")]
    res = peers.score(run(("a", ["x", "n"], 1.0), ("b", ["n", "z", "y"], 3.0)), queries)
    ndcg_b = (1 / math.log2(3) + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert res["ndcg10"] == pytest.approx(100 * (1 + ndcg_b) / 2)
    assert res["r1"] == pytest.approx(50.0)  # a: 1, b: 0 of 2
    assert res["r5"] == pytest.approx(100.0)
    assert res["hit1"] == pytest.approx(50.0)
    assert res["p50"] == pytest.approx(2.0)
    assert res["queries"] == 2


def test_equivalent_copies_count_once() -> None:
    queries = [q("a", "x", "x2", "y", groups=[{"x", "x2"}, {"y"}])]
    res = peers.score(run(("a", ["x2", "x", "y"], 1.0)), queries)
    assert res["r1"] == pytest.approx(50.0)  # x2 finds group 1; x adds nothing
    assert res["ndcg10"] == pytest.approx(100 * (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3)))


def test_a_missing_ranking_scores_zero_not_crash() -> None:
    res = peers.score(run(("a", [], 0.2)), [q("a", "x")])
    assert res["ndcg10"] == 0.0 and res["r5"] == 0.0


def test_select_split_and_every_nth() -> None:
    qs = [q(str(i), "x", split="test" if i % 2 else "train") for i in range(10)]
    assert [x.id for x in peers.select(qs, "test", 1)] == ["1", "3", "5", "7", "9"]
    assert [x.id for x in peers.select(qs, None, 4)] == ["0", "4", "8"]


def test_a_peer_without_venv_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(peers, "PEERS_DIR", tmp_path / "none")
    res = peers.run_worker("fastmcp-bm25", tmp_path / "tools.jsonl", [q("a", "x")], tmp_path)
    assert res == {"skipped": "not installed (run --setup)"}
    table = peers.quality_tables({"fastmcp-bm25": {"metatool": res}}, ["metatool"], peers.METHODS[:1])
    assert "| FastMCP BM25SearchTransform | skipped |" in table
    assert "not installed" in table


def test_worker_ranks_with_toolscout_in_a_subprocess(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(peers, "PEERS_DIR", tmp_path / "peers")
    tools = [
        {"name": "send_email", "description": "Send an email message to a recipient.", "source": "mail"},
        {"name": "get_weather", "description": "Current weather and forecast for a city.", "source": "wx"},
        {"name": "create_invoice", "description": "Create a customer invoice.", "source": "bill"},
    ]
    path = tmp_path / "tools.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in tools))
    queries = [EvalQuery("w", "weather forecast in Paris", ("get_weather",)), EvalQuery("m", "email my boss", ("send_email",))]
    raw = peers.run_worker("toolscout-keyword", path, queries, tmp_path)
    assert "skipped" not in raw, raw
    assert [r["ranked"][0] for r in raw["results"]] == ["get_weather", "send_email"]
    res = peers.score(raw, queries)
    assert res["ndcg10"] == pytest.approx(100.0)
    assert res["p95"] >= res["p50"] > 0


def test_speed_table_states_the_ratio() -> None:
    res = {
        "fastmcp-bm25": {5000: {"p50": 20.0, "p95": 30.0, "p99": 40.0, "build_s": 0.5}},
        "toolscout-keyword": {5000: {"p50": 0.5, "p95": 0.9, "p99": 1.0, "build_s": 0.1}},
    }
    text = peers.speed_table(res, [5000])
    assert "40x faster" in text
    assert "| FastMCP BM25SearchTransform | 20.00 / 30.00 / 40.00 (build 0.5 s) |" in text
