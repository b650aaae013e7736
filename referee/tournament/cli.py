"""The ``referee tournament`` commands: a thin click layer over the library.

Parses, calls ``referee.tournament`` and prints.  A configuration or store mistake
is one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shutil
import signal
import sys
import time
from pathlib import Path

import click

from ..report.site import ReportError, write_site
from ..sandbox import MODES as SANDBOX_MODES
from ..sandbox import SandboxError
from . import verify as verify_mod
from .config import EXECUTORS, TournamentConfig, TournamentConfigError, load_config
from .executor import Executor, ExecutorError
from .run import RunSummary, run_tournament, sandbox_of, standings_of, with_seed
from .schedule import schedule, schedule_digest
from .standings import FORMATS, Standings, by_worker, render, render_by_worker
from .store import Store, StoreError


def _fail(message: str, code: int = 2) -> None:
    click.echo(f"Error: {message}", err=True)
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
@click.option("--sandbox", "sandbox_mode", type=click.Choice(SANDBOX_MODES), default=None,
              help="Run the bots in the bubblewrap sandbox: auto (where it works, else with "
                   "a warning), on (refuse to start without it), off.  Default: the "
                   "configuration's [sandbox] mode, else auto.")
@click.option("--wide", is_flag=True, help="Every column of the standings (default: what "
              "fits the terminal, fault columns only for faults that happened).")
@click.option("--report", "report_dir", type=click.Path(file_okay=False), default=None,
              metavar="SITE", help="Keep the HTML report in SITE up to date: rewritten every "
              f"{REPORT_EVERY:g} s while games are played, and at the end.")
@click.option("--executor", type=click.Choice(EXECUTORS), default=None,
              help="Where the games are played: process (worker processes on this machine) "
                   "or dask (a Dask cluster).  Default: the configuration's executor, else "
                   "process.")
@click.option("--scheduler", default=None, metavar="tcp://HOST:8786",
              help="The Dask scheduler to play on (--executor dask); without one, a local "
                   "Dask cluster of --jobs workers is started.")
def run(config: str, jobs: int | None, output: str | None, fmt: str, quiet: bool,
        sandbox_mode: str | None, wide: bool, report_dir: str | None, executor: str | None,
        scheduler: str | None) -> None:
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
        sandbox = sandbox_of(cfg, sandbox_mode)
        if refresh:
            refresh.results = out
        summary = run_tournament(cfg, output_dir=out, jobs=jobs, quiet=quiet, sandbox=sandbox,
                                 on_game=refresh,
                                 executor=_executor(cfg, executor, scheduler, jobs))
    except (TournamentConfigError, StoreError, SandboxError) as e:
        _fail(str(e))
    except ExecutorError as e:
        _fail(f"{e}; the finished games are saved in {out}", 1)
    except KeyboardInterrupt as e:
        how, code = ("terminated", 143) if isinstance(e, _Terminated) else ("interrupted", 130)
        _fail(f"{how}; the finished games are saved in {out}: run the same command again "
              "to resume", code)
    finally:
        signal.signal(signal.SIGTERM, previous)
    if summary.replayed and not quiet:
        click.echo(f"replayed {len(summary.replayed)} committed games whose record was "
                   f"missing or cut short: {', '.join(summary.replayed[:5])}"
                   + (" ..." if len(summary.replayed) > 5 else ""), err=True)
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


def _executor(cfg: TournamentConfig, kind: str | None, scheduler: str | None,
              jobs: int | None) -> Executor | None:
    """The executor the options and the file ask for (None: the process pool)."""
    kind = kind or ("dask" if scheduler else cfg.executor)
    if kind != "dask":
        if scheduler:
            raise TournamentConfigError("--scheduler is for the Dask executor: add "
                                        "--executor dask")
        return None
    # distributed takes a second to import: only when a run asks for it.
    from .dask_executor import DaskExecutor

    return DaskExecutor(scheduler or cfg.scheduler, jobs or cfg.jobs, ship=cfg.ship_bots)


@tournament.command()
@click.argument("where", type=click.Path(exists=True))
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="plain", show_default=True)
@click.option("--wide", is_flag=True, help="Every column (default: what fits the terminal, "
              "fault columns only for faults that happened).")
@click.option("--faults", "faults_view", is_flag=True,
              help="Instead: the faults by the worker (machine and process) that played "
                   "the games, to tell a sick machine from a faulty bot.")
def standings(where: str, fmt: str, wide: bool, faults_view: bool) -> None:
    """Standings of the tournament in the folder WHERE (or of the configuration file
    WHERE); works while the tournament runs."""
    path = Path(where)
    try:
        out = load_config(path).output_dir if path.is_file() else path
        if faults_view:
            store = Store.open_existing(out)
            try:
                click.echo(render_by_worker(by_worker(store.outcomes()), fmt))
            finally:
                store.close()
            return
        click.echo(_render(standings_of(out), fmt, wide))
    except (TournamentConfigError, StoreError) as e:
        _fail(str(e))


@tournament.command("verify")
@click.argument("where", type=click.Path(exists=True, file_okay=False))
@click.option("--repair", is_flag=True,
              help="Rebuild the database from the game records (the source of truth); "
                   "games without a good record are played again by the next run.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), default=None,
              help="The tournament's configuration file: with --repair, to rebuild a "
                   "database that cannot be read at all.")
def verify_command(where: str, repair: bool, config_file: str | None) -> None:
    """Prove the standings of the tournament in the folder WHERE: re-run every game
    record through the rules engine and check every database row against its record
    (places, points, how the game ended, faults, seats, deal seed).  Exit status 1
    when anything differs, is truncated or is missing."""
    out = Path(where).resolve()
    try:
        if repair:
            fresh = schedule_of = None
            if config_file is not None:
                cfg = load_config(config_file)
                source = "given"
                if cfg.seed is None:  # drawn when it first ran: the records keep it
                    seed = verify_mod.seed_in_records(out)
                    if seed is None:
                        _fail(f"{config_file} has no seed, and no record in {out} says which "
                              "seed the tournament drew: give it as seed = N in the file")
                    cfg, source = dataclasses.replace(cfg, seed=seed), "random"
                games = schedule(cfg)

                def fresh() -> Store:
                    return Store.create_or_resume(out, cfg.to_dict(), cfg.name, len(games),
                                                  schedule_digest(games),
                                                  meta={"seed_source": source})

                def schedule_of() -> dict[int, int]:
                    return {g.index: g.deal for g in games}

            before = None
            with contextlib.suppress(StoreError):
                before = verify_mod.check(out)
            if before is not None:
                for f in before.findings:
                    click.echo(str(f))
            done = verify_mod.repair(out, schedule_of, fresh)
            click.echo(f"repaired: {done.kept} games rebuilt from their records"
                       + (f"; {len(done.dropped)} without a good record removed, to be played "
                          f"again by 'referee tournament run' ({', '.join(done.dropped[:5])}"
                          + (" ..." if len(done.dropped) > 5 else "") + ")"
                          if done.dropped else ""))
            if done.left:
                click.echo(f"left out: {len(done.left)} records whose deal is not known "
                           f"({', '.join(done.left[:5])}): give --config to place them",
                           err=True)
            after = verify_mod.check(out)
            click.echo(after.summary())
            if after.errors:
                _fail(f"{len(after.errors)} problems remain after the repair", 1)
            return
        report = verify_mod.check(out)
    except (TournamentConfigError, StoreError) as e:
        _fail(str(e))
    for f in report.findings:
        click.echo(str(f))
    click.echo(report.summary())
    if report.errors:
        _fail(f"{len(report.errors)} problems in {out}: the standings are not proven; "
              f"'referee tournament verify {where} --repair' rebuilds the database from the "
              "records", 1)


@tournament.command("schedule")
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per game.")
def show_schedule(config: str, as_json: bool) -> None:
    """List the games the configuration CONFIG schedules, without playing them."""
    try:
        cfg = load_config(config)
        given = cfg.seed is not None
        cfg, _ = with_seed(cfg, cfg.output_dir)
    except (TournamentConfigError, StoreError) as e:
        _fail(str(e))
    if not given:
        click.echo(f"note: the configuration has no seed: these deals use seed {cfg.seed}, "
                   "drawn now; the tournament draws its own when it first runs", err=True)
    for g in schedule(cfg):
        click.echo(json.dumps(g.to_dict()) if as_json
                   else f"{g.game_id}  deal {g.deal:5d}  " + "  ".join(g.seats))
