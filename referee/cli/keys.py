"""``referee keys``: CURVE keypairs for remote ZeroMQ bots, written and shown.

The key files themselves (their format, reading them back) are
``referee.transport.zmq.keys``'; this module is only the command group.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import click

from ..transport.zmq.keys import (
    SERVER_NAME,
    KeyFileError,
    load_public_key,
    new_keypair,
    read_key_file,
)
from .kit import Group


def _done(public_path: Path, secret_path: Path, who: str) -> None:
    public = load_public_key(public_path)
    click.echo(f"wrote {public_path} (public: give it to {who})")
    click.echo(f"wrote {secret_path} (secret, mode 0600: keep it)")
    click.echo(f"public key: {public.decode()}")


@click.group(cls=Group)
def keys() -> None:
    """CURVE keys for remote ZeroMQ bots (protocol/ZEROMQ.md)."""


@keys.command("new")
@click.argument("name")
@click.option("--out", "out", default=".", show_default=True, type=click.Path(file_okay=False),
              help="Directory to write NAME.key and NAME.key_secret in.")
@click.option("--force", is_flag=True, help="Replace an existing keypair.")
def new_command(name: str, out: str, force: bool) -> None:
    """A keypair for NAME: a remote bot, or an author who submits to a league.  NAME
    keeps NAME.key_secret; NAME.key goes into the referee's (or the league server's)
    directory of allowed keys."""
    try:
        public_path, secret_path = new_keypair(out, name, force=force)
    except KeyFileError as e:
        raise click.ClickException(str(e)) from None
    _done(public_path, secret_path, "the referee's allowed-keys directory")
    click.echo(f"used by a remote bot, its hello must carry \"name\": {name!r}; used to "
               f"submit to a league (referee submit), it submits and reads as {name!r}")


@keys.command("server")
@click.option("--out", "out", default=".", show_default=True, type=click.Path(file_okay=False),
              help="Directory to write referee.key and referee.key_secret in.")
@click.option("--force", is_flag=True, help="Replace an existing keypair.")
def server_command(out: str, force: bool) -> None:
    """The referee's own keypair.  Remote bots get referee.key (UPDOWN_SERVER_KEY)."""
    try:
        public_path, secret_path = new_keypair(out, SERVER_NAME, force=force)
    except KeyFileError as e:
        raise click.ClickException(str(e)) from None
    _done(public_path, secret_path, "every remote bot's author")


@keys.command("show")
@click.argument("path", type=click.Path(exists=True, dir_okay=False))
def show_command(path: str) -> None:
    """Print the public key of a key file (never the secret one)."""
    try:
        public, secret = read_key_file(path)
    except KeyFileError as e:
        raise click.ClickException(str(e)) from None
    click.echo(public.decode())
    if secret is not None:
        click.echo("(this file also holds a secret key: keep it private)", err=True)


@keys.command("env")
@click.argument("secret_file", type=click.Path(exists=True, dir_okay=False))
@click.option("--server", "server", required=True, type=click.Path(exists=True, dir_okay=False),
              help="The referee's public key file (referee.key).")
@click.option("--endpoint", default=None, help="The referee's endpoint, e.g. tcp://host:5555.")
def env_command(secret_file: str, server: str, endpoint: str | None) -> None:
    """Print the environment a remote bot runs with (shell syntax), from its
    NAME.key_secret and the referee's referee.key."""
    try:
        public, secret = read_key_file(secret_file)
        if secret is None:
            raise KeyFileError(f"{secret_file!r} holds no secret key")
        server_key = load_public_key(server)
    except KeyFileError as e:
        raise click.ClickException(str(e)) from None
    if endpoint:
        click.echo(f"export UPDOWN_ENDPOINT='{endpoint}'")
    click.echo("export UPDOWN_TRANSPORT=zmq")
    click.echo(f"export UPDOWN_SERVER_KEY='{server_key.decode()}'")
    click.echo(f"export UPDOWN_PUBLIC_KEY='{public.decode()}'")
    click.echo(f"export UPDOWN_SECRET_KEY='{secret.decode()}'")
    # The key file's name is the bot's: its hello must carry it (the Python helper
    # reads UPDOWN_NAME; other bots may too).
    name = os.path.basename(secret_file).removesuffix(".key_secret")
    if name and re.fullmatch(r"[\w.-]+", name):
        click.echo(f"export UPDOWN_NAME='{name}'")
