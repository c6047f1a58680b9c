"""What every adapter shares: reading SDK objects or dicts alike, and answering each call once."""

from __future__ import annotations

import importlib
import importlib.metadata
import re
from collections.abc import Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ..errors import ConfigError, InvalidRequest, MissingExtra
from ..session import Session, ToolOutcome


def require(module: str, feature: str, extra: str) -> ModuleType:
    """Import an optional SDK, or raise :class:`MissingExtra` naming the pip extra."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtra(feature, extra) from None


def require_version(dist: str, minimum: tuple[int, ...], feature: str, extra: str) -> None:
    """Raise :class:`ConfigError` when ``dist`` is installed but older than ``minimum``
    (its request types lack what ``feature`` sends). Reads package metadata only: the SDK
    is not imported, and a missing SDK is left to :func:`require` (dicts work without it)."""
    try:
        installed = importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return
    parts = tuple(int(p) for p in re.findall(r"\d+", installed.split("+")[0])[: len(minimum)])
    if parts < minimum:
        need = ".".join(map(str, minimum))
        raise ConfigError(
            f"{feature} needs {dist}>={need}; {installed} is installed, whose request types lack it",
            hint=f"pip install -U 'toolscout[{extra}]' (or use the portable mode: native=False)",
            package=dist,
            installed=installed,
            minimum=need,
        )


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


async def answer(session: Session, calls: Iterable[Call], format: str) -> list[tuple[Call, ToolOutcome]]:
    """Handle each call in order (a find before a call in one turn must reveal first).

    ``format`` is the adapter's: texts the model reads name tools as that format sends
    them, even when this process has not listed tools for the session yet (a session
    restored from a shared store). A repeated id is answered once (an API rejects two
    results for one id); its second occurrence is not executed.
    """
    session.format = format
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
