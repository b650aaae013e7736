"""The league server's door: a TCP relay in front of its ZeroMQ socket, so that what
one connection may cost the server is bounded.

Why a relay.  libzmq bounds a *frame* (``ZMQ_MAXMSGSIZE``) but not a *message*: the
frames of a multipart message are kept until its last frame arrives, and its high
water mark counts whole messages only, so one connection that sends frame after
frame of one message that never ends grows the server without bound (measured: 8,000
frames of 64 KB on one connection, 496 MB).  libzmq has no option against it, gives no
per-key or per-address connection count, and cannot close one accepted peer.

The door can.  It accepts the TCP connections itself and relays each, byte for byte,
to the ZeroMQ socket where only it reaches it (CURVE and its ZAP handler are still
libzmq's, end to end: the door sees only ciphertext).  Per connection it counts
the frames and bytes the client sent since the server last answered it; a client
that sends more than one request's frames (``FRAMES``: a header and its data) or
more than ``budget`` bytes unanswered is cut.  Frames, because a message's end is
inside CURVE's encryption: counting bytes alone, an author could pipeline small
requests and grow a never-ending message by a budget per answer; with at most one
request's frames unanswered, a message that never ends holds a few frames at most.  The server's answers are told
from its other frames by their size: every reply is at least ``REPLY_MIN`` bytes
(``remote.py`` pads them), a PONG or a handshake command never is -- so no stream
of PINGs buys an attacker more budget.

Nor can connections lock the authors out (found by an attacker: a stranger's
unfinished handshakes, and a known author's idle connections, each held every
place).  Handshakes and authenticated connections are two pools (see ``Door``):
a handshake is judged by who owes the next bytes, followed through the
handshake's steps in the bytes relayed both ways, so a stalled one makes room for
a new connection and one waiting for the server never does (the new connection
waits, its first bytes held, an address whose handshakes stalled behind those
whose did not); an idle authenticated one is closed, and one key holds at most a
few (``admit``, asked by the ZAP handler, which knows a connection by the door's
own loopback address it comes from).  The door also stops accepting for a moment
when the process runs out of file descriptors instead of spinning on them.

What one connection may cost is then bounded: a few frames (at most 2 x ``budget``
bytes) queued in libzmq, and the door's buffers, so the server's memory is at most
its baseline plus ``connections`` + ``handshakes`` times that (leagues/README.md states
the figures).
"""

from __future__ import annotations

import collections
import contextlib
import errno
import ipaddress
import os
import random
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
#: How long, and how many, sources of handshakes it closed the door remembers (libzmq
#: may ask the ZAP handler about one it had already read the INITIATE of).
GONE_SECONDS = 30.0
GONE_KEPT = 1 << 17
#: How long a connection that has sent nothing waits before the door connects it to
#: the ZeroMQ socket anyway, if there is room among the handshakes (a client that
#: waits for the server's greeting first; libzmq's speaks first).
QUIET_GRACE = 0.5
#: The most of a new connection's first bytes the door holds while it waits for room
#: among the handshakes (a ZeroMQ client sends 10, then waits for the server's; a
#: greeting and a CURVE HELLO are 266): past it, the door reads no more of it until
#: it is connected.
HOLD = 1024
#: How long a handshake's client may owe its next bytes before the door may close it
#: to let a new connection in: an honest client answers the server within its
#: round trip (milliseconds; this allows one of 0.5 s); a stalled one never does.
OWING_GRACE = 0.5
#: How fast an address's stalls are forgiven: its count of handshakes that stalled
#: or were refused halves every so many seconds.
STALL_HALF_LIFE = 60.0
#: An address with this many stalls (one in the last minute, or more before) is
#: **stalling**: its handshakes are let in at most ``handshakes`` / ``OWING_GRACE``
#: a second in all (with the defaults 128; the most a flood of handshakes that
#: stall after the server's WELCOME could take anyway), however many addresses,
#: so that handshakes the server ends at once (a HELLO it cannot open, a key it
#: refuses) cost it no more CPU than stalled ones.
STALLING = 0.5
#: How long an address whose handshake ended with the server's READY (a key the ZAP
#: handler admitted: an author's) is **known**: its connections waiting for room go
#: before those of other addresses, are the last closed to make room for new ones,
#: and are never held to the stalling addresses' rate.  A stranger has no allowed
#: key: however many addresses it comes from, none of them is known (found by the
#: network attacker: stalling handshakes, each from an address never seen, so never
#: a stalling one, closed an author's queued connection as the last come).
KNOWN_FOR = 3600.0
#: ZMTP 3's greeting, before the first frame, and its signature (its first bytes).
GREETING = 64
SIGNATURE = 10
#: A request's frames (a header and its data): what a client may send unanswered.
FRAMES = 2
#: ZMTP heartbeats (PINGs) a client may have unanswered besides: under CURVE a PING
#: is a frame like a message's, and libzmq's server answers each at once with a PONG
#: (a frame smaller than a reply), which takes it off the count again.
HEARTBEATS = 1
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
class _Quiet:
    """A connection not connected to the ZeroMQ socket yet (it costs the server
    nothing, the door a descriptor): its client has sent nothing yet (**silent**), or
    it has (**waiting**: its first bytes, at most ``HOLD``, held in ``data`` until
    there is room among the handshakes)."""

    client: socket.socket
    ip: str
    opened: float
    data: bytearray = field(default_factory=bytearray)
    spoke: float = 0.0  # when its first bytes came (0: silent)
    slowed: bool = False  # it waited for a stalling address's turn


@dataclass
class _Pair:
    """One client connection and its own connection to the ZeroMQ socket."""

    client: socket.socket
    up: socket.socket
    ip: str  # the client's address (an IPv6 one's /64): what per-address limits count
    opened: float
    source: str = ""  # the door's own loopback address towards the socket ("": ipc)
    ready: bool = False  # the server's READY came: the handshake is over
    answered: float = 0.0  # the server's last reply (or the handshake's end)
    asked: float = 0.0  # when the first frame not answered yet came (0: none)
    author: str | None = None  # the key's NAME, once the ZAP handler admitted it
    owes: float = 0.0  # since when its client owes the handshake's next bytes (0: not)
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
    c_steps: int = 0  # the handshake commands it sent whole: HELLO, then INITIATE
    c_step: bool = False  # the frame coming in is one of them
    # the server's command names, while the handshake lasts (its READY ends it)
    s_name: bytearray = field(default_factory=bytearray)
    s_command: bool = False
    welcomed: bool = False  # the server's WELCOME came: the client's INITIATE is due
    became_ready: bool = False
    replied: bool = False
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
                if not self.c_body and self.c_step:
                    self.c_steps += 1  # a HELLO or an INITIATE, sent whole
                    self.c_step = False
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
            self.c_step = False
            if not self.c_command or not self.c_body:
                self.frames += 1

    def _counted(self) -> None:
        """A command frame: counted unless it is one of the handshake's."""
        name = bytes(self.c_name[1:1 + self.c_name[0]]) if self.c_name else b""
        if name not in HANDSHAKE_COMMANDS:
            self.frames += 1
        self.c_step = name in (b"HELLO", b"INITIATE")
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
                if self.s_command and len(self.s_name) < NAME_PEEK:
                    self.s_name += view[:min(n, NAME_PEEK - len(self.s_name))]
                    if len(self.s_name) == NAME_PEEK or n == self.body:
                        self._server_command()
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
            # Until the handshake is over, a command's name is looked at: READY
            # (in clear under CURVE too, sent once the ZAP handler said yes) ends it.
            self.s_command = bool(self.head[0] & 0x04) and not self.ready \
                and not self.became_ready
            self.s_name.clear()
            self.head.clear()
            if size >= REPLY_FRAME:
                self.unanswered = self.frames = 0
                self.replied = True
            elif self.ready or self.became_ready:
                # Past the handshake, the server's only small frames are PONGs: each
                # answers a PING, which was counted as a frame (its bytes stay counted).
                self.frames = max(0, self.frames - 1)
            self.body = size

    def _server_command(self) -> None:
        name = bytes(self.s_name[1:1 + self.s_name[0]]) if self.s_name else b""
        if name == b"READY":
            self.became_ready = True
        elif name == b"WELCOME":
            self.welcomed = True
        self.s_command = False

    def waiting(self) -> bool:
        """Whether the handshake waits for the server, the client having sent all it
        can until the server's next step: its greeting ahead of the server's (ZMTP's
        greetings go step by step, each side waiting for the other's), its HELLO sent
        and no WELCOME yet, its INITIATE sent and no READY yet.  Else its client owes
        the next bytes: the rest of its greeting, its HELLO, or -- the server having
        answered its HELLO with a WELCOME -- its INITIATE.  A client stalling its
        handshake owes bytes for as long as it stalls; an honest one for its round
        trip at most."""
        client, server = GREETING - self.c_greeting, GREETING - self.greeting
        if client < GREETING or server < GREETING:
            # its signature (10 bytes) a client sends whatever the server does
            return client >= SIGNATURE and client > server
        return self.c_steps >= 2 or (self.c_steps == 1 and not self.welcomed)

    def follow(self, now: float) -> None:
        """After bytes either way in the handshake: since when the client owes."""
        if self.waiting():
            self.owes = 0.0
        elif not self.owes:
            self.owes = now


@dataclass
class Tally:
    """What the door turned away, summed up once a window in the log."""

    full: int = 0
    per_ip: int = 0
    cut: int = 0
    fds: int = 0
    evicted: int = 0  # handshakes closed to make room for a new connection
    held: int = 0  # new connections connected after waiting for room among them
    slowed: int = 0  # connections of stalling addresses that waited for their turn
    hushed: int = 0  # connections not connected yet closed to make room
    silent: int = 0  # connections that sent nothing within the handshake's time
    unplaced: int = 0  # connections that found no room within the handshake's time
    slow: int = 0  # handshakes not over within the handshake's time
    idle: int = 0  # authenticated connections closed for asking nothing
    displaced: int = 0  # idle ones closed to make room, the authenticated pool full
    per_author: int = 0  # handshakes refused: their key held its share
    per_hour: int = 0  # handshakes refused: their key made its hour's share
    rate: int = 0  # connections turned away: their address opened too many a second
    bypass: int = 0  # handshakes that did not come through the door
    late: int = 0  # handshakes of connections the door had closed meanwhile (not logged)

    def any(self) -> bool:
        return any(vars(self).values())


def address_group(ip: str) -> str:
    """What the door counts as one address: an IPv4 address, or an IPv6 address's
    /64 (one host's share: a single host is given a whole /64)."""
    with contextlib.suppress(ValueError):
        address = ipaddress.ip_address(ip)
        if address.version == 6 and address.ipv4_mapped is None:
            return str(ipaddress.ip_network(f"{ip}/64", strict=False))
        if address.version == 6 and address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
    return ip


#: The door's own source addresses towards the ZeroMQ socket on tcp:// (one per
#: connection: the ZAP handler's "address" then names the connection): 127.64.0.0/10,
#: away from 127.0.0.0/16 where local services listen.
SOURCES = ipaddress.ip_network("127.64.0.0/10")


def loopback_sources() -> bool:
    """Whether this machine lets the door connect from any address of 127.0.0.0/8
    (Linux does: the whole block is the loopback's); if not, the door relays over
    ipc:// and cannot tell the ZAP handler which connection a key is on."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        probe.bind((str(SOURCES[12345]), 0))
        return True
    except OSError:
        return False
    finally:
        probe.close()


@dataclass(frozen=True)
class Limits:
    """What the door holds at once: ``connections`` past their handshake, and
    ``handshakes`` still in it (each pool its own); ``per_ip`` connections of either
    kind from one address, ``handshakes_per_ip`` of them in their handshake; at most
    ``per_author`` connections of one key (known only with a ``tcp`` upstream); a
    handshake at most ``handshake_seconds``; a connection past it ``idle_seconds``
    without a request.  ``budget``: the bytes a client may send unanswered.
    ``rate_per_ip``: new connections a second from one address (a token bucket of
    twice as many: a burst); ``per_hour``: handshakes of one key an hour;
    ``quiet``: connections whose client has sent nothing yet (not in ``handshakes``:
    not connected to the server yet)."""

    connections: int = 200
    per_ip: int = 32
    handshakes: int = 64
    handshakes_per_ip: int = 8
    per_author: int = 8
    handshake_seconds: float = 3.0
    idle_seconds: float = 30.0
    budget: int = 1 << 20
    rate_per_ip: float = 10.0
    per_hour: int = 1200
    quiet: int = 1024


class Buckets:
    """A token bucket per address: ``rate`` tokens a second, at most ``2 x rate``
    held (a new address starts full); ``take`` spends one if there is one.  Bounded:
    past ``most`` addresses, the full buckets (addresses quiet for a while) are
    forgotten, and if that is not enough, the oldest."""

    def __init__(self, rate: float, most: int = 65536) -> None:
        self.rate = rate
        self.size = max(1.0, 2 * rate)
        self.most = most
        self.buckets: dict[str, tuple[float, float]] = {}  # address: (tokens, when)

    def take(self, ip: str, now: float) -> bool:
        tokens, when = self.buckets.get(ip, (self.size, now))
        tokens = min(self.size, tokens + (now - when) * self.rate)
        if tokens < 1.0:
            self.buckets[ip] = (tokens, now)
            return False
        self.buckets[ip] = (tokens - 1.0, now)
        if len(self.buckets) > self.most:
            self._forget(now)
        return True

    def _forget(self, now: float) -> None:
        full = [ip for ip, (t, w) in self.buckets.items()
                if t + (now - w) * self.rate >= self.size]
        for ip in full:
            del self.buckets[ip]
        while len(self.buckets) > self.most // 2:  # all busy: the oldest go
            del self.buckets[next(iter(self.buckets))]


class Stalls:
    """A count per address of its handshakes that stalled or were refused, each
    forgiven by half every ``half_life`` seconds (``score``: 0 for an address that
    never did).  Bounded: past ``most`` addresses, those nearly forgiven are
    forgotten, and if that is not enough, the oldest."""

    def __init__(self, half_life: float = STALL_HALF_LIFE, most: int = 65536) -> None:
        self.half_life = half_life
        self.most = most
        self.counts: dict[str, tuple[float, float]] = {}  # address: (count, when)

    def score(self, ip: str, now: float) -> float:
        count, when = self.counts.get(ip, (0.0, now))
        return count * 0.5 ** ((now - when) / self.half_life) if count else 0.0

    def add(self, ip: str, now: float) -> None:
        count = self.score(ip, now) + 1.0
        self.counts.pop(ip, None)
        self.counts[ip] = (count, now)  # the newest last
        if len(self.counts) > self.most:
            for old in [a for a in self.counts if self.score(a, now) < 1 / 64]:
                del self.counts[old]
            while len(self.counts) > self.most // 2:
                del self.counts[next(iter(self.counts))]


class Known:
    """The addresses whose handshakes ended with the server's READY, each for
    ``KNOWN_FOR`` seconds after its last.  Bounded: past ``most`` addresses, the
    oldest are forgotten."""

    def __init__(self, most: int = 65536) -> None:
        self.most = most
        self.since: dict[str, float] = {}  # address: its last READY, the newest last

    def add(self, ip: str, now: float) -> None:
        self.since.pop(ip, None)
        self.since[ip] = now
        while len(self.since) > self.most:
            del self.since[next(iter(self.since))]

    def __call__(self, ip: str, now: float) -> bool:
        when = self.since.get(ip)
        return when is not None and now - when < KNOWN_FOR


class Door:
    """Listen on ``listen`` (tcp://HOST:PORT) and relay each connection to
    ``upstream``: a unix socket path (the ZeroMQ socket's ipc endpoint), or a
    loopback ``(host, port)`` that each connection reaches from an address of its
    own (``admit`` then tells the ZAP handler whose connection a handshake is).

    Two pools.  A connection is first in its **handshake** (until the server's READY:
    its key admitted by the ZAP handler).  An honest handshake takes milliseconds,
    a stranger's can stall for the whole handshake time.  The door judges a
    handshake by who owes the next bytes (``_Pair.waiting``): when the handshakes
    are full, a new connection is let in by closing the one whose client has owed
    its bytes longest, at least ``OWING_GRACE``; one waiting for the server is never
    closed for it, and if there is none to close the new connection waits,
    unconnected, its first bytes held by the door (``_admit``), an address whose
    handshakes stalled or were refused (``Stalls``) behind those whose did not.
    Past its handshake a connection is **authenticated**: at most ``connections``
    of them, ``per_author`` of one key (refused at the handshake), each closed
    after ``idle_seconds`` with no request (a client connects again when it next
    asks)."""

    def __init__(self, listen: str, upstream: str | tuple[str, int], *, limits: Limits,
                 on_line: Callable[[str], None] = lambda text: None,
                 window: float = 60.0) -> None:
        found = tcp_address(listen)
        if found is None:
            raise DoorError(f"{listen}: the door listens on tcp:// only")
        host, port, family = found
        self.upstream = upstream
        self.limits = limits
        self.connections = limits.connections
        self.per_ip = limits.per_ip
        self.budget = limits.budget
        self.on_line = on_line
        self.window = window
        self.listener = socket.socket(family, socket.SOCK_STREAM)
        try:
            self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.listener.bind((host, port))
            self.listener.listen(1024)
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
        # the two pools, oldest first
        self.shaking: dict[int, _Pair] = {}
        self.shaking_by_ip: collections.Counter[str] = collections.Counter()
        self.ready: dict[int, _Pair] = {}
        # not connected to the socket yet: silent, oldest first; and queued for room
        # among the handshakes (their first bytes held), in the order they spoke
        self.quiet: dict[socket.socket, _Quiet] = {}
        self.queued: dict[socket.socket, _Quiet] = {}
        self.stalls = Stalls()
        self.known = Known()
        self._full = 0.0  # when the last connection queued found no room
        # the stalling addresses' handshakes: a token bucket of a second's worth
        self._stalling_rate = limits.handshakes / OWING_GRACE
        self._tokens, self._tokens_at = self._stalling_rate, time.monotonic()
        # shared with the ZAP handler's thread
        self._lock = threading.Lock()
        self._sources: dict[str, _Pair] = {}
        # the sources of connections closed before their handshake ended (libzmq may
        # still ask the ZAP handler about one): source -> when closed
        self._gone: collections.OrderedDict[str, float] = collections.OrderedDict()
        self._authors: collections.Counter[str] = collections.Counter()
        self._handshakes: dict[str, collections.deque[float]] = {}  # a key's, this hour
        self.buckets = Buckets(limits.rate_per_ip)
        self._random = random.Random()
        self.tally = Tally()
        self._tally_since = time.monotonic()
        self._swept = 0.0
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
            self._close(pair, stalled=False)
        for q in [*self.quiet.values(), *self.queued.values()]:
            self._hush(q)
        with contextlib.suppress(KeyError, ValueError):
            self._sel.unregister(self.listener)
        self.listener.close()
        self._sel.close()

    def open_connections(self) -> int:
        return len(self.quiet) + len(self.queued) + len(self.shaking) + len(self.ready)

    # --- the ZAP handler's side ---------------------------------------------------

    def admit(self, address: str, author: str) -> str | None:
        """Called by the ZAP handler (its own thread) for a known key: None if the
        handshake from ``address`` may go on as ``author``'s; "full" if that key
        holds its ``per_author`` connections; "hour" if it made ``per_hour``
        handshakes in the last hour (a key reconnecting as fast as it can costs the
        server's CPU); "stranger" if no connection of the door's comes from
        ``address`` (someone on this machine connecting to the socket directly, or a
        connection the door has closed meanwhile), or one already had its handshake.  With an ipc upstream
        connections cannot be told apart: None."""
        if not isinstance(self.upstream, tuple):
            return None
        with self._lock:
            pair = self._sources.get(address)
            if pair is None and address in self._gone:
                # closed by the door while libzmq still had its INITIATE to look at
                # (a handshake evicted or over its time): no bypass
                self.tally.late += 1
                return "stranger"
            if pair is None or pair.closed or pair.author is not None:
                self.tally.bypass += 1
                return "stranger"
            if self._authors[author] >= self.limits.per_author:
                self.tally.per_author += 1
                return "full"
            now = time.monotonic()
            times = self._handshakes.setdefault(author, collections.deque())
            while times and times[0] <= now - 3600:
                times.popleft()
            if len(times) >= self.limits.per_hour:
                self.tally.per_hour += 1
                return "hour"
            times.append(now)
            pair.author = author
            self._authors[author] += 1
            return None

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
        for key, events in self._sel.select(self._timeout(now)):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            if sock is self.listener:
                self._accept()
                continue
            pair = self.pairs.get(sock)
            if pair is None and (sock in self.quiet or sock in self.queued):
                self._hear(self.quiet.get(sock) or self.queued[sock])
                continue
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
        now = time.monotonic()
        if now - self._swept >= 0.1:
            self._sweep(now)
        self._admit(now)
        self._summary(now)

    def _timeout(self, now: float) -> float:
        """How long the loop may wait for a socket: at most 0.1 s; with connections
        waiting for room, until the first handshake that may be closed for them,
        or the stalling addresses' next turn."""
        if not self.queued:
            return 0.1
        if self._tokens < 1.0:
            return min(0.1, max(0.01, (1.0 - self._tokens) / self._stalling_rate))
        if len(self.shaking) < self.limits.handshakes:
            return 0.1
        owing = [p.owes for p in self.shaking.values() if p.owes]
        if not owing:
            return 0.1
        return min(0.1, max(0.01, min(owing) + OWING_GRACE - now))

    def _sweep(self, now: float) -> None:
        """Close the handshakes over their time, and the connections idle too long:
        nothing answered for ``idle_seconds`` and no request waiting (a frame
        unanswered as long counts as none: the server answers each request at once,
        and a PING is no request)."""
        self._swept = now
        for q in list(self.quiet.values()):  # oldest first
            if now - q.opened < self.limits.handshake_seconds:
                break
            self.tally.silent += 1
            self._hush(q)
        for q in list(self.queued.values()):
            if now - q.opened >= self.limits.handshake_seconds:
                self.tally.unplaced += 1
                self._hush(q)
        for pair in list(self.shaking.values()):
            if now - pair.opened >= self.limits.handshake_seconds:
                self.tally.slow += 1
                # over its time: its address's doing if its client owes bytes, the
                # server's if it waits for the server
                self._close(pair, stalled=bool(pair.owes))
        idle = self.limits.idle_seconds
        for pair in list(self.ready.values()):
            if now - pair.answered >= idle and (not pair.asked or now - pair.asked >= idle):
                self.tally.idle += 1
                self._close(pair)

    def _summary(self, now: float) -> None:
        if now - self._tally_since < self.window:
            return
        with self._lock:
            t, self.tally, self._tally_since = self.tally, Tally(), now
        if not t.any():
            return
        span = "minute" if self.window == 60 else f"{self.window:g} s"
        lim = self.limits
        # (count, what the door did: {n} is the count)
        said = [
            (t.full, f"turned away {{n}} connections with {self.connections} open "
                     "([server] connections)"),
            (t.per_ip, f"turned away {{n}} connections from addresses with {self.per_ip} "
                       "open ([server] connections_per_ip)"),
            (t.cut, f"cut {{n}} connections that sent more than {self.budget} bytes or "
                    f"{FRAMES + HEARTBEATS} frames unanswered (a request's {FRAMES} and a "
                    "heartbeat)"),
            (t.fds, "paused accepting {n} times: out of file descriptors"),
            (t.hushed, f"closed {{n}} connections not connected to the server yet to let "
                       f"new ones in ({lim.quiet} at once)"),
            (t.silent, f"closed {{n}} connections that sent nothing within "
                       f"{lim.handshake_seconds:g} s"),
            (t.evicted, f"closed {{n}} handshakes to let new connections in "
                        f"({lim.handshakes} at once, {lim.handshakes_per_ip} from one "
                        "address: [server] handshakes, handshakes_per_ip), each the one "
                        "whose client had owed its next bytes longest"),
            (t.held, "held {n} new connections' first bytes until there was room among "
                     "the handshakes"),
            (t.slowed, f"made {{n}} connections of addresses whose handshakes stalled wait "
                       f"for their turn ({self._stalling_rate:g} handshakes a second of "
                       "such addresses, in all)"),
            (t.unplaced, f"closed {{n}} connections that found no room among the "
                         f"handshakes within {lim.handshake_seconds:g} s"),
            (t.slow, f"closed {{n}} handshakes not over within {lim.handshake_seconds:g} s"),
            (t.per_author, f"refused {{n}} handshakes of keys with {lim.per_author} "
                           "connections open ([server] connections_per_author)"),
            (t.idle, f"closed {{n}} connections idle for {lim.idle_seconds:g} s "
                     "([server] idle_seconds)"),
            (t.displaced, f"closed {{n}} idle connections to let others in, with "
                          f"{self.connections} open ([server] connections)"),
            (t.rate, f"turned away {{n}} connections from addresses opening more than "
                     f"{lim.rate_per_ip:g} a second ([server] handshake_rate_per_ip)"),
            (t.per_hour, f"refused {{n}} handshakes of keys that made {lim.per_hour} in "
                         "the last hour (twice [server] requests_per_hour)"),
            (t.bypass, "refused {n} handshakes of known keys that did not come through it "
                       "(a connection to the socket behind it)"),
        ]
        for n, what in said:  # a line each: a bounded few a window
            if n:
                self.on_line(f"the door {what.format(n=n)} in the last {span}")

    def _accept(self) -> None:
        # At most a pool's worth a turn: a flood of connections does not keep the
        # door from relaying the others' bytes.
        for _ in range(self.limits.handshakes):
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
            ip = address_group(addr[0])
            now = time.monotonic()
            if not self.buckets.take(ip, now):
                self.tally.rate += 1
                _turn_away(client)
                continue
            if self.by_ip[ip] >= self.per_ip and not self._evict(ip, now):
                self.tally.per_ip += 1
                _turn_away(client)
                continue
            if len(self.quiet) + len(self.queued) >= self.limits.quiet:
                self.tally.hushed += 1
                self._hush(self._least_placed(now))
            client.setblocking(False)
            self.quiet[client] = _Quiet(client, ip, now)
            self.by_ip[ip] += 1
            self._sel.register(client, selectors.EVENT_READ)

    def _least_placed(self, now: float) -> _Quiet:
        """Of the connections not connected yet, the one closed to make room for a new
        one: the silent one waiting longest, else, of those waiting for room among
        the handshakes, one of an address not known (``Known``) if there is one, of
        the address with the most stalls, the last come."""
        if self.quiet:
            return next(iter(self.quiet.values()))
        score, known = self.stalls.score, self.known
        return max(reversed(self.queued.values()),
                   key=lambda q: (not known(q.ip, now), score(q.ip, now)))

    def _hush(self, q: _Quiet) -> None:
        """Close a connection not connected to the socket yet."""
        if self.quiet.pop(q.client, None) is None and self.queued.pop(q.client, None) is None:
            return
        with contextlib.suppress(KeyError, ValueError, OSError):
            self._sel.unregister(q.client)
        q.client.close()
        self.by_ip[q.ip] -= 1
        if self.by_ip[q.ip] <= 0:
            del self.by_ip[q.ip]

    def _hear(self, q: _Quiet) -> None:
        """Bytes from a connection not connected yet: held (at most ``HOLD``; past it
        the door reads no more of it until it is connected), and it waits for room
        among the handshakes (``_admit``)."""
        try:
            data = q.client.recv(HOLD - len(q.data))
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._hush(q)
            return
        q.data += data
        if not q.spoke:
            q.spoke = time.monotonic()
            del self.quiet[q.client]
            self.queued[q.client] = q
        if len(q.data) >= HOLD:
            with contextlib.suppress(KeyError, ValueError, OSError):
                self._sel.unregister(q.client)

    def _admit(self, now: float) -> None:
        """Connect to the socket the connections waiting for room, while there is
        room among the handshakes or one may be closed for them (``_evict``): those
        of known addresses first (``Known``: an admitted key's handshake ended there
        within the hour), then of addresses with the fewest stalls (``Stalls``: an address whose
        handshakes stalled or were refused waits behind those whose did not), then
        in the order they spoke.  A connection whose client has sent nothing is
        connected only into room left over, after ``QUIET_GRACE`` (a client that
        waits for the server's greeting before it speaks; libzmq's does not)."""
        lim = self.limits
        if self.queued and (len(self.shaking) < lim.handshakes or self._evictable(now)):
            self._tokens = min(self._stalling_rate, self._tokens + (now - self._tokens_at)
                               * self._stalling_rate)
            self._tokens_at = now
            score, known = self.stalls.score, self.known

            def rank(q: _Quiet) -> tuple[bool, bool, float]:
                stalls, k = score(q.ip, now), known(q.ip, now)
                return stalls >= STALLING and not k, not k, stalls

            # sorted() is stable: among equal ranks, the order they spoke in
            scored = sorted(((rank(q), q) for q in self.queued.values()),
                            key=lambda x: x[0])
            for i, ((stalling, _, _), q) in enumerate(scored):
                if stalling and self._tokens < 1.0:
                    for _, late in scored[i:]:  # the rest are stalling too
                        self.tally.slowed += not late.slowed
                        late.slowed = True
                    break
                if self.shaking_by_ip[q.ip] >= lim.handshakes_per_ip \
                        and not self._evict(q.ip, now, shaking=True):
                    continue  # its address's share is waiting for the server
                if len(self.shaking) >= lim.handshakes and not self._evict(None, now):
                    self._full = now  # those queued now waited for room
                    break
                self._tokens -= stalling
                self._connect(q, now)
        for q in list(self.quiet.values()):  # oldest first
            if now - q.opened < QUIET_GRACE or len(self.shaking) >= lim.handshakes:
                break
            if self.shaking_by_ip[q.ip] < lim.handshakes_per_ip:
                self._connect(q, now)

    def _connect(self, q: _Quiet, now: float) -> None:
        """Connect a connection not connected yet to the socket (a handshake now), and
        relay the bytes it sent meanwhile."""
        (self.queued if q.spoke else self.quiet).pop(q.client)
        with contextlib.suppress(KeyError, ValueError, OSError):
            self._sel.unregister(q.client)
        self.tally.held += 0.0 < q.spoke <= self._full
        pair = self._open(q.client, q.ip, now)
        if pair is None:
            return
        if q.data:
            try:
                self._from_client(pair, bytes(q.data), now)
            except OSError:
                self._close(pair)
        else:
            pair.follow(now)
        if not pair.closed:
            self._watch(pair)

    def _open(self, client: socket.socket, ip: str, opened: float) -> _Pair | None:
        """Connect ``client`` (already counted in ``by_ip``) to the ZeroMQ socket."""
        source = ""
        up: socket.socket | None = None
        try:
            if isinstance(self.upstream, tuple):
                up = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                with self._lock:
                    while not source or source in self._sources or source in self._gone:
                        source = str(SOURCES[self._random.randrange(1, SOURCES.num_addresses
                                                                     - 1)])
                up.setblocking(False)
                up.bind((source, 0))
                if (err := up.connect_ex(self.upstream)) not in (0, errno.EINPROGRESS):
                    raise OSError(err, os.strerror(err))
            else:
                up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                up.connect(self.upstream)
        except OSError:
            if up is not None:
                up.close()
            client.close()
            self.by_ip[ip] -= 1
            if self.by_ip[ip] <= 0:
                del self.by_ip[ip]
            return None
        up.setblocking(False)
        pair = _Pair(client, up, ip, opened=opened, source=source)
        if source:
            with self._lock:
                self._sources[source] = pair
        self.pairs[client] = self.pairs[up] = pair
        self.shaking[id(pair)] = pair
        self.shaking_by_ip[ip] += 1
        for sock in (client, up):
            self._sel.register(sock, selectors.EVENT_READ)
            self._watched[sock] = selectors.EVENT_READ
        return pair

    def _evict(self, ip: str | None, now: float, *, shaking: bool = False) -> bool:
        """Make room by closing a connection whose client owes the next bytes, never
        one waiting for the server.  For ``ip`` at its share of connections (not
        ``shaking``): its oldest silent connection, else its last come of those
        waiting for room, else its handshake whose client has owed its bytes
        longest (the address's own: however briefly).  For a new handshake (of
        ``ip`` at its share of handshakes, or of any address with None): the
        handshake whose client has owed its bytes longest, for ``OWING_GRACE`` at
        least.  Bytes sent are no measure of progress (found by the network
        attacker: handshakes that send a greeting and a HELLO at once and stall had
        sent more than an author's, whose handshake was closed for theirs, from
        300 addresses every time).  A candidate whose bytes have come but are not
        read yet is read first.  False if there is none to close."""
        if ip is not None and not shaking:
            for q in [*self.quiet.values(), *reversed(self.queued.values())]:
                if q.ip == ip:
                    self.tally.hushed += 1
                    self._hush(q)
                    return True
        grace = 0.0 if ip is not None and not shaking else OWING_GRACE
        for _ in range(4):
            candidates = [p for p in self.shaking.values() if (ip is None or p.ip == ip)
                          and p.owes and now - p.owes >= grace]
            if not candidates:
                return False
            pair = min(candidates, key=lambda p: p.owes)
            if not self._unread(pair):
                self.tally.evicted += 1
                self._close(pair)
                return True
            try:
                self._read(pair, pair.client)
            except OSError:
                self._close(pair)
            if pair.closed:
                return True  # it made room itself (cut, or gone)
            self._watch(pair)
        return False

    def _evictable(self, now: float) -> bool:
        """Whether a handshake's client has owed its bytes for ``OWING_GRACE``."""
        return any(p.owes and now - p.owes >= OWING_GRACE for p in self.shaking.values())

    @staticmethod
    def _unread(pair: _Pair) -> bool:
        """Whether the client sent bytes that the door has not read yet."""
        try:
            return bool(pair.client.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT))
        except BlockingIOError:
            return False
        except OSError:
            return True  # reading it will close it

    def _authenticated(self, pair: _Pair, now: float) -> None:
        """The server's READY came: the connection leaves the handshakes' pool for the
        authenticated one; if that is full, the connection idle longest (no request
        waiting) makes room, else this one is turned away."""
        pair.ready, pair.became_ready = True, False
        self.known.add(pair.ip, now)
        pair.unanswered = pair.frames = 0  # the handshake's bytes are no request
        pair.answered, pair.asked = now, 0.0
        self.shaking.pop(id(pair), None)
        self.shaking_by_ip[pair.ip] -= 1
        if self.shaking_by_ip[pair.ip] <= 0:
            del self.shaking_by_ip[pair.ip]
        if len(self.ready) >= self.connections:
            idle = [p for p in self.ready.values() if not p.asked]
            if not idle:
                self.tally.full += 1
                self._close(pair)
                return
            self.tally.displaced += 1
            self._close(min(idle, key=lambda p: p.answered))
        self.ready[id(pair)] = pair

    def _read(self, pair: _Pair, sock: socket.socket) -> None:
        data = sock.recv(READ)
        if not data:
            self._close(pair)
            return
        now = time.monotonic()
        if sock is pair.client:
            self._from_client(pair, data, now)
        else:
            pending = pair.frames
            pair.from_server(data)
            if not pair.ready:
                pair.follow(now)
            if pair.replied:
                pair.replied = False
                pair.answered, pair.asked = now, 0.0
            elif pending and not pair.frames:
                # PONGs answered every frame the client sent (its PINGs): nothing is
                # asked, and heartbeats do not keep a connection from being idle
                pair.asked = 0.0
            pair.to_client += data
            self._write(pair, pair.client)
            if pair.became_ready:
                self._authenticated(pair, now)

    def _from_client(self, pair: _Pair, data: bytes, now: float) -> None:
        pair.unanswered += len(data)
        asked = pair.frames
        pair.from_client(data)
        if pair.unanswered > self.budget or pair.frames > FRAMES + HEARTBEATS \
                or not pair.zmtp3():
            self.tally.cut += 1
            self._close(pair)
            return
        if not pair.ready:
            pair.follow(now)
        if pair.ready and pair.frames and not asked:
            pair.asked = now
        pair.to_up += data
        self._write(pair, pair.up)

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

    def _close(self, pair: _Pair, *, stalled: bool = True) -> None:
        """Close both sides of a connection.  One closed before the server's READY
        counts against its address (``Stalls``) unless not ``stalled``: a handshake
        closed by the door while it waited for the server, or the door closing."""
        if pair.closed:
            return
        if stalled and not pair.ready:
            self.stalls.add(pair.ip, time.monotonic())
        with self._lock:
            pair.closed = True
            if pair.source:
                self._sources.pop(pair.source, None)
                if not pair.ready:
                    self._gone[pair.source] = now = time.monotonic()
                    while self._gone and (len(self._gone) > GONE_KEPT or
                                          next(iter(self._gone.values())) < now - GONE_SECONDS):
                        self._gone.popitem(last=False)
            if pair.author is not None:
                self._authors[pair.author] -= 1
                if self._authors[pair.author] <= 0:
                    del self._authors[pair.author]
        for sock in (pair.client, pair.up):
            self.pairs.pop(sock, None)
            if self._watched.pop(sock, 0):
                with contextlib.suppress(KeyError, ValueError, OSError):
                    self._sel.unregister(sock)
            with contextlib.suppress(OSError):
                sock.close()
        if self.shaking.pop(id(pair), None) is not None:
            self.shaking_by_ip[pair.ip] -= 1
            if self.shaking_by_ip[pair.ip] <= 0:
                del self.shaking_by_ip[pair.ip]
        self.ready.pop(id(pair), None)
        self.by_ip[pair.ip] -= 1
        if self.by_ip[pair.ip] <= 0:
            del self.by_ip[pair.ip]
