"""Simulated handlers for the demo's service tools: offline, deterministic, clearly marked.

A result is built from the tool's verb and the arguments (the same call always returns the
same result), and every result carries ``"simulated": true`` so nobody mistakes it for a
real side effect.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from ..model import Tool

__all__ = ["simulated_handler"]

_CREATE = {"create", "send", "post", "add", "upload", "schedule", "trigger", "invite", "open",
           "reply", "forward", "comment", "log", "quick", "run", "make", "enroll", "build",
           "pull", "presign", "copy", "append", "write", "put", "submit", "start", "fulfill",
           "link", "backup", "authorize", "set", "exec", "apply", "glossary", "mute", "review",
           "respond", "restart", "rerun", "approve", "merge", "move", "convert", "transition",
           "assign", "update", "edit", "scale", "rollback", "mark", "acknowledge", "resolve",
           "adjust", "share", "stop", "reboot", "archive", "remove", "delete", "trash", "cancel",
           "terminate", "close", "document", "screenshot", "static", "check", "refresh", "flush"}
_LIST = {"list", "search", "query", "find", "get_channel", "grep", "top", "soql", "describe_instances",
         "market", "earnings", "who", "satisfaction", "distance"}
_GONE = {"delete", "remove", "trash", "cancel", "terminate", "archive", "close"}


def _digest(tool: Tool, args: dict[str, Any]) -> str:
    payload = tool.name + json.dumps(args, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


def _number(seed: str, low: float, high: float) -> float:
    return round(low + int(seed[:8], 16) / 0xFFFFFFFF * (high - low), 1)


def _weather(tool: Tool, args: dict[str, Any], seed: str) -> dict[str, Any]:
    place = args.get("location", "?")
    imperial = args.get("units") == "imperial"
    temp = _number(seed, 2, 31)
    show = (lambda c: round(c * 9 / 5 + 32, 1)) if imperial else (lambda c: c)
    unit = "°F" if imperial else "°C"
    conditions = ["clear", "partly cloudy", "light rain", "overcast", "sunny", "showers"]
    if tool.name.endswith("forecast"):
        days = int(args.get("days", args.get("hours", 3)))
        return {"location": place, "unit": unit, "forecast": [
            {"day": k + 1, "high": show(round(temp + (k % 3), 1)), "low": show(round(temp - 6 + k % 2, 1)),
             "conditions": conditions[(int(seed[k], 16) + k) % len(conditions)],
             "precipitation_chance": int(seed[k + 1], 16) * 6} for k in range(min(days, 10))]}
    return {"location": place, "temperature": show(temp), "unit": unit,
            "feels_like": show(round(temp - 1.5, 1)), "humidity": 40 + int(seed[8:10], 16) % 50,
            "wind_kph": _number(seed[10:], 0, 35), "conditions": conditions[int(seed[-1], 16) % len(conditions)]}


def _result(tool: Tool, args: dict[str, Any]) -> dict[str, Any]:
    seed = _digest(tool, args)
    service = tool.category or tool.name.split("_", 1)[0]
    action = tool.name[len(service) + 1:] if tool.name.startswith(service + "_") else tool.name
    verb = action.split("_", 1)[0]
    out: dict[str, Any] = {"simulated": True, "tool": tool.name}
    if service == "weather":
        out.update(_weather(tool, args, seed))
    elif verb in _LIST or any(action.startswith(v) for v in _LIST if "_" in v):
        limit = min(int(args.get("limit", args.get("max_results", 3)) or 3), 3)
        noun = action.split("_", 1)[-1].rstrip("s") or "item"
        out["items"] = [
            {"id": f"{service}-{seed[k * 6:(k + 1) * 6]}", "title": f"{noun.replace('_', ' ')} {k + 1}",
             "matched": {k2: v for k2, v in args.items() if isinstance(v, str)}}
            for k in range(limit)
        ]
        out["total"] = len(out["items"])
    elif verb in _GONE:
        out.update({"status": "deleted" if verb in {"delete", "remove", "trash"} else f"{verb}ed".replace("eed", "ed"),
                    "target": args})
    elif verb in _CREATE:
        out.update({"status": "ok", "id": f"{service}-{seed[:10]}", "request": args})
    else:  # get, read, lookup, describe...
        out.update({"id": f"{service}-{seed[:10]}", "found": True, "request": args})
    return out


def simulated_handler(tool: Tool) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A handler that fakes ``tool`` plausibly from its arguments."""

    def run(arguments: dict[str, Any]) -> dict[str, Any]:
        return _result(tool, arguments)

    run.__name__ = f"simulated_{tool.name}"
    return run
