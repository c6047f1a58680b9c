"""The guard matrix: surfaces x operations x cases, as one table that is the contract.

Every operation kind the guard knows (:data:`toolscout.access.guard.OPERATIONS`, read from
the code) must have a row on every surface: either the tests that show its cases (hidden,
denied, needs approval, poisoned output, another principal's session), or why the surface
does not offer it. An operation or surface added without rows fails here. Each named test
must exist, so a row cannot point at nothing.
"""

from __future__ import annotations

import importlib

from toolscout.access.guard import OPERATIONS

SURFACES = ("mcp", "mcp-stateless", "v1", "console", "code-mode", "cli-call")
CASES = ("hidden", "denied", "approval", "poisoned", "session")

# (surface, operation) -> {case: "module::test"} or a reason string (not offered there).
I31 = "security.test_guard_issue31"
HID = "security.test_hidden_tools"  # a hidden tool called by its exact name answers as an unknown one
TOOLS = "tools/call"
MATRIX: dict[tuple[str, str], dict[str, str] | str] = {
    ("mcp", TOOLS): {
        "hidden": f"{HID}::test_mcp_call_tool_answers_a_hidden_tool_as_an_unknown_one",
        "denied": f"{I31}::test_a_call_denied_over_mcp_tools_call_is_audited",
        "approval": "server.test_approval_tickets::test_a_ticket_is_bound_to_its_session_tool_and_arguments",
        "poisoned": f"{I31}::test_an_upstream_result_reaches_an_mcp_client_marked",
        "session": "server.test_auth::test_one_caller_cannot_steer_learning_with_sessions_or_connections",
    },
    ("mcp-stateless", TOOLS): {  # the same tests, parametrized over legacy (stateful) and auto (stateless)
        "hidden": f"{HID}::test_mcp_call_tool_answers_a_hidden_tool_as_an_unknown_one",
        "denied": f"{I31}::test_a_call_denied_over_mcp_tools_call_is_audited",
        "approval": "server.test_approval_tickets::test_a_stateless_answer_runs_its_call_once_and_cannot_be_replayed",
        "poisoned": f"{I31}::test_an_upstream_result_reaches_an_mcp_client_marked",
    },
    ("mcp", "resources/read"): {
        "hidden": f"{I31}::test_a_hidden_prefix_answers_exactly_as_an_unknown_one",
        "poisoned": f"{I31}::test_a_resource_read_is_screened",
        "denied": f"{I31}::test_quarantine_withholds_a_poisoned_resource",
    },
    ("mcp", "prompts/get"): {
        "hidden": f"{I31}::test_a_hidden_prefix_answers_exactly_as_an_unknown_one",
        "poisoned": f"{I31}::test_a_prompt_is_screened",
    },
    ("mcp", "program"): {
        "hidden": f"{I31}::test_the_execute_description_does_not_name_a_hidden_server",
        "poisoned": f"{I31}::test_a_program_reading_poisoned_structured_content_is_marked",
        "denied": f"{I31}::test_a_program_is_one_record_with_its_calls_under_it",
    },
    ("mcp", "resources/list"): {"hidden": f"{I31}::test_capabilities_do_not_name_a_hidden_server"},
    ("mcp", "completion/complete"): {
        "hidden": f"{I31}::test_completions_and_subscriptions_answer_a_hidden_server_as_an_unknown_one"},
    ("mcp", "resources/subscribe"): {
        "hidden": f"{I31}::test_completions_and_subscriptions_answer_a_hidden_server_as_an_unknown_one"},
    ("mcp", "skills/read"): {"hidden": f"{I31}::test_skill_resources_are_read_under_the_callers_rule_and_audited",
                             "denied": f"{I31}::test_skill_resources_are_read_under_the_callers_rule_and_audited"},
    ("mcp", "sampling/createMessage"): {
        "poisoned": f"{I31}::test_an_upstreams_sampling_request_is_screened_before_the_clients_model_reads_it"},
    ("mcp", "prompts/list"): {
        "hidden": "server.test_mcp_federation::test_a_caller_who_may_not_see_the_server_gets_none_of_its_resources_or_prompts"},
    ("mcp", "roots/list"): "not relayed: an upstream's roots/list gets the SDK's own 'not supported' answer",
    ("mcp", "elicitation/create"): {
        "poisoned": f"{I31}::test_an_upstreams_elicitation_is_screened_before_the_user_reads_it"},
    ("v1", TOOLS): {
        "hidden": f"{HID}::test_v1_call_and_tool_answer_a_hidden_tool_as_an_unknown_one",
        "denied": f"{I31}::test_v1_servers_and_capabilities_do_not_name_a_hidden_server",
        "approval": "server.test_console_call::test_v1_runs_a_gated_tool_only_with_the_callers_approval",
        "poisoned": f"{I31}::test_v1_call_marks_an_upstream_result",
    },
    ("console", TOOLS): {
        "hidden": f"{HID}::test_v1_call_and_tool_answer_a_hidden_tool_as_an_unknown_one",
        "denied": f"{HID}::test_v1_call_and_tool_answer_a_hidden_tool_as_an_unknown_one",
        "approval": "server.test_console_call::test_a_gated_tool_asks_for_approval_and_runs_only_once_approved",
        "poisoned": f"{I31}::test_v1_call_marks_an_upstream_result",
    },
    ("code-mode", TOOLS): {
        "hidden": f"{HID}::test_code_mode_answers_a_hidden_tool_as_an_unknown_one",
        "approval": "core.test_code_mode::test_an_approval_prompt_pauses_the_program_and_its_answer_is_kept",
        "poisoned": f"{I31}::test_a_program_reading_poisoned_structured_content_is_marked",
        "denied": f"{I31}::test_a_program_is_one_record_with_its_calls_under_it",
    },
    ("cli-call", TOOLS): {
        "hidden": f"{HID}::test_cli_call_answers_a_tool_not_visible_here_as_an_unknown_one",
        "poisoned": f"{I31}::test_cli_call_prints_the_mark_before_poisoned_structured_content",
    },
}
NOT_OFFERED = {
    "mcp-stateless": "resources, prompts, relays and programs need the session's back channel or its stream",
    "v1": "the HTTP API offers tool calls only (find, call, tools, servers, capabilities)",
    "console": "the console calls tools through /v1/call",
    "code-mode": "a program calls tools only (find_tools and the tools it found)",
    "cli-call": "toolscout call runs one tool",
}


def _rows() -> dict[tuple[str, str], dict[str, str] | str]:
    rows = dict(MATRIX)
    for surface in SURFACES:
        for op in OPERATIONS:
            if (surface, op) in rows:
                continue
            if op == TOOLS or surface == "mcp":
                continue  # must be written out: a gap
            rows[(surface, op)] = NOT_OFFERED[surface]
    return rows


def test_every_surface_and_operation_has_a_row() -> None:
    rows = _rows()
    missing = sorted(f"{s} x {o}" for s in SURFACES for o in OPERATIONS if (s, o) not in rows)
    # Known gaps, closed one by one (each removal must come with its row):
    gaps: set[str] = set()
    assert set(missing) == gaps, f"rows missing beyond the known gaps: {sorted(set(missing) - gaps)}; " \
                                 f"gaps now covered (remove them): {sorted(gaps - set(missing))}"


def test_every_named_test_exists() -> None:
    for cases in MATRIX.values():
        if isinstance(cases, str):  # not offered there, and why
            continue
        assert set(cases) <= set(CASES)
        for where in cases.values():
            module, _, name = where.partition("::")
            try:
                found = importlib.import_module(module)
            except ImportError:
                found = importlib.import_module(f"tests.{module}")
            assert callable(getattr(found, name, None)), f"{where} does not exist"


def test_every_surface_answers_a_hidden_tool_call_as_an_unknown_one() -> None:
    """Hidden means absent for tool calls on every surface: each has its ``hidden`` row, and
    it names a test of the exact-name call (not only of listings and hints)."""
    for surface in SURFACES:
        row = MATRIX[(surface, TOOLS)]
        assert isinstance(row, dict) and row.get("hidden", "").startswith(f"{HID}::"), surface
