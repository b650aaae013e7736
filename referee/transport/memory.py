"""An in-memory transport, for protocol tests (see httpx's MockTransport).

Owns ``MemoryTransport`` (the referee's end) and ``MemoryPeer`` (the test's end, the
"bot").  Messages are deep-copied through a JSON round trip so a test sees exactly
what a wire would carry, and anything a real transport would refuse (a value JSON
cannot hold) fails here too.  ``recv`` never sleeps: with nothing queued it raises
TransportTimeout at once (or TransportClosed when the peer has closed), so tests
have no timing in them.  A scripted responder (``peer.on_send``) can answer each
message as it is sent, like python-chess's ``mock.expect``.

Must not import: anything doing real I/O.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable
from typing import Any

from ..text.quoting import excerpt, quote
from .base import MalformedMessage, MessageTooLarge, TransportClosed, TransportTimeout


class MemoryPeer:
    """The bot's end of a MemoryTransport."""

    def __init__(self, transport: MemoryTransport) -> None:
        self._t = transport
        self.received: list[dict[str, Any]] = []
        #: Called with every message the referee sends; may call ``send`` to answer.
        self.on_send: Callable[[dict[str, Any]], None] | None = None

    def send(self, message: Any) -> None:
        """Queue a message (any JSON value) for the referee."""
        self._t._inbox.append(json.dumps(message))

    def send_raw(self, item: str | Exception) -> None:
        """Queue raw JSON text, or an exception the referee's recv will raise."""
        self._t._inbox.append(item)

    def close(self) -> None:
        self._t._peer_closed = True


class MemoryTransport:
    """The referee's end: ``send``/``recv``/``close`` as ``base.Transport``."""

    def __init__(self, max_message_bytes: int = 8 << 10) -> None:
        self.max_message_bytes = max_message_bytes
        self._inbox: deque[str | Exception] = deque()
        self._peer_closed = False
        self.closed = False
        self.peer = MemoryPeer(self)

    def send(self, message: dict[str, Any]) -> None:
        if self.closed or self._peer_closed:
            raise TransportClosed("the peer is gone")
        copy = json.loads(json.dumps(message))
        self.peer.received.append(copy)
        if self.peer.on_send is not None:
            self.peer.on_send(copy)

    def recv(self, timeout: float) -> dict[str, Any]:
        if self.closed:
            raise TransportClosed("the transport is closed")
        if not self._inbox:
            if self._peer_closed:
                raise TransportClosed("the peer closed the connection")
            raise TransportTimeout(f"no message within {timeout:.3f}s")
        item = self._inbox.popleft()
        if isinstance(item, Exception):
            raise item
        if len(item.encode()) > self.max_message_bytes:
            raise MessageTooLarge(f"a message of {len(item.encode())} bytes, over the limit of "
                                  f"{self.max_message_bytes}")
        try:
            value = json.loads(item)
        except ValueError as e:
            raise MalformedMessage(f"a line that is not JSON ({e}): {quote(item)}") from None
        if not isinstance(value, dict):
            raise MalformedMessage.not_an_object(value, "JSON", excerpt(item.encode()))
        return value

    def close(self) -> None:
        self.closed = True
