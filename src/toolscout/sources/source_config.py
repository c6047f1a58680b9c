"""Config entries for the gateway's non-MCP sources: declaration files, OpenAPI specs and
Python modules, next to ``mcpServers`` in the same file.

Each takes the options an MCP server takes (``prefix``, ``enabled``, ``defer``,
``alwaysLoad``, ``allow``/``deny``, ``timeout``, ``poisoning``), so a team moves a tool
between kinds of source without relearning the file. Unknown keys are refused (no other
client reads these entries, so an unknown key is a typo). Only the shape is checked here;
files, modules and environment variables are checked by
:meth:`toolscout.sources.configured.ConfiguredSources.load` before anything starts.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..model import DeferPolicy, PermissionKind

__all__ = [
    "AgentsSource",
    "DeclarationSource",
    "OpenAPISource",
    "PythonSource",
    "SkillsSource",
    "SourceEntry",
    "SourceOptions",
    "ToolOverride",
    "expand_env",
]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_MODULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_ENV = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SECRET_MASK = "***"
_TOOL_NAME = re.compile(r"^[A-Za-z0-9_.\-/]{1,128}$")
Approval = Literal["always", "never"]


class ToolOverride(BaseModel):
    """What the operator changes about one tool of a source (``overrides`` in the source's
    entry, keyed by the source's own name for the tool; docs/overrides.md). The model sees
    the changed tool; calls go to the source under its own name, with its own arguments."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    name: str | None = None
    description: str | None = None
    hide: list[str] = Field(default_factory=list)
    pin: dict[str, Any] = Field(default_factory=dict)
    tags: list[str] = Field(default_factory=list)
    category: str | None = None
    permission: PermissionKind | None = None
    approval: Approval | None = None

    @field_validator("name")
    @classmethod
    def _tool_name(cls, value: str | None) -> str | None:
        if value is not None and not _TOOL_NAME.match(value):
            raise ValueError("a tool name: letters, digits, '_', '-', '.' or '/', at most 128 characters")
        return value

    @model_validator(mode="after")
    def _hidden_not_pinned(self) -> ToolOverride:
        both = sorted(set(self.hide) & set(self.pin))
        if both:
            raise ValueError(f"{both[0]!r} is both hidden and pinned; a pinned parameter is hidden already")
        return self


class SourceOptions(BaseModel):
    """What every source takes, with the meaning it has for an MCP server."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    kind: ClassVar[str] = "source"

    prefix: str | None = None
    enabled: bool = True
    defer: DeferPolicy = DeferPolicy.AUTOMATIC
    always_load: list[str] = Field(default_factory=list, alias="alwaysLoad")
    allow: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)
    timeout: float | None = Field(default=60.0, gt=0)
    poisoning: Literal["warn", "quarantine", "off"] | None = None
    poisoning_allow: list[str] = Field(default_factory=list, alias="poisoningAllow")
    # What the operator says about the source's tools, over what the tools say of themselves
    # (docs/overrides.md): a kind for every tool, approval always/never, per-tool overrides.
    permission: PermissionKind | None = None
    approval: Approval | None = None
    overrides: dict[str, ToolOverride] = Field(default_factory=dict)

    @field_validator("prefix")
    @classmethod
    def _prefix_name(cls, value: str | None) -> str | None:
        if value is not None and value != "" and not _NAME.match(value):
            raise ValueError("letters, digits, '_', '-' or '.', at most 64 characters")
        return value

    def keeps(self, tool_name: str) -> bool:
        """Whether the allow/deny globs let a tool (its own name, before the prefix) through."""
        if self.allow and not any(fnmatch.fnmatchcase(tool_name, g) for g in self.allow):
            return False
        return not any(fnmatch.fnmatchcase(tool_name, g) for g in self.deny)

    def always(self, tool_name: str) -> bool:
        return any(fnmatch.fnmatchcase(tool_name, g) for g in self.always_load)

    @property
    def transport(self) -> str:
        """What ``toolscout servers`` shows in its transport column: the kind of source."""
        return self.kind

    def location(self) -> str:
        """Where the tools come from, safe to show (no credentials)."""
        return ""

    def secrets(self) -> list[str]:
        return []

    def redact(self, text: str) -> str:
        """``text`` with every configured secret of this source replaced by ``***``."""
        for secret in self.secrets():
            text = text.replace(secret, _SECRET_MASK)
        return text


class DeclarationSource(SourceOptions):
    """A declaration file (``.yaml``/``.yml``, ``.json``, ``.jsonl``; see docs/sources.md)."""

    kind: ClassVar[str] = "declarations"

    path: str = Field(min_length=1)
    lang: str | None = None
    skip_invalid: bool = Field(default=False, alias="skipInvalid")
    watch: bool = True
    # Where a declaration's ``handler: package.module:function`` is imported from, besides
    # the declaration file's own folder (docs/sources.md#what-runs-a-declared-tool).
    python_path: list[str] = Field(default_factory=list, alias="pythonPath")

    @field_validator("python_path", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    def location(self) -> str:
        return self.path


class OpenAPISource(SourceOptions):
    """An OpenAPI 3 document (a file, or an ``http(s)://`` URL fetched at start), each
    operation a tool called over HTTP at ``baseUrl``."""

    kind: ClassVar[str] = "openapi"

    spec: str = Field(min_length=1)
    base_url: str | None = Field(default=None, alias="baseUrl")
    headers: dict[str, str] = Field(default_factory=dict)
    include: list[str] = Field(default_factory=list)
    exclude: list[str] = Field(default_factory=list)
    watch: bool = True

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value

    @property
    def remote(self) -> bool:
        return self.spec.startswith(("http://", "https://"))

    def location(self) -> str:
        if not self.remote:
            return self.spec
        scheme, _, rest = self.spec.partition("://")
        host, slash, path = rest.partition("/")
        return f"{scheme}://{host.rpartition('@')[2]}{slash}{path.split('?', 1)[0]}"

    def resolved_headers(self, environ: dict[str, str]) -> dict[str, str]:
        """``headers`` with ``${VAR}`` replaced from ``environ``; ``KeyError(field)`` names
        the first header whose variable is not set."""
        return {key: expand_env(value, environ, f"headers.{key}") for key, value in self.headers.items()}

    def secrets(self, environ: dict[str, str] | None = None) -> list[str]:
        """Header values (as configured and as expanded), their tokens, and the spec URL's
        userinfo and query values, longest first."""
        values = list(self.headers.values())
        if environ is not None:
            for value in self.headers.values():
                values.append(_ENV.sub(lambda m: environ.get(m.group(1), ""), value))
        found = list(values)
        for value in values:
            found.extend(part for part in value.split() if len(part) >= 8)  # "Bearer <token>"
        for url in (self.spec, self.base_url or ""):
            if url.startswith(("http://", "https://")):
                userinfo = url.partition("://")[2].partition("/")[0].rpartition("@")[0]
                found.extend([userinfo, *userinfo.split(":")])
                found.extend(p.partition("=")[2] for p in url.partition("?")[2].split("&"))
        return sorted({v for v in found if len(v) >= 4 and "${" not in v}, key=len, reverse=True)

    def selects(self, name: str, method: str, path: str, tags: list[str]) -> bool:
        """Whether ``include``/``exclude`` keep an operation: ``tag:<glob>``, ``path:<glob>``
        (on ``/path`` or ``METHOD /path``), else a glob on the operationId (the tool name)."""

        def hit(pattern: str) -> bool:
            if pattern.startswith("tag:"):
                return any(fnmatch.fnmatchcase(t, pattern[4:]) for t in tags)
            if pattern.startswith("path:"):
                glob = pattern[5:]
                return fnmatch.fnmatchcase(path, glob) or fnmatch.fnmatchcase(f"{method} {path}", glob)
            return fnmatch.fnmatchcase(name, pattern)

        if self.include and not any(hit(p) for p in self.include):
            return False
        return not any(hit(p) for p in self.exclude)


class PythonSource(SourceOptions):
    """A Python module's tools: ``package.module:attribute`` naming a :class:`Catalog`, or a
    list of functions (or of ``(Tool, handler)`` pairs)."""

    kind: ClassVar[str] = "python"

    module: str
    python_path: list[str] = Field(default_factory=list, alias="pythonPath")

    @field_validator("module")
    @classmethod
    def _module_spec(cls, value: str) -> str:
        if not _MODULE.match(value):
            raise ValueError("write 'package.module:attribute' (the attribute a Catalog or a list of functions)")
        return value

    @field_validator("python_path", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    def location(self) -> str:
        return self.module


class SkillsSource(SourceOptions):
    """A folder of Agent Skills (``SKILL.md`` folders at any depth; docs/sources.md): entries
    of kind ``skill``, whose call returns the instructions. Watching sees skills added or
    removed (the folder changes); a body is read when called, so edits to it need no reload."""

    kind: ClassVar[str] = "skills"

    path: str = Field(min_length=1)
    skip_invalid: bool = Field(default=False, alias="skipInvalid")
    watch: bool = True

    def location(self) -> str:
        return self.path


class AgentsSource(SkillsSource):
    """A2A agent cards: one ``.json`` card (or a list of them), or a folder of cards; entries
    of kind ``agent``, whose call returns the card's essentials."""

    kind: ClassVar[str] = "agents"


SourceEntry = DeclarationSource | OpenAPISource | PythonSource | SkillsSource


def expand_env(value: str, environ: dict[str, str], field: str) -> str:
    """``value`` with each ``${VAR}`` from ``environ``; ``KeyError(field, var)`` if unset."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            raise KeyError(field, name)
        return environ[name]

    return _ENV.sub(one, value)


def unset_variable(variable: str) -> str:
    """What to say of a ``${VAR}`` the environment lacks: its name, and how to set it where
    the gateway starts (a shell, or the MCP client's entry that starts the gateway)."""
    return (
        f"environment variable {variable} is not set; set it where the gateway starts "
        f"(export {variable}=... in the shell, or \"env\": {{\"{variable}\": \"...\"}} in the MCP client's "
        "entry for toolscout)"
    )
