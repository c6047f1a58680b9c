"""The system-prompt snippet of seed 001, adapted: tells the model to search before acting
and lists the catalog's categories (capped, so a huge catalog stays a short prompt)."""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["system_prompt"]

_TEMPLATE = """\
You can use a large library of tools, but only a few are loaded at a time to save context \
and keep tool choice accurate.

## Finding tools
Call `{meta}` with a short description of the capability you need (for example "send slack \
message to channel", "create github pull request"). It returns the best matching tools with \
their full definitions; then call the one that fits with the arguments its schema requires.
- Search whenever a request needs an action none of your visible tools performs.
- Use concrete keywords: the service ("jira"), the object ("pull request"), the action \
("create", "list").
- If a search finds nothing useful, rephrase it or narrow it with a category.
- Searching only reveals tools; it never runs them.

## Tool categories
{categories}"""


def system_prompt(
    categories: Mapping[str, int], meta_tool_name: str = "find_tools", *, max_categories: int = 40
) -> str:
    """Seed 001's system message for a catalog with these ``{category: tool count}``."""
    ranked = sorted(categories.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = [f"- {name} ({count})" for name, count in ranked[:max_categories]]
    rest = ranked[max_categories:]
    if rest:
        shown.append(f"- ... and {len(rest)} more categories ({sum(c for _, c in rest)} tools)")
    listing = "\n".join(shown) if shown else "- (the catalog is empty)"
    return _TEMPLATE.format(meta=meta_tool_name, categories=listing)
