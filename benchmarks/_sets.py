"""Load the evaluation sets in ../shared/data (benchmarks only; tests use their own fixtures).

Each set becomes a list of :class:`~toolscout.model.Tool` (name, description, input schema)
and its queries; the query selection follows the peers table of the data README
(metatool: every 10th query; toollens: split ``test``).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path

from toolscout.model import Tool

DATA = Path(os.environ.get("TOOLSCOUT_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
if not DATA.exists():
    DATA = Path("/work/shared/data")
SETS = ("toolpool", "sealtools", "stabletoolbench", "apibench", "metatool", "toollens")


@dataclass(frozen=True)
class Query:
    id: str
    text: str
    relevant: frozenset[str]
    split: str


def load_tools(name: str) -> list[Tool]:
    tools = []
    with (DATA / name / "tools.jsonl").open() as fh:
        for line in fh:
            d = json.loads(line)
            schema = d.get("input_schema") or None
            tools.append(Tool(d["name"], d.get("description") or "", schema if isinstance(schema, dict) else None))
    return tools


def load_queries(name: str) -> list[Query]:
    out = []
    with (DATA / name / "queries.jsonl").open() as fh:
        for i, line in enumerate(fh):
            d = json.loads(line)
            if name == "metatool" and i % 10:
                continue
            if name == "toollens" and d.get("split") != "test":
                continue
            out.append(Query(str(d["id"]), d["query"], frozenset(d["relevant"]), d.get("split", "")))
    return out


def ndcg_at(ranked: list[str], relevant: frozenset[str], k: int = 10) -> float:
    gain = sum(1.0 / math.log2(i + 2) for i, n in enumerate(ranked[:k]) if n in relevant)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(relevant), k)))
    return gain / ideal if ideal else 0.0


def recall_at(ranked: list[str], relevant: frozenset[str], k: int) -> float:
    return len(set(ranked[:k]) & relevant) / len(relevant) if relevant else 0.0
