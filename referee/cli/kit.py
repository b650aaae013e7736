"""What every ``referee`` command shares: its command groups, and how errors end.

Owns the error style of the whole command line: a mistake is one line on stderr,
``Error: ...`` saying what is wrong and what would be right, and a documented exit
status (``EXIT_CODES``) -- click's usage errors included, which click itself prints
as three lines.  Imports nothing of the referee.
"""

from __future__ import annotations

import difflib
import sys
import textwrap
from collections.abc import Sequence
from typing import Any, NoReturn

import click

from ..game.config import VARIANTS

#: The exit statuses of every command (README, "Exit status").
EXIT_CODES = {
    0: "done (check-bot: every check passed)",
    1: "an error, told in one 'Error: ...' line (check-bot: a check failed)",
    2: "a usage error: an unknown option, a missing argument (replay: the record "
       "does not re-run identically)",
    130: "interrupted (Ctrl-C): a tournament keeps its finished games",
    143: "terminated (SIGTERM): likewise",
}


def exit_codes_help(width: int = 78) -> str:
    """The exit statuses as lines for a ``--help`` text (inside a ``\\b`` block)."""
    out = []
    for code, text in EXIT_CODES.items():
        out += textwrap.wrap(text, width, initial_indent=f"  {code:<4} ",
                             subsequent_indent=" " * 7)
    return "\n".join(out)


class UserError(click.ClickException):
    """A user mistake: one line, ``Error: ...``, exit status 1 (or ``code``)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.exit_code = code  # type: ignore[misc]  # click declares it on the class


def fail(message: str, code: int = 1) -> NoReturn:
    """End the command with one ``Error: ...`` line and ``code``."""
    raise UserError(message, code)


class Group(click.Group):
    """A command group whose command list shows each command's whole first sentence
    (click cuts it at 45 characters, often mid-sentence)."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is None or cmd.hidden:
                continue
            rows.append((name, cmd.get_short_help_str(limit=500)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


class Main(Group):
    """The top-level group: every error, click's usage errors included, ends with one
    ``Error: ...`` line on stderr and the status of ``EXIT_CODES``."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, False, **extra)
        except click.UsageError as e:
            where = e.ctx.command_path if e.ctx is not None else (prog_name or "referee")
            hint = f" (see '{where} --help')" if e.ctx is not None else ""
            click.echo(f"Error: {_one_line(e.format_message()).rstrip('.')}{hint}", err=True, color=True)
            sys.exit(2)
        except click.ClickException as e:
            click.echo(f"Error: {_one_line(e.format_message())}", err=True, color=True)
            sys.exit(e.exit_code)
        except click.Abort:
            click.echo("Error: aborted", err=True, color=True)
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


def _one_line(text: str) -> str:
    return " ".join(text.split())


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
