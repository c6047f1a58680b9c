"""The journal that lets a retried code-mode program skip the calls it already made."""

from __future__ import annotations

from toolscout.codemode.journal import Journal


def test_a_retry_replays_matching_calls_in_order_then_runs_the_rest() -> None:
    first = Journal()
    first.record("create_issue", {"title": "a"}, True, {"id": 1})
    first.record("lookup", {"q": "x"}, False, "tool_error: down")
    again = Journal.load(first.dump())
    assert again.replay("create_issue", {"title": "a"}) == (True, {"id": 1})
    assert again.replay("lookup", {"q": "x"}) == (False, "tool_error: down")
    assert again.replay("delete", {}) is None  # past the record: runs for real
    again.record("delete", {}, True, "done")
    assert again.replayed == 2 and len(again.dump()) == 3


def test_a_program_that_takes_another_path_runs_from_where_it_diverged() -> None:
    journal = Journal()
    journal.record("a", {}, True, 1)
    journal.record("b", {}, True, 2)
    retry = Journal.load(journal.dump())
    assert retry.replay("a", {}) == (True, 1)
    assert retry.replay("b", {"other": True}) is None  # other arguments: not the recorded call
    assert retry.replay("b", {}) is None  # and the rest of the record no longer applies
    retry.record("b", {"other": True}, True, 3)
    assert [entry[2] for entry in retry.dump()] == [1, 3]


def test_anything_but_a_dumped_journal_loads_as_an_empty_one() -> None:
    for raw in (None, "x", [["short"]], [[1, True, 2]]):
        assert Journal.load(raw).dump() == []
