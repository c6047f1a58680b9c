"""toolscout: one ``find_tools`` meta-tool in front of thousands of tools."""

from .catalog import Catalog, CatalogChange
from .errors import ErrorInfo, ToolscoutError
from .model import Annotations, CallResult, DeferPolicy, Tool

__version__ = "0.1.0"

__all__ = [
    "Annotations",
    "CallResult",
    "Catalog",
    "CatalogChange",
    "DeferPolicy",
    "ErrorInfo",
    "Tool",
    "ToolscoutError",
    "__version__",
]
