"""Launched ZeroMQ bots: real sockets, real subprocesses (tests/transport/zmq/zmq_bot.py).

The transport alone (handshake, decisions, faults as transport errors), then whole
games through ``zmq_player`` and ``run_game`` (faults as the runner records them),
and the clean-up: no process, socket file or directory left behind.
"""

from __future__ import annotations

import os
import signal
import socket
import struct
import sys
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import msgpack
import pytest

from referee.bots import make_bot
from referee.game import GameConfig
from referee.play.runner import FaultPolicy, InProcessPlayer, TimeControl, run_game
from referee.players.external import bench_game_zmq, zmq_player
from referee.players.launcher import LaunchedZmqBot, bot_env, launch_zmq_bot
from referee.players.process import live_bots
from referee.protocol.messages import MESSAGES
from referee.transport.base import (
    MalformedMessage,
    MessageTooLarge,
    TransportClosed,
    TransportTimeout,
)
from referee.transport.zmq.codec import MESSAGE_FIELDS, decode_frame
from referee.transport.zmq.direct import _GREETING, DirectZmqTransport, _command, _frame
from tests.procs import scaled

pytestmark = pytest.mark.slow

BOT = [sys.executable, str(Path(__file__).with_name("zmq_bot.py"))]
TC = TimeControl(startup=scaled(20.0), per_decision=scaled(20.0), bank=0.0)  # generous


@pytest.fixture
def launched() -> Iterator[list[LaunchedZmqBot]]:
    bots: list[LaunchedZmqBot] = []
    yield bots
    for b in bots:
        b.close()
    assert not live_bots()


def launch(bots: list[LaunchedZmqBot], *args: str, transport: str = "ipc",
           max_message_bytes: int = 1 << 20) -> LaunchedZmqBot:
    b = launch_zmq_bot([*BOT, *args], transport=transport, memory_mb=None,
                       max_message_bytes=max_message_bytes)
    bots.append(b)
    return b


# --- the codec, no sockets ---------------------------------------------------------------


def test_decode_frame() -> None:
    msg = {"type": "decision", "id": 3, "decision": "play C3"}
    assert decode_frame([msgpack.packb(msg)], 100) == msg
    # Each error is a noun phrase completing "the bot replied with ...".
    with pytest.raises(MalformedMessage, match="^a frame that is not a msgpack value"):
        decode_frame([b"\xc1"], 100)
    with pytest.raises(MalformedMessage, match="^a frame that is not a msgpack value"):
        decode_frame([msgpack.packb(1) + b"extra"], 100)
    with pytest.raises(MalformedMessage, match=r"^a msgpack array, where a message must be one "
                                               r"msgpack map: \[1,2\]$"):
        decode_frame([msgpack.packb([1, 2])], 100)
    with pytest.raises(MalformedMessage, match="^msgpack nil, where a message must be one "
                                               "msgpack map: null$"):
        decode_frame([msgpack.packb(None)], 100)
    with pytest.raises(MalformedMessage, match="^a message of 2 frames, where a message must "
                                               "be exactly one frame"):
        decode_frame([b"", msgpack.packb(msg)], 100)
    with pytest.raises(MessageTooLarge, match="^a frame of 101 bytes, over the limit of 100$"):
        decode_frame([b"\x00" * 101], 100)


@pytest.mark.parametrize("data, why", [
    (b"", "an empty frame, where a message must be one msgpack map"),
    (b"\xc1", "(a byte that starts no msgpack value)"),
    (b"\x91" * 2000 + b"\xc0", "(values nested too deeply)"),
    (msgpack.packb({"type": "decision"}) + b"x", "(more bytes after the first value)"),
    (msgpack.packb({"type": "decision"})[:-2], "(it ends before its value does)"),
    (b"\x84\x01", "(it ends before its value does)"),  # a map of 4 in 2 bytes
    (msgpack.packb({1: 2}), "(a map key that is not a string)"),
    (b"\x81\xa4type\xa3\xff\xfe\xfd",
     "(a string that is not UTF-8: byte 0xff at offset 0 of the string: invalid start byte)"),
])
def test_an_undecodable_frame_says_what_is_wrong_with_it(data: bytes, why: str) -> None:
    # In msgpack's terms, never an empty "(StackError: )" or Python's own arguments.
    with pytest.raises(MalformedMessage) as e:
        decode_frame([data], 1 << 20)
    assert str(e.value).endswith(why)
    assert "Error" not in str(e.value) and "strict_map_key" not in str(e.value)


def test_only_the_fields_of_the_protocol_are_built() -> None:
    """A field the protocol does not have is skipped, nothing made of it: a message
    nobody asked for, 8,000 empty lists under one such field, costs the referee no
    allocation (and no collector's pass); the protocol's fields are decoded and
    checked as ever, and the codec's list is the protocol's."""
    fields = {f.name for m in MESSAGES.values() if m.sender == "bot" for f in m.fields}
    assert fields | {"type"} == MESSAGE_FIELDS
    bomb = msgpack.packb({"type": "decision", "id": -1, "decision": 0, "x": [[]] * 8000,
                          "name": "n", "y": {"z": b"\xff"}})
    tracemalloc.start()
    try:
        assert decode_frame([bomb], 1 << 20) == {"type": "decision", "id": -1,
                                                 "decision": 0, "name": "n"}
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 128 << 10, peak  # a copy of the frame; the 8,000 lists take ~450 KB
    with pytest.raises(MalformedMessage, match="a string that is not UTF-8"):
        decode_frame([b"\x82\xa1x\x90\xa4type\xa1\xff"], 100)


# --- the transport -----------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["ipc", "tcp"])
def test_handshake_and_decision(launched: list[LaunchedZmqBot], transport: str) -> None:
    b = launch(launched, transport=transport)
    t = b.transport
    assert t.endpoint.startswith(f"{transport}://")
    assert t.recv(scaled(20)) == {"type": "hello", "protocol": [1], "name": "zmqbot",
                          "token": t.token}
    t.send({"type": "request", "id": 7, "legal": ["a"]})
    assert t.recv(scaled(20)) == {"type": "decision", "id": 7, "decision": 0}
    t.send({"type": "bye", "reason": "test"})
    with pytest.raises(TransportClosed, match="exited with code 0"):
        t.recv(scaled(20))


def test_ipc_files_and_process_cleaned_up(launched: list[LaunchedZmqBot]) -> None:
    b = launch(launched)
    path = Path(b.transport.endpoint.removeprefix("ipc://"))
    assert b.transport.recv(scaled(20))["type"] == "hello"
    assert path.parent.is_dir() and oct(path.parent.stat().st_mode & 0o777) == "0o700"
    b.close()
    b.close()  # idempotent
    assert b.process.returncode is not None
    assert not path.parent.exists()
    with pytest.raises(TransportClosed):
        b.transport.recv(0)


def test_timeout(launched: list[LaunchedZmqBot]) -> None:
    t = launch(launched, "--silent").transport
    assert t.recv(scaled(20))["type"] == "hello"
    t.send({"type": "request", "id": 1})
    with pytest.raises(TransportTimeout):
        t.recv(0.05)


def test_killed_bot_is_transport_closed(launched: list[LaunchedZmqBot]) -> None:
    b = launch(launched, "--silent")
    assert b.transport.recv(scaled(20))["type"] == "hello"
    os.kill(b.process.pid, signal.SIGKILL)
    # Noticed at once through the process, not after the (long) timeout.
    with pytest.raises(TransportClosed, match="killed by signal 9"):
        b.transport.recv(scaled(60))


def test_garbage_and_multipart_are_malformed(launched: list[LaunchedZmqBot]) -> None:
    for flag, match in (("--garbage", "a frame that is not a msgpack value"),
                        ("--not-a-map", "a msgpack array, where a message must be one "
                                        "msgpack map"),
                        ("--two-frames", "a message of 2 frames, where a message must be "
                                         "exactly one frame")):
        t = launch(launched, flag).transport
        assert t.recv(scaled(20))["type"] == "hello"
        t.send({"type": "request", "id": 1})
        with pytest.raises(MalformedMessage, match=match):
            t.recv(scaled(20))
        t.send({"type": "request", "id": 2})  # the connection is still good
        assert t.recv(scaled(20)) == {"type": "decision", "id": 2, "decision": 0}


def test_oversized_frame(launched: list[LaunchedZmqBot]) -> None:
    t = launch(launched, "--oversize", "6000", max_message_bytes=4096).transport
    assert t.recv(scaled(20))["type"] == "hello"
    t.send({"type": "request", "id": 1})
    with pytest.raises(MessageTooLarge, match="6000 bytes, over the limit of 4096"):
        t.recv(scaled(20))
    t.send({"type": "request", "id": 2})
    assert t.recv(scaled(20))["id"] == 2


def test_frame_over_zmq_limit_drops_connection(launched: list[LaunchedZmqBot]) -> None:
    # Over twice the limit libzmq refuses to read the frame at all (MAXMSGSIZE).
    t = launch(launched, "--oversize", "50000", max_message_bytes=4096).transport
    assert t.recv(scaled(20))["type"] == "hello"
    t.send({"type": "request", "id": 1})
    with pytest.raises(TransportClosed, match="hard limit of 8192 bytes"):
        t.recv(scaled(20))


# --- whole games -------------------------------------------------------------------------


def test_full_games_against_builtin_and_each_other() -> None:
    a = zmq_player("za", BOT, time_control=TC, memory_mb=None)
    b = zmq_player("zb", BOT, time_control=TC, memory_mb=None, transport="tcp")
    try:
        for seed in (1, 2):
            rec = run_game(GameConfig(players=2), seed, [a, InProcessPlayer(make_bot("random"))],
                           time_control=TC)
            assert not rec.faults and rec.ended.how
        rec = run_game(GameConfig(players=3), 3, [a, b, InProcessPlayer(make_bot("lowest"))],
                       time_control=TC)
        assert not rec.faults
        assert a.starts == 1 and b.starts == 1  # one bot process across the games
        procs = [p.conn.process for p in (a, b) if p.conn is not None]
    finally:
        a.close()
        b.close()
    assert all(p is not None and p.returncode is not None for p in procs)
    assert not live_bots()


@pytest.mark.parametrize(("args", "kind"), [
    (["--garbage"], "malformed"),
    (["--oversize", "6000"], "oversized"),
])
def test_faults_in_a_game(args: list[str], kind: str) -> None:
    p = zmq_player("bad", [*BOT, *args], time_control=TC, memory_mb=None,
                   max_message_bytes=4096)
    try:
        rec = run_game(GameConfig(players=2), 5, [p, InProcessPlayer(make_bot("random"))],
                       time_control=TC)
    finally:
        p.close()
    assert [(f.kind, f.action) for f in rec.faults] == [(kind, "substituted")]
    assert [d["seat"] for d in rec.decisions if d.get("substituted")] == [0]


def test_bot_dying_mid_game_forfeits() -> None:
    p = zmq_player("dies", [*BOT, "--die-after", "3"], time_control=TC, memory_mb=None)
    try:
        rec = run_game(GameConfig(players=2), 7, [p, InProcessPlayer(make_bot("random"))],
                       time_control=TC, policy=FaultPolicy())
    finally:
        p.close()
    assert len(rec.faults) == 1
    f = rec.faults[0]
    assert (f.kind, f.action) == ("crash", "forfeit")
    assert "exited with code 3" in f.detail
    assert rec.places[0] == 2
    assert not live_bots()


def test_bot_env_never_passes_on_keys() -> None:
    env = bot_env("ipc:///x/bot", base={"PATH": "/bin", "UPDOWN_SECRET_KEY": "s",
                                        "UPDOWN_PUBLIC_KEY": "p", "UPDOWN_SERVER_KEY": "k"})
    assert env == {"PATH": "/bin", "UPDOWN_ENDPOINT": "ipc:///x/bot", "UPDOWN_TRANSPORT": "zmq"}


def test_bench_game_zmq() -> None:
    r = bench_game_zmq(1)
    assert r.games == 1 and r.decisions > 0 and r.seconds > 0 and r.cpu > 0
    assert not live_bots()


# --- ZeroMQ's wire spoken by the game's thread (transport/zmq/direct.py) ---------------

# The bot's libzmq PINGs every 20 ms and drops the connection when nothing comes back
# for HB_TIMEOUT_MS; it thinks longer than that on its first request, while the
# referee waits on its socket and must answer the PINGs.  Between the bot's turns the
# referee does not read the socket, so the timeout is a second (times the suite's time
# factor): a busy machine may keep the referee's thread off the CPU for a few hundred
# milliseconds, and a 200 ms timeout then dropped the bot (seen in a soak run at load 20).
HEARTBEAT_BOT = r"""
import os, time, msgpack, zmq
timeout_ms = int(os.environ["HB_TIMEOUT_MS"])
ctx = zmq.Context()
sock = ctx.socket(zmq.DEALER)
sock.setsockopt(zmq.LINGER, 0)
sock.setsockopt(zmq.HEARTBEAT_IVL, 20)              # a PING every 20 ms ...
sock.setsockopt(zmq.HEARTBEAT_TIMEOUT, timeout_ms)  # ... dropped without PONGs
sock.connect(os.environ["UPDOWN_ENDPOINT"])
sock.send(msgpack.packb({"type": "hello", "protocol": [1], "name": "hb",
                         "token": os.environ["UPDOWN_TOKEN"]}))
while True:
    msg = msgpack.unpackb(sock.recv(), raw=False)
    if msg["type"] == "request":
        # longer than the heartbeat timeout
        time.sleep(1.5 * timeout_ms / 1000 if msg["id"] == 1 else 0)
        sock.send(msgpack.packb({"type": "decision", "id": msg["id"], "decision": 0}))
    elif msg["type"] in ("bye", "error"):
        break
sock.close(); ctx.term()
"""


def test_a_launched_bot_is_served_by_the_games_thread_with_no_libzmq_socket(
        launched: list[LaunchedZmqBot]) -> None:
    from referee.transport.zmq.direct import DirectZmqTransport

    b = launch(launched)
    assert isinstance(b.transport, DirectZmqTransport)
    hello = b.transport.recv(20)
    assert hello["type"] == "hello"
    # once the bot is in, its endpoint is closed to anyone else
    assert not os.path.exists(b.transport.endpoint[len("ipc://"):])
    assert b.transport.wait_handles()


def test_a_bot_with_heartbeats_is_answered_and_keeps_its_connection() -> None:
    timeout_ms = int(scaled(1.0) * 1000)
    p = zmq_player("hb", [sys.executable, "-c", HEARTBEAT_BOT],
                   env={**os.environ, "HB_TIMEOUT_MS": str(timeout_ms)}, time_control=TC,
                   memory_mb=None)
    try:
        rec = run_game(GameConfig(players=2), 4, [p, InProcessPlayer(make_bot("random"))],
                       time_control=TC)
    finally:
        p.close()
    assert not rec.faults, rec.faults
    assert not live_bots()


def test_zeromq_bots_in_flight_in_one_loop_play_their_games_as_one_at_a_time() -> None:
    from referee.play.runner import game_steps
    from referee.players.concurrent import GameLoop

    seats = [zmq_player(f"z{i}", BOT, time_control=TC, memory_mb=None) for i in range(4)]
    try:
        got = {}
        loop = GameLoop()
        for g in range(2):
            loop.start(game_steps(GameConfig(players=2), 20 + g, seats[2 * g: 2 * g + 2],
                                  time_control=TC),
                       lambda rec, err, g=g: got.__setitem__(g, (rec, err)))
        loop.run()
        for g in range(2):
            rec, err = got[g]
            assert err is None and not rec.faults
            again = run_game(GameConfig(players=2), 20 + g, seats[2 * g: 2 * g + 2],
                             time_control=TC)
            assert rec.events == again.events and rec.result == again.result
    finally:
        for p in seats:
            p.close()
    assert not live_bots()


def test_bench_game_zmq_through_libzmq_too() -> None:
    r = bench_game_zmq(1, direct=False)
    assert r.games == 1 and r.decisions > 0
    assert not live_bots()


def test_a_reply_reads_the_same_in_one_piece_as_in_pieces() -> None:
    """The direct transport's fast path (a reply arriving as one whole one-frame
    message) gives what its general path gives for the same bytes split across reads,
    or two messages in one read -- and the same error for a frame that is not
    msgpack.  A raw ZMTP DEALER plays the bot, byte by byte."""
    t = DirectZmqTransport(name="raw")
    peer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        peer.connect(t.path)
        ready = _command(b"READY", b"\x0bSocket-Type" + struct.pack(">I", 6) + b"DEALER")
        hello = {"type": "hello", "protocol": [1], "name": "raw"}
        peer.sendall(_GREETING + ready + _frame(msgpack.packb(hello)))
        assert t.recv(scaled(5.0)) == hello  # the general path: greeting, READY, hello
        reply = _frame(msgpack.packb({"type": "decision", "id": 7, "decision": 0}))
        want = {"type": "decision", "id": 7, "decision": 0}
        peer.sendall(reply)  # one read: the fast path
        assert t.recv(scaled(5.0)) == want
        peer.sendall(reply[:3])  # part of it: the general path waits for the rest
        with pytest.raises(TransportTimeout):
            t.recv(0.05)
        peer.sendall(reply[3:])
        assert t.recv(scaled(5.0)) == want
        peer.sendall(reply + reply)  # two in one read
        assert t.recv(scaled(5.0)) == want
        assert t.recv(scaled(5.0)) == want
        peer.sendall(_frame(b"\xc1"))  # not msgpack: the same error either way
        with pytest.raises(MalformedMessage) as fast:
            t.recv(scaled(5.0))
        peer.sendall(_frame(b"\xc1")[:1])
        with pytest.raises(TransportTimeout):
            t.recv(0.05)
        peer.sendall(_frame(b"\xc1")[1:])
        with pytest.raises(MalformedMessage) as general:
            t.recv(scaled(5.0))
        assert str(fast.value) == str(general.value)
    finally:
        peer.close()
        t.close()


def test_a_message_larger_than_the_socket_buffer_arrives_once_and_whole() -> None:
    """The direct transport's socket is non-blocking: a message that does not fit in
    the socket's buffer is sent in parts as the bot reads, each byte once (sendall on
    a non-blocking socket may send part of it and then raise, and nobody can tell
    how much: the whole message sent again would corrupt the stream)."""
    import threading

    t = DirectZmqTransport(name="raw")
    peer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    got = bytearray()
    try:
        peer.connect(t.path)
        ready = _command(b"READY", b"\x0bSocket-Type" + struct.pack(">I", 6) + b"DEALER")
        peer.sendall(_GREETING + ready
                     + _frame(msgpack.packb({"type": "hello", "protocol": [1], "name": "raw"})))
        assert t.recv(scaled(5.0))["type"] == "hello"
        # far more than a socket's buffer holds, its end told from its middle
        message = {"type": "note", "text": "x" * (4 << 20) + "the end"}
        frame = _frame(msgpack.packb(message))
        # what the peer has had so far: the transport's greeting and READY
        peer.settimeout(scaled(10.0))
        before = bytearray()
        while len(before) < len(_GREETING):
            chunk = peer.recv(1 << 16)
            assert chunk
            before += chunk

        done = threading.Event()

        def read() -> None:
            try:
                while not done.is_set():
                    chunk = peer.recv(1 << 16)
                    if not chunk:
                        return
                    got.extend(chunk)
            except (TimeoutError, OSError):
                return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        t.send(message)
        # everything the transport sent is in the kernel now: wait for the reader to
        # have the frame's last bytes (or to give up), then wake it
        while reader.is_alive() and not got.endswith(frame[-64:]):
            reader.join(0.05)
        done.set()
        peer.shutdown(socket.SHUT_RD)
        reader.join(scaled(10.0))
        tail = bytes(before[len(_GREETING):]) + bytes(got)
        assert tail.endswith(frame)
        assert len(tail) - len(frame) <= 64  # READY, then the frame: nothing twice
        assert tail.count(frame[:4096]) == 1
    finally:
        peer.close()
        t.close()


def _raw_bot(t: DirectZmqTransport) -> socket.socket:
    """A raw ZMTP DEALER connected to ``t`` and admitted (its hello read)."""
    peer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    peer.connect(t.path)
    ready = _command(b"READY", b"\x0bSocket-Type" + struct.pack(">I", 6) + b"DEALER")
    peer.sendall(_GREETING + ready
                 + _frame(msgpack.packb({"type": "hello", "protocol": [1], "name": "raw"})))
    assert t.recv(scaled(5.0))["type"] == "hello"
    return peer


def _more(payload: bytes) -> bytes:
    return bytes([1 | (2 if len(payload) > 255 else 0)]) + (
        struct.pack(">Q", len(payload)) if len(payload) > 255 else bytes([len(payload)])
    ) + payload


@pytest.mark.parametrize("part", [8192, 100, 0])
def test_a_message_in_parts_is_kept_nowhere_and_cut_off_at_the_limit(part: int) -> None:
    """A multi-part message is malformed whatever it holds: none of its parts is
    kept.  One whose parts stay within the limit (headers counted) is a fault and
    the connection stays; one whose parts pass it -- however small each part,
    empty ones too -- is refused as it arrives: a fault saying so, then the
    connection is gone, the rest never read."""
    t = DirectZmqTransport(name="raw", max_message_bytes=8192)
    peer = _raw_bot(t)
    try:
        peer.sendall(_more(b"") + _frame(b"\x80"))  # two parts, 4 bytes: the connection stays
        with pytest.raises(MalformedMessage, match="a message of 2 frames"):
            t.recv(scaled(5.0))
        peer.sendall(_frame(msgpack.packb({"type": "decision", "id": 1, "decision": 0})))
        assert t.recv(scaled(5.0))["id"] == 1
        # parts without end, sent a few at a time as the referee reads
        one = _more(b"p" * part)
        n = 8192 // len(one) + 1
        peer.sendall(one * n)
        with pytest.raises(MalformedMessage) as e:
            t.recv(scaled(5.0))
        assert str(e.value) == (
            f"a message of several parts (at least {max(2, n)} so far, {n * len(one)} bytes "
            f"with their frame headers), over the limit of 8192 bytes (a message must be one "
            f"frame); the connection is dropped")
        assert t._bot is not None and not t._bot.parts and not t._bot.buf
        with pytest.raises(TransportClosed, match="it sent a message of several parts"):
            t.recv(scaled(5.0))
    finally:
        peer.close()
        t.close()


@pytest.mark.parametrize("size", [513, 50 << 20])
def test_a_command_frame_over_its_bound_is_refused_unread(size: int) -> None:
    """A PING of up to 23 bytes is answered; a command frame over 512 bytes is
    refused from its header (a 50 MB one: its body is never sent, nothing waits
    for it): a fault, and the connection is gone."""
    t = DirectZmqTransport(name="raw")
    peer = _raw_bot(t)
    try:
        peer.sendall(_command(b"PING", b"\x00\x0a" + b"c" * 16)
                     + _frame(msgpack.packb({"type": "decision", "id": 1, "decision": 0})))
        assert t.recv(scaled(5.0))["id"] == 1
        peer.sendall(bytes([4 | 2]) + struct.pack(">Q", size) + b"\x04PING\x00\x0a")
        with pytest.raises(MalformedMessage, match=f"a ZeroMQ command frame of {size} bytes, "
                                                   f"over the limit of 512 bytes"):
            t.recv(scaled(5.0))
        with pytest.raises(TransportClosed, match="it sent a ZeroMQ command frame"):
            t.recv(scaled(5.0))
    finally:
        peer.close()
        t.close()
