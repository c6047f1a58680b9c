"""Where toolscout keeps its caches on this machine: one place, so every command honours
``XDG_CACHE_HOME`` the same way (``search`` did, ``eval`` did not)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

__all__ = ["cache_dir", "keyed_name"]


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/toolscout``, else ``~/.cache/toolscout`` (read at each call, so a
    changed environment counts)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "toolscout"


def keyed_name(prefix: str, path: str | os.PathLike[str], suffix: str = ".db") -> str:
    """``<prefix>-<file stem>-<10 hex of its full path>.db``: readable, and two projects'
    ``servers.json`` never share a cache file (the stem alone made them collide)."""
    full = Path(path).expanduser().resolve()
    digest = hashlib.sha256(str(full).encode()).hexdigest()[:10]
    return f"{prefix}-{full.stem}-{digest}{suffix}"
