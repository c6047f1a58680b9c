"""Declared tools that run (issue 24, item 1): a declaration names its handler (a Python
function, an HTTP request template, or the upstream tool it describes), checked when the
source loads; one that names none is metadata only everywhere and is refused before any
approval is asked."""

from __future__ import annotations

import json
import textwrap
import uuid
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcp_fixtures import fake
from mcp_fixtures.asgi import serving
from toolscout.catalog import Catalog
from toolscout.errors import ConfigError
from toolscout.gateway import Gateway
from toolscout.request import CallRequest
from toolscout.server.mcp import GatewayServer
from toolscout.sources.configured import ConfiguredSources
from toolscout.sources.mcp.aggregator import Aggregator
from toolscout.sources.mcp.config import parse_config

SCHEMA = {"type": "object", "properties": {"service": {"type": "string"}, "lines": {"type": "integer"}}, "required": ["service"]}


def _write(tmp_path: Path, tools: dict[str, Any], module: str | None = None) -> tuple[Path, str]:
    name = f"opsmod_{uuid.uuid4().hex[:8]}"
    if module is not None:
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(module))
    text = json.dumps(tools).replace("MODULE", name)
    path = tmp_path / "tools.json"
    path.write_text(text)
    return path, name


def _sources(tmp_path: Path, tools: dict[str, Any], module: str | None = None, **options: Any) -> Gateway:
    path, _ = _write(tmp_path, tools, module)
    config = parse_config({"declarations": {"ops": {"path": str(path), **options}}})
    catalog = Catalog()
    ConfiguredSources(config, catalog).load(strict=True)
    return Gateway(catalog)


OPS = '''
import asyncio

def tail_logs(service: str, lines: int = 2) -> str:
    return "\\n".join(f"{service} line {i}" for i in range(lines))

async def restart(service: str) -> dict:
    await asyncio.sleep(0)
    return {"restarted": service}
'''


@pytest.mark.asyncio
async def test_a_declared_handler_is_imported_and_called(tmp_path: Path) -> None:
    tools = {
        "tail_logs": {"desc": "Show a service's last log lines.", "input_schema": SCHEMA, "handler": "MODULE:tail_logs"},
        "restart": {"desc": "Restart a service.", "input_schema": SCHEMA, "handler": "MODULE:restart"},
    }
    gateway = _sources(tmp_path, tools, OPS)
    logs = await gateway.execute(CallRequest.parse("ops_tail_logs", {"service": "web", "lines": 2}))
    assert logs.ok and logs.text() == "web line 0\nweb line 1"
    restarted = await gateway.execute(CallRequest.parse("ops_restart", {"service": "db"}))
    assert restarted.ok and restarted.structured == {"restarted": "db"}


@pytest.mark.parametrize(
    ("entry", "field", "words"),
    [
        ({"handler": "MODULE:nope"}, "tail_logs.handler", "has no attribute 'nope'"),
        ({"handler": "no_such_module_x:run"}, "tail_logs.handler", "cannot import no_such_module_x"),
        ({"handler": "not a spec"}, "path", "handler must be 'package.module:function'"),
        ({"upstream": "ghost/tool"}, "tail_logs.upstream", "no enabled server named 'ghost'"),
        ({"http": {"url": "ftp://x"}}, "path", "http.url must start with http://"),
        ({"http": {"url": "http://x/", "headers": {"Authorization": "Bearer ${UNSET_VAR_FOR_TEST}"}}},
         "tail_logs.http.headers.Authorization", "UNSET_VAR_FOR_TEST is not set"),
        ({"handler": "MODULE:tail_logs", "upstream": "up/echo"}, "path", "give one of handler, http or upstream"),
    ],
)
def test_a_binding_that_cannot_be_made_is_a_config_error(tmp_path: Path, entry: dict[str, Any], field: str, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _sources(tmp_path, {"tail_logs": {"desc": "Show logs.", "input_schema": SCHEMA, **entry}}, OPS)
    assert caught.value.details.get("field") == field and words in caught.value.message


@pytest.mark.asyncio
async def test_an_http_template_calls_the_users_own_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, Any]] = []

    async def record(request: Request) -> JSONResponse:
        body = (await request.body()).decode()
        seen.append({"method": request.method, "path": request.url.path, "query": dict(request.query_params),
                     "auth": request.headers.get("authorization"), "body": json.loads(body) if body else None})
        return JSONResponse({"ok": True}, status_code=200 if request.url.path != "/fail" else 503)

    app = Starlette(routes=[Route("/{path:path}", record, methods=["GET", "POST"])])
    monkeypatch.setenv("OPS_TOKEN", "s3cret-token")
    async with serving(app) as url:
        tools = {
            "tail_logs": {"desc": "Show logs.", "input_schema": SCHEMA,
                          "http": {"url": url + "/logs/{service}", "headers": {"Authorization": "Bearer ${OPS_TOKEN}"}}},
            "restart": {"desc": "Restart.", "input_schema": SCHEMA,
                        "http": {"method": "POST", "url": url + "/restart", "body": {"name": "{service}", "n": "{lines}", "note": "by {service}"}}},
            "broken": {"desc": "Fails.", "http": {"url": url + "/fail"}},
        }
        gateway = _sources(tmp_path, tools)
        got = await gateway.execute(CallRequest.parse("ops_tail_logs", {"service": "web/api", "lines": 5}))
        assert got.ok and got.structured == {"ok": True}
        posted = await gateway.execute(CallRequest.parse("ops_restart", {"service": "db", "lines": 3}))
        assert posted.ok
        failed = await gateway.execute(CallRequest.parse("ops_broken", {}))
        assert failed.error is not None and failed.error.code == "tool_error" and "HTTP 503" in failed.error.message
    assert seen[0] == {"method": "GET", "path": "/logs/web/api", "query": {"lines": "5"}, "auth": "Bearer s3cret-token", "body": None}
    assert seen[1]["body"] == {"name": "db", "n": 3, "note": "by db"} and seen[1]["method"] == "POST"


@pytest.mark.asyncio
async def test_a_declaration_describes_an_upstream_tool(tmp_path: Path) -> None:
    path, _ = _write(tmp_path, {"say": {"desc": "Say something back.", "input_schema": {
        "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}, "upstream": "up/echo"}})
    config = parse_config({"mcpServers": {"up": {**fake("normal"), "allow": ["add"]}}, "declarations": {"ops": {"path": str(path)}}})
    aggregator = Aggregator(config, Catalog())
    aggregator.load_cached()
    try:
        gateway = Gateway(aggregator.catalog, call_timeout=None)
        result = await gateway.execute(CallRequest.parse("ops_say", {"text": "hello"}))
        assert result.ok and result.text() == "hello"  # the upstream's own echo ran
    finally:
        await aggregator.aclose()


def _accepting(seen: list[str]) -> Any:
    async def callback(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        seen.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True})

    return callback


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_metadata_only_is_never_listed_nor_offered_for_approval(tmp_path: Path, mode: str) -> None:
    tools = {
        "tail_logs": {"desc": "Show a service's last log lines.", "input_schema": SCHEMA, "handler": "MODULE:tail_logs"},
        "drop_database": {"desc": "Drop a database.", "permission": "dangerous"},
    }
    path, _ = _write(tmp_path, tools, OPS)
    config = parse_config({"declarations": {"ops": {"path": str(path), "alwaysLoad": ["*"]}}})
    aggregator = Aggregator(config, Catalog())
    aggregator.load_cached()
    assert aggregator.status()["ops"]["metadata_only"] == 1
    server = GatewayServer(Gateway(aggregator.catalog, approve_kinds="dangerous"), aggregator)
    asked: list[str] = []
    async with Client(server.lowlevel, mode=mode, elicitation_callback=_accepting(asked)) as client:
        listed = {t.name for t in (await client.list_tools()).tools}
        assert "ops_tail_logs" in listed and "ops_drop_database" not in listed
        found = await client.call_tool("find_tools", {"query": "drop a database"})
        assert "ops_drop_database" in found.content[0].text  # still found: it is described
        refused = await client.call_tool("call_tool", {"name": "ops_drop_database", "arguments": {}})
        assert refused.is_error and (refused.structured_content or {})["error"]["code"] == "metadata_only"
    assert asked == []  # refused before anyone was asked to approve it
    await aggregator.aclose()
