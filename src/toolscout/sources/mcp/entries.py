"""Upstream resources, resource templates and prompts as catalog entries, so ``find_tools``
finds them when a request asks for those kinds (``kinds=["resource", "prompt"]``).

Each server's entries form their own catalog source (``<server>#resources``), apart from its
tools: tool counts, tool caches and rug-pull pins stay about tools. An entry is named as
:mod:`.federation` names it (characters a tool name cannot carry become ``_``) and runs
like any tool: a resource is read, a template is expanded with the arguments (one string
parameter per variable) and read, a prompt is got with its arguments. What comes back is
MCP content the model can read: the resource contents embedded, or the prompt's messages.
"""

from __future__ import annotations

import re
from typing import Any

from ...calls import UpstreamResult
from ...catalog import Handler
from ...model import Annotations, Tool
from .federation import Federation, expand, template_vars

__all__ = ["ENTRIES", "build_entries"]

ENTRIES = "#resources"
"""Suffix of the catalog source holding one server's resources and prompts."""
_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-/]")
_READ_ONLY = {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}


def _name(text: str) -> str:
    return _UNSAFE.sub("_", text)[:128]


def _text(entry: dict[str, Any], *keys: str) -> str:
    return next((v for k in keys if isinstance(v := entry.get(k), str) and v), "")


def build_entries(
    fed: Federation, server: str, listed: dict[str, list[dict[str, Any]]]
) -> list[tuple[Tool, Handler]]:
    """Catalog entries (and their handlers) for one server's listed ``resources``,
    ``resourceTemplates`` and ``prompts`` (raw, upstream names)."""
    out: list[tuple[Tool, Handler]] = []
    common: dict[str, Any] = {
        "source": "mcp",
        "source_id": server + ENTRIES,
        "origin": f"mcp:{server}",
        "category": server,
        "annotations": Annotations.from_mcp(_READ_ONLY),
        "permission": "read",
    }
    for r in listed.get("resources", []):
        if not isinstance(r.get("uri"), str) or not isinstance(r.get("name"), str):
            continue
        uri = fed.outer_uri(server, r["uri"])
        about = _text(r, "description", "title") or f"The resource {uri}."
        tool = Tool(
            _name(fed.outer_name(server, r["name"])),
            about,
            kind="resource",
            meta={"server": server, "uri": uri, "mimeType": r.get("mimeType")},
            **common,
        )
        out.append((tool, _reader(fed, tool.name, lambda _args, u=uri: u)))
    for t in listed.get("resourceTemplates", []):
        if not isinstance(t.get("uriTemplate"), str) or not isinstance(t.get("name"), str):
            continue
        template = fed.outer_uri(server, t["uriTemplate"])
        names = template_vars(t["uriTemplate"])
        schema = {
            "type": "object",
            "properties": {n: {"type": "string"} for n in names},
            "required": names,
        }
        about = _text(t, "description", "title") or f"Resources of the form {template}."
        tool = Tool(
            _name(fed.outer_name(server, t["name"])),
            about,
            schema,
            kind="resource",
            meta={"server": server, "uriTemplate": template},
            **common,
        )
        out.append((tool, _reader(fed, tool.name, lambda args, tpl=template: expand(tpl, args))))
    for p in listed.get("prompts", []):
        if not isinstance(p.get("name"), str):
            continue
        arguments = [
            a
            for a in p.get("arguments") or []
            if isinstance(a, dict) and isinstance(a.get("name"), str)
        ]
        schema = {
            "type": "object",
            "properties": {
                a["name"]: {
                    "type": "string",
                    **(
                        {"description": a["description"]}
                        if isinstance(a.get("description"), str)
                        else {}
                    ),
                }
                for a in arguments
            },
            "required": [a["name"] for a in arguments if a.get("required")],
        }
        outer = fed.outer_name(server, p["name"])
        about = _text(p, "description", "title") or f"The prompt {outer}."
        tool = Tool(
            _name(outer),
            about,
            schema,
            kind="prompt",
            meta={"server": server, "prompt": outer},
            **common,
        )
        out.append((tool, _getter(fed, tool.name, outer)))
    return out


def _reader(fed: Federation, name: str, uri_of: Any) -> Handler:
    async def read(arguments: dict[str, Any]) -> UpstreamResult:
        _, result = await fed.read(uri_of(arguments))
        blocks = [
            {"type": "resource", "resource": c}
            for c in result.get("contents") or []
            if isinstance(c, dict)
        ]
        return UpstreamResult.of(name, {"content": blocks})

    return read


def _getter(fed: Federation, name: str, prompt: str) -> Handler:
    async def get(arguments: dict[str, Any]) -> UpstreamResult:
        _, result = await fed.get_prompt(prompt, {k: str(v) for k, v in arguments.items()})
        blocks = [
            m["content"]
            for m in result.get("messages") or []
            if isinstance(m, dict) and isinstance(m.get("content"), dict)
        ]
        return UpstreamResult.of(name, {"content": blocks})

    return get
