"""How ``serve`` and ``servers`` log: one readable line per event, or one JSON object per
line for a log collector (``--log-json``).

Python's default ``WARNING:toolscout.mcp:...`` lines (and a traceback spread over twenty
more) are hard to read on a terminal and impossible to parse in a log pipeline; an event that
spans lines also breaks ``grep``. Every record here is one line: an exception is reduced to
its type and message (the full traceback is logged with ``--verbose``).
"""

from __future__ import annotations

import json
import logging
import sys
import time

__all__ = ["JsonLines", "OneLine", "setup"]


def _one_line(text: str) -> str:
    return " ".join(text.split())


class OneLine(logging.Formatter):
    """``12:04:05 warning mcp: upstream 'crm' failed: ConnectError: ...``"""

    def __init__(self, *, tracebacks: bool = False) -> None:
        super().__init__()
        self.tracebacks = tracebacks

    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%H:%M:%S", time.localtime(record.created))
        where = record.name.removeprefix("toolscout.")
        line = f"{stamp} {record.levelname.lower()} {where}: {_one_line(record.getMessage())}"
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            line += f" ({type(exc).__name__}: {_one_line(str(exc))})"
            if self.tracebacks:
                line += "\n" + self.formatException(record.exc_info)
        return line


class JsonLines(logging.Formatter):
    """One JSON object a line: ``ts`` (ISO 8601, UTC), ``level``, ``logger``, ``message``,
    ``error`` when the event carries an exception."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, object] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            entry["error"] = f"{type(exc).__name__}: {exc}"
        return json.dumps(entry, ensure_ascii=False)


def setup(level: int, *, json_lines: bool = False, verbose: bool = False) -> None:
    """Route every logger (uvicorn's too) to stderr through one formatter. Only toolscout's
    own loggers go below WARNING with ``verbose``: HTTP client libraries log full URLs, which
    may carry credentials."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLines() if json_lines else OneLine(tracebacks=verbose))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    if verbose:
        logging.getLogger("toolscout").setLevel(logging.INFO)
