"""``referee league serve``: bots submitted from other machines, each checked in the
sandbox as a local submission is; with ``--play``, the games played too
(``referee.cli.league`` loads it)."""

from __future__ import annotations

import threading
from pathlib import Path

import click

from ..league.remote import DEFAULT_SUBMIT_LISTEN, Server
from ..league.run import run_league
from ..report.site import author_game_html
from .kit import running


@click.command("serve")
@click.argument("league_dir", metavar="DIR", type=click.Path(file_okay=False, exists=True))
@click.option("--listen", default=DEFAULT_SUBMIT_LISTEN, show_default=True,
              help="Where authors connect (ZeroMQ endpoint).")
@click.option("--keys", "keys_dir", type=click.Path(file_okay=False, exists=True), default=None,
              help="Folder of the authors' public keys, NAME.key: a key submits only as NAME.")
@click.option("--server-key", type=click.Path(dir_okay=False, exists=True), default=None,
              help="The referee's secret key (referee.key_secret, from 'referee keys server').")
@click.option("--play", is_flag=True, help="Also play the games, as 'league run --watch'.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="With --play: worker processes.")
@click.option("--refusal-window", type=click.FloatRange(min=0.1), default=60.0, hidden=True,
              help="Seconds over which refused unknown keys are summed up in one log line "
                   "(a minute; the tests shorten it).")
def serve_cmd(league_dir: str, listen: str, keys_dir: str | None, server_key: str | None,
              play: bool, jobs: int | None, refusal_window: float) -> None:
    """Accept bots submitted from other machines ('referee submit --to ...'), each
    checked in the sandbox as a local submission is; with --play, also play."""
    where = Path(league_dir).resolve()
    server = Server(where, listen, keys_dir, server_key,
                    on_line=lambda text: click.echo(text, err=True),
                    refusal_window=refusal_window, replay=author_game_html)
    click.echo(f"accepting submissions on {server.endpoint}"
               + (" (CURVE: authors' keys from " + str(keys_dir) + ")" if keys_dir else
                  " (no keys: loopback only)")
               + f"; per author: {server.limits.in_flight} submissions waiting, "
                 f"{server.limits.submissions_per_hour} submissions and "
                 f"{server.limits.requests_per_hour} requests an hour; checks up to "
                 f"{server.limits.check_seconds} s ([server])", err=True)
    try:
        with running("the league and its finished games are saved",
                     "run it again to go on"):
            if play:
                thread = threading.Thread(target=server.serve, name="league-serve",
                                          daemon=True)
                thread.start()
                try:
                    run_league(where, jobs=jobs, watch=True, progress=False)
                finally:
                    server.stop()
                    thread.join(5)
            else:
                server.serve()
    finally:
        server.close()
