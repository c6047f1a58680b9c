"""Every error toolscout reports, as one tree.

Each class carries a stable ``code`` that is exactly what a model sees in a structured
error (``{"code", "message", "hint", "details"}``), so a code maps 1:1 to a class::

    ToolscoutError
    ├── RequestError              the caller (usually a model) can fix the request
    │   ├── EmptyQuery            empty_query
    │   ├── InvalidRegex          invalid_regex
    │   ├── InvalidArguments      invalid_arguments
    │   ├── InvalidRequest        invalid_request
    │   └── ProgramError          program_error (code mode: the program itself failed)
    ├── LookupFailed              nothing, or not exactly one thing, matched
    │   ├── NoMatch               no_match
    │   ├── UnknownTool           unknown_tool
    │   ├── NotRevealed           not_revealed
    │   └── Ambiguous             ambiguous
    ├── ExecutionFailed           the tool or its upstream failed; the request may be fine
    │   ├── ToolFailed            tool_error
    │   ├── ToolTimeout           timeout
    │   ├── UpstreamUnavailable   upstream_unavailable
    │   └── ProgramLimit          program_limit (code mode: a sandbox limit stopped it)
    ├── MetadataOnly              metadata_only (declared for search, nothing runs it)
    ├── PolicyDenied              denied
    │   └── ApprovalDenied        approval_denied
    ├── ApprovalRequired          approval_required
    ├── AuthorizationRequired     authorization_required (connect your upstream account)
    │   └── CredentialUnreadable  credential_unreadable
    ├── SessionStoreUnavailable   session_store_unavailable
    ├── StoreUnavailable          store_unavailable (the database is down: retry later)
    └── ConfigError               misuse by the developer, raised at load time
        ├── DeclarationError      invalid_declaration
        ├── NameCollision         name_collision
        ├── StoreError            store_error
        ├── MissingExtra          missing_extra
        └── EmbeddingUnavailable  embedding_unavailable

Request, lookup, execution and policy errors are *returned* as data by the model-facing
calls (``find_tools``, ``call``, ``use_tool``); only ``ConfigError`` is raised at the
developer, because it means the program itself is wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, Field

__all__ = [
    "Ambiguous",
    "ApprovalDenied",
    "ApprovalRequired",
    "AuthorizationRequired",
    "ConfigError",
    "CredentialUnreadable",
    "DeclarationError",
    "EmbeddingUnavailable",
    "EmptyQuery",
    "ErrorInfo",
    "ExecutionFailed",
    "InvalidArguments",
    "InvalidRegex",
    "InvalidRequest",
    "LookupFailed",
    "MetadataOnly",
    "MissingExtra",
    "NameCollision",
    "NoMatch",
    "NotRevealed",
    "PolicyDenied",
    "ProgramError",
    "ProgramLimit",
    "RequestError",
    "SessionStoreUnavailable",
    "StoreError",
    "StoreUnavailable",
    "ToolFailed",
    "ToolTimeout",
    "ToolscoutError",
    "UnknownTool",
    "UpstreamStarting",
    "UpstreamUnavailable",
    "source_lines",
    "split_pending",
]


class ErrorInfo(BaseModel):
    """The structured error a model or client receives."""

    code: str
    message: str
    hint: str = ""
    details: dict[str, Any] = Field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.hint:
            out["hint"] = self.hint
        if self.details:
            out["details"] = self.details
        return out

    def text(self) -> str:
        """The one text rendering every surface sends a model: code and message, what to
        do next, then did-you-mean names, categories, candidates or problems if any."""
        lines = [f"{self.code}: {self.message}"]
        if self.hint:
            lines.append(self.hint)
        details = self.details
        suggestions = details.get("suggestions")
        if suggestions:
            lines.append("Did you mean: " + ", ".join(map(str, suggestions[:10])) + "?")
        candidates = details.get("candidates")
        if candidates:
            lines.append("Candidates: " + ", ".join(str(c.get("name", c)) if isinstance(c, dict) else str(c) for c in candidates[:10]))
        categories = details.get("categories")
        if categories:
            shown = categories if isinstance(categories, list) else [f"{k} ({v})" for k, v in categories.items()]
            lines.append("Categories: " + ", ".join(map(str, shown[:20])))
        lines += source_lines(details.get("loading") or {}, details.get("failed") or {})
        return "\n".join(lines)


class ToolscoutError(Exception):
    code: str = "error"
    default_hint: str = ""

    def __init__(self, message: str, *, hint: str | None = None, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.hint = self.default_hint if hint is None else hint
        self.details = details

    def info(self) -> ErrorInfo:
        return ErrorInfo(code=self.code, message=self.message, hint=self.hint, details=self.details)

    def to_dict(self) -> dict[str, Any]:
        return self.info().to_dict()


class RequestError(ToolscoutError):
    code = "invalid_request"


class EmptyQuery(RequestError):
    code = "empty_query"
    default_hint = "Describe the capability you need, e.g. 'send a slack message'."


class InvalidRegex(RequestError):
    code = "invalid_regex"
    default_hint = "Use a simple pattern such as 'get_.*_data', or search_type='keyword'."


class InvalidArguments(RequestError):
    code = "invalid_arguments"
    default_hint = "Fix the listed arguments to match the tool's input schema and call again."


class InvalidRequest(RequestError):
    code = "invalid_request"


class ProgramError(RequestError):
    """A code-mode program did not run to its end: a syntax error, or an exception it
    raised and did not catch. ``details`` names the ``line`` (and the source line)."""

    code = "program_error"
    default_hint = "Fix the program at the line named and run it again."


class LookupFailed(ToolscoutError):
    code = "lookup_failed"


class NoMatch(LookupFailed):
    code = "no_match"
    default_hint = "Try other words, a category, or one of the suggested names."


class UnknownTool(LookupFailed):
    code = "unknown_tool"
    default_hint = "Call find_tools to discover the right tool name first."


class NotRevealed(LookupFailed):
    code = "not_revealed"
    default_hint = "Call find_tools with this tool's name first, then call it."


class Ambiguous(LookupFailed):
    code = "ambiguous"
    default_hint = "Call one of the candidates by name, or refine the query."


class ExecutionFailed(ToolscoutError):
    code = "execution_failed"


class ToolFailed(ExecutionFailed):
    code = "tool_error"
    default_hint = "The tool raised an error; check the arguments or try another tool."


class ToolTimeout(ExecutionFailed):
    code = "timeout"
    default_hint = "The tool did not answer in time; retry later or with a smaller request."


class UpstreamUnavailable(ExecutionFailed):
    code = "upstream_unavailable"
    default_hint = "The server behind this tool is down; retry later or use another tool."


class MetadataOnly(ToolscoutError):
    """The tool is described (a declaration without ``handler``, ``http`` or ``upstream``)
    but nothing in this gateway runs it: refused before validation and approval, so nobody
    is asked to approve a call that cannot run."""

    code = "metadata_only"
    default_hint = "This tool is listed for reference only and cannot be called here; use another tool or tell the user."


class ProgramLimit(ExecutionFailed):
    """A code-mode program was stopped by one of its limits (``details["limit"]``: wall
    time, memory, tool calls, output, recursion). The gateway itself is unaffected."""

    code = "program_limit"
    default_hint = "Do less in one program (fewer calls, smaller results), or split the task."


class PolicyDenied(ToolscoutError):
    code = "denied"
    default_hint = "This tool is not allowed here; pick another tool."


class ApprovalDenied(PolicyDenied):
    """The approver (a person, or the callback standing in for one) said no to this call.
    Its own code, not ``denied``: the tool is allowed, this call was refused, so a model
    should ask the user rather than look for another tool that does the same."""

    code = "approval_denied"
    default_hint = "The call was not approved and did not run; do not retry it unchanged. Ask the user how to proceed."


class ApprovalRequired(ToolscoutError):
    """The tool's kind needs approval and nobody could be asked (no callback, and an MCP
    client without elicitation): nothing ran."""

    code = "approval_required"
    default_hint = (
        "This tool needs a person's approval before it runs, and this client cannot ask for it. "
        "Use a client that supports MCP elicitation, or ask the operator to approve this kind of tool."
    )


class AuthorizationRequired(ToolscoutError):
    """The upstream behind this tool acts with each caller's own account, and this caller
    has not connected one (or the upstream refused it: revoked, expired). Nothing ran.
    ``details`` carry ``server`` and, when the gateway can obtain one by OAuth,
    ``authorization_url``: the consent link to show the user (docs/credentials.md)."""

    code = "authorization_required"
    default_hint = (
        "Ask the user to open the authorization_url and approve access, then retry the call; "
        "or register a token with PUT /v1/credentials/{server}."
    )


class CredentialUnreadable(AuthorizationRequired):
    """The stored credential for this caller and upstream cannot be read (damaged, or
    encrypted with a key the gateway no longer has): connect again to replace it."""

    code = "credential_unreadable"
    default_hint = (
        "Connect the account again (open the authorization_url, or PUT /v1/credentials/{server}); "
        "the new credential replaces the unreadable one. Operators: check the vault keys (docs/credentials.md)."
    )


class SessionStoreUnavailable(ToolscoutError):
    """A shared session store (Redis) cannot be reached: returned before anything runs, so
    the caller can simply retry; the session's state is kept in the store."""

    code = "session_store_unavailable"
    default_hint = "The session store is unreachable; retry in a moment. Nothing ran, and nothing this session revealed is lost."


class StoreUnavailable(ToolscoutError):
    """A store's database cannot be reached now (down, restarting, connection lost): a
    runtime condition, not a misconfiguration; the same call succeeds once it is back."""

    code = "store_unavailable"
    default_hint = "The store's database is unreachable; retry when it is back (nothing was written)."


class ConfigError(ToolscoutError):
    code = "config_error"


class DeclarationError(ConfigError):
    """A declaration (file entry, definition dict) is malformed.

    ``details`` carries ``file``, ``line`` and ``field`` where known, so the message can
    point the developer at the exact place.
    """

    code = "invalid_declaration"

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        field: str | None = None,
        hint: str | None = None,
    ) -> None:
        where = ":".join(str(p) for p in (file, line) if p is not None)
        prefix = f"{where}: " if where else ""
        suffix = f" (field '{field}')" if field else ""
        super().__init__(f"{prefix}{message}{suffix}", hint=hint, file=file, line=line, field=field)
        self.file, self.line, self.field = file, line, field


class NameCollision(ConfigError):
    code = "name_collision"
    default_hint = "Load one of the sources with prefix='...' to namespace its tool names."


class StoreError(ConfigError):
    code = "store_error"


class MissingExtra(ConfigError):
    code = "missing_extra"

    def __init__(self, feature: str, extra: str) -> None:
        super().__init__(
            f"{feature} needs an optional dependency.",
            hint=f"pip install 'toolscout[{extra}]'",
            extra=extra,
        )


class EmbeddingUnavailable(ConfigError):
    """The embedding model cannot be used: file hash mismatch, endpoint down, wrong dimension.

    Raised when a dense index is built; at query time the hybrid ranker catches it and falls
    back to keyword search with a warning, so a model never sees it.
    """

    code = "embedding_unavailable"
    default_hint = "Check the embedding model or endpoint; keyword search still works."


class InvalidToken(ToolscoutError):
    """A bearer token is missing, malformed, expired, not for this gateway, or its
    signature does not verify (HTTP 401 ``error="invalid_token"``)."""

    code = "invalid_token"
    default_hint = "Get a token for this gateway from its authorization server (see its /.well-known/oauth-protected-resource)."


class InsufficientScope(InvalidToken):
    """The token is good but lacks a scope this gateway requires (HTTP 403)."""

    code = "insufficient_scope"


class IssuerUnavailable(ToolscoutError):
    """The authorization server cannot be reached to check a token: the gateway fails
    closed (HTTP 503) until it can."""

    code = "issuer_unavailable"
    default_hint = "Retry shortly; the gateway cannot check tokens until its issuer answers (see /v1/ready)."


class UpstreamStarting(UpstreamUnavailable):
    """A call named a tool no listed server has while some server is still starting or
    listing its tools (a first start without cache): the tool may well exist in a moment."""

    code = "upstream_starting"
    default_hint = "Retry in a few seconds: the server that may offer this tool is still starting."


def split_pending(pending: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """Sources not yet listed, split into those still loading (``starting``, ``listing
    tools``) and those that failed, each failed one with its reason and next retry
    (``failed: <cause>; retry in N s`` becomes ``<cause>; retry in N s``). A failed source is
    not "still loading": a host whose name does not resolve will not load in a moment."""
    loading: dict[str, str] = {}
    failed: dict[str, str] = {}
    for name, reason in pending.items():
        if reason.startswith("failed"):
            failed[name] = reason.removeprefix("failed").lstrip(":").strip() or "failed"
        else:
            loading[name] = reason
    return loading, failed


def source_lines(loading: Mapping[str, str], failed: Mapping[str, str]) -> list[str]:
    """The lines every text rendering adds for sources not listed yet: still loading, failed."""
    lines = []
    if loading:
        lines.append("Still loading: " + ", ".join(f"{k} ({v})" for k, v in loading.items()))
    if failed:
        lines.append("Failed to load (their tools cannot be found until they are back): "
                     + "; ".join(f"{k} ({v})" for k, v in failed.items()))
    return lines
