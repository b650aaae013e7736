"""What one TCP connection of a ROUTER socket may send between two messages.

Owns ``TcpWatch`` -- the TCP connections of one bound ROUTER, as the socket's
monitor and its messages make them known -- and the one thread of the process
that checks every watch, ``TICK`` apart, while any exists.

Why: libzmq holds the parts of a message until its last part has come, and no
libzmq option bounds a message's total (``MAXMSGSIZE`` bounds single frames, the
queue limits count whole messages).  A peer sending part after part, flagged MORE,
without end, would grow the referee's memory until the connection drops.  The
referee cannot see into libzmq, but the kernel counts every TCP connection's bytes
received (``TCP_INFO``'s ``tcpi_bytes_received``, Linux).  A connection that has
sent more than ``limit`` bytes (plus ``HEARTBEAT_BYTES`` a second, for heartbeats)
since the referee last read a message from it is *cut*: ``shutdown()`` on a
duplicate of its file descriptor, which makes libzmq drop the connection and free
what it held.  An honest bot has at most a reply or two in flight: it never comes
near the limit.

The thread only reads the kernel's counters and shuts connections down (and,
when the socket's events wait unread, looks for connections the owner has not been
told of among the process's file descriptors: ``discover``); the
socket's owner tells a watch of connections (``accepted``, ``gone``) and of every
message it reads (``read``: one dict look-up and an increment, the only cost on
the path of a decision), and checks its connections itself, ``FINE`` apart, while
it waits on the socket longer than that.  Elsewhere than Linux, and on ``ipc://`` endpoints (no
TCP), nothing is watched (``AVAILABLE``; protocol/ZEROMQ.md says so).
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import socket
import stat
import struct
import sys
import threading
import time
from collections.abc import Callable

log = logging.getLogger("referee.zmq")

#: Seconds between two checks of every watched connection by the watchdog's
#: thread; ``FINE`` while the socket's owner waits on the socket itself (``pump``:
#: typically for the reply of the bot whose turn it is).  What libzmq may hold of a
#: connection before it is cut is the limit plus what the peer sends in that time:
#: at the fastest a peer sends on loopback (~0.5-0.8 GB/s here), ~4 MB in ``FINE``,
#: ~15 MB in ``TICK``; over a network, far less.  A shorter ``TICK`` costs every
#: decision (the thread's wake-ups take the GIL from the game's thread), and so does
#: a dearer check: ``bench/zmq_watchdog.py`` measures both.  ``FINE`` costs only
#: waits longer than itself.
TICK = 0.02
FINE = 0.005
#: Seconds between two looks for connections accepted while nobody read the
#: socket's events (``TcpWatch.discover``: a look at every file descriptor).
DISCOVER = 0.1
#: Bytes a connection may send besides its messages, per second since the last
#: message read from it: ZeroMQ heartbeats (a PING or PONG is ~10 bytes, ~45 with
#: CURVE; a bot heartbeating every 100 ms sends under 1 KiB a second).
HEARTBEAT_BYTES = 1024
#: Framing, handshake and command slack on top of what messages may hold.
SLACK = 64 * 1024

# struct tcp_info (linux/tcp.h): tcpi_bytes_received, a u64 at offset 128 (Linux
# 4.1 on).  The buffer asked for is larger; the kernel says how much it filled.
_TCP_INFO = getattr(socket, "TCP_INFO", None)
_BYTES_RECEIVED = slice(128, 136)

#: Whether connections can be watched here at all (Linux: TCP_INFO as above).
AVAILABLE = sys.platform.startswith("linux") and _TCP_INFO is not None


def connection_limit(max_message_bytes: int) -> int:
    """What a connection may send between two messages read from it (besides
    heartbeats): two frames of libzmq's hard limit (twice ``max_message_bytes``: a
    late reply beside the awaited one), and ``SLACK``."""
    return 2 * (2 * max_message_bytes) + SLACK


def bytes_received(fd: int) -> tuple[int, int] | None:
    """The inode and the bytes received so far of the TCP socket ``fd`` (None when
    ``fd`` is closed, no TCP socket, or the kernel does not say).  Two system calls,
    on libzmq's own descriptor: only ``shut`` needs a duplicate."""
    try:
        inode = os.fstat(fd).st_ino
        # Family and type given: no system call to find them.  Never closed: detached.
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, 0, fd)
    except OSError:
        return None
    try:
        info = s.getsockopt(socket.IPPROTO_TCP, _TCP_INFO, 256)  # type: ignore[arg-type]
    except OSError:
        return None
    finally:
        s.detach()
    if len(info) < _BYTES_RECEIVED.stop:
        return None
    return inode, int.from_bytes(info[_BYTES_RECEIVED], sys.byteorder)


def _port(endpoint: str) -> int | None:
    """The port of a bound ``tcp://HOST:PORT`` endpoint (None for any other)."""
    if not endpoint.startswith("tcp://"):
        return None
    try:
        return int(endpoint.rpartition(":")[2])
    except ValueError:
        return None


def _accepted_on(fd: int, port: int) -> bool:
    """Is the socket ``fd`` a TCP connection (not a listener) whose local port is
    ``port``: one the listener of that port accepted?"""
    try:
        s = socket.socket(fileno=fd)  # (its family and type asked of the kernel)
    except OSError:
        return False
    try:
        return (s.family in (socket.AF_INET, socket.AF_INET6)
                and s.type == socket.SOCK_STREAM and s.proto == socket.IPPROTO_TCP
                and s.getsockname()[1] == port
                and not s.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN))
    except OSError:
        return False
    finally:
        s.detach()


def shut(fd: int, inode: int) -> bool:
    """``shutdown()`` the socket ``fd`` if it still is the one with ``inode`` (libzmq
    may have closed it, and the number gone to another file, since it was read):
    libzmq reads the end of the stream, drops the connection and frees what it held
    of it."""
    try:
        dup = os.dup(fd)
    except OSError:
        return False
    try:
        if os.fstat(dup).st_ino != inode:
            return False
        with socket.socket(fileno=dup) as s:
            dup = -1
            # When libzmq closes it, a reset: the peer hears at once, and nothing of
            # the connection is left to the kernel (no FIN_WAIT with a full buffer).
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.shutdown(socket.SHUT_RDWR)
        return True
    except OSError:
        return False
    finally:
        if dup >= 0:
            os.close(dup)


class _Conn:
    """One watched connection: ``reads`` (messages read from it, counted by the
    socket's owner), what the watchdog last saw of it (``seen``), and since when and
    from how many bytes received it owes a message (``since``, ``base``)."""

    __slots__ = ("base", "cut", "found", "inode", "reads", "seen", "since")

    def __init__(self, found: bool = False) -> None:
        self.reads = 0
        self.seen = -1
        self.inode = 0
        self.base = 0
        self.since = 0.0
        self.cut = ""  # why the watchdog closed it, once it has
        self.found = found  # by ``discover``, before its EVENT_ACCEPTED was read


class TcpWatch:
    """The TCP connections of one ROUTER socket, by file descriptor.

    The socket's owner calls ``accepted`` (the monitor's ``EVENT_ACCEPTED``),
    ``read`` (each message read, with its ``SRCFD``) and ``gone`` (``EVENT_DISCONNECTED``:
    the connection, and why it was cut if it was); ``close`` ends the watch.  The
    watchdog thread calls ``check``.  Only dict operations are shared between the
    two threads (atomic in CPython).

    The owner reads the monitor's events only when it uses the socket.  A connection
    accepted while it does not (other seats' turns) would not be watched until then:
    with ``events_fd`` (the monitor socket's ``ZMQ_FD``, readable while events wait
    to be read) the thread looks for such connections itself (``discover``: the
    process's TCP sockets on the endpoint's port), at most ``DISCOVER`` apart."""

    def __init__(self, endpoint: str, limit: int, *,
                 heartbeat_bytes: int = HEARTBEAT_BYTES, watched: bool = True,
                 events_fd: int | None = None) -> None:
        self.endpoint = endpoint
        self.limit = limit
        self.heartbeat_bytes = heartbeat_bytes
        self.conns: dict[int, _Conn] = {}
        #: Connections cut so far (for tests and the log).
        self.cuts = 0
        self._checking = threading.Lock()  # the owner's checks and the thread's
        self.port = _port(endpoint)
        self.events_fd = events_fd
        self._looked_at: dict[int, int] = {}  # fd -> inode of sockets ``discover`` saw
        self._discovered_at = -DISCOVER
        if watched:  # (else only ``check`` calls look: tests)
            _WATCHDOG.add(self)

    # -- the socket's owner ----------------------------------------------------------

    def accepted(self, fd: int) -> None:
        conn = self.conns.get(fd)
        if conn is not None and conn.found:  # ``discover`` was first: the same one?
            conn.found = False
            with contextlib.suppress(OSError):
                if os.fstat(fd).st_ino == conn.inode:
                    return
        self.conns[fd] = _Conn()

    def read(self, fd: int) -> None:
        conn = self.conns.get(fd)
        if conn is None:  # (its EVENT_ACCEPTED comes first; never trust that blindly)
            conn = self.conns[fd] = _Conn()
            conn.seen = 0
        conn.reads += 1

    def gone(self, fd: int) -> str:
        """Forget the connection of ``fd``: why it was cut ("" if it was not)."""
        conn = self.conns.pop(fd, None)
        return conn.cut if conn is not None else ""

    def close(self) -> None:
        _WATCHDOG.discard(self)
        self.conns.clear()

    # -- the watchdog thread ---------------------------------------------------------

    def check(self, now: float) -> None:
        """Cut every connection that owes a message for more bytes than it may (from
        the watchdog's thread, or the socket's owner while it waits: ``FINE``)."""
        with self._checking:
            self._check(now)

    def events_waiting(self) -> bool:
        """Are monitor events (a new connection, say) waiting to be read?"""
        fd = self.events_fd
        if fd is None:
            return False
        try:
            return bool(select.select([fd], [], [], 0)[0])
        except (OSError, ValueError):
            return False

    def discover(self, now: float) -> int:
        """Watch the TCP connections on the endpoint's port that the socket's owner
        has not told of yet (their EVENT_ACCEPTED unread): each counted from its first
        byte.  Looks at every file descriptor of the process (``/proc/self/fd``), and
        at each socket once; at most ``DISCOVER`` apart.  How many it found."""
        if self.port is None or now - self._discovered_at < DISCOVER:
            return 0
        self._discovered_at = now
        try:
            names = os.listdir("/proc/self/fd")
        except OSError:
            return 0
        found = 0
        looked_at, conns = self._looked_at, self.conns
        for name in names:
            fd = int(name)
            if fd in conns:
                continue
            try:
                st = os.fstat(fd)
            except OSError:
                continue
            if not stat.S_ISSOCK(st.st_mode) or looked_at.get(fd) == st.st_ino:
                continue
            looked_at[fd] = st.st_ino
            if _accepted_on(fd, self.port):
                conn = _Conn(found=True)
                conn.inode = st.st_ino
                conns.setdefault(fd, conn)
                found += 1
        return found

    def _check(self, now: float) -> None:
        for fd, conn in list(self.conns.items()):
            if conn.cut:
                continue
            got = bytes_received(fd)
            if got is None:
                continue  # closed: the socket's owner hears of it
            inode, received = got
            if conn.seen < 0:  # new: everything it sent so far counts
                conn.inode, conn.base, conn.since = inode, 0, now
                conn.seen = 0
            elif inode != conn.inode:
                if conn.inode:
                    continue  # the fd is another socket's now: its events are on the way
                conn.inode = inode  # (first seen by a read)
            reads = conn.reads
            if reads != conn.seen:
                # A message was read since the last look: it ended before now, so what
                # was received by now is no debt.
                conn.seen, conn.base, conn.since = reads, received, now
                continue
            owed = received - conn.base
            allowed = self.limit + int(self.heartbeat_bytes * (now - conn.since))
            if owed > allowed:
                # (The heartbeats' allowance is the docs' business: the limit is
                # what a bot can act on.)
                conn.cut = (f"sent {owed} bytes without ending a message, over the limit "
                            f"of {self.limit} a connection may send between two messages (a "
                            f"message in parts that never ends, or messages the referee "
                            f"did not ask for): its connection was closed")
                self.cuts += 1  # (before the peer can hear of it)
                if shut(fd, inode):
                    log.warning("closed a connection on %s: it %s", self.endpoint,
                                conn.cut.partition(": its connection")[0])
                else:
                    conn.cut = ""
                    self.cuts -= 1


class _Watchdog:
    """The thread checking every ``TcpWatch`` of the process, ``TICK`` apart, while
    there is one."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.watches: set[TcpWatch] = set()
        self.wake = threading.Event()
        self.thread: threading.Thread | None = None
        self.clock: Callable[[], float] = time.monotonic

    def add(self, watch: TcpWatch) -> None:
        if not AVAILABLE:
            return
        with self.lock:
            self.watches.add(watch)
            if self.thread is None or not self.thread.is_alive():
                self.wake = threading.Event()
                self.thread = threading.Thread(target=self._run, args=(self.wake,),
                                               name="referee-tcp-watchdog", daemon=True)
                self.thread.start()

    def discard(self, watch: TcpWatch) -> None:
        with self.lock:
            self.watches.discard(watch)
            if not self.watches:
                self.wake.set()  # the thread ends; the next watch starts another
                self.thread = None

    def _run(self, stop: threading.Event) -> None:
        while not stop.wait(TICK):
            with self.lock:
                watches = list(self.watches)
            now = self.clock()
            for watch in watches:
                with contextlib.suppress(Exception):  # a watch closed meanwhile
                    if watch.events_waiting():  # and nobody reads them: look
                        with watch._checking:
                            watch.discover(now)
                    watch.check(now)

    def _after_fork(self) -> None:
        # The child has no thread: it starts its own when it watches something.
        self.lock = threading.Lock()
        self.watches = set()
        self.thread = None
        self.wake = threading.Event()


_WATCHDOG = _Watchdog()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_WATCHDOG._after_fork)
