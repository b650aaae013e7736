"""ZeroMQ's wire (ZMTP 3) spoken directly on an ``ipc://`` socket: no libzmq thread.

Owns ``DirectZmqTransport``: the referee's end of a ZeroMQ bot it launched, as a
ROUTER peer would be on the wire, but read and written by the game's own thread, on
the socket's file descriptor -- as a stdio bot's pipe is.  libzmq hands every
message to and from an I/O thread of its own (two thread hops per message on the
referee's side, a context switch each on a busy CPU); here a request is one
``send`` and a reply is read where the game waits (``recv``, or a loop of many
games: ``wait_handles``).  The bot is unchanged: any ZeroMQ DEALER connects to the
``ipc://`` endpoint (protocol/ZEROMQ.md).

The wire (ZMTP 3.0, rfc.zeromq.org/spec/23, NULL mechanism): a 64-byte greeting each
way, a READY command each way (we say ``Socket-Type: ROUTER``; the peer must be a
DEALER), then frames: a flags byte (MORE 1, LONG 2, COMMAND 4), the size (1 byte,
or 8 with LONG), the body.  A PING command is answered with PONG (a bot that sets
``ZMQ_HEARTBEAT_IVL``); other commands are ignored.

Limits and refusals, as ``ZmqTransport`` has them: a message of more than one frame
is ``MalformedMessage``; a frame over ``max_message_bytes`` is ``MessageTooLarge``
(skipped as it arrives, never held); one over twice that ends the connection
(``TransportClosed``, as libzmq's MAXMSGSIZE does).  The first connection whose
first message is a hello carrying the launch's token is the bot's; any other is
told why and closed (``impostors`` counts them); once the bot is in, the endpoint
is closed to everyone else.

What a bot may cost the referee is bounded, whatever it sends (issue 21):

* ``recv`` returns by its deadline even while bytes keep coming: it reads what has
  arrived, looks at the clock, and gives up at the deadline as when nothing came (a
  PING flood once held it for as long as the flood lasted: the deadline of a 1 s
  ``time_left`` overrun by a minute, and, with games in flight, a ``recv(0)`` that
  read the flooder's PINGs for the whole of its thinking time, which was then
  charged to nobody).  One read of a connection stops once it gave a message.
* Command frames (READY, PING and any other) are charged to a bucket that holds
  ``_COMMAND_BURST`` and refills at ``_COMMAND_RATE`` a second, never past full (so
  a long quiet spell banks nothing); one that finds it empty is refused
  (``_refuse``): a ``malformed`` fault naming the bot, its connection dropped.  A libzmq heartbeat (``ZMQ_HEARTBEAT_IVL`` of 10 ms or more)
  stays inside it.  The PONGs of one read go back in one write.
* Before the hello, at most ``_MAX_PENDING`` connections may be open at once and
  ``_MAX_CONNECTIONS`` be made in all per start: the one past either is closed at
  once and ends the start (``recv`` raises ``TransportClosed`` saying so), so a bot
  cannot make the referee hold its descriptors.  Out of descriptors all the same
  (``EMFILE``: other bots hold them), the listener is not looked at for
  ``_ACCEPT_PAUSE`` s rather than polled readable in a loop.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import shutil
import socket
import struct
import tempfile
import time
from collections.abc import Callable
from typing import Any, Protocol

import msgpack

from ..base import (
    ConnectionCut,
    MalformedMessage,
    MessageTooLarge,
    TransportClosed,
    TransportTimeout,
)
from .codec import MAX_MESSAGE_BYTES, _too_large, decode_frame, multipart_error

_GREETING = (b"\xff" + b"\x00" * 8 + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\x00")
             + b"\x00" + b"\x00" * 31)
_MORE, _LONG, _COMMAND = 1, 2, 4
_READ = 1 << 16
#: The largest command frame read, after the peer's READY and with it: a command is
#: read whole, and its legal sizes are small (PING: a 2-byte TTL and at most 16 bytes
#: of context; PONG, ERROR: at most 255 bytes after the name; READY: a few
#: properties, its Identity at most 255 bytes).  A larger one is refused unread.
_MAX_COMMAND = 512
_MAX_READY = 2048
#: Command frames (READY, PING, ...) a connection may send: this many at once, then
#: this many a second -- a bucket of ``_COMMAND_BURST`` refilled at ``_COMMAND_RATE``
#: a second and never past full, so nothing is banked (protocol/ZEROMQ.md).
_COMMAND_BURST = 100
_COMMAND_RATE = 100.0
#: Connections a launched bot may have open at once before its hello, and make in
#: all per start: one past either ends the start.
_MAX_PENDING = 4
_MAX_CONNECTIONS = 16
#: Seconds the listener is not looked at after ``accept`` ran out of descriptors.
_ACCEPT_PAUSE = 0.1
#: The peer shut its side (Linux; elsewhere only a full hang-up is seen).
_RDHUP = getattr(select, "POLLRDHUP", 0)
_OUT_OF_FDS = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)


class _Process(Protocol):
    @property
    def returncode(self) -> int | None: ...

    @property
    def exit_fd(self) -> int | None: ...

    def exit_description(self, wait: float = 0.0, *, ran: bool = False) -> str: ...


def _command(name: bytes, data: bytes = b"") -> bytes:
    body = bytes([len(name)]) + name + data
    if len(body) > 255:
        return bytes([_COMMAND | _LONG]) + struct.pack(">Q", len(body)) + body
    return bytes([_COMMAND, len(body)]) + body


def _frame(payload: bytes) -> bytes:
    if len(payload) > 255:
        return bytes([_LONG]) + struct.pack(">Q", len(payload)) + payload
    return bytes([0, len(payload)]) + payload


_READY = _command(b"READY", b"\x0bSocket-Type" + struct.pack(">I", 6) + b"ROUTER")


def _properties(data: bytes) -> dict[str, bytes]:
    """A READY command's metadata."""
    props: dict[str, bytes] = {}
    i = 0
    while i < len(data):
        n = data[i]
        name = data[i + 1: i + 1 + n].decode("ascii", "replace").lower()
        i += 1 + n
        (size,) = struct.unpack(">I", data[i: i + 4])
        props[name] = data[i + 4: i + 4 + size]
        i += 4 + size
    return props


class _Peer:
    """One connection: its socket, the handshake's progress, the frames read."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buf = bytearray()
        self.greeted = False  # its greeting read
        self.ready = False  # its READY read
        self.parts: list[bytes] = []  # frames of a message still coming (MORE)
        #: A message of several parts being skipped (malformed whatever it holds:
        #: none of it is kept): its parts and their bytes on the wire so far.
        self.multipart = 0
        self.multipart_bytes = 0
        self.too_large = 0  # a frame being skipped: its size
        self.skip = 0  # bytes of it still to skip
        self.skip_last = False  # the frame being skipped is its message's last
        self.eof = False
        self.dropped = False
        self.commands = 0  # command frames read (READY included)
        #: The command allowance: frames left in the bucket, when it was last filled.
        self.allowance = float(_COMMAND_BURST)
        self.filled = time.monotonic()
        self.pongs = bytearray()  # PONGs owed, written after the read that found them

    def fileno(self) -> int:
        return self.sock.fileno()


class DirectZmqTransport:
    """``base.Transport`` for one launched ZeroMQ bot, on an ``ipc://`` socket file in
    a private folder (made here; removed by ``close``)."""

    def __init__(self, *, max_message_bytes: int = MAX_MESSAGE_BYTES, name: str = "bot",
                 token: str | None = None) -> None:
        self.max_message_bytes = max_message_bytes
        self.name = name
        self.token = token
        self.process: _Process | None = None
        self.impostors = 0
        self.received_bytes = 0
        self.closed = False
        self.private_dir = tempfile.mkdtemp(prefix="updown-zmq-")
        self.path = os.path.join(self.private_dir, "bot")
        self.endpoint = f"ipc://{self.path}"
        self._listener: socket.socket | None = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._listener.bind(self.path)
            self._listener.listen(8)
            self._listener.setblocking(False)
        except BaseException:
            self.close()
            raise
        self._peers: list[_Peer] = []  # connections not admitted yet
        self.connections = 0  # accepted on the endpoint, in all
        #: Until when the listener is not looked at (``accept`` found no descriptor).
        self._paused_until = 0.0
        self._bot: _Peer | None = None
        self._queue: list[dict[str, Any] | Exception] = []  # messages (or errors) read
        self._poll = select.poll()
        self._poll.register(self._listener.fileno(), select.POLLIN)
        self._exit_registered = False
        #: The process's exit fd was seen readable: only then (or with no exit fd to
        #: poll) is its exit status asked for -- a wait4 call per message otherwise.
        self._exit_seen = False
        #: One packer for every message sent (``msgpack.packb`` makes a new one per
        #: call: 12 % more per request); used by the game's thread only.
        self._pack = msgpack.Packer(use_bin_type=True).pack
        self._lost = ""  # why the bot's connection is gone, once it is
        self._cut: ConnectionCut | None = None  # raised for it, when the referee cut it
        #: As ``StdioTransport.on_blocked``: told True when a send waits for the bot
        #: to read (its socket full), False when that wait is over.
        self.on_blocked: Callable[[bool], None] | None = None

    # -- the Transport interface ------------------------------------------------------

    def wait_handles(self) -> tuple[int, ...]:
        """What becomes readable when ``recv`` has something new (for a loop waiting
        on many bots at once); a message may be read already: ``recv(0)`` first."""
        fds: list[int] = [p.fileno() for p in self._peers]
        if self._bot is not None:
            fds.append(self._bot.fileno())
        elif self._listener is not None:
            fds.append(self._listener.fileno())
        exit_fd = self.process.exit_fd if self.process is not None else None
        if exit_fd is not None:
            fds.append(exit_fd)
        return tuple(fds)

    def send(self, message: dict[str, Any]) -> None:
        if self.closed:
            raise TransportClosed("the transport is closed")
        bot = self._bot
        if bot is None:
            raise TransportClosed(f"no bot has connected to {self.endpoint} yet")
        if self._lost:
            raise TransportClosed(self._lost)
        data = _frame(self._pack(message))
        try:
            # send, not sendall: on a non-blocking socket sendall may have sent part
            # of the message when it raises, and nobody could tell how much.
            sent = bot.sock.send(data)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError:
            raise TransportClosed(self._gone()) from None
        if sent < len(data):
            self._send_rest(bot, memoryview(data)[sent:])

    def _send_rest(self, bot: _Peer, data: bytes | memoryview) -> None:
        # The socket is non-blocking: what did not fit waits for room (2 s at most:
        # a bot that reads nothing for that long is not reading).
        view = memoryview(data)
        deadline = time.monotonic() + 2.0
        blocked = self.on_blocked
        if blocked is None:
            self._write_rest(bot, view, deadline)
            return
        blocked(True)
        try:
            self._write_rest(bot, view, deadline)
        finally:
            blocked(False)

    def _write_rest(self, bot: _Peer, view: memoryview, deadline: float) -> None:
        while view:
            try:
                n = bot.sock.send(view)
                view = view[n:]
                continue
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                raise TransportClosed(self._gone()) from None
            left = deadline - time.monotonic()
            if left <= 0:
                self._lost = "the bot is not reading its messages (its queue is full)"
                raise TransportClosed(self._lost)
            select.select([], [bot.sock], [], left)

    def recv(self, timeout: float) -> dict[str, Any]:
        if self.closed:
            raise TransportClosed("the transport is closed")
        bot = self._bot
        if (bot is not None and self._listener is None and not self._queue and not self._lost
                and not self._exit_seen and not bot.buf and not bot.parts and not bot.skip
                and not bot.multipart):
            # Fast path, the common case (as stdio's): the bot is in, nothing is pending,
            # and its reply arrives as one whole message of one short frame.  Wait for it
            # with one poll, take it with one read and decode it as it is.  Anything else
            # -- nothing in time, the bot's exit, several frames or messages, part of
            # one -- goes on to the general path below, which reads and reports exactly
            # as it always does.
            start = time.monotonic()
            if self._poll_once(timeout) and not self._exit_seen:
                try:
                    chunk: bytes | None = bot.sock.recv(_READ)
                except (BlockingIOError, InterruptedError):
                    chunk = None
                except OSError:
                    chunk = b""
                if chunk is not None:
                    n = len(chunk)
                    if n >= 2 and chunk[0] == 0 and chunk[1] == n - 2 and \
                            n - 2 <= self.max_message_bytes:
                        self.received_bytes += n
                        return decode_frame([chunk[2:]], self.max_message_bytes)
                    self._chunk(bot, chunk)
            timeout = max(0.0, timeout - (time.monotonic() - start))
        deadline: float | None = None
        while True:
            if self._queue:
                item = self._queue.pop(0)
                if isinstance(item, Exception):
                    raise item
                return item
            if self._lost:
                raise self._cut or TransportClosed(self._lost)
            process = self.process
            if process is not None and (self._exit_seen or not self._exit_registered) \
                    and process.returncode is not None:
                self._read_all(None)  # what it sent before it died still counts
                if self._queue:
                    continue
                raise TransportClosed(f"the bot process {process.exit_description()}")
            now = time.monotonic()
            if deadline is None:
                deadline = now + timeout
            left = deadline - now
            if self._poll_once(left if left > 0 else 0.0):
                self._read_all(deadline)
                if self._queue or self._lost or time.monotonic() < deadline:
                    continue
                # Bytes kept coming, and none of them made a message: the deadline
                # holds all the same (a flood cannot hold the referee past it).
            if time.monotonic() >= deadline and not self._queue:
                refused = (f" ({self.impostors} connection(s) refused: the first message "
                           f"must be a hello carrying this launch's UPDOWN_TOKEN)"
                           if self._bot is None and self.impostors else "")
                raise TransportTimeout(f"no message within {timeout:.3f}s{refused}")

    def _poll_once(self, timeout: float) -> bool:
        """Wait for something to read (or the process's exit); True if there is."""
        exit_fd = self.process.exit_fd if self.process is not None else None
        if exit_fd is not None and not self._exit_registered:
            self._poll.register(exit_fd, select.POLLIN)
            self._exit_registered = True
        if self._paused_until:
            pause = self._paused_until - time.monotonic()
            if pause <= 0:
                self._paused_until = 0.0
                if self._listener is not None:
                    self._poll.register(self._listener.fileno(), select.POLLIN)
            elif timeout > pause:
                timeout = pause
        ms = max(0, int(timeout * 1000 + 0.999)) if timeout > 0 else 0
        try:
            ready = self._poll.poll(ms)
        except InterruptedError:
            return False
        if exit_fd is not None and not self._exit_seen:
            for fd, _ in ready:
                if fd == exit_fd:
                    self._exit_seen = True
        return bool(ready)

    # -- reading -------------------------------------------------------------------

    def _read_all(self, until: float | None) -> None:
        """Accept new connections; read what every connection has sent (a chunk of
        each at least, no more once ``until`` has passed)."""
        if self._listener is not None and not self._paused_until:
            self._accept()
        for peer in [*self._peers, *([self._bot] if self._bot else [])]:
            self._read(peer, until)

    def _accept(self) -> None:
        """Take the connections waiting on the endpoint (before the bot's hello)."""
        while self._listener is not None:
            try:
                sock, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as e:
                if e.errno in _OUT_OF_FDS:
                    # Out of descriptors: the connection stays in the backlog and the
                    # listener readable -- not looked at for a moment, rather than
                    # polled readable in a loop (as libzmq and the league's door do).
                    with contextlib.suppress(KeyError, ValueError):
                        self._poll.unregister(self._listener.fileno())
                    self._paused_until = time.monotonic() + _ACCEPT_PAUSE
                    return
                if e.errno in (errno.ECONNABORTED, errno.EPROTO, errno.EPERM):
                    continue
                return
            self.connections += 1
            if len(self._peers) >= _MAX_PENDING:
                self._reap()  # those the bot closed and we have not read the end of yet
            if len(self._peers) >= _MAX_PENDING or self.connections > _MAX_CONNECTIONS:
                sock.close()
                what = (f"{len(self._peers) + 1} connections open at once"
                        if len(self._peers) >= _MAX_PENDING else
                        f"{self.connections} connections")
                self._lost = (f"made {what} to its endpoint {self.endpoint} (a launched "
                              f"bot may have {_MAX_PENDING} open at once before its hello, "
                              f"and make {_MAX_CONNECTIONS} in all per start): the endpoint "
                              f"was closed")
                self._cut = ConnectionCut(self._lost, "protocol")
                for other in list(self._peers):
                    self._drop(other, "too many connections")
                self._close_listener()
                return
            sock.setblocking(False)
            peer = _Peer(sock)
            with contextlib.suppress(OSError):
                sock.sendall(_GREETING)
            self._peers.append(peer)
            self._poll.register(sock.fileno(), select.POLLIN)

    def _reap(self) -> None:
        """Drop the connections before the hello that the bot has closed though their
        end was not read yet (``POLLRDHUP``: its side is shut, whatever it left unread
        -- a bot that closed its socket can never be answered): only those still open
        count as open at once."""
        poll = select.poll()
        peers = {peer.sock.fileno(): peer for peer in self._peers}
        for fd in peers:
            poll.register(fd, select.POLLIN | _RDHUP)
        for fd, events in poll.poll(0):
            if events & (_RDHUP | select.POLLHUP | select.POLLERR):
                self._drop(peers[fd], "closed by the bot")

    def _close_listener(self) -> None:
        """Nobody may connect from now on (the socket file is removed)."""
        if self._listener is not None:
            with contextlib.suppress(KeyError, ValueError):
                self._poll.unregister(self._listener.fileno())
            self._listener.close()
            self._listener = None
            self._paused_until = 0.0
            with contextlib.suppress(OSError):
                os.unlink(self.path)

    def _read(self, peer: _Peer, until: float | None) -> None:
        for _ in range(64):  # a flooding peer cannot keep us here for ever
            try:
                chunk = peer.sock.recv(_READ)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                chunk = b""
            self._chunk(peer, chunk)
            if peer.eof or len(chunk) < _READ or self._queue:
                break  # the rest (if any) when the message read is taken
            if until is not None and time.monotonic() >= until:
                break  # the caller's deadline: the rest is read at its next wait

    def _chunk(self, peer: _Peer, chunk: bytes) -> None:
        """What one read from ``peer`` gave (``b""``: its end): its frames, and the
        messages they complete, queued."""
        if chunk:
            if peer is self._bot:
                self.received_bytes += len(chunk)
            peer.buf += chunk
            self._frames(peer)
            if peer.pongs:
                if not peer.dropped:
                    with contextlib.suppress(OSError):
                        peer.sock.sendall(peer.pongs)
                peer.pongs.clear()
        else:
            peer.eof = True
        if peer.eof and not peer.dropped:
            self._drop(peer, "closed")

    def _frames(self, peer: _Peer) -> None:
        buf = peer.buf
        while True:
            if peer.skip:
                n = min(peer.skip, len(buf))
                del buf[:n]
                peer.skip -= n
                if peer.skip:
                    return
                self._message_done(peer, None)
                if peer.eof:
                    return
            if not peer.greeted:
                if len(buf) < 64:
                    if len(buf) >= 1 and buf[0] != 0xFF:
                        self._drop(peer, "not a ZeroMQ peer")
                    return
                if buf[0] != 0xFF or buf[9] & 1 == 0 or buf[10] < 3 or \
                        bytes(buf[12:32]).rstrip(b"\x00") != b"NULL":
                    self._drop(peer, "not a ZMTP 3 peer with the NULL mechanism")
                    return
                del buf[:64]
                peer.greeted = True
                with contextlib.suppress(OSError):
                    peer.sock.sendall(_READY)
                continue
            if len(buf) < 2:
                return
            flags = buf[0]
            if flags & _LONG:
                if len(buf) < 9:
                    return
                (size,) = struct.unpack(">Q", bytes(buf[1:9]))
                head = 9
            else:
                size, head = buf[1], 2
            if flags & _COMMAND:
                bound = _MAX_COMMAND if peer.ready else _MAX_READY
                if size > bound:
                    # Refused before its body is read: a command's legal size is small
                    # (a PING's is at most 23 bytes), and one is read whole.
                    what = "command" if peer.ready else "command before its READY"
                    self._refuse(peer, f"a ZeroMQ {what} frame of {size} bytes, over the "
                                       f"limit of {bound} bytes for a command frame")
                    return
                if len(buf) < head + size:
                    return
                body = bytes(buf[head: head + size])
                del buf[: head + size]
                self._on_command(peer, body)
                if peer.eof:
                    return
                continue
            if not peer.ready:
                self._drop(peer, "a message before its READY")
                return
            more = flags & _MORE
            if more or peer.multipart:
                # A message of several parts: malformed whatever its parts hold, so
                # none of them is kept -- only counted, with their bytes on the wire
                # (headers too: empty parts cost something), and once those pass the
                # size limit the connection is refused: a message that never ends
                # costs the referee nothing.
                peer.multipart += 1
                peer.multipart_bytes += head + size
                if peer.multipart_bytes > self.max_message_bytes:
                    self._refuse(peer, f"a message of several parts (at least "
                                       f"{max(2, peer.multipart)} so far, "
                                       f"{peer.multipart_bytes} bytes with their frame "
                                       f"headers), over the limit of "
                                       f"{self.max_message_bytes} bytes (a message must be "
                                       f"one frame)")
                    return
                del buf[:head]
                peer.skip = size
                peer.skip_last = not more
                if not size:
                    self._message_done(peer, None)
                    if peer.eof:
                        return
                continue
            if size > self.max_message_bytes:
                if size > 2 * self.max_message_bytes:
                    self._drop(peer, "frame over the hard limit", hard=size)
                    return
                peer.too_large = size
                del buf[:head]
                peer.skip = size
                peer.parts.append(b"")
                peer.skip_last = not flags & _MORE
                continue
            if len(buf) < head + size:
                return
            peer.parts.append(bytes(buf[head: head + size]))
            del buf[: head + size]
            if not flags & _MORE:
                self._message_done(peer, peer.parts)
                if peer.eof:
                    return

    def _message_done(self, peer: _Peer, parts: list[bytes] | None) -> None:
        """A whole message (all its frames) arrived, or a skipped frame ended."""
        if parts is None:  # a skipped frame ended: was it the message's last?
            if not peer.skip_last:
                return
            peer.skip_last = False
        parts, peer.parts = peer.parts, []
        too_large, peer.too_large = peer.too_large, 0
        multipart, peer.multipart, peer.multipart_bytes = peer.multipart, 0, 0
        item: dict[str, Any] | Exception
        try:
            if multipart:
                raise multipart_error(multipart)
            if too_large and len(parts) == 1:
                raise MessageTooLarge(_too_large(too_large, self.max_message_bytes))
            item = decode_frame(parts, self.max_message_bytes)
        except (MalformedMessage, MessageTooLarge) as e:
            item = e
        if peer is self._bot:
            self._queue.append(item)
            return
        # A connection not admitted yet: its first message must be the hello with the
        # launch's token.
        if isinstance(item, dict) and item.get("type") == "hello" and (
                self.token is None or item.get("token") == self.token):
            self._admit(peer)
            self._queue.append(item)
            return
        self.impostors += 1
        why = ("its hello does not carry this launch's token (UPDOWN_TOKEN)"
               if isinstance(item, dict) and item.get("type") == "hello" else
               "its first message is not a hello carrying this launch's token (UPDOWN_TOKEN)")
        with contextlib.suppress(OSError):
            peer.sock.sendall(_frame(msgpack.packb(
                {"type": "error", "code": "protocol",
                 "message": f"refused: {why}; only the bot the referee started may connect "
                            f"here", "action": "disconnect"}, use_bin_type=True)))
        self._drop(peer, why)

    def _on_command(self, peer: _Peer, body: bytes) -> None:
        if not body:
            return
        n = body[0]
        name, data = body[1: 1 + n], body[1 + n:]
        # Commands are few (READY, heartbeats): each is parsed, and a PING answered, on
        # the game's thread -- past the allowance the peer is refused.
        peer.commands += 1
        now = time.monotonic()
        peer.allowance = min(float(_COMMAND_BURST),
                             peer.allowance + (now - peer.filled) * _COMMAND_RATE)
        peer.filled = now
        if peer.allowance < 1.0:
            self._refuse(peer, f"ZeroMQ command frames (PING, ...) faster than the limit "
                               f"of {_COMMAND_BURST} at once and {_COMMAND_RATE:g} a "
                               f"second ({peer.commands} in all)")
            return
        peer.allowance -= 1.0
        if name == b"READY":
            socket_type = _properties(data).get("socket-type", b"")
            if socket_type != b"DEALER":
                self._drop(peer, f"a {socket_type.decode('ascii', 'replace') or '?'} socket, "
                                 f"where the bot must connect a DEALER")
                return
            peer.ready = True
        elif name == b"PING" and len(data) >= 2:
            peer.pongs += _command(b"PONG", data[2:])
        elif name == b"ERROR":
            self._drop(peer, "sent ERROR")

    def _admit(self, peer: _Peer) -> None:
        """``peer`` is the bot: nobody else may connect from now on."""
        self._peers.remove(peer)
        self._bot = peer
        for other in list(self._peers):
            self._drop(other, "the bot is in")
        self._close_listener()

    def _refuse(self, peer: _Peer, what: str) -> None:
        """``peer`` sent ``what``, which is never read: a ``malformed`` fault for the
        bot (the reply it owes is substituted), then its connection is dropped."""
        if peer is self._bot:
            self._queue.append(MalformedMessage(f"{what}; the connection is dropped"))
            if not self._lost:
                self._lost = (f"the bot's connection to {self.endpoint} was dropped: it sent "
                              f"{what}")
        else:
            self.impostors += 1
        self._drop(peer, what)

    def _drop(self, peer: _Peer, why: str, hard: int = 0) -> None:
        if peer is self._bot:
            if not self._lost:
                self._lost = self._gone(hard)
        elif peer in self._peers:
            self._peers.remove(peer)
        with contextlib.suppress(KeyError, ValueError, OSError):
            self._poll.unregister(peer.sock.fileno())
        peer.sock.close()
        peer.eof = peer.dropped = True
        peer.buf.clear()  # what it sent after that is never read

    def _gone(self, hard: int = 0) -> str:
        process = self.process
        if process is not None and process.returncode is None and not hard:
            with contextlib.suppress(Exception):
                process.exit_description(wait=0.5)
        if process is not None and process.returncode is not None:
            return f"the bot process {process.exit_description()}"
        if hard:
            return (f"the bot's connection to {self.endpoint} was dropped: it sent a frame "
                    f"of {hard} bytes, over ZeroMQ's hard limit of "
                    f"{2 * self.max_message_bytes} bytes")
        return (f"the bot's connection to {self.endpoint} was dropped: it closed its "
                f"socket, lost its link, or sent a frame over ZeroMQ's hard limit of "
                f"{2 * self.max_message_bytes} bytes")

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for peer in [*self._peers, *([self._bot] if self._bot else [])]:
            with contextlib.suppress(OSError):
                peer.sock.close()
        if self._listener is not None:
            self._listener.close()
            self._listener = None
        shutil.rmtree(self.private_dir, ignore_errors=True)
