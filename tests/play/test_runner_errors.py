"""Errors sorted by whose they are: a referee bug surfacing in a player's call
propagates; an in-process bot's own exception is that bot's crash."""

from __future__ import annotations

from typing import Any

import pytest

from referee.game import GameConfig
from referee.play.runner import DecisionRequest, run_game
from referee.protocol.errors import RefereeProtocolError


class Raising:
    def __init__(self, name: str, error: Exception) -> None:
        self.name = name
        self.error = error

    def start_game(self, game_id: str, seat: int, config: GameConfig, seed: int) -> None:
        pass

    def decide(self, request: DecisionRequest) -> Any:
        raise self.error

    def end_game(self, game_id: str, result: dict[str, Any]) -> None:
        pass


class First(Raising):
    def decide(self, request: DecisionRequest) -> Any:
        return request.legal[0]


def test_a_referee_bug_in_a_players_call_propagates() -> None:
    with pytest.raises(RefereeProtocolError, match="a session in the wrong state"):
        run_game(GameConfig(), 1, [Raising("a", RefereeProtocolError(
            "a session in the wrong state")), First("b", ValueError())])


def test_an_in_process_bots_own_bug_is_its_crash() -> None:
    rec = run_game(GameConfig(), 1, [Raising("a", ZeroDivisionError("oops")),
                                     First("b", ValueError())])
    assert [(f.seat, f.kind) for f in rec.faults] == [(0, "crash")]
    assert "raised ZeroDivisionError: oops" in rec.faults[0].detail
