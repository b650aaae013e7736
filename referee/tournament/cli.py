"""The ``referee tournament`` commands: a thin click layer over the library.

Parses, calls ``referee.tournament`` and prints.  A configuration or store mistake
is one line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import click

from ..sandbox import MODES as SANDBOX_MODES
from ..sandbox import SandboxError
from .config import EXECUTORS, TournamentConfig, TournamentConfigError, load_config
from .executor import Executor, ExecutorError
from .run import run_tournament, sandbox_of, standings_of, with_seed
from .schedule import schedule
from .standings import FORMATS, by_worker, render, render_by_worker
from .store import Store, StoreError


def _fail(message: str, code: int = 2) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


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
@click.option("--executor", type=click.Choice(EXECUTORS), default=None,
              help="Where the games are played: process (worker processes on this machine) "
                   "or dask (a Dask cluster).  Default: the configuration's executor, else "
                   "process.")
@click.option("--scheduler", default=None, metavar="tcp://HOST:8786",
              help="The Dask scheduler to play on (--executor dask); without one, a local "
                   "Dask cluster of --jobs workers is started.")
def run(config: str, jobs: int | None, output: str | None, fmt: str, quiet: bool,
        sandbox_mode: str | None, executor: str | None, scheduler: str | None) -> None:
    """Play the tournament CONFIG (a TOML file); run again to resume it."""
    out: Path | str = output or "its output folder"
    # 'kill PID' (SIGTERM, what service managers and CI runners send) stops the run as
    # Ctrl-C does: the games in flight are dropped, the finished ones are kept.
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        cfg = load_config(config)
        out = Path(output).resolve() if output else cfg.output_dir
        sandbox = sandbox_of(cfg, sandbox_mode)
        summary = run_tournament(cfg, output_dir=out, jobs=jobs, quiet=quiet, sandbox=sandbox,
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
    if summary.already_done and not quiet:
        click.echo(f"resumed: {summary.already_done} games were already played", err=True)
    out = Path(out)
    click.echo(render(standings_of(out), fmt))
    if not quiet:
        click.echo(f"\nresults: {out}", err=True)
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
@click.option("--faults", "faults_view", is_flag=True,
              help="Instead: the faults by the worker (machine and process) that played "
                   "the games, to tell a sick machine from a faulty bot.")
def standings(where: str, fmt: str, faults_view: bool) -> None:
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
        click.echo(render(standings_of(out), fmt))
    except (TournamentConfigError, StoreError) as e:
        _fail(str(e))


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
