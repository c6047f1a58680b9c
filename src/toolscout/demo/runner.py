"""``toolscout demo``: what a model does with toolscout, scripted, offline, in about a second.

:func:`run_demo` only produces data (a JSON-ready dict); :mod:`toolscout.demo.view` draws it
with rich. The script searches the bundled catalog the way a model would (plain English,
Chinese, an exact name, ``select:``, a miss, an empty query, a skill and an agent), calls
what it found (valid arguments, invalid ones, an unknown name, a skill's instructions),
shows a ranking learning from what sessions call, and costs the tool definitions in tokens.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from ..accounting.tokens import gateway_savings
from ..catalog import Catalog
from ..gateway import FindResult, Gateway
from ..model import CallResult
from ..search.learning import UsageLearner
from ..session import Session
from . import demo_catalog

__all__ = ["CALLS", "SEARCHES", "run_demo"]


@dataclass(frozen=True, slots=True)
class Search:
    label: str
    query: str
    limit: int = 3
    kinds: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Call:
    """``call(name, arguments)``, or with ``use_tool`` set, ``use_tool(name, arguments)``
    where ``name`` is a query that must resolve to one clear winner."""

    label: str
    name: str
    arguments: Any
    use_tool: bool = False


SEARCHES: tuple[Search, ...] = (
    Search("plain English", "send a message to the #eng channel on Slack"),
    Search("plain English", "weather forecast for Lisbon this weekend"),
    Search("plain English", "roll back the api deployment"),
    Search("Chinese", "把这段话翻译成日语"),
    Search("exact name", "github_create_pull_request", 1),
    Search("select:", "select:math_evaluate,units_convert"),
    Search("no match (typos)", "zendsk tiket"),
    Search("empty query", ""),
    Search("a skill", "write up the outage we had last night", 2, ("skill",)),
    Search("an agent", "plan a city trip within a budget", 2, ("agent",)),
)

CALLS: tuple[Call, ...] = (
    Call("simulated service", "weather_get_forecast", {"location": "Lisbon", "days": 3}),
    Call("real tool", "units_convert", {"value": 26.2, "from_unit": "mi", "to_unit": "km"}),
    Call("invalid arguments", "slack_send_message", {"channel": 42}),
    Call("unknown tool", "slak_send_mesage", {"channel": "#eng", "text": "hi"}),
    Call("use_tool, clear", "convert a temperature", {"value": 451, "from_unit": "F", "to_unit": "C"}, True),
    Call("use_tool, ambiguous", "send a message", {"text": "deploy done"}, True),
    Call("a skill's instructions", "incident-postmortem", {}),
)

LEARNING_QUERY = "send a message to the team"
LEARNING_SESSIONS = 3
"""Sessions that search ``LEARNING_QUERY`` and then call the third result: more than one
must agree before usage moves a ranking (docs/learning.md)."""


def _search(
    gateway: Gateway, label: str, query: str, limit: int, format: str, kinds: tuple[str, ...] | None = None
) -> dict[str, Any]:
    result: FindResult = gateway.find_tools(query, limit, format=format, kinds=kinds)
    out: dict[str, Any] = {"label": label, **result.to_dict()}
    out["search_metadata"]["execution_time_ms"] = round(result.execution_time_ms, 3)
    return out


def _call(gateway: Gateway, call: Call) -> dict[str, Any]:
    if call.use_tool:
        result: CallResult = gateway.use_tool(call.name, call.arguments)
    else:
        result = gateway.call(call.name, call.arguments)
    out = {"label": call.label, "arguments": call.arguments, **result.to_dict()}
    if call.use_tool:
        out["use_tool_query"] = call.name
    out["duration_ms"] = round(result.duration_ms, 3)
    return out


def _tokens(gateway: Gateway, format: str) -> dict[str, Any]:
    report = gateway_savings(gateway, format)  # the same figures as `toolscout tokens demo`
    return {**report.to_dict(), "rows": [list(r) for r in report.rows()]}


def run_demo(*, format: str = "openai", query: str | None = None, limit: int = 5) -> dict[str, Any]:
    """Run the scripted session (or one ``query``) over the demo catalog; JSON-ready output."""
    started = time.perf_counter()
    catalog = demo_catalog(skills_and_agents=True)
    loaded = time.perf_counter()
    gateway = Gateway(catalog)
    gateway.index.refresh()  # build the index now, so search timings are searches only
    built = time.perf_counter()
    kinds = Counter(t.kind for t in catalog)
    categories = catalog.categories()
    run: dict[str, Any] = {
        "format": format,
        "query": query,
        "catalog": {
            "tools": kinds["tool"],
            "skills": kinds["skill"],
            "agents": kinds["agent"],
            "searchable": sum(categories.values()),
            "categories": categories,
            "load_ms": round((loaded - started) * 1000, 1),
            "index_ms": round((built - loaded) * 1000, 1),
        },
    }
    if query is not None:
        run["searches"] = [_search(gateway, "your query", query, limit, format)]
        run["calls"] = []
    else:
        run["searches"] = [_search(gateway, s.label, s.query, s.limit, format, s.kinds) for s in SEARCHES]
        run["calls"] = [_call(gateway, c) for c in CALLS]
        run["learning"] = _learning(catalog)
    run["tokens"] = _tokens(gateway, format)
    run["elapsed_ms"] = round((time.perf_counter() - started) * 1000, 1)
    return run


def _learning(catalog: Catalog) -> dict[str, Any]:
    """The same query before and after a few sessions chose its third result: usage lifts it
    (``usage_boost``), in a gateway of its own so the scripted calls above are no evidence."""
    gateway = Gateway(catalog, learn=UsageLearner())
    before = gateway.find_tools(LEARNING_QUERY, 5).tool_references
    chosen = before[2].tool_name
    arguments = {"to": "+15550100", "body": "build is green", "channel": "#eng", "text": "build is green"}
    tool = catalog.get(chosen)
    wanted = set(tool.input_schema.get("properties", {})) if tool is not None else set()
    for i in range(LEARNING_SESSIONS):
        session = Session(gateway, threshold=1, session_id=f"demo-learning-{i}")
        session.handle("find_tools", {"query": LEARNING_QUERY})
        session.handle(chosen, {k: v for k, v in arguments.items() if k in wanted})
    after = gateway.find_tools(LEARNING_QUERY, 5).tool_references
    return {
        "query": LEARNING_QUERY,
        "sessions": LEARNING_SESSIONS,
        "chosen": chosen,
        "before": [r.tool_name for r in before],
        "after": [r.tool_name for r in after],
        "usage_boost": {r.tool_name: b for r in after if (b := r.to_dict().get("usage_boost"))},
    }


