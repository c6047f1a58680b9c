"""Which tools a caller may see and run: allow/deny name globs and permission kinds.

A policy is applied *before* ranking (the index turns it into a cached mask), so a denied
tool can never crowd the results or be revealed, and ``limit`` still means ``limit``.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..model import Tool

__all__ = ["Policy"]


def _compile(globs: Iterable[str]) -> re.Pattern[str] | None:
    parts = [fnmatch.translate(g) for g in globs]
    return re.compile("|".join(parts)) if parts else None


@dataclass(frozen=True)
class Policy:
    """``allow``: only names matching one of these globs (``None`` = every name);
    ``deny``: never names matching these; ``permissions``: only tools whose permission kind
    is listed. A tool's kind is its declared one, else the one its MCP hints imply
    (:attr:`Tool.effective_permission`: read-only -> read, destructive -> dangerous), so
    ``permissions={"read"}`` keeps upstream tools that say they change things out; tools
    with neither a kind nor hints pass unless ``require_permission``
    (:meth:`read_only` sets it)."""

    allow: tuple[str, ...] | None = None
    deny: tuple[str, ...] = ()
    permissions: frozenset[str] | None = None
    require_permission: bool = False
    _allow_re: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    _deny_re: re.Pattern[str] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_allow_re", _compile(self.allow) if self.allow is not None else None)
        object.__setattr__(self, "_deny_re", _compile(self.deny))

    @classmethod
    def read_only(cls) -> Policy:
        """Only tools known to be read-only: declared ``read`` or ``readOnlyHint`` true."""
        return cls(permissions=frozenset({"read"}), require_permission=True)

    def permits(self, tool: Tool) -> bool:
        if self.allow is not None and (self._allow_re is None or not self._allow_re.fullmatch(tool.name)):
            return False
        if self._deny_re is not None and self._deny_re.fullmatch(tool.name):
            return False
        if self.permissions is not None:
            kind = tool.effective_permission
            if kind is None:
                return not self.require_permission
            return kind in self.permissions
        return True
