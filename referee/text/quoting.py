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
import re
import shlex
from collections.abc import Iterable
from typing import Any, TextIO

#: Characters shown of a bot's text or value before it is cut (``...`` follows).
LIMIT = 60


class _Escapes(dict[int, str]):
    """``printable``'s table for ``str.translate``: a character's code -> its escape
    (or the character itself), worked out when first met and kept (the Basic
    Multilingual Plane's only: at most 65,536 of them)."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        if char.isprintable():
            shown = char
        elif code < 0x20:
            shown = f"\\x{code:02x}"
        elif code < 0x10000:
            shown = f"\\u{code:04x}"
        else:  # as JSON writes it: a surrogate pair
            high, low = divmod(code - 0x10000, 0x400)
            return f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}"
        self[code] = shown
        return shown


_ESCAPES = _Escapes()
_KEEP_TABS = _Escapes({9: "\t"})
_KEEP_LINES = _Escapes({10: "\n"})
_KEEP_BOTH = _Escapes({9: "\t", 10: "\n"})


def printable(text: str, *, keep_tabs: bool = False, keep_newlines: bool = False) -> str:
    """Text a bot or an author wrote, made safe to show on the organiser's terminal or
    in a log: every character that is not printable shown as an escape, so that a
    bot's stderr, name, hello or decision text, or an author's command, can neither
    move the cursor, rewrite a line, clear the screen, set the window title, nor
    reorder or hide what a line shows.

    The one function that does this: the command line's output streams (``Guard``),
    ``quote``, ``show`` and ``excerpt`` below, and the bots' stderr logs use it.  Not printable, as Python's
    ``str.isprintable`` has it: the C0 controls (escape, carriage return, bell...),
    DEL, the C1 controls (U+009B is a CSI on many terminals), the format characters
    (the bidirectional overrides and isolates, zero-width characters), the line and
    paragraph separators, spaces other than U+0020, surrogates, private-use and
    unassigned code points.  A C0 control is shown as ``\\x1b``, any other as
    ``\\u202e`` (a surrogate pair beyond U+FFFF): as a JSON string escapes them, so
    that JSON output stays valid JSON meaning the same.  Tabs and newlines are kept
    when asked (multi-line output); text with nothing to escape comes back as it is.
    """
    if text.isprintable():
        return text
    if (keep_newlines or keep_tabs) and not text.isascii():
        # lines of non-ASCII text (str.translate is fast on ASCII only): checked at C speed
        probe = text.replace("\n", " ") if keep_newlines else text
        probe = probe.replace("\t", " ") if keep_tabs else probe
        if probe.isprintable():
            return text
    table = (_KEEP_BOTH if keep_newlines else _KEEP_TABS) if keep_tabs else (
        _KEEP_LINES if keep_newlines else _ESCAPES)
    return text.translate(table)


def command_line(words: Iterable[str]) -> str:
    """A bot's command (words a bot's author chose) as one line to show: each word's
    unprintable characters escaped first (``printable``: a newline, a carriage return
    or a tab too, so that no word can end the line and write a fake one after it),
    then quoted as a shell would need it (``shlex.quote``), so that where one word
    ends and the next begins is plain: ``["a b", "c\\n"]`` -> ``'a b' 'c\\x0a'``."""
    return " ".join(shlex.quote(printable(str(w))) for w in words)


#: The control sequences the referee itself writes on a terminal, through ``control``:
#: going back to the start of the line, erasing it, and colours (SGR).
_OWN_CONTROL = re.compile(r"(?:\r|\x1b\[[0-9;]*[mK])+")


class Guard:
    """A text stream (the command line's stdout or stderr) that shows, never obeys,
    what is written to it: every write goes through ``printable`` (newlines and tabs
    kept).  The referee's own control sequences (a progress line's carriage return,
    colours on a terminal) go through ``control``.  It has no ``buffer``: nothing
    writes around it."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(printable(text, keep_tabs=True, keep_newlines=True))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def write_control(self, sequence: str) -> None:
        control(self.stream, sequence)

    def flush(self) -> None:
        self.stream.flush()

    def __getattr__(self, name: str) -> Any:
        if name == "buffer":
            raise AttributeError(name)
        return getattr(self.stream, name)


def control(stream: TextIO | Guard, sequence: str) -> None:
    """Write one of the referee's own control sequences (``\\r``, ``\\x1b[K``,
    colours) to ``stream``, past its ``Guard`` if it has one.  Anything else is
    refused (ValueError): bots' text never comes this way."""
    if not _OWN_CONTROL.fullmatch(sequence):
        raise ValueError(f"not one of the referee's control sequences: {sequence!r}")
    if isinstance(stream, Guard):
        stream.write_control(sequence)
    else:
        stream.write(sequence)


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
    # json.dumps escapes the C0 controls; printable the rest (DEL, C1, bidi...)
    return printable(json.dumps(text, ensure_ascii=False)) + ("..." if cut else "")


def excerpt(data: bytes | bytearray | memoryview, limit: int = LIMIT) -> str:
    """The start of a line of valid JSON, as the bot wrote it (no quotes: it is JSON
    already), control characters escaped, cut to ``limit`` characters."""
    text = bytes(data[: 4 * limit + 4]).decode("utf-8", "replace")
    text = printable(text.strip()[: limit + 1])
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
    text = printable(text)
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
