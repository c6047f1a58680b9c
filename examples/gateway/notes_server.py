"""A small MCP server over stdio, the sample gateway's upstream: notes kept in a JSON file.

It uses only Python's standard library, so the ``python3`` that set up the repository runs it
with nothing installed (an MCP server of your own would use the ``mcp`` SDK). It speaks the
part of MCP a gateway needs: ``initialize``, ``tools/list``, ``tools/call`` and ``ping``, one
JSON-RPC message per line. Notes are kept in ``$NOTES_FILE`` (default: ``notes.json`` in the
working directory, which servers.json sets to this folder).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
NOTES = Path(os.environ.get("NOTES_FILE") or "notes.json")

TOOLS: list[dict[str, Any]] = [
    {
        "name": "add_note",
        "description": "Save a note with a title and a text, to read or search later.",
        "inputSchema": {
            "type": "object",
            "properties": {"title": {"type": "string"}, "text": {"type": "string"}},
            "required": ["title", "text"],
        },
        "annotations": {"readOnlyHint": False, "destructiveHint": False},
    },
    {
        "name": "search_notes",
        "description": "Find saved notes whose title or text contains the given words.",
        "inputSchema": {"type": "object", "properties": {"words": {"type": "string"}}, "required": ["words"]},
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "list_notes",
        "description": "List the titles of all saved notes.",
        "inputSchema": {"type": "object", "properties": {}},
        "annotations": {"readOnlyHint": True},
    },
]


def _load() -> list[dict[str, str]]:
    try:
        return json.loads(NOTES.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []


def _call(name: str, args: dict[str, Any]) -> str:
    notes = _load()
    if name == "add_note":
        notes.append({"title": str(args["title"]), "text": str(args["text"])})
        NOTES.write_text(json.dumps(notes, ensure_ascii=False, indent=1), encoding="utf-8")
        return f"saved note {args['title']!r} ({len(notes)} notes)"
    if name == "search_notes":
        words = str(args["words"]).lower().split()
        found = [n for n in notes if all(w in (n["title"] + " " + n["text"]).lower() for w in words)]
        return "\n".join(f"{n['title']}: {n['text']}" for n in found) or "no note matches"
    if name == "list_notes":
        return "\n".join(n["title"] for n in notes) or "no notes yet"
    raise KeyError(name)


def _answer(message: dict[str, Any]) -> dict[str, Any] | None:
    method, params = message.get("method"), message.get("params") or {}
    if "id" not in message:  # a notification (initialized, cancelled): nothing to answer
        return None
    if method == "initialize":
        asked = params.get("protocolVersion")
        result: dict[str, Any] = {
            "protocolVersion": asked if asked in VERSIONS else VERSIONS[0],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "notes", "version": "1.0"},
        }
    elif method == "tools/list":
        result = {"tools": TOOLS}
    elif method == "tools/call":
        try:
            text, failed = _call(params.get("name", ""), params.get("arguments") or {}), False
        except KeyError as exc:
            text, failed = f"unknown tool or missing argument: {exc}", True
        result = {"content": [{"type": "text", "text": text}], "isError": failed}
    elif method == "ping":
        result = {}
    else:
        error = {"code": -32601, "message": f"method not found: {method}"}
        return {"jsonrpc": "2.0", "id": message["id"], "error": error}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def main() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            reply = _answer(json.loads(line))
        except ValueError:
            reply = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}}
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
