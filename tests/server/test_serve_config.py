"""`toolscout serve`'s settings: one ServeConfig field, one flag and one config-file key each;
the file under the flags; every bad value an exit status 2 with a message; and build_app
wiring a config into a gateway that finds and calls."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import typer
from mcp import Client
from pydantic.alias_generators import to_camel
from typer.testing import CliRunner

from _procs import free_port
from toolscout.cli import app as cli
from toolscout.errors import ConfigError
from toolscout.server import app as app_module
from toolscout.server.app import App, ServeConfig, build_app, run_with
from toolscout.server.serve_config import (
    FILE_ONLY,
    FLAG_ONLY,
    MODELS,
    QUERY_ENCODERS,
    TRANSPORTS,
    file_keys,
)
from toolscout.sources.mcp.config import parse_config

runner = CliRunner()

MODULE = '''
def convert_celsius(celsius: float) -> float:
    """Convert a temperature in degrees Celsius to degrees Fahrenheit."""
    return celsius * 9 / 5 + 32


def count_words(text: str) -> int:
    """Count the words in a text."""
    return len(text.split())


tools = [convert_celsius, count_words]
'''


def _serve_params() -> dict[str, Any]:
    """The options of the real `serve` command (typer's own view of it), by Python name."""
    group = typer.main.get_command(cli)
    command = group.get_command(typer.Context(group), "serve")
    return {p.name: p for p in command.params}


def write(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "gateway.json"
    path.write_text(json.dumps({"mcpServers": {}, **data}))
    return path


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> list[ServeConfig]:
    """Run `serve` up to build_app, keeping the ServeConfig it got (and serving nothing)."""
    seen: list[ServeConfig] = []

    def stop(config: ServeConfig) -> App:
        seen.append(config)
        raise ConfigError("stopped by the test")

    monkeypatch.setattr(app_module, "build_app", stop)
    return seen


# -- one field, one flag, one key ------------------------------------------------------------


def test_every_serve_flag_is_a_field_and_every_field_a_flag() -> None:
    params = _serve_params()
    flags = set(params)
    fields = set(ServeConfig.model_fields)
    assert flags - fields == set(), "a serve flag without a ServeConfig field (add the field)"
    assert fields - flags == set(FILE_ONLY), "a ServeConfig field without a serve flag (add the flag)"
    for name, param in params.items():
        if param.param_type_name == "argument":  # serve CATALOG: the one argument, named after its field
            assert param.name == "catalog"
            continue
        assert f"--{name.replace('_', '-')}" in param.opts, f"{name}: the flag is not named after the field"


def test_every_field_but_config_has_a_config_file_key_in_camel_case() -> None:
    keys = file_keys()
    assert set(keys) == set(ServeConfig.model_fields) - FLAG_ONLY
    assert all(key == to_camel(name) for name, key in keys.items())
    assert keys["max_revealed"] == "maxRevealed" and keys["cache"] == "cache"  # the keys the file already had


def test_flag_defaults_are_the_field_defaults() -> None:
    for name, param in _serve_params().items():
        default = ServeConfig.model_fields[name].get_default(call_default_factory=True)
        flag = param.default if param.default is not None or not isinstance(default, list) else []
        if name in ("config", "catalog"):  # either names what to serve: no default
            continue
        assert flag == default, f"--{name}: the flag's default {flag!r} is not the field's {default!r}"


@pytest.mark.parametrize(
    ("flag", "values"), [("--transport", TRANSPORTS), ("--model", MODELS), ("--query-encoder", QUERY_ENCODERS)]
)
def test_flag_choices_are_the_fields_choices(flag: str, values: tuple[str, ...], tmp_path: Path, captured: list) -> None:
    path = write(tmp_path, {})
    port = str(free_port())  # --transport http binds: never assume the default 8765 is free
    for value in values:
        runner.invoke(cli, ["serve", "-c", str(path), flag, value, "--no-cache", "--port", port])
    assert [getattr(c, flag[2:].replace("-", "_")) for c in captured] == list(values)
    refused = runner.invoke(cli, ["serve", "-c", str(path), flag, "bogus"])
    assert refused.exit_code == 2 and "bogus" in refused.output


# -- the file under the flags --------------------------------------------------------------


def test_the_file_sets_what_no_flag_gives(tmp_path: Path) -> None:
    path = write(tmp_path, {
        "transport": "http", "port": 9001, "useTool": True, "allowOrigin": ["https://app.example.com"],
        "sessionTtl": 60, "noLearn": True, "maxRevealed": 5, "cache": "tools.db", "otherClientsKey": 1,
    })
    config = ServeConfig.load(path)
    assert (config.transport, config.port, config.use_tool, config.no_learn) == ("http", 9001, True, True)
    assert config.allow_origin == ["https://app.example.com"] and config.session_ttl == 60
    assert config.max_revealed == 5 and config.location == "tools.db"
    assert config.config == path and "otherClientsKey" in config.sources.model_extra  # still kept for other clients


def test_flags_win_over_the_file(tmp_path: Path, captured: list[ServeConfig]) -> None:
    in_file, on_flag = free_port(), free_port()  # serve binds the flag's port: a free one, not a fixed one
    path = write(tmp_path, {"transport": "http", "port": in_file, "stubs": True, "cache": "file.db"})
    result = runner.invoke(cli, ["serve", "-c", str(path), "--port", str(on_flag), "--cache", str(tmp_path / "flag.db")])
    assert result.exit_code == 2 and "stopped by the test" in result.output
    config = captured[-1]
    assert (config.transport, config.port, config.stubs) == ("http", on_flag, True)  # file, flag, file
    assert config.location == str(tmp_path / "flag.db")


def test_a_flags_environment_variable_wins_over_the_file(
    tmp_path: Path, captured: list[ServeConfig], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(tmp_path, {"token": "from-the-file", "store": "file.db"})
    monkeypatch.setenv("TOOLSCOUT_TOKEN", "from-the-environment")
    runner.invoke(cli, ["serve", "-c", str(path)])
    assert captured[-1].token == "from-the-environment" and captured[-1].location == "file.db"


def test_store_wins_over_cache(tmp_path: Path) -> None:
    config = ServeConfig.load(write(tmp_path, {"cache": "c.db"}), {"store": "s.db"})
    assert config.location == "s.db"
    assert Path(ServeConfig.load(write(tmp_path, {})).location).name.startswith("mcp-gateway-")  # named after the file


def test_two_projects_config_files_of_one_name_get_caches_of_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default cache is keyed by the config's full path: every project's servers.json
    once shared ~/.cache/toolscout/mcp-servers.db (tool lists, and the audit log)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir(), two.mkdir()
    first, second = (ServeConfig.load(write(d, {})).location for d in (one, two))
    assert first != second and all(Path(p).parent == tmp_path / "xdg" / "toolscout" for p in (first, second))
    assert ServeConfig.load(write(one, {})).location == first  # the same file, the same cache each time


# -- bad values: exit 2, saying where ---------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "args", "says"),
    [
        ({"port": 70000}, [], "gateway.json: key 'port': Input should be less than or equal to 65535"),
        ({"transport": "udp"}, [], "gateway.json: key 'transport'"),
        ({"approveKinds": "dangerus"}, [], "key 'approveKinds': approval kinds must be some of"),
        ({"allowHost": "one.example"}, [], "key 'allowHost': Input should be a valid list"),
        ({"maxRevealed": 0}, [], "field 'maxRevealed'"),  # the sources' own check of the same key
        ({"metrics": True}, [], "'metrics' in "),
        ({"sessions": "redis://localhost:6379/0"}, [], "'sessions' in "),
        ({}, ["--metrics"], "--metrics needs --transport http"),
        ({"transport": "http", "host": "0.0.0.0"}, [], "binding 0.0.0.0 (not loopback) needs a bearer token"),
        ({}, ["--approve-kinds", "dangerus"], "--approve-kinds: approval kinds must be some of"),
        ({"auth": {"issuer": "http://login.test"}}, [], "'auth' in "),  # tokens come over HTTP only
        ({}, ["--transport", "http", "--auth", '{"issuer": "http://x", "algorithms": ["HS256"]}'], "--auth [algorithms]: algorithms must be public-key ones"),
        ({"transport": "http", "auth": {"issuer": "ftp://x"}}, [], "key 'auth' [issuer]: 'ftp://x' is not an http(s) URL"),
    ],
)
def test_a_bad_setting_exits_2_naming_where_it_came_from(
    tmp_path: Path, data: dict[str, Any], args: list[str], says: str
) -> None:
    result = runner.invoke(cli, ["serve", "-c", str(write(tmp_path, data)), "--no-cache", *args])
    assert result.exit_code == 2, result.output
    assert result.output.startswith("config_error: ") and says in " ".join(result.output.split())


def test_a_rule_set_in_the_file_is_satisfied_by_a_flag(tmp_path: Path, captured: list[ServeConfig]) -> None:
    path = write(tmp_path, {"metrics": True})
    result = runner.invoke(cli, ["serve", "-c", str(path), "--transport", "http", "--port", str(free_port())])
    assert "stopped by the test" in result.output and captured[-1].metrics


def test_servers_reads_the_files_store_and_ignores_the_serving_rules(tmp_path: Path) -> None:
    """`toolscout servers` looks where serve would, without needing serve's token."""
    path = write(tmp_path, {"transport": "http", "host": "0.0.0.0", "cache": str(tmp_path / "c.db")})
    result = runner.invoke(cli, ["servers", "-c", str(path), "--no-connect", "--json"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "c.db").exists()


def test_construction_in_code_is_checked_too() -> None:
    with pytest.raises(ConfigError, match="--sessions needs --transport http"):
        ServeConfig.merge({}, {"sessions": "redis://localhost/0"})
    with pytest.raises(ConfigError, match="--port"):
        ServeConfig.merge({}, {"port": "eighty"})
    with pytest.raises(ConfigError, match="no config file"):
        _ = ServeConfig().sources


# -- build_app ------------------------------------------------------------------------------


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(sys, "path", list(sys.path))
    name = f"ts_serve_tools_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(MODULE)
    return name


async def test_build_app_wires_a_gateway_that_finds_and_calls(tmp_path: Path, module: str) -> None:
    path = write(tmp_path, {"python": {"units": {"module": f"{module}:tools", "pythonPath": "."}}, "maxRevealed": 7})
    built = build_app(ServeConfig.load(path, {"no_cache": True, "use_tool": True}))
    assert built.server.gateway is built.gateway and built.gateway.catalog is built.aggregator.catalog
    assert built.server.max_revealed == 7 and built.server.use_tool and built.session_store is None

    async def talk() -> None:
        async with Client(built.server.lowlevel, mode="auto") as client:
            found = await client.call_tool("find_tools", {"query": "convert celsius to fahrenheit", "limit": 1})
            assert found.structured_content["tool_references"][0]["tool_name"] == "units_convert_celsius"
            hot = await client.call_tool("call_tool", {"name": "units_convert_celsius", "arguments": {"celsius": 100}})
            assert not hot.is_error and "212" in hot.content[0].text

    await run_with(built.aggregator, talk)


def test_build_app_refuses_a_broken_source_before_anything_starts(tmp_path: Path) -> None:
    path = write(tmp_path, {"declarations": {"ops": {"path": "missing.yaml"}}})
    with pytest.raises(ConfigError, match="source 'ops'"):
        build_app(ServeConfig.load(path, {"no_cache": True}))


def test_build_app_over_sources_in_memory_uses_the_cache_it_is_given(tmp_path: Path) -> None:
    sources = parse_config({"mcpServers": {}, "maxRevealed": 3})
    built = build_app(ServeConfig.for_sources(sources, cache=str(tmp_path / "mem.db")))
    assert built.server.max_revealed == 3 and built.aggregator.cache is not None
    assert (tmp_path / "mem.db").exists() and built.gateway.learner is not None  # learns into that store
    unlearned = build_app(ServeConfig.for_sources(sources, cache=str(tmp_path / "mem.db"), no_learn=True))
    assert unlearned.gateway.learner is None
