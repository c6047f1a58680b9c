"""Hints name a next step that works where they are given (issue 24, item 7): a stateless
MCP session never reveals tools, so ``select:`` there would change nothing."""

from __future__ import annotations

import pytest

from toolscout import Gateway, Session
from toolscout.demo import demo_catalog


def test_a_stateless_not_revealed_hint_points_at_call_tool_not_select() -> None:
    gateway = Gateway(demo_catalog())
    stateless = Session(gateway, session_id="stateless", progressive=False, call_tool=True)
    outcome = stateless.handle("weather_get_current", {"location": "Paris"})
    assert outcome.error is not None and outcome.error.code == "not_revealed"
    assert "select:" not in outcome.error.hint and "call_tool(name='weather_get_current'" in outcome.error.hint
    stateful = Session(gateway, session_id="s1", call_tool=True)
    assert "select:weather_get_current" in stateful.handle("weather_get_current", {"location": "Paris"}).error.hint


def test_never_defer_warns_about_names_no_tool_has() -> None:
    gateway = Gateway(demo_catalog())
    with pytest.warns(UserWarning, match="never_defer names no tool in the catalog: slack_send_mesage"):
        Session(gateway, never_defer=["slack_send_mesage", "slack_send_message"])


def test_find_tools_refuses_a_platform_other_than_the_gateways() -> None:
    gateway = Gateway(demo_catalog(), platform="linux")
    refused = gateway.find_tools("send an email", platform="windows")
    assert refused.error is not None and refused.error.code == "invalid_request"
    assert "Gateway(catalog, platform='windows')" in refused.error.hint
    same = gateway.find_tools("send an email", platform="linux")
    assert same.error is None and not any("platform" in w for w in same.warnings)
