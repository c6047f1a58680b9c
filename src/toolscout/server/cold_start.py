"""A call that arrives while the servers are still starting (a first start without cache).

Until an upstream has listed its tools once, the catalog does not know them, and a call to
one of them would fail as ``unknown_tool``, sending the model off to search for a tool that
is about to exist. Instead, a call naming a tool no listed server has, while some server is
still starting or listing, waits up to the gateway's cold-start window for the listings;
if the tool is still unknown and a server is still on its way, the answer is
``upstream_starting`` (naming those servers, with a retry hint), never ``unknown_tool``.
Once every server has listed (or failed), an unknown name is ``unknown_tool`` as always.
"""

from __future__ import annotations

import logging
from typing import Any

from ..errors import ErrorInfo, UpstreamStarting

__all__ = ["COLD_START_WAIT", "called_name", "starting", "wait_for_sources"]

log = logging.getLogger("toolscout.mcp")

COLD_START_WAIT = 5.0
"""How long a search waits, at most, for upstreams that have never listed their tools."""


def called_name(name: str, arguments: Any, find_name: str) -> str | None:
    """The catalog tool a ``tools/call`` runs (``call_tool``'s target), or ``None`` for the
    meta-tools that run no one tool."""
    if name == "call_tool":
        target = (arguments or {}).get("name") if isinstance(arguments, dict) else None
        return target if isinstance(target, str) else None
    if name in (find_name, "use_tool", "execute"):
        return None
    return name


async def starting(gateway: Any, aggregator: Any, name: str | None, wait: float) -> ErrorInfo | None:
    """``upstream_starting`` for a call to ``name`` (see the module docstring), or ``None``
    when the call may go ahead (known tool, or nothing left starting)."""
    if aggregator is None or name is None or gateway.lookup(name) is not None:
        return None
    pending = aggregator.pending()
    if not any(not reason.startswith("failed") for reason in pending.values()):
        return None
    if wait > 0:
        pending = await aggregator.wait_listed(wait)
        if gateway.lookup(name) is not None:
            return None
    on_the_way = {server: reason for server, reason in pending.items() if not reason.startswith("failed")}
    if not on_the_way:
        return None
    servers = ", ".join(sorted(on_the_way))
    return UpstreamStarting(
        f"no listed server has a tool named {name!r} yet; still starting: {servers}",
        loading=on_the_way,
        retry_after=5,
    ).info()


async def wait_for_sources(aggregator: Any, wait: float) -> None:
    """Before the first searches, give upstreams that have never listed their tools a
    bounded moment to do so (a search then says which are still loading)."""
    if aggregator is None or wait <= 0 or not aggregator.pending():
        return
    try:
        await aggregator.wait_listed(wait)
    except Exception as exc:  # waiting is a courtesy; the search answers regardless
        log.debug("cold-start wait failed: %s", exc)
