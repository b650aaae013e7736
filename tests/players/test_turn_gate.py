"""The gate of a bot's capped logs (``TurnGate``): past its cap, a log is read only
while the gate is open (the bot's own turn), so a bot flooding its stderr between its
turns blocks in ``write`` instead of making the referee drain it on another seat's
time.  A real pipe and a real writer process; every step waits for an event (the
writer's own report of how far it got, the reader parking), never for a time."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import select
import signal
import socket
import struct
import sys
import termios
import threading
from pathlib import Path

import msgpack

from referee.players.launcher import launch_bot
from referee.players.process import StderrLog, TurnGate
from referee.transport.zmq.direct import _GREETING, DirectZmqTransport, _command, _frame
from tests.procs import Children, scaled

BLOCK = 4096  # the pipe holds exactly one block: PIPE_BUF, written atomically
CAP = 4 * BLOCK

# Writes BLOCK-byte blocks to its stderr for ever; on stdout, "s N" before starting
# block N and "d N" once its write returned.
WRITER = f"""
import os
block = b"x" * {BLOCK}
n = 0
while True:
    os.write(1, b"s %d\\n" % (n + 1))
    os.write(2, block)
    n += 1
    os.write(1, b"d %d\\n" % n)
"""


class Reports:
    """The writer's reports, line by line, as they come (a hung writer fails the
    test after a generous safety net instead of hanging it)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buf = b""
        self.done = 0  # blocks whose write returned
        self.pending = False  # a write started and has not returned

    def next(self) -> None:
        while b"\n" not in self.buf:
            ready, _, _ = select.select([self.fd], [], [], scaled(30))
            assert ready, "the writer reported nothing for 30 s"
            chunk = os.read(self.fd, 4096)
            assert chunk, "the writer ended"
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        kind, n = line.split()
        if kind == b"s":
            self.pending = True
        else:
            self.done = int(n)
            self.pending = False

    def until_blocked(self, read: int) -> None:
        """Until the writer has written what was read plus one pipeful and has
        started its next block: with the reader parked, that write cannot return."""
        while not (self.pending and self.done * BLOCK == read + BLOCK):
            self.next()


def in_pipe(fd: int) -> int:
    return int.from_bytes(fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"), sys.byteorder)


def test_past_the_cap_a_closed_gate_stops_the_reading_and_the_writer_blocks(
        tmp_path: Path, children: Children) -> None:
    r, w = os.pipe()
    fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, BLOCK)
    assert fcntl.fcntl(w, fcntl.F_GETPIPE_SZ) == BLOCK
    gate = TurnGate()
    gate.close()  # between the bot's turns from the start: below the cap it is read all the same
    path = tmp_path / "bot.stderr.log"
    log = StderrLog(r, str(path), CAP, gate=gate)
    writer = children.popen([sys.executable, "-c", WRITER], stderr=w, stdout=-1)
    os.close(w)
    assert writer.stdout is not None
    reports = Reports(writer.stdout.fileno())
    try:
        # Below the cap the reader read; at the cap (something dropped) it parked.
        assert log.parked.wait(scaled(30))
        read = log.kept + log.dropped
        assert log.kept == CAP and log.truncated and log.dropped > 0
        reports.until_blocked(read)
        # The writer is in its write, the pipe is full, the reader reads nothing.
        assert in_pipe(r) == BLOCK
        assert log.kept + log.dropped == read and log.parked.is_set()

        # The bot's turn: the gate opens, the pending write returns, the reading goes on.
        gate.open()
        blocked_at = reports.done
        while reports.done < blocked_at + 5:
            reports.next()
        assert log.kept + log.dropped > read

        # Its turn is over: the reader parks again, the writer blocks again.
        gate.close()
        assert log.parked.wait(scaled(30))
        read2 = log.kept + log.dropped
        reports.until_blocked(read2)
        assert read2 >= read + 5 * BLOCK
        assert in_pipe(r) == BLOCK and log.kept + log.dropped == read2

        # The writer ends while the gate is closed: the reader sees its pipe's end,
        # reads what was left in it, and ends.
        writer.send_signal(signal.SIGKILL)
        writer.wait(scaled(30))
        log.join(scaled(30))
        assert not log.thread.is_alive()
        assert log.kept == CAP
        assert log.kept + log.dropped == reports.done * BLOCK  # every byte written was read
        text = path.read_bytes()
        assert text.endswith(f"[referee: {log.dropped} more bytes of output dropped in "
                             f"this start]\n".encode())
    finally:
        gate.open(final=True)
        log.join(scaled(30))


def test_a_gate_opened_for_good_stays_open_and_an_ungated_log_reads_on(
        children: Children) -> None:
    gate = TurnGate()
    gate.close()
    assert not gate.is_open
    gate.open(final=True)
    gate.close()
    assert gate.is_open  # the bot is being ended: its logs are read to their end

    # Without a gate (a log nobody takes turns with) the reader drains past the cap.
    r, w = os.pipe()
    log = StderrLog(r, None, 1000)
    writer = children.popen([sys.executable, "-c",
                             "import os\nfor _ in range(64): os.write(2, b'y' * 65536)"],
                            stderr=w)
    os.close(w)
    assert writer.wait(scaled(30)) == 0  # never blocked for good: all 4 MiB were read
    log.join(scaled(30))
    assert log.kept + log.dropped == 64 * 65536 and not log.parked.is_set()


# Says "ready", floods its stderr from its main thread once told "go" (so it stops
# reading its stdin, blocked in write past the cap), then tells the length of each
# line it reads.
BLOCKED_BOT = """
import sys
print('{"n": 0}', flush=True)
sys.stdin.readline()
sys.stderr.write("x" * (2 << 20))
sys.stderr.flush()
for line in sys.stdin:
    print('{"n": %d}' % len(line), flush=True)
"""


def test_a_send_waiting_for_a_bot_blocked_on_its_stderr_drains_it() -> None:
    """Between its turns, past its cap, a bot is blocked writing its stderr and reads
    no stdin; a message longer than its stdin pipe (a long ``game_over``) must still
    reach it: while the send waits, its logs are read, then the gate is closed again."""
    conn = launch_bot([sys.executable, "-c", BLOCKED_BOT], memory_mb=None, stderr_cap=65536,
                      write_timeout=scaled(30))
    try:
        assert conn.transport.recv(scaled(30)) == {"n": 0}
        assert conn.process is not None
        gate, log = conn.process.gate, conn.process.stderr
        gate.close()  # between its turns
        conn.transport.send({"go": 1})
        assert log.parked.wait(scaled(30))  # at the cap, the bot blocked in its write
        big = {"pad": "y" * 300_000}  # more than its stdin pipe holds
        conn.transport.send(big)
        line = json.dumps(big, separators=(",", ":")) + "\n"
        assert conn.transport.recv(scaled(30)) == {"n": len(line)}
        assert not gate.is_open  # as it was before the send
        # Read while the send waited: all but what its pipe (64 KiB) may still hold
        # and the one read (at most 64 KiB) the reader may not have counted yet.
        assert log.kept + log.dropped >= (2 << 20) - 2 * 65536
    finally:
        conn.close(0.5)


def test_a_zeromq_send_that_waits_for_the_bot_to_read_is_told_before_and_after() -> None:
    """The direct ZeroMQ transport's hook (``launch_zmq_bot`` wires it to the bot's
    gate, as for stdio): a message larger than the socket's buffers, to a peer that
    reads nothing until told, waits -- ``on_blocked(True)`` is called then, and the
    peer (a raw socket: a libzmq bot's I/O thread would read on by itself) starts
    reading -- and ``on_blocked(False)`` once the whole message is out."""
    t = DirectZmqTransport(name="raw")
    peer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    told: list[bool] = []
    got = bytearray()

    def read() -> None:
        with contextlib.suppress(OSError):
            while chunk := peer.recv(1 << 16):
                got.extend(chunk)

    reader = threading.Thread(target=read, daemon=True)

    def blocked(waiting: bool) -> None:
        told.append(waiting)
        if waiting:
            reader.start()  # the bot's logs are read: it reads its messages again

    try:
        peer.connect(t.path)
        ready = _command(b"READY", b"\x0bSocket-Type" + struct.pack(">I", 6) + b"DEALER")
        peer.sendall(_GREETING + ready
                     + _frame(msgpack.packb({"type": "hello", "protocol": [1], "name": "raw"})))
        assert t.recv(scaled(5.0))["type"] == "hello"
        t.on_blocked = blocked
        message = {"type": "note", "text": "x" * (4 << 20) + "the end"}
        t.send(message)
        assert told == [True, False]
        # All of it is in the kernel now: wait for the reader to have its last bytes.
        frame = _frame(msgpack.packb(message))
        while reader.is_alive() and not got.endswith(frame[-64:]):
            reader.join(0.05)
        assert got.endswith(frame)
    finally:
        peer.close()
        t.close()
