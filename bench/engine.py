"""Rules-engine speed: random-vs-random games played in-process.

Each decision is chosen uniformly from the seat's full legal list, exactly as a
uniformly random bot would.  Prints games/s and decisions/s for 2, 4 and 6 players
under the default rules and under ``play_out``.

    .venv/bin/python bench/engine.py                 # default sizes
    .venv/bin/python bench/engine.py --games 2000 --repeat 5 --cpu 0

Target (issue 2): at least 800 complete random 2-player games/s (default rules) on
one core.  The machine is shared and noisy, so the best of ``--repeat`` runs is
reported (the minimum time is the least disturbed one), beside the median.

``--oracle`` (issue 24) also plays the same random 2-player games on the independent
oracle of the rules (``tests/oracle/rules.py``, written from the rules text alone for
clarity, not speed), interleaved with the engine in one run: each round plays a batch
on the engine, then the same batch on the oracle (the same deck orders, first players
and choices: both list the legal decisions in the same order, which the differential
tests check), and prints both games/s and the ratio.  Target: the engine >= 5x the
oracle.

    .venv/bin/python bench/engine.py --oracle --games 200 --repeat 7
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.game import Game, GameConfig, parse_deck  # noqa: E402
from referee.game.state import OVER  # noqa: E402
from tests.oracle import rules as oracle  # noqa: E402


def play(config: GameConfig, games: int, seed: int) -> tuple[float, int]:
    """Play ``games`` random games; (seconds, decisions)."""
    return _random_play((Game(config, seed=seed * 1_000_003 + i) for i in range(games)),
                        random.Random(seed).random)


def _random_play(games: Iterable[Game], rnd: Callable[[], float]) -> tuple[float, int]:
    """Play each of ``games`` (made as they are needed, inside the timing) to its end
    with uniformly random choices drawn from ``rnd``; (seconds, decisions)."""
    decisions = 0
    start = time.perf_counter()
    for game in games:
        legal = game.legal
        apply = game.apply
        to_decide = game.to_decide
        while game.phase != OVER:
            for seat in to_decide():
                options = legal(seat)
                apply(seat, options[int(rnd() * len(options))])
                decisions += 1
    return time.perf_counter() - start, decisions


def oracle_games(players: int, games: int, seed: int) -> list[tuple[list[str], int]]:
    """The deck orders and first players of ``games`` games (drawn outside the timing)."""
    rng = random.Random(seed)
    out = []
    for _ in range(games):
        order = oracle.build_deck()
        rng.shuffle(order)
        out.append((order, rng.randrange(players)))
    return out


def play_engine(
    config: GameConfig, deals: list[tuple[list[str], int]], seed: int
) -> tuple[float, int]:
    """The engine plays the given deals with uniformly random choices; (seconds,
    decisions)."""
    decks = [(parse_deck(order), first) for order, first in deals]
    return _random_play((Game(config, seed=0, deck=deck, first_player=first)
                         for deck, first in decks), random.Random(seed).random)


def play_oracle(
    config: oracle.Config, deals: list[tuple[list[str], int]], seed: int
) -> tuple[float, int]:
    """The oracle plays the same deals with the same random choices; (seconds,
    decisions)."""
    rnd = random.Random(seed).random
    decisions = 0
    start = time.perf_counter()
    for order, first in deals:
        game = oracle.Game(config, order, first)
        while game.phase != "over":
            for seat in game.to_decide():
                options = game.legal(seat)
                game.apply(seat, options[int(rnd() * len(options))])
                decisions += 1
    return time.perf_counter() - start, decisions


def versus_oracle(games: int, repeat: int) -> None:
    """Engine vs oracle, 2 players, default rules: interleaved rounds, one run."""
    deals = oracle_games(2, games, seed=7)
    engine_config = GameConfig(players=2)
    oracle_config = oracle.Config(players=2)
    engine_rates, oracle_rates, ratios = [], [], []
    for r in range(repeat):
        e, e_decisions = play_engine(engine_config, deals, seed=r)
        o, o_decisions = play_oracle(oracle_config, deals, seed=r)
        if e_decisions != o_decisions:
            raise SystemExit(f"round {r}: not the same games ({e_decisions} decisions on the "
                             f"engine, {o_decisions} on the oracle): see tests/oracle")
        engine_rates.append(games / e)
        oracle_rates.append(games / o)
        ratios.append(o / e)
    print(f"engine vs oracle, 2 players, default rules, {games} games x {repeat} rounds "
          f"(interleaved, the same games on both: {e_decisions} decisions a round)")
    print(f"{'':<8} {'games/s':>9} {'(median)':>9}")
    print(f"{'engine':<8} {max(engine_rates):>9.0f} {statistics.median(engine_rates):>9.0f}")
    print(f"{'oracle':<8} {max(oracle_rates):>9.0f} {statistics.median(oracle_rates):>9.0f}")
    print(f"ratio engine/oracle: median {statistics.median(ratios):.2f}x "
          f"(rounds: {min(ratios):.2f}x .. {max(ratios):.2f}x); target >= 5x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=1000, help="games per run (default 1000)")
    ap.add_argument("--repeat", type=int, default=5, help="runs per row; best reported (default 5)")
    ap.add_argument("--cpu", type=int, default=None, help="pin to this CPU")
    ap.add_argument("--players", type=int, nargs="*", default=[2, 4, 6])
    ap.add_argument("--oracle", action="store_true",
                    help="only the engine vs the independent oracle (issue 24)")
    args = ap.parse_args()
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})
    if args.oracle:
        versus_oracle(args.games, args.repeat)
        return

    print(f"Python {sys.version.split()[0]}, {args.games} games x {args.repeat} runs per row")
    print(f"{'rules':<10} {'players':>7} {'games/s':>9} {'(median)':>9} {'decisions/s':>12} "
          f"{'dec/game':>9}")
    for variants in ((), ("play_out",)):
        for players in args.players:
            config = GameConfig(players=players, variants=frozenset(variants))
            rates = []
            decisions = 0
            for r in range(args.repeat):
                seconds, decisions = play(config, args.games, seed=1)
                rates.append((args.games / seconds, decisions / seconds))
                del r
            best = max(rates)
            median = statistics.median(g for g, _ in rates)
            name = "+".join(variants) or "default"
            print(f"{name:<10} {players:>7} {best[0]:>9.0f} {median:>9.0f} {best[1]:>12.0f} "
                  f"{decisions / args.games:>9.0f}")


if __name__ == "__main__":
    main()
