"""Tools named by a path: a declaration file, an OpenAPI document, or a data directory.

The one place a path spec is resolved (a directory means its ``tools.jsonl``), for
:func:`toolscout.sources.open.open_catalog` and for ``catalog sync`` (:func:`load_source`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..catalog_base import prefixed
from ..errors import DeclarationError
from ..model import Tool
from ._yaml import load_yaml
from .declarations import load_declarations
from .openapi import tools_from_openapi

__all__ = ["DATA_FILE", "load_source", "tools_file"]

DATA_FILE = "tools.jsonl"
"""What a data directory holds (the evaluation sets' layout, and ``Catalog.save``'s peers)."""


def tools_file(spec: str | os.PathLike[str]) -> Path | None:
    """The file ``spec`` names: itself, or ``tools.jsonl`` inside a directory; ``None`` when
    there is no such file (each caller words its own error)."""
    path = Path(spec)
    if path.is_dir():
        path = path / DATA_FILE
    return path if path.is_file() else None


def load_source(
    path: str | Path,
    *,
    prefix: str | None = None,
    source_id: str | None = None,
    base_url: str | None = None,
    skip_invalid: bool = False,
) -> tuple[str, list[Tool]]:
    """The tools of a declaration file, an OpenAPI document or a directory holding
    ``tools.jsonl``, named ``{prefix}_{name}`` and tagged with their source id (``source_id``,
    else the prefix, else the file's or directory's name)."""
    given = Path(path)
    sid = source_id or prefix or (given.name if given.is_dir() else given.stem)
    p = tools_file(given)
    if p is None:
        raise DeclarationError(f"no tools at {path}", file=str(path), hint="Pass a declaration file, an OpenAPI document or a directory holding tools.jsonl.")
    doc = _openapi_document(p)
    if doc is not None:
        servers = doc.get("servers")
        default = servers[0].get("url") if isinstance(servers, list) and servers and isinstance(servers[0], dict) else None
        tools = [t for t, _ in tools_from_openapi(doc, base_url=base_url or default or "http://localhost")]
    else:
        tools, _skipped = load_declarations(p, skip_invalid=skip_invalid)
    return sid, [prefixed(t, prefix).replace(source_id=sid) for t in tools]


def _openapi_document(path: Path) -> dict[str, Any] | None:
    if path.suffix.lower() not in (".json", ".yaml", ".yml"):
        return None
    try:
        text = path.read_text(encoding="utf-8")
        doc = json.loads(text) if path.suffix.lower() == ".json" else load_yaml(text)[0]
    except Exception:
        return None  # the declaration loader reports what is wrong with it
    return doc if isinstance(doc, dict) and ("openapi" in doc or "swagger" in doc) else None
