"""A2A agent cards as catalog entries of kind ``agent``.

An agent card (the JSON an A2A agent publishes, usually at ``/.well-known/agent-card.json``)
names the agent, describes it, gives the URL to reach it and lists its skills. It becomes
one entry, ranked on its name, description and skills (names, descriptions, tags), so a
query about any one skill finds the agent. Calling the entry returns the card's essentials
(what a client needs to delegate: URL, transport, input and output modes, skills): toolscout
finds agents, it does not speak A2A to them.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..errors import DeclarationError
from ..model import Tool

__all__ = ["agent_from_card", "load_agents"]

_ESSENTIALS = (
    "name", "description", "url", "version", "protocolVersion", "preferredTransport",
    "provider", "documentationUrl", "capabilities", "defaultInputModes", "defaultOutputModes",
)
_SKILL_KEYS = ("id", "name", "description", "tags", "examples", "inputModes", "outputModes")
_LOAD_HINT = " (Agent: call it for its card, to delegate the task to it.)"


def _slug(text: str) -> str:
    """A card's display name as a catalog name: ``Recipe Agent`` -> ``recipe_agent``."""
    return re.sub(r"[^0-9a-z]+", "_", text.lower()).strip("_")


def agent_from_card(card: Any, *, origin: str = "agent-card") -> tuple[Tool, Callable[[dict[str, Any]], dict[str, Any]]]:
    """One agent card (a parsed JSON object) -> its record and a handler returning its
    essentials. A card without a name, description or url is a :class:`DeclarationError`."""
    if not isinstance(card, Mapping):
        raise DeclarationError(f"an agent card must be a JSON object, not {type(card).__name__}", file=origin)
    for key in ("name", "description", "url"):
        if not isinstance(card.get(key), str) or not card[key].strip():
            raise DeclarationError(f"an agent card needs '{key}' (text)", file=origin, field=key)
    raw_skills = card.get("skills") or []
    if not isinstance(raw_skills, list) or not all(isinstance(s, Mapping) for s in raw_skills):
        raise DeclarationError("skills must be a list of objects", file=origin, field="skills")
    skills = [{k: s[k] for k in _SKILL_KEYS if k in s} for s in raw_skills]
    name = _slug(card["name"]) or "agent"
    essentials = {k: card[k] for k in _ESSENTIALS if k in card}
    essentials["skills"] = skills
    described = [f"{s.get('name') or s.get('id')}: {s['description']}" for s in skills if s.get("description")]
    description = " ".join(card["description"].split())
    if described:
        description += " Skills: " + "; ".join(" ".join(d.split()) for d in described) + "."
    tags = [t for s in skills for t in (s.get("tags") or []) if isinstance(t, str)]
    tags += [s["name"] for s in skills if isinstance(s.get("name"), str)]
    tool = Tool(
        name,
        description + _LOAD_HINT,
        source="a2a",
        origin=origin,
        tags=list(dict.fromkeys(tags)),
        annotations={"readOnlyHint": True, "title": card["name"].strip()},
        permission="read",
        meta={"agent": essentials},
        kind="agent",
    )

    def handler(arguments: dict[str, Any]) -> dict[str, Any]:
        return json.loads(json.dumps(essentials))  # a fresh copy each call

    return tool, handler


def load_agents(
    path: str | os.PathLike[str], *, skip_invalid: bool = False
) -> tuple[list[tuple[Tool, Callable[[dict[str, Any]], dict[str, Any]]]], list[DeclarationError]]:
    """The agent card at ``path`` (a ``.json`` file holding one card or a list of cards),
    or every ``.json`` card in the folder ``path``; with ``skip_invalid`` bad cards are
    returned as errors instead of raising."""
    root = Path(path)
    files = sorted(root.rglob("*.json")) if root.is_dir() else [root]
    pairs: list[tuple[Tool, Callable[[dict[str, Any]], dict[str, Any]]]] = []
    skipped: list[DeclarationError] = []
    for file in files:
        try:
            try:
                data = json.loads(file.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
                raise DeclarationError(f"cannot read the agent card: {exc}", file=str(file)) from None
            cards = data if isinstance(data, list) else [data]
            pairs.extend(
                agent_from_card(c, origin=str(file) if len(cards) == 1 else f"{file}[{i}]") for i, c in enumerate(cards)
            )
        except DeclarationError as exc:
            if not skip_invalid:
                raise
            skipped.append(exc)
    return pairs, skipped
