"""The ``mcpServers`` configuration: the JSON shape MCP clients already use, plus toolscout options.

A user's existing ``{"mcpServers": {...}}`` file works unchanged; per server, toolscout adds
``prefix``, ``enabled``, ``defer``, ``always_load``, ``allow``/``deny`` (globs on the
upstream's own tool names) and ``timeout``. Unknown keys are kept (other clients' options
round-trip). Every problem is reported before anything starts, naming the server and field.

Next to ``mcpServers``, ``declarations``, ``openapi``, ``python``, ``skills`` and ``agents`` name the gateway's other
sources (:mod:`toolscout.sources.source_config`), with the same per-source options.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from ...errors import ConfigError
from ...model import PermissionKind
from ..source_config import (
    AgentsSource,
    Approval,
    DeclarationSource,
    OpenAPISource,
    PythonSource,
    SkillsSource,
    SourceEntry,
    SourceOptions,
    ToolOverride,
)
from .user_env import check_operator_names, check_token_env

__all__ = ["CREDENTIAL_MODES", "GatewayConfig", "ServerConfig", "UpstreamOAuth", "load_config", "parse_config"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_SECRET_MASK = "***"
CredentialMode = Literal["gateway", "per-user", "token-exchange"]
CREDENTIAL_MODES: tuple[str, ...] = ("gateway", "per-user", "token-exchange")


class UpstreamOAuth(BaseModel):
    """The gateway as an OAuth client of one upstream (docs/credentials.md): where it sends
    users to consent (``authorizationUrl``), where it trades codes, refresh tokens and, in
    ``token-exchange`` mode, callers' tokens (``tokenUrl``), and as whom (``clientId``,
    ``clientSecret``)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    token_url: str = Field(alias="tokenUrl")
    client_id: str = Field(alias="clientId", min_length=1)
    client_secret: str | None = Field(default=None, alias="clientSecret", repr=False)
    authorization_url: str | None = Field(default=None, alias="authorizationUrl")
    scopes: list[str] = Field(default_factory=list)
    resource: str | None = None
    audience: str | None = None

    @field_validator("token_url", "authorization_url")
    @classmethod
    def _http(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value


class ServerConfig(SourceOptions):
    """One upstream MCP server: stdio (``command``) or streamable HTTP (``url``), with the
    options every source takes (:class:`~toolscout.sources.source_config.SourceOptions`)."""

    # Unknown keys are kept: the same file feeds other MCP clients, which have their own.
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    kind: ClassVar[str] = "mcp"

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    type: Literal["stdio", "http", "streamable-http", "streamableHttp"] | None = None
    connect_timeout: float = Field(default=30.0, gt=0, alias="connectTimeout")
    # What the server is for, in the operator's words: search evidence for its tools
    # (search/servers.py). Without it, the server's own
    # ``serverInfo`` description or title is used once it has connected.
    description: str | None = Field(default=None, max_length=2000, exclude=True)
    # "auto": over HTTP, also a stateless 2026-07-28 lane when the server offers one
    # (sources/mcp/negotiation.py); "legacy": the 2025-11-25 session only.
    protocol: Literal["auto", "legacy"] = Field(default="auto", exclude=True)
    # Tool-poisoning policy (docs/security.md); excluded from the dump, so from the cache key:
    # the cache keeps quarantined entries, and a policy change needs no refetch.
    poisoning: Literal["warn", "quarantine", "off"] | None = Field(default=None, exclude=True)
    poisoning_allow: list[str] = Field(default_factory=list, alias="poisoningAllow", exclude=True)
    # Whose credential a call carries (docs/credentials.md); excluded from the cache key like
    # the poisoning policy: none of it changes what the server lists.
    credentials: CredentialMode = Field(default="gateway", exclude=True)
    oauth: UpstreamOAuth | None = Field(default=None, exclude=True)
    token_header: str = Field(default="Authorization", alias="tokenHeader", min_length=1, exclude=True)
    token_env: str | None = Field(default=None, alias="tokenEnv", min_length=1, exclude=True)
    # The environment names a user may set for their own process (stdio, per-user; see
    # user_env.py): anything else they send is refused, the operator's ``env`` always wins.
    user_env: list[str] = Field(default_factory=list, alias="userEnv", max_length=64, exclude=True)
    max_user_connections: int = Field(default=16, ge=1, le=10_000, alias="maxUserConnections", exclude=True)
    user_idle_timeout: float = Field(default=300.0, gt=0, alias="userIdleTimeout", exclude=True)
    # Applied to each listing, never part of it: out of the cache key (docs/overrides.md).
    permission: PermissionKind | None = Field(default=None, exclude=True)
    approval: Approval | None = Field(default=None, exclude=True)
    overrides: dict[str, ToolOverride] = Field(default_factory=dict, exclude=True)
    # What the server may ask the calling client mid-call (docs/transparent-gateway.md); not
    # in the cache key: the tool list does not depend on it.
    sampling: bool = Field(default=True, exclude=True)
    elicitation: bool = Field(default=True, exclude=True)

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value

    @model_validator(mode="after")
    def _one_transport(self) -> ServerConfig:
        if bool(self.command) == bool(self.url):
            raise ValueError("give exactly one of 'command' (stdio) or 'url' (streamable HTTP)")
        if self.type == "stdio" and not self.command:
            raise ValueError("type 'stdio' needs 'command'")
        if self.credentials == "token-exchange" and self.oauth is None:
            raise ValueError("credentials 'token-exchange' needs 'oauth' with the 'tokenUrl' to exchange callers' tokens at")
        check_token_env(self.token_env)
        if self.user_env:
            if not self.command:
                raise ValueError("'userEnv' is for stdio servers ('command'): an HTTP server gets no environment")
            check_operator_names(self.user_env, env=self.env, token_env=self.token_env)
        if self.url and _userinfo(self.url) and any(k.lower() == "authorization" for k in self.headers):
            # The HTTP client would silently replace the header with Basic auth from the URL.
            raise ValueError(
                "'url' carries credentials (user:password@) and 'headers' sets Authorization: "
                "the URL's Basic auth would replace that header. Keep one: remove the "
                "user:password@ part from 'url', or remove the Authorization header"
            )
        return self

    def relays(self, capability: str) -> bool:
        """Whether this server's ``sampling`` / ``elicitation`` requests reach the caller."""
        return bool(getattr(self, capability, False))

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "stdio" if self.command else "http"

    def config_hash(self) -> str:
        """Changes when anything that could change the tool list changes (a cache key).

        Secret values go in only as a digest, so the hash itself reveals nothing.
        """
        data = self.model_dump(mode="json", by_alias=False)
        for key in ("timeout", "connect_timeout", "enabled"):
            data.pop(key, None)
        text = json.dumps(data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def secrets(self) -> list[str]:
        """Every configured value that may be a credential (env and header values, URL
        userinfo and query), longest first, for :meth:`redact`."""
        found = [*self.env.values(), *self.headers.values()]
        if self.oauth is not None and self.oauth.client_secret:
            found.append(self.oauth.client_secret)
        for value in self.headers.values():
            found.extend(part for part in value.split() if len(part) >= 8)  # "Bearer <tok>"
        if self.url:
            rest = self.url.partition("://")[2]
            userinfo = rest.partition("/")[0].rpartition("@")[0]
            found.extend([userinfo, *userinfo.split(":")])
            query = self.url.partition("?")[2]
            found.extend(p.partition("=")[2] for p in query.split("&"))
        return sorted({v for v in found if len(v) >= 4}, key=len, reverse=True)

    def redact(self, text: str) -> str:
        """``text`` with every secret of this server replaced by ``***`` (for logs, status)."""
        for secret in self.secrets():
            text = text.replace(secret, _SECRET_MASK)
        return text

    def public(self) -> dict[str, Any]:
        """A description safe for logs and the capabilities resource (no secret values)."""
        out: dict[str, Any] = {"transport": self.transport, "enabled": self.enabled}
        if self.command:
            out["command"] = os.path.basename(self.command)
        if self.url:
            out["url"] = _strip_url_secrets(self.url)
        if self.env:
            out["env"] = dict.fromkeys(sorted(self.env), _SECRET_MASK)
        if self.headers:
            out["headers"] = dict.fromkeys(sorted(self.headers), _SECRET_MASK)
        if self.credentials != "gateway":
            out["credentials"] = self.credentials
        return out


class GatewayConfig(BaseModel):
    """The whole file: ``mcpServers`` plus optional gateway-wide ``toolscout`` settings."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    servers: dict[str, ServerConfig] = Field(default_factory=dict, alias="mcpServers")
    declarations: dict[str, DeclarationSource] = Field(default_factory=dict)
    openapi: dict[str, OpenAPISource] = Field(default_factory=dict)
    python: dict[str, PythonSource] = Field(default_factory=dict)
    skills: dict[str, SkillsSource] = Field(default_factory=dict)
    agents: dict[str, AgentsSource] = Field(default_factory=dict)
    watch_interval: float = Field(default=2.0, ge=0, le=3600, alias="watchInterval")
    max_revealed: int = Field(default=64, ge=1, le=1000, alias="maxRevealed")
    cache: str | None = None
    poisoning: Literal["warn", "quarantine", "off"] = "warn"  # servers' default (docs/security.md)
    # Screen tool results too, each under its server's ``poisoning`` policy (docs/security.md):
    screen_results: bool = Field(default=False, alias="screenResults")
    poisoning_classifier: str | None = Field(default=None, alias="poisoningClassifier")  # an operator's guard URL
    _path: Path | None = PrivateAttr(default=None)  # the file read: relative source paths start there

    @field_validator("servers", "declarations", "openapi", "python", "skills", "agents")
    @classmethod
    def _names(cls, value: dict[str, Any]) -> dict[str, Any]:
        for name in value:
            if not _NAME.match(name):
                raise ValueError(
                    f"name {name!r}: use letters, digits, '_', '-' or '.' (at most 64)"
                )
        return value

    @model_validator(mode="after")
    def _unique_names(self) -> GatewayConfig:
        """One name, one source: it keys status rows, the catalog's source and the prefix."""
        seen: dict[str, str] = {name: "mcpServers" for name in self.servers}
        for kind in ("declarations", "openapi", "python", "skills", "agents"):
            for name in getattr(self, kind):
                if name in seen:
                    raise ValueError(f"source name {name!r} is used in both '{seen[name]}' and '{kind}'")
                seen[name] = kind
        return self

    def enabled(self) -> dict[str, ServerConfig]:
        return {n: s for n, s in self.servers.items() if s.enabled}

    def sources(self) -> dict[str, SourceEntry]:
        """Every declaration file, OpenAPI spec and Python module, by name."""
        return {**self.declarations, **self.openapi, **self.python, **self.skills, **self.agents}

    @property
    def path(self) -> Path | None:
        """The file this config was read from (:func:`load_config`), if any."""
        return self._path

    @property
    def base_dir(self) -> Path:
        """Where relative paths in the config start: the config file's folder, else the
        working directory."""
        return self._path.parent if self._path is not None else Path.cwd()

    def prefix_for(self, name: str) -> str:
        """The namespace of a source's tools: its ``prefix``, else its own name."""
        entry = self.servers.get(name) or self.sources()[name]
        prefix = entry.prefix
        return name if prefix is None else prefix


def _userinfo(url: str) -> str:
    """The ``user:password`` part of a URL, or ``""``."""
    return url.partition("://")[2].partition("/")[0].rpartition("@")[0]


def _strip_url_secrets(url: str) -> str:
    """Drop userinfo and the query string: both often carry keys."""
    scheme, _, rest = url.partition("://")
    host, slash, path = rest.partition("/")
    host = host.rpartition("@")[2]
    return f"{scheme}://{host}{slash}{path.split('?', 1)[0]}"


def parse_config(data: Any, *, source: str = "config") -> GatewayConfig:
    """Validate a config mapping; raise :class:`ConfigError` naming the server and field."""
    if isinstance(data, dict) and "mcpServers" not in data and "servers" in data:
        data = {**{k: v for k, v in data.items() if k != "servers"}, "mcpServers": data["servers"]}  # caller's dict untouched
    try:
        config = GatewayConfig.model_validate(data)
    except RecursionError:
        raise ConfigError(f"{source}: the configuration nests too deeply") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = [str(p) for p in first["loc"]]
        kind = loc[0] if len(loc) > 1 and loc[0] in _SOURCE_KEYS else None
        server = loc[1] if kind else None
        field = ".".join(loc[2:]) if server else ".".join(loc)
        where = f"server '{server}'" if kind in ("mcpServers", "servers") else f"source '{server}' ({kind})"
        where = where if server else "top level"
        message = f"{source}: {where}, field '{field or '(entry)'}': {first['msg']}"
        raise ConfigError(
            message,
            hint=_SOURCE_KEYS.get(kind or "mcpServers", ""),
            server=server,
            field=field,
        ) from None
    _check_storable(config, source)
    return config


_SOURCE_KEYS = {
    "mcpServers": "Fix that entry; each server needs 'command' (stdio) or 'url' (HTTP).",
    "servers": "Fix that entry; each server needs 'command' (stdio) or 'url' (HTTP).",
    "declarations": "Fix that entry; a declaration source needs 'path' (docs/mcp-gateway.md).",
    "openapi": "Fix that entry; an OpenAPI source needs 'spec', a file or an http(s) URL (docs/mcp-gateway.md).",
    "python": "Fix that entry; a Python source needs 'module': 'package.module:attribute' (docs/mcp-gateway.md).",
    "skills": "Fix that entry; a skills source needs 'path', a folder of SKILL.md folders (docs/sources.md).",
    "agents": "Fix that entry; an agents source needs 'path', an agent card or a folder of them (docs/sources.md).",
}


def _check_storable(config: GatewayConfig, source: str) -> None:
    """Refuse, now, values that would fail later: when the cache key is hashed, or when
    an argument, env value or header is encoded (too deep, cyclic, a lone surrogate)."""
    for name, server in [*config.servers.items(), *config.sources().items(), (None, config)]:
        try:
            json.dumps(server.model_dump(mode="json"), ensure_ascii=False).encode("utf-8")
            if isinstance(server, ServerConfig):  # its overrides stay out of its dump (the cache key)
                json.dumps({k: v.model_dump(mode="json") for k, v in server.overrides.items()}, ensure_ascii=False).encode("utf-8")
        except (ValueError, TypeError, RecursionError) as exc:
            where = f"server '{name}'" if name is not None else "top level"
            raise ConfigError(
                f"{source}: {where}: a value is not plain JSON text ({type(exc).__name__}: {str(exc)[:120]})",
                hint="Remove deeply nested or self-referencing values and unpaired surrogates (\\udXXX escapes).",
                server=name,
            ) from None


def load_config(path: str | os.PathLike[str]) -> GatewayConfig:
    """Read and validate a ``servers.json`` file (the ``mcpServers`` shape)."""
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read {p}: {exc.strerror}", path=str(p)) from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{p}:{exc.lineno}: not valid JSON: {exc.msg}", path=str(p)) from None
    except ValueError as exc:  # not UTF-8, or an integer of more than 4300 digits
        raise ConfigError(f"{p}: not valid JSON: {exc}", path=str(p)) from None
    except RecursionError:
        raise ConfigError(f"{p}: not valid JSON: it nests too deeply", path=str(p)) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{p}: the top level must be an object with 'mcpServers'", path=str(p))
    config = parse_config(data, source=str(p))
    config._path = p.resolve()
    for server in config.servers.values():  # a relative cwd starts where the config's other paths do
        if server.cwd and not Path(server.cwd).expanduser().is_absolute():
            server.cwd = str(config.base_dir / server.cwd)
    return config
