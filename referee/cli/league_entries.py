"""``referee league new``, ``submit`` and ``withdraw``: what a league holds, its
configuration and its entries (``referee.cli.league`` loads them)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..league.config import load_league_config
from ..league.run import new_league, secret_of, submit
from ..league.store import LeagueStore
from .kit import ending, fail
from .options import split_command


@click.command("new")
@click.argument("league_dir", metavar="DIR", type=click.Path(file_okay=False))
@click.option("--config", "config_file", required=True, type=click.Path(dir_okay=False),
              help="The league file (league.toml).")
@click.option("--secret-from", "secret_from", metavar="LEAGUE", default=None,
              type=click.Path(file_okay=False, exists=True),
              help="Take the secret (the key of the decks) of the league in LEAGUE: the "
                   "same bots and settings then play the same games there and here.")
def new(league_dir: str, config_file: str, secret_from: str | None) -> None:
    """Make a league in DIR from --config; on an existing league, take the edited
    file (more deals, another table size) or say what it would change."""
    cfg = load_league_config(config_file)
    text = Path(config_file).read_text(encoding="utf-8")
    secret = secret_of(Path(secret_from)) if secret_from is not None else None
    for line in new_league(Path(league_dir).resolve(), cfg, text, secret=secret):
        click.echo(line)


@click.command("submit")
@click.argument("league_dir", metavar="DIR", type=click.Path(file_okay=False, exists=True))
@click.argument("name")
@click.argument("path", type=click.Path())
@click.option("--command", "command", required=True,
              help='The bot\'s command line, run in its folder, e.g. "python3 bot.py".')
@click.option("--transport", type=click.Choice(["stdio", "zmq"]), default="stdio",
              show_default=True)
@click.option("--author", default=None, metavar="WHO",
              help="Who submits it (default: NAME): one author's entries never sit at one "
                   "table, unless the league's separate_authors = false.")
@click.option("--quiet", "-q", is_flag=True,
              help="Only the verdict line (the check's report only if it failed).")
def submit_cmd(league_dir: str, name: str, path: str, command: str, transport: str,
               author: str | None, quiet: bool) -> None:
    """Submit the bot in PATH (a folder, or a .tar, .tar.gz, .tgz or .zip archive) as
    NAME: it is copied into the league, checked with check-bot under the league's
    sandbox and time limits, and on success becomes NAME's next version."""
    words = split_command(command)
    try:
        result = submit(Path(league_dir).resolve(), name, Path(path), words,
                        transport=transport, author=author)
    except KeyboardInterrupt:
        fail("interrupted: nothing was submitted", 130)
    if result.report and not (quiet and result.accepted):
        click.echo(result.report)
    click.echo(result.summary())
    if not result.accepted:
        sys.exit(1)


@click.command("withdraw")
@click.argument("league_dir", metavar="DIR", type=click.Path(file_okay=False, exists=True))
@click.argument("name")
def withdraw_cmd(league_dir: str, name: str) -> None:
    """Retire the entry NAME without a new version: its pending games are cancelled,
    its played games kept (league standings --history, the report's history).  A
    later submission under NAME brings it back as its next version."""
    store = LeagueStore.open(Path(league_dir).resolve())
    try:
        with ending(1):
            gone = store.withdraw(name)
    finally:
        store.close()
    if gone is None:
        fail(f"the league has no active entry {name!r} (league show lists them)", 1)
    click.echo(f"withdrawn: {gone.id}; its pending games are cancelled, its played games kept")
