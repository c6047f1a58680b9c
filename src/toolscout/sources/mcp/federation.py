"""Upstream resources, resource templates and prompts, federated under one namespace.

Tools are not all an MCP server offers: its resources, templates and prompts cross the
gateway too, named as its tools are. With a server prefix ``p`` a resource URI becomes
``p+<uri>`` (a valid URI scheme: ``p+file:///x``, as ``git+https`` is) and a prompt or
resource name ``p_<name>``; with the empty prefix they pass unchanged. A request is routed
back by that prefix (or, unprefixed, by which server listed the URI), and what the server
answers is renamed the same way, so a URI read from a result can be read again.

Each listing asks the servers that declared the feature, concurrently and bounded by their
timeouts; a server that fails is left out of that listing (and logged), never the others.
Which servers a caller may see is the surface's to decide (``visible``): the same rule as
for tools, applied to each entry as a catalog entry named like it.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ...context import current
from ...errors import AuthorizationRequired, LookupFailed

if TYPE_CHECKING:
    from .upstream import Upstream

__all__ = ["Federation", "UnknownEntry", "expand", "split_uri", "template_vars"]

log = logging.getLogger("toolscout.mcp")

Visible = Callable[[str, str, str], bool]
"""``(server, kind, namespaced name)`` -> may this caller see it (``kind``: resource, prompt)."""

_FEATURE = {"resources": "resources", "resourceTemplates": "resources", "prompts": "prompts"}
_METHOD = {
    "resources": "resources/list",
    "resourceTemplates": "resources/templates/list",
    "prompts": "prompts/list",
}
_MAX_PAGES = 100
_METHOD_NOT_FOUND = -32601
_TEMPLATE_VAR = re.compile(r"\{[^}]*\}")


class UnknownEntry(LookupFailed):
    """No upstream offers this resource URI or prompt name."""


def split_uri(uri: str, prefixes: Iterable[str]) -> tuple[str, str] | None:
    """``(prefix, upstream uri)`` when ``uri`` starts with ``<prefix>+`` for a known prefix."""
    head, plus, rest = uri.partition("+")
    if plus and head in set(prefixes) and head:
        return head, rest
    return None


class Federation:
    """Lists, reads, gets and completes across ``upstreams``; see the module docstring."""

    def __init__(self, upstreams: dict[str, Upstream], prefix_for: Callable[[str], str]) -> None:
        self.upstreams = upstreams
        self.prefix_for = prefix_for
        self.broker: Callable[[], Any] = lambda: None
        """The per-user credential broker (the aggregator's), for servers whose
        ``credentials`` mode is not ``gateway``: their resources, prompts and completions
        are fetched with the caller's own credential, as their tools are called."""
        self._owner: dict[
            str, str
        ] = {}  # upstream uri -> server that listed it (unprefixed servers)
        self._templates: dict[
            str, list[re.Pattern[str]]
        ] = {}  # server -> its templates as patterns

    # -- names ------------------------------------------------------------------------------
    def outer_uri(self, server: str, uri: str) -> str:
        prefix = self.prefix_for(server)
        return f"{prefix}+{uri}" if prefix else uri

    def outer_name(self, server: str, name: str) -> str:
        prefix = self.prefix_for(server)
        return f"{prefix}_{name}" if prefix else name

    def route_uri(self, uri: str) -> tuple[str, str]:
        """``(server, upstream uri)`` for a URI a client sent; :class:`UnknownEntry` if none."""
        by_prefix = {self.prefix_for(n): n for n in self.upstreams if self.prefix_for(n)}
        split = split_uri(uri, by_prefix)
        if split is not None:
            return by_prefix[split[0]], split[1]
        plain = [n for n in self.upstreams if not self.prefix_for(n)]
        owner = self._owner.get(uri)
        if owner in plain:
            return owner, uri
        for name in plain:
            if any(p.fullmatch(uri) for p in self._templates.get(name, ())):
                return name, uri
        offering = [n for n in plain if self._offers(n, "resources")]
        if len(offering) == 1:
            return offering[0], uri
        raise UnknownEntry(
            f"unknown resource {uri}", hint="List resources (resources/list) for the URIs offered."
        )

    def route_name(self, name: str) -> tuple[str, str]:
        """``(server, upstream name)`` for a prompt name a client sent."""
        for server in sorted(self.upstreams, key=lambda n: -len(self.prefix_for(n))):
            prefix = self.prefix_for(server)
            if prefix and name.startswith(prefix + "_"):
                return server, name[len(prefix) + 1 :]
            if not prefix and self._offers(server, "prompts"):
                return server, name
        raise UnknownEntry(
            f"unknown prompt {name}", hint="List prompts (prompts/list) for the names offered."
        )

    async def _request(self, server: str, method: str, params: dict[str, Any] | None) -> dict[str, Any]:
        """``method`` on ``server`` for the current caller: their own connection on a
        per-user server (never the gateway's), the shared one otherwise."""
        up = self.upstreams[server]
        if getattr(up.config, "credentials", "gateway") == "gateway":
            return await up.request(method, params)
        broker = self.broker()
        if broker is None:
            raise AuthorizationRequired(
                f"server '{server}' acts with each caller's own credential, and this gateway keeps none",
                hint="The operator sets a vault key (TOOLSCOUT_VAULT_KEYS or --vault-keys); see docs/credentials.md.",
                server=server,
            )
        result: dict[str, Any] = await broker.request(server, method, params, current())
        return result

    async def warm(self) -> None:
        """Connect the unprefixed servers not yet connected (lazily started ones, say), so
        routing by what they offer knows it; a server that cannot start is skipped."""
        plain = [up for n, up in self.upstreams.items() if not self.prefix_for(n) and not up.capabilities()]
        if plain:
            await asyncio.gather(*(up.connect() for up in plain), return_exceptions=True)

    def _offers(self, server: str, feature: str) -> bool:
        up = self.upstreams.get(server)
        return up is not None and feature in up.capabilities()

    # -- listing ----------------------------------------------------------------------------
    async def list(self, what: str, visible: Visible | None = None) -> list[dict[str, Any]]:
        """Every visible server's ``what`` (``resources``, ``resourceTemplates``, ``prompts``),
        renamed into this gateway's namespace, servers in config order."""
        names = list(self.upstreams)
        found = await asyncio.gather(
            *(self.list_server(n, what) for n in names), return_exceptions=True
        )
        out: list[dict[str, Any]] = []
        kind = "prompt" if what == "prompts" else "resource"
        for server, entries in zip(names, found, strict=True):
            if isinstance(entries, BaseException):
                log.warning("upstream %s: cannot list %s: %s", server, what, entries)
                continue
            for entry in entries:
                outer = self._rename_entry(server, what, entry)
                if outer is not None and (
                    visible is None or visible(server, kind, outer.get("name", ""))
                ):
                    out.append(outer)
        return out

    async def list_server(self, server: str, what: str) -> list[dict[str, Any]]:
        """One server's raw ``what`` (upstream names), ``[]`` when it does not offer them."""
        from mcp.shared.exceptions import MCPError  # the mcp extra

        up = self.upstreams[server]
        await up.connect()  # a lazy server starts for its first listing
        if _FEATURE[what] not in up.capabilities():
            return []
        entries: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            try:
                page = await up.request(_METHOD[what], {"cursor": cursor} if cursor else None)
            except MCPError as exc:
                if exc.code == _METHOD_NOT_FOUND:  # declared resources, but no templates (say)
                    return entries
                raise
            batch = page.get(what)
            if isinstance(batch, list):
                entries.extend(e for e in batch if isinstance(e, dict))
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                break
        if what == "resources":
            for e in entries:
                if isinstance(e.get("uri"), str):
                    self._owner[e["uri"]] = server
        elif what == "resourceTemplates":
            self._templates[server] = [
                _template_pattern(e["uriTemplate"])
                for e in entries
                if isinstance(e.get("uriTemplate"), str)
            ]
        return entries

    def _rename_entry(self, server: str, what: str, entry: dict[str, Any]) -> dict[str, Any] | None:
        out = dict(entry)
        name = out.get("name")
        if not isinstance(name, str):
            return None
        out["name"] = self.outer_name(server, name)
        if what == "resources":
            if not isinstance(out.get("uri"), str):
                return None
            out["uri"] = self.outer_uri(server, out["uri"])
        elif what == "resourceTemplates":
            if not isinstance(out.get("uriTemplate"), str):
                return None
            out["uriTemplate"] = self.outer_uri(server, out["uriTemplate"])
        return out

    # -- reading ----------------------------------------------------------------------------
    async def read(self, uri: str) -> tuple[str, dict[str, Any]]:
        """``(server, result)`` of ``resources/read``, the contents' URIs renamed."""
        await self.warm()
        server, inner = self.route_uri(uri)
        result = await self._request(server, "resources/read", {"uri": inner})
        contents = result.get("contents")
        if isinstance(contents, list):
            result = {**result, "contents": [self._rename_content(server, c) for c in contents]}
        return server, result

    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None
    ) -> tuple[str, dict[str, Any]]:
        """``(server, result)`` of ``prompts/get``; embedded resources' URIs renamed."""
        await self.warm()
        server, inner = self.route_name(name)
        params: dict[str, Any] = {"name": inner}
        if arguments:
            params["arguments"] = arguments
        result = await self._request(server, "prompts/get", params)
        messages = result.get("messages")
        if isinstance(messages, list):
            result = {**result, "messages": [self._rename_message(server, m) for m in messages]}
        return server, result

    async def complete(self, params: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """``(server, result)`` of ``completion/complete`` for a prompt or template ref."""
        await self.warm()
        ref = dict(params.get("ref") or {})
        if ref.get("type") == "ref/prompt":
            server, ref["name"] = self.route_name(str(ref.get("name", "")))
        else:
            server, ref["uri"] = self.route_uri(str(ref.get("uri", "")))
        return server, await self._request(server,
            "completion/complete", {**params, "ref": ref}
        )

    async def subscribe(self, uri: str, on: bool) -> str:
        """Subscribe to (or unsubscribe from) ``uri`` at its server; returns the server."""
        server, inner = self.route_uri(uri)
        await self.upstreams[server].request(
            "resources/subscribe" if on else "resources/unsubscribe", {"uri": inner}
        )
        return server

    def _rename_content(self, server: str, content: Any) -> Any:
        if isinstance(content, dict) and isinstance(content.get("uri"), str):
            return {**content, "uri": self.outer_uri(server, content["uri"])}
        return content

    def _rename_message(self, server: str, message: Any) -> Any:
        if not isinstance(message, dict):
            return message
        content = message.get("content")
        if isinstance(content, dict) and content.get("type") == "resource":
            content = {**content, "resource": self._rename_content(server, content.get("resource"))}
        elif isinstance(content, dict) and content.get("type") == "resource_link":
            content = self._rename_content(server, content)
        return {**message, "content": content}


def expand(template: str, values: dict[str, Any]) -> str:
    """A simple RFC 6570 expansion (``{var}``, ``{+var}``, ``{var*}``): each variable by its value."""

    def one(match: re.Match[str]) -> str:
        name = match.group(0)[1:-1].lstrip("+#./;?&").rstrip("*")
        return str(values.get(name, ""))

    return _TEMPLATE_VAR.sub(one, template)


def template_vars(template: str) -> list[str]:
    """The variable names of an RFC 6570 template, in order."""
    out: list[str] = []
    for match in _TEMPLATE_VAR.finditer(template):
        for name in match.group(0)[1:-1].lstrip("+#./;?&").split(","):
            name = name.rstrip("*").partition(":")[0]
            if name and name not in out:
                out.append(name)
    return out


def _template_pattern(template: str) -> re.Pattern[str]:
    """An RFC 6570 template as a pattern its expansions match (variables: any text)."""
    parts = _TEMPLATE_VAR.split(template)
    return re.compile(".*".join(re.escape(p) for p in parts))
