"""The ``referee league`` commands: a thin click layer over ``referee.league``.

A mistake is one ``Error: ...`` line on stderr and exit status 1 (README, "Exit
status"), never a traceback.
"""

from __future__ import annotations

import shlex
import sys
import threading
import time
from pathlib import Path
from typing import NoReturn

import click

from ..league.browse import game_view, overview, verify_league
from ..league.browse import games as list_games
from ..league.browse import show as show_entry
from ..league.config import load_league_config
from ..league.remote import DEFAULT_SUBMIT_LISTEN, Server, pack, request, upload
from ..league.run import (
    LeagueRunSummary,
    league_config,
    new_league,
    pending,
    progress_of,
    run_league,
    secret_of,
    standings,
    submit,
)
from ..league.store import LeagueStore
from ..report.site import author_game_html
from ..tournament.driver import choose_executor
from ..tournament.standings import FORMATS, SCORE_KINDS, render
from .kit import Command, Group, ending, fail, running
from .options import executor_options
from .tournament import REPORT_EVERY, _Refresh, render_standings


def _fail(message: str, code: int = 1) -> NoReturn:
    fail(message, code)


class _LeagueGroup(Group):
    """``referee league``: its commands' errors end as every command's (one line,
    exit status 1)."""


class _SubmitCommand(Command):
    """``referee submit``: its errors end as the league's."""


@click.group(cls=_LeagueGroup)
def league() -> None:
    """Leagues: bots submitted over time, each new entry playing only its new games."""


@league.command("new")
@click.argument("league_dir", metavar="DIR", type=click.Path(file_okay=False))
@click.option("--config", "config_file", required=True, type=click.Path(dir_okay=False),
              help="The league file (league.toml).")
@click.option("--secret-from", "secret_from", metavar="LEAGUE", default=None,
              type=click.Path(file_okay=False, exists=True),
              help="Take the secret (the key of the decks) of the league in LEAGUE: the "
                   "same bots and settings then play the same games there and here.")
def new(league_dir: str, config_file: str, secret_from: str | None) -> None:
    """Make a league in DIR from --config; on an existing league, take the edited
    file (more deals, another table size) or say what it would change."""
    cfg = load_league_config(config_file)
    text = Path(config_file).read_text(encoding="utf-8")
    secret = secret_of(Path(secret_from)) if secret_from is not None else None
    for line in new_league(Path(league_dir).resolve(), cfg, text, secret=secret):
        click.echo(line)


def split_command(command: str) -> list[str]:
    try:
        words = shlex.split(command)
    except ValueError as e:
        _fail(f"--command cannot be split into words: {e}")
    if not words:
        _fail('--command is empty: give the bot\'s command line, e.g. --command "python3 bot.py"')
    return words


@league.command("submit")
@click.argument("league_dir", metavar="DIR", type=click.Path(file_okay=False, exists=True))
@click.argument("name")
@click.argument("path", type=click.Path())
@click.option("--command", "command", required=True,
              help='The bot\'s command line, run in its folder, e.g. "python3 bot.py".')
@click.option("--transport", type=click.Choice(["stdio", "zmq"]), default="stdio",
              show_default=True)
@click.option("--author", default=None, metavar="WHO",
              help="Who submits it (default: NAME): one author's entries never sit at one "
                   "table, unless the league's separate_authors = false.")
@click.option("--quiet", "-q", is_flag=True,
              help="Only the verdict line (the check's report only if it failed).")
def submit_cmd(league_dir: str, name: str, path: str, command: str, transport: str,
               author: str | None, quiet: bool) -> None:
    """Submit the bot in PATH (a folder, or a .tar, .tar.gz, .tgz or .zip archive) as
    NAME: it is copied into the league, checked with check-bot under the league's
    sandbox and time limits, and on success becomes NAME's next version."""
    words = split_command(command)
    try:
        result = submit(Path(league_dir).resolve(), name, Path(path), words,
                        transport=transport, author=author)
    except KeyboardInterrupt:
        _fail("interrupted: nothing was submitted", 130)
    if result.report and not (quiet and result.accepted):
        click.echo(result.report)
    click.echo(result.summary())
    if not result.accepted:
        sys.exit(1)


@league.command("run")
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
    refresh = _Refresh(Path(report_dir)) if report_dir else None
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
        _fail(f"{len(summary.errors)} games could not be played (first: {first.game_id}: "
              f"{first.message.splitlines()[0]}); run again to retry them", 1)


@league.command("standings")
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


@league.command("games")
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
        _fail("--lost needs --bot (whose losses?)")
    store = LeagueStore.open(Path(league_dir).resolve())
    try:
        rows = list_games(store, bot=bot, vs=vs, lost=lost, faults=faults, ended=ended)
    finally:
        store.close()
    for r in rows:
        click.echo(r.line())
    click.echo(f"{len(rows)} games", err=True)


@league.command("show")
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
        _fail(str(e.args[0]))
    finally:
        store.close()


@league.command("game")
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
        _fail(str(e.args[0]), 1)
    finally:
        store.close()


@league.command("withdraw")
@click.argument("league_dir", metavar="DIR", type=click.Path(file_okay=False, exists=True))
@click.argument("name")
def withdraw_cmd(league_dir: str, name: str) -> None:
    """Retire the entry NAME without a new version: its pending games are cancelled,
    its played games kept (league standings --history, the report's history).  A
    later submission under NAME brings it back as its next version."""
    store = LeagueStore.open(Path(league_dir).resolve())
    try:
        with ending(1):
            gone = store.withdraw(name)
    finally:
        store.close()
    if gone is None:
        _fail(f"the league has no active entry {name!r} (league show lists them)", 1)
    click.echo(f"withdrawn: {gone.id}; its pending games are cancelled, its played games kept")


@league.command("verify")
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
        _fail(f"{bad} of the {n} games in the database "
              f"{'does' if bad == 1 else 'do'} not verify (listed above)", 1)
    click.echo(f"verified: {n} games re-run identically and match the database")


@league.command("serve")
@click.argument("league_dir", metavar="DIR", type=click.Path(file_okay=False, exists=True))
@click.option("--listen", default=DEFAULT_SUBMIT_LISTEN, show_default=True,
              help="Where authors connect (ZeroMQ endpoint).")
@click.option("--keys", "keys_dir", type=click.Path(file_okay=False, exists=True), default=None,
              help="Folder of the authors' public keys, NAME.key: a key submits only as NAME.")
@click.option("--server-key", type=click.Path(dir_okay=False, exists=True), default=None,
              help="The referee's secret key (referee.key_secret, from 'referee keys server').")
@click.option("--play", is_flag=True, help="Also play the games, as 'league run --watch'.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="With --play: worker processes.")
@click.option("--refusal-window", type=click.FloatRange(min=0.1), default=60.0, hidden=True,
              help="Seconds over which refused unknown keys are summed up in one log line "
                   "(a minute; the tests shorten it).")
def serve_cmd(league_dir: str, listen: str, keys_dir: str | None, server_key: str | None,
              play: bool, jobs: int | None, refusal_window: float) -> None:
    """Accept bots submitted from other machines ('referee submit --to ...'), each
    checked in the sandbox as a local submission is; with --play, also play."""
    where = Path(league_dir).resolve()
    server = Server(where, listen, keys_dir, server_key,
                    on_line=lambda text: click.echo(text, err=True),
                    refusal_window=refusal_window, replay=author_game_html)
    click.echo(f"accepting submissions on {server.endpoint}"
               + (" (CURVE: authors' keys from " + str(keys_dir) + ")" if keys_dir else
                  " (no keys: loopback only)")
               + f"; per author: {server.limits.in_flight} submissions waiting, "
                 f"{server.limits.submissions_per_hour} submissions and "
                 f"{server.limits.requests_per_hour} requests an hour; checks up to "
                 f"{server.limits.check_seconds} s ([server])", err=True)
    try:
        with running("the league and its finished games are saved",
                     "run it again to go on"):
            if play:
                thread = threading.Thread(target=server.serve, name="league-serve",
                                          daemon=True)
                thread.start()
                try:
                    run_league(where, jobs=jobs, watch=True, progress=False)
                finally:
                    server.stop()
                    thread.join(5)
            else:
                server.serve()
    finally:
        server.close()


@click.command("submit", cls=_SubmitCommand)
@click.argument("path", required=False, type=click.Path(exists=True, file_okay=False))
@click.option("--to", "endpoint", required=True, help="The league's endpoint, tcp://HOST:5556.")
@click.option("--key", type=click.Path(dir_okay=False, exists=True), default=None,
              help="Your secret key, NAME.key_secret (NAME is the bot's name).")
@click.option("--server-key", type=click.Path(dir_okay=False, exists=True), default=None,
              help="The league's public key, referee.key.")
@click.option("--name", default=None, help="The bot's name (default: your key's NAME).")
@click.option("--command", "command", default=None,
              help='The bot\'s command line, run in its folder, e.g. "python3 bot.py".')
@click.option("--transport", type=click.Choice(["stdio", "zmq"]), default="stdio",
              show_default=True)
@click.option("--status", is_flag=True, help="Show your entries: standings, latest games.")
@click.option("--game", default=None, metavar="ID",
              help="With --status: your bot's record and stderr in game ID.")
@click.option("--html", "html_out", type=click.Path(dir_okay=False), default=None,
              metavar="OUT", help="With --game: write the game's replay viewer to OUT, "
              "showing what your seat saw (every card if the league publishes full "
              "records).")
@click.option("--record", "record_out", type=click.Path(dir_okay=False), default=None,
              metavar="OUT", help="With --game: write the game's whole record (JSON lines, "
              "for 'referee replay') to OUT, if the league publishes full records.")
@click.option("--ticket", type=int, default=None, metavar="N",
              help="With --status: how submission #N is doing (its check's report when done).")
@click.option("--wait", is_flag=True,
              help="After submitting, follow the check to its end and print its report.")
@click.option("--timeout", type=float, default=60.0, show_default=True,
              help="Seconds to wait for each answer.")
@click.option("--connect-timeout", type=float, default=10.0, show_default=True,
              help="Seconds to keep trying to connect (a busy server turns connections "
              "away; each is tried again, a little later each time).")
def submit_remote(path: str | None, endpoint: str, key: str | None, server_key: str | None,
                  name: str | None, command: str | None, transport: str, status: bool,
                  game: str | None, html_out: str | None, record_out: str | None,
                  ticket: int | None, wait: bool, timeout: float,
                  connect_timeout: float) -> None:
    """Submit the bot in the folder PATH to a league on another machine (or, with
    --status, see your entries there).  The league queues it and answers at once
    with a ticket ("queued as #12"); it checks it in its sandbox, and
    'submit --status' shows how it went (--wait follows it to its end)."""
    if name is None:
        if key is None:
            _fail("--name is needed without --key (your key's NAME is your bot's name)")
        name = Path(key).name.removesuffix(".key_secret")
    if html_out is not None or record_out is not None:
        _replay(endpoint, name, game, html_out, record_out, key, server_key, timeout,
                connect_timeout)
        return
    if status or game or ticket is not None:
        reply = request(endpoint, {"op": "status", "name": name, "game": game,
                                   "ticket": ticket}, key=key, server_key=server_key,
                        timeout=timeout, connect_timeout=connect_timeout)
    else:
        if path is None or command is None:
            _fail("give the bot's folder and --command (or --status)")
        words = split_command(command)
        reply = upload(endpoint, name, words, transport, pack(Path(path)), key=key,
                       server_key=server_key, timeout=timeout,
                       connect_timeout=connect_timeout)
        if wait and reply.get("ok"):
            click.echo(reply.get("text", ""))
            number = reply["ticket"]["number"]
            while reply.get("ok") and reply["ticket"]["state"] in ("queued", "checking"):
                time.sleep(0.5)  # polling the league's queue, once a half second
                reply = request(endpoint, {"op": "status", "name": name,
                                           "ticket": number}, key=key,
                                server_key=server_key, timeout=timeout,
                                connect_timeout=connect_timeout)
    if not reply.get("ok"):
        _fail(f"the league refused: {reply.get('error')}")
    click.echo(reply.get("text", ""))
    if (reply.get("ticket") or {}).get("accepted") is False:
        sys.exit(1)


def _replay(endpoint: str, name: str, game: str | None, html_out: str | None,
            record_out: str | None, key: str | None, server_key: str | None,
            timeout: float, connect_timeout: float) -> None:
    """``submit --status --game ID --html OUT`` / ``--record OUT``: the author's own
    game, as the league gives it (their seat's view, unless it publishes full records)."""
    if game is None:
        _fail("--html and --record need --game ID (submit --status lists your games)")
    for fmt, out, field in (("html", html_out, "html"), ("record", record_out, "record")):
        if out is None:
            continue
        reply = request(endpoint, {"op": "replay", "name": name, "game": game,
                                   "format": fmt}, key=key, server_key=server_key,
                        timeout=timeout, connect_timeout=connect_timeout)
        if not reply.get("ok"):
            _fail(f"the league refused: {reply.get('error')}")
        body = reply.get(field)
        if not isinstance(body, str):
            _fail(f"the league's reply holds no {fmt}")
        try:
            Path(out).write_text(body, encoding="utf-8")
        except OSError as e:
            _fail(f"cannot write {out}: {e.strerror or e}")
        click.echo(f"{reply.get('text', game)}: written to {out}")
