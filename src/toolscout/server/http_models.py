"""The HTTP API's request and response bodies, as pydantic models.

Apart from the routes (:mod:`.http_api`) because they are the API's contract: FastAPI builds
``/v1/openapi.json`` from them, and clients and tests read them without the routing.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from .. import formats
from ..request import DEFAULT_LIMIT, MAX_LIMIT, SEARCH_TYPES

__all__ = [
    "ERRORS",
    "CallBody",
    "CallResponse",
    "CatalogStoreState",
    "ErrorModel",
    "ErrorResponse",
    "FindBody",
    "FindResponse",
    "HealthResponse",
    "ReadyResponse",
    "SearchMetadata",
    "ServerStatus",
    "ServersResponse",
    "SessionStoreState",
    "ToolReferenceModel",
]


# -- models: requests -----------------------------------------------------------------
_SESSION = (
    "Your conversation's id: learning credits a call to the find before it in the same conversation. "
    "Conversations of one caller count as one vote however many there are."
)


class FindBody(BaseModel):
    """``find_tools`` arguments plus the format to render the found tools in."""

    model_config = ConfigDict(
        extra="allow",  # seed 001's names (max_results, ...) reach the one parser, which notes them
        json_schema_extra={"examples": [{"query": "send an email", "limit": 5, "format": "openai"}]},
    )
    query: StrictStr = Field(description="What the caller wants to do, or a tool name; 'select:a,b' loads by name.")
    limit: StrictInt | None = Field(
        None, description=f"Tools to return, 1-{MAX_LIMIT} (default {DEFAULT_LIMIT}); out of range is clamped."
    )
    search_type: StrictStr | None = Field(None, description=f"One of {', '.join(SEARCH_TYPES)} (default auto).")
    category: StrictStr | None = Field(None, description="Only search this category.")
    exclude: list[StrictStr] | None = Field(None, description="Tool names never to return.")
    kinds: list[StrictStr] | StrictStr | None = Field(
        None, description="Kinds of entry to rank: tool, skill, agent, or all (default: the gateway's)."
    )
    format: StrictStr = Field(
        "generic", description="Tool format of `tools`: " + ", ".join(formats.FORMATS) + "."
    )
    session: StrictStr | None = Field(None, description=_SESSION, max_length=128)


class CallBody(BaseModel):
    """``call_tool`` arguments: a tool name and its arguments."""

    model_config = ConfigDict(
        extra="forbid",  # a misspelt "args" must not run the tool with no arguments
        json_schema_extra={"examples": [{"name": "web_add", "arguments": {"a": 1, "b": 2}}]},
    )
    name: StrictStr = Field(description="The tool's name as find returned it (other spellings resolve too).")
    arguments: dict[str, Any] | None = Field(None, description="Arguments matching the tool's input schema.")
    approved: StrictBool | None = Field(
        None,
        description=(
            "The caller's answer for a tool whose permission kind needs approval: it asked its user about "
            "this exact call (as an MCP client answers elicitation). Without it such a call answers "
            "approval_required and nothing runs; false answers approval_denied."
        ),
    )
    session: StrictStr | None = Field(None, description=_SESSION, max_length=128)


# -- models: responses (documentation and tests; bodies are the library's own dicts) -----
class ErrorModel(BaseModel):
    code: str = Field(description="Stable error code, e.g. unknown_tool, invalid_arguments, no_match.")
    message: str
    hint: str | None = Field(None, description="What to do next.")
    details: dict[str, Any] | None = Field(None, description="suggestions, categories, errors, ...")


class ErrorResponse(BaseModel):
    error: ErrorModel


class ToolReferenceModel(BaseModel):
    model_config = ConfigDict(extra="allow")  # fields a later version adds pass through

    tool_name: str
    relevance_score: float
    summary: str
    version: str
    already_loaded: bool | None = None
    findings: list[dict[str, str]] | None = Field(
        None, description="Tool-poisoning findings (code, severity, field, evidence); see docs/security.md."
    )


class SearchMetadata(BaseModel):
    search_type: str
    query: str
    execution_time_ms: float
    warnings: list[str] | None = None
    loading: dict[str, str] | None = Field(None, description="Sources still loading (cold start), with why.")


class FindResponse(BaseModel):
    """What ``find_tools`` returns: rendered schemas plus references, as in the library."""

    tools: list[dict[str, Any]] = Field(description="Schemas of the found tools, in the requested format.")
    tool_references: list[ToolReferenceModel]
    total_matches: int
    search_metadata: SearchMetadata
    error: ErrorModel | None = None


class CallResponse(BaseModel):
    """What ``call_tool`` returns: MCP content blocks, structured output, or an error."""

    tool: str
    ok: bool
    content: list[dict[str, Any]]
    structured: Any = None
    error: ErrorModel | None = None


class HealthResponse(BaseModel):
    status: Literal["ok"]


class CatalogStoreState(BaseModel):
    """The shared catalog in PostgreSQL, as this replica follows it."""

    kind: Literal["postgresql"]
    where: str = Field(description="host:port/dbname (never credentials).")
    reachable: bool = Field(description="The replica's LISTEN connection to the database is up.")
    version: int = Field(description="The newest catalog version this replica holds.")
    sources: dict[str, int] = Field(description="The version of each shared source held.")
    last_error: str | None = Field(description="Why the connection last dropped.")


class SessionStoreState(BaseModel):
    """The session store in Redis."""

    kind: Literal["redis"]
    where: str = Field(description="host:port/db (never credentials).")
    reachable: bool = Field(description="Redis answered a PING just now.")


class ReadyResponse(BaseModel):
    status: Literal["ready", "starting", "degraded", "unavailable"] = Field(
        description="ready: every source listed; degraded: serving, but some source failed (see failed); "
        "starting: some source is still on its first listing; unavailable: a shared store is unreachable."
    )
    tools: int = Field(description="Tools in the catalog.")
    pending: dict[str, str] = Field(default_factory=dict, description="Sources still on their first listing.")
    failed: dict[str, str] = Field(
        default_factory=dict,
        description="Sources whose first listing failed, each with its reason and next retry (retried in the background).",
    )
    store: CatalogStoreState | None = Field(
        default=None, description="With --store postgresql://...: the shared catalog's state."
    )
    sessions: SessionStoreState | None = Field(
        default=None, description="With --sessions redis://...: the session store's state."
    )


class ServerStatus(BaseModel):
    model_config = ConfigDict(extra="allow")
    state: str
    transport: str | None = None
    tools: int = 0
    last_error: str | None = None


class ServersResponse(BaseModel):
    servers: dict[str, ServerStatus]


ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorResponse, "description": "The body is not valid JSON."},
    413: {"model": ErrorResponse, "description": "The body is larger than 4 MiB."},
    422: {"model": ErrorResponse, "description": "A field is missing or has the wrong type."},
}
