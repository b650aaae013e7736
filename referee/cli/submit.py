"""The ``referee submit`` command: a bot submitted to a league on another machine
(``referee league serve``), and the author's own entries and games seen there."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from ..league.remote import pack, request, upload
from .kit import Command, fail
from .options import split_command


class _SubmitCommand(Command):
    """``referee submit``: its errors end as the league's."""


@click.command("submit", cls=_SubmitCommand)
@click.argument("path", required=False, type=click.Path(exists=True, file_okay=False))
@click.option("--to", "endpoint", required=True, help="The league's endpoint, tcp://HOST:5556.")
@click.option("--key", type=click.Path(dir_okay=False, exists=True), default=None,
              help="Your secret key, NAME.key_secret (NAME is the bot's name).")
@click.option("--server-key", type=click.Path(dir_okay=False, exists=True), default=None,
              help="The league's public key, referee.key.")
@click.option("--name", default=None, help="The bot's name (default: your key's NAME).")
@click.option("--command", "command", default=None,
              help='The bot\'s command line, run in its folder, e.g. "python3 bot.py".')
@click.option("--transport", type=click.Choice(["stdio", "zmq"]), default="stdio",
              show_default=True)
@click.option("--status", is_flag=True, help="Show your entries: standings, latest games.")
@click.option("--game", default=None, metavar="ID",
              help="With --status: your bot's record and stderr in game ID.")
@click.option("--html", "html_out", type=click.Path(dir_okay=False), default=None,
              metavar="OUT", help="With --game: write the game's replay viewer to OUT, "
              "showing what your seat saw (every card if the league publishes full "
              "records).")
@click.option("--record", "record_out", type=click.Path(dir_okay=False), default=None,
              metavar="OUT", help="With --game: write the game's whole record (JSON lines, "
              "for 'referee replay') to OUT, if the league publishes full records.")
@click.option("--ticket", type=int, default=None, metavar="N",
              help="With --status: how submission #N is doing (its check's report when done).")
@click.option("--wait", is_flag=True,
              help="After submitting, follow the check to its end and print its report.")
@click.option("--timeout", type=float, default=60.0, show_default=True,
              help="Seconds to wait for each answer.")
@click.option("--connect-timeout", type=float, default=10.0, show_default=True,
              help="Seconds to keep trying to connect (a busy server turns connections "
              "away; each is tried again, a little later each time).")
def submit_remote(path: str | None, endpoint: str, key: str | None, server_key: str | None,
                  name: str | None, command: str | None, transport: str, status: bool,
                  game: str | None, html_out: str | None, record_out: str | None,
                  ticket: int | None, wait: bool, timeout: float,
                  connect_timeout: float) -> None:
    """Submit the bot in the folder PATH to a league on another machine (or, with
    --status, see your entries there).  The league queues it and answers at once
    with a ticket ("queued as #12"); it checks it in its sandbox, and
    'submit --status' shows how it went (--wait follows it to its end)."""
    if name is None:
        if key is None:
            fail("--name is needed without --key (your key's NAME is your bot's name)")
        name = Path(key).name.removesuffix(".key_secret")
    if html_out is not None or record_out is not None:
        _replay(endpoint, name, game, html_out, record_out, key, server_key, timeout,
                connect_timeout)
        return
    if status or game or ticket is not None:
        reply = request(endpoint, {"op": "status", "name": name, "game": game,
                                   "ticket": ticket}, key=key, server_key=server_key,
                        timeout=timeout, connect_timeout=connect_timeout)
    else:
        if path is None or command is None:
            fail("give the bot's folder and --command (or --status)")
        words = split_command(command)
        reply = upload(endpoint, name, words, transport, pack(Path(path)), key=key,
                       server_key=server_key, timeout=timeout,
                       connect_timeout=connect_timeout)
        if wait and reply.get("ok"):
            click.echo(reply.get("text", ""))
            number = reply["ticket"]["number"]
            while reply.get("ok") and reply["ticket"]["state"] in ("queued", "checking"):
                time.sleep(0.5)  # polling the league's queue, once a half second
                reply = request(endpoint, {"op": "status", "name": name,
                                           "ticket": number}, key=key,
                                server_key=server_key, timeout=timeout,
                                connect_timeout=connect_timeout)
    if not reply.get("ok"):
        fail(f"the league refused: {reply.get('error')}")
    click.echo(reply.get("text", ""))
    if (reply.get("ticket") or {}).get("accepted") is False:
        sys.exit(1)


def _replay(endpoint: str, name: str, game: str | None, html_out: str | None,
            record_out: str | None, key: str | None, server_key: str | None,
            timeout: float, connect_timeout: float) -> None:
    """``submit --status --game ID --html OUT`` / ``--record OUT``: the author's own
    game, as the league gives it (their seat's view, unless it publishes full records)."""
    if game is None:
        fail("--html and --record need --game ID (submit --status lists your games)")
    for fmt, out, field in (("html", html_out, "html"), ("record", record_out, "record")):
        if out is None:
            continue
        reply = request(endpoint, {"op": "replay", "name": name, "game": game,
                                   "format": fmt}, key=key, server_key=server_key,
                        timeout=timeout, connect_timeout=connect_timeout)
        if not reply.get("ok"):
            fail(f"the league refused: {reply.get('error')}")
        body = reply.get(field)
        if not isinstance(body, str):
            fail(f"the league's reply holds no {fmt}")
        try:
            Path(out).write_text(body, encoding="utf-8")
        except OSError as e:
            fail(f"cannot write {out}: {e.strerror or e}")
        click.echo(f"{reply.get('text', game)}: written to {out}")
