"""RULES §5.4: a game with forfeits is played out (a forfeit never pays), and a seat
out of its game clock forfeits on time (tests/play/test_game_clock.py has the rest);
either is recorded, re-runs identically, and counts in the standings."""

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
from referee.play.runner import InProcessPlayer, replay_check, run_game
from tests.procs import scaled

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
BOTS = REPO / "tests" / "bots"


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


def test_a_tournament_with_a_game_clock_charges_a_staller_a_forfeit(tmp_path: Path) -> None:
    # [time] game is each seat's game clock (RULES §5.4): the staller of issue 21
    # (tests/bots/attack_stall.py, sleeping while it is ahead) runs out of its clock
    # in both of its games against heuristic and forfeits them on time; the standings
    # count every game, and the tournament verifies.
    cfg = tmp_path / "t.toml"
    cfg.write_text(f"""
[tournament]
name = "clocked"
seats = 2
deals = 1
seed = 3
output = "out"
[time]
per_decision = {scaled(1.0)}
game = {scaled(1.0)}
[[bots]]
name = "staller"
command = ["{sys.executable}", "{BOTS / 'attack_stall.py'}", "over", "{scaled(0.4)}"]
[[bots]]
name = "heuristic"
builtin = "heuristic"
""")
    r = subprocess.run([sys.executable, "-m", "referee.cli.main", "tournament", "run", str(cfg),
                        "--format", "json", "-q", "--jobs", "1"],
                       capture_output=True, text=True, timeout=scaled(120), cwd=REPO)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["played"] == 2 and {s["games"] for s in data["standings"]} == {2}
    rows = {s["bot"]: s for s in data["standings"]}
    assert rows["staller"]["wins"] == 0 and rows["staller"]["forfeits"] == 2
    assert rows["heuristic"]["wins"] == 2 and rows["heuristic"]["forfeits"] == 0
    records = sorted((tmp_path / "out" / "games").glob("*.jsonl"))
    assert len(records) == 2
    for rec in records:
        rows_ = [json.loads(x) for x in rec.read_text().splitlines()]
        (fault,) = [x for x in rows_ if x["type"] == "fault"]
        assert fault["bot"] == "staller" and fault["kind"] == "timeout"
        assert fault["action"] == "forfeit"
        assert f"staller used its {scaled(1.0):.1f} s game clock: lost on time" in fault["detail"]
        assert rows_[-1]["how"] != "time_limit"
    v = subprocess.run([sys.executable, "-m", "referee.cli.main", "tournament", "verify",
                        str(tmp_path / "out")], capture_output=True, text=True, timeout=scaled(120),
                       cwd=REPO)
    assert v.returncode == 0, v.stdout + v.stderr
