from toolscout import Tool
from toolscout.access.policy import Policy


def test_allow_deny_globs_and_permissions():
    p = Policy(allow=("github_*", "slack_*"), deny=("*_delete_*",), permissions=frozenset({"read", "write"}))
    assert p.permits(Tool("github_list_issues", permission="read"))
    assert not p.permits(Tool("github_delete_repo", permission="write"))
    assert not p.permits(Tool("jira_create", permission="read"))
    assert not p.permits(Tool("slack_admin", permission="dangerous"))
    assert p.permits(Tool("slack_post"))  # no declared kind passes by default
    assert not Policy(permissions=frozenset({"read"}), require_permission=True).permits(Tool("slack_post"))


def test_empty_allow_list_allows_nothing():
    assert not Policy(allow=()).permits(Tool("a"))
    assert Policy().permits(Tool("a"))
