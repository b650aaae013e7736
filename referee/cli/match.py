"""The ``referee match`` command: a thin click layer over ``referee.tournament.match``.

Parses (bot specs as ``referee play`` takes them, or the bots of a tournament file
by name), calls ``run_match`` and prints the verdict.  Every mistake is one
``Error: ...`` line and exit status 1 (README, "Exit status"), never a traceback.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from pathlib import Path
from typing import Any

import click

from ..game import GameConfig
from ..game.cards import DECKS
from ..game.seeds import MAX_SEED
from ..play.runner import FaultPolicy, TimeControl
from ..players.botspec import NAMING, BotSpec, parse_specs
from ..players.factory import hello_names
from ..players.sandbox import MODES as SANDBOX_MODES
from ..players.sandbox import SandboxConfig, SandboxError, resolve
from ..stats.sprt import Sprt
from ..tournament.config import RemoteSettings, TournamentConfig, load_config
from ..tournament.driver import choose_executor, entered
from ..tournament.match import (
    DEFAULT_MAX_SETS,
    MATCH_SEATINGS,
    MatchConfig,
    describe,
    run_match,
)
from ..tournament.run import sandbox_of
from .kit import Command, UserError, running
from .options import executor_options, variant_names


class MatchCliError(UserError):
    """A mistake on the command line: 'Error: ...', exit status 1."""

    def __init__(self, message: str) -> None:
        super().__init__(message, 1)


class _MatchCommand(Command):
    """``referee match``: its mistakes (``RefereeError``) end as every command's."""


MATCH_HELP = """Is NEW better than OLD?  An A/B test of two bots on duplicate deals.

\b
NEW and OLD are bot specs as 'referee play' takes them (heuristic,
"python3 mybot.py", zmq:..., NAME=SPEC), or with --config the names of
bots of that tournament file.  At 2 seats without --field they play each
other, both seat orders of every deal.  With --field BOT (repeatable) NEW
and OLD each play the same seat against the same field bots, on the same
cards, in every seating of the deal.  All the games of one deal are a
duplicate set, the unit of the test.

\b
--sprt elo0=0,elo1=10,alpha=0.05,beta=0.05 (the default) stops as soon as
the evidence decides: H1 (NEW is elo1 better) or H0 (it is not better than
elo0).  --games N plays N games (rounded up to whole sets) and prints the
difference with its 95 % interval and the LOS.  Results go to --output
(default runs/match-NEW-vs-OLD); the same command again resumes.
"""


def _variants(values: tuple[str, ...]) -> list[str]:
    try:
        return variant_names(values)
    except ValueError as e:
        raise MatchCliError(str(e)) from None


def _tournament_bot(spec: BotSpec) -> BotSpec:
    """A command-line bot spec as a tournament's bot: a built-in bot or a command."""
    if spec.builtin or spec.external:
        return spec
    raise MatchCliError(f"bot {spec.text!r}: a match cannot seat a {spec.kind} bot from the "
                        "command line; put it in a tournament file and use --config FILE")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "bot"


@click.command("match", cls=_MatchCommand, help=MATCH_HELP,
               context_settings={"max_content_width": 100})
@click.argument("new")
@click.argument("old")
@click.option("--field", "field_bots", multiple=True, metavar="BOT",
              help="A bot of the field NEW and OLD each play against (repeatable).")
@click.option("--seats", "-k", type=click.IntRange(2, 6), default=None,
              help="Players at the table (default 2, or the --config file's).")
@click.option("--sprt", "sprt_text", default=None, metavar="elo0=..,elo1=..,alpha=..,beta=..",
              help="The sequential test (default elo0=0,elo1=10,alpha=0.05,beta=0.05).")
@click.option("--games", "-n", type=click.IntRange(min=1), default=None,
              help="Play this many games (whole sets) instead of an SPRT.")
@click.option("--max-sets", type=click.IntRange(min=1), default=DEFAULT_MAX_SETS,
              show_default=True, help="Give up an undecided SPRT after this many sets.")
@click.option("--seating", type=click.Choice(MATCH_SEATINGS), default=None,
              help="Seatings of each deal (default rotate, or the --config file's).")
@click.option("--seed", type=click.IntRange(0, MAX_SEED), default=None,
              help="Seed of the deals (default 1, or the --config file's).")
@click.option("-V", "--variant", "variant_opts", multiple=True, metavar="NAME",
              help="A rules variant (repeatable; default play_out).")
@click.option("--colours", "--colors", "colours", type=click.IntRange(1, 7), default=None)
@click.option("--deck", "deck_name", default=None, metavar="NAME")
@click.option("--turn-limit", type=click.IntRange(min=1), default=None)
@click.option("--startup", type=click.FloatRange(min=0), default=None,
              help="Seconds to start and say hello (default 10).")
@click.option("--move-time", "--per-decision", "move_time", type=click.FloatRange(min=0),
              default=None, help="Seconds per decision (default 1).")
@click.option("--bank", type=click.FloatRange(min=0), default=None,
              help="Extra seconds per game (default 10).")
@click.option("--game-time", type=click.FloatRange(min=0, min_open=True), default=None,
              metavar="S", help="Each seat's game clock: seconds of thinking time for the "
                               "whole game; a bot whose clock runs out loses on time, a "
                               "forfeit (RULES §5.4). Default: none, or the --config file's.")
@click.option("--faults", "fault_mode", type=click.Choice(["substitute", "forfeit"]),
              default=None, help="What a fault costs (default substitute).")
@click.option("--strikes", type=click.IntRange(min=0), default=None,
              help="Faults before a forfeit with --faults substitute (default 3).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Worker processes (default one per CPU).")
@click.option("--output", "-o", type=click.Path(file_okay=False), default=None,
              help="Results folder (default runs/match-NEW-vs-OLD).")
@click.option("--config", "config_file", type=click.Path(dir_okay=False), default=None,
              help="Take bots, rules, time limits, faults, seed from a tournament file.")
@executor_options("the --config file's executor, else process")
@click.option("--sandbox", "sandbox_mode", type=click.Choice(SANDBOX_MODES), default=None,
              help="Run the external bots in the bubblewrap sandbox: auto (where it works, "
                   "else with a warning), on, off (default: the --config file's, else auto).")
@click.option("--scores", type=click.Choice(["adjusted", "raw"]), default="adjusted",
              show_default=True,
              help="The set scores the test reads: luck-adjusted (each game's shares less "
                   "the luck of the cards drawn and turned; unbiased, less variance) or raw.")
@click.option("--names", "naming", type=click.Choice(NAMING), default="spec", show_default=True,
              help="How NEW, OLD and the field's command-line bots are named: spec (NAME=, "
                   "else the program's name) or hello (the name each gives in its hello, as "
                   "in 'referee play --names hello'); a --config file's bots keep theirs.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON only.")
@click.option("--quiet", "-q", is_flag=True, help="No progress line.")
def match(new: str, old: str, field_bots: tuple[str, ...], seats: int | None,
          sprt_text: str | None, games: int | None, max_sets: int, seating: str | None,
          seed: int | None, variant_opts: tuple[str, ...], colours: int | None,
          deck_name: str | None, turn_limit: int | None, startup: float | None,
          move_time: float | None, bank: float | None, game_time: float | None,
          fault_mode: str | None,
          strikes: int | None, jobs: int | None, output: str | None, config_file: str | None,
          executor_kind: str | None, scheduler: str | None, concurrency: int | None,
          sandbox_mode: str | None, scores: str, naming: str, as_json: bool,
          quiet: bool) -> None:
    if sprt_text is not None and games is not None:
        raise MatchCliError("give --sprt or --games, not both: an SPRT decides when to stop")
    try:
        test = None if games is not None else Sprt.parse(sprt_text or "")
    except ValueError as e:
        raise MatchCliError(f"--sprt: {e}") from None
    mc = _config(new, old, field_bots, seats, test, games, max_sets, seating, seed,
                 variant_opts, colours, deck_name, turn_limit, startup, move_time, bank,
                 fault_mode, strikes, jobs, output, config_file,
                 naming=naming, sandbox_mode=sandbox_mode, game_time=game_time)
    mc = dataclasses.replace(mc, scores="raw" if scores == "raw" else "adjusted")
    t = mc.tournament
    out = t.output_dir
    sandbox = sandbox_of(t, sandbox_mode)
    for w in sandbox.warnings:
        click.echo(w, err=True)
    executor = choose_executor(executor_kind, scheduler, jobs or t.jobs, default=t.executor,
                               default_scheduler=t.scheduler, ship=t.ship_bots,
                               concurrency=concurrency)
    with running(f"the finished sets are saved in {out}"), entered(executor):
        result = run_match(mc, output_dir=out, jobs=jobs, quiet=quiet or as_json,
                           sandbox=sandbox, executor=executor)
    if as_json:
        click.echo(json.dumps({"new": mc.new, "old": mc.old, "field": list(mc.field),
                               "output": str(out), "resumed_sets": result.already_done,
                               **result.summary.to_json()}, indent=2))
    else:
        if result.already_done and not quiet:
            click.echo(f"resumed: {result.already_done} sets were already played", err=True)
        click.echo("\n".join(describe(result)))
        if not quiet:
            click.echo(f"\nresults: {out}", err=True)
    if result.errors:
        click.echo(f"Error: {len(result.errors)} games could not be played (first: "
                   f"{result.errors[0]}); run again to retry them", err=True)
        sys.exit(1)


def _hello_named(bots: list[BotSpec], kept: set[str], base: TournamentConfig | None,
                 sandbox_mode: str | None) -> list[BotSpec]:
    """``--names hello``: the command line's bots named from their hellos, each
    started once for it in the sandbox the match's games use (a --config file's bots
    keep the names the file gives them)."""
    sb = base.sandbox if base else SandboxConfig()
    try:
        sandbox = resolve(dataclasses.replace(sb, mode=sandbox_mode) if sandbox_mode else sb)
    except SandboxError as e:
        raise MatchCliError(str(e)) from None
    eligible = [dataclasses.replace(b, named=True) if b.name in kept else b for b in bots]
    names = hello_names(eligible, time_control=base.time if base else TimeControl(),
                        sandbox=sandbox, base_dir=base.base_dir if base else None)
    return [dataclasses.replace(b, name=n) for b, n in zip(bots, names, strict=True)]


def _config(new: str, old: str, field_bots: tuple[str, ...], seats: int | None,
            test: Sprt | None, games: int | None, max_sets: int, seating: str | None,
            seed: int | None, variant_opts: tuple[str, ...], colours: int | None,
            deck_name: str | None, turn_limit: int | None, startup: float | None,
            move_time: float | None, bank: float | None, fault_mode: str | None,
            strikes: int | None, jobs: int | None, output: str | None,
            config_file: str | None, *, naming: str = "spec",
            sandbox_mode: str | None = None, game_time: float | None = None) -> MatchConfig:
    base: TournamentConfig | None = None
    if config_file:
        base = load_config(config_file)
    texts = [new, old, *field_bots]
    known = {b.name: b for b in base.bots} if base else {}
    to_parse = [t for t in texts if t not in known]
    parsed = iter(parse_specs(to_parse)) if to_parse else iter(())
    bots: list[BotSpec] = []
    for t in texts:
        b = known[t] if t in known else _tournament_bot(next(parsed))
        if any(b.name == o.name for o in bots):
            raise MatchCliError(f"two bots are named {b.name!r}: NEW, OLD and the field's bots "
                                "must be different entries (name a copy with NAME=SPEC)")
        bots.append(b)
    if naming == "hello":
        bots = _hello_named(bots, set(known), base, sandbox_mode)
    names = [b.name for b in bots]
    k = seats or (base.seats if base else 2)
    variants = _variants(variant_opts) if variant_opts else None
    game = GameConfig(
        players=k,
        variants=frozenset(variants if variants is not None
                           else (base.game.variants if base else {"play_out"})),
        colours=colours if colours is not None else (base.game.colours if base else None),
        deck=deck_name or (base.game.deck if base else "standard"),
        turn_limit=turn_limit or (base.game.turn_limit if base else 1000))
    if game.deck not in DECKS:
        raise MatchCliError(f"unknown deck {game.deck!r}: choose {' or '.join(DECKS)} (RULES §1)")
    bt = base.time if base else TimeControl()
    bf = base.faults if base else FaultPolicy()
    name = f"match-{_slug(names[0])}-vs-{_slug(names[1])}"
    if output:
        out_path = str(Path(output).resolve())
    elif base:
        out_path = str(Path(base.output_dir).parent / name)
    else:
        out_path = str(Path("runs", name).resolve())
    settings: dict[str, Any] = dict(
        bots=tuple(bots), name=name, seats=k,
        # A fixed default: the same command resumes the same match.
        seed=seed if seed is not None else (base.seed if base and base.seed is not None
                                            else 1),
        seating=seating or (base.seating if base and base.seating in MATCH_SEATINGS
                            else "rotate"),
        game=game,
        time=TimeControl(startup if startup is not None else bt.startup,
                         move_time if move_time is not None else bt.per_decision,
                         bank if bank is not None else bt.bank,
                         game_time if game_time is not None else bt.game),
        faults=FaultPolicy(fault_mode or bf.mode, strikes if strikes is not None
                           else bf.strike_limit),
        jobs=jobs or (base.jobs if base else None), output=out_path)
    # From a file, every other setting (remote bots' endpoint, base folder, and any
    # table added later) is the file's.
    tc = (dataclasses.replace(base, format="round-robin", challengers=(), **settings)
          if base else TournamentConfig(base_dir=".", remote=RemoteSettings(), **settings))
    return MatchConfig(tc, new=names[0], old=names[1], field=tuple(names[2:]), sprt=test,
                       games=games, max_sets=max_sets)
