"""Remote ZeroMQ bots: admitted by their CURVE key, refused (and the refusal logged)
without it.  The "remote" bot is tests/transport/zmq/zmq_bot.py started by the test itself,
as its author would start it, given the endpoint and keys in its environment."""

from __future__ import annotations

import contextlib
import logging
import re
import shutil
import subprocess
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
import pytest
import zmq

from referee.bots import make_bot
from referee.game import GameConfig
from referee.play.runner import InProcessPlayer, TimeControl, run_game
from referee.players.external import remote_player
from referee.transport.base import (
    ConnectionCut,
    MalformedMessage,
    MessageTooLarge,
    TransportClosed,
    TransportTimeout,
)
from referee.transport.zmq import watchdog
from referee.transport.zmq.listener import RemoteListener, wait_for_remote_bot
from referee.transport.zmq.router import Refusal, is_loopback
from tests.procs import scaled

pytestmark = pytest.mark.slow

TC = TimeControl(startup=scaled(20.0), per_decision=scaled(20.0), bank=0.0)

SERVER_PUBLIC, SERVER_SECRET = zmq.curve_keypair()
ALICE = zmq.curve_keypair()
BOB = zmq.curve_keypair()
MALLORY = zmq.curve_keypair()

Start = Callable[..., subprocess.Popen[bytes]]


@pytest.fixture
def start_bot(remote_bot: Start) -> Start:
    """Start the test bot as a remote author would: env keys, --connect."""

    def start(endpoint: str, name: str, keypair: tuple[bytes, bytes] | None,
              server_key: bytes | None = SERVER_PUBLIC, *extra: str) -> subprocess.Popen[bytes]:
        env = {}
        if keypair is not None and server_key is not None:
            env = {"UPDOWN_SERVER_KEY": server_key.decode(),
                   "UPDOWN_PUBLIC_KEY": keypair[0].decode(),
                   "UPDOWN_SECRET_KEY": keypair[1].decode()}
        return remote_bot(endpoint, name, env, *extra)

    return start


def wait_for(cond: Callable[[], bool], listener: RemoteListener, limit: float = 20.0) -> None:
    """Let the listener work (refusing what comes) until ``cond`` holds."""
    end = time.monotonic() + scaled(limit)
    while not cond():
        assert time.monotonic() < end, "condition not reached"
        with pytest.raises(TransportTimeout):
            listener.accept(0.02)


def test_is_loopback() -> None:
    for e in ("ipc:///tmp/x", "tcp://127.0.0.1:5555", "tcp://127.0.0.2:*", "tcp://[::1]:5",
              "tcp://localhost:1"):
        assert is_loopback(e), e
    for e in ("tcp://0.0.0.0:5555", "tcp://*:5555", "tcp://192.168.1.4:5", "tcp://eth0:5",
              "pgm://x"):
        assert not is_loopback(e), e


def test_curve_required_off_loopback() -> None:
    with pytest.raises(ValueError, match="needs CURVE"):
        RemoteListener("tcp://0.0.0.0:*", {"alice": ALICE[0]}, None)


def test_admitted_with_its_key_plays_a_game(start_bot: Start) -> None:
    listener = RemoteListener("tcp://127.0.0.1:*", {"alice": ALICE[0], "bob": BOB[0]},
                              SERVER_SECRET)
    try:
        start_bot(listener.endpoint, "bob", BOB)
        start_bot(listener.endpoint, "alice", ALICE)
        alice = remote_player("alice", listener, wait=20, time_control=TC)
        bob = remote_player("bob", listener, wait=20, time_control=TC)
        rec = run_game(GameConfig(players=3), 11,
                       [alice, InProcessPlayer(make_bot("random")), bob], time_control=TC)
        assert not rec.faults
        assert alice.hello is not None and alice.hello.name == "alice"
        alice.close()
        bob.close()
        assert listener.refusals == 0
    finally:
        listener.close()


@pytest.mark.parametrize(("case", "logged"), [
    ("unknown key", r"is not allowed \(it is no listed bot's public key\)"),
    # The server sees the mismatch, or the client hangs up first on seeing it.
    ("no curve", "security mechanism mismatch: the client does not use CURVE|"
                 "broke off the handshake .*: most likely it does not use CURVE"),
    ("wrong server key", "the client used the wrong server key"),
])
def test_refused_without_credentials(start_bot: Start, tmp_path: Path,
                                     caplog: pytest.LogCaptureFixture, case: str,
                                     logged: str) -> None:
    caplog.set_level(logging.INFO, logger="referee.zmq")
    refusals: list[Refusal] = []  # as data, besides the log line
    listener = RemoteListener("tcp://127.0.0.1:*", {"alice": ALICE[0]}, SERVER_SECRET,
                              on_refusal=refusals.append)
    try:
        if case == "unknown key":
            start_bot(listener.endpoint, "alice", MALLORY)
        elif case == "no curve":
            start_bot(listener.endpoint, "alice", None)
        else:
            start_bot(listener.endpoint, "alice", ALICE, MALLORY[0])
        why = re.compile(f"(.* )?({logged})")
        wait_for(lambda: any(why.match(r.why) for r in list(refusals)), listener)
        refusal = next(r for r in list(refusals) if why.match(r.why))
        assert refusal.endpoint == listener.endpoint and refusal.count >= 1
        if case == "unknown key":
            assert refusal.who == MALLORY[0].decode()
        # The log line (logged before the refusal is reported) says the same.
        assert f"refused a connection on {listener.endpoint}: {refusal.why}" in caplog.text
        assert not listener.admitted
    finally:
        listener.close()
    assert (tmp_path / "alice-0.log").read_text() == ""  # it never got a message


def test_hello_must_name_the_key_owner(start_bot: Start, tmp_path: Path,
                                       caplog: pytest.LogCaptureFixture) -> None:
    listener = RemoteListener("tcp://127.0.0.1:*", {"alice": ALICE[0], "bob": BOB[0]},
                              SERVER_SECRET)
    try:
        impostor = start_bot(listener.endpoint, "alice", BOB)  # bob's key, alice's name
        wait_for(lambda: impostor.poll() is not None, listener)
        assert impostor.returncode == 0  # told why, and it left
        assert not listener.admitted
    finally:
        listener.close()
    assert 'its hello names "alice", but its CURVE key is "bob"\'s' in caplog.text
    told = (tmp_path / "alice-0.log").read_text()
    assert "'type': 'error'" in told and "refused" in told


def test_wait_for_remote_bot(start_bot: Start) -> None:
    # Fix the port first so that the bot can be started before the referee listens.
    probe = RemoteListener("tcp://127.0.0.1:*", {}, SERVER_SECRET)
    endpoint = probe.endpoint
    probe.close()
    start_bot(endpoint, "alice", ALICE)
    name, t = wait_for_remote_bot(endpoint, {"alice": ALICE[0]}, SERVER_SECRET, 20)
    try:
        assert name == "alice"
        assert t.recv(scaled(5)) == {"type": "hello", "protocol": [1], "name": "alice"}
        t.send({"type": "request", "id": 4})
        assert t.recv(scaled(20)) == {"type": "decision", "id": 4, "decision": 0}
    finally:
        t.close()
        t.close()


def test_remote_bot_gone_is_transport_closed(start_bot: Start) -> None:
    listener = RemoteListener("tcp://127.0.0.1:*", {"alice": ALICE[0]}, SERVER_SECRET)
    try:
        bot = start_bot(listener.endpoint, "alice", ALICE, SERVER_PUBLIC, "--silent")
        _, t = listener.accept(scaled(20))
        assert t.recv(scaled(5))["type"] == "hello"
        bot.kill()
        # No process to watch: the dropped connection tells (well before the timeout).
        with pytest.raises(TransportClosed, match="connection to tcp://127.0.0.1:.* was dropped"):
            t.recv(scaled(60))
        t.close()
        assert not listener.admitted  # alice may connect again
    finally:
        listener.close()


@pytest.mark.parametrize("frames, why", [
    ([b"", msgpack.packb({"type": "hello", "protocol": [1], "name": "alice"})],
     "its first message, which must be a hello, is unreadable: a message of 2 frames, "
     "where a message must be exactly one frame"),
    ([b'{"type":"hello","name":"alice"}'],
     "its first message, which must be a hello, is unreadable: a frame that is not a "
     "msgpack value"),
    ([msgpack.packb({"type": "hello", "protocol": [1]})], "its hello has no name"),
    ([msgpack.packb({"type": "decision", "id": 1})],
     'its first message is "decision", not a hello'),
    ([msgpack.packb({"type": "hello", "protocol": [1], "name": 7})],
     "its hello's name is 7, not a text"),
    ([msgpack.packb({"type": "hello", "protocol": [1], "name": "carol"})],
     'the name "carol" is not a listed bot'),
])
def test_a_refusal_says_what_was_wrong_with_the_first_message(
        frames: list[bytes], why: str, caplog: pytest.LogCaptureFixture) -> None:
    refusals: list[Refusal] = []
    listener = RemoteListener("tcp://127.0.0.1:*", {"alice": b""}, None,
                              on_refusal=refusals.append)
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    try:
        sock.connect(listener.endpoint)
        sock.send_multipart(frames)
        with caplog.at_level(logging.WARNING, "referee.zmq"), \
                pytest.raises(TransportTimeout):
            listener.accept(0.5, "alice")
        assert f"refused a bot on {listener.endpoint}: {why}" in caplog.text
        claimed = "carol" if "carol" in why else None
        [refusal] = refusals  # the refusal as data: who (the name claimed), why, how often
        assert refusal.why.startswith(why) and refusal.why in caplog.text
        assert (refusal.endpoint, refusal.who, refusal.count) == (listener.endpoint, claimed, 1)
        if len(frames) == 1:  # a DEALER hears why (a REQ socket would drop it)
            assert sock.poll(2000)
            reply = msgpack.unpackb(sock.recv())
            assert reply["type"] == "error" and reply["message"].startswith(f"refused: {why}")
    finally:
        sock.close(linger=0)
        ctx.term()
        listener.close()


class _Dealer:
    """A remote bot's socket, by hand: ``routing_id`` is one it sets itself (as many
    ZeroMQ programs do), or None for libzmq's own, new at each connection.  Each has
    a context of its own, so that ``close`` returns once the connection is closed."""

    def __init__(self, endpoint: str, routing_id: bytes | None, name: str = "alice",
                 first: list[bytes] | None = None) -> None:
        self.ctx = zmq.Context()
        self.sock = self.ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 1000)
        if routing_id is not None:
            self.sock.setsockopt(zmq.ROUTING_ID, routing_id)
        self.sock.connect(endpoint)
        # ``first``: the frames of its first message, in place of its hello
        self.sock.send_multipart(first or [msgpack.packb({"type": "hello", "protocol": [1],
                                                          "name": name})])

    def hears(self) -> Any:
        assert self.sock.poll(5000), "the bot heard nothing"
        return msgpack.unpackb(self.sock.recv())

    def close(self) -> None:
        self.sock.close()
        self.ctx.term()


@pytest.mark.parametrize("routing_id", [b"alice-7", None])
def test_a_bot_that_connects_again_is_a_new_connection(routing_id: bytes | None) -> None:
    # After losing its connection a bot connects again with a new socket and a new
    # hello (ZEROMQ.md).  Under its own routing id too, the new connection is a new
    # peer: not refused as "already connected" while the old one's player has not
    # yet noticed, its hello not read as the old connection's message, and messages
    # to it not held back as if it were the old one, gone.
    listener = RemoteListener("tcp://127.0.0.1:*", {"alice": b""}, None)
    bot: _Dealer | None = None
    try:
        bot = _Dealer(listener.endpoint, routing_id)
        _, first = listener.accept(scaled(5), "alice")
        assert first.recv(scaled(5))["type"] == "hello"
        first.send({"type": "welcome"})
        assert bot.hears() == {"type": "welcome"}
        # It drops and connects again; its old connection is noticed, then closed.
        bot.close()
        with pytest.raises(TransportClosed, match="was dropped"):
            first.recv(scaled(10))
        first.close()
        bot = _Dealer(listener.endpoint, routing_id)
        _, second = listener.accept(scaled(5), "alice")
        assert second.recv(scaled(5))["type"] == "hello"
        second.send({"type": "welcome", "n": 2})
        assert bot.hears() == {"type": "welcome", "n": 2}
        # It drops and connects again before anyone looks at its old connection:
        # the new one is admitted, the old one is gone.
        bot.close()
        bot = _Dealer(listener.endpoint, routing_id)
        _, third = listener.accept(scaled(10), "alice")
        assert third is not second
        with pytest.raises(TransportClosed):
            second.recv(scaled(5))
        with pytest.raises(TransportClosed):
            second.send({"type": "new_game"})
        assert third.recv(scaled(5))["type"] == "hello"
        third.send({"type": "welcome", "n": 3})
        assert bot.hears() == {"type": "welcome", "n": 3}
        second.close()
        assert listener.admitted == {"alice": third}
    finally:
        if bot is not None:
            bot.close()
        listener.close()


def test_a_routing_id_used_again_is_told_apart_from_its_old_connection() -> None:
    # libzmq reuses fd numbers, so a new connection under the same routing id
    # typically comes from the same fd as the old one: what the old one sent before
    # it dropped is still its own, what comes after is the new one's.
    listener = RemoteListener("tcp://127.0.0.1:*", {"alice": b""}, None)
    try:
        for i in range(3):
            bot = _Dealer(listener.endpoint, b"alice-7")
            _, t = listener.accept(scaled(5), "alice")
            assert t.recv(scaled(5))["type"] == "hello"
            t.send({"type": "welcome", "n": i})
            assert bot.hears() == {"type": "welcome", "n": i}
            bot.sock.send(msgpack.packb({"type": "decision", "id": i, "decision": 0}))
            bot.close()  # its decision sent, then gone: both are there to be read
            assert t.recv(scaled(5)) == {"type": "decision", "id": i, "decision": 0}
            with pytest.raises(TransportClosed):
                t.recv(scaled(5))
            t.close()
        hello = msgpack.packb({"type": "hello", "protocol": [1], "name": "alice"})
        for _ in range(3):  # a refused connection, then another: each is told why
            bot = _Dealer(listener.endpoint, b"alice-7", first=[b"", hello])
            with pytest.raises(TransportTimeout):
                listener.accept(0.5, "alice")
            assert bot.hears()["message"].startswith("refused: its first message, which "
                                                     "must be a hello, is unreadable")
            bot.close()
    finally:
        listener.close()


def test_a_refused_connection_on_a_reused_fd_is_told_even_read_with_the_old_drop() -> None:
    # The race that made the test above flaky, made certain: the old (refused)
    # connection's drop and the new connection's first message, a hello after a REQ
    # socket's empty frame, are read in one go.  That message is the new
    # connection's (it says hello), not the dropped one's last: it is refused and
    # told why, not dropped with the old connection's frames.
    listener = RemoteListener("tcp://127.0.0.1:*", {"alice": b""}, None)
    hello = msgpack.packb({"type": "hello", "protocol": [1], "name": "alice"})
    try:
        for _ in range(4):
            bot = _Dealer(listener.endpoint, b"alice-7", first=[b"", hello])
            # Wait, without reading anything, until the frame is there to be read.
            assert listener._router.sock.poll(5000, zmq.POLLIN)
            with pytest.raises(TransportTimeout):
                listener.accept(0, "alice")
            assert bot.hears()["message"].startswith("refused: its first message, which "
                                                     "must be a hello, is unreadable")
            bot.close()  # its drop is reported, but not read until the next accept
    finally:
        listener.close()


def test_a_listener_on_ipc_leaves_no_socket_file_behind() -> None:
    # libzmq leaves the socket file of an ipc:// endpoint behind when the socket is
    # closed: the listener removes it -- but only its own, not one another program
    # bound at the same path since.
    folder = Path(tempfile.mkdtemp(prefix="ipc-"))  # short: an ipc path is 107 bytes at most
    try:
        path = folder / "referee"
        listener = RemoteListener(f"ipc://{path}", {"alice": b""}, None)
        assert path.is_socket()
        listener.close()
        assert not path.exists()
        first = RemoteListener(f"ipc://{path}", {"alice": b""}, None)
        second = RemoteListener(f"ipc://{path}", {"alice": b""}, None)  # takes the path
        first.close()
        assert path.is_socket()
        second.close()
        assert list(folder.iterdir()) == []
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_flood_of_large_frames_is_not_held_in_memory() -> None:
    # Each frame is at most twice the limit (MAXMSGSIZE), but a bot sending hundreds
    # of them at once must not make the referee hold them all: a frame over the
    # limit is kept as its size only, and what is held for one bot is bounded.  On
    # Linux the connection is closed besides (the TCP watchdog: it sent far more than
    # it may between two messages read), once libzmq's queue is read.
    listener = RemoteListener("tcp://127.0.0.1:*", {"alice": b""}, None,
                              max_message_bytes=1 << 20)
    bot = _Dealer(listener.endpoint, None)
    tracemalloc.start()
    try:
        _, t = listener.accept(scaled(5), "alice")
        assert t.recv(scaled(5))["type"] == "hello"
        over, at_limit = b"o" * (3 << 19), b"\xc1" * (1 << 20)  # sent without copies
        for _ in range(150):
            bot.sock.send(over, copy=False)
            bot.sock.send(at_limit, copy=False)
        bot.sock.send(msgpack.packb({"type": "decision", "id": 1, "decision": 0}))
        time.sleep(scaled(0.5))  # let them queue up (if not, the test asks less, never fails)
        tracemalloc.reset_peak()
        seen: list[str] = []
        with contextlib.suppress(TransportTimeout):
            for _ in range(400):
                try:
                    seen.append(t.recv(0.5)["type"])
                except (MessageTooLarge, MalformedMessage) as e:
                    seen.append(type(e).__name__)
                except ConnectionCut:
                    seen.append("cut")
                    break
        peak = tracemalloc.get_traced_memory()[1]
        assert peak < 32 << 20, f"{peak >> 20} MiB held"
        assert (seen[-1] == "cut") == watchdog.AVAILABLE, seen
        if seen[0] != "cut":  # (cut before libzmq queued anything: nothing to read)
            assert seen[0] == "MessageTooLarge"
            assert "MalformedMessage" in seen and len(seen) < 301  # some were dropped
        t.close()
    finally:
        tracemalloc.stop()
        bot.close()
        listener.close()


def test_a_refused_connection_cannot_crowd_out_a_bot_that_comes_later() -> None:
    # What a refused connection sends is dropped as it arrives: read while other
    # bots play (their transports share the socket), it would otherwise fill what
    # is held for connections not yet admitted, and a bot's hello coming after it
    # would be dropped -- the bot waiting for its welcome for ever.
    listener = RemoteListener("tcp://127.0.0.1:*", {"alice": b"", "bob": b""}, None)
    ctx = zmq.Context()
    mallory = ctx.socket(zmq.DEALER)
    alice: _Dealer | None = None
    bob: _Dealer | None = None
    try:
        alice = _Dealer(listener.endpoint, None)
        _, playing = listener.accept(scaled(5), "alice")
        mallory.connect(listener.endpoint)
        mallory.send(msgpack.packb({"type": "hello", "protocol": [1], "name": "mallory"}))
        with pytest.raises(TransportTimeout):
            listener.accept(0.5, "bob")  # mallory is refused meanwhile
        junk = b"\xc1" * (1 << 20)
        for _ in range(10):
            mallory.send(junk, copy=False)
        time.sleep(scaled(0.3))  # the junk arrives (if not yet, the test asks less)
        assert playing.recv(scaled(1))["type"] == "hello"  # alice's game reads the socket
        with pytest.raises(TransportTimeout):
            playing.recv(0.3)
        bob = _Dealer(listener.endpoint, None, "bob")
        time.sleep(scaled(0.3))
        with pytest.raises(TransportTimeout):
            playing.recv(0.3)  # reads bob's hello too
        name, t = listener.accept(scaled(5), "bob")
        assert name == "bob" and t.recv(scaled(1))["type"] == "hello"
    finally:
        for b in (alice, bob):
            if b is not None:
                b.close()
        mallory.close(linger=0)
        ctx.term()
        listener.close()
