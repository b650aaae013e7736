"""How the referee shows what a bot sent, in the messages it writes about it.

Owns: quoting a bot's bytes and text, and showing the values it sent, in the wire
format's own terms -- text as a JSON-style quoted string (invalid UTF-8 shown as
U+FFFD, control characters escaped, cut to a length), values as JSON writes them
(``true``, ``false``, ``null``, ``1.5``, ``[1,2]``), and what kind of value it is
("a JSON list", "a msgpack array") -- never a Python repr (``b'...'``, ``True``,
``None``, ``list``).  Bot authors read these messages; they need not know Python.

Shared by the transports and the protocol layer, so it sits below both.
Must not import: anything else of the referee.
"""

from __future__ import annotations

import json
from typing import Any

#: Characters shown of a bot's text or value before it is cut (``...`` follows).
LIMIT = 60


def _escape_controls(text: str) -> str:
    # json.dumps escapes U+0000..U+001F but leaves DEL and the C1 controls as they are.
    if not any(0x7F <= ord(c) <= 0x9F for c in text):
        return text
    return "".join(f"\\u{ord(c):04x}" if 0x7F <= ord(c) <= 0x9F else c for c in text)


#: Characters a terminal acts on rather than shows: the C0 controls (carriage return,
#: escape...), DEL, the C1 controls (U+009B is a CSI on many terminals) and the
#: bidirectional overrides (a line that reads as something else).
_CONTROL = {*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0), *range(0x202A, 0x202F),
            *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C}
_ESCAPES = {c: (f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}") for c in _CONTROL}


def printable(text: str, *, keep_tabs: bool = False) -> str:
    """Bot-controlled text made safe to print on the organiser's terminal: every
    control character shown as an escape (``\\x1b``, ``\\x0d``, ``\\u202e``), so that
    a bot's stderr, name or decision text can neither move the cursor, rewrite a
    line, clear the screen, set the window title, nor reorder what a line shows."""
    if text.isprintable():
        return text
    table = _ESCAPES if not keep_tabs else {k: v for k, v in _ESCAPES.items() if k != 9}
    return text.translate(table)


def quote(data: bytes | bytearray | memoryview | str, limit: int = LIMIT) -> str:
    """``data`` as a JSON-style quoted string: ``b'hi\\x01'`` -> ``"hi\\u0001"``.
    Bytes are decoded as UTF-8, an invalid byte showing as U+FFFD; a text longer than
    ``limit`` characters is cut, and ``...`` follows the closing quote."""
    if isinstance(data, str):
        text = data
    else:
        # Decode no more than can be shown: a character takes at most 4 bytes, so
        # a longer ``data`` still decodes to more than ``limit`` characters (and is cut).
        text = bytes(data[: 4 * limit + 4]).decode("utf-8", "replace")
    cut = len(text) > limit
    if cut:
        text = text[:limit]
    return _escape_controls(json.dumps(text, ensure_ascii=False)) + ("..." if cut else "")


def excerpt(data: bytes | bytearray | memoryview, limit: int = LIMIT) -> str:
    """The start of a line of valid JSON, as the bot wrote it (no quotes: it is JSON
    already), control characters escaped, cut to ``limit`` characters."""
    text = bytes(data[: 4 * limit + 4]).decode("utf-8", "replace")
    text = "".join(f"\\u{ord(c):04x}" if ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F else c
                   for c in text.strip()[: limit + 1])
    return text if len(text) <= limit else text[: limit - 3] + "..."


def show(value: Any, limit: int = LIMIT) -> str:
    """A decoded value as JSON writes it (``true``, ``null``, ``1.0``, ``"x"``,
    ``[1,2]``), cut to about ``limit`` characters."""
    if isinstance(value, str):
        return quote(value, limit)
    if isinstance(value, (bytes, bytearray)):  # msgpack's bin type: JSON has none
        return f"binary data of {len(value)} bytes"
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return kind(value, "msgpack")
    text = _escape_controls(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_JSON_KINDS = {dict: "a JSON object", list: "a JSON list", str: "a JSON string",
               bool: "a JSON boolean", int: "a JSON number", float: "a JSON number",
               type(None): "JSON null"}
_MSGPACK_KINDS = {dict: "a msgpack map", list: "a msgpack array", tuple: "a msgpack array",
                  str: "a msgpack string", bytes: "msgpack binary data",
                  bool: "a msgpack boolean", int: "a msgpack integer",
                  float: "a msgpack float", type(None): "msgpack nil"}


def kind(value: Any, codec: str) -> str:
    """What ``value`` is in ``codec``'s terms ("JSON" or "msgpack"): "a JSON list",
    "a msgpack array", "msgpack nil", ..."""
    if codec == "JSON":
        return _JSON_KINDS.get(type(value), "a JSON value")
    return _MSGPACK_KINDS.get(type(value), "a msgpack extension value")
