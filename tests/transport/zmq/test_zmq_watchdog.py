"""What a remote ZeroMQ bot's TCP connection may send between two messages
(referee/transport/zmq/watchdog.py).  libzmq holds the parts of a message until its
last one, so the kernel's count of each connection's bytes received decides: a
connection that owes a message for more bytes than it may is shut down, and the bot
is told so as a fault.  Over real TCP: a raw ZMTP peer (nothing buffered on its side)
against a RemoteListener, and against ``referee play`` with a ``remote:`` seat."""

from __future__ import annotations

import logging
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import msgpack
import pytest

from referee.transport.base import ConnectionCut, TransportTimeout
from referee.transport.zmq.listener import RemoteListener
from referee.transport.zmq.watchdog import AVAILABLE, TcpWatch, bytes_received, connection_limit
from tests.procs import REFEREE_WITH_PEAK_RSS, Children, peak_rss_mb, scaled

pytestmark = [
    pytest.mark.slow,
    # TCP_INFO is Linux's; CI runs there, so CI never skips.
    pytest.mark.skipif(not AVAILABLE and os.environ.get("CI") != "true",
                       reason="the TCP watchdog needs Linux's TCP_INFO"),
]

REPO = Path(__file__).resolve().parents[3]
ATTACKER = REPO / "tests" / "bots" / "attack_zmtp.py"


def _until(cond: Callable[[], bool], what: str, limit: float = 10.0) -> None:
    end = time.monotonic() + scaled(limit)
    while not cond():
        assert time.monotonic() < end, f"never: {what}"
        time.sleep(0.001)


@pytest.fixture
def tcp_pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    """A connected TCP pair on loopback: (the peer's end, the referee's end)."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        peer = socket.create_connection(server.getsockname())
        ours, _ = server.accept()
    with peer, ours:
        yield peer, ours


def _send(peer: socket.socket, ours: socket.socket, n: int) -> None:
    """``n`` more bytes from the peer, once the kernel has counted them."""
    got = bytes_received(ours.fileno())
    assert got is not None
    peer.sendall(b"x" * n)
    _until(lambda: (bytes_received(ours.fileno()) or (0, 0))[1] >= got[1] + n,
           f"{n} bytes received")


def test_a_connection_may_send_its_limit_between_two_messages_and_no_more(
        tcp_pair: tuple[socket.socket, socket.socket]) -> None:
    """The count starts at the connection's first byte and again at each message
    read from it; heartbeats are allowed for on top (bytes a second since the last
    message).  One byte over and it is shut down (the peer reads the end of the
    stream), its file descriptor left to its owner, the reason kept for ``gone``."""
    peer, ours = tcp_pair
    fd = ours.fileno()
    watch = TcpWatch("test", 1000, heartbeat_bytes=100, watched=False)
    watch.accepted(fd)
    watch.check(0.0)
    _send(peer, ours, 1000)
    watch.check(0.0)
    assert watch.cuts == 0  # exactly the limit
    _send(peer, ours, 40)
    watch.check(0.5)  # 50 bytes of heartbeats allowed by now
    assert watch.cuts == 0
    watch.read(fd)  # a message was read: nothing is owed
    watch.check(1.0)
    _send(peer, ours, 1000)
    watch.check(1.0)
    assert watch.cuts == 0
    _send(peer, ours, 1)
    watch.check(1.0)
    assert watch.cuts == 1
    peer.settimeout(scaled(5))
    assert peer.recv(1) == b""  # shut down
    os.fstat(fd)  # but still open: libzmq closes its own
    why = watch.gone(fd)
    assert why == ("sent 1001 bytes without ending a message, over the limit of 1000 a "
                   "connection may send between two messages (a message in parts that never "
                   "ends, or messages the referee did not ask for): its connection was closed")
    assert watch.gone(fd) == ""


def test_a_descriptor_number_taken_by_another_socket_is_never_shut(
        tcp_pair: tuple[socket.socket, socket.socket]) -> None:
    """libzmq reuses file descriptor numbers: when the watched number names another
    socket by the time it is looked at (its events not yet read), that socket is left
    alone, whatever it received."""
    peer, ours = tcp_pair
    fd = ours.fileno()
    watch = TcpWatch("test", 10, watched=False)
    watch.accepted(fd)
    watch.check(0.0)
    with socket.create_server(("127.0.0.1", 0)) as server, \
            socket.create_connection(server.getsockname()) as other_peer:
        other, _ = server.accept()
        with other:
            os.dup2(other.fileno(), fd)  # the number is the other socket's now
            _send(other_peer, other, 100)
            watch.check(0.0)
            assert watch.cuts == 0
            other_peer.settimeout(0.2)
            with pytest.raises(TimeoutError):
                other_peer.recv(1)  # not shut down


def test_connections_nobody_was_told_of_are_found_among_the_process_sockets(
        tcp_pair: tuple[socket.socket, socket.socket]) -> None:
    """A connection accepted while its socket's events were not read is found among
    the process's file descriptors: the accepted sockets on the endpoint's port, not
    its listener, nor a socket on another port; counted from its first byte, and the
    same connection when its EVENT_ACCEPTED is read at last."""
    peer, ours = tcp_pair
    fd = ours.fileno()
    watch = TcpWatch(f"tcp://127.0.0.1:{ours.getsockname()[1]}", 1000, watched=False)
    assert watch.discover(0.0) == 1 and list(watch.conns) == [fd]
    assert watch.discover(1.0) == 0  # known
    conn = watch.conns[fd]
    watch.accepted(fd)
    assert watch.conns[fd] is conn
    _send(peer, ours, 1001)
    watch.check(1.0)
    assert watch.cuts == 1
    with socket.create_server(("127.0.0.1", 0)) as listening:
        other = TcpWatch(f"tcp://127.0.0.1:{listening.getsockname()[1]}", 1000,
                         watched=False)
        assert other.discover(0.0) == 0 and not other.conns


class _RawBot:
    """A remote bot speaking ZMTP 3.0 (NULL) by hand over TCP, so that nothing is
    buffered on its side: ``hello``, then ``flood`` -- one message of 8 KiB parts,
    each flagged MORE, until the connection breaks (in a thread: ``sent``)."""

    def __init__(self, endpoint: str) -> None:
        host, _, port = endpoint[len("tcp://"):].rpartition(":")
        self.s = socket.create_connection((host, int(port)))
        self.s.sendall(b"\xff" + b"\x00" * 8 + b"\x7f\x03\x00" + b"NULL".ljust(20, b"\x00")
                       + b"\x00" * 32)
        self.s.sendall(self.frame(b"\x05READY\x0bSocket-Type" + struct.pack(">I", 6)
                                  + b"DEALER", cmd=True))
        # Its greeting first: libzmq refuses a message that comes in one piece with
        # the greeting and READY ("unexpected command").
        got = b""
        self.s.settimeout(scaled(10))
        while len(got) < 64:
            data = self.s.recv(64 - len(got))
            assert data, "the referee closed the connection"
            got += data
        self.s.settimeout(None)
        self.sent = 0
        self.error: OSError | None = None
        self.thread = threading.Thread(target=self._flood, daemon=True)

    @staticmethod
    def frame(body: bytes, more: bool = False, cmd: bool = False) -> bytes:
        flags = (1 if more else 0) | (4 if cmd else 0)
        if len(body) > 255:
            return bytes([flags | 2]) + struct.pack(">Q", len(body)) + body
        return bytes([flags, len(body)]) + body

    def hello(self) -> None:
        self.s.sendall(self.frame(msgpack.packb({"type": "hello", "protocol": [1],
                                                 "name": "zmtp"})))

    def flood(self) -> None:
        self.thread.start()

    def _flood(self) -> None:
        chunk = self.frame(b"a" * 8192, more=True) * 32
        try:
            while True:
                self.s.sendall(chunk)
                self.sent += len(chunk)
        except OSError as e:
            self.error = e

    def close(self) -> None:
        self.s.close()
        self.thread.join(scaled(10)) if self.thread.ident else None


@pytest.mark.parametrize("when", ["waited-for", "unread", "first-message",
                                  "first-message-unread"])
def test_a_remote_message_in_endless_parts_is_cut_off(
        when: str, caplog: pytest.LogCaptureFixture) -> None:
    """Endless parts from an admitted bot, while the referee waits for its message
    (checked by the waiting thread) or while nobody reads the socket (other seats'
    turns: the watchdog's thread): its transport says why it is gone (the player
    makes it an ``oversized`` fault).  From a connection that never finished a first
    message: closed all the same, and logged -- also one that came while nobody read
    the socket, so that the referee never heard of it (the watchdog found it among
    the process's sockets).  What the peer got into the referee before its
    connection broke is its limit, plus what arrived between two looks and the
    kernel's buffers: nothing like what it tried to send."""
    listener = RemoteListener("tcp://127.0.0.1:*", {"zmtp": b""}, None)
    bot = _RawBot(listener.endpoint)
    watch = listener._router.watch
    assert watch is not None
    try:
        with caplog.at_level(logging.WARNING, "referee.zmq"):
            if not when.startswith("first-message"):
                bot.hello()
                _, transport = listener.accept(scaled(10), "zmtp")
                assert transport.recv(scaled(5))["type"] == "hello"  # (left to be read)
                bot.flood()
                if when == "unread":
                    bot.thread.join(scaled(20))  # cut without the socket being read
                    assert watch.cuts == 1
                with pytest.raises(ConnectionCut) as e:
                    transport.recv(scaled(20))
                assert str(e.value).startswith("sent ")
                assert str(e.value).endswith(
                    f" bytes without ending a message, over the limit of "
                    f"{connection_limit(8192)} a connection may send between two messages "
                    f"(a message in parts that never ends, or messages the referee did not "
                    f"ask for): its connection was closed")
            elif when == "first-message-unread":
                bot.flood()
                bot.thread.join(scaled(20))  # the socket is never read
                assert watch.cuts == 1, "never cut"
            else:
                bot.flood()
                end = time.monotonic() + scaled(20)
                while watch.cuts == 0:
                    assert time.monotonic() < end, "never cut"
                    with pytest.raises(TransportTimeout):
                        listener.accept(0.01)
            bot.thread.join(scaled(20))
            assert isinstance(bot.error, OSError), "the connection was never broken"
            assert watch.cuts == 1
            # (logged by the thread that cut it, once it has)
            _until(lambda: f"closed a connection on {listener.endpoint}: it sent "
                   in caplog.text, "the cut logged")
        # Loopback's buffers hold a few MB; before the watchdog the referee read
        # without end (the bot sends until it fails).
        assert bot.sent < 64 << 20, bot.sent
        assert not listener._ready
    finally:
        bot.close()
        listener.close()


def _play(children: Children, mode: list[str]) -> tuple[str, str, float]:
    """``referee play zmtp=remote:zmtp lowest`` (a real process, listening on a
    loopback TCP port) against tests/bots/attack_zmtp.py in ``mode``, connected as a
    remote bot: the referee's output, the bot's report and the referee's own peak
    RSS (MB)."""
    ref = children.popen([*REFEREE_WITH_PEAK_RSS, "play", "zmtp=remote:zmtp", "lowest",
                          "--seed", "7", "--listen", "tcp://127.0.0.1:*",
                          "--wait", str(scaled(60))], cwd=REPO, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    assert ref.stdout is not None
    first = ref.stdout.readline()  # "waiting up to ...: connect to tcp://127.0.0.1:PORT (..."
    assert first.startswith("waiting up to ") and " connect to tcp://" in first, first
    endpoint = first.split(" connect to ")[1].split()[0]
    env = {k: v for k, v in os.environ.items() if not k.startswith("UPDOWN_")}
    bot = children.popen([sys.executable, str(ATTACKER), *mode],
                         env={**env, "UPDOWN_ENDPOINT": endpoint}, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    out, err = ref.communicate(timeout=scaled(120))
    assert ref.returncode == 0, (out, err)
    _, said = bot.communicate(timeout=scaled(30))
    return out, said, peak_rss_mb(err)


@pytest.mark.parametrize("part", ["8192", "2"], ids=["parts-8k", "parts-2b"])
def test_a_remote_bot_sending_endless_parts_costs_the_referee_nothing(
        children: Children, part: str) -> None:
    """A remote bot connected over TCP sends, on its first turn, one message whose
    parts never end (8 KiB ones; 2-byte ones, where libzmq's cost per part counts
    most).  Before, libzmq kept every part: the referee grew by what was sent (17 ->
    259 MB, without end).  Now its connection is closed at the limit: an
    ``oversized`` fault naming the bot and what it did, the bot forfeits, the game is
    played out, and the referee's peak RSS stays that of an honest game."""
    honest, _, honest_mb = _play(children, ["honest", "0"])
    assert "faults: none" in honest and "result:" in honest, honest
    out, said, peak_mb = _play(children, ["span", "4000", part])
    assert "result:" in out and "[forfeit]" in out, out
    # (the fault in the summary under the result)
    [fault] = [line for line in out.splitlines() if line.startswith("  zmtp (seat 0) turn 0: ")]
    m = re.fullmatch(
        r"  zmtp \(seat 0\) turn 0: oversized: zmtp sent (\d+) bytes without ending a "
        r"message, over the limit of (\d+) a connection may send between two messages \(a "
        r"message in parts that never ends, or messages the referee did not ask for\): its "
        r"connection was closed \(while deciding request 1\) \[forfeit\]", fault)
    assert m is not None, fault
    assert int(m[1]) > int(m[2]) == connection_limit(8192), fault
    assert "SUCCEEDED" not in said and ": failed: the referee dropped the connection" in said
    # The same game but for what the attack cost, and a few MB of slack.  Before the
    # watchdog: the referee read all 4 GB.
    assert peak_mb < honest_mb + 16, (peak_mb, honest_mb)
