"""The runner's typed results: ``GameResult`` in the record (the file format kept to
the byte), what each seat is told at the end, the ``recorded`` fault action, and the
decisions the runner reports as substituted."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import orjson

from referee.game import HOWS, STOPS, GameConfig
from referee.play.runner import (
    OTHERS_FAULT_DETAIL,
    Applied,
    BotFault,
    DecisionRequest,
    Fault,
    FaultPolicy,
    GameResult,
    run_game,
)
from referee.protocol.messages import FAULT_ACTIONS, FAULT_KINDS


class Scripted:
    """Answers its ``script`` first (texts; an exception is raised), then the first
    legal decision; keeps what it was told at the end."""

    def __init__(self, name: str, script: Sequence[Any] = (), end_fault: bool = False) -> None:
        self.name = name
        self.script = list(script)
        self.end_fault = end_fault
        self.told: tuple[GameResult, Sequence[dict[str, Any]]] | None = None

    def start_game(self, game_id: str, seat: int, config: GameConfig, seed: int) -> None:
        pass

    def decide(self, request: DecisionRequest) -> Any:
        if self.script:
            step = self.script.pop(0)
            if isinstance(step, Exception):
                raise step
            return step
        return request.legal[0]

    def end_game(self, game_id: str, result: GameResult,
                 events: Sequence[dict[str, Any]]) -> None:
        self.told = (result, events)
        if self.end_fault:
            raise BotFault("timeout", f"{self.name} stopped reading at game_over")


def _rows(lines: Sequence[str]) -> list[dict[str, Any]]:
    return [json.loads(x) for x in lines]


def test_the_record_keeps_its_result_line_to_the_byte_and_reads_back_typed() -> None:
    cheat = Scripted("cheat", ["play hand 99x1", "banana"])
    rec = run_game(GameConfig(players=3), 11, [cheat, Scripted("b"), Scripted("c")],
                   policy=FaultPolicy("substitute", strike_limit=1))
    result = rec.ended
    assert [f.kind for f in result.faults] == ["illegal", "illegal"]
    assert [f.action for f in result.faults] == ["substituted", "forfeit"]
    assert result.forfeits == (0,) and rec.forfeits == [0]
    # RULES §5.4: one more than every final point and than what it held when it forfeited
    held = result.faults[1].held
    assert held is not None and result.forfeit_at == (3,)
    assert result.places[0] == 3 and result.points[0] == max(*result.game_points, held) + 1
    lines = rec.to_lines()
    line = lines[-1]
    row = json.loads(line)
    # The result line's keys, in the order the record format has always had.
    assert list(row) == ["type", "how", "places", "points", "game_places", "game_points",
                         "finish_order", "turns", "forfeits", "forfeit_at", "wall_time"]
    faults = [Fault(**{k: v for k, v in r.items() if k != "type"})
              for r in _rows(lines) if r["type"] == "fault"]
    again = GameResult.from_json(row, faults)
    assert again == result
    rewritten = orjson.dumps({"type": "result", **again.to_json(),
                              "wall_time": row["wall_time"]}).decode()
    assert rewritten == line


def test_each_seat_is_told_the_result_with_only_its_own_fault_details() -> None:
    cheat, other = Scripted("cheat", ["play hand 99x1"]), Scripted("other")
    rec = run_game(GameConfig(players=2), 5, [cheat, other])
    assert cheat.told is not None and other.told is not None
    mine, theirs = cheat.told[0], other.told[0]
    assert mine == rec.ended  # its own fault in full
    assert theirs.faults[0].detail == OTHERS_FAULT_DETAIL != rec.faults[0].detail
    assert theirs.faults[0].kind == "illegal" and theirs.places == rec.ended.places
    assert rec.ended.seen_by(1) == theirs
    # The seat's events since its last request, JSON-ready, ending with the end.
    assert other.told[1][-1] == {"type": "end", "how": rec.ended.how,
                                 "places": list(rec.ended.game_places),
                                 "points": list(rec.ended.game_points)}


def test_a_fault_at_game_over_is_recorded_and_changes_nothing() -> None:
    late = Scripted("late", end_fault=True)
    quiet = run_game(GameConfig(players=2), 3, [Scripted("a"), Scripted("b")])
    rec = run_game(GameConfig(players=2), 3, [Scripted("a"), late])
    assert [(f.kind, f.action, f.seat) for f in rec.faults] == [("timeout", "recorded", 1)]
    assert rec.ended.faults == tuple(rec.faults)  # the result has every fault
    assert rec.ended.places == quiet.ended.places and rec.ended.forfeits == ()
    assert late.told is not None and late.told[0].faults == ()  # told before it
    assert _rows(rec.to_lines())[-2]["action"] == "recorded"


def test_the_runner_reports_which_decisions_it_substituted() -> None:
    applied: list[Applied] = []

    def on_event(kind: str, payload: Any) -> None:
        if kind == "decision":
            applied.append(payload)

    rec = run_game(GameConfig(players=2), 7,
                   [Scripted("a", ["banana", ValueError("bug")]), Scripted("b")],
                   on_event=on_event)
    assert [(f.kind, f.action) for f in rec.faults] == [("illegal", "substituted"),
                                                        ("crash", "forfeit")]
    assert [a.substituted for a in applied] == [bool(d.get("substituted"))
                                                for d in rec.decisions]
    assert [(a.seat, a.text) for a in applied] == [(d["seat"], d["decision"])
                                                  for d in rec.decisions]
    seat0 = [a.substituted for a in applied if a.seat == 0]
    assert seat0 and all(seat0)  # a fault, then forfeited: the referee plays for it
    assert not any(a.substituted for a in applied if a.seat == 1)


def test_the_literals_list_every_kind_action_and_ending() -> None:
    assert FAULT_KINDS == ("timeout", "crash", "malformed", "oversized", "protocol", "illegal")
    assert FAULT_ACTIONS == ("substituted", "forfeit", "recorded")
    assert HOWS == ("winner", "played_out", "turn_limit", "forfeits", "time_limit")
    assert set(STOPS) < set(HOWS)


def test_a_result_line_from_before_game_points_reads_as_the_engines_own() -> None:
    row = {"type": "result", "how": "winner", "places": [2, 1], "points": [12, 0],
           "finish_order": [1], "turns": 40, "forfeits": [], "wall_time": 0.5}
    old = GameResult.from_json(row)
    assert (old.game_places, old.game_points, old.forfeits) == ((2, 1), (12, 0), ())
    assert old.how == "winner" and old.turns == 40 and old.faults == ()
