"""The sans-I/O session: states, request ids, late and unknown replies, whose fault."""

from __future__ import annotations

import pytest

from referee.protocol import (
    BotProtocolError,
    BotSession,
    DecisionReply,
    IgnoredReply,
    RefereeProtocolError,
    State,
    UnsupportedVersion,
    check_referee_message,
)

HELLO = {"type": "hello", "protocol": [1], "name": "b"}


def state(s: BotSession) -> str:
    """The state's name (through a call, so that mypy does not narrow it)."""
    return s.state.value


def greeted() -> BotSession:
    s = BotSession(referee="test", time={"startup": 1.0, "per_decision": 0.5, "bank": 2.0})
    s.receive(HELLO)
    check_referee_message(s.welcome())
    return s


def in_game() -> BotSession:
    s = greeted()
    check_referee_message(s.new_game("g1", 1, {"players": 2}, ["a", "b"]))
    return s


def test_handshake_then_game_then_idle() -> None:
    s = BotSession(referee="test", time={})
    assert state(s) == "await_hello"
    s.receive({**HELLO, "protocol": [3, 1]})
    assert s.version == 1
    w = s.welcome()
    assert w["protocol"] == 1 and w["max_message_bytes"] == 8 << 10
    s.new_game("g1", 0, {}, ["a", "b"])
    req = s.request(0, {}, ["pickup"], [], 1.23456)
    check_referee_message(req)
    assert (req["id"], req["time_left"], state(s)) == (1, 1.235, "awaiting")
    assert s.receive({"type": "decision", "id": 1, "decision": 0}) == DecisionReply(1, 0)
    assert state(s) == "in_game"
    over = s.game_over(how="winner", places=[1, 2], points=[0, 5], forfeits=[], faults=[],
                       events=[])
    check_referee_message(over)
    assert over["game_id"] == "g1" and state(s) == "idle"
    check_referee_message(s.bye())
    assert state(s) == "closed"


def test_bot_must_speak_first_with_hello() -> None:
    s = BotSession(referee="test", time={})
    with pytest.raises(BotProtocolError, match="must speak first with 'hello'") as e:
        s.receive({"type": "decision", "id": 1, "decision": 0})
    assert e.value.kind == "protocol"


def test_unsupported_version_gives_the_error_to_send_and_closes() -> None:
    s = BotSession(referee="test", time={})
    with pytest.raises(UnsupportedVersion) as e:
        s.receive({**HELLO, "protocol": [2, 7]})
    check_referee_message(e.value.reply)
    assert e.value.reply["code"] == "unsupported_version"
    assert "speaks protocol 2, 7" in e.value.reply["message"]
    assert s.state is State.CLOSED


def test_second_hello_is_a_protocol_fault() -> None:
    s = greeted()
    with pytest.raises(BotProtocolError, match="second 'hello'"):
        s.receive(HELLO)


def test_late_reply_is_ignored_and_never_answers_the_next_request() -> None:
    s = in_game()
    s.request(1, {}, ["a", "b"], [], 1.0)
    assert s.abandon() == 1  # the referee timed out
    s.request(1, {}, ["a", "b"], [], 1.0)
    late = s.receive({"type": "decision", "id": 1, "decision": 1})
    assert isinstance(late, IgnoredReply)
    assert "no longer pending (request 2 is)" in late.reason
    check_referee_message(late.reply)
    assert late.reply["action"] == "ignored" and late.reply["code"] == "unknown_id"
    assert s.state is State.AWAITING and s.pending == 2
    assert s.receive({"type": "decision", "id": 2, "decision": 0}) == DecisionReply(2, 0)


def test_reply_to_a_request_never_sent_is_ignored() -> None:
    s = in_game()
    s.request(1, {}, ["a"], [], 1.0)
    ev = s.receive({"type": "decision", "id": 99, "decision": 0})
    assert isinstance(ev, IgnoredReply) and "never sent" in ev.reason
    assert s.pending == 1


def test_second_answer_between_requests_is_ignored() -> None:
    s = in_game()
    s.request(1, {}, ["a"], [], 1.0)
    s.receive({"type": "decision", "id": 1, "decision": 0})
    assert isinstance(s.receive({"type": "decision", "id": 1, "decision": 0}), IgnoredReply)


def test_request_ids_increase_across_games() -> None:
    s = in_game()
    s.request(0, {}, ["a"], [], 1.0)
    s.receive({"type": "decision", "id": 1, "decision": 0})
    s.game_over(how="winner", places=[1, 2], points=[0, 1], forfeits=[], faults=[], events=[])
    s.new_game("g2", 0, {}, ["a", "b"])
    assert s.request(0, {}, ["a"], [], 1.0)["id"] == 2


@pytest.mark.parametrize("misuse", [
    lambda s: s.request(0, {}, ["a"], [], 1.0),  # no game
    lambda s: s.welcome(),  # twice
    lambda s: s.abandon(),  # nothing pending
    lambda s: s.rejected(1, "bogus", "m", "ignored"),
])
def test_referee_misuse_is_a_referee_error_not_a_bot_fault(misuse: object) -> None:
    s = greeted()
    with pytest.raises(RefereeProtocolError):
        misuse(s)  # type: ignore[operator]


def test_request_without_legal_decisions_is_a_referee_error() -> None:
    with pytest.raises(RefereeProtocolError):
        in_game().request(0, {}, [], [], 1.0)


def test_a_rejection_names_the_substitute_exactly_when_one_was_played() -> None:
    # PROTOCOL.md, rejected: 'substitute' is present for 'substituted' and 'forfeit',
    # absent for 'ignored' -- never null.
    s = in_game()
    assert s.rejected(1, "timeout", "m", "substituted", "pickup")["substitute"] == "pickup"
    assert s.rejected(1, "illegal", "m", "forfeit", "pickup")["substitute"] == "pickup"
    assert "substitute" not in s.rejected(1, "unknown_id", "m", "ignored")
    for action, sub in (("substituted", None), ("forfeit", None), ("ignored", "pickup")):
        with pytest.raises(RefereeProtocolError):
            s.rejected(1, "timeout", "m", action, sub)


def test_nested_fields_of_referee_messages_are_checked() -> None:
    s = in_game()
    fault = {"seat": 0, "bot": "b", "kind": "illegal", "detail": "d", "turn": 3,
             "action": "substituted"}
    over = s.game_over(how="winner", places=[1, 2], points=[0, 1], forfeits=[],
                       faults=[fault], events=[])
    check_referee_message(over)
    for bad in ({**fault, "kind": "unknown_id"}, {k: v for k, v in fault.items() if k != "turn"}):
        with pytest.raises(AssertionError, match="'faults' object 0 of the 'game_over' message"):
            check_referee_message({**over, "faults": [bad]})
    welcome = {"type": "welcome", "protocol": 1, "referee": "r", "max_message_bytes": 1,
               "time": {"startup": 1.0, "per_decision": 0.5}}
    with pytest.raises(AssertionError, match="'time' object of the 'welcome' message lacks field 'bank'"):
        check_referee_message(welcome)


def test_fault_kinds_and_actions_are_the_rejections_and_game_over_lists_them() -> None:
    from referee.protocol.messages import (
        FAULT_ACTIONS,
        FAULT_KINDS,
        MESSAGES,
        REJECT_ACTIONS,
        REJECT_CODES,
    )

    # The kinds: the rejection codes but unknown_id (no fault), plus crash (never sent).
    assert set(FAULT_KINDS) == (set(REJECT_CODES) - {"unknown_id"}) | {"crash"}
    # The actions: a rejection's but ignored (no fault), plus recorded (after game_over).
    assert set(FAULT_ACTIONS) == (set(REJECT_ACTIONS) - {"ignored"}) | {"recorded"}
    faults = next(f for f in MESSAGES["game_over"].fields if f.name == "faults")
    assert faults.fields is not None
    enums = {f.name: f.enum for f in faults.fields}
    assert enums["kind"] == FAULT_KINDS
    assert enums["action"] == ("substituted", "forfeit")  # recorded: never in a game_over
