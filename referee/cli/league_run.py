"""``referee league run``: the league's pending games played, the report kept up to
date (``referee.cli.league`` loads it)."""

from __future__ import annotations

from pathlib import Path

import click

from ..league.results import league_config, progress_of, standings
from ..league.run import LeagueRunSummary, run_league
from ..league.store import LeagueStore
from ..tournament.driver import choose_executor
from .kit import ending, fail, running
from .options import executor_options
from .refresh import REPORT_EVERY, Refresh
from .tables import render_standings


@click.command("run")
@click.argument("league_dir", metavar="DIR", type=click.Path(file_okay=False, exists=True))
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Worker processes (default: the league's jobs, else one per CPU).")
@click.option("--watch", is_flag=True, help="Keep running: play each new submission's "
              "games as it arrives, until Ctrl-C.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@click.option("--max-games", type=click.IntRange(min=1), default=None,
              help="Stop after this many games (the rest stay pending).")
@executor_options("process")
@click.option("--report", "report_dir", type=click.Path(file_okay=False), default=None,
              metavar="SITE", help="Keep the league's HTML report in SITE up to date: "
              f"rewritten after a batch of games at most every {REPORT_EVERY:g} s, and at "
              "the end (referee report).")
def run_cmd(league_dir: str, jobs: int | None, watch: bool, quiet: bool,
            max_games: int | None, executor_kind: str | None, scheduler: str | None,
            concurrency: int | None, report_dir: str | None) -> None:
    """Play the league's pending games (interleaved across lineups)."""
    where = Path(league_dir).resolve()
    executor = choose_executor(executor_kind, scheduler, jobs or league_config(where).jobs,
                               concurrency=concurrency)
    refresh = Refresh(Path(report_dir)) if report_dir else None
    if refresh is not None:
        refresh.results = where

    def on_batch(state: str, now: bool) -> None:
        assert refresh is not None
        refresh(None, state=state, now=now)

    def final_state() -> tuple[str, bool]:
        """The league's state once the run ends, and whether every game is played."""
        store = LeagueStore.open(where)
        try:
            done, total = progress_of(store)
        finally:
            store.close()
        return f"stopped: {done} of {total} games played", done == total

    stopped_clean = False
    with running(f"the finished games are saved in {where}", "run again to play the rest"):
        try:
            summary = run_league(where, jobs=jobs, watch=watch, limit=max_games,
                                 progress=not quiet, executor=executor,
                                 on_batch=on_batch if refresh else None)
        except KeyboardInterrupt:
            # Stopping --watch (Ctrl-C, or SIGTERM from a service manager) is how a
            # watch ends: with nothing left to play, a clean stop.  The report says
            # the league stopped either way.
            state, complete = final_state()
            if refresh is not None:
                refresh(None, state=state, now=True)
            if not (watch and complete):
                raise
            stopped_clean = True
            summary = LeagueRunSummary()
    if stopped_clean:
        click.echo("stopped: every game is played", err=True)
    else:
        click.echo(f"played {summary.played} games", err=True)
    for st in standings(where):
        click.echo(render_standings(st, "plain", wide=False) + "\n")
    if refresh is not None:
        with ending(1):
            refresh(None, state=final_state()[0] if watch else "", now=True)
        click.echo(f"report: {(refresh.site / 'index.html').resolve()}", err=True)
    if summary.errors:
        first = summary.errors[0]
        fail(f"{len(summary.errors)} games could not be played (first: {first.game_id}: "
              f"{first.message.splitlines()[0]}); run again to retry them", 1)
