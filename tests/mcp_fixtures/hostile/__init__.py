"""Hostile upstream servers: each misbehaves in one way a real server has been seen to."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

SERVER = str(Path(__file__).with_name("server.py"))


def hostile(mode: str, *flags: str, **options: Any) -> dict[str, Any]:
    """A server entry (``mcpServers`` shape) that runs ``server.py --mode MODE FLAGS...``."""
    return {"command": sys.executable, "args": [SERVER, "--mode", mode, *flags], **options}
