"""The ``referee tournament`` commands: a thin click layer over the library.

Parses, calls ``referee.tournament`` and prints.  A configuration or store mistake
is one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import json
import shutil
import signal
import sys
import time
from pathlib import Path

import click

from ..report.site import ReportError, write_site
from .config import TournamentConfigError, load_config
from .executor import ExecutorError
from .run import RunSummary, run_tournament, standings_of
from .schedule import schedule
from .standings import FORMATS, Standings, render
from .store import StoreError


def _fail(message: str, code: int = 2) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


#: Seconds between two rewrites of the report while a tournament runs (writing it
#: takes a moment per hundred games: not after every game).
REPORT_EVERY = 30.0


class _Refresh:
    """``run_tournament``'s ``on_game``: rewrites the report when it is older than
    REPORT_EVERY.  A report that cannot be written is said once; the games go on."""

    def __init__(self, site: Path) -> None:
        self.site = site
        self.results = site
        self.last = time.monotonic()
        self.failed = False

    def __call__(self, summary: RunSummary) -> None:
        if self.failed or time.monotonic() - self.last < REPORT_EVERY:
            return
        try:
            write_site(Path(self.results), self.site)
        except ReportError as e:
            self.failed = True
            click.echo(f"warning: the report is not kept up to date: {e}", err=True)
        self.last = time.monotonic()


def _render(st: Standings, fmt: str, wide: bool) -> str:
    """Plain standings fit the terminal they are printed on (any width when piped)."""
    width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None
    return render(st, fmt, wide=wide, width=width)


@click.group()
def tournament() -> None:
    """Run tournaments among bots and show their standings."""


class _Terminated(KeyboardInterrupt):
    """SIGTERM, taken through the same path as Ctrl-C."""


def _terminate(signum: int, frame: object) -> None:
    raise _Terminated


@tournament.command()
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Worker processes (default: the configuration's jobs, else one per CPU).")
@click.option("--output", "-o", type=click.Path(file_okay=False), default=None,
              help="Output folder (default: the configuration's output).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="plain", show_default=True,
              help="Format of the standings printed at the end.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@click.option("--wide", is_flag=True, help="Every column of the standings (default: what "
              "fits the terminal, fault columns only for faults that happened).")
@click.option("--report", "report_dir", type=click.Path(file_okay=False), default=None,
              metavar="SITE", help="Keep the HTML report in SITE up to date: rewritten every "
              f"{REPORT_EVERY:g} s while games are played, and at the end.")
def run(config: str, jobs: int | None, output: str | None, fmt: str, quiet: bool,
        wide: bool, report_dir: str | None) -> None:
    """Play the tournament CONFIG (a TOML file); run again to resume it."""
    out: Path | str = output or "its output folder"
    refresh = None
    if report_dir:
        refresh = _Refresh(Path(report_dir))
    # 'kill PID' (SIGTERM, what service managers and CI runners send) stops the run as
    # Ctrl-C does: the games in flight are dropped, the finished ones are kept.
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        cfg = load_config(config)
        out = Path(output).resolve() if output else cfg.output_dir
        if refresh:
            refresh.results = out
        summary = run_tournament(cfg, output_dir=out, jobs=jobs, quiet=quiet, on_game=refresh)
    except (TournamentConfigError, StoreError) as e:
        _fail(str(e))
    except ExecutorError as e:
        _fail(f"{e}; the finished games are saved in {out}", 1)
    except KeyboardInterrupt as e:
        how, code = ("terminated", 143) if isinstance(e, _Terminated) else ("interrupted", 130)
        _fail(f"{how}; the finished games are saved in {out}: run the same command again "
              "to resume", code)
    finally:
        signal.signal(signal.SIGTERM, previous)
    if summary.already_done and not quiet:
        click.echo(f"resumed: {summary.already_done} games were already played", err=True)
    out = Path(out)
    click.echo(_render(standings_of(out), fmt, wide))
    if not quiet:
        click.echo(f"\nresults: {out}", err=True)
    if refresh:
        try:
            write_site(out, refresh.site)
        except ReportError as e:
            _fail(str(e), 1)
        click.echo(f"report: {(refresh.site / 'index.html').resolve()}", err=True)
    if summary.errors:
        _fail(f"{len(summary.errors)} games could not be played (first: {summary.errors[0].game_id}:"
              f" {summary.errors[0].message.splitlines()[0]}); run again to retry them", 1)


@tournament.command()
@click.argument("where", type=click.Path(exists=True))
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="plain", show_default=True)
@click.option("--wide", is_flag=True, help="Every column (default: what fits the terminal, "
              "fault columns only for faults that happened).")
def standings(where: str, fmt: str, wide: bool) -> None:
    """Standings of the tournament in the folder WHERE (or of the configuration file
    WHERE); works while the tournament runs."""
    path = Path(where)
    try:
        out = load_config(path).output_dir if path.is_file() else path
        click.echo(_render(standings_of(out), fmt, wide))
    except (TournamentConfigError, StoreError) as e:
        _fail(str(e))


@tournament.command("schedule")
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per game.")
def show_schedule(config: str, as_json: bool) -> None:
    """List the games the configuration CONFIG schedules, without playing them."""
    try:
        cfg = load_config(config)
    except TournamentConfigError as e:
        _fail(str(e))
    for g in schedule(cfg):
        click.echo(json.dumps(g.to_dict()) if as_json
                   else f"{g.game_id}  deal {g.deal:5d}  " + "  ".join(g.seats))
