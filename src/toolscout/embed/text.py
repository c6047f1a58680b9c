"""What text of a tool gets embedded.

Names are split into words (``get_weather_forecast`` -> "get weather forecast") because a
sentence encoder reads words, not identifiers; parameter names add the nouns a request
mentions ("city", "channel"). A tool with an empty description is still embedded from its
name, so it can be found (less well) rather than silently dropped.
"""

from __future__ import annotations

import json
import re

from ..model import Tool

__all__ = ["split_name", "tool_text"]

_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+\d*|[A-Z]+\d*|\d+")
_MAX_PARAMS = 12


def split_name(name: str) -> str:
    """``sendSlack_message-v2`` -> ``send slack message v2``."""
    return " ".join(p.lower() for p in _PARTS.findall(name))


def tool_text(tool: Tool) -> str:
    words = split_name(tool.name) or tool.name
    parts = [f"{words}: {' '.join(tool.description.split())}".rstrip(": ")]
    try:
        props = json.loads(tool.schema_json).get("properties") or {}
    except ValueError:
        props = {}
    if isinstance(props, dict) and props:
        names = [split_name(str(k)) or str(k) for k in list(props)[:_MAX_PARAMS]]
        parts.append("Parameters: " + ", ".join(names) + ".")
    return " ".join(parts)
