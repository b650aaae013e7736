"""What every ``referee`` command shares: its command groups, and how errors end.

Owns the error style of the whole command line: a mistake is one line on stderr,
``Error: ...`` saying what is wrong and what would be right, and a documented exit
status (``EXIT_CODES``) -- click's usage errors included, which click itself prints
as three lines.  This is the one place that maps errors to exit statuses:

* a ``RefereeError`` (``referee.errors``, the whole tree) is caught once, by the
  command group (``Group``) or command (``Command``) it escapes from, and ends the
  command with its message and the group's ``error_status``;
* ``running`` runs a command's games under Ctrl-C and SIGTERM: an interruption ends
  with 130 (143 for SIGTERM), an ``ExecutionError`` (the games cannot go on) with 1,
  each saying what was kept and how to resume;
* a group's commands may be *lazy* (``Lazy``, click's "lazily loading subcommands"):
  each is loaded from its own module only when it runs or shows its own ``--help``,
  so that a command starts with the modules it needs, and ``referee --help`` and
  ``--version`` with none of them.

The options of the commands that set up and play games are in ``options``.
"""

from __future__ import annotations

import contextlib
import importlib
import signal
import sys
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple, NoReturn

import click

from ..errors import ExecutionError, RefereeError

#: The exit statuses of every command (README, "Exit status").
EXIT_CODES = {
    0: "done (check-bot: every check passed)",
    1: "an error, told in one 'Error: ...' line (check-bot: a check failed): every "
       "mistake the referee finds itself, in tournament, match and league alike",
    2: "a usage error found reading the command line: an unknown option, a missing "
       "argument, a value of the wrong type or range (replay: the record does not "
       "re-run identically)",
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


@contextlib.contextmanager
def ending(status: int = 1) -> Iterator[None]:
    """Inside: a ``RefereeError`` ends the command with one ``Error: ...`` line and
    ``status``."""
    try:
        yield
    except RefereeError as e:
        raise UserError(str(e), status) from None


class Terminated(KeyboardInterrupt):
    """SIGTERM, taken through the same path as Ctrl-C."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


@contextlib.contextmanager
def running(kept: str, resume: str = "run the same command again to resume") -> Iterator[None]:
    """Run the body (a run of games) so that it ends as documented: Ctrl-C (SIGINT)
    and ``kill`` (SIGTERM, what service managers and CI runners send) both stop it,
    the games in flight dropped and the finished ones kept, and end the command with
    ``Error: interrupted; KEPT: RESUME`` and 130 (``terminated``, 143); an
    ``ExecutionError`` (the games cannot go on) ends it with ``Error: ...; KEPT`` and
    1.  Other errors pass through, to the command's group (``ending``)."""
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        yield
    except ExecutionError as e:
        fail(f"{e}; {kept}", 1)
    except KeyboardInterrupt as e:
        how, code = ("terminated", 143) if isinstance(e, Terminated) else ("interrupted", 130)
        fail(f"{how}; {kept}: {resume}", code)
    finally:
        signal.signal(signal.SIGTERM, previous)


class Command(click.Command):
    """A command whose errors (``RefereeError``) end with ``error_status``."""

    error_status = 1

    def invoke(self, ctx: click.Context) -> Any:
        with ending(self.error_status):
            return super().invoke(ctx)


class Lazy(NamedTuple):
    """A command of a group loaded only when it is used (click's "lazily loading
    subcommands"): the click command ``attribute`` of ``module``, and its short help,
    which the group's ``--help`` lists without loading it (tests/cli/test_cli_lazy.py
    checks that it is the command's own)."""

    module: str
    attribute: str
    short_help: str

    def load(self) -> click.Command:
        command = getattr(importlib.import_module(self.module), self.attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"{self.module}.{self.attribute} is not a click command")
        return command


class Group(click.Group):
    """A command group whose command list shows each command's whole first sentence
    (click cuts it at 45 characters, often mid-sentence), and whose commands' errors
    (``RefereeError``) end with ``error_status``.  ``lazy`` names its commands that
    are loaded only when used (``Lazy``); the others are added as usual."""

    error_status = 1

    def __init__(self, *args: Any, lazy: Mapping[str, Lazy] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            self.add_command(self.lazy[cmd_name].load(), cmd_name)
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx: click.Context,
                        args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.NoSuchCommand as e:  # click's "did you mean" knows only loaded ones
            raise click.NoSuchCommand(e.command_name, possibilities=self.list_commands(ctx),
                                      ctx=ctx) from None

    def invoke(self, ctx: click.Context) -> Any:
        with ending(self.error_status):
            return super().invoke(ctx)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            if name not in self.commands and name in self.lazy:
                rows.append((name, self.lazy[name].short_help))  # not loaded for this
                continue
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
