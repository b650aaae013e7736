"""The schema files are generated from the message table and are up to date; the
small validator the tests use agrees with the session's own validation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.protocol import MESSAGES, BotProtocolError, parse_bot_message
from referee.protocol.game_schema import CARD_PATTERN
from referee.protocol.schema import all_schemas, render
from tests.protocol.schemacheck import errors

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
    assert errors(schema, bad) == ["$.code: 'nope' is not one of " + str(
        schema["properties"]["code"]["enum"])]


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
        "$.faults[0].turn: None is not of type 'integer'"]
    assert errors(welcome, {"type": "welcome", "protocol": 1, "referee": "r",
                            "max_message_bytes": 9, "time": {"startup": 1}}) == [
        "$.time: 'per_decision' is a required property", "$.time: 'bank' is a required property"]


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


def _schema(name: str) -> dict[str, object]:
    loaded: dict[str, object] = json.loads((SCHEMA_DIR / f"{name}.json").read_text())
    return loaded


@pytest.mark.parametrize("msg", [
    {"type": "decision", "id": 3.0, "decision": 1},
    {"type": "decision", "id": 3, "decision": 1.0},
    {"type": "hello", "protocol": [1.0], "name": "x"},
])
def test_integers_written_with_a_fraction_are_named_in_the_schema(msg: dict[str, object]) -> None:
    # JSON Schema counts 1.0 as an integer and no keyword can tell it from 1, so the
    # schema accepts what the referee refuses; the schema says so where it matters.
    assert errors(_schema(str(msg["type"])), msg) == []
    with pytest.raises(BotProtocolError, match="is not an integer"):
        parse_bot_message(msg)
    props = _schema(str(msg["type"]))["properties"]
    assert isinstance(props, dict)
    field = "protocol" if msg["type"] == "hello" else ("id" if msg["id"] == 3.0 else "decision")
    assert "never 3.0" in props[field]["description"]


def test_decision_uses_any_of_not_a_list_of_types() -> None:
    decision = _schema("decision")["properties"]["decision"]  # type: ignore[index]
    assert "type" not in decision and decision["anyOf"] == [{"type": "integer"},
                                                            {"type": "string"}]


def test_rejected_requires_the_substitute_when_the_referee_played_one() -> None:
    schema = _schema("rejected")
    base = {"type": "rejected", "id": 4, "code": "timeout", "message": "m"}
    for action in ("substituted", "forfeit"):
        assert errors(schema, {**base, "action": action}) == [
            "$: 'substitute' is a required property"]
        assert errors(schema, {**base, "action": action, "substitute": "pickup"}) == []
    assert errors(schema, {**base, "action": "ignored"}) == []


def test_new_game_bounds_players_and_seat() -> None:
    schema = _schema("new_game")
    config = {"players": 6, "variants": [], "colours": None, "deck": "standard",
              "turn_limit": 1000}
    good = {"type": "new_game", "game_id": "g", "seat": 5, "players": 6, "config": config,
            "bots": ["a"] * 6}
    assert errors(schema, good) == []
    assert errors(schema, {**good, "seat": 6, "players": 7,
                           "config": {**config, "players": 7}}) == [
        "$.config.players: 7 is greater than the maximum of 6",
        "$.players: 7 is greater than the maximum of 6",
        "$.seat: 6 is greater than the maximum of 5"]
    assert errors(schema, {**good, "config": {**config, "deck": "tarot"}}) == [
        "$.config.deck: 'tarot' is not one of ['standard', 'alternative']"]


def test_observation_and_events_are_described_in_full() -> None:
    request = _schema("request")
    obs = {"seat": 1, "players": 3, "variants": [], "phase": "play", "turn": 1, "to_move": 1,
           "direction": 1, "extra_action": False, "pending_extra": 0, "drawn": False,
           "hand": ["5r", "6y", "7y"], "pile": [], "pile_run": 0, "draw_pile": 57,
           "cleared": [],
           "seats": [{"seat": s, "hand": 3, "up": ["3b", "5y", "6r"], "down": [0, 1, 2],
                      "finished": None} for s in range(3)]}
    msg = {"type": "request", "id": 1, "game_id": "g", "seat": 1, "observation": obs,
           "legal": ["play hand 5x1"], "time_left": 1.5,
           "events": [{"type": "play", "seat": 0, "source": "3down", "cards": ["7g"], "slot": 2},
                      {"type": "draw", "seat": 1, "count": 2, "why": "refill", "cards": None}]}
    assert errors(request, msg) == []
    bad_obs = {**obs, "hand": ["5r", "6x"], "phase": "playing"}
    assert errors(request, {**msg, "observation": bad_obs}) == [
        f"$.observation.hand[1]: '6x' does not match {CARD_PATTERN!r}",
        "$.observation.phase: 'playing' is not one of ['setup', 'play', 'swap', 'over']"]
    assert errors(request, {**msg, "events": [{"type": "draw", "seat": 1, "count": 2}]})
    assert errors(request, {**msg, "events": [{"type": "shuffle"}]})


def test_the_game_schemas_agree_with_the_engine() -> None:
    from referee.game import config as game_config
    from referee.game.events import event_dict
    from referee.protocol import game_schema

    assert game_schema.VARIANT_NAMES == game_config.VARIANTS
    assert game_schema.MAX_PLAYERS == game_config.MAX_PLAYERS
    assert set(game_schema.OBSERVATION["properties"]) >= {"seat", "hand", "seats"}
    # Every event type the engine writes has a schema (event_dict raises on others).
    assert event_dict(("turn", 1, 0)) == {"type": "turn", "turn": 1, "seat": 0}
    assert len(set(game_schema.EVENT_TYPES)) == len(game_schema.EVENTS) == 17
