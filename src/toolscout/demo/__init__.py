"""The demo catalog: ~300 realistic tools across ~30 services, shipped with the package.

Every tool can be called offline: the math, units, time and text tools really run
(:mod:`toolscout.demo.real`); the service tools (Slack, GitHub, Stripe...) answer with a
deterministic simulated result marked ``"simulated": true``.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources

from ..catalog import Catalog
from ..errors import DeclarationError
from ..model import Tool
from .real import REAL_HANDLERS
from .simulated import simulated_handler

__all__ = ["demo_catalog", "demo_tools"]


@lru_cache(maxsize=1)
def _records() -> tuple[dict, ...]:
    text = resources.files(__name__).joinpath("catalog.json").read_text(encoding="utf-8")
    data = json.loads(text)
    if data.get("format") != 1:
        raise DeclarationError("unsupported demo catalog format", file="catalog.json", field="format")
    return tuple(data["tools"])


def demo_tools() -> list[Tool]:
    """The demo catalog's tool records (no handlers)."""
    return [Tool.from_dict(r) for r in _records()]


def demo_catalog(*, skills_and_agents: bool = False) -> Catalog:
    """A fresh catalog of the demo tools, every one with a handler; with
    ``skills_and_agents`` also the demo's two Agent Skills and two A2A agent cards (found only
    when a search asks for their kind). ``toolscout demo`` and every ``CATALOG`` argument
    ``demo`` use that full one, so a figure such as the meta-tools' token count is the same
    in every command (their ``find_tools`` offers a ``kinds`` parameter)."""
    tools = demo_tools()
    handlers = {t.name: REAL_HANDLERS.get(t.name) or simulated_handler(t) for t in tools}
    catalog = Catalog()
    catalog.extend(tools, handlers=handlers)
    if skills_and_agents:
        with resources.as_file(resources.files(__name__)) as here:
            catalog.load_skills(here / "skills")
            catalog.load_agents(here / "agents")
    return catalog
