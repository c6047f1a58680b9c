"""Seed 001 and 003 details: the meta-tool's dialect, the search-result cache, auto-pinned
hot tools, the names-when-nothing-matches fallback and deferral by token budget."""

from __future__ import annotations

import pytest

from toolscout import Catalog, Tool
from toolscout.errors import ConfigError
from toolscout.gateway import Gateway
from toolscout.session import Session
from toolscout.sessions.deferral import DeferRule, context_window, set_context_window


def mail_catalog(extra: int = 0) -> Catalog:
    cat = Catalog()
    cat.add(Tool("send_email", "Send an email message to a recipient.", {"type": "object", "properties": {"to": {"type": "string"}}}), handler=lambda a: "sent")
    cat.add(Tool("read_inbox", "Read the newest messages in the inbox."), handler=lambda a: "[]")
    cat.add(Tool("create_invoice", "Create an invoice for a customer."), handler=lambda a: "inv-1")
    for i in range(extra):
        cat.add(Tool(f"filler_{i}", f"Filler tool number {i} for padding."), handler=lambda a: "ok")
    return cat


# -- dialects -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("dialect", "name", "limit", "category"),
    [
        ("rfc", "find_tools", "limit", "category"),
        ("seed001", "tool_search_tool", "max_results", "category_filter"),
        ("spring", "toolSearchTool", "maxResults", "categoryFilter"),
    ],
)
def test_the_meta_tool_is_listed_and_answered_under_its_dialect(dialect: str, name: str, limit: str, category: str) -> None:
    gateway = Gateway(mail_catalog(extra=20), meta_dialect=dialect)
    session = Session(gateway)
    tools = session.tools("openai")
    first = tools[0]["function"] if "function" in tools[0] else tools[0]
    assert first["name"] == name
    assert {limit, category} <= set(first["parameters"]["properties"])
    outcome = session.handle(name, {"query": "send an email", limit: 1})
    assert outcome.ok and outcome.is_find
    assert outcome.revealed == ("send_email",)
    assert outcome.find is not None and len(outcome.find.found) == 1
    # the dialect's own argument names are not "aliases" worth a note
    assert not any("read as" in w for w in outcome.find.warnings)
    assert name in gateway.system_prompt()


def test_other_names_are_not_the_find_tool_under_a_dialect() -> None:
    session = Session(Gateway(mail_catalog(extra=20), meta_dialect="seed001"))
    assert session.handle("find_tools", {"query": "email"}).error.code == "unknown_tool"


def test_an_unknown_dialect_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as refused:
        Gateway(mail_catalog(), meta_dialect="nope")
    assert "seed001" in (refused.value.hint or "")


# -- the search-result cache ----------------------------------------------------------------
def test_repeated_queries_are_answered_from_the_cache_until_the_catalog_changes() -> None:
    catalog = mail_catalog()
    gateway = Gateway(catalog, result_cache=16, learn=False)
    first = gateway.find({"query": "send an email"})
    again = gateway.find({"query": "  Send an EMAIL "})
    assert [t.name for t in again.found] == [t.name for t in first.found]
    assert gateway.result_cache.stats().hits == 1
    catalog.add(Tool("send_email_fast", "Send an email message quickly."), handler=lambda a: "ok")
    changed = gateway.find({"query": "send an email"})
    assert "send_email_fast" in [t.name for t in changed.found]  # never the stale answer
    assert gateway.result_cache.stats().hits == 1


def test_the_cache_never_shares_an_answer_between_callers_who_see_different_tools() -> None:
    from toolscout.context import CallContext

    gateway = Gateway(mail_catalog(), result_cache=16, learn=False)
    everyone = gateway.find({"query": "send an email"})
    no_mail = CallContext(allow=lambda t: t.name != "send_email")
    limited = gateway.find({"query": "send an email"}, no_mail)
    assert "send_email" in [t.name for t in everyone.found]
    assert "send_email" not in [t.name for t in limited.found]


def test_a_credited_call_invalidates_the_cached_ranking_and_a_search_alone_does_not() -> None:
    gateway = Gateway(mail_catalog(), result_cache=16, learn=True)
    session = Session(gateway, threshold=1)
    session.handle("find_tools", {"query": "email"})
    session.handle("find_tools", {"query": "email"})
    assert gateway.result_cache.stats().hits == 1  # the recorded search did not invalidate
    session.handle("send_email", {"to": "a@b.c"})
    session.handle("find_tools", {"query": "email"})
    assert gateway.result_cache.stats().hits == 1  # the credited call did


# -- hot tools ------------------------------------------------------------------------------
def test_auto_pin_loads_the_tools_most_sessions_called() -> None:
    gateway = Gateway(mail_catalog(extra=20), learn=True)
    for i in range(3):
        s = Session(gateway, session_id=f"s{i}")
        s.handle("find_tools", {"query": "create an invoice"})
        assert s.handle("create_invoice", {}).ok
    one = Session(gateway, session_id="lonely")
    one.handle("find_tools", {"query": "read inbox"})
    one.handle("read_inbox", {})
    fresh = Session(gateway, auto_pin=1)
    assert fresh.auto_pinned == ("create_invoice",)
    assert [d["name"] for d in fresh.tools()][:2] == ["find_tools", "create_invoice"]
    assert fresh.handle("create_invoice", {}).ok  # callable without a search
    assert Session(gateway).auto_pinned == ()  # off by default


def test_auto_pin_keeps_repeatedly_called_tools_from_eviction() -> None:
    gateway = Gateway(mail_catalog(extra=20), learn=False)
    session = Session(gateway, auto_pin=1, max_revealed=2)
    session.handle("find_tools", {"query": "select:send_email"})
    session.handle("send_email", {"to": "x"})
    session.handle("send_email", {"to": "y"})
    session.handle("find_tools", {"query": "select:read_inbox"})
    session.handle("find_tools", {"query": "select:create_invoice"})
    assert "send_email" in session.revealed
    assert "read_inbox" not in session.revealed


# -- nothing matched: the names of a small catalog ------------------------------------------
def test_no_match_lists_every_visible_name_in_a_small_catalog() -> None:
    gateway = Gateway(mail_catalog(), list_names_below=10)
    found = gateway.find({"query": "zzqx"})
    assert found.error is not None and found.error.code == "no_match"
    assert found.error.details["available"] == ["create_invoice", "read_inbox", "send_email"]
    from toolscout.context import CallContext

    hidden = gateway.find({"query": "zzqx"}, CallContext(allow=lambda t: t.name != "send_email"))
    assert "send_email" not in hidden.error.details["available"]
    assert "available" not in Gateway(mail_catalog(extra=20), list_names_below=10).find({"query": "zzqx"}).error.details
    assert "available" not in Gateway(mail_catalog()).find({"query": "zzqx"}).error.details


# -- deferral by budget ---------------------------------------------------------------------
def big_tool(i: int) -> Tool:
    props = {f"field_{j}": {"type": "string", "description": f"Field {j} of the record, in full detail."} for j in range(40)}
    return Tool(f"big_{i}", "A tool with a very large schema. " * 5, {"type": "object", "properties": props})


def test_budget_rule_defers_a_few_huge_tools_and_not_many_small_ones() -> None:
    small = Catalog()
    for i in range(30):
        small.add(Tool(f"s{i}", "tiny"), handler=lambda a: "ok")
    huge = Catalog()
    for i in range(5):
        huge.add(big_tool(i), handler=lambda a: "ok")
    # 30 tiny tools: well under 10% of a 128k window; the count rule would defer them
    assert not Session(Gateway(small), threshold="auto").deferring
    assert Session(Gateway(small)).deferring
    # 5 huge tools against a small window: over budget; the count rule would send them all
    assert Session(Gateway(huge), threshold="auto:10%", context_window=8_000).deferring
    assert not Session(Gateway(huge), threshold="auto:10%", context_window=2_000_000).deferring
    assert not Session(Gateway(huge)).deferring


def test_rules_and_windows_parse_and_refuse_clearly() -> None:
    assert DeferRule.parse(15).count == 15 and DeferRule.parse("15").count == 15
    assert DeferRule.parse("auto").share == pytest.approx(0.10)
    assert DeferRule.parse("auto:5%").share == pytest.approx(0.05)
    assert DeferRule.parse("auto:5").share == pytest.approx(0.05)
    for bad in ("auto:0", "auto:150%", "sometimes", True):
        with pytest.raises(ConfigError):
            DeferRule.parse(bad)
    assert context_window("claude-sonnet-4-5") == 200_000
    assert context_window("openai/gpt-4.1-mini") == 1_047_576
    assert context_window("unknown-model") == 128_000
    set_context_window("my-local-model", 32_000)
    assert context_window("my-local-model-q4") == 32_000


# -- input_examples -------------------------------------------------------------------------
def test_input_examples_travel_from_a_definitions_file_to_the_formats_that_take_them() -> None:
    import _sdk_requests as sdk
    from toolscout import formats
    from toolscout.sources.definitions import tool_from_definition

    tool = tool_from_definition(
        {
            "name": "create_ticket",
            "description": "Open a support ticket.",
            "input_schema": {"type": "object", "properties": {"title": {"type": "string"}}},
            "inputExamples": [{"title": "Printer on fire"}],
        }
    )
    assert tool.input_examples == ({"title": "Printer on fire"},)
    rendered = formats.render(tool, "anthropic")
    assert rendered["input_examples"] == [{"title": "Printer on fire"}]
    sdk.anthropic_tool(rendered)  # the SDK's own request type takes it (unknown keys forbidden)
    sdk.chat_tool(formats.render(tool, "openai"))  # and formats without the field drop it
    plain = Tool("create_ticket", "Open a support ticket.", {"type": "object", "properties": {"title": {"type": "string"}}})
    assert plain.version != tool.version  # what the model sees changed
    assert "input_examples" not in formats.render(plain, "anthropic")


def test_malformed_input_examples_are_a_declaration_error() -> None:
    from toolscout.errors import DeclarationError
    from toolscout.sources.definitions import tool_from_definition

    with pytest.raises(DeclarationError, match="input_examples"):
        tool_from_definition({"name": "x", "input_schema": {"type": "object"}, "input_examples": "nope"})
