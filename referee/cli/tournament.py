"""The ``referee tournament`` commands: a thin click layer over the library.

Parses, calls ``referee.tournament`` and prints.  A configuration or store mistake
is one ``Error: ...`` line on stderr and exit status 1 (``referee.cli.kit``), never a
traceback.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import random
from pathlib import Path
from typing import Any, NoReturn

import click
from tabulate import tabulate

from ..errors import StorageError
from ..game import VARIANTS
from ..game.seeds import MAX_SEED
from ..play.runner import TimeControl
from ..players.botspec import NAMING, parse_specs
from ..players.factory import hello_names
from ..players.sandbox import MODES as SANDBOX_MODES
from ..players.sandbox import SandboxConfig, SandboxError, resolve
from ..tournament import verify as verify_mod
from ..tournament.config import (
    DEFAULT_STOP_AFTER,
    SEATINGS,
    TournamentConfig,
    TournamentConfigError,
    load_config,
    parse_config,
    seatings_per_deal,
)
from ..tournament.driver import choose_executor
from ..tournament.kinds import TournamentSettings
from ..tournament.run import run_tournament, sandbox_of, standings_of, with_seed
from ..tournament.schedule import schedule, schedule_digest
from ..tournament.standings import (
    FORMATS,
    SCORE_KINDS,
    by_worker,
    render_by_worker,
)
from ..tournament.store import Store
from .kit import Group, fail, running
from .options import clock_and_fault_options, executor_options
from .refresh import REPORT_EVERY, Refresh, write_report
from .tables import render_standings

KEY_REFERENCE = ("tournaments/README.md lists every key (and the matching options of "
                 "'referee play'), tournaments/gauntlet.toml shows each with a comment, and "
                 "'referee tournament init FILE' writes a starter file")


def _fail(message: str, code: int = 1) -> NoReturn:
    fail(message, code)


def _warn(cfg: TournamentConfig) -> None:
    for w in cfg.warnings:
        click.echo(f"warning: {w}", err=True)


@click.group(cls=Group)
def tournament() -> None:
    """Run tournaments among bots (from a TOML file, or from flags alone with
    'quick'), and show their standings and schedules.

    \b
    Examples:
      referee tournament quick heuristic lowest random --seats 2 --deals 100
      referee tournament init my.toml
      referee tournament run my.toml --jobs 2
      referee tournament standings runs/my --format markdown
      referee tournament schedule my.toml

    The files, every key, the standings: tournaments/README.md.
    """


def _play(cfg: TournamentConfig, output: str | None, jobs: int | None, fmt: str,
          quiet: bool, *, sandbox_mode: str | None = None, wide: bool = False,
          report_dir: str | None = None, executor: str | None = None,
          scheduler: str | None = None, concurrency: int | None = None) -> None:
    """Play (or resume) ``cfg`` and print its standings: what 'run' and 'quick' do."""
    _warn(cfg)
    out = Path(output).resolve() if output else cfg.output_dir
    refresh = Refresh(Path(report_dir)) if report_dir else None
    if refresh:
        refresh.results = out
    sandbox = sandbox_of(cfg, sandbox_mode)
    ex = choose_executor(executor, scheduler, jobs or cfg.jobs, default=cfg.executor,
                         default_scheduler=cfg.scheduler, ship=cfg.ship_bots,
                         concurrency=concurrency)
    with running(f"the finished games are saved in {out}"):
        summary = run_tournament(cfg, output_dir=out, jobs=jobs, quiet=quiet, sandbox=sandbox,
                                 on_game=refresh, executor=ex)
    if summary.replayed and not quiet:
        click.echo(f"replayed {len(summary.replayed)} committed games whose record was "
                   f"missing or cut short: {', '.join(summary.replayed[:5])}"
                   + (" ..." if len(summary.replayed) > 5 else ""), err=True)
    out = Path(out)
    click.echo(render_standings(standings_of(out), fmt, wide))
    if not quiet:
        click.echo(f"\nresults: {out}", err=True)
    if refresh:
        write_report(out, refresh.site)
        click.echo(f"report: {(refresh.site / 'index.html').resolve()}", err=True)
    if summary.errors:
        _fail(f"{len(summary.errors)} games could not be played (first: {summary.errors[0].game_id}:"
              f" {summary.errors[0].message.splitlines()[0]}); run again to retry them")


@tournament.command(epilog=f"The configuration file: {KEY_REFERENCE}.",
                    context_settings={"max_content_width": 100})
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
@executor_options("the configuration's executor, else process")
def run(config: str, jobs: int | None, output: str | None, fmt: str, quiet: bool,
        sandbox_mode: str | None, wide: bool, report_dir: str | None, executor_kind: str | None,
        scheduler: str | None, concurrency: int | None) -> None:
    """Play the tournament CONFIG (a TOML file); run it again to resume it.

    Every finished game is committed at once to OUTPUT/tournament.sqlite, with its
    record in OUTPUT/games/; running the same command again plays only what is
    left, and on a finished tournament just prints the standings.  Before the first
    game every bot is checked (a command that is not there or not executable is an
    error); a bot that crashes or never says hello in each of its first games
    ([faults] stop_after, default 3) is stopped, its remaining games forfeited.

    \b
    Examples:
      referee tournament run tournaments/demo.toml
      referee tournament run my.toml --jobs 2 --output runs/try2
      referee tournament run my.toml --quiet --format csv > standings.csv
    """
    _play(load_config(config), output, jobs, fmt, quiet, sandbox_mode=sandbox_mode, wide=wide,
          report_dir=report_dir, executor=executor_kind, scheduler=scheduler,
          concurrency=concurrency)


QUICK_HELP = """Run a round-robin among the bots BOT... from flags alone, and print the
standings.

\b
Each BOT is a bot spec, as for 'referee play': heuristic, lowest, random,
example:js, "python3 mybot.py", zmq:"node bot.js", NAME=SPEC.  Every
combination of --seats bots plays --deals deals, each deal in every rotation
of its seats (duplicate deals).  The results go to --output (default
runs/quick-SEED): the same command with the same --seed resumes it.

\b
Examples:
  referee tournament quick heuristic lowest random --seats 2 --deals 100 --jobs 2
  referee tournament quick heuristic "python3 mybot.py" --deals 50 --move-time 0.2
  referee tournament quick a=heuristic b=lowest c=random d=random --seats 4 -V match_scoring

For everything else (gauntlets, balanced schedules, remote bots, per-bot memory
limits and environments) write a file: 'referee tournament init FILE'.
"""


@tournament.command(help=QUICK_HELP, context_settings={"max_content_width": 100})
@click.argument("bots", nargs=-1, required=True, metavar="BOT...")
@click.option("--seats", type=click.IntRange(2, 6), default=2, show_default=True,
              help="Players per game.")
@click.option("--deals", type=click.IntRange(min=1), default=10, show_default=True,
              help="Deals per lineup.")
@click.option("--seating", type=click.Choice(SEATINGS), default="rotate", show_default=True,
              help="Each deal in every rotation of its seats, every permutation, or once "
                   "at random.")
@click.option("--seed", type=click.IntRange(0, MAX_SEED), default=None,
              help="Seed of the schedule and every deal (default: a random one, printed).")
@click.option("-V", "--variant", "variant_opts", multiple=True, metavar="NAME",
              help=f"A rules variant, repeatable or comma-separated (default: play_out): "
                   f"{', '.join(VARIANTS)}.")
@clock_and_fault_options(config_keys=True)
@click.option("--stop-after", type=click.IntRange(min=0), default=DEFAULT_STOP_AFTER,
              show_default=True,
              help="Stop a bot that crashes or never says hello in each of its first N "
                   "games (0: never) ([faults] stop_after).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Worker processes (default: one per CPU).")
@click.option("--output", "-o", type=click.Path(file_okay=False), default=None,
              help="Output folder (default: runs/quick-SEED).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="plain", show_default=True,
              help="Format of the standings.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@click.option("--names", "naming", type=click.Choice(NAMING), default="spec", show_default=True,
              help="How bots are named: spec (NAME=, else the program's name) or hello (the "
                   "name each bot gives in its hello, as in 'referee play --names hello').")
def quick(bots: tuple[str, ...], seats: int, deals: int, seating: str, seed: int | None,
          variant_opts: tuple[str, ...], startup: float, move_time: float, bank: float,
          game_time: float | None, fault_mode: str, strikes: int, stop_after: int,
          jobs: int | None, output: str | None, fmt: str, quiet: bool, naming: str) -> None:
    specs = parse_specs(list(bots))
    if naming == "hello":
        # started once each, in the sandbox the games use, for its hello
        try:  # a quick tournament's sandbox: the default (auto)
            names = hello_names(specs, time_control=TimeControl(startup, move_time, bank,
                                                                game_time),
                                sandbox=resolve(SandboxConfig()))
        except SandboxError as e:
            _fail(str(e))
        specs = [dataclasses.replace(s, name=n) for s, n in zip(specs, names, strict=True)]
    entries: list[dict[str, Any]] = []
    for s in specs:
        if s.kind == "builtin":
            entries.append({"name": s.name, "builtin": s.builtin})
        elif s.command is not None:
            entries.append({"name": s.name, "command": list(s.command), "transport": s.kind})
        else:
            _fail(f"bot {s.text!r}: a {s.kind} bot cannot play a quick tournament; give "
                  f"built-in bots or commands (remote bots: write a file, see "
                  f"tournaments/remote.toml)")
    if len(entries) < seats:
        _fail(f"{seats} seats need at least {seats} bots, {len(entries)} given")
    if seed is None:
        seed = random.SystemRandom().randrange(1, 10**6)
    variants = sorted({v.strip().lower().replace("-", "_")
                       for opt in variant_opts for v in opt.replace(",", " ").split()})
    raw: dict[str, Any] = {
        "tournament": {"name": f"quick-{seed}", "format": "round-robin", "seats": seats,
                       "deals": deals, "seed": seed, "seating": seating,
                       "output": output or f"runs/quick-{seed}"},
        "rules": {"variants": variants or ["play_out"]},
        "time": {"startup": startup, "per_decision": move_time, "bank": bank,
                 **({} if game_time is None else {"game": game_time})},
        "faults": {"policy": fault_mode, "strike_limit": strikes, "stop_after": stop_after},
        "bots": entries,
    }
    cfg = parse_config(raw, base_dir=str(Path.cwd()), source="tournament quick")
    n_games = len(schedule(cfg))
    if not quiet:
        click.echo(f"quick tournament: round-robin of {', '.join(cfg.bot_names)}; {seats} "
                   f"seats, {deals} deals per lineup, {seatings_per_deal(seating, seats)} "
                   f"seatings per deal: {n_games} games; seed {seed} (the same command with "
                   f"--seed {seed} resumes it)", err=True)
    _play(cfg, None, jobs, fmt, quiet)


STARTER = '''\
# A tournament: every key of the file is in tournaments/README.md, and
# tournaments/gauntlet.toml shows each with a comment.  Play it with
#
#     referee tournament run {file}
#
# and run the same command again to resume it.  Paths are relative to this file.

[tournament]
name = "{name}"
format = "round-robin"       # round-robin | gauntlet | balanced
seats = 2                    # players per game, 2 to 6
deals = 20                   # deals per lineup; each is played in every rotation
# seed = 1                   # the schedule, every deal and seating follow from it;
                             # left out, a secret one is drawn, kept and shown
output = "runs/{name}"
# jobs = 2                   # worker processes (default: one per CPU; --jobs overrides)

[rules]
variants = ["play_out"]      # keep play_out: every place is played out (RULES §9.1)

[time]                       # seconds; the names of 'referee play' are in brackets
startup = 10.0               # start and hello              (--startup)
per_decision = 1.0           # one decision                 (--move-time)
bank = 10.0                  # extra time per game          (--bank)
# game = 60.0                # each seat's game clock: all its thinking time in a
                             # game; out of it, it loses on time (--game-time)

[faults]
policy = "substitute"        # or "forfeit"                 (--faults)
strike_limit = 3             # faults before a forfeit      (--strikes)
stop_after = 3               # stop a bot that crashes in each of its first N games

[[bots]]
name = "heuristic"
builtin = "heuristic"        # built-in bots: heuristic, lowest, random

[[bots]]
name = "lowest"
builtin = "lowest"

[[bots]]
name = "mybot"               # your bot: a command line, as for 'referee play'
command = "example:python-heuristic"   # e.g. "python3 mybot.py", "zmq:node bot.js"
# cwd = "bots/mybot"         # its working directory
# memory_mb = 1024           # its memory limit (its whole process tree, sandboxed)
# sandbox = "off"            # only for a bot you trust: no sandbox
# env = {{ LEVEL = "3" }}
'''


@tournament.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--force", is_flag=True, help="Overwrite FILE if it exists.")
def init(file: str, force: bool) -> None:
    """Write a commented starter tournament file FILE, ready to run.

    \b
    Examples:
      referee tournament init my.toml
      referee tournament run my.toml
    """
    path = Path(file)
    if path.exists() and not force:
        _fail(f"{file} exists already: choose another name, or give --force to overwrite it")
    name = path.stem if path.stem.replace("-", "").replace("_", "").isalnum() else "tournament"
    text = STARTER.format(file=file, name=name)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        _fail(f"cannot write {file}: {e.strerror or e}")
    try:
        load_config(path)  # what we wrote must be a valid tournament
    except TournamentConfigError as e:  # pragma: no cover - a bug in STARTER
        _fail(f"the starter file does not load: {e}")
    click.echo(f"wrote {file}: edit the [[bots]], then run 'referee tournament run {file}'")


@tournament.command()
@click.argument("where", type=click.Path(exists=True))
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="plain", show_default=True,
              help="plain: tables for a terminal; markdown: for a README or an issue; "
                   "csv and json: every figure, for a program.")
@click.option("--wide", is_flag=True, help="Every column (default: what fits the terminal, "
              "fault columns only for faults that happened).")
@click.option("--faults", "faults_view", is_flag=True,
              help="Instead: the faults by the worker (machine and process) that played "
                   "the games, to tell a sick machine from a faulty bot.")
@click.option("--scores", type=click.Choice(SCORE_KINDS), default="adjusted", show_default=True,
              help="Rank by the luck-adjusted score (the share of opponents beaten less the "
                   "luck of the cards drawn and turned: unbiased, less variance) or by the "
                   "raw average place; the rating is fitted to the same scores (adjusted "
                   "shares, or finishing orders); the raw figures are shown either way.")
def standings(where: str, fmt: str, wide: bool, faults_view: bool, scores: str) -> None:
    """Standings of the tournament in the folder WHERE (or of the configuration file
    WHERE); works while the tournament runs.

    \b
    Examples:
      referee tournament standings runs/demo
      referee tournament standings tournaments/demo.toml --format markdown
      referee tournament standings runs/demo --format json | jq '.standings[0]'

    The columns are explained in tournaments/README.md ("Standings").
    """
    path = Path(where)
    out = load_config(path).output_dir if path.is_file() else path
    if faults_view:
        store = Store.open_existing(out)
        try:
            click.echo(render_by_worker(by_worker(store.outcomes()), fmt))
        finally:
            store.close()
        return
    click.echo(render_standings(standings_of(out, scores), fmt, wide))


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
                return Store.create_or_resume(out, TournamentSettings.of(cfg), cfg.name, len(games),
                                              schedule_digest(games),
                                              meta={"seed_source": source})

            def schedule_of() -> dict[int, int]:
                return {g.index: g.deal for g in games}

        before = None
        with contextlib.suppress(StorageError):
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
    """List the games the configuration CONFIG schedules, without playing them.

    \b
    Examples:
      referee tournament schedule tournaments/demo.toml
      referee tournament schedule my.toml --json | wc -l
    """
    cfg = load_config(config)
    given = cfg.seed is not None
    ran = Store.stored_config(cfg.output_dir) is not None
    cfg, _ = with_seed(cfg, cfg.output_dir)
    _warn(cfg)
    if not given and ran:
        click.echo(f"note: the configuration has no seed: these are the deals of the "
                   f"tournament in {cfg.output_dir} (seed {cfg.seed}, drawn when it first ran)",
                   err=True)
    elif not given:
        click.echo(f"note: the configuration has no seed and has not run: the run will draw "
                   f"a secret seed of its own, so it will NOT play these deals (listed under "
                   f"seed {cfg.seed}, drawn for this listing); add 'seed = {cfg.seed}' to "
                   "[tournament] to play exactly these", err=True)
    games = schedule(cfg)
    if as_json:
        for g in games:
            click.echo(json.dumps(g.to_dict()))
        return
    rows = [(g.game_id, g.deal, *g.seats) for g in games]
    click.echo(tabulate(rows, headers=["game", "deal", *(f"seat {i}" for i in range(cfg.seats))],
                        tablefmt="simple", disable_numparse=True))
    deals = len({g.deal for g in games})
    click.echo(f"\n{len(games)} games: {deals} deals, {len(games) // max(deals, 1)} seatings "
               f"per deal, {cfg.seats} seats; bots: {', '.join(cfg.bot_names)}")

