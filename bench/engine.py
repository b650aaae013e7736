"""Rules-engine speed: random-vs-random games played in-process.

Each decision is chosen uniformly from the seat's full legal list, exactly as a
uniformly random bot would.  Prints games/s and decisions/s for 2, 4 and 6 players
under the default rules and under ``play_out``.

    .venv/bin/python bench/engine.py                 # default sizes
    .venv/bin/python bench/engine.py --games 2000 --repeat 5 --cpu 0

Target (issue 2): at least 800 complete random 2-player games/s (default rules) on
one core.  The machine is shared and noisy, so the best of ``--repeat`` runs is
reported (the minimum time is the least disturbed one), beside the median.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.game import Game, GameConfig  # noqa: E402
from referee.game.state import OVER  # noqa: E402


def play(config: GameConfig, games: int, seed: int) -> tuple[float, int]:
    """Play ``games`` random games; (seconds, decisions)."""
    rng = random.Random(seed)
    rnd = rng.random
    decisions = 0
    start = time.perf_counter()
    for i in range(games):
        game = Game(config, seed=seed * 1_000_003 + i)
        legal = game.legal
        apply = game.apply
        to_decide = game.to_decide
        while game.phase != OVER:
            for seat in to_decide():
                options = legal(seat)
                apply(seat, options[int(rnd() * len(options))])
                decisions += 1
    return time.perf_counter() - start, decisions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=1000, help="games per run (default 1000)")
    ap.add_argument("--repeat", type=int, default=5, help="runs per row; best reported (default 5)")
    ap.add_argument("--cpu", type=int, default=None, help="pin to this CPU")
    ap.add_argument("--players", type=int, nargs="*", default=[2, 4, 6])
    args = ap.parse_args()
    if args.cpu is not None:
        os.sched_setaffinity(0, {args.cpu})

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
