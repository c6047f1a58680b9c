"""A small demo catalog for the examples: a few useful tools among many decoys, so
deferral is on (the session's threshold is 15). Also :func:`extra` and :func:`run`, so an
example run without its extra says which ``pip install`` fixes it instead of a traceback."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from toolscout import Catalog, DeferPolicy
from toolscout.errors import MissingExtra
from toolscout.gateway import Gateway
from toolscout.session import Session

catalog = Catalog()


@catalog.tool
def get_weather(city: str, days: int = 1) -> dict:
    """Get the weather forecast for a city.

    Args:
        city: City name, e.g. "Paris".
        days: How many days ahead (1-7).
    """
    return {"city": city, "days": days, "forecast": "sunny", "temp_c": 21}


@catalog.tool
def send_email(to: str, subject: str, body: str) -> str:
    """Send an email to one recipient."""
    return f"email to {to} queued"


@catalog.tool(defer=DeferPolicy.NEVER)
def current_time() -> str:
    """The current UTC time (always loaded: pinned)."""
    from datetime import UTC, datetime

    return datetime.now(UTC).isoformat(timespec="seconds")


def _stock_tool(number: int) -> Callable[[str], dict]:
    def stock(sku: str) -> dict:
        return {"sku": sku, "warehouse": number, "stock": 7}

    return stock


for i in range(40):
    catalog.add_function(
        _stock_tool(i),
        name=f"warehouse_{i}_stock",
        description=f"Stock level of an item (by SKU) in warehouse number {i}.",
    )


def new_session() -> Session:
    return Session(Gateway(catalog))


PROMPT = "What's the weather in Paris tomorrow? Then email the forecast to ann@example.com."


@contextmanager
def extra(name: str, *, also: str = "") -> Iterator[None]:
    """Imports in this block come from ``toolscout[name]``: an ImportError becomes
    :class:`MissingExtra` naming it (``also``: packages the extra does not pull)."""
    try:
        yield
    except ImportError as error:
        exc = MissingExtra(f"This example ({error.name or name})", name)
        exc.hint = f"{exc.hint} {also}".strip()
        raise exc from None


def run(main: Callable[[], None]) -> None:
    """Run an example; a missing extra (the adapters raise it too) ends it with the pip
    command that fixes it and exit status 2, like the CLI's usage errors."""
    try:
        main()
    except MissingExtra as exc:
        print(f"{exc.message} Fix: {exc.hint}", file=sys.stderr)
        raise SystemExit(2) from None
