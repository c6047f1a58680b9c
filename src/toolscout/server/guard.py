"""HTTP request guards for the gateway: DNS rebinding (Host, Origin) and the bearer token.

A web page can reach a gateway on loopback by making its own name resolve to 127.0.0.1
(DNS rebinding); the browser then sends ``Host: evil.example`` and ``Origin:
http://evil.example``. :class:`HostOriginGuard` refuses those. The SDK's own check
(``TransportSecuritySettings``) is not used: it knows only three literal bind strings
(127.0.0.2 or ``0:0:0:0:0:0:0:1`` went unprotected), matches string prefixes, answers in
plain text with 421, and cannot check Origin alone on a token-protected public bind.

Stdlib only: the CLI imports :func:`is_loopback` before deciding whether a token is needed.
"""

from __future__ import annotations

import functools
import hmac
import ipaddress
import json
import logging
import socket
from collections.abc import Awaitable, Callable, Iterable
from typing import Any
from urllib.parse import urlsplit

__all__ = ["BearerGuard", "HostOriginGuard", "is_loopback"]

log = logging.getLogger("toolscout.mcp")

App = Callable[..., Awaitable[None]]
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``host`` as an IP address in any notation the OS accepts (``127.1``, ``[::1]``...)."""
    name = host.strip()
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    if not name:
        return None
    try:
        addr = ipaddress.ip_address(name)
    except ValueError:
        try:  # the stack's own parser, never DNS: accepts 127.1, 0x7f.1, 2130706433
            infos = socket.getaddrinfo(name, None, flags=socket.AI_NUMERICHOST)
            addr = ipaddress.ip_address(str(infos[0][4][0]).split("%")[0])
        except (OSError, UnicodeError, ValueError, IndexError):
            return None
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return addr.ipv4_mapped
    return addr


@functools.lru_cache(maxsize=256)  # every request carries the same few Host values
def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only: 127.0.0.0/8, ``::1`` in any spelling, localhost."""
    if host.strip().lower().rstrip(".") == "localhost":
        return True
    addr = _address(host)
    return addr is not None and addr.is_loopback


def _canonical_host(host: str) -> str:
    addr = _address(host)
    return str(addr) if addr is not None else host.strip().lower().rstrip(".")


@functools.lru_cache(maxsize=256)
def _split_host(value: str) -> tuple[str, int | None] | None:
    """``host[:port]`` or ``[v6][:port]`` as (canonical host, port); None if malformed."""
    value = value.strip()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        host, rest = value[1:end], value[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else None
    elif value.count(":") == 1:
        host, port_text = value.split(":")
    elif ":" in value:
        return None  # an unbracketed IPv6 literal is not a valid Host header
    else:
        host, port_text = value, None
    if not host or (port_text is not None and not port_text.isdigit()):
        return None
    return _canonical_host(host), int(port_text) if port_text else None


def _split_origin(value: str) -> tuple[str, str, int | None] | None:
    """``scheme://host[:port]`` as (scheme, canonical host, port); None unless a bare origin.

    Any scheme: extensions and webviews send ``chrome-extension://id`` and the like."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if not scheme or not parts.hostname or parts.username or parts.password:
        return None
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        return None
    return scheme, _canonical_host(parts.hostname), port or _DEFAULT_PORTS.get(scheme)


def _origin_rule(entry: str) -> tuple[str, str, int | None] | str:
    """An ``--allow-origin`` value: ``null``, or an origin whose port may be ``*``."""
    text = entry.strip()
    if text == "null":
        return "null"
    any_port = text.endswith(":*")
    parsed = _split_origin(text[:-2] if any_port else text)
    if parsed is None:
        example = "https://app.example.com or http://localhost:*"
        raise ValueError(f"--allow-origin {entry!r}: expected an origin like {example}")
    scheme, host, port = parsed
    return scheme, host, None if any_port else port


def _host_rule(entry: str) -> tuple[str, int | None]:
    parsed = _split_host(entry)
    if parsed is None:
        raise ValueError(f"--allow-host {entry!r}: expected a name or address, optionally with :port")
    return parsed


async def _refuse(
    send: Any, status: int, error: str, hint: str, headers: Iterable[tuple[bytes, bytes]] = ()
) -> None:
    body = json.dumps({"error": error, "hint": hint}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body})


class HostOriginGuard:
    """Refuse (403) requests whose ``Host`` or ``Origin`` header a rebinding page could send.

    On a loopback bind (any notation, see :func:`is_loopback`) the Host must be a loopback
    name or address, and a browser Origin must be loopback too. On any other bind the Host
    is checked only if ``allow_hosts`` is given, and an Origin must be in ``allow_origins``
    (the MCP spec requires servers to validate it). Requests without an Origin (non-browser
    clients) pass. ``allow_hosts`` / ``allow_origins`` add to what is accepted.
    """

    def __init__(
        self, app: App, *, bind: str, allow_origins: Iterable[str] = (), allow_hosts: Iterable[str] = ()
    ) -> None:
        self.app = app
        self.loopback = is_loopback(bind)
        self._origins = [_origin_rule(o) for o in allow_origins]
        self._hosts = [_host_rule(h) for h in allow_hosts]
        self.check_host = self.loopback or bool(self._hosts)

    def host_ok(self, value: str | None) -> bool:
        parsed = _split_host(value) if value else None
        if parsed is None:
            return False
        host, port = parsed
        if is_loopback(host):
            return True
        return any(h == host and (p is None or p == port) for h, p in self._hosts)

    def origin_ok(self, value: str) -> bool:
        if value.strip() == "null":
            return "null" in self._origins
        parsed = _split_origin(value)
        if parsed is None:
            return False
        scheme, host, port = parsed
        if self.loopback and scheme in _DEFAULT_PORTS and is_loopback(host):
            return True
        rules = (r for r in self._origins if isinstance(r, tuple))
        return any(r[:2] == (scheme, host) and r[2] in (None, port) for r in rules)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket"):
            headers = scope.get("headers") or []
            host = next((v.decode("latin-1") for k, v in headers if k == b"host"), None)
            origins = [v.decode("latin-1") for k, v in headers if k == b"origin"]
            if self.check_host and not self.host_ok(host):
                log.warning("refused a request for Host %r (DNS rebinding guard)", (host or "")[:200])
                hint = (
                    "This gateway answers only requests addressed to a loopback name (127.0.0.1, localhost, [::1])"
                    if self.loopback
                    else "This gateway answers only the host names it was given"
                ) + "; start it with --allow-host NAME to accept another."
                await _refuse(send, 403, "forbidden_host", hint)
                return
            if any(not self.origin_ok(o) for o in origins):
                log.warning("refused a request from Origin %r (DNS rebinding guard)", origins[0][:200])
                hint = (
                    "Browser pages may call this gateway only from allowed origins; "
                    "start it with --allow-origin ORIGIN to allow one."
                )
                await _refuse(send, 403, "forbidden_origin", hint)
                return
        await self.app(scope, receive, send)


class BearerGuard:
    """Refuse (401) any HTTP request without ``Authorization: Bearer <token>``.

    The token is compared in constant time and never forwarded: upstream connections use
    only the headers configured for each server.
    """

    def __init__(self, app: App, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                hint = "Send Authorization: Bearer <token>."
                await _refuse(send, 401, "unauthorized", hint, [(b"www-authenticate", b"Bearer")])
                return
        await self.app(scope, receive, send)
