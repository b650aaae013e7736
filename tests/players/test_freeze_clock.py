"""The referee's time to thaw and freeze a bot frozen between its turns is never
charged to it: here each thaw and each freeze takes 5 s of a fake clock, the bot
answers at once, and its 3 s game clock is charged nothing."""

from __future__ import annotations

from referee.game import GameConfig
from referee.play.runner import TimeControl, run_game
from referee.players.external import ExternalPlayer
from tests.players.test_remote_memory import ScriptedBot, first


class SlowFreezer:
    """A bot's process as ``ExternalPlayer`` freezes it, each step taking 5 s."""

    def __init__(self, now: list[float]) -> None:
        self.now = now
        self.calls: list[bool] = []

    def freeze(self, frozen: bool) -> None:
        self.now[0] += 5.0
        self.calls.append(frozen)


def test_thawing_and_freezing_are_never_charged_to_the_bot() -> None:
    now = [0.0]

    def clock() -> float:
        return now[0]

    tc = TimeControl(startup=1.0, per_decision=1.0, bank=0.0, game=3.0)
    players = [ExternalPlayer(f"b{i}", ScriptedBot(first).launch, time_control=tc, clock=clock)
               for i in range(2)]
    freezers = [SlowFreezer(now) for _ in players]
    for p, f in zip(players, freezers, strict=True):
        p.connect()
        p._frozen = f  # type: ignore[assignment]  # a memory bot has no process to freeze
    rec = run_game(GameConfig(players=2), 1, players, time_control=tc, clock=clock)
    for p in players:
        p.close()
    assert rec.faults == [] and rec.result is not None and rec.result.how != "forfeits"
    assert {d["ms"] for d in rec.decisions} == {0.0}  # charged nothing of the 5 s steps
    for seat, f in enumerate(freezers):
        asked = sum(1 for d in rec.decisions if d["seat"] == seat)
        # Frozen after new_game; thawed for each request, frozen once it is answered;
        # thawed while game_over is written, then frozen until its next turn.
        assert f.calls == [True] + [False, True] * asked + [False, True], seat
