"""OpenAI Responses loop; ``--native`` uses the API's client-executed ``tool_search``.

    pip install 'toolscout[openai]'; OPENAI_API_KEY=... python examples/openai_responses.py [--native]
"""

from __future__ import annotations

import os
import sys

from _catalog import PROMPT, extra, new_session, run

from toolscout.adapters.openai import ResponsesAdapter


def main() -> None:
    session = new_session()
    adapter = ResponsesAdapter(session, native="--native" in sys.argv)
    if not os.environ.get("OPENAI_API_KEY"):
        print("first request's tools:", [t.get("name", t["type"]) for t in adapter.tools()])
        print(session.ledger.report())
        print("set OPENAI_API_KEY to run the loop against the API")
        return
    with extra("openai"):
        from openai import OpenAI

    items: list = [{"role": "user", "content": PROMPT}]
    final = adapter.run(
        OpenAI(),
        model=os.environ.get("OPENAI_MODEL", "gpt-5.4"),
        input=items,
        instructions=session.gateway.system_prompt(),
    )
    print(final.output_text)
    print(session.ledger.report())


if __name__ == "__main__":
    run(main)
