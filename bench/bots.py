"""Strength of the in-process reference bots: the heuristic against random (and
against the lowest-card baseline), in-process, each deal played twice with the seats
swapped.

    .venv/bin/python bench/bots.py --games 2000

Issue 2 asks that the heuristic beat random clearly over a few thousand games.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.bots import make_bot  # noqa: E402
from referee.game import GameConfig  # noqa: E402
from referee.runner import InProcessPlayer, run_game  # noqa: E402


def duel(a: str, b: str, deals: int, players: int = 2) -> tuple[float, float, int]:
    """Win rate of ``a`` over 2 * deals games (seats swapped on each deal), its
    standard error, and the games played."""
    wins = 0.0
    games = 0
    config = GameConfig(players=players)
    for deal in range(deals):
        for swap in (False, True):
            names = [a, b] if not swap else [b, a]
            lineup = [names[s % 2] for s in range(players)]
            rec = run_game(config, deal, [InProcessPlayer(make_bot(n)) for n in lineup])
            winners = [s for s in range(players) if rec.places[s] == 1]
            wins += sum(1 for s in winners if lineup[s] == a) / len(winners)
            games += 1
    p = wins / games
    return p, math.sqrt(p * (1 - p) / games), games


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--games", type=int, default=1500, help="deals per pairing (x2 games)")
    args = ap.parse_args()
    for a, b in (("heuristic", "random"), ("heuristic", "lowest"), ("lowest", "random")):
        t = time.perf_counter()
        p, se, n = duel(a, b, args.games)
        print(f"{a:>9} vs {b:<9} {n:>6} games: {a} wins {100 * p:5.1f} % "
              f"(± {196 * se:.1f} % at 95 %)  [{time.perf_counter() - t:.1f} s]")


if __name__ == "__main__":
    main()
