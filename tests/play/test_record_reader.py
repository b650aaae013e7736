"""The typed record reader (``play/replay.py`` ``Record``): the mirror of the writer
(``GameRecord``), and a record whose lines have the wrong shapes is one clear
RecordError, never a KeyError or TypeError later on."""

from __future__ import annotations

import json

import pytest

from referee.bots import make_bot
from referee.game import GameConfig
from referee.play.replay import RecordedDecision, RecordError, parse_record, verify
from referee.play.runner import Fault, InProcessPlayer, run_game


def _lines() -> list[str]:
    rec = run_game(GameConfig(players=3), 4, [InProcessPlayer(make_bot("heuristic", s), f"b{s}")
                                               for s in range(3)], game_id="g4")
    return rec.to_lines()


def test_a_record_reads_back_as_the_types_it_was_written_from() -> None:
    written = run_game(GameConfig(players=2), 7, [InProcessPlayer(make_bot("random", 1), "a"),
                                                   InProcessPlayer(make_bot("lowest", 2), "b")],
                       game_id="g7")
    rec = parse_record(written.to_lines())
    assert (rec.head.game_id, rec.head.seed, rec.head.first_player) == (
        "g7", written.seed, written.first_player)
    assert rec.head.config == written.config and list(rec.head.deck) == written.deck
    assert rec.bots == written.bots and rec.events == written.events
    assert rec.decisions == [RecordedDecision(d["seat"], d["decision"], d["ms"],
                                              bool(d.get("substituted"))) for d in written.decisions]
    assert rec.result == written.ended and rec.faults == written.faults
    assert verify(rec) == (True, "")


def test_a_fault_reads_back_as_a_fault() -> None:
    f = Fault(seat=1, bot="x", kind="illegal", detail="d", turn=3, action="substituted")
    assert Fault.from_dict({"type": "fault", **f.to_dict()}) == f
    with pytest.raises(ValueError, match="unknown kind 'nonsense'"):
        Fault.from_dict({**f.to_dict(), "kind": "nonsense"})
    with pytest.raises(ValueError, match="wrong type"):
        Fault.from_dict({**f.to_dict(), "seat": "1"})


@pytest.mark.parametrize("line, change, message", [
    (0, {"seed": "seven"}, "seed and first player must be numbers"),
    (0, {"deck": "4g 5g"}, "deck must be a list of card texts"),
    (0, {"bots": [1, 2, 3]}, "bots must be a list of names"),
    (0, {"game_id": 5}, "game_id has the wrong type"),
    (0, {"config": {"players": "many"}}, "bad configuration in the header"),
    ("decision", {"seat": "0"}, "is not a decision line"),
    ("decision", {"decision": None}, "is not a decision line"),
    ("result", {"places": None}, "the result line is not one"),
])
def test_a_record_with_the_wrong_shapes_is_one_clear_error(
        line: int | str, change: dict[str, object], message: str) -> None:
    lines = _lines()
    i = line if isinstance(line, int) else next(
        k for k, x in enumerate(lines) if json.loads(x)["type"] == line)
    row = json.loads(lines[i])
    row.update(change)
    lines[i] = json.dumps(row)
    with pytest.raises(RecordError, match=message):
        parse_record(lines)


def test_a_fault_line_of_an_unknown_kind_is_one_clear_error() -> None:
    lines = _lines()
    lines.insert(-1, json.dumps({"type": "fault", "seat": 0, "bot": "b0", "kind": "x",
                                 "detail": "", "turn": 1, "action": "recorded"}))
    with pytest.raises(RecordError, match=r"line \d+: a fault of unknown kind 'x'"):
        parse_record(lines)
