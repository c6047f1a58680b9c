"""Code hosting and issue tracking."""

from __future__ import annotations

from . import Service, a, b, e, i, s, t

REPO = s("Repository as owner/name, e.g. octo-org/api.", pattern="^[\\w.-]+/[\\w.-]+$")
LIMIT = i("Maximum number of results to return.", minimum=1, maximum=100, default=20)
STATE = e("Filter by state.", "open", "closed", "all", default="open")

GITHUB = Service("github", "GitHub", ("git", "code", "repository", "developer"), [
    t("create_issue", "Open a new issue in a repository with a title, Markdown body, labels and assignees.", {
        "repo": REPO,
        "title": s("Issue title."),
        "body?": s("Issue description in Markdown."),
        "labels?": a("Label names to apply."),
        "assignees?": a("GitHub usernames to assign."),
    }, "write", tags=("bug", "ticket"), zh=("创建 GitHub 议题", "在代码仓库中新建一个 issue，可设置标签和负责人。")),
    t("get_issue", "Fetch an issue with its labels, assignees, state and comment count.", {
        "repo": REPO, "number": i("Issue number.", minimum=1),
    }),
    t("list_issues", "List issues of a repository, filtered by state, label or assignee (pull requests excluded).", {
        "repo": REPO, "state?": STATE,
        "labels?": a("Only issues with all of these labels."),
        "assignee?": s("Only issues assigned to this user; 'none' for unassigned."),
        "limit?": LIMIT,
    }, tags=("bugs", "backlog")),
    t("comment_on_issue", "Add a Markdown comment to an issue or pull request.", {
        "repo": REPO, "number": i("Issue or pull request number.", minimum=1),
        "body": s("Comment text in Markdown."),
    }, "write", tags=("reply",)),
    t("close_issue", "Close an issue, as completed or as not planned.", {
        "repo": REPO, "number": i("Issue number.", minimum=1),
        "reason?": e("Why it is closed.", "completed", "not_planned", default="completed"),
    }, "update"),
    t("create_pull_request", "Open a pull request from a head branch into a base branch.", {
        "repo": REPO,
        "title": s("Pull request title."),
        "head": s("Branch with the changes, or owner:branch for a fork."),
        "base": s("Branch to merge into, e.g. main."),
        "body?": s("Description in Markdown."),
        "draft?": b("Open as a draft.", default=False),
    }, "write", tags=("pr", "code review", "merge request")),
    t("list_pull_requests", "List pull requests of a repository, by state and base branch.", {
        "repo": REPO, "state?": STATE,
        "base?": s("Only pull requests into this branch."),
        "limit?": LIMIT,
    }, tags=("pr",)),
    t("get_pull_request_diff", "Get the unified diff of a pull request, for review.", {
        "repo": REPO, "number": i("Pull request number.", minimum=1),
    }, tags=("pr", "review", "changes")),
    t("review_pull_request", "Submit a review on a pull request: approve, request changes or comment.", {
        "repo": REPO, "number": i("Pull request number.", minimum=1),
        "event": e("Review verdict.", "APPROVE", "REQUEST_CHANGES", "COMMENT"),
        "body?": s("Review summary."),
    }, "write", tags=("pr", "code review")),
    t("merge_pull_request", "Merge a pull request with a merge commit, squash or rebase.", {
        "repo": REPO, "number": i("Pull request number.", minimum=1),
        "method?": e("Merge method.", "merge", "squash", "rebase", default="merge"),
    }, "update", tags=("pr", "ship")),
    t("search_code", "Search code across repositories with GitHub code search qualifiers such as repo:, language: and path:.", {
        "query": s("Search query, e.g. 'retry language:python repo:octo-org/api'."),
        "limit?": LIMIT,
    }, tags=("find", "grep", "source")),
    t("get_file_contents", "Read a file from a repository at a branch, tag or commit.", {
        "repo": REPO,
        "path": s("File path in the repository."),
        "ref?": s("Branch, tag or commit SHA; the default branch when omitted."),
    }, tags=("read", "source")),
    t("create_or_update_file", "Commit a new or changed file to a branch.", {
        "repo": REPO,
        "path": s("File path."),
        "content": s("New file content."),
        "message": s("Commit message."),
        "branch": s("Branch to commit to."),
        "sha?": s("Blob SHA of the file being replaced (required for updates)."),
    }, "write", tags=("commit", "push")),
    t("create_branch", "Create a branch from another branch or commit.", {
        "repo": REPO,
        "branch": s("New branch name."),
        "from_ref?": s("Branch or SHA to start from; the default branch when omitted."),
    }, "write", tags=("git",)),
    t("list_commits", "List commits on a branch, optionally touching one path or by one author.", {
        "repo": REPO,
        "branch?": s("Branch; the default branch when omitted."),
        "path?": s("Only commits touching this path."),
        "author?": s("Only commits by this user."),
        "limit?": LIMIT,
    }, tags=("history", "log")),
    t("create_release", "Publish a release for a tag with notes, optionally generated from merged pull requests.", {
        "repo": REPO,
        "tag": s("Tag name, e.g. v1.4.0."),
        "name?": s("Release title."),
        "notes?": s("Release notes in Markdown."),
        "generate_notes?": b("Generate notes from merged pull requests.", default=False),
        "prerelease?": b("Mark as a pre-release.", default=False),
    }, "write", tags=("version", "changelog")),
    t("list_workflow_runs", "List recent GitHub Actions workflow runs with their status and conclusion.", {
        "repo": REPO,
        "workflow?": s("Workflow file name, e.g. ci.yml."),
        "status?": e("Filter by status.", "queued", "in_progress", "completed", "failure", "success"),
        "limit?": LIMIT,
    }, tags=("ci", "actions", "build")),
    t("rerun_workflow", "Re-run a failed GitHub Actions workflow run, optionally only its failed jobs.", {
        "repo": REPO,
        "run_id": i("Workflow run ID."),
        "failed_only?": b("Re-run only the failed jobs.", default=True),
    }, "exec", tags=("ci", "actions", "retry")),
    t("internal_rate_limit_status", "Report the remaining GitHub API quota of the connection (used by the gateway to back off).",
      {}, searchable=False, tags=("internal",)),
])

GITLAB = Service("gitlab", "GitLab", ("git", "code", "repository", "ci"), [
    t("create_merge_request", "Open a merge request from a source branch into a target branch.", {
        "project": s("Project path, e.g. group/app, or numeric ID."),
        "source_branch": s("Branch with the changes."),
        "target_branch": s("Branch to merge into."),
        "title": s("Merge request title."),
        "description?": s("Description in Markdown."),
        "remove_source_branch?": b("Delete the source branch after merge.", default=True),
    }, "write", tags=("mr", "code review", "pull request")),
    t("list_merge_requests", "List merge requests of a project by state.", {
        "project": s("Project path or ID."),
        "state?": e("Filter by state.", "opened", "closed", "merged", "all", default="opened"),
        "limit?": LIMIT,
    }, tags=("mr",)),
    t("create_issue", "Create an issue in a GitLab project.", {
        "project": s("Project path or ID."),
        "title": s("Issue title."),
        "description?": s("Description in Markdown."),
        "labels?": a("Label names."),
        "due_date?": s("Due date, YYYY-MM-DD.", format="date"),
    }, "write", tags=("ticket", "bug")),
    t("list_issues", "List issues of a project or group with filters.", {
        "project": s("Project path or ID."),
        "state?": e("Filter by state.", "opened", "closed", "all", default="opened"),
        "labels?": a("Only issues with these labels."),
        "limit?": LIMIT,
    }),
    t("trigger_pipeline", "Start a CI/CD pipeline on a branch or tag, with optional variables.", {
        "project": s("Project path or ID."),
        "ref": s("Branch or tag."),
        "variables?": {"type": "object", "description": "Pipeline variables.", "additionalProperties": {"type": "string"}},
    }, "exec", tags=("ci", "build", "deploy")),
    t("get_pipeline_status", "Get a pipeline's status and the status of each of its jobs.", {
        "project": s("Project path or ID."),
        "pipeline_id": i("Pipeline ID."),
    }, tags=("ci", "build")),
    t("get_job_log", "Fetch the trace (log output) of a CI job, to see why it failed.", {
        "project": s("Project path or ID."),
        "job_id": i("Job ID."),
        "tail_lines?": i("Only the last N lines.", minimum=1, default=200),
    }, tags=("ci", "logs", "debug")),
    t("search_code", "Search code blobs in a project or across the instance.", {
        "query": s("Text to search for."),
        "project?": s("Restrict to this project."),
    }, tags=("find", "grep")),
    t("approve_merge_request", "Approve a merge request.", {
        "project": s("Project path or ID."),
        "iid": i("Merge request IID (number within the project)."),
    }, "update", tags=("mr", "review")),
    t("list_projects", "List projects the user is a member of, optionally filtered by name.", {
        "search?": s("Words in the project name."),
        "limit?": LIMIT,
    }),
])

JIRA = Service("jira", "Jira", ("issues", "project management", "agile", "tickets"), [
    t("create_issue", "Create a Jira issue (story, bug, task or epic) in a project.", {
        "project_key": s("Project key, e.g. PLAT.", pattern="^[A-Z][A-Z0-9]+$"),
        "summary": s("One-line summary."),
        "issue_type": e("Issue type.", "Story", "Bug", "Task", "Epic", "Sub-task"),
        "description?": s("Description; Markdown is converted to Jira markup."),
        "priority?": e("Priority.", "Highest", "High", "Medium", "Low", "Lowest", default="Medium"),
        "assignee?": s("Assignee account ID or email."),
        "labels?": a("Labels."),
        "parent_key?": s("Parent issue key for sub-tasks, e.g. PLAT-12."),
    }, "write", tags=("ticket", "bug", "story"), zh=("创建 Jira 工单", "在 Jira 项目中创建需求、缺陷或任务。")),
    t("get_issue", "Fetch an issue with its status, assignee, sprint and recent comments.", {
        "issue_key": s("Issue key, e.g. PLAT-123."),
    }),
    t("search_issues", "Search issues with JQL, e.g. 'project = PLAT AND status = \"In Progress\" AND assignee = currentUser()'.", {
        "jql": s("JQL query."),
        "fields?": a("Fields to return; summary, status and assignee by default."),
        "limit?": LIMIT,
    }, tags=("jql", "find", "filter")),
    t("transition_issue", "Move an issue through its workflow, e.g. from To Do to In Progress or Done.", {
        "issue_key": s("Issue key."),
        "status": s("Target status name, e.g. Done."),
        "comment?": s("Comment added with the transition."),
    }, "update", tags=("status", "workflow")),
    t("assign_issue", "Assign an issue to a person, or unassign it.", {
        "issue_key": s("Issue key."),
        "assignee": s("Account ID or email; empty string to unassign."),
    }, "update"),
    t("add_comment", "Comment on an issue.", {
        "issue_key": s("Issue key."),
        "body": s("Comment text."),
    }, "write"),
    t("update_issue", "Change fields of an issue such as summary, priority, labels or story points.", {
        "issue_key": s("Issue key."),
        "summary?": s("New summary."),
        "priority?": e("New priority.", "Highest", "High", "Medium", "Low", "Lowest"),
        "labels?": a("Replace the labels."),
        "story_points?": {"type": "number", "description": "Estimate in story points.", "minimum": 0},
    }, "update"),
    t("log_work", "Log time spent on an issue.", {
        "issue_key": s("Issue key."),
        "time_spent": s("Duration in Jira notation, e.g. 2h 30m.", pattern="^(\\d+[wdhm]\\s*)+$"),
        "comment?": s("What the time was spent on."),
    }, "write", tags=("timesheet", "worklog")),
    t("list_sprints", "List the sprints of a board: active, future or closed.", {
        "board_id": i("Agile board ID."),
        "state?": e("Sprint state.", "active", "future", "closed", default="active"),
    }, tags=("scrum", "sprint")),
    t("move_to_sprint", "Move issues into a sprint.", {
        "sprint_id": i("Sprint ID."),
        "issue_keys": a("Issue keys to move.", minItems=1),
    }, "update", tags=("scrum", "planning")),
    t("link_issues", "Link two issues, e.g. 'blocks' or 'relates to'.", {
        "from_key": s("Issue key of the source."),
        "to_key": s("Issue key of the target."),
        "link_type": e("Link type.", "Blocks", "Relates", "Duplicate", "Cloners"),
    }, "write", tags=("dependency",)),
    t("delete_issue", "Delete an issue permanently, with its sub-tasks.", {
        "issue_key": s("Issue key."),
    }, "danger"),
])

LINEAR = Service("linear", "Linear", ("issues", "project management", "roadmap"), [
    t("create_issue", "Create a Linear issue in a team, with priority, estimate, labels and assignee.", {
        "team": s("Team key, e.g. ENG."),
        "title": s("Issue title."),
        "description?": s("Description in Markdown."),
        "priority?": i("0 none, 1 urgent, 2 high, 3 medium, 4 low.", minimum=0, maximum=4),
        "assignee?": s("Assignee name or email."),
        "labels?": a("Label names."),
        "project?": s("Project name."),
    }, "write", tags=("ticket", "bug")),
    t("update_issue", "Update a Linear issue's state, priority, assignee or cycle.", {
        "issue_id": s("Issue identifier, e.g. ENG-482."),
        "state?": s("Workflow state name, e.g. In Review."),
        "priority?": i("0 none, 1 urgent, 2 high, 3 medium, 4 low.", minimum=0, maximum=4),
        "assignee?": s("Assignee name or email."),
        "cycle?": s("Cycle name or number."),
    }, "update"),
    t("search_issues", "Search Linear issues by text with optional team and state filters.", {
        "query": s("Words to search for."),
        "team?": s("Team key."),
        "state?": s("Workflow state name."),
        "limit?": LIMIT,
    }, tags=("find",)),
    t("get_issue", "Fetch one issue with its description, comments and sub-issues.", {
        "issue_id": s("Issue identifier."),
    }),
    t("comment_on_issue", "Add a comment to an issue.", {
        "issue_id": s("Issue identifier."),
        "body": s("Comment in Markdown."),
    }, "write"),
    t("list_projects", "List projects with their lead, target date and progress.", {
        "team?": s("Only projects of this team."),
    }, tags=("roadmap",)),
    t("create_project", "Create a project with a target date and members.", {
        "name": s("Project name."),
        "teams": a("Team keys taking part.", minItems=1),
        "target_date?": s("Target date, YYYY-MM-DD.", format="date"),
        "description?": s("Summary of the project."),
    }, "write", tags=("roadmap", "planning")),
    t("list_cycles", "List a team's current and upcoming cycles with their scope and completion.", {
        "team": s("Team key."),
    }, tags=("sprint", "iteration")),
    t("get_my_issues", "List issues assigned to the authorised user, grouped by state.", {
        "include_completed?": b("Include done and cancelled issues.", default=False),
    }, tags=("todo", "assigned")),
])

SERVICES = [GITHUB, GITLAB, JIRA, LINEAR]
