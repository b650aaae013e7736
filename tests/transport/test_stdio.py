"""The stdio transport's framing and codec over plain pipes (no bot process)."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

import pytest

from referee.transport.base import (
    MalformedMessage,
    MessageTooLarge,
    TransportClosed,
    TransportTimeout,
)
from referee.transport.stdio import READ_CHUNK, StdioTransport, decode
from tests.procs import scaled


class Pipes:
    """A StdioTransport whose peer is this test: ``write`` feeds its recv,
    ``bot_in`` is what it sends."""

    def __init__(self, max_bytes: int = 1000, write_timeout: float = 0.2) -> None:
        self.bot_in, to_bot = os.pipe()
        from_bot, self.bot_out = os.pipe()
        self.exit_r, self.exit_w = os.pipe()
        self.t = StdioTransport(to_bot, from_bot, max_message_bytes=max_bytes,
                                write_timeout=write_timeout, exit_fd=self.exit_r)

    def write(self, data: bytes) -> None:
        os.write(self.bot_out, data)

    def close(self) -> None:
        self.t.close()
        for fd in (self.bot_in, self.bot_out, self.exit_r, self.exit_w):
            with contextlib.suppress(OSError):
                os.close(fd)


@pytest.fixture
def p() -> Iterator[Pipes]:
    pipes = Pipes()
    yield pipes
    pipes.close()


def test_lines_split_and_joined_across_reads(p: Pipes) -> None:
    p.write(b'{"a":1}\n\n  \n{"b":')
    assert p.t.recv(scaled(1.0)) == {"a": 1}
    p.write(b'2}\r\n{"c":3}\n')
    assert p.t.recv(scaled(1.0)) == {"b": 2}
    assert p.t.recv(scaled(1.0)) == {"c": 3}


def test_send_writes_one_json_line(p: Pipes) -> None:
    p.t.send({"type": "bye", "reason": "é"})
    assert os.read(p.bot_in, 100) == '{"type":"bye","reason":"é"}\n'.encode()


def test_nothing_within_the_timeout(p: Pipes) -> None:
    p.write(b'{"partial":')
    with pytest.raises(TransportTimeout, match="no complete message within 0.020s"):
        p.t.recv(0.02)


@pytest.mark.parametrize("line, words", [
    (b'{"a":"\xff\xfe"}', "UTF-8"),
    (b"[" * 5000 + b"]" * 5000, "depth"),
    (b'{"a":NaN}', "a line that is not JSON"),
    (b"[1,2]", r"^a JSON list, where a message must be one JSON object: \[1,2\]$"),
    (b"1e0", "^a JSON number, where a message must be one JSON object: 1e0$"),
    (b"null", "^JSON null, where a message must be one JSON object: null$"),
    # a debug print on stdout: the error says where diagnostics belong (issue 23, 11)
    (b"hello there", '^a line that is not JSON .*: "hello there"; stdout carries protocol messages '
                     'only: print diagnostics to stderr \\(Python: print'),
    # Control characters escaped, invalid UTF-8 as U+FFFD, JSON-style quotes: never b'...'.
    (b"\x1b[1mbanner\xff", r'"\\u001b\[1mbanner\ufffd"$'),
    (b"x" * 500, '"' + "x" * 60 + '"[.][.][.]; stdout carries'),
])
def test_undecodable_lines_are_malformed_and_the_stream_goes_on(line: bytes, words: str) -> None:
    p = Pipes(max_bytes=100_000)
    try:
        p.write(line + b'\n{"ok":1}\n')
        with pytest.raises(MalformedMessage, match=words):
            p.t.recv(scaled(1.0))
        assert p.t.recv(scaled(1.0)) == {"ok": 1}
    finally:
        p.close()


def test_oversized_line_is_refused_early_and_its_rest_skipped(p: Pipes) -> None:
    p.write(b"x" * 1500)
    with pytest.raises(MessageTooLarge, match="1500 bytes without a newline: a message may have "
                                               "at most 1000 bytes"):
        p.t.recv(scaled(1.0))
    p.write(b"y" * 3000 + b'\n{"ok":2}\n')
    assert p.t.recv(scaled(1.0)) == {"ok": 2}


@pytest.mark.parametrize("split", [False, True])
def test_the_limit_counts_the_message_not_its_line_ending(split: bool) -> None:
    """A message of exactly the limit fits with "\r\n" as with "\n" (whole, or its
    "\r" arriving before its "\n"); one byte more is refused either way."""
    p = Pipes(max_bytes=100)
    try:
        msg = b'{"a":"' + b"x" * 92 + b'"}'
        assert len(msg) == 100
        for ending in (b"\r\n", b"\n"):
            if split:
                p.write(msg + ending[:-1])
                with pytest.raises(TransportTimeout):
                    p.t.recv(0.0)
                p.write(ending[-1:])
            else:
                p.write(msg + ending)
            assert p.t.recv(scaled(1.0)) == {"a": "x" * 92}
        p.write(b'{"a":"' + b"x" * 93 + b'"}\r\n{"ok":1}\n')
        with pytest.raises(MessageTooLarge, match="a line of 101 bytes"):
            p.t.recv(scaled(1.0))
        assert p.t.recv(scaled(1.0)) == {"ok": 1}
    finally:
        p.close()


def test_blank_lines_up_to_the_limit_between_two_messages_are_ignored(p: Pipes) -> None:
    """Blank lines (spaces, tabs, "\r") are skipped, up to the limit of bytes of them
    since the last message; a message starts the count again."""
    for _ in range(3):
        p.write(b"\n" * 500 + b" \t \r\n" * 100)  # 1,000 bytes: the limit
        p.write(b'{"a":1}\n')
        assert p.t.recv(scaled(1.0)) == {"a": 1}


def test_more_blank_lines_than_the_limit_are_malformed_and_the_stream_goes_on(
        p: Pipes) -> None:
    p.write(b"\n" * 1001 + b'{"a":2}\n')
    with pytest.raises(MalformedMessage, match="1001 bytes of blank lines in a row: blank "
                                               "lines are ignored, but at most 1000 bytes "
                                               "of them between two messages"):
        p.t.recv(scaled(1.0))
    assert p.t.recv(scaled(1.0)) == {"a": 2}


def test_a_flood_of_blank_lines_is_refused_after_a_read_not_read_line_by_line() -> None:
    """A peer writing newlines as fast as it can (the bot attacker's F4: 64 KiB blocks
    of "\n" for a whole turn, which cost the referee 0.42 s of CPU a second, one line
    at a time, and was never a fault): refused as malformed from the first read."""
    p = Pipes(max_bytes=8 << 10)
    stop = threading.Event()

    def flood() -> None:
        block = b"\n" * READ_CHUNK
        with contextlib.suppress(OSError):
            while not stop.is_set():
                os.write(p.bot_out, block)

    writer = threading.Thread(target=flood)
    writer.start()
    try:
        with pytest.raises(MalformedMessage, match="bytes of blank lines in a row"):
            p.t.recv(scaled(5.0))
        # What was read before the fault: a read or two, not the flood.
        assert p.t.received_bytes <= 2 * READ_CHUNK
        assert len(p.t._buf) <= READ_CHUNK
    finally:
        stop.set()
        p.t.close()  # the writer's pipe breaks: it stops
        writer.join()
        p.close()


def test_huge_line_is_never_buffered_whole() -> None:
    p = Pipes(max_bytes=1 << 16)
    total = 40 << 20
    biggest = 0

    def flood() -> None:
        chunk = b"[" * (1 << 20)
        for _ in range(total >> 20):
            os.write(p.bot_out, chunk)
        os.write(p.bot_out, b'\n{"after":true}\n')

    writer = threading.Thread(target=flood)
    writer.start()
    try:
        with pytest.raises(MessageTooLarge):
            p.t.recv(scaled(5.0))
        while True:
            try:
                msg = p.t.recv(scaled(5.0))
                break
            except TransportTimeout:
                continue
            finally:
                biggest = max(biggest, len(p.t._buf))
        assert msg == {"after": True}
        assert biggest <= (1 << 16) + READ_CHUNK
    finally:
        writer.join()
        p.close()


def test_end_of_stream_after_the_last_line(p: Pipes) -> None:
    p.write(b'{"last":1}\n{"cut')
    os.close(p.bot_out)
    assert p.t.recv(scaled(1.0)) == {"last": 1}
    with pytest.raises(TransportClosed, match="closed its stdout"):
        p.t.recv(scaled(1.0))


def test_exit_fd_ends_the_stream_even_if_the_pipe_stays_open(p: Pipes) -> None:
    p.write(b'{"said":"before exiting"}\n')
    os.write(p.exit_w, b"x")  # as a pidfd does when the bot exits
    assert p.t.recv(scaled(1.0)) == {"said": "before exiting"}
    with pytest.raises(TransportClosed, match="process exited"):
        p.t.recv(scaled(5.0))


def test_peer_that_never_reads_cannot_block_the_sender(p: Pipes) -> None:
    big = {"pad": "z" * 200_000}  # larger than the pipe's buffer
    with pytest.raises(TransportTimeout, match="stopped reading its stdin"):
        p.t.send(big)
    with pytest.raises(TransportClosed, match="stopped reading"):
        p.t.send({"type": "bye"})


def test_send_to_a_closed_stdin(p: Pipes) -> None:
    os.close(p.bot_in)
    with pytest.raises(TransportClosed, match="closed its stdin"):
        p.t.send({"type": "bye"})


def test_closed_transport_refuses_both_ways(p: Pipes) -> None:
    p.t.close()
    p.t.close()
    with pytest.raises(TransportClosed):
        p.t.recv(0.1)
    with pytest.raises(TransportClosed):
        p.t.send({})


def test_a_field_given_twice_counts_once_the_last_one() -> None:
    # PROTOCOL.md, framing: orjson's reading, documented rather than refused.
    assert decode(b'{"type":"decision","id":1,"decision":0,"decision":1}')["decision"] == 1


@pytest.mark.parametrize("number", [
    "18446744073709551616", "-9223372036854775809", "1" + "0" * 30, "1" + "0" * 400,
])
def test_an_integer_out_of_range_is_named_as_such_with_the_range(number: str) -> None:
    # orjson reads such an integer as a float (or as "infinity"): it used to be called
    # a number with a fraction (suggesting another number), or "not JSON".
    line = f'{{"type": "decision", "id": {number}, "decision": 0}}'.encode()
    with pytest.raises(MalformedMessage) as e:
        decode(line)
    text = str(e.value)
    shown = number if len(number) <= 40 else f"{number[:20]}...{number[-5:]} (401 digits)"
    assert text.startswith(f"a line holding the integer {shown}, out of range: an integer "
                           "must be from -9223372036854775808 to 18446744073709551615 "
                           "(-2^63 to 2^64-1)"), text
    assert "fraction" not in text and "not JSON" not in text


def test_integers_at_the_ends_of_the_range_are_read() -> None:
    assert decode(b'{"id": 18446744073709551615}')["id"] == 2**64 - 1
    assert decode(b'{"id": -9223372036854775808}')["id"] == -(2**63)
    assert decode(b'{"name": "1234567890123456789012"}')["name"] == "1234567890123456789012"


def test_invalid_utf8_names_the_byte_and_its_offset() -> None:
    with pytest.raises(MalformedMessage) as e:
        decode(b'{"type": "hello", "name": "\xff\xfe\xfa"}')
    assert str(e.value).startswith(
        "a line that is not valid UTF-8 (byte 0xff at offset 27: invalid start byte)")
    assert "surrogates" not in str(e.value)


def test_pre_encoded_events_send_the_very_bytes_of_event_dicts() -> None:
    """A request whose events are the stdio transport's fragments (each event encoded
    once, for every seat and request that carries it) is byte for byte the request
    with the events as dicts, over whole games with private events (deal, draw,
    fail) filtered for each seat."""
    from referee.game import Game, GameConfig
    from referee.game.events import events_for
    from referee.players.external import _event_dicts, _event_fragments
    from referee.transport.stdio import encode, fragment

    checked = 0
    for players in (2, 4):
        for seed in range(3):
            game = Game(GameConfig(players=players), seed)
            seen = [0] * players
            while not game.over:
                for seat in game.to_decide():
                    evs = events_for(game.events[seen[seat]:], seat)
                    seen[seat] = len(game.events)
                    as_dicts = encode({"type": "request", "events": _event_dicts(evs)})
                    assert encode({"type": "request", "events":
                                   _event_fragments(evs, fragment)}) == as_dicts
                    checked += len(evs)
                    game.apply(seat, game.legal(seat)[0])
    assert checked > 1000
