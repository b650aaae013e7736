"""Smoke tests: the package imports, a seeded game among built-in bots finishes."""

from __future__ import annotations

from referee.bots import make_bot
from referee.game import GameConfig
from referee.runner import InProcessPlayer, replay_check, run_game


def test_game_between_builtin_bots_finishes_and_replays() -> None:
    players = [InProcessPlayer(make_bot(n)) for n in ("heuristic", "random", "lowest")]
    rec = run_game(GameConfig(players=3), 11, players)
    assert sorted(rec.places)[0] == 1
    assert rec.result["how"] in ("winner", "turn_limit")
    ok, why = replay_check(rec.to_lines())
    assert ok, why
