"""Stopping a bot that cannot play: one that failed in each of its first N games.

Owns the rule (``[faults] stop_after``): a bot *fails* a game when it forfeits it
because it crashed or never got going (a crash, or no hello within the startup
limit).  A bot that fails each of its first N finished games is stopped: its
remaining games are still played by the others, its seat forfeited at once without
starting it (``StoppedPlayer``).  A bug or a missing library would otherwise cost
one crash, and one startup wait, per game for the whole tournament.

``Stopper`` follows the outcomes as they are committed (and, on resume, those in
the store); it knows nothing of executors: the caller tells the executor.  Remote
bots are never stopped (an absent one is waited for again, and may come back).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..game import GameConfig
from ..play.runner import BotFault, DecisionRequest, GameResult
from .outcome import GameOutcome

#: Words in the fault of a game forfeited because its bot was stopped.
STOPPED_WORDS = "was stopped by the referee"


def stopped_detail(name: str, games: int) -> str:
    return (f"{name} {STOPPED_WORDS}: it failed in each of its first {games} games (a crash "
            f"or no hello); its seat is forfeited without starting it")


class StoppedPlayer:
    """The seat of a stopped bot: it forfeits at the start of the game."""

    def __init__(self, name: str, games: int) -> None:
        self.name = name
        self.detail = stopped_detail(name, games)

    def start_game(self, game_id: str, seat: int, config: GameConfig, seed: int) -> None:
        raise BotFault("crash", self.detail, fatal=True)

    def decide(self, request: DecisionRequest) -> Any:
        raise BotFault("crash", self.detail, fatal=True)

    def end_game(self, game_id: str, result: GameResult,
                 events: Sequence[dict[str, Any]]) -> None:
        pass


def failed(outcome: GameOutcome, seat: int) -> bool:
    """The bot in ``seat`` forfeited the game because it crashed or never started."""
    if seat not in outcome.forfeits:
        return False
    return any(f.seat == seat and (
        f.kind == "crash"
        or (f.kind == "timeout" and "no hello" in str(f.detail)))
        for f in outcome.faults)


class Stopper:
    """Counts each bot's first ``after`` finished games; ``see`` returns the bots the
    outcome stops, with why (the first game's fault)."""

    def __init__(self, after: int, never: Iterable[str] = ()) -> None:
        self.after = after
        self.never = set(never)
        self.counted: dict[str, int] = {}
        self.first_fault: dict[str, str] = {}
        self.alive: set[str] = set()  # failed to fail once in its first games
        self.stopped: dict[str, str] = {}  # bot -> why

    def see(self, outcome: GameOutcome) -> list[tuple[str, str]]:
        if self.after <= 0:
            return []
        out = []
        for seat, bot in enumerate(outcome.seats):
            if bot in self.never or bot in self.alive or bot in self.stopped:
                continue
            if not failed(outcome, seat):
                self.alive.add(bot)
                continue
            self.counted[bot] = n = self.counted.get(bot, 0) + 1
            if bot not in self.first_fault:
                self.first_fault[bot] = next(
                    (f"{f.kind}: {f.detail}" for f in outcome.faults
                     if f.seat == seat), "")
            if n >= self.after:
                why = (f"it failed in each of its first {n} games; the first: "
                       f"{self.first_fault[bot]}")
                self.stopped[bot] = why
                out.append((bot, why))
        return out

    def see_all(self, outcomes: Sequence[GameOutcome]) -> None:
        for o in outcomes:
            self.see(o)
