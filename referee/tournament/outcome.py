"""What a tournament keeps of one finished game: ``GameOutcome``.

Owns the one row type that executors produce, the store keeps and standings, reports
and leagues read.  It imports only the runner's result types, so that every one of
those modules can import it without importing an executor.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..game import GameError, How
from ..game.cards import parse_deck
from ..play.luck import Value, game_luck
from ..play.runner import Fault, GameRecord
from .schedule import GameSpec


@dataclass(frozen=True)
class GameOutcome:
    """What the store keeps of a finished game (the full record is in ``record``)."""

    index: int
    game_id: str
    deal: int
    deal_seed: int
    seats: tuple[str, ...]
    places: tuple[int, ...]
    points: tuple[int, ...]
    how: How
    turns: int
    faults: tuple[Fault, ...] = ()
    forfeits: tuple[int, ...] = ()
    wall_time: float = 0.0
    worker: int | str = 0  # a process-pool worker's number; a Dask worker's HOST:PID
    record: str = ""  # path of the JSONL record, relative to the output folder
    #: Luck-adjusted scores, ``adjusted[score][seat]`` for ``play.luck.SCORES``
    #: (share, win, points); None: not computed (a store older than them).
    adjusted: tuple[tuple[float, ...], ...] | None = None

    @classmethod
    def of(cls, record: GameRecord, spec: GameSpec, *, worker: int | str = 0,
           record_path: str = "", value: Value | None = None) -> GameOutcome:
        """The outcome of ``spec``'s game, played into ``record`` (written to
        ``record_path``, relative to the output folder); its luck-adjusted scores by
        ``value`` (the shipped linear V by default)."""
        r = record.ended
        return cls(adjusted=luck_of(record, value), index=spec.index, game_id=spec.game_id, deal=spec.deal,
                   deal_seed=spec.deal_seed, seats=spec.seats, places=r.places, points=r.points,
                   how=r.how, turns=r.turns, faults=r.faults,
                   forfeits=r.forfeits, wall_time=record.wall_time, worker=worker,
                   record=record_path)


def luck_of(record: GameRecord, value: Value | None = None
            ) -> tuple[tuple[float, ...], ...] | None:
    """The game's luck-adjusted scores (``play.luck``), from its deck and decisions;
    None if they cannot be computed (no value function file): the result is kept, and
    the standings count its raw scores."""
    r = record.ended
    try:
        luck = game_luck(record.config, record.seed, parse_deck(record.deck), record.first_player,
                         [(int(d["seat"]), str(d["decision"])) for d in record.decisions],
                         r.places, r.points, value,
                         [(f.seat, f.turn) for f in record.faults])
    except (OSError, ValueError, KeyError, IndexError, GameError):
        return None
    return luck.adjusted_all()
