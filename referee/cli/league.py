"""The ``referee league`` command group: a thin click layer over ``referee.league``.

Each subcommand lives in the module of its family and is loaded only when it runs
or shows its ``--help`` (``LEAGUE_COMMANDS``, as ``main.COMMANDS`` loads the
commands), so that a league command starts with only the modules it uses:
``league standings`` with neither the checks nor the executors, ``league submit``
with neither the report nor ZeroMQ.

* ``league_entries``: ``new``, ``submit``, ``withdraw`` (what the league holds);
* ``league_run``: ``run`` (playing its games, the report kept up to date);
* ``league_browse``: ``standings``, ``games``, ``show``, ``game``, ``verify``;
* ``league_serve``: ``serve`` (submissions from other machines).

A mistake is one ``Error: ...`` line on stderr and exit status 1 (README, "Exit
status"), never a traceback.
"""

from __future__ import annotations

import click

from .kit import Group, Lazy

#: Every ``referee league`` subcommand, loaded only when it runs or shows its --help;
#: the short help is what ``referee league --help`` lists (tests/cli/test_cli_lazy.py
#: checks it against the command's own).
LEAGUE_COMMANDS = {
    "game": Lazy("referee.cli.league_browse", "game_cmd",
                 "One game as the organiser sees it: its seats, places and penalties, how "
                 "it ended, every fault, its record, and every seat's stderr in that game."),
    "games": Lazy("referee.cli.league_browse", "games_cmd",
                  "List the games played: id, table, deal, each seat's entry and place, how "
                  "it ended."),
    "new": Lazy("referee.cli.league_entries", "new",
                "Make a league in DIR from --config; on an existing league, take the edited "
                "file (more deals, another table size) or say what it would change."),
    "run": Lazy("referee.cli.league_run", "run_cmd",
                "Play the league's pending games (interleaved across lineups)."),
    "serve": Lazy("referee.cli.league_serve", "serve_cmd",
                  "Accept bots submitted from other machines ('referee submit --to ...'), "
                  "each checked in the sandbox as a local submission is; with --play, also "
                  "play."),
    "show": Lazy("referee.cli.league_browse", "show_cmd",
                 "A bot's versions, its record per opponent, its faults with game ids, and "
                 "where its game records and per-game stderr are."),
    "standings": Lazy("referee.cli.league_browse", "standings_cmd",
                      "The standings of the active entries over the games among them, one "
                      "table per table size (works while the league runs)."),
    "submit": Lazy("referee.cli.league_entries", "submit_cmd",
                   "Submit the bot in PATH (a folder, or a .tar, .tar.gz, .tgz or .zip "
                   "archive) as NAME: it is copied into the league, checked with check-bot "
                   "under the league's sandbox and time limits, and on success becomes "
                   "NAME's next version."),
    "verify": Lazy("referee.cli.league_browse", "verify_cmd",
                   "Check every stored game against its record: it re-runs identically "
                   "under the rules and holds what the database holds."),
    "withdraw": Lazy("referee.cli.league_entries", "withdraw_cmd",
                     "Retire the entry NAME without a new version: its pending games are "
                     "cancelled, its played games kept (league standings --history, the "
                     "report's history)."),
}


class _LeagueGroup(Group):
    """``referee league``: its commands' errors end as every command's (one line,
    exit status 1)."""


@click.group(cls=_LeagueGroup, lazy=LEAGUE_COMMANDS)
def league() -> None:
    """Leagues: bots submitted over time, each new entry playing only its new games."""
