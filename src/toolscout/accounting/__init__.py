"""What a request cost and where its time went: token counts (:mod:`.tokens`), each
session's ledger of the lists it sent (:mod:`.ledger`), and per-stage timings and traces
(:mod:`.telemetry`). Below the catalog: it knows formats and tools, nothing about search or
sessions. The submodules are the API (import them by name): this ``__init__`` stays empty so
the guard's stage timing never loads a tokenizer."""

__all__ = ["ledger", "telemetry", "tokens"]
