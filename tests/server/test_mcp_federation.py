"""server-everything's resources, templates and prompts through the gateway (issue 27), over
the official Python SDK client: listed under the server's prefix, read and got, embedded
resources renamed so they can be read again, completions forwarded, subscriptions relayed;
and a caller whose policy hides the server gets none of them. Skipped without the npm
package (.ci/setup-mcp.sh installs it)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import mcp_types as types
import pytest
import pytest_asyncio
from mcp import Client
from mcp.shared.exceptions import MCPError

from _paths import ROOT
from mcp_fixtures.asgi import serving
from toolscout.access.policy import Policy
from toolscout.catalog import Catalog
from toolscout.gateway import Gateway
from toolscout.server.app import http_app
from toolscout.server.mcp import GatewayServer
from toolscout.sources.mcp.aggregator import Aggregator
from toolscout.sources.mcp.config import parse_config

EVERYTHING = ROOT / ".ci" / "node" / "node_modules" / ".bin" / "mcp-server-everything"

pytestmark = [
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(not Path(EVERYTHING).exists(), reason="server-everything not installed (.ci/setup-mcp.sh)"),
]

STATIC = "everything+demo://resource/static/document/architecture.md"


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def urls() -> AsyncIterator[tuple[str, str]]:
    """Two gateways on one upstream: one shows it, one's policy hides everything of it."""
    cfg = parse_config({"mcpServers": {"everything": {"command": str(EVERYTHING), "args": ["stdio"]}}})
    agg = Aggregator(cfg, Catalog())
    try:
        await agg.refresh("everything")
        open_gw = GatewayServer(Gateway(agg.catalog, call_timeout=None), agg)
        hidden = GatewayServer(Gateway(agg.catalog, call_timeout=None, policy=Policy(deny=("everything_*",))), agg)
        async with serving(http_app(open_gw, console=False)) as a, serving(http_app(hidden, console=False)) as b:
            yield f"{a}/mcp", f"{b}/mcp"
    finally:
        await agg.aclose()


async def test_resources_and_templates_are_listed_namespaced_and_read(urls: tuple[str, str]) -> None:
    async with Client(urls[0], mode="legacy") as client:
        listed = await client.list_resources()
        uris = [str(r.uri) for r in listed.resources]
        assert "toolscout://capabilities" in uris  # the gateway's own come first
        assert STATIC in uris and all(u.startswith("everything+") for u in uris if "demo://" in u)
        assert all(r.name.startswith("everything_") for r in listed.resources if str(r.uri).startswith("everything+"))
        text = (await client.read_resource(STATIC)).contents[0]
        assert str(text.uri) == STATIC and "Architecture" in text.text
        templates = (await client.list_resource_templates()).resource_templates
        assert "everything+demo://resource/dynamic/text/{resourceId}" in [t.uri_template for t in templates]
        dynamic = (await client.read_resource("everything+demo://resource/dynamic/text/7")).contents[0]
        assert str(dynamic.uri) == "everything+demo://resource/dynamic/text/7" and "7" in dynamic.text
        blob = (await client.read_resource("everything+demo://resource/dynamic/blob/3")).contents[0]
        assert isinstance(blob, types.BlobResourceContents) and blob.blob
        with pytest.raises(MCPError, match="unknown resource"):
            await client.read_resource("nowhere+demo://x")


async def test_prompts_are_listed_namespaced_got_and_completed(urls: tuple[str, str]) -> None:
    async with Client(urls[0], mode="legacy") as client:
        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        assert {"everything_simple-prompt", "everything_args-prompt", "everything_resource-prompt"} <= set(prompts)
        simple = await client.get_prompt("everything_simple-prompt")
        assert "simple prompt" in simple.messages[0].content.text
        args = await client.get_prompt("everything_args-prompt", {"city": "Lyon", "state": "Rhone"})
        assert "Lyon" in args.messages[0].content.text
        embedded = await client.get_prompt("everything_resource-prompt", {"resourceType": "Text", "resourceId": "2"})
        resource = next(m.content.resource for m in embedded.messages if m.content.type == "resource")
        assert str(resource.uri).startswith("everything+demo://")  # renamed: it can be read through us
        again = (await client.read_resource(str(resource.uri))).contents[0]
        # the same resource read again (its text names the time it was made: not compared)
        assert str(again.uri) == str(resource.uri) and again.text.split(" at ")[0] == resource.text.split(" at ")[0]
        ref = types.PromptReference(type="ref/prompt", name="everything_completable-prompt")
        done = await client.complete(ref, {"name": "department", "value": "E"})
        assert "Engineering" in done.completion.values


@pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed")
async def test_subscriptions_are_relayed(urls: tuple[str, str]) -> None:
    async with Client(urls[0], mode="legacy") as client:
        await client.subscribe_resource(STATIC)  # the upstream accepts it through us
        await client.unsubscribe_resource(STATIC)


@pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed")
async def test_a_caller_who_may_not_see_the_server_gets_none_of_its_resources_or_prompts(urls: tuple[str, str]) -> None:
    async with Client(urls[1], mode="legacy") as client:
        uris = [str(r.uri) for r in (await client.list_resources()).resources]
        assert uris == ["toolscout://capabilities"]
        assert (await client.list_resource_templates()).resource_templates == []
        assert (await client.list_prompts()).prompts == []
        with pytest.raises(MCPError, match="unknown resource"):
            await client.read_resource(STATIC)
        with pytest.raises(MCPError, match="unknown prompt"):
            await client.get_prompt("everything_simple-prompt")


async def test_find_tools_finds_resources_and_prompts_when_asked_and_runs_them(urls: tuple[str, str]) -> None:
    async with Client(urls[0], mode="legacy") as client:
        plain = await client.call_tool("find_tools", {"query": "architecture document"})
        assert "everything_architecture.md" not in [t["name"] for t in plain.structured_content["tools"]]  # tools only by default
        found = await client.call_tool(
            "find_tools", {"query": "architecture document", "kinds": ["resource", "prompt"]}
        )
        names = [t["name"] for t in found.structured_content["tools"]]
        assert "everything_architecture.md" in names
        read = await client.call_tool("call_tool", {"name": "everything_architecture.md", "arguments": {}})
        assert not read.is_error and read.content[0].type == "resource"
        assert str(read.content[0].resource.uri) == STATIC
        prompt = await client.call_tool(
            "call_tool", {"name": "everything_args-prompt", "arguments": {"city": "Oslo", "state": "Viken"}}
        )
        assert "Oslo" in prompt.content[0].text
    async with Client(urls[1], mode="legacy") as hidden:
        found = await hidden.call_tool("find_tools", {"query": "architecture document", "kinds": ["resource", "prompt"]})
        assert found.structured_content["tools"] == []
