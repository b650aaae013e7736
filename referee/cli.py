"""The ``referee`` command: a thin click layer over the library.

It parses, calls the library and prints; it holds no game logic.
"""

from __future__ import annotations

import itertools
import sys

import click
from tabulate import tabulate

from . import __version__
from .bots import BUILTIN_BOTS, make_bot
from .game import GameConfig
from .runner import InProcessPlayer, run_game


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="referee")
def main() -> None:
    """Referee and tournament runner for the card game 3UP 3DOWN."""


@main.command()
@click.option("--games", default=200, show_default=True, help="Deals per pairing.")
@click.option("--seed", default=1, show_default=True)
def demo(games: int, seed: int) -> None:
    """A demo league among the built-in bots, printing standings."""
    names = list(BUILTIN_BOTS)
    stats = {n: {"games": 0, "wins": 0, "points": 0} for n in names}
    for a, b in itertools.combinations(names, 2):
        for g in range(games):
            for order in ((a, b), (b, a)):  # the same deal with the seats swapped
                players = [InProcessPlayer(make_bot(x)) for x in order]
                rec = run_game(GameConfig(players=2), seed * 100003 + g, players)
                for seat, name in enumerate(order):
                    stats[name]["games"] += 1
                    stats[name]["wins"] += rec.places[seat] == 1
                    stats[name]["points"] += rec.points[seat]
    rows = sorted(
        ((n, s["games"], s["wins"], 100.0 * s["wins"] / s["games"], s["points"] / s["games"])
         for n, s in stats.items()),
        key=lambda r: -r[3],
    )
    click.echo(tabulate([(i + 1, *r) for i, r in enumerate(rows)],
                        headers=["rank", "bot", "games", "wins", "win %", "avg points"],
                        floatfmt=".1f"))


# Commands owned by other modules register here, each in its own module so that the
# CLI stays a thin layer: (module, attribute of a click command or group).
_SUBCOMMANDS = (
    ("referee.tournament.cli", "tournament"),
    ("referee.checkbot", "check_bot"),
    ("referee.keys", "keys"),
)


def _register() -> None:
    import importlib
    import importlib.util

    for module, attr in _SUBCOMMANDS:
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:  # the parent package does not exist yet
            found = False
        if found:
            main.add_command(getattr(importlib.import_module(module), attr))


_register()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
