"""The fast paths of the stdio transport and the session give exactly what the
general paths give: a reply arriving alone in the pipe as one line, the awaited
decision."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterator

import pytest

from referee.protocol import BotProtocolError, BotSession, DecisionReply, IgnoredReply
from referee.transport.base import MalformedMessage, MessageTooLarge, TransportTimeout
from referee.transport.stdio import StdioTransport
from tests.procs import scaled


@pytest.fixture
def pipes() -> Iterator[tuple[StdioTransport, int]]:
    bot_in, to_bot = os.pipe()
    from_bot, bot_out = os.pipe()
    t = StdioTransport(to_bot, from_bot, max_message_bytes=100, write_timeout=0.2)
    yield t, bot_out
    t.close()
    for fd in (bot_in, bot_out):
        with contextlib.suppress(OSError):
            os.close(fd)


@pytest.mark.parametrize("line, msg", [
    (b'{"a":1}\n', {"a": 1}),
    (b'  {"b":[2]}\r\n', {"b": [2]}),
    ('{"c":"é"}\n'.encode(), {"c": "é"}),
])
def test_a_line_alone_in_the_pipe_is_read_at_once(
        pipes: tuple[StdioTransport, int], line: bytes, msg: dict[str, object]) -> None:
    t, out = pipes
    os.write(out, line)
    assert t.recv(1.0) == msg
    assert not t._buf


@pytest.mark.parametrize("line, error, words", [
    (b"hello there\n", MalformedMessage,
     'a line that is not JSON .*: "hello there"; stdout carries protocol messages only'),
    (b"[1,2]\n", MalformedMessage,
     r"a JSON list, where a message must be one JSON object: \[1,2\]$"),
    (b'{"a":"\xff"}\n', MalformedMessage, "UTF-8"),
    (b'{"pad":"' + b"x" * 200 + b'"}\n', MessageTooLarge, "a message may have at most 100"),
])
def test_a_bad_line_alone_is_reported_as_by_the_general_path(
        pipes: tuple[StdioTransport, int], line: bytes, error: type[Exception],
        words: str) -> None:
    t, out = pipes
    os.write(out, line)
    with pytest.raises(error, match=words):
        t.recv(1.0)
    os.write(out, b'{"ok":1}\n')
    assert t.recv(1.0) == {"ok": 1}


def test_a_blank_line_alone_is_skipped(pipes: tuple[StdioTransport, int]) -> None:
    t, out = pipes
    os.write(out, b"  \n")
    os.write(out, b'{"after":1}\n')
    assert t.recv(1.0) == {"after": 1}


def awaiting() -> BotSession:
    s = BotSession(referee="test", time={})
    s.receive({"type": "hello", "protocol": [1], "name": "b"})
    s.welcome()
    s.new_game("g", 0, {}, ["a", "b"])
    s.request(0, {}, ["pickup"], [], 1.0)
    return s


@pytest.mark.parametrize("decision", [0, "pickup"])
def test_the_awaited_decision(decision: int | str) -> None:
    s = awaiting()
    assert s.receive({"type": "decision", "id": 1, "decision": decision}) == DecisionReply(
        1, decision)
    assert s.state.value == "in_game"


@pytest.mark.parametrize("msg, words", [
    ({"type": "decision", "id": True, "decision": 0}, "field 'id'"),
    ({"type": "decision", "id": 1, "decision": True}, "field 'decision'"),
    ({"type": "decision", "id": 1, "decision": 1.0}, "field 'decision'"),
    ({"type": "decision", "id": 1}, "lacks field 'decision'"),
])
def test_a_malformed_decision_is_not_taken(msg: dict[str, object], words: str) -> None:
    s = awaiting()
    with pytest.raises(BotProtocolError, match=words):
        s.receive(msg)


def test_a_decision_for_another_id_is_ignored() -> None:
    s = awaiting()
    assert isinstance(s.receive({"type": "decision", "id": 7, "decision": 0}), IgnoredReply)
    assert s.state.value == "awaiting"


@pytest.mark.parametrize("msg", [
    {"type": "decision", "id": 7, "decision": 0},
    {"type": "decision", "id": True, "decision": 0},
    {"type": "decision", "id": 1, "decision": True},
    {"type": "decision", "id": 1},
    {"type": "hello", "protocol": [1], "name": "b"},
    [1, 2],
])
def test_take_decision_leaves_everything_else_to_receive(msg: object) -> None:
    s = awaiting()
    assert s.take_decision(msg) is None
    assert (s.state.value, s.pending) == ("awaiting", 1)


def test_take_decision_consumes_the_awaited_decision() -> None:
    s = awaiting()
    assert s.take_decision({"type": "decision", "id": 1, "decision": "pickup"}) == "pickup"
    assert (s.state.value, s.pending) == ("in_game", None)
    assert s.take_decision({"type": "decision", "id": 1, "decision": 0}) is None


def _write_later(fd: int, data: bytes, delay: float) -> threading.Thread:
    th = threading.Thread(target=lambda: (time.sleep(delay), os.write(fd, data)))
    th.start()
    return th


def test_a_reply_that_arrives_while_waiting_is_taken(pipes: tuple[StdioTransport, int]) -> None:
    t, out = pipes
    th = _write_later(out, b'{"late":1}\n', 0.05)
    assert t.recv(2.0) == {"late": 1}
    th.join()
    assert not t._buf


def test_a_line_completed_later_is_joined(pipes: tuple[StdioTransport, int]) -> None:
    t, out = pipes
    os.write(out, b'{"half":')
    th = _write_later(out, b'2}\n', 0.05)
    assert t.recv(2.0) == {"half": 2}
    th.join()


def test_a_line_never_completed_times_out_within_the_limit(
        pipes: tuple[StdioTransport, int]) -> None:
    # The fast path's wait counts against the limit: the general path only gets what
    # is left of it, so a bot dribbling a partial line cannot double its time.
    t, out = pipes
    th = _write_later(out, b'{"never":', scaled(0.2))
    t0 = time.monotonic()
    limit = scaled(0.3)
    with pytest.raises(TransportTimeout, match=f"no complete message within {limit:.3f}s"):
        t.recv(limit)
    took = time.monotonic() - t0
    th.join()
    assert limit - 0.01 <= took < scaled(0.45)  # not 0.2 + 0.3
