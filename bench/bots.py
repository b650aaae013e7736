"""Strength of the in-process reference bots, on duplicate deals: every deal is played
twice, the second time with the seats swapped (at 4 seats: A B A B, then B A B A), so
that each bot holds each seat of each deal once.  Printed for each pairing at 2 and
4 seats: the games won by the first bot's seats (a shared first place counts as a
fraction), with a 95 % interval computed over deals (the two games of a deal are
not independent), and the first bot's time per decision (mean and worst; the
heuristic searches in the endgame, RULES-legal information only, ``search.py``).

At 4 seats the share is that of the games won by either of the first bot's two
seats: 50 % is an even match, as at 2 seats.

    .venv/bin/python bench/bots.py                    # 1,000 deals = 2,000 games each
    .venv/bin/python bench/bots.py --deals 250 --seats 2

Targets: the heuristic beats random clearly (issue 2), and it is the strongest
built-in bot: at least 55 % of the games against the plain ``lowest`` baseline, at 2
and at 4 seats, over 2,000 games (issue 16).  The exit status is 1 when a target is
missed.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.bots import make_bot  # noqa: E402
from referee.game import Decision, GameConfig  # noqa: E402
from referee.play.runner import DecisionRequest, InProcessPlayer, run_game  # noqa: E402

#: (bot, opponent, the bot's lowest acceptable share of the games, or None).
PAIRINGS = (("heuristic", "random", 0.70), ("heuristic", "lowest", 0.55),
            ("lowest", "random", None))


class Timed(InProcessPlayer):
    """An in-process player whose decisions are timed (``times``: seconds each)."""

    def __init__(self, name: str, times: list[float]) -> None:
        super().__init__(make_bot(name))
        self.times = times

    def decide(self, request: DecisionRequest) -> Decision | str:
        t = time.perf_counter()
        d = super().decide(request)
        self.times.append(time.perf_counter() - t)
        return d


def duel(a: str, b: str, deals: int, players: int = 2,
         times: list[float] | None = None) -> tuple[float, float, int]:
    """The share of the games won by ``a``'s seats over ``deals`` duplicate deals
    (2 * deals games), its standard error over deals, and the games played.
    ``times`` gets the seconds each of ``a``'s decisions took."""
    per_deal: list[float] = []
    config = GameConfig(players=players)
    spent: list[float] = [] if times is None else times
    for deal in range(deals):
        won = 0.0
        for swap in (False, True):
            names = [a, b] if not swap else [b, a]
            lineup = [names[s % 2] for s in range(players)]
            rec = run_game(config, deal, [Timed(n, spent) if n == a else
                                          InProcessPlayer(make_bot(n)) for n in lineup])
            winners = [s for s in range(players) if rec.places[s] == 1]
            won += sum(1 for s in winners if lineup[s] == a) / len(winners)
        per_deal.append(won / 2)
    p = sum(per_deal) / deals
    var = sum((x - p) ** 2 for x in per_deal) / max(1, deals - 1)
    return p, math.sqrt(var / deals), 2 * deals


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--deals", type=int, default=1000, help="deals per pairing (x2 games)")
    ap.add_argument("--seats", type=int, nargs="+", default=[2, 4], choices=range(2, 7))
    args = ap.parse_args()
    missed = []
    for players in args.seats:
        for a, b, target in PAIRINGS:
            t = time.perf_counter()
            times: list[float] = []
            p, se, n = duel(a, b, args.deals, players, times)
            verdict = ""
            if target is not None:
                ok = p >= target
                verdict = f"  target >= {100 * target:.0f} %: {'met' if ok else 'MISSED'}"
                if not ok:
                    missed.append(f"{a} vs {b} at {players} seats")
            print(f"{players} seats  {a:>9} vs {b:<9} {n:>6} games: {a} wins "
                  f"{100 * p:5.1f} % (± {196 * se:.1f} % at 95 %){verdict}  "
                  f"[{time.perf_counter() - t:.1f} s; {a} per decision: mean "
                  f"{1000 * sum(times) / max(1, len(times)):.2f} ms, worst "
                  f"{1000 * max(times, default=0.0):.1f} ms]", flush=True)
    if missed:
        print(f"targets missed: {', '.join(missed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
