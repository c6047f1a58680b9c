"""One rule for which tools a caller may see and run.

A tool is *visible* to a caller when it is available, supported on this platform, allowed
by the gateway's :class:`~toolscout.access.policy.Policy` and by the caller's own ``allow``
predicate (``CallContext.allow``: a session's user permissions). The same rule masks ranking (the index turns
:meth:`Visibility.predicate` into a cached boolean mask, so ``limit`` is filled from
visible tools) and admits calls (:meth:`Visibility.refusal`), so a tool a caller cannot
find is a tool it cannot run, on every surface.

``searchable`` is not part of it: a non-searchable tool (internal plumbing) is left out of
search results but may still be pinned and called.
"""

from __future__ import annotations

import sys
from collections import OrderedDict

from ..context import Allow
from ..errors import InvalidRequest, PolicyDenied
from ..model import Tool
from .policy import Policy

__all__ = ["Allow", "Visibility", "current_platform"]

_PREDICATES = 256


def current_platform() -> str:
    if sys.platform.startswith("win"):
        return "windows"
    if sys.platform == "darwin":
        return "macos"
    return "linux"


class Visibility:
    def __init__(self, policy: Policy | None = None, platform: str | None = None) -> None:
        self.policy = policy
        self.platform = platform or current_platform()
        self._predicates: OrderedDict[Allow | None, Allow] = OrderedDict()

    def refusal(self, tool: Tool, allow: Allow | None = None) -> PolicyDenied | None:
        """Why ``tool`` is not visible to this caller, or ``None`` when it is."""
        if not tool.available or (tool.platforms and self.platform not in tool.platforms):
            return PolicyDenied(
                f"tool {tool.name!r} is not available here",
                hint="Pick another tool; this one is disabled or not supported on this platform.",
            )
        if self.policy is not None and not self.policy.permits(tool):
            return PolicyDenied(
                f"tool {tool.name!r} is not allowed by the gateway policy",
                hint="Pick another tool, or ask the operator to allow this one.",
            )
        if allow is not None and not allow(tool):
            return PolicyDenied(
                f"tool {tool.name!r} is not available in this session",
                hint="Pick another tool; this session may not use this one.",
            )
        return None

    def only_platform(self, asked: str | None) -> None:
        """One platform per gateway: a search for another one is refused, not ignored."""
        if asked is not None and asked != self.platform:
            raise InvalidRequest(
                f"platform {asked!r} is not this gateway's ({self.platform!r}): a gateway filters for one platform",
                hint=f"Make a Gateway(catalog, platform={asked!r}) to search that platform's tools.",
            )

    def admits(self, tool: Tool, allow: Allow | None = None) -> bool:
        return self.refusal(tool, allow) is None

    def predicate(self, allow: Allow | None = None) -> Allow | None:
        """The rule as one predicate for the index's mask, the same object for the same
        ``allow`` (the index caches a mask per predicate object and catalog generation).

        ``None`` when only availability and platform apply: the index keeps precomputed
        masks for those two, so the common case costs no predicate mask at all."""
        if allow is None and self.policy is None:
            return None
        found = self._predicates.get(allow)
        if found is not None:
            self._predicates.move_to_end(allow)
            return found
        policy, platform = self.policy, self.platform

        def visible(tool: Tool) -> bool:
            if not tool.available or (tool.platforms and platform not in tool.platforms):
                return False
            if policy is not None and not policy.permits(tool):
                return False
            return allow is None or bool(allow(tool))

        self._predicates[allow] = visible
        while len(self._predicates) > _PREDICATES:
            self._predicates.popitem(last=False)
        return visible
