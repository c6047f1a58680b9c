"""Helpers shared by the MCP gateway tests: scripted upstream server commands."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

FAKE = str(Path(__file__).with_name("fake_upstream.py"))


def fake(mode: str = "normal", **options: Any) -> dict[str, Any]:
    """A server entry (``mcpServers`` shape) that runs the scripted upstream in ``mode``."""
    args = [FAKE, "--mode", mode]
    if "delay" in options:
        args += ["--delay", str(options.pop("delay"))]
    return {"command": sys.executable, "args": args, **options}
