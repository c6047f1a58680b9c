"""Everything ``toolscout serve`` is told, in one validated model.

Each setting is one :class:`ServeConfig` field, one ``serve`` flag (``--field-name``) and one
top-level key of the gateway's config file (``fieldName``, the camelCase the file already
uses for ``maxRevealed``). A flag given on the command line (or through its environment
variable) wins over the file; the file wins over the default. So a new setting is added in
two places, the field and the flag, and tests/server/test_serve_config.py fails when they disagree.

The sources (``mcpServers``, ``declarations``, ...) and their options stay in
:class:`~toolscout.sources.mcp.config.GatewayConfig`; this model only says how to serve them.
Every problem becomes a :class:`~toolscout.errors.ConfigError` naming the flag or the file
key it came from (exit status 2 in the CLI).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from ..access import approval
from ..access.auth import AuthConfig
from ..errors import ConfigError
from ..request import dialect
from ..sessions.deferral import DeferRule
from ..sources.mcp.cache import default_cache_path
from ..sources.mcp.config import GatewayConfig, load_config, parse_config
from .guard import is_loopback
from .stdio import DEFAULT_MAX_MESSAGE_BYTES

__all__ = ["FILE_ONLY", "FLAG_ONLY", "MODELS", "QUERY_ENCODERS", "TRANSPORTS", "ServeConfig", "file_keys"]

Transport = Literal["stdio", "http"]
Model = Literal["default", "multilingual", "multilingual-e5"]
QueryEncoder = Literal["auto", "blockwise", "int8", "model", "static"]
TRANSPORTS: tuple[str, ...] = get_args(Transport)
MODELS: tuple[str, ...] = get_args(Model)
QUERY_ENCODERS: tuple[str, ...] = get_args(QueryEncoder)

FLAG_ONLY = frozenset({"config", "catalog"})
"""Fields with a flag but no file key: ``--config`` names the file itself; ``CATALOG`` (the
argument of ``serve demo``) serves a catalog without any file."""
FILE_ONLY: frozenset[str] = frozenset()
"""Fields with a file key but no flag (none: keep it that way)."""


class _Refused(ValueError):
    """A rule between settings, with the hint that says how to fix it."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


class ServeConfig(BaseModel):
    """How to serve a gateway config: transport, guards, stores, search and session options.

    Defaults are the ``serve`` flags' defaults. Build one with :meth:`load` (a config file
    plus the flags given) or directly (``ServeConfig(config=path, transport="http")``).
    """

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True, validate_default=True
    )

    config: Path | None = None
    catalog: str | None = None
    transport: Transport = "stdio"
    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=1, le=65535)
    token: str | None = Field(default=None, repr=False)
    cache: str | None = None
    no_cache: bool = False
    verbose: bool = False
    embed: bool = False
    model: Model = "default"
    query_encoder: QueryEncoder = "auto"
    allow_origin: list[str] = Field(default_factory=list)
    allow_host: list[str] = Field(default_factory=list)
    max_message_bytes: int = Field(default=DEFAULT_MAX_MESSAGE_BYTES, ge=1)
    use_tool: bool = False
    store: str | None = None
    sessions: str | None = None
    session_ttl: float = Field(default=86400.0, ge=1)
    metrics: bool = False
    approve_kinds: str = "dangerous"
    stubs: bool = False
    no_learn: bool = False
    max_revealed: int = Field(default=64, ge=1, le=1000)
    vault_keys: str | None = None
    oauth_callback_url: str | None = None
    meta_dialect: str = "rfc"
    result_cache: int = Field(default=1024, ge=0)
    list_names_below: int = Field(default=0, ge=0)
    defer: str = "0"
    context_window: int | None = Field(default=None, ge=1)
    auto_pin: int = Field(default=0, ge=0, le=20)
    trust_hints: bool = True
    log_json: bool = False
    code_mode: bool = False
    auth: AuthConfig | None = None
    audit: bool = False
    audit_stdout: bool = False
    audit_arguments: bool = False

    _sources: GatewayConfig | None = PrivateAttr(default=None)

    @field_validator("oauth_callback_url")
    @classmethod
    def _callback(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must be the gateway's public http(s) URL of /oauth/callback")
        return value

    @property
    def callback_url(self) -> str:
        """Where upstreams' authorization servers send users back (``oauthCallbackUrl``,
        else this server's own address)."""
        if self.oauth_callback_url:
            return self.oauth_callback_url
        return self.url.removesuffix("/mcp") + "/oauth/callback"

    @field_validator("approve_kinds")
    @classmethod
    def _kinds(cls, value: str) -> str:
        try:
            approval.parse_kinds(value)
        except ConfigError as exc:
            raise ValueError(exc.message) from None
        return value

    @field_validator("meta_dialect")
    @classmethod
    def _dialect(cls, value: str) -> str:
        try:
            return dialect(value).key
        except ConfigError as exc:
            raise ValueError(f"{exc.message}; {exc.hint}") from None

    @field_validator("defer", mode="before")
    @classmethod
    def _defer(cls, value: Any) -> str:
        try:
            DeferRule.parse(value)
        except ConfigError as exc:
            raise ValueError(f"{exc.message}; {exc.hint or ''}".rstrip("; ")) from None
        return str(value)
    @field_validator("auth", mode="before")
    @classmethod
    def _auth_text(cls, value: Any) -> Any:
        """``--auth`` gives JSON text or the path of a JSON file; the file, an object."""
        if not isinstance(value, str):
            return value
        text = value.strip()
        if not text.startswith("{"):
            try:
                text = Path(text).expanduser().read_text(encoding="utf-8")
            except OSError as exc:
                raise ValueError(f"cannot read {value!r}: {exc.strerror or exc}") from None
        try:
            return json.loads(text)
        except ValueError as exc:
            raise ValueError(f"not valid JSON: {exc}") from None

    @model_validator(mode="after")
    def _rules(self, info: ValidationInfo) -> ServeConfig:
        """The rules between settings, named as the user gave them (flag or file key)."""
        if not (info.context or {}).get("rules", True):
            return self
        name = _namer(info.context)
        http = f"{name('transport')} http"
        if self.metrics and self.transport != "http":
            raise _Refused(f"{name('metrics')} needs {http} (it is served at /metrics).")
        if self.sessions and self.transport != "http":
            raise _Refused(f"{name('sessions')} needs {http} (a stdio session lives and dies with its process).")
        if self.auth is not None and self.transport != "http":
            raise _Refused(f"{name('auth')} needs {http} (bearer tokens come with HTTP requests).")
        if self.transport == "http" and not is_loopback(self.host) and not self.token and self.auth is None:
            raise _Refused(
                f"binding {self.host} (not loopback) needs a bearer token.",
                "Pass --token or set TOOLSCOUT_TOKEN (or 'token' in the config file); clients then send "
                "'Authorization: Bearer <token>'.",
            )
        return self

    # -- building one --------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | Path, flags: Mapping[str, Any] | None = None, *, rules: bool = True) -> ServeConfig:
        """The settings in the config file at ``path``, overridden by ``flags`` (field name ->
        value, only the flags the user gave). The file's sources are read once, kept for
        :attr:`sources`. ``rules=False`` skips the rules between settings, which only serving
        needs (``toolscout servers`` reads the same file to find the store)."""
        sources = load_config(path)
        found = sources.model_dump(by_alias=True, exclude_unset=True)
        keys = file_keys()
        from_file = {field: found[key] for field, key in keys.items() if key in found}
        config = cls.merge(from_file, {**(flags or {}), "config": Path(path)}, source=str(path), rules=rules)
        config._sources = sources
        return config

    @classmethod
    def merge(
        cls, from_file: Mapping[str, Any], flags: Mapping[str, Any], *, source: str = "config", rules: bool = True
    ) -> ServeConfig:
        """Validate file values (by field name) under ``flags`` (which win); a problem is a
        :class:`ConfigError` naming the flag or the file key."""
        data = {**from_file, **flags}
        context = {"file": source, "from_file": frozenset(from_file) - set(flags), "rules": rules}
        try:
            return cls.model_validate(data, context=context)
        except ValidationError as exc:
            raise _config_error(exc, context) from None

    @classmethod
    def for_sources(cls, sources: GatewayConfig, **settings: Any) -> ServeConfig:
        """Settings for sources already in memory (a parsed config, a test's)."""
        config = cls.merge({}, {"config": sources.path, "max_revealed": sources.max_revealed, **settings})
        config._sources = sources
        return config

    # -- what the builders read -----------------------------------------------------------
    @property
    def sources(self) -> GatewayConfig:
        """The gateway's sources: as loaded with these settings, else read from :attr:`config`."""
        if self._sources is None:
            if self.config is None and self.catalog is None:
                raise ConfigError("no config file to serve", hint="Pass --config servers.json, or a catalog: serve demo.")
            self._sources = (
                load_config(self.config) if self.config is not None else parse_config({"mcpServers": {}}, source=str(self.catalog))
            )
        return self._sources

    @property
    def location(self) -> str:
        """Where tools and tool-list caches live: ``store``, else ``cache``, else the default
        cache file of this config."""
        return self.store or self.cache or str(default_cache_path(self.config))

    @property
    def embeddings(self) -> str | None:
        """What :class:`~toolscout.gateway.Gateway` takes as ``embeddings``: a model name
        (``--model`` other than default implies ``--embed``), ``"auto"``, or ``None``."""
        if self.model != "default":
            return self.model
        return "auto" if self.embed else None

    @property
    def resource(self) -> str:
        """This gateway's OAuth resource URL (the audience its tokens carry): ``auth.resource``,
        else the MCP URL."""
        return (self.auth.resource if self.auth is not None else None) or self.url

    @property
    def bind(self) -> str:
        """The address to listen on (``[::1]`` -> ``::1``)."""
        host = self.host
        return host[1:-1] if host.startswith("[") and host.endswith("]") else host

    @property
    def url(self) -> str:
        """The MCP endpoint's URL, as a client connects to it."""
        bind = self.bind
        return f"http://{f'[{bind}]' if ':' in bind else bind}:{self.port}/mcp"


def file_keys() -> dict[str, str]:
    """Field name -> its key in the config file (every field but :data:`FLAG_ONLY`)."""
    return {name: field.alias or name for name, field in ServeConfig.model_fields.items() if name not in FLAG_ONLY}


def _namer(context: Any) -> Any:
    """How to name a setting in a message: ``'key' in <file>`` when it came from the config
    file, else its flag."""
    ctx = context or {}
    from_file, source = ctx.get("from_file", frozenset()), ctx.get("file", "config")

    def name(field: str) -> str:
        if field in from_file:
            return f"'{to_camel(field)}' in {source}"
        return "--" + field.replace("_", "-")

    return name


def _config_error(exc: ValidationError, context: Mapping[str, Any]) -> ConfigError:
    """The first problem as a ConfigError: ``--port: ...`` or ``servers.json: key 'port': ...``."""
    first = exc.errors()[0]
    cause = (first.get("ctx") or {}).get("error")
    if not first["loc"]:  # a rule between settings
        text = str(cause) if cause is not None else first["msg"]
        return ConfigError(text, hint=getattr(cause, "hint", None))
    field = str(first["loc"][0])
    message = first["msg"].removeprefix("Value error, ")
    if field in context["from_file"]:
        where = f"{context['file']}: key '{to_camel(field)}'"
    else:
        where = "--" + field.replace("_", "-") if field in ServeConfig.model_fields else f"'{field}'"
    detail = ".".join(str(p) for p in first["loc"][1:])
    return ConfigError(f"{where}{f' [{detail}]' if detail else ''}: {message}", field=field)
