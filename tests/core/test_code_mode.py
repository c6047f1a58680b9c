"""Code mode: a program calls tools as functions in the pydantic-monty sandbox. Every call
goes through the gateway with the caller's context; everything that goes wrong (escape
attempts, limits, bad calls) comes back as a structured error naming the line, and the
gateway keeps serving. One gateway (one sandbox pool) for the whole module."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Iterator
from typing import Any

import pytest

from _wait import until
from toolscout import Catalog, Session, Tool, formats
from toolscout.access.approval import Decision
from toolscout.accounting.tokens import count_tool_tokens
from toolscout.calls import UpstreamResult
from toolscout.codemode.runner import CodeLimits, code_runner, execute_tool, python_name
from toolscout.context import CallContext, Principal, current
from toolscout.gateway import Gateway
from toolscout.request import CallRequest

pytest.importorskip("pydantic_monty")

OBJ: dict[str, Any] = {"type": "object"}
LIMITS = CodeLimits(wall_time=5.0, cpu_time=0.5, memory=32 * 2**20, tool_calls=20, output=400, recursion=100)
STATE: dict[str, Any] = {}


def _catalog() -> Catalog:
    cat = Catalog()

    @cat.tool(category="issues")
    def list_issues(repo: str, label: str | None = None) -> list[dict[str, Any]]:
        """List the open issues of a repository, optionally only those with a label."""
        issues = [{"number": i, "comments": i * 3, "labels": ["bug"] if i % 2 else ["docs"]} for i in range(1, 7)]
        return [i for i in issues if label is None or label in i["labels"]]

    @cat.tool(category="issues")
    def add_comment(number: int, body: str) -> str:
        """Add a comment to an issue."""
        return f"commented on #{number}"

    async def whoami(args: dict[str, Any]) -> dict[str, Any]:
        ctx = current()
        return {"principal": ctx.principal.id, "session": ctx.session_id}

    async def hang(args: dict[str, Any]) -> str:
        STATE["hang_started"] = True
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            STATE["hang_cancelled"] = True
            raise
        return "never"

    def broken(args: dict[str, Any]) -> str:
        raise ValueError("disk on fire")

    async def steps(args: dict[str, Any]) -> str:
        report = current().progress
        for i in (1, 2):
            if report is not None:
                await report(i, 2, f"step {i}")
        return "stepped"

    cat.add(Tool("whoami", "Tell who is calling.", OBJ), handler=whoami)
    cat.add(Tool("steps", "Report progress twice.", OBJ), handler=steps)
    cat.add(Tool("mail.send", "Send mail through the relay.", OBJ), handler=lambda a: "relay")
    cat.add(Tool("mail_send", "Send mail directly.", OBJ), handler=lambda a: "direct")
    cat.add(Tool("big_listing", "A large listing.", OBJ), handler=lambda a: [{"path": f"/data/file-{i}.csv", "size": i} for i in range(20_000)])
    cat.add(Tool("hang", "Wait until cancelled.", OBJ), handler=hang)
    cat.add(Tool("broken", "Always fails.", OBJ), handler=broken)
    cat.add(Tool("drop_table", "Delete a database table.", OBJ, permission="dangerous"), handler=lambda a: "dropped")
    cat.add(Tool("secret.tool", "Only admins see this.", OBJ), handler=lambda a: "secret")
    cat.add(Tool("weather-now", "Current weather in a city.", OBJ), handler=lambda a: {"temp_c": 21})
    upstream_error = {"content": [{"type": "text", "text": "upstream says no"}], "isError": True}
    cat.add(Tool("remote_fail", "An upstream tool that answers isError.", OBJ), handler=lambda a: UpstreamResult.of("remote_fail", upstream_error))
    return cat


GATEWAY = Gateway(_catalog())
RUNNER = code_runner(GATEWAY, LIMITS)
USER = CallContext(session_id="conv-1", principal=Principal("alice", "token"), allow=lambda t: t.name != "secret.tool")


@pytest.fixture(scope="module", autouse=True)
def _pool() -> Iterator[None]:
    yield
    asyncio.run(RUNNER.aclose())


async def run(code: str, ctx: CallContext = USER, **limits: Any) -> Any:
    chosen = dataclasses.replace(LIMITS, **limits) if limits else None
    return await RUNNER.run({"code": code}, ctx, limits=chosen)


async def still_serving() -> None:
    direct = await GATEWAY.execute(CallRequest("add_comment", {"number": 1, "body": "x"}), USER)
    assert direct.ok and direct.text() == "commented on #1"
    again = await run("1 + 1")
    assert again.ok and again.text() == "2"


async def test_a_program_calls_tools_and_only_its_output_comes_back() -> None:
    result = await run(
        "bugs = await list_issues(repo='acme/app', label='bug')\n"
        "print(len(bugs), 'bugs')\n"
        "total = sum(i['comments'] for i in bugs)\n"
        "await add_comment(number=bugs[0]['number'], body=f'{total} comments')\n"
        "{'total': total, 'me': (await whoami())['principal']}"
    )
    assert result.ok, result.text()
    assert result.text() == '3 bugs\n{"total": 27, "me": "alice"}'
    assert result.structured["tool_calls"] == 3 and result.structured["result"] == {"total": 27, "me": "alice"}


async def test_find_tools_inside_and_names_that_are_not_identifiers() -> None:
    result = await run(
        "found = await find_tools('current weather in a city', limit=3)\n"
        "top = found[0]\n"
        "w = await weather_now()\n"
        "[top['name'], top['tool'], w['temp_c'], await call_tool('weather-now', {})]"
    )
    assert result.ok, result.text()
    assert json.loads(result.text()) == ["weather_now", "weather-now", 21, {"temp_c": 21}]
    assert python_name("class") == "_class" and python_name("9lives") == "_9lives"


@pytest.mark.parametrize(
    ("code", "code_expected", "detail", "line"),
    [
        ("x = 1\nimport os\nos.listdir('/')", "program_error", "Permission", 3),
        ("import subprocess", "program_error", "subprocess", 1),
        ("open('/etc/passwd').read()", "program_error", "Permission", 1),
        ("b = __builtins__\nb.open", "program_error", "__builtins__", 1),
        ("__import__('os').system('true')", "program_error", "__import__", 1),
        ("import os\nos.environ['HOME']", "program_error", "environ", 2),
        ("while True:\n    pass", "program_limit", "computation", None),
        ("x = 'a' * (2 ** 40)", "program_limit", "MiB", 1),
        ("for i in range(10000):\n    await add_comment(number=i, body='x')", "program_limit", "tool calls", 2),
        (
            "for i in range(10000):\n    try:\n        await add_comment(number=i, body='x')\n    except RuntimeError:\n        pass",
            "program_limit",
            "tool calls",
            None,
        ),
        ("def f(n):\n    return f(n + 1)\nf(0)", "program_limit", "recursed", 2),
    ],
    ids=["import-os", "import-subprocess", "open", "builtins", "dunder-import", "environ", "infinite-loop",
         "huge-allocation", "10000-calls", "10000-calls-caught", "deep-recursion"],
)
async def test_escape_attempts_are_stopped_with_a_clear_error(code: str, code_expected: str, detail: str, line: int | None) -> None:
    result = await run(code)
    assert not result.ok and result.error is not None
    assert result.error.code == code_expected, result.text()
    assert detail in result.error.message
    if line is not None:
        assert result.error.details["line"] == line
    assert result.error.hint
    await still_serving()


@pytest.mark.parametrize(
    ("code", "code_expected", "line", "more"),
    [
        ("x = 1\ny = (", "program_error", 2, "syntax error"),
        ("x = 1\nawait add_coment(number=1, body='x')", "unknown_tool", 2, "add_comment"),
        ("await secret_tool()", "unknown_tool", 1, "secret_tool"),
        ("x = 1\n\nawait add_comment(number='one', body='x')", "invalid_arguments", 3, "/number"),
        ("await broken()", "tool_error", 1, "disk on fire"),
        ("x = 2\nawait remote_fail()", "tool_error", 2, "upstream says no"),
        ("await call_tool('secret.tool')", "unknown_tool", 1, "secret.tool"),  # hidden: as absent as an unknown one
        ("a = [1]\na[5]", "program_error", 2, "IndexError"),
    ],
)
async def test_errors_are_data_naming_the_line(code: str, code_expected: str, line: int, more: str) -> None:
    result = await run(code)
    assert not result.ok and result.error is not None
    assert result.error.code == code_expected, result.text()
    assert result.error.details["line"] == line
    assert more in result.text()
    if code_expected == "unknown_tool" and "coment" in code:
        assert result.error.details["suggestions"][0] == "add_comment"


async def test_a_program_may_catch_a_failed_call() -> None:
    result = await run("try:\n    await broken()\nexcept RuntimeError as e:\n    print('caught', str(e)[:10])\n'ok'")
    assert result.ok and result.text() == "caught tool_error\nok"


async def test_output_is_bounded_and_says_it_was_cut() -> None:
    result = await run("for i in range(100):\n    print('line', i, 'x' * 20)\n'done'")
    assert result.ok
    assert len(result.text()) < LIMITS.output + 200
    assert "[output cut:" in result.text() and result.structured["cut"] > 0


async def test_wall_time_stops_a_program_waiting_on_a_tool_and_cancels_the_call() -> None:
    STATE.clear()
    result = await run("await hang()", wall_time=0.5)
    assert result.error is not None and result.error.code == "program_limit"
    assert result.error.details["limit"] == "wall_time"
    assert await until(lambda: STATE.get("hang_cancelled"))
    await still_serving()


async def test_cancelling_execute_cancels_the_tool_calls_in_flight() -> None:
    STATE.clear()
    task = asyncio.ensure_future(run("await hang()"))
    assert await until(lambda: STATE.get("hang_started"))
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await until(lambda: STATE.get("hang_cancelled"))
    await still_serving()


async def test_an_approval_prompt_pauses_the_program_and_its_answer_is_kept() -> None:
    asked: list[tuple[str, dict[str, Any]]] = []
    answer = asyncio.Event()
    verdict: list[Decision] = []

    async def approve(tool: Tool, arguments: dict[str, Any]) -> Decision:
        asked.append((tool.name, arguments))
        await answer.wait()  # the person deciding: the program waits here
        return verdict[0]

    ctx = USER.replace(approve=approve)
    task = asyncio.ensure_future(run("print('before')\nr = await drop_table(name='t')\nprint(r)", ctx, wall_time=60))
    assert await until(lambda: asked)
    assert asked == [("drop_table", {"name": "t"})] and not task.done()
    verdict.append(Decision(True))
    answer.set()
    done = await task
    assert done.ok and done.text() == "before\ndropped"

    denied = await run("await drop_table(name='t')", USER.replace(approve=lambda tool, args: Decision.deny("not today")))
    assert denied.error is not None and denied.error.code == "approval_denied" and denied.error.details["line"] == 1


async def test_session_code_mode_lists_execute_and_runs_through_the_session_context() -> None:
    session = Session(GATEWAY, session_id="conv-2", code_mode=LIMITS, threshold=3, allow=lambda t: t.name != "secret.tool")
    session.tools("openai")
    assert session.tool_names()[:2] == ["find_tools", "execute"]
    outcome = await session.ahandle("execute", {"code": "(await whoami())['session']"})
    assert outcome.ok and outcome.text() == "conv-2"
    hidden = await session.ahandle("execute", {"code": "await call_tool('secret.tool')"})
    assert hidden.error is not None and hidden.error.code == "unknown_tool"  # hidden means absent
    bad = await session.ahandle("execute", {"program": "1"})
    assert bad.error is not None and bad.error.code == "invalid_request"
    # below the threshold every tool is listed, and execute with them
    small = Session(GATEWAY, code_mode=True, threshold=100)
    assert small.tools("openai")[0]["function"]["name"] == "execute" and small.tool_names()[0] == "execute"
    assert "execute" not in Session(GATEWAY, threshold=3).tool_names()


def test_the_execute_definition_is_small() -> None:
    tool = execute_tool(GATEWAY.catalog.categories())
    assert "issues" in tool.description and "find_tools" in tool.description
    assert count_tool_tokens([formats.render(tool, "openai")]) < 220


def test_preselect_reveals_the_top_tools_before_the_first_turn() -> None:
    session = Session(GATEWAY, threshold=3)
    assert session.preselect("") == () and session.preselect("   ", 3) == ()
    first = session.preselect("add a comment to issue 12", k=3)
    assert first and first[0] == "add_comment"
    before = session.tools("openai")
    assert session.preselect("add a comment to issue 12", k=3) == ()  # never twice
    session.handle("find_tools", {"query": "current weather in a city"})
    after = session.tools("openai")
    assert after[: len(before)] == before  # append-only: the cached prefix survives
    assert session.tool_names().count("add_comment") == 1 and len(after) > len(before)


async def test_progress_of_the_whole_program_only_grows() -> None:
    seen: list[tuple[float, str | None]] = []

    async def report(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message))

    done = await run("import asyncio\nawait steps()\nawait asyncio.gather(steps(), steps())\n'ok'", USER.replace(progress=report))
    assert done.ok and done.text() == "ok"
    values = [p for p, _ in seen]
    assert values == sorted(set(values)) and len(values) == 9  # 6 tool steps + 3 finished calls
    assert sum(1 for _, m in seen if m and m.startswith("steps: done")) == 3


async def test_a_large_intermediate_result_never_reaches_the_model() -> None:
    listing = await GATEWAY.execute(CallRequest("big_listing", {}), USER)
    assert len(listing.text()) > 800_000  # what a direct call would put in the model's context
    done = await run("files = await big_listing()\nsum(f['size'] for f in files if f['path'].endswith('.csv'))")
    assert done.ok and done.text() == str(sum(range(20_000)))


async def test_two_tools_with_one_spelling_are_both_reachable() -> None:
    done = await run(
        "found = {t['tool']: t['name'] for t in await find_tools('select:mail.send,mail_send')}\n"
        "[found, await mail_send(), await call_tool('mail_send'), await call_tool('mail.send')]"
    )
    assert done.ok, done.text()
    assert json.loads(done.text()) == [{"mail.send": "mail_send", "mail_send": None}, "relay", "direct", "relay"]


def test_a_gateway_owns_its_one_runner() -> None:
    """No registry beside the gateway: the runner (one sandbox pool) is the gateway's own,
    shared by its sessions and never by another gateway's."""
    other = Gateway(Catalog())
    assert other.code_runner is None  # nothing made before a first program
    mine = code_runner(other)
    assert other.code_runner is mine and code_runner(other, CodeLimits(workers=5)) is mine
    assert code_runner(GATEWAY) is RUNNER and RUNNER is not mine
