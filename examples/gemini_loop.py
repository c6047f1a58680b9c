"""Google Gemini loop (``google-genai``) with a toolscout session.

    pip install 'toolscout[gemini]'; GEMINI_API_KEY=... python examples/gemini_loop.py
"""

from __future__ import annotations

import os

from _catalog import PROMPT, extra, new_session, run

from toolscout.adapters.gemini import GeminiAdapter


def main() -> None:
    session = new_session()
    adapter = GeminiAdapter(session)
    if not os.environ.get("GEMINI_API_KEY"):
        print("first request's tools:", [d.name for d in adapter.tools()[0].function_declarations])
        print(session.ledger.report())
        print("set GEMINI_API_KEY to run the loop against the API")
        return
    with extra("gemini"):
        from google import genai

    contents: list = [PROMPT]
    final = adapter.run(
        genai.Client(),
        model=os.environ.get("GEMINI_MODEL", "gemini-2.5-flash"),
        contents=contents,
        system_instruction=session.gateway.system_prompt(),
    )
    print(final.text)
    print(session.ledger.report())


if __name__ == "__main__":
    run(main)
