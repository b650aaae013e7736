"""The ZeroMQ transport: msgpack messages, one per frame, between a ROUTER and a bot.

Owns everything that touches a ZeroMQ socket on the referee's side:

* ``ZmqTransport`` -- ``base.Transport`` for one bot (one peer identity) on a bound
  ROUTER socket: msgpack encoding, frame limits, receive with a timeout by
  ``poll``, a lost connection or a dead bot process reported as ``TransportClosed``.

The ROUTER it runs on is ``router._Router``; frames are decoded by ``codec``; bots
the referee starts are launched by ``referee.players.launcher``, bots started
elsewhere are admitted by ``listener.RemoteListener``; the CURVE key files are
``keys``'.  The players built on these (``zmq_player``, ``remote_player``) are
``referee.players.external``'s: a transport knows nothing of games, players or
processes (a launched bot's process is watched through ``WatchedProcess``).

The wire (protocol/ZEROMQ.md): the referee binds ROUTER, the bot connects DEALER;
every message is one single-part frame holding one msgpack map.  The protocol
itself (hello, requests, ids) is ``referee.protocol``'s business, not this module's.

Frame limits.  A frame over ``max_message_bytes`` is reported as
``MessageTooLarge`` (the connection stays usable).  ZeroMQ's own ``MAXMSGSIZE`` is
set to twice that, so that a bot can never make the referee allocate more: a frame
over *that* makes libzmq drop the connection before reading it, which is reported
as ``TransportClosed``.

Errors (``base``)::

    TransportError
     +-- TransportTimeout    nothing arrived in time
     +-- TransportClosed     the bot process exited, or its connection was dropped
     +-- MessageTooLarge     a frame over max_message_bytes
     +-- MalformedMessage    not msgpack, not a map, or not exactly one frame

"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any, Protocol

from ..base import (
    ConnectionCut,
    MalformedMessage,
    MessageTooLarge,
    TransportClosed,
    TransportTimeout,
)
from .router import _decode, _Frame, _Held, _Router, log

# Environment variables given to (or read by) bots: protocol/ZEROMQ.md.
ENV_ENDPOINT = "UPDOWN_ENDPOINT"
ENV_TRANSPORT = "UPDOWN_TRANSPORT"
ENV_SERVER_KEY = "UPDOWN_SERVER_KEY"
ENV_PUBLIC_KEY = "UPDOWN_PUBLIC_KEY"
ENV_SECRET_KEY = "UPDOWN_SECRET_KEY"
ENV_TOKEN = "UPDOWN_TOKEN"

# Without a pidfd to wait on, the process is checked this often while waiting.
_PROCESS_CHECK = 0.05
# After a lost connection, how long to wait for the bot process to exit, so that the
# fault can name its exit code rather than just "connection lost".
_EXIT_GRACE = 0.5



class WatchedProcess(Protocol):
    """What the transport needs of a launched bot's process (``BotProcess``): to
    notice that it exited, and to say how."""

    @property
    def returncode(self) -> int | None: ...

    @property
    def exit_fd(self) -> int | None: ...

    def wait(self, timeout: float) -> int | None: ...

    def exit_description(self, wait: float = 0.0, *, ran: bool = False) -> str: ...


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
        process: WatchedProcess | None = None,
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
            raise self._lost()
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
                raise self._lost()
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

    def wait_handles(self) -> tuple[Any, ...]:
        """What becomes readable when ``recv`` has something new (the ROUTER socket,
        its monitor, the process's exit fd): for a loop waiting on many bots at once
        (``referee.transport.waiting.Waiter``).  A message may already be queued:
        call ``recv(0)`` before waiting on them."""
        router = self._router
        exit_fd = self.process.exit_fd if self.process is not None else None
        return (router.sock, router.monitor) + (() if exit_fd is None else (exit_fd,))

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

    def _lost(self) -> TransportClosed:
        cut = self._router.cut.get(self.identity or b"")
        if cut:
            return ConnectionCut(cut)
        if self.process is not None and self.process.returncode is not None:
            return TransportClosed(f"the bot process {self.process.exit_description()}")
        return TransportClosed(
            f"the bot's connection to {self.endpoint} was dropped: it closed its socket, "
            f"lost its link, or sent a frame over ZeroMQ's hard limit of "
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
