"""The bound ROUTER socket, shared by the transports of its peers.

Owns ``_Router`` -- one bound ROUTER, its context, monitor and (with CURVE)
authenticator: incoming frames sorted into one queue per connection, connections
refused at the handshake counted by reason -- and ``bind_loopback``, the ROUTER of
one launched bot.  ``is_loopback`` says which endpoints may be listened on without
CURVE.

Of what has arrived and is not read yet, at most ``_QUEUE_CAP`` messages and
``_QUEUE_BYTES`` times the limit in bytes are held per connection (a frame over the
limit is held as its size only); more is dropped.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
import shutil
import stat
import tempfile
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import msgpack
import zmq
import zmq.auth.thread
from zmq.utils.monitor import parse_monitor_message

from ..base import MessageTooLarge, TransportClosed
from .codec import MAX_MESSAGE_BYTES, _says_hello, _too_large, decode_frame
from .watchdog import FINE, TcpWatch, connection_limit

log = logging.getLogger("referee.zmq")

#: The ZAP domain of the referee's sockets (ZeroMQ's authentication protocol).
ZAP_DOMAIN = b"updown"

# Messages held for one peer (or for all not yet admitted) before more are dropped;
# and their bytes, in messages of the largest size allowed.
_QUEUE_CAP = 1000
_QUEUE_BYTES = 4

def is_loopback(endpoint: str) -> bool:
    """True for ``ipc://`` / ``inproc://`` endpoints and TCP on a loopback address:
    the only endpoints the referee may listen on without CURVE."""
    scheme, _, rest = endpoint.partition("://")
    if scheme in ("ipc", "inproc"):
        return True
    if scheme != "tcp":
        return False
    host = urlsplit("//" + rest).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # "*", an interface name, a host name
        return False


# --- the bound ROUTER socket, shared by the transports of its peers ----------------------


@dataclass
class _Frame:
    """One message as it came off the socket: its payload frames and who sent it.
    Of a message that can only be refused -- a frame over the size limit, several
    frames -- only that much is kept (``too_large``: the frame's size; empty parts),
    not its bytes."""

    parts: list[bytes]
    user_id: str | None  # the z85 CURVE key the authenticator admitted, if any
    too_large: int = 0

    @property
    def nbytes(self) -> int:
        return sum(map(len, self.parts))


class _Held(deque[Any]):
    """Messages held for one connection (``_Frame``), or for the connections not yet
    claimed (``(key, _Frame)``), counting the bytes they hold."""

    nbytes = 0

    @staticmethod
    def _size(x: Any) -> int:
        return (x[1] if isinstance(x, tuple) else x).nbytes  # type: ignore[no-any-return]

    def append(self, x: Any) -> None:
        super().append(x)
        self.nbytes += self._size(x)

    def appendleft(self, x: Any) -> None:
        super().appendleft(x)
        self.nbytes += self._size(x)

    def popleft(self) -> Any:
        x = super().popleft()
        self.nbytes -= self._size(x)
        return x


@dataclass(frozen=True)
class Refusal:
    """A connection an endpoint refused, as data (``on_refusal``), besides the log
    line: ``why`` it was refused, ``who`` (a CURVE key, or the name its hello gave,
    when known), and how many connections were refused so far for that reason."""

    endpoint: str
    why: str
    who: str | None = None
    count: int = 1


OnRefusal = Callable[[Refusal], None]


class _Router:
    """One bound ROUTER socket, its context, monitor and (with CURVE) authenticator.
    Incoming frames are sorted into one queue per connection; connections no
    transport has claimed yet wait in ``unclaimed``.

    A connection is known by a *key*: its peer's routing id -- except a later
    connection under a routing id already seen, which gets a key of its own
    (``_new_connection``).  A bot that sets its own routing id (``ZMQ_ROUTING_ID``)
    and connects again after losing its connection is a new peer, not its old
    connection come back: what is known of the old one (dropped, its queue, its
    transport) must not stick to the new one."""

    def __init__(
        self,
        endpoint: str,
        *,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
        server_secret: bytes | None = None,
        allowed_keys: Mapping[str, bytes] | None = None,
        heartbeat: bool = False,
        private_dir: str | None = None,
        on_refusal: OnRefusal | None = None,
    ) -> None:
        self.max_message_bytes = max_message_bytes
        #: Told of every refused connection (from the authenticator's thread too).
        self.on_refusal = on_refusal
        self.private_dir = private_dir
        self.queues: dict[bytes, _Held] = {}
        self.unclaimed = _Held()
        self.fds: dict[bytes, int] = {}  # connection key -> its connection's fd
        self.dropped: set[bytes] = set()  # keys of connections known to be gone
        # Dropped since the socket was last read to the end: what is readable of
        # theirs was sent before they dropped (``_key``).
        self.settling: set[bytes] = set()
        self.current: dict[bytes, bytes] = {}  # routing id -> key of its latest connection
        self.routing_ids: dict[bytes, bytes] = {}  # such a key -> its routing id
        self.reconnections = 0
        self.refusals = 0  # connections refused at the handshake
        self.refused_by_reason: dict[str, int] = {}
        self.denied_keys: list[str] = []  # appended by the authenticator's thread
        self.flooded = 0  # messages dropped over _QUEUE_CAP
        self.ignored: set[bytes] = set()  # connections refused: what they send is dropped
        # Connections the TCP watchdog closed, by key: why (``watchdog``).
        self.cut: dict[bytes, str] = {}
        self.watch: TcpWatch | None = None
        self.closed = False
        # The ipc socket file we bound, and its inode: libzmq leaves it behind.
        self._socket_file: tuple[str, int] | None = None
        self.ctx = zmq.Context()
        self.auth: zmq.auth.thread.ThreadAuthenticator | None = None
        self.key_owner: dict[str, str] = {}
        self.endpoint = endpoint
        try:
            self.sock = self.ctx.socket(zmq.ROUTER)
            self.sock.setsockopt(zmq.LINGER, 0)
            self.sock.setsockopt(zmq.ROUTER_MANDATORY, 1)
            # A bot that sets its own routing id and connects again (a new socket, a
            # new hello) may come before libzmq has let go of its old connection:
            # without handover libzmq would ignore the new one for good (the bot
            # would wait for its welcome forever).  The price: a peer using another's
            # routing id ends that one's connection -- only ever a bot's own choice
            # of routing id (libzmq's own cannot be chosen), and with CURVE only an
            # admitted bot's doing.
            self.sock.setsockopt(zmq.ROUTER_HANDOVER, 1)
            self.sock.setsockopt(zmq.MAXMSGSIZE, 2 * max_message_bytes)
            # With MAXMSGSIZE this bounds what libzmq may hold for one peer.
            self.sock.setsockopt(zmq.RCVHWM, 100)
            if "[" in endpoint:  # an IPv6 address: libzmq binds IPv4 only by default
                self.sock.setsockopt(zmq.IPV6, 1)
            if heartbeat:  # notice a remote bot's vanished network link
                self.sock.setsockopt(zmq.HEARTBEAT_IVL, 2000)
                self.sock.setsockopt(zmq.HEARTBEAT_TIMEOUT, 10000)
            if server_secret is not None:
                self._setup_curve(server_secret, allowed_keys or {})
            # libzmq's I/O thread sends monitor events with a lock held and blocks
            # while they cannot be queued: our end takes any number of them (no HWM),
            # and is closed only after the monitor is stopped (``close``).
            monitor_addr = f"inproc://monitor-{id(self):x}"
            self.sock.monitor(monitor_addr, zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED
                              | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
                              | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
                              | zmq.EVENT_HANDSHAKE_FAILED_AUTH)
            self.monitor = self.ctx.socket(zmq.PAIR)
            self.monitor.setsockopt(zmq.LINGER, 0)
            self.monitor.setsockopt(zmq.RCVHWM, 0)
            self.monitor.connect(monitor_addr)
            self.sock.bind(endpoint)
            self.endpoint = self.sock.getsockopt_string(zmq.LAST_ENDPOINT)
            self._socket_file = _ipc_socket_file(self.endpoint)
            if self.endpoint.startswith("tcp://"):
                # What a connection may send before its message ends (``watchdog``).
                self.watch = TcpWatch(self.endpoint, connection_limit(max_message_bytes),
                                      events_fd=int(self.monitor.getsockopt(zmq.FD)))
                # Read to the end once: from now on libzmq signals ``events_fd`` when
                # an event comes to a monitor nobody has read since.
                self._read_monitor()
        except BaseException:
            self.close()
            raise
        self.poller = zmq.Poller()
        self.poller.register(self.sock, zmq.POLLIN)
        self.poller.register(self.monitor, zmq.POLLIN)

    def _setup_curve(self, server_secret: bytes, allowed_keys: Mapping[str, bytes]) -> None:
        self.key_owner = {key.decode("ascii"): name for name, key in allowed_keys.items()}
        # The ZAP handler belongs to the context: this router has a context of its own.
        self.auth = zmq.auth.thread.ThreadAuthenticator(self.ctx, log=log.getChild("auth"))
        self.auth.start()
        # pyzmq looks the callback up by the socket's ZAP domain ("*" would not match).
        self.auth.configure_curve_callback(ZAP_DOMAIN.decode(), _KeyCheck(self))
        self.sock.setsockopt(zmq.CURVE_SERVER, 1)
        self.sock.setsockopt(zmq.CURVE_SECRETKEY, server_secret)
        self.sock.setsockopt(zmq.CURVE_PUBLICKEY, zmq.curve_public(server_secret))
        self.sock.setsockopt(zmq.ZAP_DOMAIN, ZAP_DOMAIN)

    # -- reading -------------------------------------------------------------------

    def pump(self, timeout: float, fds: Sequence[int] = ()) -> None:
        """Wait up to ``timeout`` seconds for a frame, a monitor event or one of
        ``fds`` to become readable, then sort everything already there."""
        for fd in fds:
            self.poller.register(fd, zmq.POLLIN)
        try:
            watch = self.watch
            if watch is not None and timeout > FINE and watch.conns:
                ready = self._watched_poll(watch, timeout)
            else:
                ready = dict(self.poller.poll(max(0, int(timeout * 1000))))
        finally:
            for fd in fds:
                self.poller.unregister(fd)
        if self.monitor in ready or self.sock in ready:
            self._read_frames()  # (disconnections first)

    def _watched_poll(self, watch: TcpWatch, timeout: float) -> dict[Any, int]:
        """``poll`` for ``timeout`` seconds in slices of ``FINE``, checking the TCP
        connections between them: the wait of a bot's reply is when it is most likely
        to send (a message in parts that does not end), so it is checked closer than
        the watchdog's thread does."""
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            ready = dict(self.poller.poll(max(0, int(min(left, FINE) * 1000 + 0.999))))
            if ready or left <= FINE:
                return ready
            watch.check(time.monotonic())

    def _read_frames(self) -> None:
        while True:
            # Disconnections first: libzmq reports one before it closes the
            # connection, so one reported after this frame was read would come from a
            # connection that ended after the frame's own had begun -- and the old
            # connection of a routing id is then known to be gone when its new one's
            # first frame is read (``_key``).
            if int(self.monitor.get(zmq.EVENTS)) & zmq.POLLIN:
                self._read_monitor()
            try:
                frames = self.sock.recv_multipart(zmq.NOBLOCK, copy=False)
            except zmq.Again:
                # Read to the end: whatever comes now of a dropped connection's
                # routing id comes from a new connection.
                self.settling.clear()
                return
            user_id: str | None = None
            fd: int | None = None
            if len(frames) > 1:
                with contextlib.suppress(zmq.ZMQError):
                    fd = frames[1].get(zmq.SRCFD)
                if self.auth is not None:
                    with contextlib.suppress(zmq.ZMQError):
                        user_id = str(frames[1].get("User-Id"))
            payload = frames[1:]
            if len(payload) != 1:  # refused for that alone (decode_frame)
                item = _Frame([b""] * len(payload), user_id)
            elif len(payload[0]) > self.max_message_bytes:
                item = _Frame([b""], user_id, too_large=len(payload[0]))
            else:
                item = _Frame([payload[0].bytes], user_id)
            # A new connection's first message says hello even when it is refused for
            # its form (a REQ socket's empty delimiter frame, then the hello): the
            # hello is looked for in the frames as they came, not in ``item``.
            identity = self._key(frames[0].bytes, fd, [p.bytes for p in payload[:2]]
                                 if len(payload) > 1 else item.parts)
            if fd is not None and self.watch is not None:
                self.watch.read(fd)  # a message came: the connection owes none now
            if identity in self.ignored:
                continue
            queue = self.queues.get(identity)
            target = self.unclaimed if queue is None else queue
            if len(target) >= _QUEUE_CAP or (
                    target.nbytes + item.nbytes > _QUEUE_BYTES * self.max_message_bytes):
                # A bot is sending far more than the protocol ever asks for (one reply
                # per request): keep memory bounded, and say so.
                self.flooded += 1
                if self.flooded == 1 or str(self.flooded).rstrip("0") == "1":
                    log.warning("dropped %d messages on %s: a peer sends far more than "
                                "it is asked for", self.flooded, self.endpoint)
                continue
            target.append(item if queue is not None else (identity, item))

    def _key(self, routing_id: bytes, fd: int | None, parts: list[bytes]) -> bytes:
        """The key of the connection a frame came from (see the class docstring).
        A routing id is one connection at a time (ROUTER_HANDOVER gives it to the
        newest), so a frame from another fd than the routing id's connection had
        comes from a new connection.  So does one from the same fd (libzmq reuses
        fd numbers) after that connection was seen to drop -- unless it was
        readable then: libzmq reports a drop after it has passed on what the
        connection sent, so the socket, read to the end after the drop was seen,
        gives that connection's last frames (``settling``).  A hello is a new
        connection's in any case."""
        key = self.current.get(routing_id, routing_id)
        if fd is None:
            return key
        known = self.fds.get(key)
        if known is not None and (fd != known or (
                key in self.dropped and (key not in self.settling or _says_hello(parts)))):
            key = self._new_connection(routing_id, key)
        self.fds[key] = fd
        return key

    def _new_connection(self, routing_id: bytes, old: bytes) -> bytes:
        self.dropped.add(old)
        self.reconnections += 1
        # Never a peer's routing id: those are at most 255 bytes and never start
        # with a zero byte, and libzmq's own are 5 bytes.
        key = b"\x00\xff" + self.reconnections.to_bytes(8, "big") + routing_id
        self.current[routing_id] = key
        self.routing_ids[key] = routing_id
        return key

    def _read_monitor(self) -> None:
        while True:
            try:
                event = parse_monitor_message(self.monitor.recv_multipart(zmq.NOBLOCK))
            except zmq.Again:
                return
            kind, value = event["event"], int(event["value"])
            if kind == zmq.EVENT_DISCONNECTED:
                cut = self.watch.gone(value) if self.watch is not None else ""
                for identity, fd in self.fds.items():
                    if fd == value and identity not in self.dropped:
                        self.dropped.add(identity)
                        self.settling.add(identity)
                        if cut:
                            self.cut[identity] = cut
            elif kind == zmq.EVENT_ACCEPTED:
                if self.watch is not None:
                    self.watch.accepted(value)
            elif kind == zmq.EVENT_HANDSHAKE_FAILED_AUTH:
                self.refusals += 1  # the key check has logged which key it was
            elif kind == zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL:
                self._refused(_PROTOCOL_ERRORS.get(value, f"protocol error {value:#x}"))
            elif kind == zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL:
                # The client hung up first: typically on seeing a mechanism it does
                # not expect, before the server could tell what was wrong.
                self._refused(f"the client broke off the handshake ({_errno_text(value)}): "
                              + ("most likely it does not use CURVE, or uses the wrong "
                                 "server key" if self.auth else "does it use CURVE? this "
                                 "endpoint does not"))

    def _refused(self, why: str) -> None:
        """Log a refused connection: each reason the first time, then at 10, 100...
        (a refused client reconnects every 100 ms and would flood the log)."""
        self.refusals += 1
        n = self.refused_by_reason[why] = self.refused_by_reason.get(why, 0) + 1
        if n == 1 or str(n).rstrip("0") == "1":
            log.warning("refused a connection on %s: %s%s", self.endpoint, why,
                        f" ({n} times so far)" if n > 1 else "")
        self.report(Refusal(self.endpoint, why, count=n))

    def report(self, refusal: Refusal) -> None:
        if self.on_refusal is not None:
            self.on_refusal(refusal)

    def claim(self, identity: bytes) -> _Held:
        """Route ``identity``'s frames to a queue of its own (taking any already
        waiting in ``unclaimed``)."""
        queue = self.queues.setdefault(identity, _Held())
        rest = _Held()
        for who, item in self.unclaimed:
            if who == identity:
                queue.append(item)
            else:
                rest.append((who, item))
        self.unclaimed = rest
        return queue

    def send(self, identity: bytes, message: Mapping[str, Any]) -> None:
        """Send to the connection whose key is ``identity``."""
        routing_id = self.routing_ids.get(identity, identity)
        if self.current.get(routing_id, routing_id) != identity:
            raise TransportClosed("the bot's connection is gone (it connected again)")
        data = msgpack.packb(message, use_bin_type=True)
        try:
            self.sock.send_multipart([routing_id, data], zmq.NOBLOCK)
        except zmq.Again:
            raise TransportClosed("the bot is not reading its messages (its queue is "
                                  "full)") from None
        except zmq.ZMQError as e:
            if e.errno == zmq.EHOSTUNREACH:
                raise TransportClosed("the bot's connection is gone") from None
            raise TransportClosed(f"cannot send: {e}") from None

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.watch is not None:
            self.watch.close()
        sock = getattr(self, "sock", None)
        monitor = getattr(self, "monitor", None)
        if sock is not None:
            # Stop the monitor while its receiving end is open: libzmq's I/O thread
            # would block for good on an event sent to a closed PAIR (holding the
            # lock that disable_monitor needs).
            with contextlib.suppress(zmq.ZMQError):
                sock.disable_monitor()
        if monitor is not None:
            monitor.close(linger=0)
        if sock is not None:
            sock.close(linger=0)
        if self.auth is not None:
            self.auth.stop()
        self.ctx.term()
        if self._socket_file is not None:
            path, inode = self._socket_file
            # Only the file we made: another program may have bound the path since.
            with contextlib.suppress(OSError):
                st = os.lstat(path)
                if stat.S_ISSOCK(st.st_mode) and st.st_ino == inode:
                    os.unlink(path)
        if self.private_dir is not None:
            shutil.rmtree(self.private_dir, ignore_errors=True)


def _ipc_socket_file(endpoint: str) -> tuple[str, int] | None:
    """The socket file of a bound ``ipc://`` endpoint and its inode (None for any
    other endpoint, and for Linux's abstract names, ``ipc://@name``)."""
    if not endpoint.startswith("ipc://") or endpoint.startswith("ipc://@"):
        return None
    path = endpoint[len("ipc://"):]
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (path, st.st_ino) if stat.S_ISSOCK(st.st_mode) else None


def _decode(item: _Frame, max_message_bytes: int) -> dict[str, Any]:
    """``decode_frame`` of a message as the router holds it."""
    if item.too_large:
        raise MessageTooLarge(_too_large(item.too_large, max_message_bytes))
    return decode_frame(item.parts, max_message_bytes)


# libzmq's ZMQ_PROTOCOL_ERROR_* values, as HANDSHAKE_FAILED_PROTOCOL reports them.
_PROTOCOL_ERRORS = {
    0x11000001: "the CURVE handshake failed: the client used the wrong server key "
                "(or a corrupt keypair)",
    0x11000002: "security mechanism mismatch: the client does not use CURVE (or the "
                "referee does not and the client does)",
    0x10000000: "ZMTP protocol error (not a ZeroMQ client?)",
}


def _errno_text(value: int) -> str:
    try:
        return os.strerror(value) if value else "no detail"
    except ValueError:
        return f"errno {value}"


class _KeyCheck:
    """The authenticator's CURVE callback: is this client key one we know?  Runs in
    the authenticator's thread; it only reads ``key_owner``."""

    def __init__(self, router: _Router) -> None:
        self.router = router

    def callback(self, domain: str, key: bytes) -> bool:
        text = key.decode("ascii", "replace")
        owner = self.router.key_owner.get(text)
        if owner is None:
            why = f"CURVE key {text} is not allowed (it is no listed bot's public key)"
            if text not in self.router.denied_keys:  # once per key: it reconnects
                log.warning("refused a connection on %s: %s", self.router.endpoint, why)
            self.router.denied_keys.append(text)
            self.router.report(Refusal(self.router.endpoint, why, text,
                                       self.router.denied_keys.count(text)))
            return False
        log.info("CURVE key of %r accepted on %s", owner, self.router.endpoint)
        return True


def bind_loopback(transport: str = "ipc", *,
                  max_message_bytes: int = MAX_MESSAGE_BYTES) -> _Router:
    """A ROUTER for one launched bot: ``ipc`` (a socket file in a fresh private
    directory: no other local user can connect) or ``tcp`` (127.0.0.1, a random
    port)."""
    if transport == "ipc" and zmq.has("ipc"):
        private = tempfile.mkdtemp(prefix="updown-zmq-")
        return _Router(f"ipc://{private}/bot", max_message_bytes=max_message_bytes,
                       private_dir=private)
    if transport not in ("ipc", "tcp"):
        raise ValueError(f"transport must be 'ipc' or 'tcp', not {transport!r}")
    return _Router("tcp://127.0.0.1:*", max_message_bytes=max_message_bytes)


