"""The ZeroMQ transport: msgpack messages, one per frame, between a ROUTER and a bot.

Owns everything that touches a ZeroMQ socket on the referee's side:

* ``ZmqTransport`` -- ``base.Transport`` for one bot (one peer identity) on a bound
  ROUTER socket: msgpack encoding, frame limits, receive with a timeout by
  ``poll``, a lost connection or a dead bot process reported as ``TransportClosed``.
* ``launch_zmq_bot`` -- a bot the referee starts itself: a ROUTER
  bound on loopback (an ``ipc://`` path in a private directory, or
  ``tcp://127.0.0.1:<random port>``), the endpoint given to the bot in
  ``UPDOWN_ENDPOINT`` (and ``UPDOWN_TRANSPORT=zmq``).
* ``RemoteListener`` / ``wait_for_remote_bot`` -- a bot started
  by its author elsewhere connects to a listening endpoint and is admitted only with
  its own CURVE key (``zmq.auth.thread.ThreadAuthenticator`` with the allowed
  public keys); its ``hello`` must carry the name the key belongs to.  CURVE is
  required whenever the endpoint is not loopback.
* ``trivial_bot`` -- the smallest ZeroMQ bot (``python -m referee.transport.zmq.transport``),
  for ``referee.players.external.bench_game_zmq``.

The players built on these (``zmq_player``, ``remote_player``) are
``referee.players.external``'s: a transport knows nothing of games or players.

The wire (protocol/ZEROMQ.md): the referee binds ROUTER, the bot connects DEALER;
every message is one single-part frame holding one msgpack map.  The protocol
itself (hello, requests, ids) is ``referee.protocol``'s business, not this module's.

Frame limits.  A frame over ``max_message_bytes`` is reported as
``MessageTooLarge`` (the connection stays usable).  ZeroMQ's own ``MAXMSGSIZE`` is
set to twice that, so that a bot can never make the referee allocate more: a frame
over *that* makes libzmq drop the connection before reading it, which is reported
as ``TransportClosed``.  Of what has arrived and is not read yet, at most
``_QUEUE_CAP`` messages and ``_QUEUE_BYTES`` times the limit in bytes are held per
connection (a frame over the limit is held as its size only); more is dropped.

Errors (``base``)::

    TransportError
     +-- TransportTimeout    nothing arrived in time
     +-- TransportClosed     the bot process exited, or its connection was dropped
     +-- MessageTooLarge     a frame over max_message_bytes
     +-- MalformedMessage    not msgpack, not a map, or not exactly one frame

Must not import at module level: the game engine, the runner or ``referee.players.external``
(the player factories and the bench import them when called).
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
import secrets
import shutil
import stat
import sys
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

from ...players.process import DEFAULT_STDERR_CAP, BotProcess, BotStartError, StderrLog, start_bot
from ...text.quoting import quote, show
from ..base import MalformedMessage, MessageTooLarge, TransportClosed, TransportTimeout

log = logging.getLogger("referee.zmq")

#: Default cap on one message (a msgpack frame), as ``referee.protocol``'s.
MAX_MESSAGE_BYTES = 1 << 20

#: The ZAP domain of the referee's sockets (ZeroMQ's authentication protocol).
ZAP_DOMAIN = b"updown"

# Environment variables given to (or read by) bots: protocol/ZEROMQ.md.
ENV_ENDPOINT = "UPDOWN_ENDPOINT"
ENV_TRANSPORT = "UPDOWN_TRANSPORT"
ENV_SERVER_KEY = "UPDOWN_SERVER_KEY"
ENV_PUBLIC_KEY = "UPDOWN_PUBLIC_KEY"
ENV_SECRET_KEY = "UPDOWN_SECRET_KEY"
ENV_TOKEN = "UPDOWN_TOKEN"

# Messages held for one peer (or for all not yet admitted) before more are dropped;
# and their bytes, in messages of the largest size allowed.
_QUEUE_CAP = 1000
_QUEUE_BYTES = 4
# Without a pidfd to wait on, the process is checked this often while waiting.
_PROCESS_CHECK = 0.05
# After a lost connection, how long to wait for the bot process to exit, so that the
# fault can name its exit code rather than just "connection lost".
_EXIT_GRACE = 0.5


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
    ) -> None:
        self.max_message_bytes = max_message_bytes
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
            self.sock.monitor(monitor_addr, zmq.EVENT_DISCONNECTED
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
            ready = dict(self.poller.poll(max(0, int(timeout * 1000))))
        finally:
            for fd in fds:
                self.poller.unregister(fd)
        if self.monitor in ready or self.sock in ready:
            self._read_frames()  # (disconnections first)

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
                for identity, fd in self.fds.items():
                    if fd == value and identity not in self.dropped:
                        self.dropped.add(identity)
                        self.settling.add(identity)
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


def _says_hello(parts: Sequence[bytes]) -> bool:
    """Is this message a hello (however well formed: one of its frames, after a
    REQ socket's empty delimiter, say)?"""
    for part in parts[:2]:
        if len(part) > 4096:
            continue
        try:
            value = msgpack.unpackb(part, raw=False)
        except Exception:
            continue
        if isinstance(value, dict) and value.get("type") == "hello":
            return True
    return False


def _unpack_error(e: Exception) -> str:
    """What msgpack found wrong with a frame, in msgpack's terms (its own texts are
    empty for some errors, and name Python's arguments for others)."""
    text = str(e)
    if isinstance(e, msgpack.exceptions.StackError):
        return "values nested too deeply"
    if isinstance(e, msgpack.exceptions.FormatError):
        return "a byte that starts no msgpack value"
    if isinstance(e, msgpack.exceptions.ExtraData):
        return "more bytes after the first value"
    if isinstance(e, UnicodeDecodeError):
        return (f"a string that is not UTF-8: byte 0x{e.object[e.start]:02x} at offset "
                f"{e.start} of the string: {e.reason}")
    if "strict_map_key" in text:
        return "a map key that is not a string"
    if "incomplete input" in text or " exceeds max_" in text:
        return "it ends before its value does"
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def _too_large(size: int, max_message_bytes: int) -> str:
    return f"a frame of {size} bytes, over the limit of {max_message_bytes}"


def _decode(item: _Frame, max_message_bytes: int) -> dict[str, Any]:
    """``decode_frame`` of a message as the router holds it."""
    if item.too_large:
        raise MessageTooLarge(_too_large(item.too_large, max_message_bytes))
    return decode_frame(item.parts, max_message_bytes)


def decode_frame(parts: Sequence[bytes], max_message_bytes: int) -> dict[str, Any]:
    """One message from the payload frames of one ZeroMQ message."""
    if len(parts) != 1:
        raise MalformedMessage(
            f"a message of {len(parts)} frames, where a message must be exactly one frame "
            f"(send each msgpack map as a single-part message from a DEALER socket; a REQ "
            f"socket adds an empty delimiter frame)")
    data = parts[0]
    if len(data) > max_message_bytes:
        raise MessageTooLarge(_too_large(len(data), max_message_bytes))
    if not data:
        raise MalformedMessage("an empty frame, where a message must be one msgpack map")
    try:
        value = msgpack.unpackb(data, raw=False, strict_map_key=True)
    except Exception as e:  # msgpack raises several kinds; all mean "not msgpack"
        raise MalformedMessage(f"a frame that is not a msgpack value ({_unpack_error(e)})"
                               ) from None
    if not isinstance(value, dict):
        raise MalformedMessage.not_an_object(value, "msgpack")
    return value


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
            if text not in self.router.denied_keys:  # once per key: it reconnects
                log.warning("refused a connection on %s: CURVE key %s is not allowed (it is "
                            "no listed bot's public key)", self.router.endpoint, text)
            self.router.denied_keys.append(text)
            return False
        log.info("CURVE key of %r accepted on %s", owner, self.router.endpoint)
        return True


# --- the transport -----------------------------------------------------------------------


class ZmqTransport:
    """``base.Transport`` for one bot on a ROUTER socket.

    ``identity`` is the bot's ZeroMQ routing id; ``None`` means "the first peer to
    send anything" (a launched bot, alone on its socket) -- with ``token``, the first
    peer whose first message is a hello carrying that token (``UPDOWN_TOKEN``, given
    to the launched process only): any other peer is refused, told why, and what it
    sends is dropped, so nothing but the launched process can take its seat.  With
    ``process``, a bot process that exits while the referee waits is reported at once
    (through a pidfd where Linux has one) as ``TransportClosed`` naming the exit
    code."""

    def __init__(
        self,
        router: _Router,
        identity: bytes | None = None,
        *,
        process: BotProcess | None = None,
        owns_router: bool = True,
        name: str = "bot",
        on_close: Callable[[ZmqTransport], None] | None = None,
        token: str | None = None,
    ) -> None:
        self._router = router
        self.token = token
        #: Connections refused because their hello lacked the launch's token.
        self.impostors = 0
        self._on_close = on_close
        self.identity = identity
        self._queue: _Held | None = router.claim(identity) if identity else None
        self.process = process
        self.owns_router = owns_router
        self.name = name
        self.closed = False

    @property
    def endpoint(self) -> str:
        return self._router.endpoint

    @property
    def max_message_bytes(self) -> int:
        return self._router.max_message_bytes

    def send(self, message: dict[str, Any]) -> None:
        if self.closed:
            raise TransportClosed("the transport is closed")
        if self.identity is None:
            # The bot speaks first (hello); nothing can be sent before it has.
            raise TransportClosed(f"no bot has connected to {self.endpoint} yet")
        if self.identity in self._router.dropped:
            raise TransportClosed(self._lost_text())
        self._router.send(self.identity, message)

    def recv(self, timeout: float) -> dict[str, Any]:
        if self.closed:
            raise TransportClosed("the transport is closed")
        deadline = time.monotonic() + timeout
        while True:
            item = self._take()
            if item is not None:
                return self._decode(item)
            if self.identity is not None and self.identity in self._router.dropped:
                self._wait_exit(_EXIT_GRACE)
                raise TransportClosed(self._lost_text())
            if self.process is not None and self.process.returncode is not None:
                self._router.pump(0)  # what it sent before it died still counts
                item = self._take()
                if item is not None:
                    return self._decode(item)
                raise TransportClosed(f"the bot process {self.process.exit_description()}")
            left = deadline - time.monotonic()
            if left <= 0:
                refused = (f" ({self.impostors} connection(s) refused: the first message "
                           f"must be a hello carrying this launch's UPDOWN_TOKEN)"
                           if self.identity is None and self.impostors else "")
                raise TransportTimeout(f"no message within {timeout:.3f}s{refused}")
            exit_fd = self.process.exit_fd if self.process is not None else None
            if self.process is not None and exit_fd is None:
                left = min(left, _PROCESS_CHECK)
            self._router.pump(left, () if exit_fd is None else (exit_fd,))

    def _take(self) -> _Frame | None:
        if self._queue is None:
            router = self._router
            while router.unclaimed:
                identity, item = router.unclaimed[0]
                if identity in router.ignored:
                    router.unclaimed.popleft()
                    continue
                if self.token is not None and not self._has_token(identity, item):
                    router.unclaimed.popleft()
                    continue
                self.identity = identity
                self._queue = router.claim(identity)
                break
            else:
                return None
        return self._queue.popleft() if self._queue else None

    def _has_token(self, identity: bytes, item: _Frame) -> bool:
        """Is this first message of a connection a hello with the launch's token?  If
        not, the connection is refused (told why; what it sends later is dropped)."""
        try:
            hello = _decode(item, self.max_message_bytes)
        except (MalformedMessage, MessageTooLarge):
            hello = {}
        if hello.get("type") == "hello" and hello.get("token") == self.token:
            return True
        self.impostors += 1
        why = ("its hello does not carry this launch's token (UPDOWN_TOKEN)"
               if hello.get("type") == "hello" else "its first message is not a hello "
               "carrying this launch's token (UPDOWN_TOKEN)")
        log.warning("refused a connection to %s's endpoint %s: %s", self.name,
                    self.endpoint, why)
        self._router.ignored.add(identity)
        with contextlib.suppress(TransportClosed):
            self._router.send(identity, {"type": "error", "code": "protocol",
                                         "message": f"refused: {why}; only the bot the "
                                                    f"referee started may connect here",
                                         "action": "disconnect"})
        return False

    def _wait_exit(self, grace: float) -> None:
        """Give a bot whose connection dropped a moment to finish exiting."""
        if self.process is not None and self.process.returncode is None:
            self.process.wait(grace)

    def _lost_text(self) -> str:
        if self.process is not None and self.process.returncode is not None:
            return f"the bot process {self.process.exit_description()}"
        return (f"the bot's connection to {self.endpoint} was dropped: it closed its "
                f"socket, lost its link, or sent a frame over ZeroMQ's hard limit of "
                f"{2 * self.max_message_bytes} bytes")

    def _decode(self, item: _Frame) -> dict[str, Any]:
        return _decode(item, self.max_message_bytes)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.owns_router:
            self._router.close()
        elif self.identity is not None:
            self._router.queues.pop(self.identity, None)
        if self._on_close is not None:
            self._on_close(self)


# --- launched bots -----------------------------------------------------------------------


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


def bot_env(endpoint: str, *, server_key: bytes | None = None,
            keypair: tuple[bytes, bytes] | None = None,
            base: Mapping[str, str] | None = None,
            token: str | None = None) -> dict[str, str]:
    """The protocol's variables a ZeroMQ bot is started with (protocol/ZEROMQ.md),
    added to ``base`` (its configuration's).  Key variables in ``base`` are dropped:
    a launched bot gets keys only when given here."""
    env = {k: v for k, v in (base or {}).items()
           if k not in (ENV_SERVER_KEY, ENV_PUBLIC_KEY, ENV_SECRET_KEY, ENV_TOKEN)}
    env[ENV_ENDPOINT] = endpoint
    env[ENV_TRANSPORT] = "zmq"
    if token is not None:
        env[ENV_TOKEN] = token
    if server_key is not None:
        env[ENV_SERVER_KEY] = server_key.decode("ascii")
    if keypair is not None:
        env[ENV_PUBLIC_KEY] = keypair[0].decode("ascii")
        env[ENV_SECRET_KEY] = keypair[1].decode("ascii")
    return env


class LaunchedZmqBot:
    """A bot process the referee started, and its transport.  ``close`` ends both
    (idempotent): the process tree, the socket, its context and ipc directory."""

    def __init__(self, process: BotProcess, transport: ZmqTransport,
                 stdout: StderrLog) -> None:
        self.process = process
        self.transport = transport
        self.stdout = stdout  # drained so that a bot printing to stdout never blocks

    def close(self, grace: float = 0.5) -> None:
        try:
            self.process.end(grace)
        finally:
            self.transport.close()


def launch_zmq_bot(
    command: Sequence[str],
    *,
    name: str = "bot",
    cwd: str | None = None,
    transport: str = "ipc",
    max_message_bytes: int = MAX_MESSAGE_BYTES,
    env: Mapping[str, str] | None = None,
    stdout_path: str | None = None,
    **process_options: Any,
) -> LaunchedZmqBot:
    """Bind a loopback ROUTER, start ``command`` (``referee.players.process.start_bot``:
    sandbox, own session, memory limit, stderr log -- ``process_options`` go there)
    with ``UPDOWN_ENDPOINT`` pointing at it and a fresh ``UPDOWN_TOKEN``, and return
    the process with its transport.  The bot is expected to connect a DEALER and
    send ``hello`` with that token; reading it is the protocol's job.  In an active
    sandbox the bot has no network: ``transport`` must be ``ipc`` (the socket's
    private folder is made writable inside).  Raises BotStartError when the command
    cannot be run."""
    sandbox = process_options.get("sandbox")
    if sandbox is not None and sandbox.active and transport != "ipc":
        raise BotStartError(f"a sandboxed ZeroMQ bot has no network: it must use the "
                            f"ipc transport, not {transport!r}")
    router = bind_loopback(transport, max_message_bytes=max_message_bytes)
    token = secrets.token_hex(16)
    try:
        writable = [router.private_dir] if router.private_dir else []
        process = start_bot(command, cwd=cwd,
                            env=bot_env(router.endpoint, base=env, token=token),
                            writable=writable, **process_options)
    except BaseException:
        router.close()
        raise
    # Its stdin and stdout are not the protocol's channel here: stdin reads EOF,
    # stdout is drained like stderr (to ``stdout_path``) so that printing never blocks.
    os.close(process.stdin_fd)
    stdout = StderrLog(process.stdout_fd, stdout_path,
                       process_options.get("stderr_cap", DEFAULT_STDERR_CAP),
                       process_options.get("on_stderr"))
    return LaunchedZmqBot(process, ZmqTransport(router, process=process, name=name,
                                                token=token), stdout)


# --- remote bots -------------------------------------------------------------------------


class RemoteListener:
    """A listening endpoint that admits remote bots by their CURVE keys.

    ``allowed_keys`` maps each bot's name to its z85 public key; ``server_secret``
    is the referee's z85 secret key.  Without ``server_secret`` (no CURVE) only a
    loopback endpoint is accepted, and the hello's name must be one of
    ``allowed_keys``' names."""

    def __init__(self, endpoint: str, allowed_keys: Mapping[str, bytes],
                 server_secret: bytes | None, *,
                 max_message_bytes: int = MAX_MESSAGE_BYTES) -> None:
        if server_secret is None and not is_loopback(endpoint):
            raise ValueError(
                f"listening on {endpoint} (not loopback) needs CURVE: give the referee's "
                f"secret key (referee keys server) and the bots' public keys")
        self.allowed = dict(allowed_keys)
        self.curve = server_secret is not None
        self._router = _Router(endpoint, max_message_bytes=max_message_bytes,
                               server_secret=server_secret, allowed_keys=allowed_keys,
                               heartbeat=not is_loopback(endpoint))
        self.admitted: dict[str, ZmqTransport] = {}  # connected, by name
        self._ready: dict[str, ZmqTransport] = {}  # admitted, not yet accepted
        self.transports_own_router = False

    @property
    def endpoint(self) -> str:
        return self._router.endpoint

    @property
    def max_message_bytes(self) -> int:
        return self._router.max_message_bytes

    @property
    def refusals(self) -> int:
        """Connections refused so far (handshake failures and unknown keys)."""
        return self._router.refusals

    def accept(self, timeout: float, name: str | None = None) -> tuple[str, ZmqTransport]:
        """The next bot to connect with an allowed key and send a hello carrying the
        name that key belongs to (``name``: that bot only; others admitted meanwhile
        wait for their own ``accept``): its name and its transport.  The hello is
        left in the transport, to be read by the protocol session like any first
        message.  Raises TransportTimeout when no such bot came in time."""
        deadline = time.monotonic() + timeout
        router = self._router
        pumped = False  # even with no time left, what has arrived is looked at once
        while True:
            for ready in list(self._ready):
                if name is None or ready == name:
                    t = self._ready.pop(ready)
                    log.info("admitted remote bot %r on %s", ready, self.endpoint)
                    return ready, t
            while router.unclaimed:
                identity, item = router.unclaimed.popleft()
                if identity in router.ignored:  # sent before it was refused
                    continue
                owner = self._admit(identity, item)
                if owner is None:
                    router.ignored.add(identity)
                    continue
                router.unclaimed.appendleft((identity, item))
                self.admitted[owner] = self._ready[owner] = ZmqTransport(
                    router, identity, owns_router=self.transports_own_router, name=owner,
                    on_close=self._closed)
            if any(name is None or ready == name for ready in self._ready):
                continue
            left = deadline - time.monotonic()
            if left <= 0 and pumped:
                who = f"bot {name!r}" if name else "allowed bot"
                raise TransportTimeout(f"no {who} connected to {self.endpoint} within "
                                       f"{timeout:.1f}s")
            router.pump(max(0.0, left))
            pumped = True

    def _closed(self, transport: ZmqTransport) -> None:
        """A bot's session is over: it may connect again (a new hello)."""
        if self.admitted.get(transport.name) is transport:
            del self.admitted[transport.name]

    def _admit(self, identity: bytes, item: _Frame) -> str | None:
        """The name of the bot behind a first message, or None (logged, told) when it
        is refused."""
        router = self._router
        try:
            hello = _decode(item, router.max_message_bytes)
        except (MalformedMessage, MessageTooLarge) as e:
            hello = {"error": str(e)}
        claimed = hello.get("name") if hello.get("type") == "hello" else None
        if self.curve:
            owner = router.key_owner.get(item.user_id or "")
        else:
            owner = claimed if claimed in self.allowed else None
        if "error" in hello and len(hello) == 1:
            why = f"its first message, which must be a hello, is unreadable: {hello['error']}"
        elif hello.get("type") != "hello":
            why = f"its first message is {show(hello.get('type'))}, not a hello"
        elif not isinstance(claimed, str):
            why = ("its hello has no name (the bot's name, as its key file has it)"
                   if claimed is None else f"its hello's name is {show(claimed)}, not a text")
        elif owner is None:
            why = f"the name {quote(claimed)} is not a listed bot"
        elif claimed != owner:
            why = f"its hello names {quote(claimed)}, but its CURVE key is {quote(owner)}'s"
        elif owner in self.admitted and self.admitted[owner].identity not in router.dropped:
            why = f"{quote(owner)} is already connected"
        else:
            # Its earlier connection, if any, is gone: this one replaces it (that
            # one's player finds it gone when it next uses it).
            old = self._ready.pop(owner, None)
            if old is not None:
                old.owns_router = False  # the new one shares the router
                old.close()
            return owner
        log.warning("refused a bot on %s: %s", self.endpoint, why)
        with contextlib.suppress(TransportClosed):
            router.send(identity, {"type": "error", "code": "protocol",
                                   "message": f"refused: {why}", "action": "disconnect"})
        return None

    def close(self) -> None:
        for t in list(self.admitted.values()):
            t.close()
        self._router.close()


def wait_for_remote_bot(
    endpoint: str,
    allowed_keys: Mapping[str, bytes],
    server_secret: bytes | None,
    timeout: float,
    *,
    max_message_bytes: int = MAX_MESSAGE_BYTES,
) -> tuple[str, ZmqTransport]:
    """Listen on ``endpoint`` until one allowed bot connects (see
    ``RemoteListener.accept``); its name and a transport that owns the socket."""
    listener = RemoteListener(endpoint, allowed_keys, server_secret,
                              max_message_bytes=max_message_bytes)
    listener.transports_own_router = True
    try:
        name, transport = listener.accept(timeout)
    except BaseException:
        listener.close()
        raise
    return name, transport


# --- a trivial bot, for the speed figure (referee.players.external.bench_game_zmq) ------------------


def trivial_bot(endpoint: str, name: str = "trivial") -> int:
    """A bot that answers every request with index 0 (for ``bench_game_zmq``): the
    smallest correct ZeroMQ bot, with no dependency beyond pyzmq and msgpack."""
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 1000)
    try:
        sock.connect(endpoint)
        hello: dict[str, Any] = {"type": "hello", "protocol": [1], "name": name}
        if os.environ.get(ENV_TOKEN):
            hello["token"] = os.environ[ENV_TOKEN]
        sock.send(msgpack.packb(hello))
        while True:
            msg = msgpack.unpackb(sock.recv(), raw=False)
            if msg.get("type") == "request":
                sock.send(msgpack.packb({"type": "decision", "id": msg["id"],
                                         "decision": 0}))
            elif msg.get("type") in ("bye", "error"):
                return 0
    finally:
        sock.close()
        ctx.term()


if __name__ == "__main__":
    sys.exit(trivial_bot(os.environ[ENV_ENDPOINT]))
