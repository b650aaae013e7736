"""The options of the commands that set up and play games: the ``--variant`` names
(``play``, ``match``, ``tournament quick``), ``executor_options``, the
``--executor``, ``--scheduler`` and ``--concurrency`` options of every command that
plays games (``tournament run``, ``match``, ``league run``), and ``split_command``,
the ``--command`` of a submitted bot (``league submit``, ``submit``).  Apart from ``kit``
because they need the game's and the tournament's settings, which ``referee --help``
does not."""

from __future__ import annotations

import difflib
import shlex
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from ..game.config import VARIANTS
from ..tournament.config import EXECUTORS
from .kit import fail

F = TypeVar("F", bound=Callable[..., Any])


def executor_options(default_help: str) -> Callable[[F], F]:
    """The ``--executor``, ``--scheduler`` and ``--concurrency`` options of every
    command that plays games; ``referee.tournament.driver.choose_executor`` takes
    their values."""
    def decorate(f: F) -> F:
        f = click.option("--concurrency", "-c", type=click.IntRange(min=1), default=None,
                         help="Games in flight at once, shared out among the --jobs "
                              "workers of --executor process (each game with bots of its "
                              "own; default: one per worker).  More than the CPUs when the "
                              "bots think (sleep, wait, compute) rather than the referee: "
                              "e.g. 200 for bots that take 50 ms a decision.")(f)
        f = click.option("--scheduler", default=None, metavar="tcp://HOST:8786",
                         help="The Dask scheduler to play on (implies --executor dask); "
                              "without one, --executor dask starts a local Dask cluster "
                              "of --jobs workers.")(f)
        return click.option("--executor", "executor_kind", type=click.Choice(EXECUTORS),
                            default=None,
                            help="Where the games are played: process (worker processes "
                                 f"on this machine) or dask (a Dask cluster).  Default: "
                                 f"{default_help}.")(f)
    return decorate


def variant_names(values: Sequence[str]) -> list[str]:
    """The variants named by ``--variant`` options (each one or several, split by
    commas or spaces; ``-`` for ``_``, any case), in order, or ValueError naming the
    unknown one and the closest known name (RULES §9)."""
    out: list[str] = []
    for v in values:
        for name in v.replace(",", " ").split():
            name = name.strip().lower().replace("-", "_")
            if name not in VARIANTS:
                close = difflib.get_close_matches(name, VARIANTS, n=1)
                hint = f"did you mean {close[0]}? " if close else ""
                raise ValueError(f"unknown variant {name!r}: {hint}choose from "
                                 f"{', '.join(VARIANTS)} (RULES §9)")
            out.append(name)
    return out


def split_command(command: str) -> list[str]:
    """A submitted bot's ``--command``, split into words as a shell would."""
    try:
        words = shlex.split(command)
    except ValueError as e:
        fail(f"--command cannot be split into words: {e}")
    if not words:
        fail('--command is empty: give the bot\'s command line, e.g. --command "python3 bot.py"')
    return words
