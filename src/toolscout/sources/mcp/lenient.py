"""A transport read stream that recovers what the SDK's strict JSON parser rejects.

Kept apart from the connection: it is about reading one upstream message, whatever
carries it (stdio or streamable HTTP).
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import AsyncIterator
from typing import Any

__all__ = ["LenientReader", "lenient", "recover", "top_level_scalars"]

log = logging.getLogger("toolscout.mcp")


@contextlib.asynccontextmanager
async def lenient(transport: Any, server: str) -> AsyncIterator[tuple[Any, Any]]:
    """``transport`` with a read stream that recovers what the SDK's parser rejects."""
    async with transport as (read, write):
        yield LenientReader(read, server), write


class LenientReader:
    """A transport read stream that re-reads messages the SDK's strict JSON parser rejects.

    pydantic's parser stops at 200 nesting levels, so one tool with a deeply nested schema
    lost the whole ``tools/list`` answer and its request waited out its timeout. Python's
    parser goes deeper: the message is re-read with it (the aggregator then drops the deep
    tool). An answer that cannot be read even so fails its request at once, with the cause.
    """

    def __init__(self, inner: Any, server: str) -> None:
        self._inner = inner
        self._server = server

    def __getattr__(self, name: str) -> Any:  # e.g. ``last_context``
        return getattr(self._inner, name)

    async def receive(self) -> Any:
        return self._fix(await self._inner.receive())

    def __aiter__(self) -> LenientReader:
        return self

    async def __anext__(self) -> Any:
        return self._fix(await self._inner.__anext__())

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> LenientReader:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        return await self._inner.__aexit__(*exc)

    def _fix(self, item: Any) -> Any:
        if not isinstance(item, ValueError) or not hasattr(item, "errors"):
            return item
        try:
            return recover(item, self._server)
        except Exception:  # recovery is best effort: the SDK then handles the original
            log.debug("upstream %s: could not recover a message", self._server, exc_info=True)
            return item


def recover(exc: Any, server: str) -> Any:
    """A message the SDK could not parse: re-read it, or turn it into an error answer for
    the request it answers; else ``exc`` unchanged (garbage lines are the SDK's to log)."""
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    errors = exc.errors()
    raw = next((e["input"] for e in errors if e["type"] == "json_invalid" and isinstance(e.get("input"), str)), None)
    data: Any = next((e["input"] for e in errors if isinstance(e.get("input"), dict)), None)
    cause = errors[0]["msg"] if errors else str(exc)
    if raw is not None:
        try:
            data = json.loads(raw)
        except RecursionError:
            data = top_level_scalars(raw)
            cause = "nested too deeply to read"
        except ValueError:
            return exc  # not JSON at all
        else:
            try:
                message = types.jsonrpc_message_adapter.validate_python(data, by_name=False)
            except (ValueError, RecursionError):
                pass
            else:
                log.warning("upstream %s: re-read a message the SDK could not parse (%s)", server, cause)
                return SessionMessage(message)
    if not isinstance(data, dict) or "method" in data:  # only answers to our requests
        return exc
    request_id = data.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, int | str):
        return exc
    log.warning("upstream %s: an answer could not be parsed (%s)", server, cause)
    error = types.ErrorData(code=types.PARSE_ERROR, message=f"the server's answer could not be parsed: {cause}")
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_SCALAR = re.compile(r'\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")')


def top_level_scalars(raw: str) -> dict[str, Any]:
    """The outermost object's string and integer members, found without parsing the nested
    values (too deep for any recursive parser), e.g. an answer's ``id``."""
    found: dict[str, Any] = {}
    depth, i = 0, 0
    while i < len(raw):
        char = raw[i]
        if char == '"':
            string = _STRING.match(raw, i)
            if string is None:
                break
            i = string.end()
            if depth == 1 and (value := _SCALAR.match(raw, i)):
                found[json.loads(string.group())] = json.loads(value.group(1))
                i = value.end()
            continue
        if char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
        i += 1
    return found

