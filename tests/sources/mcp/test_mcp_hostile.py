"""Hostile upstreams (tests/mcp_fixtures/hostile) through the real SDK: each fault stays contained.

Faults with an equivalent test elsewhere are not repeated here: a hang mid-call, a crash
mid-call, a server killed while idle and malformed schemas are in test_mcp_aggregator.py;
client credentials not forwarded over HTTP are in test_mcp_http.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from mcp_fixtures import fake
from mcp_fixtures.asgi import serving
from mcp_fixtures.fake_upstream import build as build_normal
from mcp_fixtures.fake_upstream import tools_for
from mcp_fixtures.hostile import hostile
from mcp_fixtures.hostile.web import failing_calls, status_app
from toolscout.catalog import Catalog
from toolscout.context import CallContext, using
from toolscout.errors import ConfigError, UpstreamUnavailable
from toolscout.sources.mcp.aggregator import REFRESH_COALESCE, Aggregator
from toolscout.sources.mcp.cache import ToolListCache
from toolscout.sources.mcp.config import parse_config
from toolscout.sources.mcp.upstream import BACKOFF_MAX, StderrRelay, backoff_delay
from toolscout.storage import SQLiteStore as Store

TOOLSCOUT = str(Path(sys.executable).with_name("toolscout"))
STORM = 200  # list_changed notifications the tricky server's "storm" tool sends
BIG = 5 * 1024 * 1024  # what the tricky server's "big" tool returns
SECRETS = {"API_KEY": "sk-live-0123456789abcdef", "DB_PASSWORD": "hunter2-but-longer"}


def make(servers: dict[str, Any]) -> Aggregator:
    return Aggregator(parse_config({"mcpServers": servers}), Catalog())


async def until_in_catalog(agg: Aggregator, name: str, timeout: float) -> None:
    """Wait (bounded) for ``name`` to enter the catalog, woken by its change notifications."""
    arrived = asyncio.Event()
    unsubscribe = agg.catalog.subscribe(lambda _change: name in agg.catalog and arrived.set())
    try:
        if name not in agg.catalog:
            await asyncio.wait_for(arrived.wait(), timeout)
    finally:
        unsubscribe()


# -- 1. a slow first start is retried ---------------------------------------------------
async def test_slow_first_start_is_retried_and_its_tools_appear(tmp_path: Path) -> None:
    slow = hostile(
        "slow_first",
        "--marker",
        str(tmp_path / "started"),
        "--first-delay",
        "1.5",
        connectTimeout=0.5,
    )
    agg = make({"slow": slow, "ok": fake("normal")})
    changes: list[Any] = []
    agg.catalog.subscribe(changes.append)
    try:
        with pytest.raises(UpstreamUnavailable, match=r"did not start within 0\.5 s"):
            await agg.refresh("slow")
        status = agg.status()["slow"]
        assert status["state"] == "failed" and status["tools"] == 0 and status["retry_in"] is not None
        assert "did not start within 0.5 s" in status["last_error"]
        assert agg.pending()["slow"].startswith("failed: did not start within 0.5 s; retry in ")
        await agg.refresh("ok")  # the others are served meanwhile
        await until_in_catalog(agg, "slow_echo", 30)
        assert any(
            "slow_echo" in c.added for c in changes
        )  # what makes the MCP server send list_changed
        assert (await agg.catalog.handler("slow_echo")({"text": "late"})).text() == "late"
        assert (
            agg.status()["slow"]["state"] == "ready" and agg.status()["slow"]["last_error"] is None
        )
    finally:
        await agg.aclose()


def test_backoff_schedule_is_jittered_and_capped() -> None:
    assert [backoff_delay(n, lambda: 0.5) for n in (1, 2, 3, 4)] == [0.5, 1.0, 2.0, 4.0]
    assert backoff_delay(1, lambda: 0.0) == pytest.approx(0.4) and backoff_delay(
        1, lambda: 1.0
    ) == pytest.approx(0.6)
    assert backoff_delay(50, lambda: 1.0) == pytest.approx(BACKOFF_MAX * 1.2)
    assert (
        backoff_delay(10_000, lambda: 0.5) == BACKOFF_MAX
    )  # no overflow however long it stays down


# -- 2. cold start: wait until every server listed or failed ------------------------------
async def test_wait_listed_reports_loading_and_failed_servers(tmp_path: Path) -> None:
    slow = fake("normal", delay=60, connectTimeout=0.5)  # slow at every start
    agg = make(
        {"ok": fake("normal"), "slow": slow, "gone": {"command": str(tmp_path / "no-such-binary")}}
    )
    try:
        assert set(agg.pending()) == {"ok", "slow", "gone"}  # nothing listed yet
        assert await agg.wait_listed(0) == agg.pending()  # a zero budget answers at once
        starting = asyncio.ensure_future(agg.start())
        pending = await agg.wait_listed(20)
        assert set(pending) == {"slow", "gone"} and agg.tool_count("ok") == 6
        assert pending["slow"].startswith("failed: did not start within")  # 0.5 s, or a retry's
        assert pending["gone"].startswith("failed: ") and "no-such-binary" in pending["gone"]
        assert set(agg.pending()) == {"slow", "gone"}
        await starting
    finally:
        await agg.aclose()


async def test_wait_listed_is_bounded_and_counts_the_cache_as_listed(tmp_path: Path) -> None:
    servers = {
        "slow": hostile(
            "slow_first", "--marker", str(tmp_path / "m"), "--first-delay", "60", connectTimeout=30
        )
    }
    with Store(tmp_path / "cache.db") as store:
        agg = Aggregator(
            parse_config({"mcpServers": servers}), Catalog(), cache=ToolListCache(store)
        )
        try:
            starting = asyncio.ensure_future(agg.start())
            assert await agg.wait_listed(0.2) == {
                "slow": "starting"
            }  # still starting: bounded wait
            starting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await starting
            ToolListCache(store).save(
                "slow", agg.upstreams["slow"].config.config_hash(), tools_for("normal", False)
            )
            assert agg.load_cached() == ["slow"] and await agg.wait_listed(5) == {}
        finally:
            await agg.aclose()


# -- 3. one deeply nested schema ------------------------------------------------------------
@pytest.mark.parametrize("depth", [130, 1500])
async def test_deeply_nested_schema_never_hangs_or_shows_ready_with_nothing(depth: int) -> None:
    agg = make({"deep": hostile("deep", "--depth", str(depth)), "ok": fake("normal")})
    try:
        async with asyncio.timeout(20):  # the bug waited out the 60 s list timeout
            await agg.start()
        status = agg.status()["deep"]
        assert agg.tool_count("ok") == 6
        if depth == 130:  # parsed leniently: only the bad tool is dropped, with its reason
            assert status["state"] == "ready" and status["tools"] == 2
            assert {"deep_echo", "deep_add"} <= set(agg.catalog.names())
            assert any("too_deep" in s and "nested deeper" in s for s in agg.skipped["deep"])
            assert status["skipped"] == 1 and "too_deep" in status["skipped_tools"][0]
        else:  # too deep even to recover: the list fails at once, with the cause
            assert status["state"] == "failed" and status["tools"] == 0
            assert "could not be parsed" in status["last_error"]
    finally:
        await agg.aclose()


# -- 4. secrets in upstream stderr -------------------------------------------------------------
def test_stderr_relay_prefixes_and_redacts_even_across_chunks() -> None:
    cfg = parse_config({"mcpServers": {"s": {**hostile("leaky"), "env": SECRETS}}}).servers["s"]
    lines: list[str] = []
    relay = StderrRelay("s", cfg, lines.append, max_line=64)
    secret = SECRETS["API_KEY"]
    relay.feed(f"key={secret[:5]}".encode())
    relay.feed(f"{secret[5:]} ok\nsecond line\r\n".encode())
    relay.feed(("y" * 100 + secret + "z" * 100).encode())  # an overlong line, cut into pieces
    relay.close()
    text = "".join(lines)
    assert lines[:2] == ["[s] key=*** ok\n", "[s] second line\n"]
    assert secret not in text.replace("\n[s] ", "") and all(
        line.startswith("[s] ") for line in lines
    )


def test_servers_command_redacts_upstream_stderr(tmp_path: Path) -> None:
    cfg = tmp_path / "servers.json"
    cfg.write_text(json.dumps({"mcpServers": {"leaky": {**hostile("leaky"), "env": SECRETS}}}))
    done = subprocess.run(
        [TOOLSCOUT, "servers", "-c", str(cfg), "--cache", str(tmp_path / "c.db"), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["leaky"]["state"] == "ready"
    assert "[leaky] API_KEY=***" in done.stderr and "[leaky] DB_PASSWORD=***" in done.stderr
    for value in SECRETS.values():
        assert value not in done.stderr and value not in done.stdout


async def test_serve_redacts_upstream_stderr(tmp_path: Path) -> None:
    servers = {"leaky": {**hostile("leaky"), "env": SECRETS}}
    cfg = tmp_path / "servers.json"
    cfg.write_text(json.dumps({"mcpServers": servers}))
    cache = tmp_path / "cache.db"
    with Store(cache) as store:  # cached list: the upstream starts on the first call, for sure
        hash_ = parse_config({"mcpServers": servers}).servers["leaky"].config_hash()
        ToolListCache(store).save("leaky", hash_, tools_for("normal", False))
    params = StdioServerParameters(
        command=TOOLSCOUT, args=["serve", "-c", str(cfg), "--cache", str(cache)]
    )
    with (tmp_path / "stderr.txt").open("w+") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            echoed = await client.call_tool(
                "call_tool", {"name": "leaky_echo", "arguments": {"text": "hi"}}
            )
            assert echoed.content[0].text == "hi"
        errlog.seek(0)
        stderr = errlog.read()  # the gateway has exited: its relays are drained
    assert "[leaky] API_KEY=***" in stderr and "[leaky] DB_PASSWORD=***" in stderr
    for value in SECRETS.values():
        assert value not in stderr


# -- 5. servers --json exits 1 when a server failed ---------------------------------------------
def test_servers_json_exits_1_when_a_server_failed(tmp_path: Path) -> None:
    cfg = tmp_path / "servers.json"
    cfg.write_text(
        json.dumps({"mcpServers": {"ok": fake("normal"), "dead": hostile("exit_start")}})
    )
    done = subprocess.run(
        # --timeout is a bound (it returns once both settled): room for a loaded machine
        [TOOLSCOUT, "servers", "-c", str(cfg), "--cache", str(tmp_path / "c.db"), "--json", "--timeout", "120"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    rows = json.loads(done.stdout)
    assert (
        done.returncode == 1
        and rows["dead"]["state"] == "failed"
        and rows["ok"]["state"] == "ready"
    )
    assert "[dead] fatal: no configuration found" in done.stderr


# -- 6. URL credentials and an Authorization header --------------------------------------------
def test_url_credentials_with_an_authorization_header_is_a_config_error() -> None:
    server = {
        "url": "https://bob:pw-1234567@mcp.example.test/mcp",
        "headers": {"authorization": "Bearer tok-98765"},
    }
    with pytest.raises(ConfigError) as info:
        parse_config({"mcpServers": {"remote": server}})
    text = f"{info.value} {info.value.hint}"
    assert "server 'remote'" in text and "'url'" in text and "Authorization" in text
    assert "pw-1234567" not in text and "tok-98765" not in text
    parse_config(
        {"mcpServers": {"remote": {**server, "headers": {"X-Key": "k"}}}}
    )  # alone, each is fine


# -- 7. upstream HTTP errors say which and what to do ---------------------------------------------
@pytest.mark.parametrize(
    ("status", "expected"),
    [(401, ("HTTP 401", "credentials", "headers")), (500, ("HTTP 500", "retry later", "logs"))],
)
async def test_upstream_http_errors_name_the_status_and_the_fix(
    status: int, expected: tuple[str, ...]
) -> None:
    async with serving(status_app(status)) as base:
        agg = make(
            {
                "web": {
                    "url": f"{base}/mcp",
                    "headers": {"X-Api-Key": "key-5555-secret"},
                    "connectTimeout": 10,
                }
            }
        )
        try:
            await agg.start()
            row = agg.status()["web"]
            with pytest.raises(UpstreamUnavailable) as info:
                await agg.upstreams["web"].call("echo", {})
        finally:
            await agg.aclose()
    assert row["state"] == "failed"
    for text in (row["last_error"], f"{info.value} {info.value.hint}"):
        assert "Server returned an error response" not in text and "key-5555-secret" not in text
    for word in expected:
        assert word in row["last_error"]


@pytest.mark.parametrize(
    ("status", "expected"), [(401, "HTTP 401 Unauthorized"), (503, "HTTP 503 Service Unavailable")]
)
async def test_http_error_during_a_call_names_the_status(status: int, expected: str) -> None:
    upstream = build_normal("normal").streamable_http_app(host="127.0.0.1")
    async with serving(failing_calls(upstream, status)) as base:
        agg = make({"web": {"url": f"{base}/mcp"}})
        try:
            await agg.start()
            assert agg.tool_count("web") == 6  # listing works; only calls fail
            with pytest.raises(UpstreamUnavailable) as info:
                await agg.catalog.handler("web_echo")({"text": "x"})
        finally:
            await agg.aclose()
    assert expected in str(info.value) and "error response" not in str(info.value)
    assert ("credentials" if status == 401 else "logs") in str(info.value.hint)


# -- 8. progress and cancellation, upstream side ------------------------------------------------
async def test_upstream_progress_reaches_the_calls_reporter_and_cancel_reaches_the_upstream() -> (
    None
):
    agg = make({"t": hostile("tricky")})
    seen: list[tuple[float, float | None, str | None]] = []
    started = asyncio.Event()

    async def report(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))
        if message == "started":
            started.set()

    try:
        await agg.start()
        with using(CallContext(progress=report)):
            done = await agg.catalog.handler("t_steps")({})
            assert done.text() == "done"
            assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
            waiting = asyncio.ensure_future(agg.catalog.handler("t_wait_cancel")({}))
            await asyncio.wait_for(started.wait(), 10)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        assert (
            await agg.catalog.handler("t_cancel_seen")({})
        ).text() == "yes"  # notifications/cancelled
        assert (await agg.catalog.handler("t_echo")({"text": "after"})).text() == "after"
    finally:
        await agg.aclose()


# -- 9. faults that already hold ------------------------------------------------------------------
async def test_server_exiting_at_start_fails_alone() -> None:
    agg = make({"dead": hostile("exit_start"), "ok": fake("normal")})
    try:
        await agg.start()
        status = agg.status()
        assert status["dead"]["state"] == "failed" and status["dead"]["last_error"]
        assert status["ok"]["state"] == "ready"
        assert (await agg.catalog.handler("ok_echo")({"text": "fine"})).text() == "fine"
    finally:
        await agg.aclose()


async def test_garbage_on_stdout_is_ignored() -> None:
    agg = make({"noisy": hostile("garbage")})
    try:
        await agg.start()
        assert agg.tool_count("noisy") == 6 and agg.status()["noisy"]["state"] == "ready"
        assert (await agg.catalog.handler("noisy_echo")({"text": "x"})).text() == "ran echo"
        assert (await agg.catalog.handler("noisy_add")({"a": 1, "b": 2})).text() == "ran add"
    finally:
        await agg.aclose()


async def test_list_changed_storm_costs_a_bounded_number_of_refreshes() -> None:
    agg = make({"t": hostile("tricky")})
    try:
        await agg.start()
        loop = asyncio.get_running_loop()
        began = loop.time()
        assert (await agg.catalog.handler("t_storm")({})).text() == "stormed"
        storm = loop.time() - began  # every notification was sent before this answer
        up = agg.upstreams["t"]
        if up._tasks:  # the refreshes the storm caused, all spawned before its answer arrived
            await asyncio.wait_for(asyncio.gather(*list(up._tasks), return_exceptions=True), 20)
        lists = int((await agg.catalog.handler("t_lists")({})).text())
        # the first list, one per coalescing window the storm lasted, one queued after it
        assert 2 <= lists <= 3 + storm / REFRESH_COALESCE < STORM
        assert agg.status()["t"]["state"] == "ready" and agg.tool_count("t") == 7
    finally:
        await agg.aclose()


async def test_five_megabyte_result_passes_through() -> None:
    agg = make({"t": hostile("tricky"), "ok": fake("normal")})
    try:
        await agg.start()
        result, other = await asyncio.gather(
            agg.catalog.handler("t_big")({}), agg.catalog.handler("ok_echo")({"text": "meanwhile"})
        )
        assert result.ok and len(result.text()) == BIG and other.text() == "meanwhile"
        assert (await agg.catalog.handler("t_echo")({"text": "after"})).text() == "after"
    finally:
        await agg.aclose()


async def test_gateway_environment_is_not_forwarded_to_stdio_upstreams(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TOOLSCOUT_TOKEN", "gateway-token-123")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-gateway-456")
    agg = make({"up": fake("normal", env={"UPSTREAM_OWN": "mine"})})
    try:
        await agg.start()
        probe = agg.catalog.handler("up_env_probe")
        assert (await probe({"var": "UPSTREAM_OWN"})).text() == "set"
        assert (await probe({"var": "TOOLSCOUT_TOKEN"})).text() == "unset"
        assert (await probe({"var": "OPENAI_API_KEY"})).text() == "unset"
    finally:
        await agg.aclose()
