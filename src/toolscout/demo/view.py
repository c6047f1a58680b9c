"""Draw a :func:`~toolscout.demo.runner.run_demo` result: boxed with rich on a terminal,
plain lines when piped (``toolscout demo | cat``, a CI log): a box squeezed into 80 columns
splits names and JSON across lines, which ``grep`` then cannot find."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

__all__ = ["show_demo"]


def show_demo(run: dict[str, Any], console: Console) -> None:
    boxed = console.is_terminal
    show = console.print if boxed else (lambda part: _print_plain(part, console))
    show(_header(run))
    show(_searches(run))
    first = next((s for s in run["searches"] if s["tools"]), None)
    if first is not None:
        name = first["tool_references"][0]["tool_name"]
        schema = json.dumps(first["tools"][0], ensure_ascii=False)
        title = f"what the model receives for {name} ({run['format']} format)"
        if boxed:
            console.print(
                Panel(Syntax(schema, "json", theme="ansi_dark", word_wrap=True), title=title, title_align="left", border_style="dim")
            )
        else:
            _echo(console, f"{title}\n{schema}\n")
    if run["calls"]:
        show(_calls(run))
    if run.get("learning"):
        show(_learning(run["learning"]))
    show(_tokens(run))
    done = Text(f"Done in {run['elapsed_ms'] / 1000:.2f} s, offline. Try: {next_step(run)}", style="dim")
    console.print(done) if boxed else _echo(console, done.plain)


def next_step(run: dict[str, Any]) -> str:
    """A command the reader has not just run: the scripted demo suggests a query of their
    own; after ``--query`` the next step is their own catalog or a client."""
    if run.get("query") is None:
        return "toolscout demo --query 'open a jira ticket' --format anthropic"
    return "toolscout serve demo (an MCP client over stdio) or toolscout console demo (the web console)"


def _echo(console: Console, text: str) -> None:
    console.print(text, markup=False, highlight=False, soft_wrap=True, crop=False)


def _text(cell: Any) -> str:
    """A cell's text on one line (a multi-line cell's lines joined with ``; ``)."""
    text = cell.plain if isinstance(cell, Text) else str(cell)
    return "; ".join(part.strip() for part in text.splitlines() if part.strip())


def _print_plain(part: Panel | Table, console: Console) -> None:
    """A panel's text, or a table as a title, a header and one line per row, columns
    separated by `` | ``; nothing wrapped or cut, whatever the width."""
    if isinstance(part, Panel):
        body = part.renderable
        texts = body.renderables if isinstance(body, Group) else [body]
        _echo(console, "\n".join(_text(t) if isinstance(t, Text) else str(t) for t in texts) + "\n")
        return
    lines = [_text(part.title)] if part.title else []
    lines.append(" | ".join(_text(c.header) for c in part.columns))
    rows = zip(*(c._cells for c in part.columns), strict=True)
    lines += [" | ".join(_text(cell) for cell in row) for row in rows]
    if part.caption:
        lines.append(_text(part.caption))
    _echo(console, "\n".join(lines) + "\n")


def _header(run: dict[str, Any]) -> Panel:
    cat = run["catalog"]
    cats = " · ".join(f"{name} {n}" for name, n in cat["categories"].items())
    body = Group(
        Text.from_markup(
            f"[bold]{cat['tools']} tools[/bold] in [bold]{len(cat['categories'])} services[/bold] "
            f"({cat['searchable']} searchable; the rest is internal plumbing), plus "
            f"{cat.get('skills', 0)} skills and {cat.get('agents', 0)} agents found on request, loaded in "
            f"{cat['load_ms']:.0f} ms, indexed in {cat['index_ms']:.0f} ms. Service tools answer "
            "with [italic]simulated[/italic] results; math, units, time and text tools really run."
        ),
        Text(cats, style="dim"),
    )
    return Panel(body, title="[bold cyan]toolscout demo[/bold cyan]", title_align="left")


def _searches(run: dict[str, Any]) -> Table:
    table = Table(title="1. The model calls find_tools", title_justify="left", expand=True)
    table.add_column("kind", style="dim", no_wrap=True)
    table.add_column("query", ratio=2, overflow="fold")
    table.add_column("result (relevance 0..1)", ratio=3)
    table.add_column("ms", justify="right", no_wrap=True)
    for s in run["searches"]:
        meta = s["search_metadata"]
        table.add_row(s["label"], Text(repr(meta["query"])), _found(s), f"{meta['execution_time_ms']:.2f}")
    return table


def _found(search: dict[str, Any]) -> Text:
    error = search.get("error")
    if error:
        text = Text(f"{error['code']}", style="bold yellow")
        text.append(f": {error['message']}")
        details = error.get("details", {})
        if details.get("suggestions"):
            text.append(f"\ndid you mean: {', '.join(details['suggestions'])}", style="yellow")
        if details.get("categories"):
            cats = list(details["categories"])
            text.append(f"\ncategories ({len(cats)}): {', '.join(cats[:8])}…", style="dim")
        return text
    text = Text()
    for i, ref in enumerate(search["tool_references"]):
        if i:
            text.append("\n")
        text.append(ref["tool_name"], style="bold green")
        text.append(f" {ref['relevance_score']:.2f}", style="dim")
        if ref.get("kind") == "skill":
            text.append(f"\n  skill: its instructions load when called, or from {ref['load']['resource']}", style="cyan")
        elif ref.get("kind") == "agent":
            skills = ", ".join(s.get("name") or s.get("id", "?") for s in ref["agent"].get("skills", []))
            text.append(f"\n  agent at {ref['agent']['url']}; skills: {skills}", style="cyan")
    total = search["total_matches"]
    if total > len(search["tool_references"]):
        text.append(f"\n({total} matched; best shown)", style="dim")
    return text


def _calls(run: dict[str, Any]) -> Table:
    table = Table(title="2. The model calls tools", title_justify="left", expand=True)
    table.add_column("kind", style="dim", no_wrap=True)
    table.add_column("call", ratio=2)
    table.add_column("outcome", ratio=3)
    for c in run["calls"]:
        args = json.dumps(c["arguments"], ensure_ascii=False)
        if "use_tool_query" in c:
            call = Text(f"use_tool({c['use_tool_query']!r})", style="bold")
            if c["ok"]:
                call.append(f"\n-> {c['tool']}", style="green")
        else:
            call = Text(c["tool"], style="bold")
        call.append(f"\n{args}", style="dim")
        table.add_row(c["label"], call, _outcome(c))
    return table


def _outcome(call: dict[str, Any]) -> Text:
    if call["ok"]:
        texts = [b.get("text", "") for b in call["content"] if b.get("type") == "text"]
        plain = "structured" not in call and len(texts) == 1  # a text answer (a skill's instructions)
        body = texts[0] if plain else json.dumps(call.get("structured", call["content"]), ensure_ascii=False)
        text = Text("ok ", style="bold green")
        text.append(body if len(body) <= 240 else body[:239] + "…")
        return text
    error = call["error"]
    text = Text(error["code"], style="bold red")
    text.append(f": {error['message']}")
    details = error.get("details", {})
    if details.get("suggestions"):
        text.append(f"\ndid you mean: {', '.join(details['suggestions'])}", style="yellow")
    if details.get("candidates"):
        names = [c["name"] if isinstance(c, dict) else str(c) for c in details["candidates"]]
        text.append(f"\ncandidates: {', '.join(names)}", style="yellow")
    if error.get("hint"):
        text.append(f"\n{error['hint']}", style="dim")
    return text


def _learning(learning: dict[str, Any]) -> Table:
    table = Table(
        title=f"3. Ranking that learns: {learning['query']!r} after {learning['sessions']} sessions "
        f"called {learning['chosen']}",
        title_justify="left",
    )
    table.add_column("rank", justify="right", style="dim")
    table.add_column("before")
    table.add_column("after")
    boosts = learning["usage_boost"]
    for rank, (old, new) in enumerate(zip(learning["before"], learning["after"], strict=False), 1):
        boost = boosts.get(new)
        shown = f"{new} (usage +{boost:.2f})" if boost and boost > 0 else new
        table.add_row(str(rank), Text(old), Text(shown, style="bold" if new == learning["chosen"] else ""))
    table.caption = "The full effect needs agreement across sessions; one session alone moves a tool only a little (docs/learning.md)."
    return table


def _tokens(run: dict[str, Any]) -> Table:
    tok = run["tokens"]
    note = "" if not tok["estimate"] else " (estimate for this format)"
    table = Table(
        title=f"{4 if run.get('learning') else 3 if run['calls'] else 2}. Tool-definition tokens ({tok['encoding']}, {tok['format']}){note}",
        title_justify="left",
    )
    table.add_column("what the model is sent")
    table.add_column("tokens", justify="right")
    table.add_column("of static", justify="right")
    for scenario, tokens, share in tok["rows"]:
        table.add_row(scenario, f"{tokens:,}", share)
    table.caption = f"{tok['saved_pct']:.1f}% fewer tool tokens, even after {tok['searches']} searches"
    return table
