"""Anthropic Messages loop; ``--native`` declares deferred tools with ``defer_loading`` and
answers searches with ``tool_reference`` blocks.

    pip install 'toolscout[anthropic]'; ANTHROPIC_API_KEY=... python examples/anthropic_messages.py [--native]
"""

from __future__ import annotations

import os
import sys

from _catalog import PROMPT, extra, new_session, run

from toolscout.adapters.anthropic import MessagesAdapter


def main() -> None:
    session = new_session()
    adapter = MessagesAdapter(session, native="--native" in sys.argv)
    if not os.environ.get("ANTHROPIC_API_KEY"):
        tools = adapter.tools()
        print("first request's tools:", [t["name"] for t in tools if not t.get("defer_loading")])
        print("deferred (defer_loading):", sum(1 for t in tools if t.get("defer_loading")))
        print(session.ledger.report())
        print("set ANTHROPIC_API_KEY to run the loop against the API")
        return
    with extra("anthropic"):
        from anthropic import Anthropic

    messages: list = [{"role": "user", "content": PROMPT}]
    final = adapter.run(
        Anthropic(),
        model=os.environ.get("ANTHROPIC_MODEL", "claude-sonnet-4-5"),
        messages=messages,
        system=session.gateway.system_prompt(),
    )
    print("".join(b.text for b in final.content if b.type == "text"))
    print(session.ledger.report())


if __name__ == "__main__":
    run(main)
