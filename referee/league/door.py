"""The league server's door: a TCP relay in front of its ZeroMQ socket, so that what
one connection may cost the server is bounded.

Why a relay.  libzmq bounds a *frame* (``ZMQ_MAXMSGSIZE``) but not a *message*: the
frames of a multipart message are kept until its last frame arrives, and its high
water mark counts whole messages only, so one connection that sends frame after
frame of one message that never ends grows the server without bound (measured: 8,000
frames of 64 KB on one connection, 496 MB).  libzmq has no option against it, gives no
per-key or per-address connection count, and cannot close one accepted peer.

The door can.  It accepts the TCP connections itself and relays each, byte for byte,
to the ZeroMQ socket on a private ``ipc://`` endpoint (CURVE and its ZAP handler are
still libzmq's, end to end: the door sees only ciphertext).  Per connection it counts
the frames and bytes the client sent since the server last answered it; a client
that sends more than one request's frames (``FRAMES``: a header and its data) or
more than ``budget`` bytes unanswered is cut.  Frames, because a message's end is
inside CURVE's encryption: counting bytes alone, an author could pipeline small
requests and grow a never-ending message by a budget per answer; with at most one
request's frames unanswered, a message that never ends holds a few frames at most.  The server's answers are told
from its other frames by their size: every reply is at least ``REPLY_MIN`` bytes
(``remote.py`` pads them), a PONG or a handshake command never is -- so no stream
of PINGs buys an attacker more budget.  It also holds at most ``connections`` open
at once and ``per_ip`` from one address, and stops accepting for a moment when the
process runs out of file descriptors instead of spinning on them.

What one connection may cost is then bounded: a few frames (at most 2 x ``budget``
bytes) queued in libzmq, and the door's buffers, so the server's memory is at most
its baseline plus ``connections`` times that (leagues/README.md states the figures).
"""

from __future__ import annotations

import collections
import contextlib
import errno
import ipaddress
import selectors
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import UsageError

#: The smallest reply frame of the server (a reply's JSON is padded to it).
REPLY_MIN = 512
#: A frame of the server this big is a reply (its envelope added, CURVE's included);
#: a PONG, WELCOME (168 bytes) or READY never is.
REPLY_FRAME = 400
#: The most read from a socket at once, and buffered towards the other side.
READ = 64 << 10
#: Bytes the server's answers may wait for a client that does not read them.
OUT_BUFFER = 256 << 10
#: ZMTP 3's greeting, before the first frame.
GREETING = 64
#: A request's frames (a header and its data): what a client may send unanswered.
FRAMES = 2
#: The commands of a handshake (never a part of a message), and how much of a
#: command frame shows its name.
HANDSHAKE_COMMANDS = (b"HELLO", b"WELCOME", b"INITIATE", b"READY", b"ERROR")
NAME_PEEK = 1 + len(b"INITIATE")


#: What a connection turned away is sent before it is closed: a ZMTP 3.0 greeting
#: naming a mechanism nobody speaks, "BUSY".  A ZeroMQ client reports it as a
#: mechanism mismatch (HANDSHAKE_FAILED_PROTOCOL), which ``referee submit`` tells
#: from a wrong server key (a handshake that fails with no detail) and retries.
BUSY_GREETING = (b"\xff" + bytes(8) + b"\x7f" + b"\x03\x00" + b"BUSY".ljust(20, b"\0")
                 + bytes(32))


def _turn_away(client: socket.socket) -> None:
    with contextlib.suppress(OSError):
        client.setblocking(False)
        client.send(BUSY_GREETING)
    client.close()


class DoorError(UsageError, ValueError):
    """An endpoint the door cannot listen on."""


def tcp_address(endpoint: str) -> tuple[str, int, socket.AddressFamily] | None:
    """``(host, port, family)`` of a ``tcp://HOST:PORT`` endpoint (``*`` for any
    address or port); None for another scheme (ipc://, inproc://: local already)."""
    scheme, _, rest = endpoint.partition("://")
    if scheme != "tcp":
        return None
    host, sep, port = rest.rpartition(":")
    if not sep or not host:
        raise DoorError(f"{endpoint}: give tcp://HOST:PORT")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if host == "*":
        host = "0.0.0.0"
    elif host == "localhost":
        host = "127.0.0.1"
    try:
        family = (socket.AF_INET6 if ipaddress.ip_address(host).version == 6
                  else socket.AF_INET)
    except ValueError:
        raise DoorError(f"{endpoint}: the host must be an IP address (or * or "
                        "localhost), not a name") from None
    try:
        number = 0 if port == "*" else int(port)
        assert 0 <= number < 65536
    except (ValueError, AssertionError):
        raise DoorError(f"{endpoint}: the port must be a number or *") from None
    return host, number, family


@dataclass
class _Pair:
    """One client connection and its own connection to the ZeroMQ socket."""

    client: socket.socket
    up: socket.socket
    ip: str
    to_up: bytearray = field(default_factory=bytearray)
    to_client: bytearray = field(default_factory=bytearray)
    unanswered: int = 0  # bytes the client sent since the server last answered
    frames: int = 0  # the client's message frames since then
    # the server's side, parsed frame by frame to see its replies
    greeting: int = GREETING
    head: bytearray = field(default_factory=bytearray)
    body: int = 0
    # the client's side, parsed frame by frame to count its message frames
    c_greeting: int = GREETING
    c_head: bytearray = field(default_factory=bytearray)
    c_body: int = 0
    c_name: bytearray = field(default_factory=bytearray)
    c_command: bool = False
    c_seen: bytearray = field(default_factory=bytearray)  # its greeting's first bytes
    closed: bool = False

    def zmtp3(self) -> bool:
        """False once the client's greeting shows a ZMTP older than 3.0 (its framing is
        another, and libzmq would speak it to a peer without keys): such a client is
        cut."""
        s = self.c_seen
        return (len(s) < 1 or s[0] == 0xFF) and (len(s) < 10 or s[9] == 0x7F) and \
            (len(s) < 11 or s[10] >= 3)

    def from_client(self, data: bytes) -> None:
        """Follow the client's ZMTP stream: count every frame that may be a part of a
        message (all but the handshake's commands).  With CURVE a message's MORE flag
        is inside the encryption, so a message cannot be told from the next: frames
        are what is counted."""
        view = memoryview(data)
        while view:
            if self.c_greeting:
                n = min(self.c_greeting, len(view))
                if len(self.c_seen) < 11:
                    self.c_seen += view[:min(n, 11 - len(self.c_seen))]
                self.c_greeting -= n
                view = view[n:]
                continue
            if self.c_body:
                n = min(self.c_body, len(view))
                if self.c_command and len(self.c_name) < NAME_PEEK:
                    self.c_name += view[:min(n, NAME_PEEK - len(self.c_name))]
                    if len(self.c_name) == NAME_PEEK or n == self.c_body:
                        self._counted()
                self.c_body -= n
                view = view[n:]
                continue
            self.c_head.append(view[0])
            view = view[1:]
            need = 9 if self.c_head[0] & 0x02 else 2
            if len(self.c_head) < need:
                continue
            self.c_body = int.from_bytes(self.c_head[1:need], "big")
            self.c_command = bool(self.c_head[0] & 0x04)
            self.c_head.clear()
            self.c_name.clear()
            if not self.c_command or not self.c_body:
                self.frames += 1

    def _counted(self) -> None:
        """A command frame: counted unless it is one of the handshake's."""
        name = bytes(self.c_name[1:1 + self.c_name[0]]) if self.c_name else b""
        if name not in HANDSHAKE_COMMANDS:
            self.frames += 1
        self.c_command = False  # counted once

    def from_server(self, data: bytes) -> None:
        """Follow the server's ZMTP stream: a frame of a reply's size answers all
        the client sent so far."""
        view = memoryview(data)
        while view:
            if self.greeting:
                n = min(self.greeting, len(view))
                self.greeting -= n
                view = view[n:]
                continue
            if self.body:
                n = min(self.body, len(view))
                self.body -= n
                view = view[n:]
                continue
            self.head.append(view[0])
            view = view[1:]
            long = bool(self.head[0] & 0x02)
            need = 9 if long else 2
            if len(self.head) < need:
                continue
            size = int.from_bytes(self.head[1:need], "big")
            self.head.clear()
            if size >= REPLY_FRAME:
                self.unanswered = self.frames = 0
            self.body = size


@dataclass
class Tally:
    """What the door turned away, summed up once a window in the log."""

    full: int = 0
    per_ip: int = 0
    cut: int = 0
    fds: int = 0

    def any(self) -> bool:
        return bool(self.full or self.per_ip or self.cut or self.fds)


class Door:
    """Listen on ``listen`` (tcp://HOST:PORT) and relay each connection to
    ``upstream`` (a unix socket path: the ZeroMQ socket's ipc endpoint)."""

    def __init__(self, listen: str, upstream: str, *, connections: int, per_ip: int,
                 budget: int, on_line: Callable[[str], None] = lambda text: None,
                 window: float = 60.0) -> None:
        found = tcp_address(listen)
        if found is None:
            raise DoorError(f"{listen}: the door listens on tcp:// only")
        host, port, family = found
        self.upstream = upstream
        self.connections = connections
        self.per_ip = per_ip
        self.budget = budget
        self.on_line = on_line
        self.window = window
        self.listener = socket.socket(family, socket.SOCK_STREAM)
        try:
            self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.listener.bind((host, port))
            self.listener.listen(128)
            self.listener.setblocking(False)
        except OSError:
            self.listener.close()
            raise
        bound = self.listener.getsockname()
        shown = f"[{bound[0]}]" if family == socket.AF_INET6 else bound[0]
        self.endpoint = f"tcp://{shown}:{bound[1]}"
        self.pairs: dict[socket.socket, _Pair] = {}
        self._watched: dict[socket.socket, int] = {}  # the events each socket is watched for
        self.by_ip: collections.Counter[str] = collections.Counter()
        self.tally = Tally()
        self._tally_since = time.monotonic()
        self._paused_until = 0.0
        self._stop = threading.Event()
        self._sel = selectors.DefaultSelector()
        self._sel.register(self.listener, selectors.EVENT_READ)
        self._thread = threading.Thread(target=self._run, name="league-door", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(10)
        for pair in list(self.pairs.values()):
            self._close(pair)
        with contextlib.suppress(KeyError, ValueError):
            self._sel.unregister(self.listener)
        self.listener.close()
        self._sel.close()

    def open_connections(self) -> int:
        return len({id(p) for p in self.pairs.values()})

    # --- the loop -----------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._turn()
            except Exception as e:  # a bug must not close the door for good
                self.on_line(f"the door failed: {type(e).__name__}: {e}")
                time.sleep(0.1)

    def _turn(self) -> None:
        """One look at every socket: accept, relay, cut."""
        now = time.monotonic()
        if self._paused_until and now >= self._paused_until:
            self._paused_until = 0.0
            self._sel.register(self.listener, selectors.EVENT_READ)
        for key, events in self._sel.select(0.2):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            if sock is self.listener:
                self._accept()
                continue
            pair = self.pairs.get(sock)
            if pair is None or pair.closed:
                continue  # closed earlier in this turn
            try:
                if events & selectors.EVENT_WRITE:
                    self._write(pair, sock)
                if events & selectors.EVENT_READ and not pair.closed:
                    self._read(pair, sock)
            except OSError:
                self._close(pair)
            if not pair.closed:
                self._watch(pair)
        self._summary(now)

    def _summary(self, now: float) -> None:
        if now - self._tally_since < self.window:
            return
        t, self.tally, self._tally_since = self.tally, Tally(), now
        if not t.any():
            return
        span = "minute" if self.window == 60 else f"{self.window:g} s"
        said = []
        if t.full:
            said.append(f"turned away {t.full} connections with {self.connections} open "
                        "([server] connections)")
        if t.per_ip:
            said.append(f"turned away {t.per_ip} connections from addresses with "
                        f"{self.per_ip} open ([server] connections_per_ip)")
        if t.cut:
            said.append(f"cut {t.cut} connections that sent more than {self.budget} bytes "
                        "unanswered")
        if t.fds:
            said.append(f"paused accepting {t.fds} times: out of file descriptors")
        self.on_line("the door " + "; ".join(said) + f" in the last {span}")

    def _accept(self) -> None:
        while True:
            try:
                client, addr = self.listener.accept()
            except BlockingIOError:
                return
            except OSError as e:
                if e.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    # Out of descriptors: the pending connection stays in the backlog
                    # and the listener readable -- stop looking at it for a moment
                    # rather than spin (as libzmq does).
                    self.tally.fds += 1
                    self._sel.unregister(self.listener)
                    self._paused_until = time.monotonic() + 0.1
                    return
                if e.errno in (errno.ECONNABORTED, errno.EPROTO, errno.EPERM):
                    continue
                raise
            ip = addr[0]
            if self.open_connections() >= self.connections:
                self.tally.full += 1
                _turn_away(client)
                continue
            if self.by_ip[ip] >= self.per_ip:
                self.tally.per_ip += 1
                _turn_away(client)
                continue
            up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                up.connect(self.upstream)
            except OSError:
                up.close()
                client.close()
                continue
            client.setblocking(False)
            up.setblocking(False)
            pair = _Pair(client, up, ip)
            self.pairs[client] = self.pairs[up] = pair
            self.by_ip[ip] += 1
            for sock in (client, up):
                self._sel.register(sock, selectors.EVENT_READ)
                self._watched[sock] = selectors.EVENT_READ

    def _read(self, pair: _Pair, sock: socket.socket) -> None:
        data = sock.recv(READ)
        if not data:
            self._close(pair)
            return
        if sock is pair.client:
            pair.unanswered += len(data)
            pair.from_client(data)
            if pair.unanswered > self.budget or pair.frames > FRAMES or not pair.zmtp3():
                self.tally.cut += 1
                self._close(pair)
                return
            pair.to_up += data
            self._write(pair, pair.up)
        else:
            pair.from_server(data)
            pair.to_client += data
            self._write(pair, pair.client)

    def _write(self, pair: _Pair, sock: socket.socket) -> None:
        buf = pair.to_up if sock is pair.up else pair.to_client
        if buf:
            try:
                sent = sock.send(buf)
            except BlockingIOError:
                return
            del buf[:sent]

    def _watch(self, pair: _Pair) -> None:
        """Read a side only while what it sends can be buffered towards the other;
        write a side while something waits for it."""
        for sock, inbox, outbox, cap in ((pair.client, pair.to_client, pair.to_up, READ),
                                         (pair.up, pair.to_up, pair.to_client, OUT_BUFFER)):
            events = selectors.EVENT_WRITE if inbox else 0
            if len(outbox) < cap:
                events |= selectors.EVENT_READ
            watched = self._watched.get(sock, 0)
            if events == watched:
                continue
            if not events:
                self._sel.unregister(sock)
                del self._watched[sock]
            elif not watched:
                self._sel.register(sock, events)
                self._watched[sock] = events
            else:
                self._sel.modify(sock, events)
                self._watched[sock] = events

    def _close(self, pair: _Pair) -> None:
        if pair.closed:
            return
        pair.closed = True
        for sock in (pair.client, pair.up):
            self.pairs.pop(sock, None)
            if self._watched.pop(sock, 0):
                with contextlib.suppress(KeyError, ValueError, OSError):
                    self._sel.unregister(sock)
            with contextlib.suppress(OSError):
                sock.close()
        self.by_ip[pair.ip] -= 1
        if self.by_ip[pair.ip] <= 0:
            del self.by_ip[pair.ip]
