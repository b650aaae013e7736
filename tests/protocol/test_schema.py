"""The schema files are generated from the message table and are up to date; the
small validator the tests use agrees with the session's own validation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.protocol import MESSAGES, BotProtocolError, parse_bot_message
from referee.protocol.schema import all_schemas, render

from .minischema import errors

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "protocol" / "schema"


def test_schema_files_match_the_message_table() -> None:
    want = all_schemas()
    assert sorted(p.name for p in SCHEMA_DIR.glob("*.json")) == sorted(want)
    for name, schema in want.items():
        assert (SCHEMA_DIR / name).read_text(encoding="utf-8") == render(schema), (
            f"{name} is stale: run python -m referee.protocol.schema protocol/schema")
    assert set(MESSAGES) == {n.removesuffix(".json") for n in want}


@pytest.mark.parametrize("msg", [
    {"type": "hello", "protocol": [1], "name": "x"},
    {"type": "hello", "protocol": [1], "name": "x", "version": "1", "extra": 1},
    {"type": "hello", "protocol": [], "name": "x"},
    {"type": "hello", "protocol": [1]},
    {"type": "decision", "id": 1, "decision": "pickup"},
    {"type": "decision", "id": 1, "decision": 2},
    {"type": "decision", "id": 1, "decision": 2.5},
    {"type": "decision", "id": True, "decision": 2},
    {"type": "decision", "decision": 2},
])
def test_schema_and_session_validation_agree_on_bot_messages(msg: dict[str, object]) -> None:
    schema = json.loads((SCHEMA_DIR / f"{msg['type']}.json").read_text())
    try:
        parse_bot_message(msg)
        session_ok = True
    except BotProtocolError:
        session_ok = False
    assert (not errors(schema, msg)) == session_ok


def test_validator_catches_a_wrong_referee_message() -> None:
    schema = json.loads((SCHEMA_DIR / "rejected.json").read_text())
    bad = {"type": "rejected", "id": 1, "code": "nope", "message": "m", "action": "ignored"}
    assert errors(schema, bad) == ["$.code: 'nope' not in " + str(schema["properties"]["code"]
                                                                    ["enum"])]


def test_the_schema_lists_the_fields_of_nested_objects() -> None:
    # welcome.time and each of game_over.faults: the bot-facing fields are in the
    # schema, so the tests that validate what the referee sends check them too.
    welcome = json.loads((SCHEMA_DIR / "welcome.json").read_text())
    assert welcome["properties"]["time"]["required"] == ["startup", "per_decision", "bank"]
    over = json.loads((SCHEMA_DIR / "game_over.json").read_text())
    fault = {"seat": 1, "bot": "b", "kind": "illegal", "detail": "d", "turn": 4,
             "action": "forfeit"}
    msg = {"type": "game_over", "game_id": "g", "how": "winner", "places": [1, 2],
           "points": [0, 5], "forfeits": [1], "faults": [fault], "events": []}
    assert errors(over, msg) == []
    assert errors(over, {**msg, "faults": [{**fault, "turn": None}]}) == [
        "$.faults[0].turn: None is not ['integer']"]
    assert errors(welcome, {"type": "welcome", "protocol": 1, "referee": "r",
                            "max_message_bytes": 9, "time": {"startup": 1}}) == [
        "$.time: lacks 'per_decision'", "$.time: lacks 'bank'"]


def test_protocol_md_documents_every_message_and_field() -> None:
    import re

    doc = (SCHEMA_DIR.parent / "PROTOCOL.md").read_text(encoding="utf-8")
    sections = re.split(r"^### `(\w+)` \(", doc, flags=re.M)
    documented = {sections[i]: sections[i + 1].split("\n## ")[0]
                  for i in range(1, len(sections) - 1, 2)}
    assert set(documented) == set(MESSAGES)
    for t, spec in MESSAGES.items():
        rows = set(re.findall(r"^\| `(\w+)` \|", documented[t], flags=re.M))
        assert rows == {f.name for f in spec.fields}, t
