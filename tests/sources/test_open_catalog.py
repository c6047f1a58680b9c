"""The pure catalog and the loading one, and ``open_catalog(spec)`` over every kind of spec."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

import toolscout
from toolscout.catalog import Catalog, CatalogChange
from toolscout.catalog_base import BaseCatalog
from toolscout.errors import ConfigError
from toolscout.model import Tool
from toolscout.scaleout.replica import SharedCatalog, sync_source
from toolscout.sources.open import open_catalog

pytest_plugins = ["_postgres"]  # the session's server (postgres) and a database per test (pg_dsn)

YAML = "send_email:\n  description: Send an email.\nget_weather:\n  description: Current weather for a city.\n"


def test_the_public_catalog_is_the_pure_one_with_loaders() -> None:
    assert toolscout.Catalog is Catalog and toolscout.CatalogChange is CatalogChange
    assert issubclass(Catalog, BaseCatalog) and Catalog.__module__ == "toolscout.catalog"
    for method in ("tool", "add_function", "load", "add_definitions", "add_source", "load_skills", "load_agents", "save", "open"):
        assert hasattr(Catalog, method) and not hasattr(BaseCatalog, method), method
    params = inspect.signature(Catalog.load).parameters
    assert list(params) == ["self", "path", "prefix", "skip_invalid", "lang"]


def test_loading_fires_change_events(tmp_path: Path) -> None:
    (tmp_path / "tools.yaml").write_text(YAML)
    catalog = Catalog()
    changes: list[CatalogChange] = []
    catalog.subscribe(changes.append)
    catalog.load(tmp_path / "tools.yaml", prefix="mail")
    catalog.remove("mail_send_email")
    assert changes == [
        CatalogChange(added=("mail_send_email", "mail_get_weather")),
        CatalogChange(removed=("mail_send_email",)),
    ]
    assert catalog.generation == 2


def test_a_declaration_file(tmp_path: Path) -> None:
    (tmp_path / "tools.yaml").write_text(YAML)
    catalog = open_catalog(tmp_path / "tools.yaml")
    assert isinstance(catalog, Catalog) and catalog.names() == ["send_email", "get_weather"]
    assert catalog.store is None


def test_a_store_file_keeps_its_store(tmp_path: Path) -> None:
    Catalog([Tool("send_email", "Send an email."), Tool("get_weather", "Weather.")]).save(tmp_path / "tools.db")
    catalog = open_catalog(str(tmp_path / "tools.db"))
    assert catalog.names() == ["send_email", "get_weather"] and catalog.store is not None
    catalog.store.close()


def test_a_directory_holding_tools_jsonl(tmp_path: Path) -> None:
    (tmp_path / "tools.jsonl").write_text(json.dumps({"name": "a", "description": "A tool."}) + "\n")
    assert open_catalog(tmp_path).names() == ["a"]


def test_demo_has_a_handler_for_every_tool() -> None:
    catalog = open_catalog("demo")
    assert len(catalog) > 200 and all(catalog.handler(name) is not None for name in catalog.names())


def test_a_postgres_url_opens_the_shared_catalog(pg_dsn: str, tmp_path: Path) -> None:
    (tmp_path / "crm.yaml").write_text(YAML)
    sync_source(tmp_path / "crm.yaml", pg_dsn, prefix="crm")
    catalog = open_catalog(pg_dsn)
    try:
        assert isinstance(catalog, SharedCatalog) and isinstance(catalog, BaseCatalog)
        assert sorted(catalog.names()) == ["crm_get_weather", "crm_send_email"]
        assert catalog.kind == "catalog" and catalog._listener is None  # a one-off read: nobody listens
    finally:
        catalog.close()


@pytest.mark.parametrize("spec", ["", "   "])
def test_an_empty_spec_is_a_config_error(spec: str) -> None:
    with pytest.raises(ConfigError) as err:
        open_catalog(spec)
    assert err.value.code == "config_error" and "no catalog given" in err.value.message
    assert "demo" in (err.value.hint or "")


def test_a_missing_path_is_a_config_error_naming_it(tmp_path: Path) -> None:
    for spec in (tmp_path / "nope.yaml", tmp_path):  # a file that is not there; a directory without tools.jsonl
        with pytest.raises(ConfigError) as err:
            open_catalog(spec)
        assert err.value.code == "config_error" and err.value.details["spec"] == str(spec)
        assert str(spec) in err.value.message


def test_an_unknown_url_names_its_scheme_but_not_its_password() -> None:
    with pytest.raises(ConfigError) as err:
        open_catalog("redis://user:s3cret@localhost:6379/0")
    assert "redis://" in err.value.message and "s3cret" not in json.dumps(err.value.to_dict())


def test_a_file_that_is_no_catalog_says_so(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ConfigError, match="is not a catalog"):  # not "delete it and save again": it is not a store
        open_catalog(tmp_path / "notes.txt")
