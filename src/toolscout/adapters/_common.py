"""What every adapter shares: reading SDK objects or dicts alike, and answering each call once."""

from __future__ import annotations

import importlib
import importlib.metadata
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ..errors import ConfigError, InvalidRequest, MissingExtra, ToolscoutError
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


def model_version(model: str, pattern: str) -> tuple[int, int] | None:
    """(major, minor) of a model name matching ``pattern`` (two groups, minor optional)."""
    match = re.search(pattern, model.lower())
    if match is None:
        return None
    return int(match.group(1)), int(match.group(2) or 0)


class NativeChoice:
    """``native=True``, ``False``, ``"hosted"`` or ``"auto"``, decided once per adapter (a
    conversation must not switch between native and portable deferral half-way).

    ``True``: the provider's deferral format, searched by toolscout (``find_tools`` answered
    with the provider's loading blocks). ``"hosted"``: the provider's deferral format and
    the provider's *own* search tool: the provider ranks, toolscout still executes every
    call. ``"auto"``: hosted where the installed SDK types it (else portable; no SDK
    installed means plain dicts, which carry it) and the model, once known (``model=`` or
    the first ``run()``), has hosted search by ``supports(model)``; ``find_tools``
    otherwise. ``True``/``"hosted"`` with an SDK that is too old raise
    :class:`ConfigError` at once.
    """

    def __init__(
        self, native: bool | str, dist: str, minimum: tuple[int, ...], feature: str, extra: str,
        supports: Callable[[str], bool], model: str | None,
    ) -> None:
        if native not in (True, False, "auto", "hosted"):
            raise ConfigError(f"{feature}: native must be True, False, 'hosted' or 'auto', not {native!r}")
        if native is True or native == "hosted":
            require_version(dist, minimum, feature, extra)
        self.value: bool | None = None if native == "auto" else bool(native)
        self.hosted: bool = native == "hosted"
        self.args = (dist, minimum, feature, extra)
        self.supports, self.model = supports, model

    def decide(self, model: str | None = None) -> bool:
        if self.value is None:
            model = self.model or model
            try:
                require_version(*self.args)
            except ConfigError:
                self.value = False
            else:
                self.value = model is None or bool(self.supports(model))
            self.hosted = self.value
        return self.value

    @property
    def mode(self) -> str:
        """``portable``, ``client`` (provider format, toolscout searches) or ``hosted``."""
        if not self.decide():
            return "portable"
        return "hosted" if self.hosted else "client"


def mark_called_loaded(session: Session, names: Iterable[str]) -> None:
    """Hosted search: the provider loaded these tools (it lets a model call only tools its
    search returned or that were never deferred), so the session runs them. Wire names are
    mapped back to catalog names; names the caller may not see are refused later, as
    always, by the session."""
    found = []
    for name in names:
        try:
            found.append(session.gateway.resolve(name, allow=session.allow).name)
        except ToolscoutError:
            continue
    if found:
        session.mark_loaded(*found)


def code_execute(session: Session, format: str) -> list[dict[str, Any]]:
    """Code mode's ``execute`` definition (``[]`` without code mode): it stays a plain
    function beside a provider's own tool search, never deferred."""
    return [d for n, d in zip(session.meta_names, session.meta_tools(format), strict=True) if n == "execute"]


def rendered(session: Session, names: Iterable[str], format: str) -> list[dict[str, Any]]:
    """The definitions of ``names`` in ``format``, leaving out tools no longer in the catalog."""
    return [d for d in (session.render(n, format) for n in names) if d is not None]


def record_holding(
    session: Session, format: str, sent: list[dict[str, Any]], sent_names: Iterable[str], held: Iterable[str]
) -> None:
    """Record a native-deferral turn in the ledger: what the model holds is what was
    ``sent`` (named ``sent_names``) plus every tool in ``held``, the tools the provider's
    search loaded earlier in the conversation (they stay in its context whatever the
    session has evicted since). ``record_turn`` also sets the session's format, so texts
    name tools by this format's wire names."""
    held = list(held)
    session.record_turn(format, [*sent, *rendered(session, held, format)], [*sent_names, *held])


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


def last_user_text(items: Iterable[Any]) -> str:
    """The text of the conversation's last user message, in any provider's shape: a plain
    string (Gemini ``contents``), a dict or SDK object with ``role: user`` (or a LangChain
    ``HumanMessage``) whose content is a string or parts carrying ``text``."""
    for item in reversed(list(items)):
        if isinstance(item, str):
            return item
        role = field(item, "role") or field(item, "type")
        if role not in ("user", "human"):
            continue
        content = field(item, "content")
        if content is None:
            content = field(item, "parts")
        if isinstance(content, str):
            return content
        texts = [field(part, "text") if not isinstance(part, str) else part for part in content or ()]
        return " ".join(t for t in texts if isinstance(t, str))
    return ""


def preselect(session: Session, items: Iterable[Any], k: int) -> None:
    """``run(..., preselect=k)``: reveal the user's request's likely tools before the first
    turn (:meth:`Session.preselect`); ``k=0`` does nothing."""
    if k > 0:
        session.preselect(last_user_text(items), k)


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
