"""vault: the keys for per-user upstream credentials (docs/credentials.md).

``new-key`` prints a key for the vault's key file or ``$TOOLSCOUT_VAULT_KEYS``; ``rotate``
re-encrypts every stored credential with the first key, after a new key was put first,
so the old key can then be dropped. Both are one library call
(:func:`toolscout.access.credentials.generate_key`, :meth:`toolscout.access.credentials.Vault.rotate`).
"""

from __future__ import annotations

from typing import Annotated

import typer

from ..access.credentials import KEYS_ENV, Vault, generate_key, load_keys
from ..errors import ToolscoutError
from ..storage import open_store
from . import app
from ._exits import OneStyleGroup, fail_with, warn

vault_app = typer.Typer(
    no_args_is_help=True,
    rich_markup_mode=None,
    cls=OneStyleGroup,
    help="Keys of the vault that holds each user's upstream credentials (docs/credentials.md).\n\n"
    "\b\nExample: toolscout vault new-key",
)


@vault_app.command("new-key")
def new_key() -> None:
    """Print a new random vault key (one line of a --vault-keys file, or an item of
    $TOOLSCOUT_VAULT_KEYS).

    \b
    Example: toolscout vault new-key
    """
    typer.echo(generate_key())


@vault_app.command()
def rotate(
    store: Annotated[
        str,
        typer.Option("--store", help="The gateway's store: its SQLite file or postgresql:// URL (serve's --store or --cache).",
                     envvar="TOOLSCOUT_STORE"),
    ],
    vault_keys: Annotated[
        str | None,
        typer.Option("--vault-keys", help=f"Key file, new key first (default: ${KEYS_ENV}, comma-separated)."),
    ] = None,
) -> None:
    """Re-encrypt every stored credential with the first key. Rotation: put a new key
    first in the key file, restart the gateway, run this, then remove the old key.

    \b
    Example: toolscout vault rotate --store ~/.cache/toolscout/mcp-servers.db --vault-keys vault.keys
    """
    try:
        with open_store(store) as opened:
            done, unreadable = Vault(opened, load_keys(vault_keys)).rotate()
    except ToolscoutError as exc:
        raise fail_with(exc) from None
    typer.echo(f"re-encrypted {done} credential{'' if done == 1 else 's'} with the first key")
    if unreadable:
        warn(f"{unreadable} record(s) could not be decrypted with any key and were left as they are; "
             "their users connect again.")


app.add_typer(vault_app, name="vault")
