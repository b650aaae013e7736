"""JSON lines over a bot's stdin/stdout: the stdio transport's framing and codec.

Owns: splitting a byte stream into lines without ever buffering more than the size
limit (a 300 MB line is refused after ``max_message_bytes``, and the rest of it is
skipped as it arrives), decoding a line into a message dict (invalid UTF-8, invalid
JSON, nesting deeper than 1024, NaN/Infinity, a non-object: ``MalformedMessage``),
and writing without blocking the referee on a bot that never reads its stdin
(non-blocking writes with a deadline).

Knows nothing of what messages mean (``referee.protocol``), nor of processes beyond
an optional *exit fd* (a Linux pidfd, readable once the bot has exited): with it, a
bot that dies while a grandchild still holds its stdout open is seen as gone at once,
rather than after a timeout.

Codec: orjson (strict RFC 8259: rejects invalid UTF-8, lone surrogates, NaN; about
5x faster than the stdlib ``json`` per message, which is most of the referee's
per-decision cost).

Must not import: the protocol layer, the game engine, subprocess.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import select
import time
from collections.abc import Callable
from typing import Any

import orjson

from ..text.quoting import excerpt, quote
from .base import MalformedMessage, MessageTooLarge, TransportClosed, TransportTimeout

READ_CHUNK = 1 << 16
_BLANK_START = (b" ", b"\t", b"\r", b"\n")

#: A run of blank lines at the start of the buffer (skipped in one step, not line by
#: line: a bot writing newlines as fast as it can costs the referee a read, not a loop).
_BLANKS = re.compile(rb"[ \t\r\n]*")


def encode(message: dict[str, Any]) -> bytes:
    """One message as a JSON line (with its newline)."""
    return orjson.dumps(message, option=orjson.OPT_APPEND_NEWLINE)


def fragment(value: Any) -> orjson.Fragment:
    """``value`` encoded now, to be embedded as it is in messages encoded later: the
    same bytes as encoding it in place, without encoding it again each time (an event
    sent to every seat, in every request that carries it)."""
    return orjson.Fragment(orjson.dumps(value))


#: The integers a message may hold: orjson's (and msgpack's) range.  orjson reads an
#: integer beyond it as a float, and one too long for a float as "infinity".
INT_MIN, INT_MAX = -(1 << 63), (1 << 64) - 1
INT_RANGE = f"from {INT_MIN} to {INT_MAX} (-2^63 to 2^64-1)"
# An integer out of that range has 19 digits or more.
_LONG_DIGITS = re.compile(rb"[0-9]{19}")


class _OutOfRange(ValueError):
    def __init__(self, digits: str) -> None:
        super().__init__(digits)
        self.digits = digits


def _check_int(digits: str) -> int:
    try:
        value = int(digits)
    except ValueError:  # more digits than Python converts: out of range in any case
        raise _OutOfRange(digits) from None
    if not INT_MIN <= value <= INT_MAX:
        raise _OutOfRange(digits)
    return value


def _out_of_range(line: bytes | bytearray | memoryview) -> str | None:
    """The first integer of ``line`` out of INT_RANGE, as written, or None."""
    try:
        json.loads(bytes(line), parse_int=_check_int)
    except _OutOfRange as e:
        return e.digits
    except ValueError:  # not JSON for Python either (or digits past its own limit)
        return None
    return None


def _shown_digits(digits: str) -> str:
    return digits if len(digits) <= 40 else f"{digits[:20]}...{digits[-5:]} ({len(digits)} digits)"


def _bad_utf8(line: bytes | bytearray | memoryview) -> str | None:
    """Which byte of ``line`` is not UTF-8, and where; None if every byte is."""
    try:
        bytes(line).decode("utf-8")
    except UnicodeDecodeError as e:
        return f"byte 0x{e.object[e.start]:02x} at offset {e.start}: {e.reason}"
    return None


def decode(line: bytes | bytearray | memoryview) -> dict[str, Any]:
    """One JSON line (without its newline) as a message; MalformedMessage if it is not
    a JSON object in UTF-8, or holds an integer out of INT_RANGE.  The error is a
    noun phrase ("a line that is not JSON (...): "hello there"") that completes "the
    bot replied with ...", and shows the line as quoted text, never as a Python bytes
    repr."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError as e:
        if "not valid UTF-8" in str(e):
            where = _bad_utf8(line)
            if where is not None:
                raise MalformedMessage(f"a line that is not valid UTF-8 ({where}): "
                                       f"{quote(line)}") from None
        if "infinity" in str(e):
            digits = _out_of_range(line)
            if digits is not None:
                raise MalformedMessage(f"a line holding the integer {_shown_digits(digits)}, "
                                       f"out of range: an integer must be {INT_RANGE}: "
                                       f"{excerpt(line)}") from None
        # orjson says "str is not valid UTF-8": the str is the line.
        why = str(e).replace("str is not valid UTF-8", "not valid UTF-8")
        hint = ""
        if bytes(line[:64]).lstrip()[:1] not in (b"{", b"["):
            # Most often a debug print: say where diagnostics belong, as the
            # no-flush hint says what to flush.
            hint = ("; stdout carries protocol messages only: print diagnostics to "
                    "stderr (Python: print(..., file=sys.stderr); C: fprintf(stderr, ...);"
                    " JavaScript: console.error)")
        raise MalformedMessage(f"a line that is not JSON ({why}): {quote(line)}{hint}"
                               ) from None
    if not isinstance(value, dict):
        raise MalformedMessage.not_an_object(value, "JSON", excerpt(line))
    if _LONG_DIGITS.search(line):  # rare: only then is the line read a second time
        digits = _out_of_range(line)
        if digits is not None:
            raise MalformedMessage(f"a line holding the integer {_shown_digits(digits)}, out "
                                   f"of range: an integer must be {INT_RANGE}: "
                                   f"{excerpt(line)}")
    return value


def _ms(seconds: float) -> int:
    """A poll timeout in whole milliseconds, rounded up (never 0 for a positive wait,
    which would make a wait of 0.3 ms a busy loop of zero-timeout polls)."""
    if seconds <= 0.0:
        return 0
    return max(1, int(seconds * 1000 + 0.999))


class StdioTransport:
    """The referee's end of a bot's pipes: ``write_fd`` is the bot's stdin,
    ``read_fd`` its stdout.  Both are set non-blocking and closed by ``close``."""

    def __init__(
        self,
        write_fd: int,
        read_fd: int,
        *,
        max_message_bytes: int = 8 << 10,
        write_timeout: float = 5.0,
        exit_fd: int | None = None,
        clock: Any = time.monotonic,
    ) -> None:
        self.write_fd = write_fd
        self.read_fd = read_fd
        self.exit_fd = exit_fd
        self.max_message_bytes = max_message_bytes
        self.write_timeout = write_timeout
        self._clock = clock
        os.set_blocking(write_fd, False)
        os.set_blocking(read_fd, False)
        self._buf = bytearray()
        #: Bytes read from the bot's stdout so far (0: nothing at all arrived, which
        #: usually means the bot's output sits in its own buffer, unflushed).
        self.received_bytes = 0
        self._scan = 0  # bytes of _buf known to hold no newline
        self._skipping = False  # inside an oversized line: drop bytes until its newline
        self._blank = 0  # bytes of blank lines since the last message
        self._eof = False
        self._exited = False
        self._broken = ""  # why sending is impossible, once it is
        self._closed = False
        #: Called with True when a send finds the bot's stdin full and waits for it to
        #: drain, with False when that wait is over: the bot may be blocked writing
        #: its own full stderr, which must then be read (``launch_bot`` opens the
        #: gate of its capped logs for that time: ``TurnGate``).
        self.on_blocked: Callable[[bool], None] | None = None
        self._waited = False
        self._rpoll = select.poll()
        self._rpoll.register(read_fd, select.POLLIN)
        if exit_fd is not None:
            self._rpoll.register(exit_fd, select.POLLIN)
        self._wpoll = select.poll()
        self._wpoll.register(write_fd, select.POLLOUT)

    # -- receiving -------------------------------------------------------------------

    def _skip_blanks(self) -> None:
        """Drop the blank lines at the start of the buffer, all at once; raises
        MalformedMessage when more than the limit of them has come since the last
        message (blank lines are tolerated, not free: reading them costs the referee)."""
        buf = self._buf
        end = _BLANKS.match(buf).end()  # type: ignore[union-attr]  # always matches
        j = buf.rfind(b"\n", 0, end)
        if j < 0:
            return
        del buf[: j + 1]
        self._scan = 0
        self._blank += j + 1
        if self._blank > self.max_message_bytes:
            n, self._blank = self._blank, 0
            raise MalformedMessage(
                f"{n} bytes of blank lines in a row: blank lines are ignored, but at most "
                f"{self.max_message_bytes} bytes of them between two messages")

    def _next_line(self) -> bytes | None:
        """A complete line from the buffer, if there is one; raises MessageTooLarge as
        soon as more than the limit has arrived without a newline, MalformedMessage
        when more than the limit of blank lines has."""
        while True:
            if self._buf[:1] in _BLANK_START:
                self._skip_blanks()
            i = self._buf.find(b"\n", self._scan)
            if i < 0:
                self._scan = len(self._buf)
                # (+ 1: room for the "\r" of a "\r\n" line ending, not part of the message)
                if self._scan > self.max_message_bytes + 1:
                    n = self._scan
                    self._buf.clear()
                    self._scan = 0
                    self._skipping = True
                    raise MessageTooLarge(
                        f"{n} bytes without a newline: a message may have at most "
                        f"{self.max_message_bytes} bytes; the rest of the line is skipped")
                return None
            line = bytes(self._buf[:i])
            del self._buf[: i + 1]
            self._scan = 0
            # The limit counts the message, not its line ending ("\n" or "\r\n").
            n = len(line) - 1 if line[-1:] == b"\r" else len(line)
            if n > self.max_message_bytes:
                raise MessageTooLarge(f"a line of {n} bytes: a message may have at most "
                                      f"{self.max_message_bytes} bytes")
            if line.strip():
                self._blank = 0
                return line
            # A blank line after text the buffer began with (``_skip_blanks`` takes
            # the rest): counted the same.
            self._blank += i + 1

    def _read_available(self, drain: bool = False) -> None:
        """Read what the pipe holds now, without blocking; at most 64 chunks unless
        ``drain`` (so a flooding bot cannot keep the referee past its deadline)."""
        for _ in range(1024 if drain else 64):
            try:
                chunk = os.read(self.read_fd, READ_CHUNK)
            except BlockingIOError:
                return
            except OSError as e:
                if e.errno == errno.EINTR:
                    continue
                self._eof = True
                return
            if not chunk:
                self._eof = True
                return
            self.received_bytes += len(chunk)
            if self._skipping:
                j = chunk.find(b"\n")
                if j < 0:
                    continue
                self._skipping = False
                chunk = chunk[j + 1 :]
            self._buf += chunk
            if len(self._buf) > self.max_message_bytes or (len(chunk) < READ_CHUNK
                                                           and not drain):
                return

    def recv(self, timeout: float) -> dict[str, Any]:
        if self._closed:
            raise TransportClosed("the transport is closed")
        polled = False
        if not self._buf and not (self._skipping or self._eof or self._exited):
            # Fast path, the common case: nothing buffered, and the bot's reply arrives as
            # one whole line.  Wait for it with one poll (which returns at once if it is
            # there already), take it with one read, and decode the chunk as it is, with
            # no copy (JSON allows the trailing newline): no exception, no loop.  Anything
            # else -- the bot exited, several lines, part of a line, a line that does not
            # decode -- goes on to the general path below, which reports errors exactly as
            # it always does; a poll that saw nothing is a timeout.
            start = self._clock()
            ready = self._rpoll.poll(0 if timeout <= 0.0 else  # ``_ms``, inline
                                     max(1, int(timeout * 1000 + 0.999)))
            polled = True
            if not ready:
                raise TransportTimeout(f"no complete message within {timeout:.3f}s")
            for fd, _ in ready:
                if fd == self.exit_fd:
                    # The bot is gone; whatever it wrote before is still in the pipe.
                    self._exited = True
            if self._exited:
                self._read_available(drain=True)
            else:
                try:
                    chunk: bytes | None = os.read(self.read_fd, READ_CHUNK)
                except (BlockingIOError, InterruptedError):
                    chunk = None
                except OSError:
                    chunk = b""
                if chunk is not None:
                    n = len(chunk)
                    self.received_bytes += n
                    if n == 0:
                        self._eof = True
                    elif (chunk[-1] == 10 and n <= self.max_message_bytes + 1
                          and chunk.find(b"\n") == n - 1):
                        try:
                            value = orjson.loads(chunk)
                        except orjson.JSONDecodeError:
                            value = None
                        if type(value) is dict:
                            self._blank = 0
                            return value
                        self._buf += chunk
                    else:
                        self._buf += chunk
            # What is left of the time for the general path.
            remaining_time = max(0.0, timeout - (self._clock() - start))
        else:
            remaining_time = timeout
        deadline: float | None = None
        while True:
            line = self._next_line()
            if line is not None:
                return decode(line)
            if self._eof:
                raise TransportClosed("the bot closed its stdout")
            if self._exited:
                raise TransportClosed("the bot process exited")
            if not polled:
                # The reply is often there already (a bot on the same CPU runs while we
                # write): one read, no poll.
                polled = True
                self._read_available()
                continue
            now = self._clock()
            if deadline is None:
                # The clock is read only when we must wait: the time spent before that
                # (one read) is negligible against any per-decision limit.
                deadline = now + remaining_time
            remaining = deadline - now
            if remaining <= 0:
                raise TransportTimeout(f"no complete message within {timeout:.3f}s")
            events = self._rpoll.poll(_ms(remaining))
            for fd, _ in events:
                if fd == self.exit_fd:
                    # The bot is gone; whatever it wrote before is still in the pipe.
                    self._exited = True
            self._read_available(drain=self._exited)

    #: ``fragment``: values pre-encoded for this transport's messages.
    fragment = staticmethod(fragment)

    def wait_handles(self) -> tuple[int, ...]:
        """The descriptors that become readable when ``recv`` has something new (its
        stdout, the exit fd): for a loop waiting on many bots at once.  A message may
        already be buffered: call ``recv(0)`` before waiting on them."""
        return (self.read_fd,) if self.exit_fd is None else (self.read_fd, self.exit_fd)

    # -- sending ---------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(orjson.dumps(message, option=orjson.OPT_APPEND_NEWLINE))

    def send_bytes(self, data: bytes) -> None:
        """Write ``data`` in full within ``write_timeout``.  A partial write leaves the
        stream unusable: later sends raise TransportClosed."""
        if self._closed:
            raise TransportClosed("the transport is closed")
        if self._broken:
            raise TransportClosed(self._broken)
        # Fast path: one write takes it all (a request is far below the pipe's buffer,
        # and writes up to PIPE_BUF bytes are atomic).
        try:
            n = os.write(self.write_fd, data)
        except (BlockingIOError, InterruptedError):
            n = 0
        except (BrokenPipeError, ConnectionResetError):
            self._broken = "the bot closed its stdin"
            raise TransportClosed(self._broken) from None
        if n != len(data):
            self._send_rest(data, n)

    def _send_rest(self, data: bytes, done: int) -> None:
        """Write what is left of ``data`` after ``done`` bytes, waiting for the pipe
        to drain, at most ``write_timeout`` seconds."""
        view = memoryview(data)[done:]
        try:
            self._write_rest(view, len(data))
        finally:
            if self._waited and self.on_blocked is not None:
                self._waited = False
                self.on_blocked(False)

    def _write_rest(self, view: memoryview, size: int) -> None:
        deadline: float | None = None
        while view:
            try:
                n = os.write(self.write_fd, view)
                view = view[n:]
                continue
            except BlockingIOError:
                pass
            except (BrokenPipeError, ConnectionResetError):
                self._broken = "the bot closed its stdin"
                raise TransportClosed(self._broken) from None
            except InterruptedError:
                continue
            now = self._clock()
            if deadline is None:
                deadline = now + self.write_timeout
                if self.on_blocked is not None:
                    self._waited = True
                    self.on_blocked(True)
            if now >= deadline:
                self._broken = (f"the bot stopped reading its stdin ({len(view)} of {size} "
                                f"bytes unwritten after {self.write_timeout:.3f}s)")
                raise TransportTimeout(self._broken)
            self._wpoll.poll(_ms(deadline - now))

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for fd in (self.write_fd, self.read_fd):
            with contextlib.suppress(OSError):
                os.close(fd)
