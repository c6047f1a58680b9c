"""Hidden means absent for tool calls too: a tool the caller may not see, called by its exact
name, answers exactly as a name that does not exist, on every surface, while the audit log
still records the attempt as ``denied`` (issue 31's open point, closed by routing tool calls
through the guard).

Each surface is asked twice, once for a hidden tool and once for a name nobody has, and the
two answers must be the same up to the name itself; did-you-mean never offers a hidden name.
On main before this change the hidden one answered ``denied`` (403 on ``/v1/tools``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client

from mcp_fixtures.asgi import serving
from security.test_guard_issue31 import Served, _serve
from toolscout.access.policy import Policy
from toolscout.catalog import Catalog
from toolscout.context import CallContext
from toolscout.gateway import Gateway
from toolscout.request import CallRequest
from toolscout.server.app import http_app
from toolscout.session import Session

pytestmark = pytest.mark.asyncio

HIDDEN, NOBODY = "web_page", "web_pages_nobody_has"


@pytest.fixture
async def hidden() -> AsyncIterator[Served]:
    """A gateway whose policy hides the server ``web``'s tools from every caller."""
    async for s in _serve(policy=Policy(deny=("web_*", "web")), code_mode=True):
        yield s


def _same_but_name(hidden: dict[str, Any], unknown: dict[str, Any]) -> None:
    """The two error answers are one shape: code, hint, message (name swapped), details keys."""
    assert hidden["code"] == unknown["code"] == "unknown_tool", (hidden, unknown)
    assert hidden.get("hint") == unknown.get("hint")
    assert hidden["message"].replace(HIDDEN, "NAME") == unknown["message"].replace(NOBODY, "NAME")
    assert set(hidden.get("details") or {}) == set(unknown.get("details") or {})
    assert not any(s.startswith("web_") for s in (hidden.get("details") or {}).get("suggestions", []))


def _denied(records: list[Any]) -> list[tuple[str, str]]:
    return [(r.tool, r.decision) for r in records if r.decision in ("denied", "refused")]


@pytest.mark.parametrize("mode", ["legacy", "auto"])  # a stateful session, and the stateless revision
async def test_mcp_call_tool_answers_a_hidden_tool_as_an_unknown_one(hidden: Served, mode: str) -> None:
    async with Client(hidden.server.lowlevel, mode=mode) as client:
        answers = [await client.call_tool("call_tool", {"name": name, "arguments": {}}) for name in (HIDDEN, NOBODY)]
    assert all(a.is_error for a in answers)
    _same_but_name(*(a.structured_content["error"] for a in answers))
    assert _denied(hidden.records) == [(HIDDEN, "denied"), (NOBODY, "refused")]


async def test_mcp_tools_call_by_its_exact_name_answers_a_hidden_tool_as_an_unknown_one(hidden: Served) -> None:
    async with Client(hidden.server.lowlevel, mode="legacy") as client:
        answers = [await client.call_tool(name, {}) for name in (HIDDEN, NOBODY)]
    _same_but_name(*(a.structured_content["error"] for a in answers))
    assert _denied(hidden.records) == [(HIDDEN, "denied"), (NOBODY, "refused")]


async def test_v1_call_and_tool_answer_a_hidden_tool_as_an_unknown_one(hidden: Served) -> None:
    async with serving(http_app(hidden.server, console=True)) as base, httpx.AsyncClient(base_url=base) as http:
        calls = [(await http.post("/v1/call", json={"name": n, "arguments": {}})) for n in (HIDDEN, NOBODY)]
        tools = [(await http.get(f"/v1/tools/{n}")) for n in (HIDDEN, NOBODY)]
        console = [(await http.get("/ui/api/tool", params={"name": n})) for n in (HIDDEN, NOBODY)]
    assert [r.status_code for r in calls] == [200, 200] and [r.status_code for r in tools] == [404, 404]
    assert [r.status_code for r in console] == [404, 404]
    _same_but_name(*(r.json()["error"] for r in calls))
    _same_but_name(*(r.json()["error"] for r in tools))
    _same_but_name(*(r.json()["error"] for r in console))
    assert _denied(hidden.records) == [(HIDDEN, "denied"), (NOBODY, "refused")]


async def test_code_mode_answers_a_hidden_tool_as_an_unknown_one(hidden: Served) -> None:
    async with Client(hidden.server.lowlevel, mode="auto") as client:
        answers = [await client.call_tool("execute", {"code": f"await call_tool({n!r})"}) for n in (HIDDEN, NOBODY)]
    errors = [a.structured_content["error"] for a in answers]
    for error in errors:  # the program's line and source name the call; the rest is the tool's answer
        for key in ("line", "source", "tool", "tool_calls"):
            error["details"].pop(key, None)
        error["message"] = error["message"].split(" (line")[0]
    _same_but_name(*errors)
    assert (HIDDEN, "denied") in _denied(hidden.records)


async def test_the_library_and_a_session_answer_a_hidden_tool_as_an_unknown_one() -> None:
    catalog = Catalog()
    catalog.add_function(lambda: "secret", name="web_page", description="Read a web page.")
    catalog.add_function(lambda: "hello", name="greet", description="Say hello.")
    gateway = Gateway(catalog, call_timeout=None, policy=Policy(deny=("web_*",)))
    records: list[Any] = []
    gateway.recorders.append(records.append)
    lib = [gateway.call(n) for n in (HIDDEN, NOBODY)]
    _same_but_name(*(r.error.model_dump() for r in lib if r.error is not None))
    alice = CallContext(allow=lambda t: t.name != "greet")  # a caller's own rule hides too
    hid = await gateway.execute(CallRequest("greet", {}), alice)
    assert hid.error is not None and hid.error.code == "unknown_tool" and hid.error.message == "no tool named 'greet'"
    session = Session(gateway, threshold=100)
    answers = [session.handle(n, {}) for n in (HIDDEN, NOBODY)]
    _same_but_name(*(a.error.model_dump() for a in answers if a.error is not None))
    assert [d for d in _denied(records) if d[1] == "denied"] == [(HIDDEN, "denied"), ("greet", "denied"), (HIDDEN, "denied")]
    # a visible tool an approval refuses is not hidden: the caller learns why
    gated = Gateway(catalog, call_timeout=None, approve_kinds="dangerous")
    catalog.add_function(lambda: "gone", name="wipe", description="Wipe it.", permission="dangerous")
    refused = gated.call("wipe")
    assert refused.error is not None and refused.error.code == "approval_required"


@pytest.mark.skipif(sys.platform.startswith("win"), reason="the demo's PowerShell tool is visible on Windows")
async def test_cli_call_answers_a_tool_not_visible_here_as_an_unknown_one(tmp_path: Path) -> None:
    toolscout = str(Path(sys.executable).with_name("toolscout"))
    env = {**os.environ, "COLUMNS": "80", "NO_COLOR": "1"}
    done = [
        subprocess.run([toolscout, "call", "demo", name, "--json"], capture_output=True, text=True, timeout=120,
                       stdin=subprocess.DEVNULL, env=env, cwd=tmp_path)
        for name in ("shell_run_powershell", "shell_run_powershel_nobody")  # PowerShell: Windows only
    ]
    assert done[0].returncode == done[1].returncode != 0
    errors = []
    for d in done:
        body = json.loads(d.stdout)["error"] if d.stdout.strip().startswith("{") else {"text": d.stderr}
        errors.append(body)
    assert "unknown_tool" in json.dumps(errors[0]) and "unknown_tool" in json.dumps(errors[1]), errors
    assert "denied" not in json.dumps(errors[0])
