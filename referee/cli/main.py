"""The ``referee`` command: a thin click layer over the library.

It parses, calls the library and prints; it holds no game logic.  This module is
the entry point (signal dispositions, the exit hook, the output guard) and the
command list: each command lives in its own module of this package and is loaded
only when it runs (``COMMANDS``; click's "lazily loading subcommands"), so that
``referee --help``, ``--version`` and each command start with only the modules they
need.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import Any

import click

from .. import __version__
from ..players.process import install_exit_handlers
from ..text.quoting import Guard
from .kit import Lazy, Main, exit_codes_help

#: Every command but the entry point's own options, each in its own module, loaded
#: only when it runs or shows its --help; the short help is what ``referee --help``
#: lists (tests/cli/test_cli_lazy.py checks it against the command's own).
COMMANDS = {
    "check-bot": Lazy("referee.cli.check_bot", "check_bot",
                      "Check that the bot BOT speaks the protocol correctly."),
    "keys": Lazy("referee.cli.keys", "keys",
                 "CURVE keys for remote ZeroMQ bots (protocol/ZEROMQ.md)."),
    "league": Lazy("referee.cli.league", "league",
                   "Leagues: bots submitted over time, each new entry playing only its new "
                   "games."),
    "luck": Lazy("referee.cli.luck", "luck",
                 "Luck-adjusted scores: the value function they use, and one game's luck."),
    "match": Lazy("referee.cli.match", "match",
                  "Is NEW better than OLD? An A/B test of two bots on duplicate deals."),
    "play": Lazy("referee.cli.play", "play",
                 "Play one game, or a match (--games N), among 2 to 6 bots."),
    "replay": Lazy("referee.cli.replay", "replay",
                   "Show a recorded game turn by turn, and verify it by re-running it."),
    "report": Lazy("referee.cli.report", "report",
                   "Write the results in DIR (a tournament's, match's or league's folder) as "
                   "a static site: standings, charts, a page per bot and a replay viewer per "
                   "game (a league: a site per table size)."),
    "submit": Lazy("referee.cli.submit", "submit_remote",
                   "Submit the bot in the folder PATH to a league on another machine (or, "
                   "with --status, see your entries there)."),
    "tournament": Lazy("referee.cli.tournament", "tournament",
                       "Run tournaments among bots (from a TOML file, or from flags alone with "
                       "'quick'), and show their standings and schedules."),
}


def _ignore(signum: int, frame: object) -> None:
    """Ignores a signal, as SIG_IGN would, but as a handler: ``exec`` resets a
    handled signal to its default, while an ignored one stays ignored in every
    program started after it."""


def _children_start_with_default_signals() -> None:
    """Every bot starts with the same signal dispositions, whoever starts it: a
    referee started with SIGINT or SIGHUP ignored (nohup, cron, a background job)
    keeps ignoring them, through a handler that does nothing, so that the bots it
    starts -- for a check or for a game, from this process or from a worker -- get
    them at their defaults (a bot that could see a difference could behave only
    while it is checked)."""
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGTERM):
        if signal.getsignal(sig) is signal.SIG_IGN:
            signal.signal(sig, _ignore)


class _Group(Main):
    """The command group; output piped into a program that stops reading (``referee
    replay FILE | head``) ends the command quietly, as with any Unix tool, instead of
    a Python error.

    Everything every command writes on stdout and stderr goes through a ``Guard``
    (``text/quoting.py``): what a bot or an author wrote (names, commands, hello
    names, stderr, fault texts) is shown, never obeyed, whichever line carries it --
    no control character but a newline or a tab reaches the terminal, except the
    referee's own (progress, colours)."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        # Kept to the end of the process (an uncaught error's traceback too); click's
        # test runner puts its own streams back when it is done.
        for name in ("stdout", "stderr"):
            stream = getattr(sys, name)
            if stream is not None and not isinstance(stream, Guard):
                setattr(sys, name, Guard(stream))
        _children_start_with_default_signals()
        return super().main(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            # Whatever is still buffered cannot be written either: point stdout at
            # /dev/null so that the interpreter's final flush stays quiet.
            with contextlib.suppress(OSError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            ctx.exit(141)  # 128 + SIGPIPE, what a shell reports for a killed writer


MAIN_HELP = """Referee and tournament runner for the card game 3UP 3DOWN.

\b
Bots are programs in any language speaking JSON lines over stdio or msgpack
over ZeroMQ (protocol/PROTOCOL.md); the referee enforces the rules
(protocol/RULES.md).

\b
Examples:
  referee play heuristic "python3 mybot.py" --transcript
  referee check-bot "python3 mybot.py"
  referee tournament quick heuristic lowest "python3 mybot.py" --deals 50
  referee tournament run tournaments/demo.toml

\b
Exit status (every command):
""" + exit_codes_help() + """

Each command has its own --help.
"""


@click.group(cls=_Group, help=MAIN_HELP, lazy=COMMANDS,
             # color=True: click never strips what looks like a colour sequence from
             # what it echoes (it would hide a bot's "\x1b[ --hidden" from the view
             # instead of showing it): every stream's Guard escapes it instead, and the
             # referee's own colours go through quoting.control.
             context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100,
                               "color": True})
@click.version_option(__version__, prog_name="referee")
def main() -> None:
    # The entry point: bots still running when the command exits (or is
    # terminated) are ended.
    install_exit_handlers()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
