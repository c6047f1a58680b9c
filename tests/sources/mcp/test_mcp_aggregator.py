"""Upstreams -> catalog, against scripted upstream servers (tests/mcp_fixtures)."""

from __future__ import annotations

import asyncio
import json
import os
import signal

import pytest

from _wait import until
from mcp_fixtures import fake
from toolscout.accounting import telemetry
from toolscout.catalog import Catalog
from toolscout.errors import ToolTimeout, UpstreamUnavailable
from toolscout.model import CallResult, DeferPolicy
from toolscout.sources.mcp.aggregator import Aggregator
from toolscout.sources.mcp.cache import ToolListCache
from toolscout.sources.mcp.config import parse_config
from toolscout.storage import SQLiteStore as Store


def make(servers: dict, store: Store | None = None) -> Aggregator:
    cache = ToolListCache(store) if store is not None else None
    return Aggregator(parse_config({"mcpServers": servers}), Catalog(), cache=cache)


async def test_aggregates_namespaces_skips_malformed_and_pages() -> None:
    agg = make(
        {
            "normal": fake("normal", alwaysLoad=["echo"]),
            "bad": fake("malformed", prefix="b"),
            "big": fake("many", prefix=""),
        }
    )
    try:
        await agg.start()
        names = set(agg.catalog.names())
        assert {"normal_echo", "normal_add", "b_good_one", "b_good_two"} <= names
        assert "b_bad_schema" not in names and "b_bad_type" not in names
        assert len(agg.skipped["bad"]) == 4
        assert agg.tool_count("big") == 10_000 and "op_09999" in names
        echo = agg.catalog.get("normal_echo")
        assert echo.original_name == "echo" and echo.source_id == "normal"
        assert echo.annotations.read_only is True and echo.defer is DeferPolicy.NEVER
        assert agg.catalog.get("normal_add").defer is DeferPolicy.AUTOMATIC
        assert agg.catalog.get("op_00001").original_name is None
        assert {s["state"] for s in agg.status().values()} == {"ready"}
    finally:
        await agg.aclose()


async def test_a_servers_description_reaches_its_tools_as_search_evidence() -> None:
    # the server's own serverInfo description, else nothing; the operator's description wins
    agg = make({"normal": fake("normal"), "said": fake("normal", prefix="s", description="Ledger and invoices"), "quiet": fake("errors")})
    try:
        await agg.start()
        assert agg.catalog.get("normal_add").meta["server_description"] == "Arithmetic and echoes for tests"
        assert agg.catalog.get("s_add").meta["server_description"] == "Ledger and invoices"
        quiet = [n for n in agg.catalog.names() if n.startswith("quiet_")]
        assert quiet and all("server_description" not in agg.catalog.get(n).meta for n in quiet)
    finally:
        await agg.aclose()


async def test_calls_forward_original_name_and_pass_results_through() -> None:
    agg = make({"normal": fake("normal")})
    try:
        await agg.start()
        add = await agg.catalog.handler("normal_add")({"a": 2, "b": 5})
        assert isinstance(add, CallResult) and add.ok
        assert add.structured == {"sum": 7}
        assert add.value == {"content": [{"type": "text", "text": "7"}], "structuredContent": {"sum": 7}}
        fail = await agg.catalog.handler("normal_fail")({})
        assert not fail.ok and fail.value["isError"] is True and fail.text() == "it failed on purpose"
        # list_changed from the upstream refreshes its tools incrementally
        changes = []
        agg.catalog.subscribe(changes.append)
        await agg.catalog.handler("normal_grow")({})
        assert await until(lambda: "normal_extra" in agg.catalog, 10)
        assert changes[-1].added == ("normal_extra",) and changes[-1].removed == ()
    finally:
        await agg.aclose()


async def test_name_reuse_without_prefix_keeps_first_and_reports_rest() -> None:
    agg = make({"one": fake("normal", prefix=""), "two": fake("normal", prefix="")})
    try:
        await agg.refresh("one")
        await agg.refresh("two")
        assert agg.catalog.get("echo").source_id == "one"
        assert agg.tool_count("two") == 0
        assert any("already used by 'one'" in s for s in agg.skipped["two"])
    finally:
        await agg.aclose()


async def test_cache_serves_tools_before_any_server_starts(tmp_path) -> None:
    servers = {"normal": fake("normal")}
    with Store(tmp_path / "cache.db") as store:
        first = make(servers, store)
        try:
            await first.start()
        finally:
            await first.aclose()
        second = make(servers, store)
        assert second.load_cached() == ["normal"]
        assert "normal_echo" in second.catalog and second.from_cache["normal"]
        assert second.status()["normal"]["state"] == "idle"  # lazy: nothing started
        try:
            await second.start(lazy=True)
            assert second.status()["normal"]["state"] == "idle"
            echoed = await second.catalog.handler("normal_echo")({"text": "hi"})  # starts it now
            assert echoed.text() == "hi" and second.status()["normal"]["state"] == "ready"
        finally:
            await second.aclose()
        changed = make({"normal": {**fake("normal"), "args": [*fake("normal")["args"], "--delay", "0"]}}, store)
        assert changed.load_cached() == []  # another config: the old list is not trusted


async def test_crash_mid_call_then_reconnect_while_others_keep_serving() -> None:
    agg = make({"crashy": fake("crash"), "ok": fake("normal")})
    try:
        await agg.start()
        with pytest.raises(UpstreamUnavailable):
            await agg.catalog.handler("crashy_crash")({})
        assert agg.status()["crashy"]["state"] == "failed"
        assert (await agg.catalog.handler("ok_echo")({"text": "still"})).text() == "still"
        assert "crashy_echo" in agg.catalog  # a down server stays searchable
        await until(lambda: agg.status()["crashy"]["state"] == "ready", 20)  # the backoff reconnect brings it back
        assert (await agg.catalog.handler("crashy_echo")({"text": "back"})).text() == "back"
    finally:
        await agg.aclose()


async def test_hung_upstream_times_out_without_blocking_others() -> None:
    agg = make({"stuck": fake("hang", timeout=1.0), "ok": fake("normal")})
    try:
        await agg.start()
        hung = asyncio.ensure_future(agg.catalog.handler("stuck_hang")({}))
        quick = await agg.catalog.handler("ok_echo")({"text": "fast"})
        assert quick.text() == "fast" and not hung.done()
        same_server = await agg.catalog.handler("stuck_echo")({"text": "meanwhile"})
        assert same_server.text() == "meanwhile"
        with pytest.raises(ToolTimeout):
            await hung
    finally:
        await agg.aclose()


async def test_slow_start_fails_fast_and_other_servers_are_ready() -> None:
    agg = make({"slow": fake("normal", delay=5, connectTimeout=0.5), "ok": fake("normal")})
    try:
        await agg.start()
        status = agg.status()
        assert status["ok"]["state"] == "ready" and status["ok"]["tools"] == 6
        assert status["slow"]["state"] in ("failed", "connecting")  # connecting: retried already
        assert "did not start" in status["slow"]["last_error"]
        with pytest.raises(UpstreamUnavailable, match="slow"):
            await agg.upstreams["slow"].call("echo", {"text": "x"})
    finally:
        await agg.aclose()


async def test_unreachable_http_upstream_leaks_no_secret(caplog: pytest.LogCaptureFixture) -> None:
    url = "http://carol:pa55word99@127.0.0.1:9/mcp?token=zz-secret-77"
    agg = make({"web": {"url": url, "headers": {"X-Api-Key": "hdr-secret-55"}, "connectTimeout": 5}})
    try:
        await agg.start()
        status = agg.status()["web"]
        assert status["state"] == "failed" and status["last_error"]
        with pytest.raises(UpstreamUnavailable) as info:
            await agg.upstreams["web"].call("echo", {})
        shown = " ".join([json.dumps(status), str(info.value), caplog.text])
        for secret in ("pa55word99", "zz-secret-77", "hdr-secret-55"):
            assert secret not in shown
    finally:
        await agg.aclose()


async def test_upstream_killed_while_idle_is_restarted_on_next_call() -> None:
    agg = make({"crashy": fake("crash")})
    try:
        await agg.start()
        pid = int((await agg.catalog.handler("crashy_pid")({})).text())
        os.kill(pid, signal.SIGKILL)
        assert await until(lambda: agg.status()["crashy"]["state"] == "failed", 10)  # the closed pipe is noticed
        again = await agg.catalog.handler("crashy_echo")({"text": "revived"})
        assert again.text() == "revived" and int((await agg.catalog.handler("crashy_pid")({})).text()) != pid
    finally:
        await agg.aclose()


async def test_a_calls_trace_context_goes_upstream_in_its_meta() -> None:
    traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    agg = make({"normal": fake("normal")})
    try:
        await agg.start()
        seen = agg.catalog.handler("normal_headers_seen")
        with telemetry.incoming({"traceparent": traceparent}):
            traced = await seen({})
        plain = await seen({})
    finally:
        await agg.aclose()
    assert json.loads(traced.value["content"][0]["text"])["_meta.traceparent"] == traceparent
    assert "_meta.traceparent" not in json.loads(plain.value["content"][0]["text"])
