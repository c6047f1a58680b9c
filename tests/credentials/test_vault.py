"""The credential vault: encrypted at rest, rotated, unreadable records refused, shared by replicas."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from typer.testing import CliRunner

from toolscout.access.credentials import (
    KEYS_ENV,
    Credential,
    OAuthClient,
    Vault,
    generate_key,
    load_keys,
    pkce_pair,
)
from toolscout.access.credentials.oauth import STATE_NAMESPACE
from toolscout.access.credentials.vault import NAMESPACE
from toolscout.cli import app
from toolscout.errors import ConfigError, CredentialUnreadable, InvalidRequest
from toolscout.storage import open_store

SECRET = "ghp_super-secret-token-value"


def test_records_are_encrypted_at_rest_and_listing_shows_no_secret(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "s.db"))
    key = generate_key()
    vault = Vault(store, [key])
    vault.put("alice", "github", Credential(token=SECRET, refresh_token="rt-" + SECRET, expires_at=2e9, kind="oauth"))
    vault.put("alice", "slack", Credential(env={"SLACK_TOKEN": SECRET}))
    vault.put("bob", "github", Credential(token="bob-token"))
    raw = store.get(NAMESPACE, "alice\ngithub")
    assert raw is not None and SECRET.encode() not in raw.value and SECRET not in json.dumps(raw.meta)
    assert (tmp_path / "s.db").read_bytes().find(SECRET.encode()) == -1
    again = Vault(store, [key])  # another process: nothing cached
    got = again.get("alice", "github")
    assert got is not None and got.token == SECRET and got.kind == "oauth" and got.expires_at == 2e9
    assert SECRET not in repr(got)
    rows = again.connected("alice")
    assert sorted(r["server"] for r in rows) == ["github", "slack"] and SECRET not in json.dumps(rows)
    assert again.delete("alice", "github") and again.get("alice", "github") is None
    assert again.get("bob", "github").token == "bob-token"  # type: ignore[union-attr]


def test_rotation_re_encrypts_with_the_new_key_so_the_old_one_can_go(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "s.db"))
    old, new = generate_key(), generate_key()
    Vault(store, [old]).put("alice", "github", Credential(token=SECRET))
    assert Vault(store, [new, old]).rotate() == (1, 0)
    assert Vault(store, [new]).get("alice", "github").token == SECRET  # type: ignore[union-attr]
    with pytest.raises(CredentialUnreadable, match="key this gateway does not have"):
        Vault(store, [old]).get("alice", "github")
    store.put(NAMESPACE, "bob\ngithub", b"damaged")
    assert Vault(store, [new]).rotate() == (1, 1)  # the damaged one is left, counted


def test_rotate_command(tmp_path: Path) -> None:
    store_path = str(tmp_path / "s.db")
    old, new = generate_key(), generate_key()
    with open_store(store_path) as store:
        Vault(store, [old]).put("alice", "github", Credential(token=SECRET))
    keys = tmp_path / "vault.keys"
    keys.write_text(f"{new}\n# the old key, until rotate ran\n{old}\n")
    result = CliRunner().invoke(app, ["vault", "rotate", "--store", store_path, "--vault-keys", str(keys)])
    assert result.exit_code == 0, result.output
    assert "re-encrypted 1 credential " in result.output
    with open_store(store_path) as store:
        assert Vault(store, [new]).get("alice", "github").token == SECRET  # type: ignore[union-attr]
    fresh = CliRunner().invoke(app, ["vault", "new-key"])
    assert fresh.exit_code == 0
    (tmp_path / "new.keys").write_text(fresh.output)
    assert load_keys(tmp_path / "new.keys") == [fresh.output.strip()]


def test_keys_from_a_file_or_the_environment_and_bad_ones_named_not_printed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = generate_key(), generate_key()
    monkeypatch.setenv(KEYS_ENV, f"{a}, {b}")
    assert load_keys() == [a, b]
    monkeypatch.delenv(KEYS_ENV)
    with pytest.raises(ConfigError, match="vault key") as none:
        load_keys()
    assert "new-key" in none.value.hint
    bad = tmp_path / "keys"
    bad.write_text(f"{a}\nnot-a-key-secret-material\n")
    with pytest.raises(ConfigError, match="key 2 is not a Fernet key") as malformed:
        load_keys(bad)
    assert "secret-material" not in str(malformed.value)
    with pytest.raises(ConfigError, match="cannot read"):
        load_keys(tmp_path / "missing")


def test_a_damaged_record_is_an_unreadable_credential_not_a_crash(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "s.db"))
    vault = Vault(store, [generate_key()])
    key = generate_key()
    vault2 = Vault(store, [key])
    store.put(NAMESPACE, "a\nx", Fernet(key).encrypt(b"[1, 2]"))
    store.put(NAMESPACE, "b\nx", Fernet(key).encrypt(b'{"token": 5}'))
    for principal in ("a", "b"):
        with pytest.raises(CredentialUnreadable, match="damaged") as exc:
            vault2.get(principal, "x")
        assert exc.value.code == "credential_unreadable" and exc.value.details["server"] == "x"
    with pytest.raises(CredentialUnreadable):
        vault.get("a", "x")


def test_pkce_and_single_use_expiring_state(tmp_path: Path) -> None:
    verifier, challenge = pkce_pair()
    assert 43 <= len(verifier) <= 128 and "=" not in challenge and verifier != challenge
    store = open_store(str(tmp_path / "s.db"))
    client = OAuthClient("github", "https://as.example/token", "toolscout", authorization_url="https://as.example/authorize",
                         redirect_uri="https://gw.example/oauth/callback", scopes=("repo",))
    url = client.begin(store, "alice")
    assert "code_challenge_method=S256" in url and "scope=repo" in url and "alice" not in url
    state = url.split("state=")[1].split("&")[0]
    record = OAuthClient.claim(store, state)
    assert record["principal"] == "alice" and record["server"] == "github"
    with pytest.raises(InvalidRequest, match="used already"):
        OAuthClient.claim(store, state)
    stale = client.begin(store, "bob").split("state=")[1].split("&")[0]
    entry = store.get(STATE_NAMESPACE, stale)
    assert entry is not None
    store.put(STATE_NAMESPACE, stale, json.dumps({**json.loads(entry.text), "created": time.time() - 3600}))
    with pytest.raises(InvalidRequest, match="expired"):
        OAuthClient.claim(store, stale)


def test_replicas_sharing_postgresql_share_credentials_and_each_state_is_used_once(pg_dsn: str) -> None:
    key = generate_key()
    one, two = open_store(pg_dsn), open_store(pg_dsn)
    try:
        Vault(one, [key]).put("alice", "github", Credential(token=SECRET))
        assert Vault(two, [key]).get("alice", "github").token == SECRET  # type: ignore[union-attr]
        client = OAuthClient("github", "https://as.example/token", "toolscout",
                             authorization_url="https://as.example/authorize", redirect_uri="https://gw/cb")
        state = client.begin(one, "alice").split("state=")[1].split("&")[0]
        assert OAuthClient.claim(two, state)["principal"] == "alice"
        with pytest.raises(InvalidRequest, match="used already"):
            OAuthClient.claim(one, state)
    finally:
        one.close()
        two.close()
