"""LangChain loop: the session's tools are re-bound to the chat model at every step.

Works with any LangChain chat model that supports ``bind_tools``; this example uses
``langchain-openai`` when it is installed.

    pip install 'toolscout[langchain]' langchain-openai; OPENAI_API_KEY=... python examples/langchain_agent.py
"""

from __future__ import annotations

import os

from _catalog import PROMPT, extra, new_session, run

from toolscout.adapters.langchain import LangChainAdapter


def main() -> None:
    session = new_session()
    adapter = LangChainAdapter(session)
    if not os.environ.get("OPENAI_API_KEY"):
        print("first step's tools:", [d["function"]["name"] for d in adapter.definitions()])
        print(session.ledger.report())
        print("set OPENAI_API_KEY (and install langchain-openai) to run the loop")
        return
    with extra("langchain", also="langchain-openai"):
        from langchain_core.messages import HumanMessage, SystemMessage
        from langchain_openai import ChatOpenAI

    messages: list = [SystemMessage(session.gateway.system_prompt()), HumanMessage(PROMPT)]
    final = adapter.run(ChatOpenAI(model=os.environ.get("OPENAI_MODEL", "gpt-4.1-mini")), messages)
    print(final.content)
    print(session.ledger.report())


if __name__ == "__main__":
    run(main)
