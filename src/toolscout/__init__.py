"""toolscout: one ``find_tools`` meta-tool in front of thousands of tools.

The public API is what this module exports; everything else is internal and may change.
Optional parts (embeddings, provider adapters, the MCP gateway) live in their own modules and
import their dependencies lazily.

The names below load on first use (PEP 562): ``import toolscout.cli`` runs this file first,
and ``toolscout --help`` or a shell completion must not pay for the catalog, the search
index and numpy (about a second) before printing a line.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .access.policy import Policy
    from .catalog import Catalog, CatalogChange
    from .errors import ErrorInfo, ToolscoutError
    from .gateway import FindResult, Gateway, ToolReference
    from .model import Annotations, CallResult, DeferPolicy, Tool
    from .session import Session

__version__ = "0.1.0"

_WHERE = {
    "Catalog": ".catalog",
    "CatalogChange": ".catalog",
    "ErrorInfo": ".errors",
    "ToolscoutError": ".errors",
    "FindResult": ".gateway",
    "Gateway": ".gateway",
    "ToolReference": ".gateway",
    "Annotations": ".model",
    "CallResult": ".model",
    "DeferPolicy": ".model",
    "Tool": ".model",
    "Policy": ".access.policy",
    "Session": ".session",
}

__all__ = [
    "Annotations",
    "CallResult",
    "Catalog",
    "CatalogChange",
    "DeferPolicy",
    "ErrorInfo",
    "FindResult",
    "Gateway",
    "Policy",
    "Session",
    "Tool",
    "ToolReference",
    "ToolscoutError",
    "__version__",
]


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'toolscout' has no attribute {name!r}")
    value = getattr(import_module(where, __name__), name)
    globals()[name] = value  # once: later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
