"""msgpack frames: one ZeroMQ message holds exactly one msgpack map (protocol/ZEROMQ.md).

Owns decoding a frame into a message, with the limits and the bot-facing words for
what is wrong with it (``MalformedMessage``, ``MessageTooLarge``), and recognising
a hello before a connection is admitted.  No sockets.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgpack

from ..base import MalformedMessage, MessageTooLarge

#: Default cap on one message (a msgpack frame), as ``referee.protocol``'s.
MAX_MESSAGE_BYTES = 8 << 10


#: The fields of every message a bot sends (``referee.protocol.messages``, whose
#: table tests/transport/zmq/test_zmq_launched.py checks this against).  Only their
#: values are built: any other field's value is skipped -- read as msgpack, nothing
#: made of it -- since it is ignored anyway.  A message nobody asked for, made of
#: one field of 8,000 empty lists, then costs the referee ~15 us to read instead of
#: ~1.6 ms (building the lists, and the garbage collector's passes over a large
#: referee's objects that so many new ones set off).
MESSAGE_FIELDS = frozenset({"type", "id", "decision", "protocol", "name", "version", "token"})


def _known_fields(data: bytes) -> dict[str, Any] | None:
    """``data`` as a map of its ``MESSAGE_FIELDS`` (the others skipped), or None if
    it is no well-formed msgpack map with string keys and nothing after it (then
    ``decode_frame`` decodes it in full, to say what is wrong)."""
    unpacker = msgpack.Unpacker(raw=False, strict_map_key=True,
                                max_buffer_size=max(len(data), 1))
    unpacker.feed(data)
    out: dict[str, Any] = {}
    try:
        for _ in range(unpacker.read_map_header()):
            key = unpacker.unpack()
            if type(key) is not str:
                return None
            if key in MESSAGE_FIELDS:
                out[key] = unpacker.unpack()
            else:
                unpacker.skip()
    except Exception:  # not a map, not msgpack, too deep...: said by the full decode
        return None
    return out if unpacker.tell() == len(data) else None


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


def multipart_error(parts: int) -> MalformedMessage:
    """What is wrong with a message of ``parts`` frames."""
    return MalformedMessage(
        f"a message of {parts} frames, where a message must be exactly one frame "
        f"(send each msgpack map as a single-part message from a DEALER socket; a REQ "
        f"socket adds an empty delimiter frame)")


def decode_frame(parts: Sequence[bytes], max_message_bytes: int) -> dict[str, Any]:
    """One message from the payload frames of one ZeroMQ message."""
    if len(parts) != 1:
        raise multipart_error(len(parts))
    data = parts[0]
    if len(data) > max_message_bytes:
        raise MessageTooLarge(_too_large(len(data), max_message_bytes))
    if not data:
        raise MalformedMessage("an empty frame, where a message must be one msgpack map")
    value = _known_fields(data)
    if value is not None:
        return value
    try:
        value = msgpack.unpackb(data, raw=False, strict_map_key=True)
    except Exception as e:  # msgpack raises several kinds; all mean "not msgpack"
        raise MalformedMessage(f"a frame that is not a msgpack value ({_unpack_error(e)})"
                               ) from None
    if not isinstance(value, dict):
        raise MalformedMessage.not_an_object(value, "msgpack")
    return value


