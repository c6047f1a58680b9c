"""Provider adapters: drive an official SDK's agent loop through a :class:`~toolscout.session.Session`.

Each adapter builds the request's tools for the session, turns the SDK's tool calls into
``session.handle`` calls, and builds the tool-result messages in the shape its API
requires (every tool call answered, also unknown tools and broken arguments). The SDKs
are optional extras, imported only when an adapter needs them::

    from toolscout.adapters.openai import ChatCompletionsAdapter, ResponsesAdapter
    from toolscout.adapters.anthropic import MessagesAdapter
    from toolscout.adapters.gemini import GeminiAdapter
    from toolscout.adapters.langchain import LangChainAdapter
"""

__all__ = ["anthropic", "gemini", "langchain", "openai"]  # the adapters, one module each (SDKs load lazily)
