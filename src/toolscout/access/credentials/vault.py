"""Per-user upstream credentials, encrypted at rest in the gateway's store.

Why a vault and not the config file: a team gateway acts for many people, each with their
own account at each upstream (their GitHub token, their Slack OAuth grant). Those secrets
are written at run time (a consent callback, ``PUT /v1/credentials/{server}``) and must
survive restarts and be shared by replicas, so they live in the one :class:`Store`
(SQLite or PostgreSQL), one blob per ``(principal, upstream)``, each encrypted with
Fernet (AES-128-CBC + HMAC-SHA256, from ``cryptography``). The store never sees a secret
in clear; its metadata (kind, expiry, when) carries none.

Keys come from a file (one key per line) or an environment variable (comma-separated);
the first key encrypts, every key decrypts (:class:`~cryptography.fernet.MultiFernet`), so
rotation is: put a new key first, restart, run ``toolscout vault rotate`` (which
re-encrypts every record with the new key), then drop the old one (docs/credentials.md).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import ConfigError, CredentialUnreadable, MissingExtra

if TYPE_CHECKING:
    from ...storage import BlobStore

__all__ = ["KEYS_ENV", "NAMESPACE", "SUBJECT_TOKEN", "Credential", "Vault", "generate_key", "load_keys"]

NAMESPACE = "credentials"
"""The store namespace of the vault's records (key: ``principal`` + newline + ``upstream``)."""
KEYS_ENV = "TOOLSCOUT_VAULT_KEYS"
"""The environment variable read for the vault's keys when no key file is configured."""
SUBJECT_TOKEN = "toolscout/subject-token"
"""The key of ``CallContext.credentials`` under which the edge that validated a caller's
bearer token puts that token, for upstreams in ``token-exchange`` mode: it is only ever
sent to the configured token endpoint, never to an upstream."""
CACHE_SECONDS = 10.0
"""How long a record read from the store is reused by this process: a call then costs no
query and no decryption. Changes made here are seen at once; another replica's within this."""


@dataclass(frozen=True, slots=True)
class Credential:
    """One caller's secret for one upstream.

    ``token``: a bearer token or API key (sent in the upstream's credential header, or put
    in its ``tokenEnv`` for a stdio server). ``env``: extra environment for a stdio server
    started for this user. ``refresh_token``/``expires_at`` (epoch seconds): an OAuth grant,
    refreshed before it expires. ``kind`` says how it was obtained (``oauth``, ``token``).
    """

    token: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    refresh_token: str | None = None
    expires_at: float | None = None
    scope: str | None = None
    kind: str = "token"
    obtained_at: float = 0.0

    def __repr__(self) -> str:  # never print a secret by accident
        return f"Credential(kind={self.kind!r}, expires_at={self.expires_at!r})"

    def expires_within(self, seconds: float, now: float | None = None) -> bool:
        return self.expires_at is not None and self.expires_at - (now or time.time()) <= seconds

    def fingerprint(self) -> tuple[Any, ...]:
        """What a connection made with this credential depends on (a pool key)."""
        return (self.token, tuple(sorted(self.env.items())))

    def to_json(self) -> bytes:
        data = asdict(self)
        data["env"] = dict(self.env)
        return json.dumps(data, separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, raw: bytes) -> Credential:
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("not an object")
        env = data.get("env") or {}
        if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
            raise ValueError("env must map names to strings")
        token = data.get("token")
        if token is not None and not isinstance(token, str):
            raise ValueError("token must be a string")
        return cls(
            token=token,
            env=env,
            refresh_token=data.get("refresh_token") if isinstance(data.get("refresh_token"), str) else None,
            expires_at=float(data["expires_at"]) if data.get("expires_at") is not None else None,
            scope=data.get("scope") if isinstance(data.get("scope"), str) else None,
            kind=str(data.get("kind") or "token"),
            obtained_at=float(data.get("obtained_at") or 0.0),
        )

    def with_time(self) -> Credential:
        return self if self.obtained_at else replace(self, obtained_at=time.time())


def _fernet() -> Any:
    try:
        from cryptography import fernet  # the vault extra
    except ImportError:  # pragma: no cover - cryptography comes with the vault extra
        raise MissingExtra(
            "per-user credentials need the 'cryptography' package",
            hint="pip install 'toolscout[vault]'",
        ) from None
    return fernet


def generate_key() -> str:
    """A new random vault key (url-safe base64, 32 bytes): what a key file's line holds."""
    return _fernet().Fernet.generate_key().decode()


def load_keys(file: str | os.PathLike[str] | None = None, *, env: str = KEYS_ENV) -> list[str]:
    """The vault keys, first one current: from ``file`` (one per line, ``#`` comments), else
    the ``env`` variable (comma-separated). :class:`ConfigError` when there are none or one
    is malformed (named by position, never printed)."""
    if file is not None:
        try:
            text = Path(file).read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"cannot read the vault key file {file}: {exc.strerror}", path=str(file)) from None
        keys = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
        where = f"vault key file {file}"
    else:
        keys = [k.strip() for k in os.environ.get(env, "").split(",") if k.strip()]
        where = f"${env}"
    if not keys:
        raise ConfigError(
            f"per-user credentials need a vault key, and {where} has none",
            hint=f"Create one with `toolscout vault new-key`, then set {KEYS_ENV} or --vault-keys FILE.",
        )
    fernet = _fernet()
    for i, key in enumerate(keys, 1):
        try:
            fernet.Fernet(key)
        except (ValueError, TypeError):
            raise ConfigError(
                f"{where}: key {i} is not a Fernet key (32 url-safe base64-encoded bytes)",
                hint="Generate keys with `toolscout vault new-key`.",
            ) from None
    return keys


class Vault:
    """Encrypted ``(principal, upstream) -> Credential`` records in a store's blob namespace.

    Thread-safe (the store is; the small read cache has its own lock). Reading a record
    that cannot be decrypted or parsed raises :class:`CredentialUnreadable`, never a crash;
    writing a new credential for the same pair replaces it.
    """

    def __init__(self, store: BlobStore, keys: list[str], *, cache_seconds: float = CACHE_SECONDS) -> None:
        fernet = _fernet()
        self.store = store
        self._crypt = fernet.MultiFernet([fernet.Fernet(k) for k in keys])
        self._invalid = fernet.InvalidToken
        self._cache: dict[tuple[str, str], tuple[float, Credential | None]] = {}
        self._cache_seconds = cache_seconds
        self._lock = threading.Lock()

    @staticmethod
    def _key(principal: str, upstream: str) -> str:
        return f"{principal}\n{upstream}"  # upstream names never hold a newline (config rule)

    def put(self, principal: str, upstream: str, credential: Credential) -> None:
        credential = credential.with_time()
        sealed = self._crypt.encrypt(credential.to_json())
        meta = {"upstream": upstream, "kind": credential.kind, "expires_at": credential.expires_at,
                "obtained_at": credential.obtained_at}
        self.store.put(NAMESPACE, self._key(principal, upstream), sealed, meta)
        self._remember(principal, upstream, credential)

    def cached(self, principal: str, upstream: str) -> tuple[bool, Credential | None]:
        """``(True, credential or None)`` when this process read the record less than
        ``cache_seconds`` ago, else ``(False, None)``: no I/O, so an event loop may ask."""
        with self._lock:
            hit = self._cache.get((principal, upstream))
        if hit is not None and hit[0] > time.monotonic():
            return True, hit[1]
        return False, None

    def get(self, principal: str, upstream: str, *, fresh: bool = False) -> Credential | None:
        """The caller's credential for ``upstream``, or ``None``. ``fresh`` skips the cache."""
        if not fresh:
            known, credential = self.cached(principal, upstream)
            if known:
                return credential
        entry = self.store.get(NAMESPACE, self._key(principal, upstream))
        credential = None if entry is None else self._open(entry.value, upstream)
        self._remember(principal, upstream, credential)
        return credential

    def _open(self, value: bytes | str, upstream: str) -> Credential:
        try:
            raw = value.encode() if isinstance(value, str) else value
            return Credential.from_json(self._crypt.decrypt(raw))
        except self._invalid:
            why = "it was encrypted with a key this gateway does not have, or it was altered"
        except (ValueError, TypeError, KeyError) as exc:
            why = f"its content is damaged ({type(exc).__name__})"
        raise CredentialUnreadable(f"the stored credential for server '{upstream}' cannot be read: {why}",
                                   server=upstream)

    def _remember(self, principal: str, upstream: str, credential: Credential | None) -> None:
        with self._lock:
            if len(self._cache) > 10_000:
                self._cache.clear()
            self._cache[(principal, upstream)] = (time.monotonic() + self._cache_seconds, credential)

    def forget(self, principal: str, upstream: str) -> None:
        """Drop this process's cached copy (the next read goes to the store)."""
        with self._lock:
            self._cache.pop((principal, upstream), None)

    def delete(self, principal: str, upstream: str) -> bool:
        self.forget(principal, upstream)
        return self.store.delete(NAMESPACE, self._key(principal, upstream))

    def connected(self, principal: str) -> list[dict[str, Any]]:
        """The upstreams ``principal`` has a credential for, with kind and expiry: never the
        secret, and without decrypting anything."""
        out = []
        prefix = f"{principal}\n"
        for key in self.store.keys(NAMESPACE):
            if not key.startswith(prefix):
                continue
            entry = self.store.get(NAMESPACE, key)
            if entry is None:
                continue
            meta = entry.meta
            out.append({"server": key[len(prefix):], "kind": meta.get("kind"),
                        "expires_at": meta.get("expires_at"), "connected_at": meta.get("obtained_at")})
        return out

    def rotate(self) -> tuple[int, int]:
        """Re-encrypt every record with the first key; ``(rotated, unreadable)``. Unreadable
        records are left as they are (their users connect again)."""
        done = bad = 0
        for key in self.store.keys(NAMESPACE):
            entry = self.store.get(NAMESPACE, key)
            if entry is None:
                continue
            raw = entry.value.encode() if isinstance(entry.value, str) else entry.value
            try:
                sealed = self._crypt.rotate(raw)
            except self._invalid:
                bad += 1
                continue
            self.store.put(NAMESPACE, key, sealed, dict(entry.meta))
            done += 1
        with self._lock:
            self._cache.clear()
        return done, bad
