"""Scout, then replay in a new version (issue 26, item 1): version 1 writes the cards
it is dealt to its stderr, its author reads them back with ``submit --status --game``,
and version 2 (or a colluding author's bot) carries them, to recognise its decks.
Against a real league, sandboxed: no deck comes round again to anyone who could have
seen it, and no game id links the new games to the old."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from referee.league.remote import status_text
from referee.league.run import play_pending, submit
from tests.league.leaguehelpers import EXAMPLE_BOTS, make_league

BOT = r'''
import json, os, sys
import updown_bot

KNOWN = json.load(open("known.json")) if os.path.exists("known.json") else None

class Scout(updown_bot.Bot):
    def on_new_game(self, m):
        self.game, self.told = m["game_id"], False

    def decide(self, obs, legal):
        if not self.told and obs.get("phase") == "setup":
            self.told = True
            dealt = sorted(obs["dealt"])
            if KNOWN is None:  # version 1: scout
                print("SCOUT " + json.dumps({"game": self.game, "dealt": dealt}),
                      file=sys.stderr, flush=True)
            else:  # version 2 / a colluder: which deck is this?
                hit = any(sorted(k) == dealt for k in KNOWN["dealt"])
                print(f"GUESS {'hit' if hit else 'miss'} {self.game} "
                      f"{self.game in KNOWN['games']}", file=sys.stderr, flush=True)
        return 0

sys.exit(updown_bot.run(Scout()))
'''


def folder(where: Path, known: dict[str, list[object]] | None = None) -> Path:
    where.mkdir(parents=True)
    shutil.copy(EXAMPLE_BOTS / "updown_bot.py", where / "updown_bot.py")
    (where / "bot.py").write_text(BOT)
    if known is not None:
        (where / "known.json").write_text(json.dumps(known))
    return where


def no_check(*args: object) -> tuple[bool, str]:
    return True, "(the check is not what this test is about)"


def own_games(league: Path, name: str) -> list[str]:
    text = status_text(league, name)
    return re.findall(r"^  (g[0-9a-f]{12}) ", text, flags=re.M)


def stderr_lines(league: Path, name: str, game: str, mark: str) -> list[str]:
    text = status_text(league, name, game)
    return [line for line in text.splitlines() if line.startswith(mark)]


@pytest.mark.slow
@pytest.mark.usefixtures("need_sandbox")
def test_a_scouted_deck_never_comes_round_again(tmp_path: Path) -> None:
    league = make_league(tmp_path / "l", seats=[2], deals=2, seed=21)
    assert submit(league, "bob", EXAMPLE_BOTS, ["python3", "random_bot.py", "--seed", "1"],
                  checker=no_check).accepted
    assert submit(league, "scout", folder(tmp_path / "v1"), ["python3", "bot.py"],
                  checker=no_check).accepted
    play_pending(league, jobs=1, progress=False)

    # The author reads back what version 1 saw, through submit --status --game.
    known: dict[str, list[object]] = {"dealt": [], "games": []}
    for gid in own_games(league, "scout"):
        for line in stderr_lines(league, "scout", gid, "SCOUT "):
            seen = json.loads(line[len("SCOUT "):])
            known["dealt"].append(seen["dealt"])
            known["games"].append(seen["game"])
    assert len(known["dealt"]) == 4  # 2 deals x 2 seatings: the scouting worked
    # (within one lineup, a deal is played in both seatings: duplicate)
    assert len({json.dumps(d) for d in known["dealt"]}) <= 4

    # Version 2 carries it; so does a colluding author's bot.
    replayer = folder(tmp_path / "v2", known)
    assert submit(league, "scout", replayer, ["python3", "bot.py"], checker=no_check).accepted
    assert submit(league, "mallory", replayer, ["python3", "bot.py"], author="mallory",
                  checker=no_check).accepted
    play_pending(league, jobs=1, progress=False)

    guesses = []
    for name in ("scout", "mallory"):
        for gid in own_games(league, name):
            guesses += stderr_lines(league, name, gid, "GUESS ")
    # scout@2 vs bob, scout@2 vs mallory, mallory vs bob: 3 lineups x 2 deals x 2 seatings,
    # the scout-mallory games seen by both
    assert len(guesses) == 16
    assert not [g for g in guesses if g.startswith("GUESS hit")]  # no deck came round
    assert not [g for g in guesses if g.endswith(" True")]  # no game id either
