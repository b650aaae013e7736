#!/usr/bin/env python3
"""What do luck-adjusted scores cost?  CPU per game of ``referee.play.luck.game_luck``
with the shipped linear V, against the same V valuing each outcome of a draw on its
own (the estimator before ``ValueModel.drawn``), the same games, interleaved game by
game, at each table size; the two must give the same numbers to the last bit.

Games: lowest against random, play_out (the table of ``bench/unbiased.py``), from
``--seed``; the figure is CPU seconds (``time.process_time``), so the machine's load
changes it less than wall time, not at all the ratio's meaning.

    .venv/bin/python bench/luck_cost.py [--games 40] [--seats 2 4 6] [--seed 1]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from referee.bots import make_bot  # noqa: E402
from referee.game import Game, GameConfig  # noqa: E402
from referee.game.cards import parse_deck  # noqa: E402
from referee.game.features import Summary  # noqa: E402
from referee.game.seeds import derive_seed  # noqa: E402
from referee.play.luck import default_model, game_luck  # noqa: E402
from referee.play.runner import InProcessPlayer, run_game  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--seats", type=int, nargs="+", default=[2, 4, 6])
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    model = default_model()

    def each_on_its_own(game: Game, sums: Sequence[Summary]) -> Sequence[Sequence[float]]:
        return model(game, sums)  # no ``drawn``: every outcome valued by a call

    same = True
    for n in args.seats:
        config = GameConfig(players=n, variants=frozenset({"play_out"}))
        new: list[float] = []
        old: list[float] = []
        for g in range(args.games):
            rec = run_game(config, derive_seed(args.seed, "luck-cost", n, g),
                           [InProcessPlayer(make_bot(("lowest", "random")[s % 2]), f"b{s}")
                            for s in range(n)])
            job = (rec.config, rec.seed, parse_deck(rec.deck), rec.first_player,
                   [(int(d["seat"]), str(d["decision"])) for d in rec.decisions],
                   rec.ended.places, rec.ended.points)
            got = {}
            for fast in (g % 2 == 0, g % 2 == 1):  # alternate which runs first
                t = time.process_time()
                got[fast] = game_luck(*job, model if fast else each_on_its_own)
                (new if fast else old).append(time.process_time() - t)
            same &= ((got[True].corrections, got[True].events)
                     == (got[False].corrections, got[False].events))
        m_new, m_old = statistics.fmean(new), statistics.fmean(old)
        print(f"{n} seats, {args.games} games: {1000 * m_new:.1f} ms CPU a game, against "
              f"{1000 * m_old:.1f} ms valuing each outcome on its own: {m_new / m_old:.2f} x",
              flush=True)
    print("the same numbers to the last bit" if same else "DIFFERENT NUMBERS")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
