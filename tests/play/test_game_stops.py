"""RULES §5.4: a game with forfeits is played out (a forfeit never pays), and a
game over its wall-clock limit is stopped (``time_limit``); either is recorded,
re-runs identically, and counts in the standings."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from referee.bots import make_bot
from referee.game import Decision, GameConfig
from referee.play.replay import parse_record, verify
from referee.play.runner import InProcessPlayer, TimeControl, replay_check, run_game
from tests.procs import scaled

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


class Breaks:
    """Raises at its first decision of the game: a crash, so a forfeit."""

    name = "breaks"

    def new_game(self, seed: int) -> None:
        pass

    def decide(self, obs: dict[str, Any], legal: Sequence[Decision]) -> Decision:
        raise RuntimeError("down")


class Counting:
    """Plays its first legal decision, counting them."""

    name = "counting"
    n = 0

    def new_game(self, seed: int) -> None:
        pass

    def decide(self, obs: dict[str, Any], legal: Sequence[Decision]) -> Decision:
        self.n += 1
        return legal[0]


def test_a_game_left_to_one_seat_by_forfeits_is_played_out() -> None:
    # RULES §5.4 (a forfeit never pays): the game goes on to its end, the referee
    # deciding for the forfeited seats, so the points of the seat left are its own.
    cfg = GameConfig(players=3, variants=frozenset({"play_out"}))
    alone = Counting()
    rec = run_game(cfg, 5, [InProcessPlayer(Breaks(), "a"), InProcessPlayer(Breaks(), "b"),
                            InProcessPlayer(alone, "c")])
    assert rec.forfeits == [0, 1] or rec.forfeits == [1, 0]
    assert rec.ended.how == "played_out"
    assert rec.places[2] == 1 and sorted(rec.places[:2]) == [2, 3]
    assert alone.n > 2  # played on to the end
    held = [f.held for f in rec.ended.faults if f.action == "forfeit"]
    assert all(h is not None for h in held)
    top = max([*rec.ended.game_points, *[h for h in held if h is not None]])
    assert sorted(rec.points[:2]) == [top + 1, top + 2]
    assert replay_check(rec.to_lines()) == (True, "")
    assert verify(parse_record(rec.to_lines())) == (True, "")


def test_a_two_player_game_with_a_forfeit_is_played_out() -> None:
    cfg = GameConfig(players=2)
    rec = run_game(cfg, 3, [InProcessPlayer(make_bot("heuristic", 1)),
                            InProcessPlayer(Breaks(), "b")])
    assert rec.ended.how == "winner" and rec.places == [1, 2]
    held = rec.ended.faults[0].held
    assert held is not None and held > 0
    assert rec.points[1] == max(*rec.ended.game_points, held) + 1
    assert verify(parse_record(rec.to_lines())) == (True, "")
    # a record whose result lies about what the forfeiter held does not verify
    lines = rec.to_lines()
    row = json.loads(lines[-1])
    row["points"][1] -= 1
    assert not verify(parse_record([*lines[:-1], json.dumps(row)]))[0]


def test_a_game_over_its_time_limit_is_stopped_and_replays() -> None:
    ticks = iter(range(10**6))
    cfg = GameConfig(players=4)
    rec = run_game(cfg, 9, [InProcessPlayer(make_bot("random", s)) for s in range(4)],
                   time_control=TimeControl(game=40.0), clock=lambda: float(next(ticks)))
    assert rec.ended.how == "time_limit"
    assert rec.ended.turns < 40
    assert len(rec.places) == 4 and min(rec.places) == 1
    assert rec.events[-1].startswith("end time_limit places ")
    assert verify(parse_record(rec.to_lines())) == (True, "")


def test_play_with_game_time_stops_the_game_and_says_how(tmp_path: Path) -> None:
    record = tmp_path / "g.jsonl"
    r = subprocess.run([sys.executable, "-m", "referee.cli.main", "play", "heuristic", "random",
                        "--seed", "3", "--game-time", "0.000001", "--json",
                        "--record", str(record)],
                       capture_output=True, text=True, timeout=scaled(60), cwd=REPO)
    assert r.returncode == 0, r.stderr
    game = json.loads(r.stdout)["games"][0]
    assert game["how"] == "time_limit"
    check = subprocess.run([sys.executable, "-m", "referee.cli.main", "replay", str(record)],
                           capture_output=True, text=True, timeout=scaled(60), cwd=REPO)
    assert check.returncode == 0, check.stderr
    assert "stopped at the game's time limit" in check.stdout
    assert "verified:" in check.stdout


def test_a_tournament_with_a_game_time_counts_the_stopped_games(tmp_path: Path) -> None:
    cfg = tmp_path / "t.toml"
    cfg.write_text("""
[tournament]
name = "timed"
seats = 2
deals = 2
output = "out"
[time]
game = 0.000001
[[bots]]
name = "heuristic"
builtin = "heuristic"
[[bots]]
name = "random"
builtin = "random"
""")
    r = subprocess.run([sys.executable, "-m", "referee.cli.main", "tournament", "run", str(cfg),
                        "--format", "json", "-q", "--jobs", "1"],
                       capture_output=True, text=True, timeout=scaled(120), cwd=REPO)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["played"] == 4 and {s["games"] for s in data["standings"]} == {4}
    for rec in (tmp_path / "out" / "games").glob("*.jsonl"):
        assert json.loads(rec.read_text().splitlines()[-1])["how"] == "time_limit"
    v = subprocess.run([sys.executable, "-m", "referee.cli.main", "tournament", "verify",
                        str(tmp_path / "out")], capture_output=True, text=True, timeout=scaled(120),
                       cwd=REPO)
    assert v.returncode == 0, v.stdout + v.stderr
