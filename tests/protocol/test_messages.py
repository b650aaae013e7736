"""Validation of what bots send: every error names the field and what was expected."""

from __future__ import annotations

from typing import Any

import msgpack
import pytest

from referee.protocol import BotProtocolError, DecisionReply, Hello, parse_bot_message


def test_hello_and_decision_are_read_into_records() -> None:
    assert parse_bot_message({"type": "hello", "protocol": [1, 2], "name": "x"}) == Hello(
        (1, 2), "x", None)
    assert parse_bot_message({"type": "decision", "id": 3, "decision": "pickup",
                              "extra": "ignored"}) == DecisionReply(3, "pickup")


@pytest.mark.parametrize("msg, kind, field, words", [
    ([1, 2], "malformed", None, "a message must be one JSON object (a msgpack map on "
     "ZeroMQ), not array [1,2]"),
    ({"id": 1}, "malformed", "type", "has no 'type' field"),
    ({"type": 7}, "malformed", "type", "must be a string, not integer 7"),
    ({"type": None}, "malformed", "type", "must be a string, not null"),
    ({"type": "move"}, "protocol", "type", '"move" is not a message type'),
    ({"type": "welcome"}, "protocol", "type", "only the referee sends"),
    ({"type": "hello", "name": "x"}, "malformed", "protocol", "lacks field 'protocol'"),
    ({"type": "hello", "protocol": [], "name": "x"}, "malformed", "protocol", "at least 1"),
    ({"type": "hello", "protocol": ["1"], "name": "x"}, "malformed", "protocol",
     "item 0 is string \"1\""),
    ({"type": "hello", "protocol": [1], "name": "x" * 201}, "malformed", "name",
     "at most 200 characters"),
    ({"type": "decision", "id": 1}, "malformed", "decision", "lacks field 'decision'"),
    ({"type": "decision", "id": "1", "decision": 0}, "malformed", "id",
     "must be integer, not string \"1\""),
    ({"type": "decision", "id": 1, "decision": True}, "malformed", "decision",
     "integer or string, not boolean true"),
    ({"type": "decision", "id": 1, "decision": 1.0}, "malformed", "decision",
     "not number 1.0 (a number written with a fraction or an exponent, such as 1.0 "
     "or 1e0, is not an integer: write 1)"),
    ({"type": "decision", "id": 2.0, "decision": 0}, "malformed", "id",
     "must be integer, not number 2.0 (a number written"),
    ({"type": "decision", "id": 1, "decision": 1.5}, "malformed", "decision",
     "must be integer or string, not number 1.5"),
    ({"type": "decision", "id": 1, "decision": None}, "malformed", "decision",
     "must be integer or string, not null"),
    ({"type": "hello", "protocol": [None], "name": "x"}, "malformed", "protocol",
     "item 0 is null"),
    # What JSON cannot hold (over msgpack): said in the wire's terms, not Python's.
    ({"type": b"decision"}, "malformed", "type",
     "must be a string, not binary data of 8 bytes"),
    ({"type": "decision", "id": 1, "decision": msgpack.ExtType(1, b"x")}, "malformed",
     "decision", "must be integer or string, not a msgpack extension value"),
])
def test_errors_name_the_field_and_the_expectation(msg: Any, kind: str, field: str | None,
                                                   words: str) -> None:
    with pytest.raises(BotProtocolError) as e:
        parse_bot_message(msg)
    assert e.value.kind == kind
    assert e.value.field == field
    assert words in str(e.value)
