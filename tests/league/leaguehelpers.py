"""Shared helpers of the league tests: league files, bot folders, a fake executor."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

from referee.league.config import load_league_config
from referee.league.run import new_league
from referee.league.schedule import name_of
from referee.play.runner import Fault
from referee.tournament.executor import Job, Report
from referee.tournament.outcome import GameOutcome
from referee.tournament.schedule import GameSpec
from tests.procs import scaled

EXAMPLE_BOTS = Path(__file__).resolve().parents[2] / "example_bots" / "python"

#: The test leagues' time limit per decision: 2 s, times the suite's time factor
#: (REFEREE_TEST_TIME_FACTOR, tests/procs.py), so that an oversubscribed machine does
#: not turn the bots' decisions into timeouts.
PER_DECISION = scaled(2.0)


def league_toml(path: Path, *, seats: Sequence[int] = (2,), deals: int = 1, seed: int = 5,
                extra: str = "") -> Path:
    path.write_text(f"[league]\nname = \"test\"\nseats = {list(seats)}\ndeals = {deals}\n"
                    f"seed = {seed}\n\n[time]\nper_decision = {PER_DECISION!r}\n{extra}")
    return path


def make_league(where: Path, **kw: object) -> Path:
    cfg = league_toml(where.parent / f"{where.name}.toml", **kw)  # type: ignore[arg-type]
    new_league(where, load_league_config(cfg), cfg.read_text())
    return where


def fake_bot(folder: Path, strength: int) -> Path:
    """A bot folder whose content decides how it plays under ``FakeExecutor``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "strength.txt").write_text(str(strength))
    return folder


class Interrupted(KeyboardInterrupt):
    pass


class FakeExecutor:
    """Plays each game at once, as deterministic bots would: the places are a pure
    function of the game (deal seed, who sits where) and of each bot's folder (its
    ``strength.txt``).  ``budget``: games to play before a KeyboardInterrupt (an
    interrupted run), None for no limit."""

    def __init__(self, budget: int | None = None) -> None:
        self.budget = budget
        self.played: list[GameSpec] = []

    def run(self, job: Job, games: Sequence[GameSpec], report: Callable[[Report], None]) -> None:
        for spec in games:
            if self.budget is not None:
                if self.budget <= 0:
                    raise Interrupted
                self.budget -= 1
            score, strengths = [], []
            for seat, entry in enumerate(spec.seats):
                cwd = job.config.bot(entry).cwd
                assert cwd is not None
                strength = int((Path(cwd) / "strength.txt").read_text())
                noise = hashlib.sha256(f"{spec.deal_seed}:{name_of(entry)}:{seat}:{strength}"
                                       .encode()).digest()[0]
                score.append(strength * 64 + noise)
                strengths.append(strength)
            order = sorted(range(len(spec.seats)), key=lambda s: -score[s])
            places = [0] * len(spec.seats)
            for place, s in enumerate(order):
                places[s] = place + 1
            points = [0 if p == 1 else score[s] % 37 for s, p in enumerate(places)]
            faults = tuple(Fault(seat=s, kind="timeout", turn=1, bot=e,
                                 detail="strength 0 is slow", action="substituted")
                           for s, e in enumerate(spec.seats) if strengths[s] == 0)
            self.played.append(spec)
            # A record on disk before the outcome is reported, as an executor writes
            # it (a resumed run forgets committed games whose record is missing).
            records = Path(job.output_dir) / job.records
            records.mkdir(parents=True, exist_ok=True)
            (records / f"{spec.game_id}.jsonl").write_text('{"type": "result"}\n')
            report(GameOutcome(index=spec.index, game_id=spec.game_id, deal=spec.deal,
                               deal_seed=spec.deal_seed, seats=spec.seats,
                               places=tuple(places), points=tuple(points),
                               how="turn_limit" if spec.deal % 2 else "played_out",
                               turns=10, faults=faults, record=f"games/{spec.game_id}.jsonl"))


TALKER = '''\
"""The example heuristic bot, saying on stderr which author it is at each game."""
import sys

import updown_bot
from heuristic_bot import HeuristicBot

WHO = sys.argv[1]


class Talker(HeuristicBot):
    def on_new_game(self, message):
        print(f"STDERR-OF-{WHO} in {message.get('game_id')} seat {message.get('seat')}",
              file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(updown_bot.run(Talker()))
'''


def talker_bot(folder: Path) -> Path:
    """A bot folder (``python3 talk_bot.py WHO``) that writes to stderr each game."""
    folder.mkdir(parents=True, exist_ok=True)
    for f in ("updown_bot.py", "heuristic_bot.py"):
        (folder / f).write_bytes((EXAMPLE_BOTS / f).read_bytes())
    (folder / "talk_bot.py").write_text(TALKER)
    return folder


def wait_for(what: str, condition: Callable[[], bool], timeout: float = 240.0) -> None:
    """Poll ``condition`` until it holds (a process elsewhere is making it true)."""
    import time

    deadline = time.monotonic() + scaled(timeout)
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def games_stored(league: Path) -> int:
    import sqlite3

    conn = sqlite3.connect(f"file:{league / 'league.sqlite'}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM games").fetchone()[0])
    finally:
        conn.close()
