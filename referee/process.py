"""Bot processes: starting them fenced in, logging their stderr, ending their whole tree.

Owns: how a bot command is started (its own session and process group, an address
space limit, only its three pipes open, a working directory and environment), its
stderr (drained by a thread into a size-capped log so the bot never blocks on it),
how it is ended (SIGTERM to every process of its tree, a short grace, SIGKILL) and
the readable description of how it died ("killed by signal 9 (SIGKILL)").

The memory limit is set by ``/bin/sh -c 'ulimit -v N; exec "$@"'`` rather than a
``preexec_fn``: the referee has threads (stderr readers) and ``preexec_fn`` may
deadlock in a forked child of a threaded process.  The sh costs ~1 ms per start.

Finding the tree (``bot_tree``): every process whose session or process group is the
bot's (the bot is its session leader), plus every descendant of those by parent pid,
read from /proc.  A process that leaves the session (``setsid``) and is then orphaned
is re-parented to init and can no longer be found that way, so the tree is also
remembered while the bot lives (``remember_tree``: the players call it after each
game and before bye) and remembered processes are ended too (checked by start time,
so a reused pid is never hit).  What escapes both -- a process that leaves the
session and is orphaned between two snapshots -- is the one way out, documented in
protocol/PROTOCOL.md.

Every started bot is registered until it is ended; ``end_all`` (also run at exit)
ends whatever is left.  So that "at exit" includes being terminated: when the first
bot starts, SIGTERM and SIGHUP -- if they still have their default action, and we are
in the main thread -- are made to raise SystemExit, which runs the exit handlers.

Must not import: the protocol layer, the game engine, transports.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import IO

DEFAULT_MEMORY_MB = 1024
DEFAULT_STDERR_CAP = 1 << 20
TAIL_BYTES = 2048


class BotStartError(Exception):
    """The bot command could not be started (not found, not executable, bad cwd), or a
    remote bot did not connect (``remote``: it is not ours to start)."""

    def __init__(self, message: str, *, remote: bool = False) -> None:
        super().__init__(message)
        self.remote = remote


class StderrLog:
    """Drains a bot's stderr on a daemon thread.  Keeps at most ``cap`` bytes in the
    log file (then notes how much was dropped), the last TAIL_BYTES in memory for
    crash reports, and passes each line (within the same cap) to ``on_line``."""

    def __init__(self, fd: int, path: str | None, cap: int = DEFAULT_STDERR_CAP,
                 on_line: Callable[[str], None] | None = None) -> None:
        self.fd = fd
        self.path = path
        self.cap = cap
        self.on_line = on_line
        self.kept = 0
        self.dropped = 0
        self._tail = bytearray()
        self._lock = threading.Lock()
        self._file: IO[bytes] | None = open(path, "ab") if path else None  # noqa: SIM115
        self.thread = threading.Thread(target=self._run, name=f"stderr-{fd}", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        pending = b""
        try:
            while True:
                try:
                    chunk = os.read(self.fd, 1 << 16)
                except InterruptedError:
                    continue
                except OSError:
                    break
                if not chunk:
                    break
                with self._lock:
                    self._tail += chunk
                    del self._tail[:-TAIL_BYTES]
                room = self.cap - self.kept
                keep, drop = chunk[:max(0, room)], chunk[max(0, room):]
                self.kept += len(keep)
                self.dropped += len(drop)
                if keep:
                    if self._file:
                        self._file.write(keep)
                        self._file.flush()
                    if self.on_line:
                        lines = (pending + keep).split(b"\n")
                        pending = lines.pop()
                        for line in lines:
                            self._tell(line)
            if pending and self.on_line:
                self._tell(pending)
        finally:
            if self._file:
                if self.dropped:
                    self._file.write(f"\n[referee: {self.dropped} more bytes of stderr "
                                     f"dropped over the {self.cap}-byte cap]\n".encode())
                self._file.close()
            with contextlib.suppress(OSError):
                os.close(self.fd)

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


def describe_exit(returncode: int, *, ran: bool = False) -> str:
    """'exited with code 3', 'killed by signal 9 (SIGKILL)', with a guess at the cause
    where there is one.  ``ran``: the program is known to have run (it spoke), so code
    127 is its own, not the shell's "command not found"."""
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


def bot_tree(leader: int, leader_start: int | None = None) -> set[int]:
    """Live processes of a bot started as the leader of its own session: its session
    and process group, and their descendants by parent pid (zombies left out).  With
    ``leader_start`` (the leader's start time): if the leader's pid now belongs to
    another process, the pid was reused after the whole session ended -- nothing is
    found, so nothing unrelated is ever signalled."""
    table: dict[int, tuple[int, int, int, str, int]] = {}
    for pid in _all_pids():
        st = _stat(pid)
        if st is not None:
            table[pid] = st
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
    once it exits (``exit_fd``, Linux; else None) and its stderr log."""

    def __init__(self, popen: subprocess.Popen[bytes], stdin_fd: int, stdout_fd: int,
                 stderr: StderrLog, command: Sequence[str]) -> None:
        self.popen = popen
        self.pid = popen.pid
        self.stdin_fd = stdin_fd
        self.stdout_fd = stdout_fd
        self.stderr = stderr
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

    def tree(self) -> set[int]:
        """The live processes of the bot's tree now (``bot_tree``)."""
        return bot_tree(self.pid, self.start_time)

    def _leader_reused(self) -> bool:
        st = _stat(self.pid)
        return st is not None and self.start_time is not None and st[4] != self.start_time

    def remember_tree(self, min_interval: float = 0.0) -> None:
        """Note the processes of the bot's tree now (call while the bot is alive, e.g.
        after each game and before bye): ``end`` will end them even if by then they
        have left its session and lost their parent.  A /proc scan costs a few ms:
        with ``min_interval``, skipped if the last one is more recent than that."""
        now = time.monotonic()
        if now - self._remembered < min_interval:
            return
        self._remembered = now
        for pid in self.tree():
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
        text = describe_exit(rc, ran=ran)
        tail = self.stderr.tail().strip()
        if tail:
            last = tail.splitlines()[-3:]
            text += "; last stderr: " + " | ".join(line[-200:] for line in last)
        return text + memory_hint(rc, tail, self.memory_mb)

    def end(self, grace: float = 0.5) -> None:
        """End the bot's whole tree: SIGTERM to every process of it, up to ``grace``
        seconds for them to go, then SIGKILL to what is left; reap the bot.  Safe to
        call more than once."""
        if self.ended:
            return
        self.ended = True
        try:
            tree = self.tree() | self._known_alive()
            group = None if self._leader_reused() else self.pid
            _signal_all(group, tree, signal.SIGTERM)
            deadline = time.monotonic() + grace
            while time.monotonic() < deadline:
                self.popen.poll()  # reap the bot itself so that it counts as gone
                if not any(alive(p) for p in tree | self.tree()):
                    break
                time.sleep(0.01)
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
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(1.0)
        finally:
            if self.exit_fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self.exit_fd)
                self.exit_fd = None
            self.stderr.join(0.5)
            with _LIVE_LOCK:
                _LIVE.pop(self.pid, None)


def _signal_all(group: int | None, pids: set[int], sig: int) -> None:
    if group is not None:
        with contextlib.suppress(OSError):
            os.killpg(group, sig)
    for p in pids:
        with contextlib.suppress(OSError):
            os.kill(p, sig)


def start_bot(
    command: Sequence[str],
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    memory_mb: int | None = DEFAULT_MEMORY_MB,
    stderr_path: str | None = None,
    stderr_cap: int = DEFAULT_STDERR_CAP,
    on_stderr: Callable[[str], None] | None = None,
) -> BotProcess:
    """Start ``command`` in its own session with only its three pipes open.  ``env``
    replaces the environment when given (``None``: the referee's).  ``memory_mb``
    caps its address space (None or 0: no cap).  Raises BotStartError with a readable
    reason when the command cannot be run."""
    if not command:
        raise BotStartError("the bot command is empty")
    if cwd is not None and not os.path.isdir(cwd):
        raise BotStartError(f"the bot's working directory {cwd!r} does not exist")
    exe = command[0]
    path = (env or os.environ).get("PATH", os.defpath)
    if os.sep in exe:
        full = exe if os.path.isabs(exe) else os.path.join(cwd or os.getcwd(), exe)
        if not os.path.isfile(full) or not os.access(full, os.X_OK):
            raise BotStartError(f"{exe!r} is not an executable file (from {cwd or os.getcwd()!r})")
    elif shutil.which(exe, path=path) is None:
        raise BotStartError(f"{exe!r} was not found on the PATH")
    argv = list(command)
    if memory_mb:
        argv = ["/bin/sh", "-c", f"ulimit -v {int(memory_mb) * 1024} && exec \"$@\"", "sh", *argv]
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        popen = subprocess.Popen(
            argv, stdin=in_r, stdout=out_w, stderr=err_w, cwd=cwd,
            env=dict(env) if env is not None else None, close_fds=True,
            start_new_session=True,
        )
    except OSError as e:
        for fd in (in_r, in_w, out_r, out_w, err_r, err_w):
            os.close(fd)
        raise BotStartError(f"cannot start {shlex.join(command)}: {e}") from None
    for fd in (in_r, out_w, err_w):
        os.close(fd)
    # Our ends must not leak into other bots started later (close_fds covers the
    # children, O_CLOEXEC is the default for os.pipe).
    log = StderrLog(err_r, stderr_path, stderr_cap, on_stderr)
    proc = BotProcess(popen, in_w, out_r, log, command)
    proc.memory_mb = memory_mb or None
    with _LIVE_LOCK:
        _LIVE[proc.pid] = proc
    _exit_on_termination()
    return proc


_handlers_installed = False


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _exit_on_termination() -> None:
    """Make SIGTERM and SIGHUP exit through the exit handlers (``end_all``), unless
    someone has set their own handler.  Only possible from the main thread."""
    global _handlers_installed
    if _handlers_installed or threading.current_thread() is not threading.main_thread():
        return
    _handlers_installed = True
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


atexit.register(end_all)
