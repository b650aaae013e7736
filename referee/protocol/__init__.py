"""The bot protocol (version 1), without any I/O.

Owns: the message definitions and their validation (``messages``), the per-bot
session state machine (``session``), the protocol's errors (``errors``) and the JSON
Schema generated from the definitions (``schema``).  Shared by every transport
(stdio JSON lines, ZeroMQ msgpack, in-memory): a transport moves dicts, this package
says what they mean.  The bot-facing documentation is protocol/PROTOCOL.md.

Use::

    session = BotSession(referee="updown-referee 0.1.0", time={...})
    hello = session.receive(transport.recv(startup))    # -> Hello, or raises
    transport.send(session.welcome())
    transport.send(session.new_game("g1", 0, config.to_dict(), ["a", "b"]))
    transport.send(session.request(seat, obs, legal_texts, events, time_left))
    ev = session.receive(transport.recv(time_left))     # DecisionReply | IgnoredReply
    ...
    transport.send(session.game_over(...)); transport.send(session.bye())

Must not import: transports, subprocess, sockets, a clock, the game engine.
"""

from __future__ import annotations

from .errors import BotProtocolError, ProtocolError, RefereeProtocolError, UnsupportedVersion
from .messages import (
    MAX_MESSAGE_BYTES,
    MESSAGES,
    PROTOCOL_VERSIONS,
    REJECT_ACTIONS,
    REJECT_CODES,
    DecisionReply,
    Hello,
    check_referee_message,
    parse_bot_message,
)
from .session import BotSession, IgnoredReply, State

__all__ = [
    "MAX_MESSAGE_BYTES",
    "MESSAGES",
    "PROTOCOL_VERSIONS",
    "REJECT_ACTIONS",
    "REJECT_CODES",
    "BotProtocolError",
    "BotSession",
    "DecisionReply",
    "Hello",
    "IgnoredReply",
    "ProtocolError",
    "RefereeProtocolError",
    "State",
    "UnsupportedVersion",
    "check_referee_message",
    "parse_bot_message",
]
