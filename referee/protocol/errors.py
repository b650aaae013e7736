"""Protocol errors: whose fault it is (see h11's Local/RemoteProtocolError).

    ProtocolError
    ├── BotProtocolError        the bot sent something wrong (a fault of the bot)
    │   └── UnsupportedVersion  its hello offers no version we speak (ends the session)
    └── RefereeProtocolError    the referee misused the session (a bug here, never a bot's)

Must not import: anything doing I/O.
"""

from __future__ import annotations

from typing import Any, Literal

from ..errors import BotError, RefereeError


class ProtocolError(RefereeError):
    """Base of the protocol layer's errors."""


class BotProtocolError(ProtocolError, BotError):
    """The bot broke the protocol.  ``kind`` is the fault kind the runner records:
    ``"malformed"`` (a message of the right type with a missing or mistyped field) or
    ``"protocol"`` (a message the bot may not send now, or of an unknown type).
    ``field`` names the offending field when there is one."""

    def __init__(self, kind: Literal["malformed", "protocol"], message: str, *,
                 field: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.field = field


class UnsupportedVersion(BotProtocolError):
    """The bot's hello lists no protocol version the referee speaks.  ``reply`` is the
    ``error`` message to send it before the session ends."""

    def __init__(self, message: str, reply: dict[str, Any]) -> None:
        super().__init__("protocol", message, field="protocol")
        self.reply = reply


class RefereeProtocolError(ProtocolError):
    """The referee asked the session for something its state does not allow: a bug in
    the referee, never the bot's fault."""
