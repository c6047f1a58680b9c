"""Where a request's time goes, by stage: timings for ``/metrics``, OpenTelemetry spans, trace context.

An operator who sees a slow call must be able to tell whether the search, the policy, the
upstream or the screening took the time. Code marks its stages with :func:`stage`::

    with stage("search"):
        ...

and whoever wants the figures subscribes: :func:`add_hook` gets ``(name, seconds)`` for every
stage that ends (``toolscout serve --metrics`` feeds a Prometheus histogram from it),
:func:`collect` records the stages of the code it wraps (benchmarks, tests, a request's own
breakdown), and :func:`enable_tracing` turns each stage into an OpenTelemetry span (the
``otel`` extra). With none of these on, :func:`stage` returns one shared do-nothing context
manager after reading a module flag: the search path pays well under a microsecond per stage,
and the OpenTelemetry packages are never imported.

Trace context (W3C ``traceparent`` / ``tracestate``) comes from the client, in HTTP headers or
in an MCP request's ``_meta``: :func:`incoming` makes it current for the request, so spans join
the client's trace, and :func:`outgoing` writes it into what goes upstream (HTTP headers or the
upstream request's ``_meta``). Without the extra the client's context is passed through
unchanged, so an upstream that traces still joins the client's trace.

The stage names (:data:`STAGES`) are the request path's: the search side (``parse``,
``search``, ``embedding``, ``dense``, ``fusion``, ``render``) is marked here in toolscout's
search code; the guard's stages (``visibility``, ``validation``, ``approval``, ``credentials``,
``upstream``, ``screening``, ``audit``) plug in through :func:`stage` or :func:`record`
(docs/telemetry.md).
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import os
import re
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from ..errors import MissingExtra
from .otlp import provider_from_env

__all__ = [
    "STAGES",
    "Stages",
    "TraceContext",
    "active",
    "add_hook",
    "collect",
    "disable_tracing",
    "enable_from_env",
    "enable_tracing",
    "incoming",
    "outgoing",
    "parse_traceparent",
    "record",
    "remove_hook",
    "stage",
    "staged",
    "tracing",
]

STAGES = (
    "parse", "identify", "visibility", "search", "embedding", "dense", "fusion", "render",
    "validation", "approval", "credentials", "run", "upstream", "screening", "audit",
)
"""The request path's stages, in the order a call meets them (other names are allowed)."""

F = TypeVar("F", bound=Callable[..., Any])

# -- state ------------------------------------------------------------------------------------
_lock = threading.Lock()
_hooks: tuple[Callable[[str, float], None], ...] = ()
_tracer: Any = None  # an OpenTelemetry tracer while tracing is on
_collectors = 0  # live :func:`collect` blocks (in any thread)
_on = False  # any of the above: the one flag :func:`stage` reads when everything is off
_collecting: contextvars.ContextVar[Stages | None] = contextvars.ContextVar("toolscout_stages", default=None)
_client: contextvars.ContextVar[TraceContext | None] = contextvars.ContextVar("toolscout_trace", default=None)


def _update() -> None:
    global _on
    _on = bool(_hooks) or _tracer is not None or _collectors > 0


# -- stages -----------------------------------------------------------------------------------
class _Off:
    """The shared do-nothing stage (everything off)."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


_OFF = _Off()


class _Stage:
    """One running stage: its start time and, while tracing, its span."""

    __slots__ = ("_span", "_start", "name")

    def __init__(self, name: str) -> None:
        self.name = name
        self._span: Any = None
        self._start = 0.0

    def __enter__(self) -> _Stage:
        tracer = _tracer
        if tracer is not None:
            self._span = tracer.start_as_current_span(f"toolscout.{self.name}")
            self._span.__enter__()
        self._start = time.perf_counter()
        return self

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        seconds = time.perf_counter() - self._start
        if self._span is not None:
            self._span.__exit__(kind, exc, tb)
        _report(self.name, seconds)


def stage(name: str) -> _Stage | _Off:
    """A context manager timing the stage ``name`` (:data:`STAGES`): a span while tracing, a
    call of every hook and an entry in the current :func:`collect` when it ends. Costs one
    flag test when nothing listens."""
    if not _on:
        return _OFF
    return _Stage(name)


def staged(name: str) -> Callable[[F], F]:
    """:func:`stage` as a decorator, for functions and coroutine functions."""

    def decorate(fn: F) -> F:
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def run_async(*args: Any, **kwargs: Any) -> Any:
                with stage(name):
                    return await fn(*args, **kwargs)

            return run_async  # type: ignore[return-value]

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            with stage(name):
                return fn(*args, **kwargs)

        return run  # type: ignore[return-value]

    return decorate


def record(name: str, seconds: float) -> None:
    """Report a stage timed elsewhere (e.g. a guard's ``on_stage(name, seconds)`` hook) that
    ended just now: every hook is called, the current :func:`collect` gets it and, while
    tracing, it becomes a span of that duration under the current one. A hook that raises is
    dropped from this call's fan-out, never the request's problem."""
    if not _on:
        return
    tracer = _tracer
    if tracer is not None:
        end = time.time_ns()
        tracer.start_span(f"toolscout.{name}", start_time=end - int(seconds * 1e9)).end(end_time=end)
    _report(name, seconds)


def _report(name: str, seconds: float) -> None:
    """Every hook and the current :func:`collect` learn that ``name`` took ``seconds``."""
    for hook in _hooks:
        try:
            hook(name, seconds)
        except Exception:  # a metrics sink must never fail a request
            continue
    stages = _collecting.get()
    if stages is not None:
        stages.add(name, seconds)


def active() -> bool:
    """Whether anyone listens to stages (a hook, a :func:`collect` block, tracing): a
    caller that times stages itself (the guard) reads no clock while this is false."""
    return _on


def add_hook(hook: Callable[[str, float], None], *, weak: bool = False) -> None:
    """Call ``hook(name, seconds)`` for every stage that ends, in any thread. ``weak`` (a
    bound method): held by a weak reference and dropped with its object, so a short-lived
    owner (one app's metrics) never keeps stage timing on for the rest of the process."""
    global _hooks
    if weak:
        ref = weakref.WeakMethod(hook)  # type: ignore[arg-type]

        def relay(name: str, seconds: float) -> None:
            target = ref()
            if target is None:
                remove_hook(relay)
            else:
                target(name, seconds)

        hook = relay
    with _lock:
        _hooks = (*_hooks, hook)
        _update()


def remove_hook(hook: Callable[[str, float], None]) -> None:
    """Stop calling ``hook`` (no error if it was not added)."""
    global _hooks
    with _lock:
        _hooks = tuple(h for h in _hooks if h != hook)
        _update()


@dataclass
class Stages:
    """The stages timed inside one :func:`collect` block: seconds per name (summed when a stage
    runs more than once) and how often each ran."""

    seconds: dict[str, float]
    counts: dict[str, int]

    def add(self, name: str, seconds: float) -> None:
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds
        self.counts[name] = self.counts.get(name, 0) + 1

    def ms(self) -> dict[str, float]:
        return {name: s * 1000.0 for name, s in self.seconds.items()}


@contextmanager
def collect() -> Iterator[Stages]:
    """Record the stages that end inside the block, in this context (thread or task)."""
    global _collectors
    stages = Stages({}, {})
    token = _collecting.set(stages)
    with _lock:
        _collectors += 1
        _update()
    try:
        yield stages
    finally:
        _collecting.reset(token)
        with _lock:
            _collectors -= 1
            _update()


# -- OpenTelemetry ------------------------------------------------------------------------------
def enable_tracing(provider: Any = None) -> None:
    """Make every stage an OpenTelemetry span of ``provider`` (an SDK ``TracerProvider``; by
    default the global one the application configured). Needs the ``otel`` extra."""
    global _tracer
    try:
        from opentelemetry import trace  # the otel extra
    except ImportError as exc:
        raise MissingExtra("OpenTelemetry tracing", "otel") from exc
    tracer = (provider or trace.get_tracer_provider()).get_tracer("toolscout")
    with _lock:
        _tracer = tracer
        _update()


ENV = "TOOLSCOUT_OTEL"
"""Set to ``1`` to make ``toolscout serve`` trace: with the process's global tracer provider
(e.g. under ``opentelemetry-instrument``), else, when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set,
with one that sends the spans there over OTLP/HTTP (:mod:`.otlp`)."""


def enable_from_env(environ: Mapping[str, str] | None = None) -> bool:
    """:func:`enable_tracing` when :data:`ENV` says so; whether tracing is on."""
    value = (os.environ if environ is None else environ).get(ENV, "").strip().lower()
    if value in ("1", "true", "yes", "on"):
        enable_tracing(provider_from_env(environ))
    return tracing()


def disable_tracing() -> None:
    global _tracer
    with _lock:
        _tracer = None
        _update()


def tracing() -> bool:
    """Whether stages are OpenTelemetry spans now."""
    return _tracer is not None


# -- W3C trace context --------------------------------------------------------------------------
_TRACEPARENT = re.compile(r"^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$")


@dataclass(frozen=True, slots=True)
class TraceContext:
    """A client's W3C trace context (https://www.w3.org/TR/trace-context/)."""

    trace_id: str
    parent_id: str
    flags: str
    tracestate: str | None = None

    @property
    def traceparent(self) -> str:
        return f"00-{self.trace_id}-{self.parent_id}-{self.flags}"


def parse_traceparent(value: Any, tracestate: Any = None) -> TraceContext | None:
    """A valid ``traceparent`` (and its ``tracestate``) or ``None``: version ``ff`` and all-zero
    ids are invalid by the spec; a malformed value is ignored, never an error."""
    if not isinstance(value, str):
        return None
    m = _TRACEPARENT.match(value.strip().lower())
    if m is None:
        return None
    version, trace_id, parent_id, flags, rest = m.groups()
    if version == "ff" or (version == "00" and rest) or set(trace_id) == {"0"} or set(parent_id) == {"0"}:
        return None
    state = tracestate.strip() if isinstance(tracestate, str) and tracestate.strip() else None
    return TraceContext(trace_id, parent_id, flags, state)


def _carrier_get(carrier: Any, key: str) -> Any:
    """``key`` of a headers mapping (any case), a ``_meta`` dict or a pydantic meta object."""
    if carrier is None:
        return None
    if isinstance(carrier, Mapping):
        value = carrier.get(key)
        if value is None and isinstance(carrier, dict):  # a plain dict of headers as sent: any case
            value = next((v for k, v in carrier.items() if isinstance(k, str) and k.lower() == key), None)
        return value
    extra = getattr(carrier, "model_extra", None)  # MCP's RequestParams.Meta keeps unknown keys here
    if isinstance(extra, dict) and key in extra:
        return extra[key]
    return getattr(carrier, key, None)


@contextmanager
def incoming(carrier: Any, name: str | None = None) -> Iterator[TraceContext | None]:
    """Make the client's trace context in ``carrier`` (HTTP headers, or an MCP request's
    ``_meta``) current for the block; with ``name`` and tracing on, the block is a server span
    of that name, child of the client's span. Yields the parsed context (``None`` if absent)."""
    client = parse_traceparent(_carrier_get(carrier, "traceparent"), _carrier_get(carrier, "tracestate"))
    token = _client.set(client) if client is not None else None
    tracer = _tracer
    try:
        if tracer is None:
            yield client
            return
        from opentelemetry import context as otel_context  # the otel extra (on: imported already)
        from opentelemetry import trace
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        attached = None
        if client is not None:
            headers = {"traceparent": client.traceparent}
            if client.tracestate:
                headers["tracestate"] = client.tracestate
            attached = otel_context.attach(TraceContextTextMapPropagator().extract(headers))
        try:
            if name is None:
                yield client
            else:
                with tracer.start_as_current_span(name, kind=trace.SpanKind.SERVER):
                    yield client
        finally:
            if attached is not None:
                otel_context.detach(attached)
    finally:
        if token is not None:
            _client.reset(token)


def outgoing(carrier: MutableMapping[str, Any] | None = None) -> MutableMapping[str, Any]:
    """``carrier`` (HTTP headers or an upstream request's ``_meta``; a new dict when ``None``)
    with the current trace context written in: the current span's while tracing, else the
    client's as it came. Unchanged when there is none."""
    out: MutableMapping[str, Any] = {} if carrier is None else carrier
    if _tracer is not None:
        from opentelemetry.trace.propagation.tracecontext import (
            TraceContextTextMapPropagator,  # otel extra
        )

        TraceContextTextMapPropagator().inject(out)
        if "traceparent" in out:
            return out
    client = _client.get()
    if client is not None:
        out["traceparent"] = client.traceparent
        if client.tracestate:
            out["tracestate"] = client.tracestate
    return out


def current() -> TraceContext | None:
    """The client's trace context for this request (``None`` outside :func:`incoming`)."""
    return _client.get()


__all__ += ["current"]
