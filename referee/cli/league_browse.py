"""``referee league standings``, ``games``, ``show``, ``game`` and ``verify``: what a
league's games add up to, and each game as the organiser sees it (``referee.cli.league``
loads them).  They read the league; none plays or checks a bot."""

from __future__ import annotations

from pathlib import Path

import click

from ..league.browse import game_view, overview, verify_league
from ..league.browse import games as list_games
from ..league.browse import show as show_entry
from ..league.results import pending, standings
from ..league.store import LeagueStore
from ..tournament.standings import FORMATS, SCORE_KINDS, render
from .kit import fail
from .tables import render_standings


@click.command("standings")
@click.argument("league_dir", metavar="DIR", type=click.Path(file_okay=False, exists=True))
@click.option("--history", is_flag=True, help="Every version, over every game played.")
@click.option("--seats", type=int, default=None, help="Only this table size.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="plain", show_default=True)
@click.option("--wide", is_flag=True, help="Every column (default: what fits the terminal, "
              "fault columns only for faults that happened).")
@click.option("--scores", type=click.Choice(SCORE_KINDS), default="adjusted", show_default=True,
              help="Rank by the luck-adjusted score or by the raw average place, and fit "
                   "the rating to the same scores (the raw figures are shown either way).")
def standings_cmd(league_dir: str, history: bool, seats: int | None, fmt: str,
                  wide: bool, scores: str) -> None:
    """The standings of the active entries over the games among them, one table per
    table size (works while the league runs).  With --format json and no --seats: a
    list of tables."""
    tables = standings(Path(league_dir).resolve(), table=seats, history=history,
                       scores=scores)
    if fmt == "json" and seats is None:  # one document: a list, a table per size
        click.echo("[\n" + ",\n".join(render(st, fmt) for st in tables) + "\n]")
    else:
        click.echo("\n\n".join(render_standings(st, fmt, wide) for st in tables))


@click.command("games")
@click.argument("league_dir", metavar="DIR", type=click.Path(file_okay=False, exists=True))
@click.option("--bot", default=None, help="Games of this bot (a name, or NAME@VERSION).")
@click.option("--vs", default=None, help="...against this one.")
@click.option("--lost", is_flag=True, help="Games --bot did not win.")
@click.option("--faults", is_flag=True, help="Games with a fault (by --bot, if given).")
@click.option("--ended", default=None, metavar="HOW",
              help="Games that ended this way (e.g. turn_limit).")
def games_cmd(league_dir: str, bot: str | None, vs: str | None, lost: bool, faults: bool,
              ended: str | None) -> None:
    """List the games played: id, table, deal, each seat's entry and place, how it
    ended."""
    if lost and bot is None:
        fail("--lost needs --bot (whose losses?)")
    store = LeagueStore.open(Path(league_dir).resolve())
    try:
        rows = list_games(store, bot=bot, vs=vs, lost=lost, faults=faults, ended=ended)
    finally:
        store.close()
    for r in rows:
        click.echo(r.line())
    click.echo(f"{len(rows)} games", err=True)


@click.command("show")
@click.argument("league_dir", metavar="DIR", type=click.Path(file_okay=False, exists=True))
@click.argument("name", required=False)
def show_cmd(league_dir: str, name: str | None) -> None:
    """A bot's versions, its record per opponent, its faults with game ids, and
    where its game records and per-game stderr are.  Without NAME: every entry, a
    line each."""
    where = Path(league_dir).resolve()
    store = LeagueStore.open(where)
    try:
        click.echo(show_entry(store, where, name) if name
                   else overview(store, len(pending(store))))
    except KeyError as e:
        fail(str(e.args[0]))
    finally:
        store.close()


@click.command("game")
@click.argument("league_dir", metavar="DIR", type=click.Path(file_okay=False, exists=True))
@click.argument("game_id", metavar="ID")
@click.option("--lines", "tail", type=click.IntRange(min=0), default=50, show_default=True,
              help="Each seat's last stderr lines in the game (0: all of them).")
def game_cmd(league_dir: str, game_id: str, tail: int) -> None:
    """One game as the organiser sees it: its seats, places and penalties, how it
    ended, every fault, its record, and every seat's stderr in that game."""
    where = Path(league_dir).resolve()
    store = LeagueStore.open(where)
    try:
        click.echo(game_view(store, where, game_id, tail=tail or None))
    except KeyError as e:
        fail(str(e.args[0]), 1)
    finally:
        store.close()


@click.command("verify")
@click.argument("league_dir", metavar="DIR", type=click.Path(file_okay=False, exists=True))
def verify_cmd(league_dir: str) -> None:
    """Check every stored game against its record: it re-runs identically under the
    rules and holds what the database holds.  Exit status 1 on any problem."""
    where = Path(league_dir).resolve()
    store = LeagueStore.open(where)
    try:
        n, problems = verify_league(store, where)
    finally:
        store.close()
    for p in problems:
        click.echo(p)
    if problems:
        bad = len({p.split(":", 1)[0] for p in problems})  # a line per problem, a game may have several
        fail(f"{bad} of the {n} games in the database "
              f"{'does' if bad == 1 else 'do'} not verify (listed above)", 1)
    click.echo(f"verified: {n} games re-run identically and match the database")
