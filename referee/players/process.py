"""Bot processes: starting them fenced in, logging their stderr, ending their whole tree.

Owns: how a bot command is started (its own session and process group, an address
space limit, only its three pipes open, a working directory and environment), its
stderr (drained by a thread into a size-capped log; past the cap, only while the
referee waits for the bot's own decision: ``TurnGate``), how it is ended (SIGTERM
to every process of its tree, a short grace, SIGKILL) and the readable description
of how it died ("killed by signal 9 (SIGKILL)").

The sandbox (``referee.players.sandbox``: bubblewrap, and a cgroup for the limits of the
whole tree) is applied here, for every bot any part of the referee starts.  A
sandboxed bot is put in its cgroup while bubblewrap holds it (``_join_held``):
bwrap tells the pid of the sandbox's first process (``--info-fd``) and waits, its
namespaces and mounts made, before it starts the bot (``--block-fd``); the referee
writes that pid into the cgroup, then lets it go, so every process of the bot runs
in the cgroup.  (A ``/bin/sh -c 'echo $$ > cgroup.procs && exec bwrap ...'`` did the
same before bwrap started, and cost ~10 ms more a start: a process that has just
changed cgroups pays for it in the namespace and mount work bwrap then does.)
Without a memory cgroup, an address-space limit is set through ``/bin/sh -c 'ulimit
-v N && exec "$@"'`` rather than a ``preexec_fn``: the referee has threads (stderr
readers) and ``preexec_fn`` may deadlock in a forked child of a threaded process.

Finding the tree (``bot_tree``): every process whose session or process group is the
bot's (the bot is its session leader), plus every descendant of those by parent pid,
read from /proc.  A process that leaves the session (``setsid``) and is then orphaned
is re-parented to init and can no longer be found that way, so the tree is also
remembered while the bot lives (``remember_tree``: the players call it after each
game and before bye) and remembered processes are ended too (checked by start time,
so a reused pid is never hit).  What escapes both -- a process that leaves the
session and is orphaned between two snapshots -- is the one way out, documented in
protocol/PROTOCOL.md.

Every started bot is registered until it is ended; ``end_all`` ends whatever is
left.  A program's entry point calls ``install_exit_handlers`` so that it runs at
exit, also when terminated (SIGTERM and SIGHUP, if they still have their default
action, then raise SystemExit): this module installs no handler by itself.

Must not import: the protocol layer, the game engine, transports.
"""

from __future__ import annotations

import atexit
import codecs
import contextlib
import os
import re
import select
import shlex
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import IO

from ..errors import BotError
from ..text.quoting import printable
from .sandbox import (
    DEFAULT_MEMORY_MB,
    Cgroup,
    Sandbox,
    SandboxConfig,
    SandboxError,
    entry_options,
    explain,
    join_script,
)

__all__ = ["DEFAULT_MEMORY_MB", "DEFAULT_STDERR_CAP", "BotProcess", "BotStartError",
           "StderrLog", "TurnGate", "start_bot"]
DEFAULT_STDERR_CAP = 1 << 20
TAIL_BYTES = 2048


class BotStartError(BotError):
    """The bot command could not be started (not found, not executable, bad cwd), or a
    remote bot did not connect (``remote``: it is not ours to start)."""

    def __init__(self, message: str, *, remote: bool = False) -> None:
        super().__init__(message)
        self.remote = remote


class TurnGate:
    """When a bot's capped logs may be read: open while the referee waits for the
    bot's own decision (its own clock runs), closed between its turns.

    Reading a pipe costs the referee's CPU, outside the bot's cgroup and charged to
    nobody: a bot flooding its stderr while another seat is on the clock would make
    the referee drain gigabytes on that seat's time.  Below the cap a log is read
    whenever there is something (the cap bounds that); once a log is at its cap
    (``StderrLog``), its reader stops reading while the gate is closed, so that a
    flooding bot blocks in ``write`` -- costing nobody anything -- until its turn,
    when the draining happens on its own clock.

    Open when made (the start and the handshake are the bot's own time; a log no
    player gates behaves as an ungated one); the player closes it once the bot is
    running and between its decisions (``referee.players.external``).  ``open(final=
    True)`` (the bot is being ended) opens it for good.  A reader parked at a closed
    gate wakes on an eventfd, written only when a reader is parked: opening and
    closing an unparked gate costs a lock and a flag."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open = True
        self._final = False
        self._parked = 0
        self._signalled = False
        self._fd = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)

    @property
    def is_open(self) -> bool:
        return self._open

    def open(self, final: bool = False) -> None:
        """Let the readers read (the bot's turn, or its end: ``final``, for good)."""
        with self._lock:
            if final:
                self._final = True
            if self._open:
                return
            self._open = True
            if self._parked and not self._signalled:
                os.eventfd_write(self._fd, 1)
                self._signalled = True

    def close(self) -> None:
        """Readers at their cap stop reading (between the bot's turns)."""
        with self._lock:
            if self._final or not self._open:
                return
            self._open = False
            if self._signalled:
                with contextlib.suppress(BlockingIOError):
                    os.eventfd_read(self._fd)
                self._signalled = False

    def park(self) -> int | None:
        """For a reader at its cap: None if the gate is open (read on); else the
        reader is counted as parked and gets the fd that becomes readable when the
        gate opens (then ``unpark``)."""
        with self._lock:
            if self._open:
                return None
            self._parked += 1
            return self._fd

    def unpark(self) -> None:
        with self._lock:
            self._parked -= 1

    def __del__(self) -> None:
        # Closed only once nothing refers to the gate: a parked reader holds it, so
        # its fd is never closed (and its number reused) under a reader's poll.
        with contextlib.suppress(AttributeError, OSError):
            os.close(self._fd)


class StderrLog:
    """Drains a bot's stderr on a daemon thread.  Keeps the log *file* under ``cap``
    bytes across every start of the bot that appends to it (at the cap, a
    "[truncated]" line, then nothing more but a count of what was dropped), the last
    TAIL_BYTES in memory for crash reports, and passes each line (within the same
    cap) to ``on_line``.  ``mark`` writes a referee line (a game starts) into the log,
    between the bot's own lines; each start begins with one.  ``drain`` reads what
    the pipe holds there and then (before a crash is described).

    The file holds the bot's text as ``printable`` shows it (escaped as it is
    written: an escape sequence or a carriage return is written as ``\\x1b``,
    ``\\x0d``; invalid UTF-8 as ``\\xff``), so that ``cat``, ``tail -f`` or a
    pager show what the bot wrote and never obey it; the cap counts the bot's own
    bytes (an earlier start's, by the size it takes in the file: escaped, at least
    as many).  ``tail`` and ``on_line`` get the bytes as they came.

    ``gate``: once the log is at its cap, the pipe is read only while the gate is
    open (``TurnGate``: the bot's own turn, its end); while it is closed the reader
    is parked (``parked`` is set) and the bot blocks when the pipe is full.  A
    parked reader still sees the pipe's writers go (the bot ended): it reads what
    is left, at most a pipeful, and ends.  ``drain`` reads whatever the gate."""

    def __init__(self, fd: int, path: str | None, cap: int = DEFAULT_STDERR_CAP,
                 on_line: Callable[[str], None] | None = None, *,
                 started: str | None = None, gate: TurnGate | None = None) -> None:
        self.fd = fd
        self.gate = gate
        #: Set while the reader is parked at a closed gate (for tests and tools).
        self.parked = threading.Event()
        self._hup = False  # the pipe's writers are gone: read to the end, whatever the gate
        self.path = path
        self.cap = cap
        self.on_line = on_line
        self.kept = 0
        self.dropped = 0
        self.truncated = False
        self._tail = bytearray()
        self._lock = threading.Lock()
        self._decoder = codecs.getincrementaldecoder("utf-8")("backslashreplace")
        # Held while reading the pipe: by the thread, or by ``drain``.
        self._read_lock = threading.Lock()
        self._pending = b""
        self._eof = False
        os.set_blocking(fd, False)
        self._file: IO[bytes] | None = open(path, "ab") if path else None  # noqa: SIM115
        if self._file is not None:
            self.kept = os.fstat(self._file.fileno()).st_size  # earlier starts count
            if self.kept >= self.cap:
                self.truncated = True  # marked when it was reached
        if started:
            self.mark(started)
        self.thread = threading.Thread(target=self._run, name=f"stderr-{fd}", daemon=True)
        self.thread.start()

    def _keep(self, data: bytes) -> bytes:
        """Write what fits under the cap (caller holds ``_lock``); the rest is
        counted, and the first cut marked in the file.  Returns what was kept."""
        room = self.cap - self.kept
        keep, drop = data[:max(0, room)], data[max(0, room):]
        self.kept += len(keep)
        if drop:
            self.dropped += len(drop)
        if self._file is not None:
            if keep:
                self._file.write(self._shown(keep))
            if drop and not self.truncated:
                self._file.write(f"\n[referee: truncated: this log is capped at {self.cap} "
                                 f"bytes]\n".encode())
            if keep or drop:
                self._file.flush()
        if drop:
            self.truncated = True
        return keep

    def _shown(self, data: bytes, final: bool = False) -> bytes:
        text = self._decoder.decode(data, final)
        return printable(text, keep_tabs=True, keep_newlines=True).encode()

    def mark(self, text: str) -> None:
        """A referee line in the log: ``==== [referee 09:30:01.123] text ====``."""
        stamp = datetime.now().strftime("%H:%M:%S.%f")[:-3]
        with self._lock:
            if self._file is None or self.truncated:
                return
            self._keep(f"==== [referee {stamp}] {printable(text)} ====\n".encode())

    def _wait_gate(self) -> bool:
        """At the cap, with a gate: wait while it is closed.  False when the thread
        is to end (the pipe is broken), True to read on (the gate opened, or the
        pipe's writers are gone: ``_hup``)."""
        gate = self.gate
        assert gate is not None
        while True:
            wake = gate.park()
            if wake is None:
                return True
            self.parked.set()
            try:
                # POLLHUP is told even when not asked for: events 0 on the pipe
                # watches for its writers' end without waking for its data.
                poller = select.poll()
                poller.register(wake, select.POLLIN)
                poller.register(self.fd, 0)
                try:
                    ready = poller.poll()
                except InterruptedError:
                    continue
                except (OSError, ValueError):
                    return False
            finally:
                self.parked.clear()
                gate.unpark()
            for fd, events in ready:
                if fd == self.fd:
                    if events & (select.POLLNVAL | select.POLLERR):
                        return False
                    if events & select.POLLHUP:
                        self._hup = True
                        return True

    def _run(self) -> None:
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        try:
            while True:
                if self.truncated and self.gate is not None and not self._hup \
                        and not self._wait_gate():
                    break
                try:
                    poller.poll()
                except InterruptedError:
                    continue
                except (OSError, ValueError):
                    break
                with self._read_lock:
                    more, lines = self._read_some()
                for line in lines:
                    self._tell(line)
                if not more:
                    break
        finally:
            with self._read_lock:
                self._eof = True
                if self._pending and self.on_line:
                    self._tell(self._pending)
                self._pending = b""
                with self._lock:
                    if self._file:
                        self._file.write(self._shown(b"", final=True))
                        if self.dropped:
                            self._file.write(f"[referee: {self.dropped} more bytes of output "
                                             f"dropped in this start]\n".encode())
                        self._file.close()
                        self._file = None
                with contextlib.suppress(OSError):
                    os.close(self.fd)

    def _read_some(self) -> tuple[bool, list[bytes]]:
        """One read of what the pipe holds (the fd is non-blocking; the caller holds
        ``_read_lock``): (False at the end of the pipe, the whole lines to tell)."""
        lines: list[bytes] = []
        try:
            chunk = os.read(self.fd, 1 << 16)
        except (BlockingIOError, InterruptedError):
            return True, lines  # the other reader took it
        except OSError:
            return False, lines
        if not chunk:
            return False, lines
        with self._lock:
            self._tail += chunk
            del self._tail[:-TAIL_BYTES]
            keep = self._keep(chunk)
        if keep and self.on_line:
            lines = (self._pending + keep).split(b"\n")
            self._pending = lines.pop()
        return True, lines

    def drain(self, timeout: float = 1.0, limit: int = 1 << 20) -> None:
        """Read, here and now, what the pipe holds, so that ``tail`` has it: what a
        bot wrote just before it exited may still be in the pipe, the reader thread
        not having run yet (a loaded machine).  Bounded: at most ``limit`` bytes and
        ``timeout`` seconds, however much a bot's children go on writing."""
        deadline = time.monotonic() + timeout
        if not self._read_lock.acquire(timeout=timeout):
            return
        told: list[bytes] = []
        try:
            poller = select.poll()
            start = self.kept + self.dropped
            if not self._eof:
                poller.register(self.fd, select.POLLIN)
            while not self._eof and time.monotonic() < deadline and \
                    self.kept + self.dropped - start < limit:
                if not poller.poll(0):
                    break  # empty: everything written so far is in the tail
                more, lines = self._read_some()
                told += lines
                if not more:
                    break
        except (OSError, ValueError):
            pass
        finally:
            self._read_lock.release()
        for line in told:
            self._tell(line)

    def _tell(self, line: bytes) -> None:
        """Pass a line on; a failing callback is dropped rather than allowed to stop
        the draining (the bot would then block on a full stderr pipe)."""
        if self.on_line is None:
            return
        try:
            self.on_line(line.decode("utf-8", "replace"))
        except Exception:
            self.on_line = None

    def tail(self) -> str:
        with self._lock:
            return bytes(self._tail).decode("utf-8", "replace")

    def join(self, timeout: float) -> None:
        self.thread.join(timeout)


def describe_exit(returncode: int, *, ran: bool = False, oom_mb: int | None = None) -> str:
    """'exited with code 3', 'killed by signal 9 (SIGKILL)', with a guess at the cause
    where there is one.  ``ran``: the program is known to have run (it spoke), so code
    127 is its own, not the shell's "command not found".  ``oom_mb``: the kernel
    killed it for going over its cgroup's memory limit of that many MB."""
    if oom_mb is not None and returncode in (-signal.SIGKILL, 128 + signal.SIGKILL):
        return (f"killed by signal 9 (SIGKILL): out of memory under the {oom_mb} MB "
                f"limit of its sandbox")
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = "?"
        text = f"killed by signal {-returncode} ({name})"
        if returncode == -signal.SIGKILL:
            text += " -- the memory limit or an outside kill?"
        return text
    if returncode == 127 and not ran:
        return "exited with code 127 (command not found?)"
    return f"exited with code {returncode}"


#: What a program prints when an allocation fails (Python, Node/V8, C++, glibc, Java,
#: Go, Rust), and the signals a failed allocation usually ends in.
_OOM_WORDS = re.compile(r"MemoryError|\bOOM\b|out of memory|bad_alloc|Cannot allocate memory|"
                        r"allocation failed|OutOfMemoryError|memory allocation of",
                        re.IGNORECASE)
_OOM_SIGNALS = {signal.SIGKILL, signal.SIGTRAP, signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS}


def memory_hint(returncode: int, stderr_tail: str, memory_mb: int | None) -> str:
    """For a bot that died under a memory limit, looking like a failed allocation
    (its stderr says so, or a signal allocations end in): that the limit is the
    likely cause.  '' otherwise."""
    if not memory_mb or returncode == 0:
        return ""
    by_signal = returncode < 0 and -returncode in _OOM_SIGNALS
    if not (_OOM_WORDS.search(stderr_tail) or by_signal):
        return ""
    return (f" -- it ran under a memory limit of {memory_mb} MB (of address space, "
            f"which runtimes such as Node.js and the JVM reserve generously): the limit is "
            f"the likely cause; try a larger --memory-mb (memory_mb in a tournament)")


def _stat(pid: int) -> tuple[int, int, int, str, int] | None:
    """(ppid, pgrp, session, state, start time) of a process from /proc, None if it
    is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read().decode("ascii", "replace")
    except OSError:
        return None
    rest = data[data.rfind(")") + 2 :].split()  # the name may hold spaces and parens
    return int(rest[1]), int(rest[2]), int(rest[3]), rest[0], int(rest[19])


def _all_pids() -> list[int]:
    return [int(d) for d in os.listdir("/proc") if d.isdigit()]


_Table = dict[int, tuple[int, int, int, str, int]]
#: The last /proc table read, and when (``_proc_table``).
_TABLE: tuple[float, _Table] = (float("-inf"), {})
_TABLE_LOCK = threading.Lock()


def _proc_table(max_age: float = 0.0) -> _Table:
    """Every process's ``_stat``; with ``max_age``, the last table read if it is no
    older than that (one /proc scan serves the bots of many games in flight)."""
    global _TABLE
    now = time.monotonic()
    with _TABLE_LOCK:
        when, table = _TABLE
        if max_age > 0.0 and now - when <= max_age:
            return table
    table = {}
    for pid in _all_pids():
        st = _stat(pid)
        if st is not None:
            table[pid] = st
    with _TABLE_LOCK:
        _TABLE = (now, table)
    return table


def bot_tree(leader: int, leader_start: int | None = None, max_age: float = 0.0) -> set[int]:
    """Live processes of a bot started as the leader of its own session: its session
    and process group, and their descendants by parent pid (zombies left out).  With
    ``leader_start`` (the leader's start time): if the leader's pid now belongs to
    another process, the pid was reused after the whole session ended -- nothing is
    found, so nothing unrelated is ever signalled.  ``max_age``: a /proc table read
    that long ago will do (``remember_tree``)."""
    table = _proc_table(max_age)
    if leader_start is not None and leader in table and table[leader][4] != leader_start:
        return set()
    found = {pid for pid, (_, pgrp, sid, *_r) in table.items() if sid == leader or pgrp == leader}
    if leader in table:
        found.add(leader)
    children: dict[int, list[int]] = {}
    for pid, (ppid, *_rest) in table.items():
        children.setdefault(ppid, []).append(pid)
    stack = list(found)
    while stack:
        for c in children.get(stack.pop(), ()):
            if c not in found:
                found.add(c)
                stack.append(c)
    found.discard(os.getpid())
    return {p for p in found if table[p][3] != "Z"}


def alive(pid: int) -> bool:
    """Is ``pid`` a live process (not a zombie)?"""
    st = _stat(pid)
    return st is not None and st[3] != "Z"


_LIVE: dict[int, BotProcess] = {}
_LIVE_LOCK = threading.Lock()


class BotProcess:
    """A started bot: the referee's ends of its stdin/stdout (``stdin_fd``,
    ``stdout_fd``, owned by whoever builds a transport on them), a pidfd readable
    once it exits (``exit_fd``, Linux; else None), its stderr log and the gate of
    its capped logs (``gate``: the player opens it for the bot's turns)."""

    def __init__(self, popen: subprocess.Popen[bytes], stdin_fd: int, stdout_fd: int,
                 stderr: StderrLog, command: Sequence[str], *,
                 cgroup: Cgroup | None = None, sandboxed: bool = False,
                 sandbox_config: SandboxConfig | None = None) -> None:
        self.popen = popen
        #: The bot's cgroup (its limits, and every process of its tree), if any.
        self.cgroup = cgroup
        #: Started inside bubblewrap: its exit status is bwrap's, a signal N that
        #: killed the bot reads as 128 + N.
        self.sandboxed = sandboxed
        self.sandbox_config = sandbox_config
        self._oom: bool | None = None
        self.pid = popen.pid
        self.stdin_fd = stdin_fd
        self.stdout_fd = stdout_fd
        self.stderr = stderr
        self.gate = stderr.gate if stderr.gate is not None else TurnGate()
        #: A ZeroMQ bot's stdout, a log like its stderr (``launch_zmq_bot``).
        self.stdout_log: StderrLog | None = None
        self.command = list(command)
        st = _stat(popen.pid)
        self.start_time: int | None = st[4] if st is not None else None
        self.exit_fd: int | None = None
        if hasattr(os, "pidfd_open"):
            with contextlib.suppress(OSError):
                self.exit_fd = os.pidfd_open(popen.pid)
        self.ended = False
        self.memory_mb: int | None = None  # the address-space limit it runs under
        #: Processes seen in the bot's tree (pid -> start time), so that one which
        #: left the session and was orphaned since is still ended (``remember_tree``).
        self.known: dict[int, int] = {}
        self._remembered = -1e9

    @property
    def freezes(self) -> bool:
        """Can the bot be frozen between its turns (``freeze``)?  Only in a sandbox that
        freezes (``SandboxConfig.freeze_between_turns``), where a freezer is."""
        return self.cgroup is not None and self.cgroup.freezes

    def freeze(self, frozen: bool) -> None:
        """Freeze (``frozen``) or thaw every process of the bot, where it ``freezes``:
        a frozen bot takes no CPU, and writes nothing (so its logs need no reading)."""
        if self.cgroup is not None:
            self.cgroup.freeze(frozen)

    def wait_frozen(self, cpu_limit: float, wall_limit: float) -> float | None:
        """After ``freeze(True)``: wait until every process of the bot is frozen; None
        once it is, else the CPU seconds it used while waiting: it used more than
        ``cpu_limit``, or ``wall_limit`` seconds passed (``Cgroup.wait_frozen``).
        None where it does not freeze."""
        return None if self.cgroup is None else self.cgroup.wait_frozen(cpu_limit, wall_limit)

    def tree(self) -> set[int]:
        """The live processes of the bot's tree now: its cgroup's, when it has one
        (every process of the bot, wherever it went; no /proc scan, whose cost grows
        with every process on the machine -- hundreds of bots in flight), else
        ``bot_tree``'s."""
        if self.cgroup is not None:
            pids = self.cgroup.pids()
            if pids or self.popen.poll() is not None:
                return pids
        return bot_tree(self.pid, self.start_time)

    def _leader_reused(self) -> bool:
        st = _stat(self.pid)
        return st is not None and self.start_time is not None and st[4] != self.start_time

    def remember_tree(self, min_interval: float = 0.0) -> None:
        """Note the processes of the bot's tree now (call while the bot is alive, e.g.
        after each game and before bye): ``end`` will end them even if by then they
        have left its session and lost their parent.  A /proc scan costs a few ms:
        with ``min_interval``, skipped if the last one is more recent than that."""
        if self.cgroup is not None:
            # Every process of the bot is in its cgroup, whatever session or parent
            # it has: ``end`` ends them all there (``kill_all``), without a /proc scan
            # -- which costs more the more processes run (hundreds of bots in flight).
            return
        now = time.monotonic()
        if now - self._remembered < min_interval:
            return
        self._remembered = now
        for pid in bot_tree(self.pid, self.start_time, max_age=min_interval):
            st = _stat(pid)
            if st is not None:
                self.known[pid] = st[4]

    def _known_alive(self) -> set[int]:
        """Remembered processes still alive -- and still the same processes (a pid
        reused by another process has another start time)."""
        out = set()
        for pid, start in self.known.items():
            st = _stat(pid)
            if st is not None and st[3] != "Z" and st[4] == start:
                out.add(pid)
        return out

    @property
    def returncode(self) -> int | None:
        return self.popen.poll()

    def wait(self, timeout: float) -> int | None:
        """The exit status once the bot has exited, waiting at most ``timeout``."""
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def exit_description(self, wait: float = 0.0, *, ran: bool = False) -> str:
        """How the bot ended ('exited with code 3', 'killed by signal 9 (SIGKILL)'),
        with the tail of its stderr; 'still running' if it has not.  ``ran``: as in
        ``describe_exit``."""
        rc = self.wait(wait) if wait > 0 else self.returncode
        if rc is None:
            return "still running"
        if self.sandboxed and 128 < rc < 128 + 65:
            rc = 128 - rc  # bwrap's "the bot was killed by signal N"
        text = describe_exit(rc, ran=ran, oom_mb=self.cgroup.memory_mb
                             if self.out_of_memory() and self.cgroup else None)
        self.stderr.drain()  # its last words may still be in the pipe
        tail = self.stderr.tail().strip()
        if tail:
            last = tail.splitlines()[-3:]
            text += "; last stderr: " + " | ".join(line[-200:] for line in last)
            if self.sandboxed and self.sandbox_config is not None:
                hints = explain(tail.splitlines(), self.sandbox_config)
                if hints and not self.out_of_memory():
                    text += f" (in the sandbox, the bot {hints[0]})"
                    return text
        if self.out_of_memory():
            return text  # the cgroup says so; no guess needed
        return text + memory_hint(rc, tail, self.memory_mb)

    def out_of_memory(self) -> bool:
        """Did the kernel kill a process of the bot for going over its memory limit?"""
        if self._oom is None and self.cgroup is not None:
            oom = self.cgroup.oom_killed()
            if not oom and self.returncode is None:
                return False  # may still happen: ask again later
            self._oom = oom
        return bool(self._oom)

    def end(self, grace: float = 0.5) -> None:
        """End the bot's whole tree: SIGTERM to every process of it, up to ``grace``
        seconds for them to go, then SIGKILL to what is left; reap the bot.  Safe to
        call more than once."""
        if self.ended:
            return
        self.ended = True
        # Its logs are read to their end whatever the turn: a bot blocked writing
        # to a full pipe is ended all the same, but its last words are read.
        self.gate.open(final=True)
        self.freeze(False)  # a frozen bot would not see its SIGTERM
        try:
            tree = self.tree() | self._known_alive()
            group = None if self._leader_reused() else self.pid
            _signal_all(group, tree, signal.SIGTERM)
            self._wait_gone(tree, time.monotonic() + grace)
            for _ in range(3):  # children forked during the grace are found again
                left = {p for p in tree | self.tree() | self._known_alive()
                        if alive(p)}
                if not left:
                    break
                _signal_all(None if self._leader_reused() else self.pid, left,
                            signal.SIGKILL)
                tree = left
                self.popen.poll()
                time.sleep(0.005)
            if self.cgroup is not None:
                # Whatever is left in its cgroup (a process that left the session and
                # was orphaned, outside a PID namespace) ends too.
                self.out_of_memory()
                self.cgroup.kill_all()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(1.0)
        finally:
            if self.cgroup is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.popen.wait(1.0)
                self.cgroup.kill_all()
                self.cgroup.remove()
            if self.exit_fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self.exit_fd)
                self.exit_fd = None
            self.stderr.join(0.5)
            with _LIVE_LOCK:
                _LIVE.pop(self.pid, None)


    def _wait_gone(self, pids: set[int], deadline: float) -> None:
        """Until every process of ``pids`` and of the bot's tree has exited, or until
        ``deadline``: asleep on their pidfds, woken by each exit, the tree looked at
        again then (a child forked meanwhile is waited for too).  Without pidfds
        (not Linux) the processes are looked at every 10 ms."""
        fds: dict[int, int] = {}  # pid -> a pidfd we opened for it
        try:
            while True:
                self.popen.poll()  # reap the bot itself so that it counts as gone
                live = {p for p in pids | self.tree() if alive(p)}
                left = deadline - time.monotonic()
                if not live or left <= 0:
                    return
                watch = []
                for p in live:
                    if p == self.pid and self.exit_fd is not None:
                        watch.append(self.exit_fd)
                        continue
                    if p not in fds and hasattr(os, "pidfd_open"):
                        with contextlib.suppress(OSError):  # gone already
                            fds[p] = os.pidfd_open(p)
                    if p in fds:
                        watch.append(fds[p])
                if len(watch) < len(live):  # one we cannot wait on: look again soon
                    left = min(left, 0.01)
                poller = select.poll()
                for fd in watch:
                    poller.register(fd, select.POLLIN)
                poller.poll(max(1, round(left * 1000)))
        finally:
            for fd in fds.values():
                os.close(fd)


def _signal_all(group: int | None, pids: set[int], sig: int) -> None:
    if group is not None:
        with contextlib.suppress(OSError):
            os.killpg(group, sig)
    for p in pids:
        with contextlib.suppress(OSError):
            os.kill(p, sig)


#: Variables of the referee's own environment never passed on to a bot: the
#: protocol's (each launch sets its own) and the referee's keys.
_PRIVATE_ENV_PREFIX = "UPDOWN_"


def start_bot(
    command: Sequence[str],
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    memory_mb: int | None = DEFAULT_MEMORY_MB,
    stderr_path: str | None = None,
    stderr_cap: int = DEFAULT_STDERR_CAP,
    on_stderr: Callable[[str], None] | None = None,
    sandbox: Sandbox | None = None,
    writable: Sequence[str] = (),
    inherit_env: bool = True,
) -> BotProcess:
    """Start ``command`` in its own session with only its three pipes open.

    ``env``: the bot's variables (the protocol's, its configuration's).  Without a
    sandbox they are added to the referee's environment (``inherit_env``; the
    referee's own ``UPDOWN_*`` variables are never passed on); in a sandbox the bot
    gets them and nothing else of the referee's.  ``memory_mb`` caps its memory (the
    sandbox's cgroup for the whole tree when there is one; else an address-space
    limit per process; None or 0: no cap).  ``sandbox``: an active one starts the bot
    inside bubblewrap (``referee.players.sandbox``), with ``writable`` host folders it may
    write.  Raises BotStartError with a readable reason when the command cannot be
    run."""
    if not command:
        raise BotStartError("the bot command is empty")
    if cwd is not None and not os.path.isdir(cwd):
        raise BotStartError(f"the bot's working directory {cwd!r} does not exist")
    exe = command[0]
    bot_env = dict(env or {})
    path = bot_env.get("PATH") or os.environ.get("PATH", os.defpath)
    if os.sep in exe:
        full = exe if os.path.isabs(exe) else os.path.join(cwd or os.getcwd(), exe)
        if not os.path.isfile(full) or not os.access(full, os.X_OK):
            raise BotStartError(f"{exe!r} is not an executable file (from {cwd or os.getcwd()!r})")
    elif shutil.which(exe, path=path) is None:
        raise BotStartError(f"{exe!r} was not found on the PATH")
    cgroup: Cgroup | None = None
    pass_fds: list[int] = []
    held: tuple[int, int] | None = None  # (info fd, release fd): see _join_held
    sb = sandbox
    if sandbox is not None and sandbox.active:
        sb = sandbox.with_memory(memory_mb)
        try:
            prepared = sb.prepare(command, cwd=cwd, env=bot_env, writable=writable)
        except SandboxError as e:  # a league entry that cannot be put in its sandbox
            raise BotStartError(str(e)) from None
        cgroup = prepared.cgroup
        options = list(prepared.bwrap[1:])
        for dest, text in prepared.files.items():
            r, w = os.pipe()
            os.write(w, text.encode())  # a few bytes: never more than a pipe holds
            os.close(w)
            pass_fds.append(r)
            options += ["--perms", "0644", "--ro-bind-data", str(r), dest]
        if prepared.seccomp is not None:
            r, w = os.pipe()
            os.write(w, prepared.seccomp)  # ~1 KiB: never more than a pipe holds
            os.close(w)
            pass_fds.append(r)
            options += ["--seccomp", str(r)]
        if prepared.entry is not None:  # a league entry, copied in file by file
            try:
                more, fds = entry_options(prepared.entry)
            except OSError as e:
                for fd in pass_fds:
                    os.close(fd)
                if cgroup is not None:
                    cgroup.remove()
                raise BotStartError(f"cannot read the bot's files: {e.strerror}") from None
            options += more
            pass_fds += fds
        if cgroup is not None:
            more, fds, held = _hold_options()
            options += more
            pass_fds += fds
        options += prepared.finish
        # The options through a file in memory: bwrap's command line (the bot can read
        # its pid 1's) shows only "--args N".
        r = _options_fd(options)
        pass_fds.append(r)
        memory_kb = None if cgroup is not None and "memory" in cgroup.dirs else \
            (int(sb.config.memory_mb) * 1024 if memory_mb else None)
        # A new, empty session keyring of its own (prefix), then bwrap.
        argv = [*prepared.prefix, prepared.bwrap[0], "--args", str(r), "--",
                *prepared.command]
        procs: list[str] = []  # the cgroup is joined while bwrap holds it (_join_held)
        # bwrap starts with nothing of the referee's: no environment (its pid 1's
        # /proc/1/environ is readable inside), the root as its working directory.
        run_env: dict[str, str] | None = {}
        run_cwd: str | None = "/"
    else:
        argv = list(command)
        memory_kb = int(memory_mb) * 1024 if memory_mb else None
        procs = []
        if inherit_env:
            base = {k: v for k, v in os.environ.items() if not k.startswith(_PRIVATE_ENV_PREFIX)}
            run_env = {**base, **bot_env}
        else:
            run_env = bot_env
        run_cwd = cwd
    if memory_kb or procs:
        argv = ["/bin/sh", "-c", join_script(procs, memory_kb), "sh", *argv]
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        popen = subprocess.Popen(
            argv, stdin=in_r, stdout=out_w, stderr=err_w, cwd=run_cwd,
            env=run_env, close_fds=True, pass_fds=pass_fds,
            start_new_session=True,
        )
    except OSError as e:
        for fd in (in_r, in_w, out_r, out_w, err_r, err_w, *pass_fds, *(held or ())):
            os.close(fd)
        if cgroup is not None:
            cgroup.remove()
        raise BotStartError(f"cannot start {shlex.join(command)}: {e}") from None
    for fd in (in_r, out_w, err_w, *pass_fds):
        os.close(fd)
    if held is not None:
        assert cgroup is not None
        try:
            _join_held(popen, held, cgroup)
        except BotStartError:
            for fd in (in_w, out_r, err_r):
                os.close(fd)
            raise
    # Our ends must not leak into other bots started later (close_fds covers the
    # children, O_CLOEXEC is the default for os.pipe).
    log = StderrLog(err_r, stderr_path, stderr_cap, on_stderr, gate=TurnGate(),
                    started=f"bot started (pid {popen.pid}): {shlex.join(command)}")
    active = sandbox is not None and sandbox.active
    proc = BotProcess(popen, in_w, out_r, log, command, cgroup=cgroup, sandboxed=active,
                      sandbox_config=sb.config if active and sb is not None else None)
    # The address-space limit in force, if that is how memory is limited (for the
    # hint when a bot dies of it); a cgroup's limit is told by the kernel's OOM count.
    proc.memory_mb = memory_kb // 1024 if memory_kb else None
    with _LIVE_LOCK:
        _LIVE[proc.pid] = proc
    return proc


def _options_fd(options: Sequence[str]) -> int:
    """bwrap's options, NUL-separated, in a file in memory read from its start (a
    league entry's copy can make them more than a pipe holds)."""
    fd = os.memfd_create("bwrap-args", os.MFD_CLOEXEC)
    data = b"".join(o.encode() + b"\0" for o in options)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


_handlers_installed = False


#: How long bwrap may take to tell the pid of the sandbox it is making (``_join_held``).
HOLD_TIMEOUT = 30.0
_CHILD_PID = re.compile(rb'"child-pid":\s*(\d+)')


def _hold_options() -> tuple[list[str], list[int], tuple[int, int]]:
    """bwrap's options that make it tell the sandbox's pid and hold the sandbox
    before the bot starts (``_join_held``): (options, fds to pass to bwrap, (the
    referee's ends: the info to read, the release to write))."""
    info_r, info_w = os.pipe()
    release_r, release_w = os.pipe()
    return (["--info-fd", str(info_w), "--block-fd", str(release_r)], [info_w, release_r],
            (info_r, release_w))


def _join_held(popen: subprocess.Popen[bytes], held: tuple[int, int], cgroup: Cgroup,
               timeout: float = HOLD_TIMEOUT) -> None:
    """Put the sandbox bwrap holds into ``cgroup``, then let it start the bot.  bwrap
    writes the pid of the sandbox's first process (its pid 1 in there) on the info
    fd right after making it; that process waits on the release fd after its
    namespaces and mounts, before it starts the bot.  Never is a sandbox let go
    outside its cgroup (a closed release fd would let it go): when bwrap tells no
    pid, it failed before making one (it is killed, to be sure, and reports as any
    bot that exits at its start); when the sandbox's process is gone already, it
    failed making it (the same); when bwrap says nothing in ``timeout`` seconds or
    the cgroup cannot be joined, it is killed and BotStartError raised."""
    info, release = held
    try:
        data = b""
        deadline = time.monotonic() + timeout
        poller = select.poll()
        poller.register(info, select.POLLIN)
        while not data.rstrip().endswith(b"}"):  # the whole note: no pid cut short
            left = deadline - time.monotonic()
            if left <= 0 or not poller.poll(left * 1000):
                raise BotStartError(f"bubblewrap did not make the sandbox within "
                                    f"{timeout:.0f} s")
            chunk = os.read(info, 4096)
            if not chunk:
                break
            data += chunk
        m = _CHILD_PID.search(data)
        if m is None:
            _kill_group(popen)
            return
        pid = m.group(1).decode()
        for f in cgroup.procs_files:
            try:
                with open(f, "w", encoding="ascii") as fh:
                    fh.write(pid)
            except ProcessLookupError:
                _kill_group(popen)
                return
            except OSError as e:
                raise BotStartError(f"cannot put the bot in its cgroup ({f}): "
                                    f"{e.strerror}") from None
        os.write(release, b"1")
    except BaseException:
        _kill_group(popen)
        with contextlib.suppress(subprocess.TimeoutExpired):
            popen.wait(5.0)
        cgroup.kill_all()
        cgroup.remove()
        raise
    finally:
        os.close(info)
        os.close(release)


def _kill_group(popen: subprocess.Popen[bytes]) -> None:
    """SIGKILL to a bot's session (its process group: ``start_new_session``)."""
    with contextlib.suppress(OSError):
        os.killpg(popen.pid, signal.SIGKILL)


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def install_exit_handlers() -> None:
    """For a program's entry point (the ``referee`` command, a tournament worker):
    end every bot still running at exit (``end_all``), and make SIGTERM and SIGHUP
    exit through that, unless someone has set their own handler.  A library module
    installs no handler itself.  Idempotent; signals only from the main thread."""
    global _handlers_installed
    if _handlers_installed:
        return
    _handlers_installed = True
    atexit.register(end_all)
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is signal.SIG_DFL:
            signal.signal(sig, _terminated)


def live_bots() -> list[BotProcess]:
    with _LIVE_LOCK:
        return list(_LIVE.values())


def end_all(grace: float = 0.2) -> None:
    """End every bot still running (at exit, and after a tournament)."""
    for proc in live_bots():
        proc.end(grace)

