"""What tool definitions cost: token counts (:mod:`.tokens`) and each session's ledger of
the lists it sent (:mod:`.ledger`). Below the catalog: it knows formats and tools, nothing
about search or sessions."""

from .ledger import Ledger, Turn
from .tokens import count_tokens, count_tool_tokens, savings_report

__all__ = ["Ledger", "Turn", "count_tokens", "count_tool_tokens", "savings_report"]
