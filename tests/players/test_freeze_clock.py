"""The referee's time to thaw and freeze a bot frozen between its turns is never
charged to it: here each thaw and each freeze takes 5 s of a fake clock, the bot
answers at once, and its 3 s game clock is charged nothing.  Waiting until it is
frozen (every process of it stopped) is its own time: charged, as its reply's tail;
a bot that uses more than ``FREEZE_LIMIT`` of CPU before it is frozen is a fault
naming it, and ended; one slow to freeze for want of a CPU (using none) is not."""

from __future__ import annotations

from referee.game import GameConfig
from referee.play.runner import TimeControl, run_game
from referee.players.external import FREEZE_LIMIT, FREEZE_WALL_LIMIT, ExternalPlayer
from tests.players.test_remote_memory import ScriptedBot, first


class SlowFreezer:
    """A bot's process as ``ExternalPlayer`` freezes it, each step taking 5 s."""

    def __init__(self, now: list[float], freezing: float = 0.0, freezes: int = -1) -> None:
        self.now = now
        self.calls: list[bool] = []
        self.freezing = freezing  # seconds until frozen, once asked (using no CPU)
        self.freezes = freezes  # how many freezes complete (-1: all; then: busy)
        self.waits: list[tuple[float, float]] = []

    def freeze(self, frozen: bool) -> None:
        self.now[0] += 5.0
        self.calls.append(frozen)

    def wait_frozen(self, cpu_limit: float, wall_limit: float) -> float | None:
        self.waits.append((cpu_limit, wall_limit))
        if 0 <= self.freezes < len(self.waits):  # busy in the kernel: using CPU
            self.now[0] += cpu_limit + 0.001
            return cpu_limit + 0.001
        self.now[0] += min(self.freezing, wall_limit)
        return None if self.freezing <= wall_limit else 0.0


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


def game(freezers: list[SlowFreezer], now: list[float], tc: TimeControl) -> tuple[
        list[ExternalPlayer], object]:
    def clock() -> float:
        return now[0]

    players = [ExternalPlayer(f"b{i}", ScriptedBot(first).launch, time_control=tc, clock=clock)
               for i in range(2)]
    for p, f in zip(players, freezers, strict=True):
        p.connect()
        p._frozen = f  # type: ignore[assignment]
    try:
        rec = run_game(GameConfig(players=2), 1, players, time_control=tc, clock=clock)
    finally:
        for p in players:
            p.close()
    return players, rec


def test_the_wait_until_frozen_is_the_bots_own_time() -> None:
    """Each freeze of b0 takes 0.2 s to complete (its processes busy in the kernel):
    each of its decisions is charged 200 ms, b1's nothing; the referee waited, with
    the limit, before asking anyone else."""
    now = [0.0]
    tc = TimeControl(startup=1.0, per_decision=1.0, bank=0.0, game=100.0)
    freezers = [SlowFreezer(now, freezing=0.2), SlowFreezer(now)]
    _, rec = game(freezers, now, tc)
    assert rec.faults == [] and rec.result is not None  # type: ignore[attr-defined]
    ms = {s: {d["ms"] for d in rec.decisions if d["seat"] == s}  # type: ignore[attr-defined]
          for s in (0, 1)}
    assert ms == {0: {200.0}, 1: {0.0}}
    assert freezers[0].waits and set(freezers[0].waits) == {(FREEZE_LIMIT, FREEZE_WALL_LIMIT)}


def test_a_bot_slow_to_freeze_for_want_of_a_cpu_is_waited_for() -> None:
    """Each freeze of b0 takes 1.5 s of wall time -- far beyond ``FREEZE_LIMIT`` --
    while it uses no CPU (a busy machine gives its tasks no CPU to reach the
    freezer's trap): no fault; the wait is its own time, as any freeze's."""
    now = [0.0]
    tc = TimeControl(startup=1.0, per_decision=3.0, bank=0.0, game=1000.0)
    freezers = [SlowFreezer(now, freezing=1.5), SlowFreezer(now)]
    players, rec = game(freezers, now, tc)
    assert rec.faults == [] and rec.result is not None  # type: ignore[attr-defined]
    ms = {d["ms"] for d in rec.decisions if d["seat"] == 0}  # type: ignore[attr-defined]
    assert ms == {1500.0}
    assert not players[0].dead


def test_a_bot_not_frozen_within_the_limit_is_a_fault_naming_it() -> None:
    """b0 is frozen before its first turn, never after: its first decision is a fatal
    timeout fault naming it and saying why; it forfeits, and is ended."""
    now = [0.0]
    tc = TimeControl(startup=1.0, per_decision=1.0, bank=0.0, game=100.0)
    freezers = [SlowFreezer(now, freezes=1), SlowFreezer(now)]
    players, rec = game(freezers, now, tc)
    faults = rec.faults  # type: ignore[attr-defined]
    assert [(f.seat, f.kind) for f in faults] == [(0, "timeout")], faults
    assert faults[0].detail.startswith(
        f"b0 kept running after its turn: could not be frozen within "
        f"{FREEZE_LIMIT * 1000:.0f} ms")
    assert list(rec.result.forfeits) == [0]  # type: ignore[attr-defined]
    assert players[0].dead
