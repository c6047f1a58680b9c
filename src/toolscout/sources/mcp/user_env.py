"""Which environment variables a user may set for their own stdio upstream process.

A per-user stdio upstream runs one process per user with the environment their credential
carries. Environment is code: ``PYTHONWARNINGS`` naming a module imports it at start-up,
``BROWSER`` is a command line that module may run, ``LD_PRELOAD`` loads a library into the
process, ``NODE_OPTIONS=--require`` runs a file, ``GIT_SSH_COMMAND`` and ``BASH_ENV`` run
shell. A user who could set any name would run commands on the gateway's host as the
gateway's user. So the operator lists, per server, the names a user may set
(``userEnv: ["GITHUB_TOKEN"]``); every other name is refused when the user registers it;
names that steer an interpreter, a loader, a shell or a package manager are refused even
when the operator lists them (a configuration error at start-up, naming them); and the
operator's own ``env`` always wins over the user's.

The list below was gathered from the interpreters' and tools' own documentation of the
variables they read at start-up (CPython, Node, Perl, Ruby, the JVM, glibc's loader, bash
and POSIX sh, git, OpenSSL, npm/pip/uv). It is a deny list on top of the operator's allow
list, not instead of it: a name not listed here is still refused unless the operator
allows it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ...errors import RequestError

__all__ = ["MAX_VALUE", "EnvNotAllowed", "allowed_user_env", "check_user_env", "steering_names"]

MAX_VALUE = 16_384
"""The largest value one variable may hold: the same cap as a registered token."""
MAX_NAMES = 64

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")

_STEERING_EXACT = frozenset({
    # shells: start-up files, prompts run with -x, word splitting, search paths
    "PATH", "HOME", "SHELL", "ENV", "BASH_ENV", "IFS", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND",
    "CDPATH", "GLOBIGNORE", "SHELLOPTS", "BASHOPTS", "ZDOTDIR", "FPATH", "HISTFILE",
    # commands other programs run for you
    "BROWSER", "EDITOR", "VISUAL", "PAGER", "MANPAGER", "LESSOPEN", "LESSCLOSE", "SSH_ASKPASS",
    "SUDO_ASKPASS", "TERMINFO",
    # where temporary files go
    "TMPDIR", "TMP", "TEMP",
    # the JVM, .NET, PHP, Electron
    "CLASSPATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "PHPRC", "PHP_INI_SCAN_DIR",
    "ELECTRON_RUN_AS_NODE",
    # glibc: charset converters, locales, resolver, tunables
    "GCONV_PATH", "LOCPATH", "NLSPATH", "GLIBC_TUNABLES", "HOSTALIASES", "LOCALDOMAIN", "RES_OPTIONS",
    # TLS trust and key logging
    "SSLKEYLOGFILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
    # builds that package managers run while installing
    "CC", "CXX", "CPP", "LD", "CFLAGS", "CXXFLAGS", "LDFLAGS", "MAKEFLAGS", "MAKE",
    # Go's toolchain
    "GOFLAGS", "GOPROXY", "GOPATH", "GOROOT", "GOTOOLCHAIN", "GOENV", "GOBIN",
    # Windows command interpreters
    "COMSPEC", "PATHEXT",
})
_STEERING_PREFIXES = (
    "LD_", "DYLD_", "PYTHON", "NODE_", "NPM_CONFIG_", "YARN_", "PNPM_", "BUN_", "DENO_", "COREPACK_",
    "UV_", "PIP_", "PERL5", "PERL_", "PERLLIB", "RUBY", "GEM_", "BUNDLE_", "GIT_", "BASH_FUNC_", "JAVA_",
    "OPENSSL_", "SSL_CERT_", "LUA_", "TCL", "MALLOC_", "XDG_", "DOTNET_", "COMPLUS_", "CORECLR_", "MONO_",
    "CARGO_", "RUSTUP_", "R_",
)


class EnvNotAllowed(RequestError):
    """A user asked for environment variables their upstream does not let them set."""

    code = "env_not_allowed"


def steering(name: str) -> bool:
    """Whether ``name`` steers an interpreter, loader, shell or package manager (compared
    upper-case: npm reads ``npm_config_*`` too, and a refused ``path`` costs nothing)."""
    upper = name.upper()
    return upper in _STEERING_EXACT or upper.startswith(_STEERING_PREFIXES)


def steering_names(names: Iterable[str]) -> list[str]:
    """The names of ``names`` that steer a process (sorted), for the start-up error."""
    return sorted({n for n in names if steering(n)})


def check_operator_names(names: Iterable[str], *, env: Mapping[str, str], token_env: str | None) -> list[str]:
    """Validate a server's ``userEnv``; raises ``ValueError`` naming what is wrong."""
    names = list(names)
    malformed = [n for n in names if not _NAME.match(n)]
    if malformed:
        raise ValueError(f"userEnv names must be letters, digits and '_' (not starting with a digit): {malformed[:5]}")
    refused = steering_names(names)
    if refused:
        raise ValueError(
            f"userEnv lists names that steer interpreters, loaders or shells, which a user may never set: "
            f"{', '.join(refused)}. Remove them (docs/credentials.md lists the refused names)"
        )
    shadowed = sorted(set(names) & set(env))
    if shadowed:
        raise ValueError(
            f"userEnv lists {', '.join(shadowed)}, which 'env' sets too: the operator's env always wins, "
            "so a user's value would be ignored. Keep each name in one of them"
        )
    if token_env is not None and token_env in names:
        raise ValueError(f"userEnv lists {token_env!r}, the tokenEnv: a user's token goes there already")
    return names


def check_token_env(name: str | None) -> str | None:
    """``tokenEnv`` carries a user's token: it must not be a name that steers the process."""
    if name is not None and (not _NAME.match(name) or steering(name)):
        raise ValueError(f"tokenEnv {name!r} is not a plain variable name a user's token may go in")
    return name


def check_user_env(server: str, allowed: Iterable[str], env: Mapping[str, str]) -> None:
    """Refuse a user's ``env`` for ``server`` unless every name is one the operator allows
    and every value is a short, NUL-free string: :class:`EnvNotAllowed` says which and why."""
    allow = frozenset(allowed)
    if len(env) > MAX_NAMES:
        raise EnvNotAllowed(f"at most {MAX_NAMES} variables, not {len(env)}", server=server)
    refused = sorted(n for n in env if n not in allow or steering(n) or not _NAME.match(n))
    if refused:
        shown = ", ".join(repr(n[:64]) for n in refused[:10])
        can = ", ".join(sorted(allow))
        raise EnvNotAllowed(
            f"server '{server}' does not let users set {shown}",
            hint=(f"This server lets users set only: {can}." if can else
                  'This server lets users set no environment; register a token instead: {"token": "..."}.')
            + " The operator lists the names in the server's 'userEnv' (docs/credentials.md).",
            server=server, refused=[n[:64] for n in refused[:10]], allowed=sorted(allow),
        )
    for name, value in env.items():
        if len(value) > MAX_VALUE or "\x00" in value:
            raise EnvNotAllowed(
                f"the value of {name!r} is {'over 16 KB' if len(value) > MAX_VALUE else 'not text (it holds a NUL byte)'}",
                hint="Send the variable's value as plain text of at most 16,384 characters.",
                server=server, name=name,
            )


def allowed_user_env(allowed: Iterable[str], operator: Mapping[str, str], env: Mapping[str, str]) -> dict[str, str]:
    """The part of a stored or given ``env`` that reaches the process: allowed names only,
    never a steering name, never one the operator sets (checked again at every start, so a
    record stored before the rules changed carries no more than they allow today)."""
    allow = frozenset(allowed)
    return {
        name: value for name, value in env.items()
        if name in allow and name not in operator and not steering(name) and _NAME.match(name)
        and len(value) <= MAX_VALUE and "\x00" not in value
    }
