"""The options of the commands that set up and play games: the ``--variant`` names
(``play``, ``match``, ``tournament quick``), ``clock_and_fault_options`` (the
time control and fault policy of ``play`` and ``tournament quick``),
``executor_options``, the
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


def clock_and_fault_options(*, config_keys: bool) -> Callable[[F], F]:
    """``--startup``, ``--move-time``, ``--bank``, ``--game-time``, ``--faults`` and
    ``--strikes`` with their defaults, for the commands that take them on the command
    line alone (``play``, ``tournament quick``); ``config_keys`` names, in each help,
    the configuration key the option stands for."""
    def key(name: str) -> str:
        return f" ({name})" if config_keys else ""

    def decorate(f: F) -> F:
        options = [
            click.option("--startup", type=click.FloatRange(min=0), default=10.0,
                         show_default=True, help="Seconds for a bot to start and answer "
                         f"the handshake{key('[time] startup')}."),
            click.option("--move-time", "--per-decision", "move_time",
                         type=click.FloatRange(min=0), default=1.0, show_default=True,
                         help=f"Seconds per decision{key('[time] per_decision')}."),
            click.option("--bank", type=click.FloatRange(min=0), default=10.0,
                         show_default=True, help="Extra seconds per game, used when a "
                         f"decision takes longer{key('[time] bank')}."),
            click.option("--game-time", type=click.FloatRange(min=0, min_open=True),
                         default=None, metavar="S",
                         help="Each seat's game clock: seconds of thinking time for the "
                              "whole game, charged as --move-time and --bank are; a bot "
                              "whose clock runs out loses on time, a forfeit ("
                              + ("[time] game, " if config_keys else "")
                              + "RULES §5.4). Default: none."),
            click.option("--faults", "fault_mode",
                         type=click.Choice(["substitute", "forfeit"]), default="substitute",
                         show_default=True,
                         help="On a bot fault: play its first legal decision for it (and "
                              "count a strike), or forfeit it at once"
                              f"{key('[faults] policy')}."),
            click.option("--strikes", type=click.IntRange(min=0), default=3,
                         show_default=True, help="Faults a bot may make (substitute policy) "
                         f"before it forfeits{key('[faults] strike_limit')}."),
        ]
        for option in reversed(options):
            f = option(f)
        return f
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
