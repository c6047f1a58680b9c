import pytest

from toolscout import Catalog, Tool
from toolscout.errors import NameCollision


def tool(name: str, origin: str = "a", **kw) -> Tool:
    return Tool(name, f"{name} tool", origin=origin, **kw)


def test_collision_between_origins_names_both():
    cat = Catalog([tool("send", origin="slack.yaml:3")])
    with pytest.raises(NameCollision) as err:
        cat.add(tool("send", origin="mail.yaml:9"))
    assert "slack.yaml:3" in err.value.message and "mail.yaml:9" in err.value.message
    assert cat.get("send").origin == "slack.yaml:3"


def test_duplicate_inside_one_batch_adds_nothing():
    cat = Catalog()
    with pytest.raises(NameCollision):
        cat.extend([tool("a"), tool("b"), tool("a", origin="b")])
    assert len(cat) == 0


def test_same_origin_reload_replaces():
    cat = Catalog([tool("a")])
    cat.add(Tool("a", "new", origin="a"))
    assert cat.get("a").description == "new"


def test_change_events_and_generation():
    cat = Catalog()
    events = []
    unsubscribe = cat.subscribe(events.append)
    cat.extend([tool("a"), tool("b")])
    cat.remove("a", "missing")
    unsubscribe()
    cat.remove("b")
    assert [(e.added, e.removed) for e in events] == [(("a", "b"), ()), ((), ("a",))]
    assert cat.generation == 3


def test_replace_source_swaps_one_source_only():
    cat = Catalog()
    cat.extend([tool("s1_a", source_id="s1"), tool("s1_b", source_id="s1"), tool("s2_a", source_id="s2")])
    change = cat.replace_source("s1", [tool("s1_b", source_id="s1"), tool("s1_c", source_id="s1")])
    assert change.removed == ("s1_a",) and change.added == ("s1_c",)
    assert sorted(cat.names()) == ["s1_b", "s1_c", "s2_a"]


def test_replace_source_refuses_to_steal_another_sources_name():
    cat = Catalog([tool("x", source_id="s2")])
    with pytest.raises(NameCollision):
        cat.replace_source("s1", [tool("x", origin="s1", source_id="s1")])
    assert cat.get("x").source_id == "s2"


def test_categories_count_only_searchable_available_tools():
    cat = Catalog(
        [
            tool("a", category="slack"),
            tool("b", category="slack"),
            tool("c", category="github"),
            tool("d", category="github", searchable=False),
            tool("e"),
        ]
    )
    assert cat.categories() == {"slack": 2, "github": 1, "uncategorized": 1}


def test_add_source_takes_pairs_or_a_source_object_with_prefix():
    class Weather:
        def load(self):
            return [(Tool("forecast", "Forecast.", origin="weather"), lambda a: "sunny")]

    cat = Catalog()
    cat.add_source(Weather(), prefix="wx")
    cat.add_source([(Tool("declared", "No handler.", origin="x"), None)])
    assert cat.get("wx_forecast").call_name == "forecast"
    assert cat.handler("wx_forecast")({}) == "sunny"
    assert cat.handler("declared") is None
