"""Sub-intents and set-aware ranking (issue 32): a request that asks for several things is
split without a model, every part is covered before any is deepened, a single-intent
request ranks exactly as before, and callers see which part each tool answers."""

from __future__ import annotations

import pytest

from _catalogs import catalog_of
from _fake_embed import FakeEmbedder
from toolscout import Catalog, Tool
from toolscout.demo import demo_catalog
from toolscout.errors import Ambiguous
from toolscout.gateway import Gateway
from toolscout.search.hybrid import enable_hybrid
from toolscout.search.index import ToolIndex
from toolscout.search.learning import UsageLearner
from toolscout.search.ranking import ScoredTool
from toolscout.search.sets import rank_set
from toolscout.search.subintents import MAX_INTENTS, SubIntent, split_intents
from toolscout.session import Session

OBJ = {"type": "object"}


def texts(query: str) -> list[str]:
    return [si.text for si in split_intents(query)]


@pytest.mark.parametrize(
    ("query", "parts"),
    [
        ("roll back the deployment and tell slack", ["roll back the deployment", "tell slack"]),
        ("Find the latest invoice. Then email it to accounting.", ["Find the latest invoice", "email it to accounting"]),
        ("get the weather in Paris, translate it to French and post it on slack",
         ["get the weather in Paris", "translate it to French", "post it on slack"]),
        ("turn last week's open GitHub issues into a slide deck and email it to the team",
         ["turn last week's open GitHub issues", "create a slide deck", "email it to the team"]),
        # Spanish, German, French, Italian, Portuguese, Dutch
        ("busca vuelos a Madrid y envía el itinerario por correo", ["busca vuelos a Madrid", "envía el itinerario por correo"]),
        ("suche Flüge nach Berlin und dann schicke mir eine E-Mail", ["suche Flüge nach Berlin", "schicke mir eine E-Mail"]),
        ("cherche un hôtel à Paris et envoie le lien à Marie", ["cherche un hôtel à Paris", "envoie le lien à Marie"]),
        ("cerca un volo per Roma e poi prenota un albergo", ["cerca un volo per Roma", "prenota un albergo"]),
        ("procura voos para Lisboa e depois reserve um hotel", ["procura voos para Lisboa", "reserve um hotel"]),
        ("zoek een vlucht naar Amsterdam en daarna boek een hotel", ["zoek een vlucht naar Amsterdam", "boek een hotel"]),
        # Chinese, Japanese, Korean: sequence words
        ("查找明天的天气然后发送邮件给团队", ["查找明天的天气", "发送邮件给团队"]),
        ("明日の天気を調べて、それからチームにメールを送る", ["明日の天気を調べて", "チームにメールを送る"]),
        ("내일 날씨를 찾아줘 그리고 팀에게 이메일을 보내줘", ["내일 날씨를 찾아줘", "팀에게 이메일을 보내줘"]),
        # verbs in a row, no conjunction: a verb with its object after a content word
        ("find cheap flights book a hotel email the itinerary to me",
         ["find cheap flights", "book a hotel", "email the itinerary to me"]),
        # a sentence that says what else is wanted in other words
        ("Give me the latest news from Istanbul. I'm also interested in the exchange rates for the lira.",
         ["Give me the latest news from Istanbul", "I'm also interested in the exchange rates for the lira"]),
        # a sentence opened by a sequence word asks like any other ("After that, I would like ...")
        ("Retrieve the data of robot A5. After that, I would like to retrieve reproductive information for dogs. "
         "Secondly, I am interested in the gymnast Simone Biles.",
         ["Retrieve the data of robot A5", "I would like to retrieve reproductive information for dogs",
          "I am interested in the gymnast Simone Biles"]),
        # "Additionally," before a sentence that only sets the scene: the question after it is the new step
        ("I need the latest fuel prices in Turkey. Additionally, I'm researching recent earthquakes. "
         "Can you provide me with information about the latest earthquakes?",
         ["I need the latest fuel prices in Turkey", "Can you provide me with information about the latest earthquakes"]),
        # a heading before "First, ...": the steps follow it
        ("I need help with some fitness calculations. First, calculate my one-rep max. Next, retrieve the analysis for Tom Brady.",
         ["calculate my one-rep max", "retrieve the analysis for Tom Brady"]),
    ],
)
def test_a_request_of_several_steps_is_split_in_every_language(query: str, parts: list[str]) -> None:
    assert texts(query) == parts
    assert [si.index for si in split_intents(query)] == list(range(len(parts)))


@pytest.mark.parametrize(
    "query",
    [
        "send a message",
        "search for black and white photos of cats",  # "and" between words, not steps
        "Tom and Jerry episodes",
        "get next week's weather",
        "What is the weather in Paris and London?",
        # context sentences ask for nothing: one request
        "I'm a filmmaker working on a short. Can you recommend similar movies to Alien?",
        "Can you help me? I need the exchange rate of the euro.",
        "create_invoice",
        # a verb after a function word is part of the same step
        "I want to book a hotel in Rome",
        "help me book a room",
        "the price of the book a customer bought",
    ],
)
def test_a_single_intent_request_stays_as_it_is(query: str) -> None:
    assert texts(query) == [" ".join(query.split())]


def test_a_long_request_costs_a_bounded_number_of_sub_searches() -> None:
    query = ". ".join(f"Find the report number {i} for the board" for i in range(12))
    parts = split_intents(query)
    assert len(parts) == MAX_INTENTS and "number 11" in parts[-1].text


def _hit(name: str, score: float, description: str = "") -> ScoredTool:
    return ScoredTool(Tool(name, description or f"The {name} tool.", OBJ), score, min(1.0, score))


def test_the_set_holds_a_tool_for_every_sub_intent() -> None:
    whole = [_hit(f"k8s_{i}", 10 - i) for i in range(10)]
    deploy = [_hit(f"k8s_{i}", 10 - i) for i in range(10)]
    slack = [_hit("slack_send", 3.0), _hit("slack_search", 2.0), _hit("slack_edit", 1.0)]
    a, b = SubIntent("roll back the deployment", 0), SubIntent("tell slack", 1)
    out = rank_set(whole, [(a, deploy), (b, slack)], 5)
    names = [h.tool.name for h in out]
    assert names[:4] == ["k8s_0", "k8s_1", "k8s_2", "k8s_3"]  # the whole request's order is kept
    assert names[4] == "slack_send" and len(names) == 5  # and the other step is in the list
    assert out[4].intent == "tell slack" and out[0].intent == "roll back the deployment"
    # a step whose best tool the list shows anyway changes nothing
    assert [h.tool.name for h in rank_set(whole, [(a, deploy)], 5)] == [f"k8s_{i}" for i in range(5)]


def test_a_step_keeps_the_slot_the_whole_list_gave_its_best_tool() -> None:
    # the first step's best tool is the whole list's tenth; the second step's comes in: the
    # ninth tool (no step's best) gives way, not the tenth
    whole = [_hit(f"validator_{i}", 10 - i) for i in range(9)] + [_hit("email_exist", 0.5)]
    first = SubIntent("make sure the addresses exist", 0)
    second = SubIntent("validate their format", 1)
    out = rank_set(whole, [(first, [_hit("email_exist", 3)]), (second, [_hit("email_format", 3)])], 10)
    names = [h.tool.name for h in out]
    assert names[:8] == [f"validator_{i}" for i in range(8)]
    assert names[8:] == ["email_exist", "email_format"] and "validator_8" not in names


def test_copies_of_one_tool_go_last() -> None:
    whole = [_hit("a_send_email", 5, "Send an email to a recipient."), _hit("b_send_email", 4.9, "Send an email to a recipient."),
             _hit("read_email", 4, "Read an email.")]
    chart = [_hit("make_chart", 2, "Draw a bar chart.")]
    out = rank_set(whole, [(SubIntent("email it", 0), whole), (SubIntent("make a chart", 1), chart)], 4)
    assert [h.tool.name for h in out] == ["a_send_email", "read_email", "make_chart", "b_send_email"]


def test_co_usage_completes_the_set() -> None:
    whole = [_hit("fetch_issues", 5), _hit("fetch_comments", 4), _hit("fetch_users", 3)]
    other = [_hit("send_email", 2), _hit("send_sms", 1.9), _hit("export_pdf", 1.0)]
    parts = [(SubIntent("fetch issues", 0), whole), (SubIntent("send them", 1), other)]
    plain = [h.tool.name for h in rank_set(whole, parts, 4)]
    used = [h.tool.name for h in rank_set(whole, parts, 4, co_usage={"fetch_issues": ["export_pdf"]})]
    assert "export_pdf" not in plain and "export_pdf" in used


def test_a_piece_that_only_asks_is_not_a_step() -> None:
    # "Can you provide me with the list?" points back at the other sentences: searched alone
    # it would find a tool for "list"
    query = ("I'm curious about the carriers for international shipping. Can you provide me with the list? "
             "Also, I want to track a package with the tracking number NY323068698GB.")
    assert texts(query) == ["I'm curious about the carriers for international shipping",
                            "I want to track a package with the tracking number NY323068698GB"]
    # a short step that does something stays one ("send it"), and so does a step with its own object
    assert texts("Find the invoice. Then send it.") == ["Find the invoice", "send it"]
    assert "can you give me the tracking information" in texts(
        "Find the carriers for shipping. Also, can you give me the tracking information?")


def _small() -> Catalog:
    return catalog_of(
        (
            ("k8s_rollback_deployment", "Roll back a Kubernetes deployment to its previous revision."),
            ("k8s_restart_deployment", "Restart the pods of a Kubernetes deployment."),
            ("k8s_scale_deployment", "Scale a Kubernetes deployment to a number of replicas."),
            ("k8s_list_deployments", "List the deployments of a namespace."),
            ("k8s_deployment_status", "Show the rollout status of a deployment."),
            ("slack_send_message", "Post a message to a Slack channel."),
            ("slack_search_messages", "Search Slack messages."),
            ("weather_current", "Current weather for a city."),
        ),
    )


def test_the_usage_learner_co_usage_reaches_a_set() -> None:
    # sessions that rolled a deployment back also checked the weather (searched apart, so
    # only co-usage ties the two): a request of two steps gets the weather tool in
    index = ToolIndex(_small())
    query = "roll back the deployment and tell slack"
    plain = [h.tool.name for h in index.search(query, limit=4, autocut=False).hits]
    learner = UsageLearner()
    for session in ("s1", "s2"):
        learner.searched(session, "rollback", ["k8s_rollback_deployment"])
        learner.called(session, "k8s_rollback_deployment", True)
        learner.searched(session, "city forecast", ["weather_current"])
        learner.called(session, "weather_current", True)
    index.usage = learner
    used = [h.tool.name for h in index.search(query, limit=4, autocut=False).hits]
    assert "weather_current" not in plain and "weather_current" in used
    assert used[0] == "k8s_rollback_deployment" and "slack_send_message" in used
    # a tool the caller may not see never comes in through co-usage
    hidden = index.search(query, limit=4, autocut=False, allow=lambda t: t.name != "weather_current")
    assert "weather_current" not in [h.tool.name for h in hidden.hits]


@pytest.mark.parametrize("mode", ["keyword", "regex"])
def test_a_single_intent_request_ranks_exactly_as_before(mode: str) -> None:
    index = ToolIndex(_small())
    query = "roll back the deployment" if mode == "keyword" else "deploy"
    out = index.search(query, limit=5, mode=mode, autocut=False)
    assert out.intents == [] and all(h.intent is None for h in out.hits)
    assert out.hits[0].tool.name.startswith("k8s_")


def test_the_split_is_visible_and_each_tool_says_what_it_answers() -> None:
    gw = Gateway(_small())
    found = gw.find_tools("roll back the deployment and tell slack", limit=3)
    names = [r.tool_name for r in found.tool_references]
    assert names[0] == "k8s_rollback_deployment" and "slack_send_message" in names
    data = found.to_dict()
    assert data["search_metadata"]["sub_intents"] == ["roll back the deployment", "tell slack"]
    answers = {r["tool_name"]: r.get("answers") for r in data["tool_references"]}
    assert answers["slack_send_message"] == "tell slack"
    assert answers["k8s_rollback_deployment"] == "roll back the deployment"
    assert gw.index.intents("roll back the deployment and tell slack") == ["roll back the deployment", "tell slack"]
    single = gw.find_tools("roll back the deployment", limit=3).to_dict()
    assert "sub_intents" not in single["search_metadata"]
    assert all("answers" not in r for r in single["tool_references"])


def test_preselect_reveals_a_tool_for_every_step_on_the_demo_catalog() -> None:
    session = Session(Gateway(demo_catalog()), threshold=3)
    revealed = session.preselect("roll back the deployment and tell slack", k=3)
    assert revealed[0] == "k8s_rollback_deployment"
    assert any(name.startswith("slack_") for name in revealed)  # was Kubernetes tools only


def test_use_tool_runs_no_single_tool_for_a_request_of_several_steps() -> None:
    gw = Gateway(_small())
    result = gw.use_tool("roll back the deployment and tell slack")
    assert not result.ok and isinstance(result.error, object)
    assert result.error is not None and result.error.code == Ambiguous.code
    steps = result.error.details["steps"]
    assert [s["step"] for s in steps] == ["roll back the deployment", "tell slack"]
    assert steps[1]["tool"] == "slack_send_message"
    assert gw.use_tool("roll back the deployment").ok  # one step: run as before


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_the_embedding_modes_cover_every_step_too(mode: str) -> None:
    index = ToolIndex(_small())
    enable_hybrid(index, FakeEmbedder())
    out = index.search("roll back the deployment and tell slack", limit=3, mode=mode, autocut=False)
    names = [h.tool.name for h in out.hits]
    assert out.intents == ["roll back the deployment", "tell slack"]
    assert any(n.startswith("k8s_") for n in names) and any(n.startswith("slack_") for n in names)
    single = index.search("roll back the deployment", limit=3, mode=mode, autocut=False)
    assert single.intents == [] and all(h.intent is None for h in single.hits)
