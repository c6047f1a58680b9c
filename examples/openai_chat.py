"""OpenAI Chat Completions loop with a toolscout session.

    pip install 'toolscout[openai]'; OPENAI_API_KEY=... python examples/openai_chat.py
"""

from __future__ import annotations

import os

from _catalog import PROMPT, extra, new_session, run

from toolscout.adapters.openai import ChatCompletionsAdapter


def main() -> None:
    session = new_session()
    adapter = ChatCompletionsAdapter(session)
    if not os.environ.get("OPENAI_API_KEY"):
        print("first request's tools:", [t["function"]["name"] for t in adapter.tools()])
        print(session.ledger.report())
        print("set OPENAI_API_KEY to run the loop against the API")
        return
    with extra("openai"):
        from openai import OpenAI

    messages = [
        {"role": "system", "content": session.gateway.system_prompt()},
        {"role": "user", "content": PROMPT},
    ]
    final = adapter.run(OpenAI(), model=os.environ.get("OPENAI_MODEL", "gpt-4.1-mini"), messages=messages)
    print(final.choices[0].message.content)
    print(session.ledger.report())


if __name__ == "__main__":
    run(main)
