"""OpenAPI operations become tools whose handlers send the right HTTP request (mocked)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from _paths import FIXTURES
from toolscout.errors import DeclarationError, ToolFailed
from toolscout.sources.openapi import tools_from_openapi

SPEC = FIXTURES / "petstore.yaml"


def _load(seen: list[httpx.Request], status: int = 200) -> dict[str, Any]:
    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(status, json={"ok": True, "path": request.url.path})

    pairs = tools_from_openapi(
        SPEC, base_url="https://api.example.test/v1", headers={"Authorization": "Bearer t"},
        transport=httpx.MockTransport(answer),
    )
    return {tool.name: (tool, handler) for tool, handler in pairs}


def test_one_tool_per_operation_with_merged_schema() -> None:
    tools = _load([])
    assert set(tools) == {"listPets", "createPet", "delete_pets_id"}
    create = tools["createPet"][0]
    schema = create.input_schema
    assert schema["required"] == ["name"]
    assert schema["properties"]["tag"] == {"type": ["string", "null"]}
    assert schema["properties"]["owner"] == {"$ref": "#/$defs/Owner"}
    assert schema["$defs"] == {"Owner": {"type": "object", "properties": {"email": {"type": "string"}}}}
    listing = tools["listPets"][0]
    assert listing.category == "pets" and listing.annotations.read_only is True  # type: ignore[union-attr]
    assert listing.input_schema["properties"]["limit"] == {"type": "integer", "description": "How many"}
    delete = tools["delete_pets_id"][0]
    assert delete.annotations.destructive is True  # type: ignore[union-attr]
    assert delete.input_schema["required"] == ["id"]


async def test_handlers_build_the_request() -> None:
    seen: list[httpx.Request] = []
    tools = _load(seen)
    assert await tools["listPets"][1]({"limit": 3}) == {"ok": True, "path": "/v1/pets"}
    await tools["createPet"][1]({"name": "Rex", "owner": {"email": "a@b.c"}})
    await tools["delete_pets_id"][1]({"id": "a/b", "X-Reason": "sold"})
    get, post, delete = seen
    assert (get.method, get.url.params["limit"], get.headers["authorization"]) == ("GET", "3", "Bearer t")
    assert post.method == "POST" and json.loads(post.content) == {"name": "Rex", "owner": {"email": "a@b.c"}}
    assert delete.method == "DELETE" and delete.url.raw_path == b"/v1/pets/a%2Fb"
    assert delete.headers["x-reason"] == "sold"


async def test_http_error_becomes_tool_failed() -> None:
    tools = _load([], status=404)
    with pytest.raises(ToolFailed) as info:
        await tools["listPets"][1]({})
    assert info.value.details["status"] == 404


def test_not_an_openapi_document(tmp_path: Path) -> None:
    bad = tmp_path / "x.yaml"
    bad.write_text("hello: world\n")
    with pytest.raises(DeclarationError, match="no 'paths'"):
        tools_from_openapi(bad, base_url="http://x")
