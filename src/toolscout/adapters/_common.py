"""What every adapter shares: reading SDK objects or dicts alike, and answering each call once."""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ..errors import InvalidRequest, MissingExtra
from ..session import Session, ToolOutcome


def require(module: str, feature: str, extra: str) -> ModuleType:
    """Import an optional SDK, or raise :class:`MissingExtra` naming the pip extra."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtra(feature, extra) from None


def field(obj: Any, key: str, default: Any = None) -> Any:
    """``obj[key]`` for dicts, ``obj.key`` for SDK models."""
    if isinstance(obj, dict):
        return obj.get(key, default)
    return getattr(obj, key, default)


def as_dict(obj: Any) -> dict[str, Any]:
    """An SDK model as the plain dict its API accepts back (``None`` fields dropped)."""
    if isinstance(obj, dict):
        return obj
    return obj.model_dump(mode="json", exclude_none=True)


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call read from a model turn: the id to answer, the name, the raw arguments."""

    id: str
    name: str
    arguments: Any


async def answer(session: Session, calls: Iterable[Call]) -> list[tuple[Call, ToolOutcome]]:
    """Handle each call in order (a find before a call in one turn must reveal first).

    A repeated id is answered once (an API rejects two results for one id); its second
    occurrence is not executed.
    """
    seen: set[str] = set()
    out: list[tuple[Call, ToolOutcome]] = []
    for call in calls:
        if call.id in seen:
            continue
        seen.add(call.id)
        if not isinstance(call.name, str) or not call.name:
            err = InvalidRequest("the tool call has no tool name", hint="Call a tool by its exact name.")
            out.append((call, ToolOutcome.failure(str(call.name), err)))
            continue
        out.append((call, await session.ahandle(call.name, call.arguments)))
    return out
