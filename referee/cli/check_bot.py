"""``referee check-bot``: the conformance checker (``referee.checkbot``) on the command line.

Reads the bot spec and the limits (from the options, or from a tournament's or a
league's file), resolves the sandbox, runs the checks and prints the report.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import sys
from pathlib import Path

import click

from ..checkbot.checker import run_checks
from ..league.config import LeagueConfig, LeagueConfigError, is_league_file, load_league_config
from ..league.run import league_sandbox_config, run_check
from ..play.runner import TimeControl
from ..players.botspec import TRANSPORTS, BotSpecError, parse_spec
from ..players.sandbox import MODES as SANDBOX_MODES
from ..players.sandbox import SandboxConfig, SandboxError, resolve
from ..tournament.config import TournamentConfigError, load_config

CHECK_BOT_HELP = """Check that the bot BOT speaks the protocol correctly.

\b
BOT is a bot spec, as for 'referee play': the bot's command line as one
quoted argument (or its words after '--'), stdio:COMMAND, zmq:COMMAND, or an
example bot (example:python-random, example:python-heuristic, example:js).

\b
Examples:
  referee check-bot "python3 mybot.py"
  referee check-bot zmq:"node bot.js"
  referee check-bot --transport zmq -- node bot.js
  referee check-bot example:js
  referee check-bot "python3 mybot.py" --per-decision 0.1 --memory-mb 256

The bot plays several games against itself (one process per seat; 2 and 6
players; every kind of decision), is sent unknown message types and fields and a
deliberate 'rejected', and is told 'bye'.  The report gives one line per root
cause first (a slow bot's timeouts are one cause, however many rows they fail),
then a pass/fail table, then a transcript for each cause.  Exit status: 0 when
every check passed (or was skipped), 1 when one failed or BOT cannot be used,
2 for a usage error.
"""


@click.command("check-bot", help=CHECK_BOT_HELP, context_settings={"max_content_width": 100})
@click.argument("command", nargs=-1, required=True, metavar="BOT")
@click.option("--transport", type=click.Choice(TRANSPORTS), default=None,
              help="How the bot talks to the referee  [default: stdio, or zmq for a "
                   "zmq: spec]")
@click.option("--per-decision", "--move-time", "per_decision", type=click.FloatRange(min=0),
              default=1.0, show_default=True, help="Seconds per decision.")
@click.option("--bank", type=click.FloatRange(min=0), default=10.0, show_default=True,
              help="Extra seconds per game, used when a decision takes longer.")
@click.option("--startup", type=click.FloatRange(min=0), default=10.0, show_default=True,
              help="Seconds for the bot to start and say hello.")
@click.option("--bye-grace", type=click.FloatRange(min=0), default=2.0, show_default=True,
              help="Seconds for the bot to exit after bye.")
@click.option("--memory-mb", type=click.IntRange(min=0), default=None, metavar="MB",
              help="The bot's memory limit, for its whole process tree in the sandbox "
                   "(default: --config's [sandbox] memory_mb, else 1024): test under the "
                   "organiser's limit.")
@click.option("--cwd", type=click.Path(exists=True, file_okay=False), default=None,
              help="The bot's working directory.")
@click.option("--sandbox", "sandbox_mode", type=click.Choice(SANDBOX_MODES), default=None,
              help="Run the bot in the bubblewrap sandbox: auto (where it works, else with a "
                   "warning), on, off.  Default: --config's [sandbox] mode, else auto.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, exists=True),
              default=None, metavar="FILE",
              help="A tournament or league file: check under its sandbox, limits and time "
                   "limits, as it will run your bot.")
@click.option("--allow-read", "allow_read", multiple=True, metavar="PATH",
              type=click.Path(exists=True),
              help="A path the sandboxed bot may read besides its own folder; repeatable.")
@click.option("--freeze-between-turns/--no-freeze-between-turns", "freeze", default=None,
              help="Freeze the sandboxed bot between its turns, so that it takes no CPU on "
                   "the other seats' turns (RULES.md, Time control).  Default: --config's "
                   "[sandbox] freeze_between_turns (a league's: on), else off.")
def check_bot(command: tuple[str, ...], transport: str | None, per_decision: float,
              bank: float, startup: float, bye_grace: float, memory_mb: int | None,
              cwd: str | None, sandbox_mode: str | None, config_file: str | None,
              allow_read: tuple[str, ...], freeze: bool | None) -> None:
    words = list(command)
    text = words[0] if len(words) == 1 else shlex.join(words)
    try:
        spec = parse_spec(text, cwd=cwd)
    except BotSpecError as e:
        raise click.ClickException(str(e)) from None
    if spec.command is None:
        raise click.ClickException(
            f"check-bot checks a bot program, and {text!r} is a {spec.kind} "
            f"{'bot' if spec.kind != 'human' else 'player'}: give the command that starts "
            f"your bot, e.g. referee check-bot \"python3 mybot.py\"")
    if transport is not None and spec.text.startswith("zmq:") and transport != "zmq":
        raise click.ClickException(f"{text!r} is a ZeroMQ bot (zmq:), but --transport says "
                                   f"{transport}: drop one of them")
    tc = TimeControl(startup=startup, per_decision=per_decision, bank=bank)
    sandbox_config = SandboxConfig()
    league: LeagueConfig | None = None
    if config_file is not None:
        try:
            if is_league_file(config_file):  # a league runs its bots sandboxed, always
                league = load_league_config(config_file, draw_seed=False)
                tc, sandbox_config = league.time, dataclasses.replace(
                    league_sandbox_config(league), mode="on", entry_fence=False)
            else:
                tournament = load_config(config_file)
                tc, sandbox_config = tournament.time, tournament.sandbox
        except (TournamentConfigError, LeagueConfigError) as e:
            raise click.ClickException(str(e)) from None
    if sandbox_mode is not None:
        sandbox_config = dataclasses.replace(sandbox_config, mode=sandbox_mode)
    if allow_read:
        sandbox_config = dataclasses.replace(sandbox_config, read_only=(
            *sandbox_config.read_only, *(os.path.abspath(p) for p in allow_read)))
    if memory_mb:
        sandbox_config = dataclasses.replace(sandbox_config, memory_mb=memory_mb)
    if freeze is not None:
        sandbox_config = dataclasses.replace(sandbox_config, freeze_between_turns=freeze)
    try:
        sandbox = resolve(sandbox_config)
    except SandboxError as e:
        raise click.ClickException(str(e)) from None
    for w in sandbox.warnings:
        click.echo(f"referee: {w}", err=True)
    if league is not None:
        # Exactly the check a submission to this league gets (league submit): a game
        # at each of its table sizes under its rules, then check-bot's own games.
        click.echo(f"the check of a submission to league {league.name!r} "
                   f"({config_file}):", err=True)
        ok, text = run_check(list(spec.command), transport or spec.kind,
                             Path(cwd or spec.cwd or "."), league, sandbox)
        click.echo(text)
        sys.exit(0 if ok else 1)
    report = run_checks(list(spec.command), transport=transport or spec.kind,
                        time_control=tc, bye_grace=bye_grace, cwd=cwd, sandbox=sandbox,
                        memory_mb=sandbox_config.memory_mb if memory_mb != 0 else None)
    click.echo(report.render())
    sys.exit(0 if report.ok else 1)
