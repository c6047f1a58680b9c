"""Agent Skills folders as catalog entries of kind ``skill``.

A skill is a folder with a ``SKILL.md``: YAML front matter (``name``, ``description``,
optionally ``license``, ``allowed-tools``, ``metadata``, ``category``, ``tags``), a
Markdown body of instructions, and optional files beside it (references, scripts).

Why a skill becomes a tool-like entry: every host API knows how to show a model a function
and let it call one, and none has a common notion of "instructions to load". So a skill is
found like a tool (ranked on its name and description only), rendered in the host's format
as a function whose description says it is a skill, and *calling* it returns the body (or,
with ``file``, one file beside it). The body is read from disk at that moment, never sent
with search results. The MCP server also offers each skill as the resource
``toolscout://skills/<name>``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..errors import DeclarationError, InvalidArguments
from ..model import Tool
from ._yaml import load_yaml

__all__ = [
    "SKILL_FILE",
    "SKILL_URI_PREFIX",
    "load_skill",
    "load_skills",
    "reference_details",
    "skill_text",
]

SKILL_FILE = "SKILL.md"
SKILL_URI_PREFIX = "toolscout://skills/"
MAX_FILE_BYTES = 1_000_000
"""A skill file larger than this is refused when read: a model's context is not the place
for it (the skill's instructions should say how to use such a file instead)."""
_MAX_LISTED = 100
_LOAD_HINT = " (Skill: call it to read its instructions before doing the task.)"
_SCHEMA = {
    "type": "object",
    "properties": {
        "file": {
            "type": "string",
            "description": "Leave out to read the skill's instructions; or a file of this skill they mention.",
        }
    },
}


def split_front_matter(text: str) -> tuple[str, str] | None:
    """``(front matter, body)`` of a ``---``-delimited Markdown text, or ``None``."""
    text = text.removeprefix("\ufeff")
    if not text.startswith("---"):
        return None
    lines = text.splitlines(keepends=True)
    if lines[0].strip() != "---":
        return None
    for i in range(1, len(lines)):
        if lines[i].strip() in ("---", "..."):
            return "".join(lines[1:i]), "".join(lines[i + 1 :]).lstrip("\n")
    return None


def _files(folder: Path) -> list[str]:
    """Files beside SKILL.md (relative, sorted), hidden ones and bytecode caches left out
    (running a skill's script leaves a ``__pycache__`` that is not part of the skill)."""
    out: list[str] = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for n in sorted(names):
            rel = (Path(root) / n).relative_to(folder).as_posix()
            if not n.startswith(".") and rel != SKILL_FILE:
                out.append(rel)
                if len(out) >= _MAX_LISTED:
                    return out
    return out


def load_skill(folder: str | os.PathLike[str]) -> tuple[Tool, Callable[[dict[str, Any]], str]]:
    """One skill folder -> its record and the handler that returns its instructions.
    A missing or malformed ``SKILL.md`` is a :class:`DeclarationError` naming the field."""
    folder = Path(folder)
    path = folder / SKILL_FILE
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DeclarationError(f"cannot read the skill: {exc}", file=file) from exc
    parts = split_front_matter(text)
    if parts is None:
        raise DeclarationError(
            "a SKILL.md starts with YAML front matter between '---' lines",
            file=file,
            line=1,
            hint="Begin the file with ---, name: ..., description: ..., ---, then the instructions.",
        )
    try:
        data, _ = load_yaml(parts[0])
    except Exception as exc:  # yaml's own errors, and ValueError for bad Unicode
        raise DeclarationError(f"the front matter is not valid YAML: {exc}", file=file, line=1) from None
    if not isinstance(data, dict):
        raise DeclarationError("the front matter must be a mapping", file=file, line=1)
    name, description = data.get("name"), data.get("description")
    if not isinstance(name, str) or not name.strip():
        raise DeclarationError("a skill needs a 'name'", file=file, field="name")
    if not isinstance(description, str) or not description.strip():
        raise DeclarationError(f"skill {name!r} needs a 'description'", file=file, field="description")
    tags = data.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise DeclarationError(f"skill {name!r}: tags must be a list of strings", file=file, field="tags")
    category = data.get("category")
    files = _files(folder)
    meta: dict[str, Any] = {"skill": {"path": str(folder), "files": files}}
    for key in ("license", "allowed-tools", "metadata", "compatibility"):
        if key in data:
            meta[key] = data[key]
    tool = Tool(
        name.strip(),
        " ".join(description.split()) + _LOAD_HINT,
        _SCHEMA,
        source="skill",
        origin=file,
        category=category if isinstance(category, str) else None,
        tags=tags,
        annotations={"readOnlyHint": True, "title": name.strip()},
        permission="read",
        meta=meta,
        kind="skill",
    )

    def handler(arguments: dict[str, Any]) -> str:
        return skill_text(folder, arguments.get("file"))

    return tool, handler


def load_skills(
    path: str | os.PathLike[str], *, skip_invalid: bool = False
) -> tuple[list[tuple[Tool, Callable[[dict[str, Any]], str]]], list[DeclarationError]]:
    """Every skill under ``path`` (a skill folder, or a folder of them at any depth) and,
    with ``skip_invalid``, the skills that could not be read (else the first raises)."""
    root = Path(path)
    if not root.is_dir():
        raise DeclarationError("a skills path must be a folder", file=str(root))
    pairs: list[tuple[Tool, Callable[[dict[str, Any]], str]]] = []
    skipped: list[DeclarationError] = []
    for folder in _skill_folders(root):
        try:
            pairs.append(load_skill(folder))
        except DeclarationError as exc:
            if not skip_invalid:
                raise
            skipped.append(exc)
    return pairs, skipped


def _skill_folders(root: Path) -> Iterable[Path]:
    """Folders holding a SKILL.md, not descending into a skill (its files are its own)."""
    if (root / SKILL_FILE).is_file():
        yield root
        return
    for child in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        yield from _skill_folders(child)


def skill_text(folder: str | os.PathLike[str], file: Any = None) -> str:
    """The skill's instructions (its body, plus the files beside it), or one of its files.
    A ``file`` outside the skill's folder, missing or too large is :class:`InvalidArguments`."""
    folder = Path(folder)
    if file is None or file == "" or file == SKILL_FILE:
        parts = split_front_matter((folder / SKILL_FILE).read_text(encoding="utf-8"))
        body = parts[1] if parts else ""
        files = _files(folder)
        if files:
            body = body.rstrip() + "\n\nFiles in this skill (read one by calling again with file=...): " + ", ".join(files)
        return body
    if not isinstance(file, str):
        raise InvalidArguments("file must be a path inside the skill, as text")
    base = folder.resolve()
    target = (base / file).resolve()
    if not target.is_relative_to(base) or not target.is_file():
        raise InvalidArguments(
            f"the skill has no file {file!r}",
            hint="Use one of the files its instructions list: " + ", ".join(_files(folder)[:20]),
        )
    if target.stat().st_size > MAX_FILE_BYTES:
        raise InvalidArguments(f"{file!r} is larger than {MAX_FILE_BYTES} bytes; it is not read into a conversation")
    return target.read_text(encoding="utf-8", errors="replace")


def reference_details(tool: Tool) -> dict[str, Any]:
    """What a find result says about a skill or an agent beyond name and summary: how to
    load a skill (call it, or read its resource), an agent's card essentials and skills."""
    if tool.kind == "skill":
        skill = tool.meta.get("skill")
        info = skill if isinstance(skill, dict) else {}
        # From the catalog name, so a prefixed skill's URI is the one the MCP server serves.
        out: dict[str, Any] = {"load": {"call": tool.name, "resource": SKILL_URI_PREFIX + tool.name}}
        if info.get("files"):
            out["files"] = list(info["files"])
        return out
    if tool.kind == "agent":
        card = tool.meta.get("agent")
        return {"agent": dict(card)} if isinstance(card, dict) else {}
    return {}
