"""The ``referee report`` command: a thin click layer over ``referee.report``."""

from __future__ import annotations

from pathlib import Path

import click

from ..report.results import is_league
from ..report.site import ReportError, write_site


@click.command("report")
@click.argument("folder", metavar="DIR", type=click.Path(file_okay=False))
@click.option("--output", "-o", "out", metavar="SITE", type=click.Path(file_okay=False),
              default=None, help="Folder to write the site into (default: DIR/report).")
@click.option("--no-games", is_flag=True, help="Skip the replay viewer pages (faster).")
@click.option("--scores", type=click.Choice(["adjusted", "raw"]), default="adjusted",
              show_default=True,
              help="Rank by the luck-adjusted score or by the raw average place, and fit "
                   "the rating to the same scores (both scores are shown).")
def report(folder: str, out: str | None, no_games: bool, scores: str) -> None:
    """Write the results in DIR (a tournament's, match's or league's folder) as a
    static site: standings, charts, a page per bot and a replay viewer per game (a
    league: a site per table size).  It opens from file:// with no network; run
    again at any time, also while games are played."""
    where = Path(out) if out else Path(folder) / "report"
    try:
        res = write_site(Path(folder), where, games=not no_games, scores=scores)
    except ReportError as e:
        raise click.ClickException(str(e)) from None
    what = (f"league {res.standings.name} (a site per table size, and its history)"
            if is_league(Path(folder)) else f"{res.name} ({res.standings.played} games)")
    click.echo(f"report of {what}: {(where / 'index.html').resolve()}")
