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
- ``_catalogs``: ``catalog_of(tools, fillers=n)``, a small catalog for ranking tests;
- ``_session_fixtures``: a scripted catalog and session, provider turns, ``claude_results``;
- ``_sdk_requests``: the provider SDKs' request types;
- ``mcp_fixtures``: scripted (and hostile) MCP upstream servers.

The fixtures of real, throwaway servers are registered here for every folder: ``postgres``
(session) and ``pg_dsn`` (a database per test) from ``_postgres``, ``redis_server`` from
``_redis``, and ``span_exporter`` (OpenTelemetry into the SDK's in-memory exporter) from
``_spans``. Each starts only when a test asks for it, and skips saying why when the server's
binaries are absent.
"""

import pytest

pytest_plugins = ["_postgres", "_redis", "_spans"]


# -- the slow marker ----------------------------------------------------------------------------
# Integration tests of a minute-class cost each on 2 cores: int8 encoder builds from the real
# model, fleets of serve processes over PostgreSQL and Redis, the MCP Inspector and
# conformance suites, the multilingual models, hypothesis fuzzing of every source kind. They
# are marked here in one list (not in each file) and deselected by default (pyproject's
# addopts: -m "not slow"); `pytest -m slow` runs them, and CI does so after the main suite
# (`bash scripts/test`, which .ci/run calls). Nothing is dropped: every test runs in CI.
SLOW: tuple[str, ...] = (
    "tests/embed/test_query_encoders.py::test_int8_query_encoders_are_near_the_model_and_built_once",
    "tests/embed/test_query_encoders.py::test_search_and_serve_take_the_query_encoder_option",
    "tests/embed/test_query_encoders.py::test_the_two_int8_recipes_are_cached_apart",
    "tests/embed/test_query_encoders.py::test_blockwise_encoder_is_fused_and_built_unfused_without_onnxscript",
    "tests/embed/test_query_encoders.py::test_default_model_embeds_queries_blockwise_and_falls_back_to_itself",
    "tests/sources/mcp/test_mcp_real.py::test_inspector_cli_lists_and_calls_through_the_gateway",
    "tests/storage/test_replicas.py::test_three_serve_processes_share_one_catalog",
    "tests/server/test_scale_out.py::test_three_replicas_on_postgres_and_redis_survive_a_killed_replica",
    "tests/server/test_conformance.py::test_every_scenario_passes_through_toolscout_serve",
    "tests/server/test_mcp_replicas.py::test_reveal_on_one_replica_call_on_the_other_and_survive_a_killed_replica",
    "tests/server/test_mcp_relay.py::test_sampling_and_elicitation_reach_the_client_that_made_the_call",
    "tests/search/test_crosslingual.py::test_cli_model_multilingual",
    "tests/search/test_crosslingual.py::test_multilingual_e5_routes_on_a_small_catalog",
    "tests/search/test_crosslingual.py::test_serve_model_multilingual_sets_up_the_routed_search",
    "tests/search/test_crosslingual.py::test_multilingual_models_are_hash_pinned_and_cross_languages",
    "tests/sources/test_fuzz_sources.py::",
    "tests/server/test_otlp_export.py::",
)


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.nodeid.startswith(SLOW):
            item.add_marker(pytest.mark.slow)
