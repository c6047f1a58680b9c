"""Shared test set-up. The tests mirror the package: ``tests/<package>/`` holds the tests of
``src/toolscout/<package>/``, ``tests/core/`` those of its top-level modules, and ``tests/``
itself the project-wide checks (layout, public API, README).

Helpers every folder imports by name (``pythonpath = ["tests"]`` in pyproject.toml):

- ``_wait``: ``wait_until(predicate, timeout)`` and ``await until(predicate, timeout)``, the
  one bounded wait for a condition (never a fixed sleep);
- ``_procs``: ``free_port()``, ``wait_http(proc, url, ready=...)``, ``stop(*procs)`` for the
  server processes a test starts;
- ``_paths``: ``ROOT``, ``DOCS``, ``EXAMPLES``, ``FIXTURES`` (``tests/fixtures``);
- ``_fake_embed``: ``FakeEmbedder``, a deterministic embedder for logic tests;
- ``_session_fixtures``: a scripted catalog and session, provider turns, ``claude_results``;
- ``_sdk_requests``: the provider SDKs' request types;
- ``mcp_fixtures``: scripted (and hostile) MCP upstream servers.

The fixtures of real, throwaway servers are registered here for every folder: ``postgres``
(session) and ``pg_dsn`` (a database per test) from ``_postgres``, ``redis_server`` from
``_redis``. Each starts only when a test asks for it, and skips saying why when the server's
binaries are absent.
"""

pytest_plugins = ["_postgres", "_redis"]
