"""Smoke tests: the package imports, a seeded game among built-in bots finishes."""

from __future__ import annotations

from referee.bots import make_bot
from referee.game import GameConfig
from referee.play.runner import InProcessPlayer, replay_check, run_game


def test_game_between_builtin_bots_finishes_and_replays() -> None:
    players = [InProcessPlayer(make_bot(n)) for n in ("heuristic", "random", "lowest")]
    rec = run_game(GameConfig(players=3), 11, players)
    assert sorted(rec.places)[0] == 1
    assert rec.result["how"] in ("winner", "turn_limit")
    ok, why = replay_check(rec.to_lines())
    assert ok, why


def test_forfeited_seats_are_last_in_places_and_in_points() -> None:
    from referee.play.runner import final_places, final_points

    # Seats 1 and 3 forfeited, 3 first: 3 ranks lowest, and scores most.
    assert final_places([1, 2, 3, 4], [3, 1]) == [1, 3, 2, 4]
    assert final_points([0, 0, 12, 5], [3, 1]) == [0, 13, 12, 14]
    assert final_points([7, 3], []) == [7, 3]
    # Its own points count towards the highest: never below what it holds.
    assert final_points([4, 30], [1]) == [4, 31]
