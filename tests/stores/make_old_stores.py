"""Makes the stores in ``tests/stores/old/`` with an OLD referee: a tournament's, a
match's and a league's folder as that referee wrote them (its config column
without a ``kind``), so that the tests prove a newer referee still reads them.

Run it with the old referee's tree first on the path, e.g. for main at 0c2700f
(before the stored configuration kinds were typed)::

    git archive 0c2700f | tar -x -C /tmp/old
    PYTHONPATH=/tmp/old .venv/bin/python tests/stores/make_old_stores.py tests/stores/old

It imports ``referee`` and ``tests.league.leaguehelpers`` from whatever is first on
the path, so the files are what that version's code wrote (never edited by hand).
"""

from __future__ import annotations

import shutil
import sqlite3
import sys
from pathlib import Path

import referee
from referee.game import GameConfig
from referee.league.run import play_pending, submit
from referee.players.sandbox import SandboxConfig, resolve
from referee.stats.sprt import Sprt
from referee.tournament.config import BotSpec, TournamentConfig
from referee.tournament.executor import SerialExecutor
from referee.tournament.match import MatchConfig, run_match
from referee.tournament.run import run_tournament
from tests.league.leaguehelpers import FakeExecutor, fake_bot, make_league


def _compact(db: Path) -> None:
    """Fold the WAL into the file, so that one file is the whole store."""
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.close()
    for extra in ("-wal", "-shm"):
        Path(str(db) + extra).unlink(missing_ok=True)


def main(out: Path) -> None:
    print(f"referee from {Path(referee.__file__).parent}", file=sys.stderr)
    if out.exists():
        shutil.rmtree(out)
    off = resolve(SandboxConfig(mode="off"))
    bots = (BotSpec("alice", builtin="heuristic"), BotSpec("bob", builtin="random"),
            BotSpec("carol", builtin="lowest"))
    rules = GameConfig(players=2, variants=frozenset({"play_out"}))
    t = TournamentConfig(bots=bots, name="old tournament", seats=2, deals=1, seed=7,
                         game=rules, output=str(out / "tournament"))
    run_tournament(t, executor=SerialExecutor(), quiet=True, sandbox=off)
    _compact(out / "tournament" / "tournament.sqlite")

    m = TournamentConfig(bots=bots[:2], name="old match", seats=2, seed=3, game=rules,
                         output=str(out / "match"))
    run_match(MatchConfig(m, "alice", "bob", sprt=Sprt(0, 20), max_sets=3),
              executor=SerialExecutor(),
              quiet=True, sandbox=off, batch=4)
    _compact(out / "match" / "tournament.sqlite")

    league = make_league(out / "league", deals=2)
    (out / "league.toml").unlink()
    for name, strength in (("ann", 3), ("ben", 1)):
        submit(league, name, fake_bot(out / f"src-{name}", strength), ["python3", "bot.py"],
               sandbox=off, checker=lambda *a: (True, "skipped"))
        shutil.rmtree(out / f"src-{name}")
    play_pending(league, executor=FakeExecutor())
    _compact(league / "league.sqlite")
    for lock in out.glob("*/lock"):
        lock.unlink()


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
