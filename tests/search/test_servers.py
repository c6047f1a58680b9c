"""Server-aware evidence (issue 32): a tool is also found through its server and its
siblings, the request's best tool stays first, and a server's name never brings its tools
into a list by itself."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from _fake_embed import FakeEmbedder
from toolscout import Catalog, Tool
from toolscout.eval.dataset import load_tools
from toolscout.search import servers as servers_module
from toolscout.search.hybrid import enable_hybrid
from toolscout.search.index import ToolIndex
from toolscout.search.servers import ServerDocs, ServerEvidence, server_of

OBJ = {"type": "object"}

SHOP = [
    ("shop", "get_order", "Get an order by its id."),
    ("shop", "list_products", "List the products for sale."),
    ("shop", "refund_payment", "Refund a payment."),
    ("catalog", "get_product_reviews", "Get the reviews of products."),
    ("catalog", "get_product_prices", "Get the prices of products."),
    ("warehouse", "get_product_stock", "Get the stock of products."),
    ("warehouse", "move_pallet", "Move a pallet."),
    ("mail", "send_email", "Send an email."),
    ("mail", "read_inbox", "Read the inbox."),
]


def _catalog(rows: list[tuple[str, str, str]], servers: bool = True) -> Catalog:
    cat = Catalog()
    for server, name, text in rows:
        cat.add(Tool(name, text, OBJ, meta={"server": server} if servers else None))
    return cat


def _names(index: ToolIndex, query: str, limit: int, mode: str = "keyword") -> list[str]:
    return [h.tool.name for h in index.search(query, limit=limit, mode=mode, autocut=False).hits]


def test_a_server_is_its_upstream_else_its_category() -> None:
    assert server_of(Tool("a", "x", OBJ, meta={"server": "github"}, category="dev")) == "github"
    assert server_of(Tool("b", "x", OBJ, source="mcp", source_id="slack")) == "slack"
    assert server_of(Tool("c", "x", OBJ, category="Finance/Stocks")) == "Finance/Stocks"
    assert server_of(Tool("d", "x", OBJ)) is None


def test_a_sibling_of_the_best_tool_is_found_through_its_server() -> None:
    # "list_products" matches one word of the first step; other servers' tools match two.
    # Its server (orders, products, refunds) matches the request best and holds its best tool.
    query = "get the products of my order and email them to me"
    plain = ToolIndex(_catalog(SHOP, servers=False))
    aware = ToolIndex(_catalog(SHOP))
    assert aware.intents(query) == ["get the products of my order", "email them to me"]
    before, after = _names(plain, query, 3), _names(aware, query, 3)
    assert before == ["get_order", "send_email", "get_product_reviews"]
    assert after == ["get_order", "send_email", "list_products"]  # only the last slot changed
    # never the slot of a step's own best tool
    assert _names(aware, query, 2) == _names(plain, query, 2) == ["get_order", "send_email"]


def test_a_single_intent_request_ranks_as_before() -> None:
    query = "get my order and its products"
    assert _names(ToolIndex(_catalog(SHOP)), query, 3) == _names(ToolIndex(_catalog(SHOP, servers=False)), query, 3)


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_the_embedding_modes_use_the_server_too(mode: str) -> None:
    plain = ToolIndex(_catalog(SHOP, servers=False))
    aware = ToolIndex(_catalog(SHOP))
    for index in (plain, aware):
        enable_hybrid(index, FakeEmbedder())
    query = "get the products of my order and email them to me"
    before, after = _names(plain, query, 4, mode), _names(aware, query, 4, mode)
    assert after[:2] == before[:2]
    assert len(set(after) - set(before)) <= 1  # one slot at most


def test_a_server_name_does_not_bring_its_tools_in() -> None:
    rows = [("github", f"github_{verb}_issue", f"{verb.capitalize()} an issue.") for verb in ("create", "close", "label", "assign")]
    rows += [("github", "github_list_repos", "List repositories."), ("github", "github_merge", "Merge a pull request.")]
    rows += [("slack", "slack_post", "Post a message to a channel."), ("slack", "slack_search", "Search messages.")]
    rows += [("notes", "take_note", "Write a note."), ("notes", "read_note", "Read a note.")]
    aware, plain = ToolIndex(_catalog(rows)), ToolIndex(_catalog(rows, servers=False))
    # Past the best tool, the request shares only the server's name with its siblings (every
    # one is "github_..."): none of them joins on that alone.
    for query in ("list my github repositories and post a message", "list my github repositories, then post a note"):
        for limit in (3, 4):
            assert _names(aware, query, limit) == _names(plain, query, limit)
    docs = ServerDocs(list(_catalog(rows)), 0)
    assert docs.active and docs.keys == ["github", "slack", "notes"]


def test_lone_tools_and_one_server_catalogs_have_no_server_evidence() -> None:
    lone = ServerDocs([Tool(f"t{i}", "x", OBJ, category=f"c{i}") for i in range(5)], 0)
    assert not lone.active and lone.keys == []
    one = ServerDocs([Tool(f"t{i}", "x", OBJ, category="same") for i in range(5)], 0)
    assert not one.active


def test_a_server_description_is_evidence(tmp_path: Path) -> None:
    lines = [
        '{"name": "t1", "description": "Get one.", "source": "acme", "server_description": "Invoices and billing of Acme."}',
        '{"name": "t2", "description": "List all.", "source": "acme", "server_description": "Invoices and billing of Acme."}',
        '{"name": "t3", "description": "Get one.", "source": "zeta"}',
        '{"name": "t4", "description": "List all.", "source": "zeta"}',
    ]
    (tmp_path / "tools.jsonl").write_text("\n".join(lines) + "\n")
    tools = load_tools(tmp_path / "tools.jsonl")
    assert tools[0].meta["server_description"] == "Invoices and billing of Acme." and not tools[2].meta
    docs = ServerDocs(tools, 0)
    allowed = np.ones(len(tools), bool)
    assert docs.keys[docs.best("billing", allowed) or 0] == "acme"
    assert docs.best("weather", allowed) is None
    # a server none of whose tools the caller may see never competes
    hidden = np.array([False, False, True, True])
    assert docs.best("billing", hidden) is None


def test_a_large_catalog_builds_its_server_documents_in_the_background(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(servers_module, "INLINE_BUILD", 0)
    tools = list(_catalog(SHOP))
    evidence = ServerEvidence()
    assert evidence.docs(tools, 1) is None  # the first ask starts the build and does not wait
    evidence.wait()
    built = evidence.docs(tools, 1)
    assert built is not None and built.active and built.generation == 1
    assert evidence.docs(tools, 2) is None  # a new snapshot: built again
    evidence.wait()
    assert evidence.docs(tools, 2) is not built
    monkeypatch.setattr(servers_module, "INLINE_BUILD", 100)
    assert evidence.docs(tools, 3) is not None  # a small catalog: at once
