"""`serve --code-mode` (config key `codeMode`): the MCP server lists `execute` and runs a
program; without it nothing changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client

from toolscout.codemode.runner import code_runner
from toolscout.server.app import ServeConfig, build_app, run_with

pytest.importorskip("pydantic_monty")


def write(tmp_path: Path, **data: object) -> Path:
    path = tmp_path / "gateway.json"
    path.write_text(json.dumps({"mcpServers": {}, **data}))
    return path


async def test_code_mode_from_the_config_file_serves_execute(tmp_path: Path) -> None:
    built = build_app(ServeConfig.load(write(tmp_path, codeMode=True), {"no_cache": True}))
    assert built.config.code_mode

    async def talk() -> None:
        async with Client(built.server.lowlevel, mode="auto") as client:
            names = [t.name for t in (await client.list_tools()).tools]
            assert names == ["find_tools", "call_tool", "execute"]
            done = await client.call_tool("execute", {"code": "print(6 * 7)"})
            assert not done.is_error and done.content[0].text == "42"
            loop = await client.call_tool("execute", {"code": "x = (\n"})
            assert loop.is_error and loop.structured_content["error"]["code"] == "program_error"

    try:
        await run_with(built.aggregator, talk)
    finally:
        await code_runner(built.gateway).aclose()


def test_the_flag_sets_it_and_the_default_leaves_it_off(tmp_path: Path) -> None:
    path = write(tmp_path)
    assert ServeConfig.load(path, {"code_mode": True}).code_mode
    plain = build_app(ServeConfig.load(path, {"no_cache": True}))
    assert [t["name"] for t in plain.server.meta_tools()] == ["find_tools", "call_tool"]
