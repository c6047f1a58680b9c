"""The gateway config's declaration files, OpenAPI specs and Python modules as catalog sources.

They have no connection to keep, so they live beside the MCP upstreams rather than among
them: the :class:`~toolscout.sources.mcp.aggregator.Aggregator` owns one
:class:`ConfiguredSources` and merges its status, pending list and handlers with its
upstreams', so ``serve``, ``servers``, ``/v1/servers``, capabilities and metrics show every
source alike.

- **Loading.** Files and modules are read by :meth:`ConfiguredSources.load` (``strict``
  before anything starts: a bad source is a :class:`ConfigError` naming the source and
  field). Spec URLs are fetched by :meth:`~ConfiguredSources.start`; a fetch that fails
  shows the source ``failed`` with the cause and is retried with backoff, while every other
  source serves.
- **Reloading.** Every ``watchInterval`` seconds the watcher stats each watched file
  (mtime, size, inode: no file is read unless it changed) and reloads the changed ones;
  :meth:`~ConfiguredSources.reload` (``SIGHUP`` in ``toolscout serve``) reloads every file
  and refetches every URL. A reload swaps the source's tools with
  :meth:`Catalog.replace_source`, so the index updates incrementally and stateful MCP
  sessions that list a changed tool get ``list_changed``. A reload that fails keeps the
  tools loaded before and shows ``failed`` with the cause. Python modules load once.
- **Screening.** Tools pass the same poisoning screen as MCP tools. Only a spec fetched
  from a URL is pinned against rug pulls: a changed local file is the operator's own edit.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..catalog_base import BaseCatalog, Handler
from ..errors import ConfigError, ToolFailed, ToolscoutError, ToolTimeout
from ..model import DeferPolicy, Tool
from ..security import Screen, blocking, findings_of, is_quarantined
from .bindings import UpstreamHandler
from .mcp.upstream import backoff_delay
from .overrides import OverrideProblem, apply_overrides, pins_for, unknown_overrides, with_pins
from .source_config import (
    DeclarationSource,
    OpenAPISource,
    PythonSource,
    SkillsSource,
    SourceEntry,
)
from .source_readers import (
    Pairs,
    Read,
    SourceProblem,
    as_problem,
    headers_of,
    parse_document,
    read_declarations,
    read_module,
    read_openapi,
    read_skills,
)

if TYPE_CHECKING:
    from .mcp.config import GatewayConfig

__all__ = ["ConfiguredSources", "poisoning_status"]

log = logging.getLogger("toolscout.sources")

_Converted = tuple[Pairs, list[str]]


@dataclass
class _State:
    name: str
    entry: SourceEntry
    state: str = "idle"
    last_error: str | None = None
    fetched_at: float | None = None
    signature: tuple[int, int, int] | None = None  # the watched file's stat when last read
    skipped: list[str] = field(default_factory=list)
    quarantined: list[Tool] = field(default_factory=list)
    handlers: dict[str, Handler] = field(default_factory=dict)
    failures: int = 0
    retry_at: float | None = None  # loop time of the next fetch of a failed spec URL
    retry_task: asyncio.Task[None] | None = None
    calls: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def remote(self) -> bool:
        return isinstance(self.entry, OpenAPISource) and self.entry.remote


class ConfiguredSources:
    """Loads, watches and reports the non-MCP sources of one :class:`GatewayConfig`."""

    def __init__(
        self,
        config: GatewayConfig,
        catalog: BaseCatalog,
        *,
        screen: Callable[[], Screen] | None = None,
        on_listed: Callable[[], None] | None = None,
        upstream: UpstreamHandler | None = None,
    ) -> None:
        """``screen`` gives the screen whose rug-pull pins a fetched spec uses (the
        aggregator's); ``on_listed`` is told whenever a fetch ends (cold-start waiters);
        ``upstream(server, tool)`` is the handler of an upstream's tool, for declarations
        that describe one (``upstream: server/tool``)."""
        self._upstream = upstream
        self.config = config
        self.catalog = catalog
        self._screen = screen or Screen
        self._on_listed = on_listed or (lambda: None)
        self.states: dict[str, _State] = {
            name: _State(name, entry) for name, entry in config.sources().items() if entry.enabled
        }
        self.loaded = False
        self._watcher: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    # -- loading ----------------------------------------------------------------------
    def load(self, *, strict: bool = False) -> None:
        """Read every file source and import every module once (spec URLs wait for
        :meth:`start`). ``strict`` raises :class:`ConfigError` for the first bad source;
        otherwise it shows ``failed`` with the cause."""
        if self.loaded:
            return
        self.loaded = True
        for state in self.states.values():
            try:
                if state.remote:
                    headers_of(state.entry)  # an unset variable is a config error, not a fetch failure
                    continue
                signature = self._signature(state)
                self._apply(state, self._convert(state, *self._read(state)), signature)
            except Exception as exc:
                problem = as_problem(exc)
                if strict:
                    raise self._config_error(state, problem) from None
                self._failed(state, problem.message)

    async def start(self) -> None:
        """Fetch spec URLs never fetched, then watch files; returns once every fetch ended."""
        self.load()
        await asyncio.gather(*(self._fetch(s) for s in self.states.values() if s.remote and s.fetched_at is None))
        interval = self.config.watch_interval
        watched = any(self._watched(s) for s in self.states.values())
        if interval > 0 and watched and (self._watcher is None or self._watcher.done()):
            self._watcher = asyncio.get_running_loop().create_task(self._watch(interval), name="toolscout:watch")

    async def reload(self, names: Iterable[str] | None = None) -> dict[str, str]:
        """Reload files and refetch spec URLs now (all, or ``names``); each source's state
        after it. Python modules are not reloaded (a module cannot be unloaded safely)."""
        chosen = [self.states[n] for n in (names if names is not None else self.states) if n in self.states]
        await asyncio.gather(*(self._reload(s) for s in chosen if not isinstance(s.entry, PythonSource)))
        return {s.name: s.state for s in chosen}

    def request_reload(self) -> None:
        """:meth:`reload` in the background (a signal handler cannot await)."""
        log.info("reloading declaration files and OpenAPI specs")
        self._spawn(self.reload())

    async def _reload(self, state: _State) -> None:
        if state.remote:
            await self._fetch(state)
            return
        async with state.lock:
            signature = self._signature(state)
            try:
                converted = await asyncio.to_thread(lambda: self._convert(state, *self._read(state)))
                self._apply(state, converted, signature)
            except Exception as exc:
                problem = as_problem(exc)
                state.signature = signature  # wait for the next change, not a retry per tick
                kept = self.tool_count(state.name)
                self._failed(state, f"{problem.message} (still serving the {kept} tools loaded before)")
                return
        log.info("source %s: reloaded, %d tools", state.name, self.tool_count(state.name))

    async def _fetch(self, state: _State) -> None:
        """Fetch, convert and install a spec URL; on failure, retry later with backoff."""
        import httpx  # off the serve path until a spec URL is fetched (it pulls in rich)

        entry = state.entry
        assert isinstance(entry, OpenAPISource)
        async with state.lock:
            if state.fetched_at is None:
                state.state = "connecting"
            try:
                try:
                    async with httpx.AsyncClient(
                        timeout=entry.timeout or 60.0, headers=headers_of(entry), follow_redirects=True
                    ) as client:
                        response = await client.get(entry.spec)
                except httpx.HTTPError as exc:
                    raise SourceProblem("spec", f"cannot fetch {entry.location()}: {type(exc).__name__}: {exc}") from None
                if response.status_code >= 400:
                    raise SourceProblem("spec", f"GET {entry.location()} answered HTTP {response.status_code}")
                doc = parse_document(response.text, entry.location(), json_first=True)
                converted = await asyncio.to_thread(lambda: self._convert(state, read_openapi(entry, doc), []))
                self._apply(state, converted, None)
            except Exception as exc:
                self._failed(state, as_problem(exc).message)
                self._retry_later(state)
            finally:
                self._on_listed()

    def _retry_later(self, state: _State) -> None:
        """One pending retry per source, 0.5 s doubling to 30 s (as for MCP upstreams)."""
        if state.retry_task is not None and not state.retry_task.done():
            return
        delay = backoff_delay(state.failures)
        state.retry_at = asyncio.get_running_loop().time() + delay

        async def again() -> None:
            await asyncio.sleep(delay)
            state.retry_at = state.retry_task = None
            await self._fetch(state)

        state.retry_task = self._spawn(again())

    # -- reading one source (off the loop: pure but for the screen's pins) --------------------
    def _read(self, state: _State) -> Read:
        entry = state.entry
        if isinstance(entry, DeclarationSource):
            return read_declarations(entry, self._path, self._upstream)
        if isinstance(entry, SkillsSource):
            return read_skills(entry, self._path)
        if isinstance(entry, OpenAPISource):
            path = self._path(entry.spec)
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise SourceProblem("spec", f"cannot read {path}: {exc}") from None
            return read_openapi(entry, parse_document(text, str(path), json_first=path.suffix == ".json")), []
        return read_module(entry, self._path), []

    def _convert(self, state: _State, pairs: Pairs, skipped: list[str]) -> _Converted:
        """Filter (allow/deny), name (prefix), set the defer policy and screen the tools."""
        name, entry = state.name, state.entry
        prefix = self.config.prefix_for(name)
        own_defer = "defer" not in entry.model_fields_set  # else the source's policy wins
        skipped = list(skipped)
        out: Pairs = []
        for tool, handler in pairs:
            own = tool.name
            if not entry.keeps(own):
                skipped.append(f"{own}: filtered out by allow/deny")
                continue
            full = f"{prefix}_{own}" if prefix else own
            defer = DeferPolicy.NEVER if entry.always(own) else (tool.defer if own_defer else entry.defer)
            changes: dict[str, Any] = {
                "name": full,
                "source_id": name,
                "category": tool.category or name,
                "defer": defer.value,
                "meta": {**tool.meta, "server": name},
            }
            if full != own:
                changes["original_name"] = tool.call_name
            try:  # what the model will read, so what the screen reads next
                out.append((apply_overrides(tool.replace(**changes), entry, own, prefix), handler))
            except OverrideProblem as exc:
                raise SourceProblem(f"overrides.{own}", str(exc)) from None
        unknown = unknown_overrides(entry, (t.name for t, _ in pairs))
        if unknown:
            raise SourceProblem(
                f"overrides.{unknown[0]}", f"no tool named {unknown[0]!r} in this source (overrides name tools by their own name, before the prefix)"
            )
        mode = entry.poisoning or self.config.poisoning
        screen = self._screen() if state.remote else Screen()  # a fresh screen pins nothing
        return screen.apply(f"source {name}", out, mode, entry.poisoning_allow), skipped

    def _apply(self, state: _State, converted: _Converted, signature: tuple[int, int, int] | None) -> None:
        """Swap a source's tools into the catalog (on the loop: listeners run here)."""
        reviewed, skipped = converted
        name = state.name
        tools: list[Tool] = []
        handlers: dict[str, Handler] = {}
        held: list[Tool] = []
        claimed, clashes = self.catalog.claim(name, reviewed)
        skipped.extend(clashes)
        for tool, handler in claimed:
            if is_quarantined(tool):
                held.append(tool)
                continue
            tools.append(tool)
            if handler is not None:
                handlers[tool.name] = self._wrap(state, tool.name, handler, tool.call_name)
        try:
            self.catalog.replace_source(name, tools, handlers=handlers)
        except ToolscoutError as exc:  # a shared catalog (PostgreSQL) that cannot be written now
            raise SourceProblem("(catalog)", f"catalog not written: {exc}") from None
        for problem in skipped:
            log.warning("source %s: skipped tool %s", name, problem)
        state.handlers, state.skipped, state.quarantined = handlers, skipped, held
        state.signature = signature
        state.state, state.last_error, state.failures = "ready", None, 0
        state.fetched_at = time.time()

    def _wrap(self, state: _State, tool_name: str, handler: Any, own: str | None = None) -> Handler:
        """The handler with the source's timeout, its call count, and secrets kept out of
        the error a model reads."""
        timeout = state.entry.timeout
        redact = self._redactor(state)
        handler = with_pins(handler, pins_for(state.entry, own or tool_name))  # the gateway refused a model's value

        async def run(arguments: dict[str, Any]) -> Any:
            state.calls += 1
            try:
                async with asyncio.timeout(timeout) as limit:
                    if _is_async(handler):
                        return await handler(arguments)
                    value = await asyncio.to_thread(handler, arguments)
                    return await value if inspect.isawaitable(value) else value
            except TimeoutError:
                if limit.expired():
                    raise ToolTimeout(
                        f"source '{state.name}': {tool_name} did not finish within {timeout:g} s", server=state.name
                    ) from None
                raise
            except (ToolscoutError, asyncio.CancelledError):
                raise
            except Exception as exc:
                raise ToolFailed(redact(f"{tool_name} raised {type(exc).__name__}: {exc}"), server=state.name) from None

        run.__name__ = f"run_{tool_name}"
        return run

    # -- watching ---------------------------------------------------------------------
    def _watched(self, state: _State) -> bool:
        entry = state.entry
        return isinstance(entry, DeclarationSource | OpenAPISource | SkillsSource) and entry.watch and not state.remote

    def _signature(self, state: _State) -> tuple[int, int, int] | None:
        entry = state.entry
        if not self._watched(state):
            return None
        path = self._path(entry.path if isinstance(entry, DeclarationSource | SkillsSource) else entry.spec)  # type: ignore[union-attr]
        try:
            st = path.stat()
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    async def _watch(self, interval: float) -> None:
        """Poll the watched files' stat every ``interval`` s; reload the ones that changed."""
        while True:
            await asyncio.sleep(interval)
            for state in list(self.states.values()):
                if self._watched(state) and not state.lock.locked() and self._signature(state) != state.signature:
                    try:
                        await self._reload(state)
                    except Exception:  # the watcher must outlive any one bad reload
                        log.exception("source %s: reload failed", state.name)

    # -- reading ----------------------------------------------------------------------
    def tool_count(self, name: str) -> int:
        return sum(1 for t in self.catalog if t.source_id == name)

    def handler_for(self, tool: Tool) -> Handler | None:
        """This replica's handler for a tool of one of these sources (another replica may
        have written it to a shared catalog first)."""
        state = self.states.get(tool.source_id or "")
        return state.handlers.get(tool.name) if state is not None else None

    def pending(self) -> dict[str, str]:
        """Spec URLs never fetched, with why (as :meth:`Aggregator.pending` says it)."""
        out: dict[str, str] = {}
        loop_time = _loop_time()
        for name, state in self.states.items():
            if state.fetched_at is not None or not state.remote:
                continue
            if state.state == "failed":
                retry = "" if state.retry_at is None or loop_time is None else f"; retry in {max(0.0, state.retry_at - loop_time):.0f} s"
                out[name] = f"failed: {state.last_error}{retry}"
            else:
                out[name] = "starting" if state.state == "idle" else "fetching the spec"
        return out

    def status(self) -> dict[str, dict[str, Any]]:
        """Per source, the row ``toolscout servers`` shows for an MCP server, plus ``kind``
        and ``location`` (no credentials)."""
        out: dict[str, dict[str, Any]] = {}
        loop_time = _loop_time()
        for name, entry in self.config.sources().items():
            state = self.states.get(name)
            if state is None:
                out[name] = {"state": "disabled", "tools": 0, "last_error": None, "transport": entry.transport, "kind": entry.kind}
                continue
            redact = self._redactor(state)
            retry = None if state.retry_at is None or loop_time is None else round(max(0.0, state.retry_at - loop_time), 1)
            out[name] = {
                "state": state.state,
                "last_error": state.last_error,
                "retry_in": retry,
                "connected_at": None,
                "calls": state.calls,
                "tools": self.tool_count(name),
                "metadata_only": sum(1 for t in self.catalog if t.source_id == name and t.name not in state.handlers),
                "skipped": len(state.skipped),
                "skipped_tools": [redact(s) for s in state.skipped[:20]],
                "fetched_at": state.fetched_at,
                "from_cache": False,
                "transport": entry.transport,
                "kind": entry.kind,
                "location": entry.location(),
                **poisoning_status(self.catalog, name, state.quarantined),
            }
        return out

    async def aclose(self) -> None:
        tasks = [t for t in (self._watcher, *self._tasks) if t is not None]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5)

    # -- helpers ----------------------------------------------------------------------
    def _path(self, value: str) -> Path:
        path = Path(value).expanduser()
        return path if path.is_absolute() else self.config.base_dir / path

    def _failed(self, state: _State, reason: str) -> None:
        reason = self._redactor(state)(reason)
        state.failures += 1
        if reason != state.last_error:  # a spec URL down for hours: say so once per cause
            log.warning("source %s: %s", state.name, reason)
        state.state, state.last_error = "failed", reason

    def _redactor(self, state: _State) -> Callable[[str], str]:
        entry = state.entry
        secrets = entry.secrets(dict(os.environ)) if isinstance(entry, OpenAPISource) else []

        def redact(text: str) -> str:
            for secret in secrets:
                text = text.replace(secret, "***")
            return text

        return redact

    def _config_error(self, state: _State, problem: SourceProblem) -> ConfigError:
        where = self.config.path or "config"
        return ConfigError(
            f"{where}: source '{state.name}' ({state.entry.kind}), field '{problem.field}': {self._redactor(state)(problem.message)}",
            hint="Fix that source or set 'enabled': false; nothing was started.",
            server=state.name,
            field=problem.field,
        )

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task


def poisoning_status(catalog: BaseCatalog, source: str, held: list[Tool]) -> dict[str, Any]:
    """Flagged (kept, with findings) and quarantined (held back) tools of one source."""
    flagged = [t for t in catalog if t.source_id == source and blocking(findings_of(t))]

    def worst(tool: Tool) -> str:
        f = findings_of(tool)[0]
        return f"{tool.name}: {f.code} ({f.severity}) in {f.field}"

    return {
        "flagged": len(flagged),
        "flagged_tools": [worst(t) for t in flagged[:20]],
        "quarantined": len(held),
        "quarantined_tools": [worst(t) for t in held[:20]],
    }


def _is_async(fn: Any) -> bool:
    call = type(fn).__call__ if not inspect.isroutine(fn) else None
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)


def _loop_time() -> float | None:
    try:
        return asyncio.get_running_loop().time()
    except RuntimeError:
        return None
