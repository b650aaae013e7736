#!/usr/bin/env python3
"""What do luck-adjusted scores cost?  CPU per game of ``referee.play.luck.game_luck``
with the shipped linear V, against the estimator of another revision (``--against``,
by default the one before ``ValueModel.drawn``), the same games, interleaved game by
game (which runs first alternates), at each table size; both must give the same
numbers to the last bit.

Games: lowest against random, play_out (the table of ``bench/unbiased.py``), from
``--seed``.  The figure is CPU seconds (``time.process_time``): the machine's load
changes it less than wall time.  The other revision's ``referee/play/luck.py`` (and
its model file) are read with ``git show`` and imported beside this checkout's
package, so only the estimator differs, not the engine it replays with.

    .venv/bin/python bench/luck_cost.py [--games 30] [--seats 2 4 6] [--seed 1]
                                        [--against REV]
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from referee.bots import make_bot  # noqa: E402
from referee.game import GameConfig  # noqa: E402
from referee.game.cards import parse_deck  # noqa: E402
from referee.game.seeds import derive_seed  # noqa: E402
from referee.play.luck import game_luck  # noqa: E402
from referee.play.runner import InProcessPlayer, run_game  # noqa: E402

#: The estimator before a draw's outcomes were valued at once.
BEFORE = "d0f3802"


def estimator_of(rev: str, where: Path) -> ModuleType:
    """``referee/play/luck.py`` as of ``rev``, importable on its own."""
    def show(path: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"], check=True,
                              capture_output=True, text=True).stdout

    text = re.sub(r"^from \.\.", "from referee.", show("referee/play/luck.py"), flags=re.M)
    text = re.sub(r"^from \.", "from referee.play.", text, flags=re.M)
    (where / "luck_model.json").write_text(show("referee/play/luck_model.json"))
    (where / "luck_before.py").write_text(text)
    spec = importlib.util.spec_from_file_location("luck_before", where / "luck_before.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["luck_before"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--games", type=int, default=30)
    ap.add_argument("--seats", type=int, nargs="+", default=[2, 4, 6])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--against", default=BEFORE, metavar="REV")
    args = ap.parse_args()
    same = True
    with tempfile.TemporaryDirectory() as tmp:
        before = estimator_of(args.against, Path(tmp))
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
                for now in (g % 2 == 0, g % 2 == 1):
                    t = time.process_time()
                    got[now] = (game_luck if now else before.game_luck)(*job)
                    (new if now else old).append(time.process_time() - t)
                same &= ((got[True].corrections, got[True].events)
                         == (got[False].corrections, got[False].events))
            m_new, m_old = statistics.fmean(new), statistics.fmean(old)
            print(f"{n} seats, {args.games} games: {1000 * m_new:.1f} ms CPU a game, against "
                  f"{1000 * m_old:.1f} ms at {args.against}: {m_new / m_old:.2f} x", flush=True)
    print("the same numbers to the last bit" if same else "DIFFERENT NUMBERS")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
