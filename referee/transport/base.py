"""The transport interface (see httpx's ``BaseTransport``): move whole messages.

A transport carries *messages* (dicts), encoded with its own codec (JSON lines over
stdio, msgpack frames over ZeroMQ).  It never interprets them: the protocol layer
does.  Errors are the peer's faults (``TransportError`` subclasses), never ours.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..errors import BotError
from ..text.quoting import kind, show


class TransportError(BotError):
    """Something went wrong with the peer's side of the connection."""


class TransportTimeout(TransportError):
    """No complete message arrived in time."""


class TransportClosed(TransportError):
    """The peer is gone (process exited, pipe or connection closed)."""


class ConnectionCut(TransportClosed):
    """The referee closed the connection: the peer sent more than it may without
    ending a message (or, ``kind`` "protocol", did what no bot may: connected to a
    launched bot's endpoint too often).  Its text completes "the bot ..." ("sent
    10485760 bytes without ending a message, ..."); ``kind`` is its fault's."""

    def __init__(self, text: str, kind: str = "oversized") -> None:
        super().__init__(text)
        self.kind = kind


class MessageTooLarge(TransportError):
    """The peer sent a message over the size limit."""


class MalformedMessage(TransportError):
    """The peer sent bytes that do not decode to a message object.  Its text is a
    noun phrase naming what arrived ("a line that is not JSON ..."), so that it
    completes "the bot replied with ..."."""

    @classmethod
    def not_an_object(cls, value: Any, codec: str, shown: str | None = None
                      ) -> MalformedMessage:
        """A value that decoded but is no message: "a JSON list, where a message must
        be one JSON object: [1,2]" (``codec`` "JSON" or "msgpack"; ``shown``: what the
        peer sent, as it wrote it, else the value as JSON writes it)."""
        whole = "JSON object" if codec == "JSON" else "msgpack map"
        return cls(f"{kind(value, codec)}, where a message must be one {whole}: "
                   f"{show(value) if shown is None else shown}")


class Transport(Protocol):
    def send(self, message: dict[str, Any]) -> None:
        """Send one message.  Raises TransportClosed if the peer is gone."""

    def recv(self, timeout: float) -> dict[str, Any]:
        """The next message, waiting at most ``timeout`` seconds.  Raises
        TransportTimeout, TransportClosed, MessageTooLarge or MalformedMessage."""

    def close(self) -> None:
        """Release the connection (idempotent)."""
