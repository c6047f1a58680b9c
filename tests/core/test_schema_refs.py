"""Schema references in tool schemas are resolved locally or not at all: a ``$ref`` to a
URL is never fetched (no request forgery, no hang), and only that tool loses validation."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator

import pytest

from toolscout import Catalog, Tool
from toolscout.gateway import Gateway


@pytest.fixture()
def listener() -> Iterator[socket.socket]:
    """A loopback port that would see any fetch (its backlog queues a connection even if
    nobody accepts it)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.setblocking(False)
    yield sock
    sock.close()


def _nobody_connected(sock: socket.socket) -> bool:
    try:
        conn, _ = sock.accept()
    except BlockingIOError:
        return True
    conn.close()
    return False


def test_a_remote_ref_is_never_fetched(listener: socket.socket, caplog: pytest.LogCaptureFixture) -> None:
    port = listener.getsockname()[1]
    remote = {"type": "object", "properties": {"x": {"$ref": f"http://127.0.0.1:{port}/schema.json"}}}
    local = {
        "type": "object",
        "$defs": {"city": {"type": "string"}},
        "properties": {"city": {"$ref": "#/$defs/city"}},
        "required": ["city"],
    }
    cat = Catalog()
    cat.add(Tool("remote_ref", "Has a remote schema reference.", remote), handler=lambda a: "ran")
    cat.add(Tool("local_ref", "Has a local schema reference.", local), handler=lambda a: a["city"])
    gw = Gateway(cat)
    with caplog.at_level(logging.WARNING, logger="toolscout.gateway"):
        result = gw.call("remote_ref", {"x": 1})
    assert result.ok and result.text() == "ran"  # called without validation
    assert "not validating arguments of remote_ref" in caplog.text
    assert _nobody_connected(listener)
    # Local references still validate.
    assert gw.call("local_ref", {"city": "Oslo"}).text() == "Oslo"
    assert gw.call("local_ref", {"city": 3}).error.code == "invalid_arguments"
    # A second call does not try again (nor log again).
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="toolscout.gateway"):
        assert gw.call("remote_ref", {"x": 2}).ok
    assert caplog.text == "" and _nobody_connected(listener)


def test_an_unresolvable_local_ref_only_skips_that_tools_validation() -> None:
    broken = {"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}}
    cat = Catalog()
    cat.add(Tool("broken_ref", "Its schema points nowhere.", broken), handler=lambda a: "ran")
    cat.add(Tool("fine", "A fine tool.", {"type": "object", "properties": {"n": {"type": "integer"}}}), handler=lambda a: "ok")
    gw = Gateway(cat)
    assert gw.call("broken_ref", {"x": 1}).ok
    assert gw.call("fine", {"n": "not a number"}).error.code == "invalid_arguments"
