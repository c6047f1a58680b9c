"""toolscout: one ``find_tools`` meta-tool in front of thousands of tools.

The public API is what this module exports; everything else is internal and may change.
Optional parts (embeddings, provider adapters, the MCP gateway) live in their own modules and
import their dependencies lazily.
"""

from .access.policy import Policy
from .catalog import Catalog, CatalogChange
from .errors import ErrorInfo, ToolscoutError
from .gateway import FindResult, Gateway, ToolReference
from .model import Annotations, CallResult, DeferPolicy, Tool
from .session import Session

__version__ = "0.1.0"

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
