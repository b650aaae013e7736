"""The sandbox every launched bot runs in: bubblewrap for what it sees, cgroups for
what it may use.

Owns: the sandbox settings (``SandboxConfig``: mode, limits, extra read-only paths),
finding out what this machine allows (``probe``: is ``bwrap`` installed and does it
start; which cgroup controllers we may write), the sandbox in force for a run
(``Sandbox``: which limits hold and how, the warnings naming those that do not), and
turning a bot command into the command that starts it inside (``Sandbox.prepare``).

The view is built by *listing what a bot may see*, as an observation is built from
what a seat may know (../shared/STYLE.md): nothing is visible unless a bind below
names it.

* read-only: ``/usr`` (and the ``/bin``, ``/lib``... links or folders into it), a
  short list of ``/etc`` files programs need (the loader's cache, certificates,
  alternatives, the Java, Perl and Python configuration; ``passwd``, ``group`` and
  ``hosts`` are written afresh), the interpreter the command names when it lives
  outside ``/usr`` (a pyenv, conda or nvm install, a virtual environment: the folder
  above its ``bin``), the configuration's ``interpreters`` and ``read_only`` paths,
  and the bot's own folder at ``BOT_DIR`` (its working directory): bound from its
  folder, except a league's entry, whose host path must show nowhere (the kernel
  names a bind mount's source in /proc/self/mountinfo): copied in at each start
  when small (``entry_tree``), else bound from a copy staged once per process at
  a neutral path (``stage_entry``);
* the bot's folder is decided by whoever runs it, never by what its command names
  (``command_view``): the folder of the program or script it runs, else its working
  directory (a league's entry: always its working directory).  No other argument, no
  ``#!`` line and no symbolic link widens it; a league checks its commands when they
  are submitted (``check_fence``);
* writable: a size-capped tmpfs at ``/tmp`` (``HOME`` is ``/tmp/home``; ``/dev/shm``
  links into it); the rest, ``/dev`` included, is read-only;
* new ``/proc`` (its own processes only) and a ``/dev`` of a few devices;
* its own user, PID, mount, IPC, UTS, cgroup and network namespaces (loopback only),
  no further user namespaces, no new privileges, a new session (no TIOCSTI), killed
  with the referee (``--die-with-parent``).  Paths the referee must hide that lie
  inside a visible folder (a tournament's output folder under a bot's folder) are
  covered by an empty tmpfs;
* a seccomp filter (``seccomp_filter``: built once per process with libseccomp,
  through pyseccomp), denying what Flatpak denies (keyrings, io_uring, bpf, ptrace,
  mounts, namespaces...; ``/proc/keys`` covered); where it cannot be applied, a new
  empty session keyring per bot (``_keyring_prefix``).  bwrap itself starts with an
  empty environment.

Limits for the bot's whole process tree come from a cgroup made for each start:
memory (including its scratch, which is memory), number of processes, and the CPUs
(``cpuset``: the launching worker's CPU, which the bot cannot widen).  Where a
controller cannot be written here, the limit falls back to what a process can do
alone (an address-space limit per process for memory; the inherited affinity for
CPUs, which a bot could widen) or is not enforced, and ``Sandbox.warnings`` names it.
Nothing is skipped silently.

Must not import: the rest of the referee (process.py imports this module).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import errno
import fcntl
import functools
import glob
import os
import platform
import re
import secrets
import select
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import ExecutionError, UsageError


@functools.lru_cache(maxsize=1)
def _pyseccomp() -> tuple[Any, str | None]:
    """The kernel fence's library: libseccomp (Debian's libseccomp2) through its ctypes
    binding, pyseccomp; or None and why it cannot be loaded.  Imported when the first
    filter is built, not with this module: every ``referee`` start loads this module
    (``process.py``), and importing pyseccomp looks libc and libseccomp up with
    ``ctypes.util.find_library``, which runs ``ldconfig -p`` twice (two processes at
    each start, also of ``referee --version`` and of every worker)."""
    try:
        import pyseccomp
    except (ImportError, RuntimeError, OSError) as e:  # RuntimeError: no libseccomp
        return None, (f"libseccomp cannot be loaded ({e}; Debian/Ubuntu: apt-get "
                      f"install libseccomp2, and pip install pyseccomp)")
    return pyseccomp, None


MODES = ("auto", "on", "off")

DEFAULT_MEMORY_MB = 1024
DEFAULT_PROCESSES = 128
DEFAULT_SCRATCH_MB = 64

#: The folders of the host system a bot sees, read-only (merged-/usr systems have
#: links for the others; each is bound or linked as the host has it).
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")

#: What of /etc is visible (read-only, where it exists): what the loader, TLS,
#: Debian's alternatives and the usual interpreters need -- no more.
ETC_PATHS = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives",
             "/etc/ssl", "/etc/ca-certificates", "/etc/localtime", "/etc/timezone",
             "/etc/nsswitch.conf", "/etc/mime.types", "/etc/locale.alias", "/etc/perl",
             "/etc/java-*", "/etc/python3*", "/etc/gai.conf", "/etc/host.conf")

#: The environment of a sandboxed bot before the protocol's and its configuration's
#: variables: nothing of the referee's.
BASE_ENV = {"HOME": "/tmp/home", "TMPDIR": "/tmp", "LANG": "C.UTF-8", "USER": "bot",
            "LOGNAME": "bot"}
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"

#: Inside the sandbox the bot is this user (the host sees the referee's own user).
SANDBOX_UID = 1000

_PASSWD = f"bot:x:{SANDBOX_UID}:{SANDBOX_UID}:bot:/tmp/home:/bin/sh\n"
_GROUP = f"bot:x:{SANDBOX_UID}:\n"
_HOSTS = "127.0.0.1 localhost sandbox\n::1 localhost\n"

#: Where a bot's folder appears inside the sandbox (its working directory): a
#: neutral path, so that no host path shows in its mounts or command line.
BOT_DIR = "/bot"

#: A league entry is never bind-mounted from its host folder (the kernel names a
#: bind mount's source path in /proc/self/mountinfo).  A small one is copied at each
#: start into a tmpfs of its own at ``BOT_DIR`` (bwrap ``--file FD``, then read-only:
#: ``entry_tree``), up to these sizes; a larger one is copied once per process to a
#: folder of a neutral name on a tmpfs and bound from there (``stage_entry``), or,
#: where no tmpfs has room, copied at each start up to ``FALLBACK_MAX_ITEMS`` (bwrap
#: takes at most 9,000 arguments) and ``FALLBACK_MAX_BYTES``.
COPY_MAX_ITEMS = 16
COPY_MAX_BYTES = 1 << 20
FALLBACK_MAX_ITEMS = 1500
FALLBACK_MAX_BYTES = 256 << 20


class SandboxError(ExecutionError):
    """The sandbox cannot be had (``mode = "on"``), or its settings are wrong: one
    readable line naming what is missing and how to fix it."""


@dataclass(frozen=True)
class SandboxConfig:
    """The sandbox settings of a run (``--sandbox``, ``[sandbox]``).  ``memory_mb``,
    ``processes`` and ``scratch_mb`` hold for each bot's whole process tree;
    ``read_only`` are more host paths a bot may read (a model file, a library);
    ``interpreters``: interpreters outside /usr a league allows its bots' commands to
    name (a folder, such as a PyPy or a virtual environment, or a file), visible
    read-only; ``entry_fence``: a bot's folder is its working directory (a league's
    entry), whatever its command names; ``freeze_between_turns``: a bot's processes
    are frozen (its cgroup's freezer) except while it is asked for a decision and
    between games, so that it cannot take CPU on another seat's turn (None: the
    default of where it runs: on in leagues, off elsewhere, ``FREEZE_DEFAULT``)."""

    mode: str = "auto"
    memory_mb: int = DEFAULT_MEMORY_MB
    processes: int = DEFAULT_PROCESSES
    scratch_mb: int = DEFAULT_SCRATCH_MB
    read_only: tuple[str, ...] = ()
    interpreters: tuple[str, ...] = ()
    entry_fence: bool = False
    freeze_between_turns: bool | None = None

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise SandboxError(f"the sandbox mode must be one of {', '.join(MODES)}, "
                               f"not {self.mode!r}")
        for name in ("memory_mb", "processes", "scratch_mb"):
            if getattr(self, name) < 1:
                raise SandboxError(f"sandbox {name} must be at least 1, not "
                                   f"{getattr(self, name)}")

    def to_dict(self) -> dict[str, Any]:
        """The sandbox's settings as JSON: the one writer of what a tournament's,
        match's and league's store keeps (read back by ``tournament.kinds.read_sandbox``)."""
        d: dict[str, Any] = {"mode": self.mode, "memory_mb": self.memory_mb,
                             "processes": self.processes, "scratch_mb": self.scratch_mb,
                             "read_only": list(self.read_only)}
        if self.interpreters:  # only when set: earlier records compare equal
            d["interpreters"] = list(self.interpreters)
        if self.freeze_between_turns is not None:  # likewise
            d["freeze_between_turns"] = self.freeze_between_turns
        return d

    def freezes(self, default: bool = False) -> bool:
        """Are bots frozen between their turns: the setting, else ``default``."""
        return default if self.freeze_between_turns is None else self.freeze_between_turns


# --- what this machine allows --------------------------------------------------------------


@dataclass(frozen=True)
class Machine:
    """What ``probe`` found: the bwrap binary and whether it starts a sandbox (else
    ``problem``, with the fix), and per controller the cgroup folder we may make
    children in (``None``: not writable here, and why in ``cgroup_problems``)."""

    bwrap: str | None
    problem: str | None
    cgroups: Mapping[str, tuple[str, str]]  # controller -> (version "1"|"2", parent dir)
    cgroup_problems: Mapping[str, str]
    #: Why bwrap cannot load the seccomp filter here (None: it can).
    seccomp_problem: str | None = None
    #: The command that starts bwrap in a new session keyring (empty: none), and
    #: why there is none where there should be.
    keyring: tuple[str, ...] = ()
    keyring_problem: str | None = None
    #: Where a bot start's freezer cgroup is made: (version, parent folder), or None
    #: and why (``freezer_problem``).  Only made for a sandbox that freezes.
    freezer: tuple[str, str] | None = None
    freezer_problem: str | None = None


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return None


def _bwrap_problem(bwrap: str | None) -> str | None:
    """Why bubblewrap cannot start a sandbox here, with the fix; None if it can."""
    if bwrap is None:
        return ("bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap; "
                "Fedora: dnf install bubblewrap)")
    try:
        done = subprocess.run([bwrap, "--unshare-all", "--unshare-user", "--die-with-parent",
                               "--ro-bind", "/", "/", "true"],
                              capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bubblewrap ({bwrap}) does not start: {e}"
    if done.returncode == 0:
        return None
    err = done.stderr.decode("utf-8", "replace").strip().splitlines()
    last = err[-1] if err else f"exit code {done.returncode}"
    if _read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1":
        return (f"bubblewrap cannot create a user namespace ({last}): Ubuntu's AppArmor "
                f"restricts unprivileged user namespaces; allow them for bwrap with an "
                f"AppArmor profile (see the README, 'Running bots you did not write'), or "
                f"sysctl kernel.apparmor_restrict_unprivileged_userns=0")
    if _read("/proc/sys/kernel/unprivileged_userns_clone") == "0" or \
            _read("/proc/sys/user/max_user_namespaces") == "0":
        return (f"bubblewrap cannot create a user namespace ({last}): unprivileged user "
                f"namespaces are disabled; enable them with sysctl "
                f"kernel.unprivileged_userns_clone=1 (and user.max_user_namespaces=10000)")
    return f"bubblewrap ({bwrap}) fails to start a sandbox: {last}"


#: The cgroup controllers a bot start gets a cgroup of its own in.  ``cpu``: its
#: processes share one scheduling weight, the same as every other bot's, so a bot
#: that forks busy loops (each in a session of its own, which the kernel's
#: autogroups would each weigh as much as the opponent) takes no more than its
#: seat's share of the CPU while the opponent thinks.
CONTROLLERS = ("memory", "pids", "cpuset", "cpu")

#: In leagues a bot is frozen between its turns unless the league says otherwise;
#: elsewhere only when asked (``--freeze-between-turns``): freezing and thawing
#: cost the referee per decision more than the sandbox's per-decision target allows
#: (bench/protocol.py --freeze, cgroup v2: +9-14 us of the referee's CPU, +28 %, and
#: +23-34 % wall per decision against trivial bots; the target is +5 %).
FREEZE_DEFAULT = False


#: Files of the kernel's, not the bot's, that its /proc would show: each covered with
#: an empty file (as container runtimes mask them).  /proc/keys and key-users list
#: every key its user may view -- the referee's included, since the bot runs as the
#: referee's user on the host; the others tell of the host (its kernel command line,
#: boot id, configuration, timers, memory layout and kernel symbols), and a bot of a
#: referee started as root reads even the root-only ones (its user namespace maps it
#: to their owner).
MASKED_PROC = ("/proc/keys", "/proc/key-users", "/proc/cmdline", "/proc/config.gz",
               "/proc/sys/kernel/random/boot_id", "/proc/timer_list", "/proc/timer_stats",
               "/proc/sched_debug", "/proc/latency_stats", "/proc/kallsyms", "/proc/kcore",
               "/proc/vmallocinfo", "/proc/slabinfo", "/proc/iomem", "/proc/ioports",
               "/proc/modules")


def _cgroup_mounts() -> tuple[dict[str, str], str | None]:
    """Mount points of the cgroup v1 controllers, and of the cgroup v2 hierarchy."""
    v1: dict[str, str] = {}
    v2: str | None = None
    text = _read("/proc/self/mounts") or ""
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 4:
            continue
        where, fstype, opts = parts[1], parts[2], parts[3].split(",")
        if fstype == "cgroup2" and v2 is None:
            v2 = where
        elif fstype == "cgroup":
            for c in (*CONTROLLERS, "freezer"):
                if c in opts:
                    v1[c] = where
    return v1, v2


def _own_cgroups() -> tuple[dict[str, str], str | None]:
    """This process's cgroup per v1 controller, and its v2 cgroup."""
    v1: dict[str, str] = {}
    v2: str | None = None
    for line in (_read("/proc/self/cgroup") or "").splitlines():
        num, _, rest = line.partition(":")
        ctrls, _, path = rest.partition(":")
        if num == "0" and ctrls == "":
            v2 = path
        for c in ctrls.split(","):
            v1[c] = path
    return v1, v2


def _writable_dir(path: str) -> bool:
    return os.path.isdir(path) and os.access(path, os.W_OK | os.X_OK)


def _find_cgroups() -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    mounts, v2_mount = _cgroup_mounts()
    own, v2_own = _own_cgroups()
    found: dict[str, tuple[str, str]] = {}
    problems: dict[str, str] = {}
    v2_dir = os.path.join(v2_mount, (v2_own or "/").lstrip("/")) if v2_mount else None
    v2_ctrls = set((_read(os.path.join(v2_dir, "cgroup.subtree_control")) or "").split()) \
        if v2_dir else set()
    for c in CONTROLLERS:
        if c in mounts:
            d = os.path.join(mounts[c], own.get(c, "/").lstrip("/"))
            if _writable_dir(d):
                found[c] = ("1", d)
                continue
            problems[c] = f"the {c} cgroup {d} is not writable by this user"
        elif v2_dir is not None:
            if c in v2_ctrls and _writable_dir(v2_dir):
                found[c] = ("2", v2_dir)
                continue
            problems[c] = (f"the {c} controller is not delegated to this user's cgroup "
                           f"{v2_dir} (systemd: run the referee with systemd-run --user "
                           f"--scope -p Delegate=yes)")
        else:
            problems[c] = "no cgroup file system is mounted"
    return found, problems


#: A bot start's cgroup: a random name.  The bot sees it (bwrap's cgroup namespace is
#: made before the bot joins, so /proc/self/cgroup names it below the referee's), so
#: it must say nothing: a referee's pid and a count of starts told a bot how much
#: other authors' bots were playing.  Names of older referees: ``updown-PID-N``.
_NAME = re.compile(r"updown-[0-9a-f]{16}")
_OLD_NAME = re.compile(r"updown-(\d+)-\d+")
#: An empty cgroup this old is a leftover (a referee joins its bot within
#: milliseconds of making it, and removes it when the bot is gone).
STALE_SECONDS = 600.0


def cgroup_name() -> str:
    return f"updown-{secrets.token_hex(8)}"


def _sweep(parents: Mapping[str, tuple[str, str]], now: float | None = None) -> None:
    """Remove the empty cgroups that referees left (one killed by SIGKILL could not
    remove its own; the kernel ended their processes with the bots): ours by name,
    empty, and made more than STALE_SECONDS ago (an older referee's: its pid gone).
    Removing one a live referee has not removed yet does no harm (it is empty; its
    own removal then finds nothing)."""
    now = time.time() if now is None else now
    for _, parent in set(parents.values()):
        with contextlib.suppress(OSError):
            for entry in os.listdir(parent):
                d = os.path.join(parent, entry)
                old = _OLD_NAME.fullmatch(entry)
                if old:
                    stale = not os.path.exists(f"/proc/{old.group(1)}")
                elif _NAME.fullmatch(entry):
                    stale = False
                    with contextlib.suppress(OSError):
                        stale = (now - os.stat(d).st_mtime > STALE_SECONDS and
                                 not (_read(os.path.join(d, "cgroup.procs")) or "").split())
                else:
                    continue
                if stale:
                    with contextlib.suppress(OSError):
                        os.rmdir(d)


def _cgroup_freeze_supported(v2_dir: str) -> bool:
    """Does this kernel's cgroup v2 have ``cgroup.freeze`` (Linux 5.2)?  The root
    cgroup has no such file; a child of it has."""
    if os.path.exists(os.path.join(v2_dir, "cgroup.freeze")):
        return True
    nums = re.match(r"(\d+)\.(\d+)", platform.release())
    return nums is not None and (int(nums.group(1)), int(nums.group(2))) >= (5, 2)


def _find_freezer() -> tuple[tuple[str, str] | None, str | None]:
    """Where to make a bot's freezer cgroup: cgroup v2's ``cgroup.freeze`` where the
    referee's v2 cgroup is writable (the cheaper: ~5 us of the referee's CPU for a
    thaw and a freeze, against ~170 us with v1's ``freezer.state``), else the v1
    freezer hierarchy; or None and why."""
    mounts, v2_mount = _cgroup_mounts()
    own, v2_own = _own_cgroups()
    if v2_mount is not None:
        v2_dir = os.path.join(v2_mount, (v2_own or "/").lstrip("/"))
        if _writable_dir(v2_dir) and _cgroup_freeze_supported(v2_dir):
            return ("2", v2_dir), None
    if "freezer" in mounts:
        d = os.path.join(mounts["freezer"], own.get("freezer", "/").lstrip("/"))
        if _writable_dir(d):
            return ("1", d), None
        return None, f"the freezer cgroup {d} is not writable by this user"
    if v2_mount is not None:
        return None, ("this user's cgroup v2 folder is not writable, or the kernel has no "
                      "cgroup.freeze (Linux 5.2) (systemd: run the referee with "
                      "systemd-run --user --scope -p Delegate=yes)")
    return None, "no cgroup file system is mounted"


@functools.lru_cache(maxsize=1)
def probe() -> Machine:
    """What this machine allows (probed once per process: a bwrap start, ~5 ms)."""
    bwrap = shutil.which("bwrap")
    cgroups, problems = _find_cgroups()
    freezer, freezer_problem = _find_freezer()
    _sweep({**cgroups, **({"freezer": freezer} if freezer else {})})
    problem = _bwrap_problem(bwrap)
    if problem is not None or bwrap is None:
        return Machine(bwrap, problem, cgroups, problems, freezer=freezer,
                       freezer_problem=freezer_problem)
    keyring, keyring_problem = _keyring_prefix(bwrap)
    return Machine(bwrap, problem, cgroups, problems, _seccomp_problem(bwrap), keyring,
                   keyring_problem, freezer, freezer_problem)


def _seccomp_problem(bwrap: str) -> str | None:
    """Why bwrap cannot start a program under the seccomp filter here; None if it can."""
    program, problem = seccomp_filter()
    if program is None:
        return problem
    r, w = os.pipe()
    try:
        os.write(w, program)
        os.close(w)
        done = subprocess.run([bwrap, "--unshare-all", "--unshare-user", "--die-with-parent",
                               "--ro-bind", "/", "/", "--seccomp", str(r), "true"],
                              capture_output=True, timeout=10, stdin=subprocess.DEVNULL,
                              pass_fds=[r])
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"bubblewrap cannot load a seccomp filter: {e}"
    finally:
        os.close(r)
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"bubblewrap cannot load a seccomp filter: {err[-1] if err else done.returncode}"
    return None


# --- the kernel fence ------------------------------------------------------------------------

#: System calls no bot makes, denied (EPERM) as Flatpak denies them to its sandboxes:
#: the kernel keyrings (shared with the referee's session otherwise), kernel modules,
#: mounts, namespaces, tracing, BPF, userfaultfd, accounting and the NUMA calls.
DENIED_SYSCALLS = (
    "add_key", "keyctl", "request_key",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "mount", "umount", "umount2", "pivot_root", "chroot", "unshare", "setns",
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "perf_event_open", "bpf",
    "userfaultfd", "syslog", "uselib", "acct", "quotactl", "modify_ldt", "swapon",
    "swapoff", "reboot", "move_pages", "mbind", "get_mempolicy", "set_mempolicy",
    "migrate_pages", "name_to_handle_at", "open_by_handle_at", "fanotify_init",
)
#: Denied with ENOSYS, so that a runtime falls back to what it did before they
#: existed (clone3 to clone, whose flags the filter can read; io_uring to read/write).
UNSUPPORTED_SYSCALLS = (
    "clone3", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
)
#: Socket families a bot may open (the rest: EAFNOSUPPORT): Unix sockets (ZeroMQ's
#: ipc), IP (its loopback), netlink (what libc asks about interfaces).
SOCKET_FAMILIES = (1, 2, 10, 16)  # AF_UNIX, AF_INET, AF_INET6, AF_NETLINK
_AF_MAX = 46
_CLONE_NEWUSER = 0x10000000
_TIOCSTI = 0x5412
_TIOCLINUX = 0x541C


def _build_filter() -> bytes:
    """The seccomp program every sandboxed bot runs under, as BPF that bwrap loads
    (``--seccomp FD``), built by libseccomp for this machine's architecture."""
    sc, _ = _pyseccomp()
    assert sc is not None
    f = sc.SyscallFilter(sc.ALLOW)
    for name in DENIED_SYSCALLS:
        with contextlib.suppress(ValueError, OSError):  # not on this architecture
            f.add_rule(sc.ERRNO(errno.EPERM), name)
    for name in UNSUPPORTED_SYSCALLS:
        with contextlib.suppress(ValueError, OSError):  # unknown to this libseccomp
            f.add_rule(sc.ERRNO(errno.ENOSYS), name)
    f.add_rule(sc.ERRNO(errno.EPERM), "clone",
               sc.Arg(0, sc.MASKED_EQ, _CLONE_NEWUSER, _CLONE_NEWUSER))
    for request in (_TIOCSTI, _TIOCLINUX):
        f.add_rule(sc.ERRNO(errno.EPERM), "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, request))
    # Only Linux's own personality (no other execution domain, no ASLR switched off).
    f.add_rule(sc.ERRNO(errno.EPERM), "personality", sc.Arg(0, sc.NE, 0))
    for family in range(_AF_MAX + 1):
        if family not in SOCKET_FAMILIES:
            f.add_rule(sc.ERRNO(errno.EAFNOSUPPORT), "socket", sc.Arg(0, sc.EQ, family))
    with tempfile.TemporaryFile() as out:
        f.export_bpf(out)
        out.seek(0)
        return out.read()


@functools.lru_cache(maxsize=1)
def seccomp_filter() -> tuple[bytes | None, str | None]:
    """The seccomp program (built once per process), or None and why it cannot be
    had here."""
    sc, missing = _pyseccomp()
    if sc is None:
        return None, missing
    try:
        return _build_filter(), None
    except (OSError, ValueError, RuntimeError) as e:
        return None, f"libseccomp cannot build the filter: {e}"


# --- its own keyring ---------------------------------------------------------------------------

#: The number of ``keyctl`` per machine (``KEYCTL_JOIN_SESSION_KEYRING`` is 1 on all).
_KEYCTL_NR = {"x86_64": 250, "aarch64": 219, "riscv64": 219, "ppc64le": 311, "s390x": 280}
#: Perl is part of every Debian system (perl-base is essential): the smallest way to
#: make one system call between fork and exec without a preexec_fn (see process.py).
PERL = "/usr/bin/perl"


def _keyctl_usable() -> bool:
    """Can this process use the kernel keyrings at all (not denied by a container's
    own seccomp profile, the kernel has them)?"""
    nr = _KEYCTL_NR.get(platform.machine())
    if nr is None:
        return True  # unknown: assume it can (and say it is not fenced)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    # KEYCTL_GET_KEYRING_ID (0) of the session keyring (-3), without creating one.
    r = libc.syscall(ctypes.c_long(nr), ctypes.c_long(0), ctypes.c_long(-3), ctypes.c_long(0))
    return r >= 0 or ctypes.get_errno() not in (errno.ENOSYS, errno.EPERM, errno.EACCES)


def _keyring_prefix(bwrap: str) -> tuple[tuple[str, ...], str | None]:
    """What puts a bot in a new, empty session keyring of its own before bwrap runs
    (bwrap keeps the referee's), and why it cannot be had (None: it can, or no
    process here can use keyrings anyway)."""
    if not _keyctl_usable():
        return (), None
    nr = _KEYCTL_NR.get(platform.machine())
    if nr is None:
        return (), f"no keyctl system call number is known for {platform.machine()}"
    if not os.access(PERL, os.X_OK):
        return (), f"{PERL} is missing (Debian/Ubuntu: apt-get install perl-base)"
    # A join that fails at a start (the user's key quota, kernel.keys.maxkeys, reached
    # by many bots at once) still starts the bot: the seccomp filter is the fence,
    # the own keyring is the floor under it.
    prefix = (PERL, "-e", f"syscall({nr}, 1, 0); exec {{$ARGV[0]}} @ARGV; exit 127")
    try:
        strict = (PERL, "-e", f"syscall({nr}, 1, 0) >= 0 or exit 126; exec {{$ARGV[0]}} @ARGV")
        done = subprocess.run([*strict, bwrap, "--version"], capture_output=True, timeout=10,
                              stdin=subprocess.DEVNULL, env={})
    except (OSError, subprocess.TimeoutExpired) as e:
        return (), f"a new session keyring cannot be joined: {e}"
    if done.returncode != 0:
        return (), f"a new session keyring cannot be joined (exit code {done.returncode})"
    return prefix, None


# --- the sandbox in force --------------------------------------------------------------------


@dataclass(frozen=True)
class Sandbox:
    """The sandbox for a run's launched bots.  ``active``: bots start inside
    bubblewrap; ``limits``: how each limit is enforced ("cgroup", "tmpfs", or a
    weaker fallback, or "none"); ``warnings``: one line per limit that does not hold
    as configured, and why.  ``hidden``: referee paths to cover when they lie inside
    something a bot sees."""

    config: SandboxConfig
    active: bool
    limits: Mapping[str, str]
    warnings: tuple[str, ...] = ()
    hidden: tuple[str, ...] = ()
    machine: Machine | None = field(default=None, compare=False, repr=False)

    def hide(self, *paths: str | None) -> Sandbox:
        """This sandbox, also hiding ``paths`` (the output folder, keys...)."""
        more = tuple(os.path.abspath(p) for p in paths if p)
        return replace(self, hidden=self.hidden + more)

    def with_memory(self, memory_mb: int | None) -> Sandbox:
        """This sandbox with another memory limit (a bot's own ``memory_mb``)."""
        if not memory_mb or memory_mb == self.config.memory_mb:
            return self
        return replace(self, config=replace(self.config, memory_mb=int(memory_mb)))

    def off(self) -> Sandbox:
        """No sandbox (a bot the organiser trusts: ``sandbox = "off"``)."""
        return unsandboxed(self.config)

    def describe(self) -> dict[str, Any]:
        """What game records, the database and standings say of the sandbox."""
        return {**self.config.to_dict(), "active": self.active, "limits": dict(self.limits),
                "warnings": list(self.warnings)}

    def summary(self) -> str:
        """One line: 'sandbox: bubblewrap; memory 1024 MB (cgroup), ...'."""
        if not self.active:
            return "sandbox: off (bots run as the referee's user and see what it sees)"
        c, lim = self.config, self.limits
        return (f"sandbox: bubblewrap; memory {c.memory_mb} MB ({lim['memory']}), "
                f"{c.processes} processes ({lim['processes']}), scratch {c.scratch_mb} MB "
                f"({lim['scratch']}), CPUs ({lim['cpu']}), CPU share "
                f"({lim.get('cpu share', 'none')}), system calls "
                f"({lim.get('syscalls', 'none')}), no network")

    def prepare(self, command: Sequence[str], *, cwd: str | None,
                env: Mapping[str, str], writable: Sequence[str] = (),
                folder: str | None = None) -> Prepared:
        """The command, environment and cgroup that start ``command`` in this sandbox.
        ``env``: the protocol's and the configuration's variables (nothing else is
        passed); ``writable``: host folders the bot may write (a ZeroMQ ipc folder);
        ``folder``: the bot's folder (default: from ``cwd`` and the command)."""
        if not self.active:
            raise SandboxError("this sandbox is off")
        machine = self.machine or probe()
        assert machine.bwrap is not None
        c = self.config
        base = os.path.abspath(cwd or os.getcwd())
        if folder is None and c.entry_fence:
            folder = base
        view = command_view(command, base, folder,
                            league_path(c.interpreters) if c.entry_fence else None)
        bot_dir = view.folder
        args: list[str] = [machine.bwrap, "--unshare-all", "--unshare-user",
                           "--disable-userns", "--die-with-parent", "--new-session",
                           "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
                           "--hostname", "sandbox", "--clearenv"]
        args += _system_view()
        args += ["--size", str(c.scratch_mb << 20), "--tmpfs", "/tmp", "--dir", "/tmp/home",
                 # POSIX shared memory goes to the scratch, under its cap; the rest of
                 # /dev is read-only.
                 "--symlink", "/tmp", "/dev/shm", "--remount-ro", "/dev"]
        visible: list[str] = []
        for p in (*view.binds, *c.interpreters, *c.read_only):
            p = os.path.abspath(p)
            if not os.path.exists(p) or _under(p, SYSTEM_DIRS) or p in visible:
                continue
            args += ["--ro-bind", p, p]
            visible.append(p)
        tree: EntryTree | None = None
        if c.entry_fence:  # a league's entry: its host path named nowhere
            tree, source = self._entry(bot_dir)
            args += _entry_view(tree) if tree is not None else ["--ro-bind", source, BOT_DIR]
        else:  # a bot run by its own author: bound from its folder
            args += ["--ro-bind", bot_dir, BOT_DIR]
        for d in writable:
            # A ZeroMQ ipc socket's folder: connecting needs no write to the folder.
            args += ["--ro-bind", d, d]
        for h in (*self.hidden, _package_dir()):
            if not os.path.exists(h):
                continue
            inside = _inside(h, bot_dir) if not c.entry_fence else None
            if inside is None and not any(_under(h, (v,)) for v in visible):
                continue
            # Cover it: an empty tmpfs over a folder, /dev/null over a file.
            where = inside or h
            args += (["--tmpfs", where] if os.path.isdir(h) else
                     ["--ro-bind", "/dev/null", where])
        env_all = {**BASE_ENV, "PATH": ":".join([*view.path_dirs, SYSTEM_PATH]),
                   **{k: _seen_in(v, bot_dir) for k, v in env.items()}}
        for k, v in env_all.items():
            args += ["--setenv", k, v]
        # Last (after the files written into the view): the root, a tmpfs bwrap made
        # and where /etc's own folder is, read-only too.
        finish = [*(["--remount-ro", BOT_DIR] if tree is not None else []),
                  "--remount-ro", "/", "--chdir", BOT_DIR]
        files = {"/etc/passwd": _PASSWD, "/etc/group": _GROUP, "/etc/hosts": _HOSTS,
                 "/etc/hostname": "sandbox\n"}
        argv = list(view.argv)
        program = seccomp_filter()[0] if machine.seccomp_problem is None else None
        # Where the filter holds, no keyring call reaches the kernel: the referee's
        # session keyring, which the bot then keeps, is out of its reach, and a join
        # would cost a perl start before bwrap (~2 ms of CPU) at every start.  Where
        # it does not, the bot starts in a new, empty session keyring of its own.
        keyring = machine.keyring if program is None else ()
        return Prepared(args, argv, files, self._cgroup(), finish, program, keyring, tree)

    def _entry(self, folder: str) -> tuple[EntryTree | None, str]:
        """How a league entry gets into its sandbox: copied at this start (its tree),
        else bound from its staged copy (its path).  Raises SandboxError when it can
        be neither (too large to copy, and no neutral tmpfs has room)."""
        hidden = (*self.hidden, _package_dir())
        staged = _STAGING.staged(os.path.abspath(folder), hidden)
        if staged is not None:  # a larger entry's later starts: no walk
            return None, staged
        tree = entry_tree(folder, hidden)
        if tree is not None:
            return tree, ""
        staged = stage_entry(folder, hidden)
        if staged is not None:
            return None, staged
        tree = entry_tree(folder, hidden, FALLBACK_MAX_ITEMS, FALLBACK_MAX_BYTES)
        if tree is not None:
            return tree, ""
        raise SandboxError(
            f"the bot's folder is too large to copy into its sandbox at each start (over "
            f"{FALLBACK_MAX_ITEMS} files or {FALLBACK_MAX_BYTES >> 20} MB) and no tmpfs "
            f"with a neutral path ({', '.join(STAGING_PLACES)}) has room to stage it")

    def _cgroup(self) -> Cgroup | None:
        """A new cgroup for one start with the limits this machine lets us set."""
        machine = self.machine or probe()
        parents = dict(machine.cgroups)
        if self.config.freeze_between_turns and machine.freezer is not None:
            parents["freezer"] = machine.freezer
        if not parents:
            return None
        return Cgroup.create(parents, self.config)


#: The devices a bot has (the rest of /dev is not there).
_DEVICES = ("null", "zero", "full", "random", "urandom", "tty")


@functools.lru_cache(maxsize=1)
def _system_view() -> tuple[str, ...]:
    """bwrap's options for what every bot sees of the system (the same for every
    start: worked out once per process)."""
    args: list[str] = []
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
    for pattern in ETC_PATHS:
        for p in sorted(glob.glob(pattern)) if "*" in pattern else [pattern]:
            if os.path.lexists(p):
                args += ["--ro-bind-try", p, p]
    # /dev built here rather than with bwrap's --dev, whose /dev/shm is a writable
    # folder outside the scratch's cap.
    # The kernel's files that tell of the host or the referee's keys: covered.
    args += ["--proc", "/proc"]
    for p in MASKED_PROC:
        if os.path.exists(p):  # the same kernel: where it has the file, so has the bot's /proc
            args += ["--ro-bind", "/dev/null", p]
    args += ["--tmpfs", "/dev"]
    for d in _DEVICES:
        args += ["--dev-bind-try", f"/dev/{d}", f"/dev/{d}"]
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        args += ["--symlink", target, f"/dev/{name}"]
    return tuple(args)


def _under(path: str, roots: Sequence[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


@functools.lru_cache(maxsize=1)
def _package_dir() -> str:
    """The referee's own package: hidden where it would otherwise be visible."""
    return os.path.dirname(os.path.abspath(__file__))


# --- a league entry, copied in ----------------------------------------------------------------


@dataclass(frozen=True)
class EntryTree:
    """What of a league entry's folder a bot gets, as bwrap makes it in the
    sandbox's own tmpfs at ``BOT_DIR``: ``dirs`` (path inside, mode) parents first,
    ``files`` (host path, path inside, mode), ``links`` (target, path inside);
    ``size``: the files' bytes.  Other kinds of file (a fifo, a socket) are left out."""

    mode: int
    dirs: tuple[tuple[str, int], ...]
    files: tuple[tuple[str, str, int], ...]
    links: tuple[tuple[str, str], ...]
    size: int


def entry_tree(folder: str, hidden: Sequence[str] = (), max_items: int = COPY_MAX_ITEMS,
               max_bytes: int = COPY_MAX_BYTES) -> EntryTree | None:
    """``folder``'s tree as copied into a sandbox (leaving out ``hidden`` paths), or
    None when it holds more than ``max_items`` files, folders and links or more than
    ``max_bytes`` (the walk stops there: its cost is bounded too)."""
    skip = {os.path.abspath(h) for h in hidden}
    dirs: list[tuple[str, int]] = []
    files: list[tuple[str, str, int]] = []
    links: list[tuple[str, str]] = []
    size = 0
    try:
        top = os.stat(folder).st_mode & 0o777
        todo = [(folder, BOT_DIR)]
        while todo:
            here, inside = todo.pop()
            with os.scandir(here) as it:
                found = sorted(it, key=lambda e: e.name)
            for e in found:
                if e.path in skip:
                    continue
                if len(dirs) + len(files) + len(links) >= max_items:
                    return None
                dest = f"{inside}/{e.name}"
                st = e.stat(follow_symlinks=False)
                if e.is_symlink():
                    links.append((os.readlink(e.path), dest))
                elif e.is_dir(follow_symlinks=False):
                    dirs.append((dest, st.st_mode & 0o777))
                    todo.append((e.path, dest))
                elif e.is_file(follow_symlinks=False):
                    size += st.st_size
                    if size > max_bytes:
                        return None
                    files.append((e.path, dest, st.st_mode & 0o777))
    except OSError:
        return None  # unreadable here: bound instead, and the bot finds out
    return EntryTree(top, tuple(dirs), tuple(files), tuple(links), size)


def entry_options(tree: EntryTree) -> tuple[list[str], list[int]]:
    """bwrap's options that write ``tree``'s files into the sandbox (``--file FD``,
    after its folders are made), and the open files to pass it; the caller closes
    them once bwrap has started.  Raises OSError (every file opened so far closed)."""
    options: list[str] = []
    fds: list[int] = []
    try:
        for host, dest, mode in tree.files:
            fd = os.open(host, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            fds.append(fd)
            options += ["--perms", f"{mode:04o}", "--file", str(fd), dest]
    except OSError:
        for fd in fds:
            os.close(fd)
        raise
    return options, fds


def _entry_view(tree: EntryTree) -> list[str]:
    """bwrap's options that make ``tree``'s tmpfs, folders and links (its files come
    after: ``entry_options``)."""
    args = ["--perms", f"{tree.mode:04o}", "--tmpfs", BOT_DIR]
    for dest, mode in tree.dirs:
        args += ["--perms", f"{mode:04o}", "--dir", dest]
    for target, dest in tree.links:
        args += ["--symlink", target, dest]
    return args


#: Where larger entries are staged, in this order: each must be a folder whose path
#: as the kernel shows it in a bind mount's line of /proc/self/mountinfo (its path
#: from the root of its file system) is one of ``NEUTRAL``: nothing of a user, a
#: league or a home.
STAGING_PLACES = ("/dev/shm", "/tmp", "/var/tmp")
NEUTRAL = ("/", "/tmp", "/var/tmp", "/dev/shm", "/shm")
#: What staging leaves free on its file system: at least this, and a tenth of it.
STAGING_RESERVE = 64 << 20
_STAGING_PREFIX = "updown-entries-"


_OCTAL = re.compile(r"\\([0-7]{3})")  # mountinfo's escapes of space, tab, newline, backslash


def mount_path(path: str) -> str:
    """``path`` as a bind mount of it shows in /proc/self/mountinfo: its path from
    the root of the file system it is on."""
    real = os.path.realpath(path)
    best, shown = "", real
    for line in (_read("/proc/self/mountinfo") or "").splitlines():
        parts = line.split()
        if len(parts) < 5:
            continue
        root, point = (_OCTAL.sub(lambda m: chr(int(m.group(1), 8)), p) for p in parts[3:5])
        if _under(real, (point,)) and len(point) >= len(best):
            best = point
            rest = real[len(point.rstrip("/")):]
            shown = (root.rstrip("/") + rest) or "/"
    return shown


class _Staging:
    """This process's staged entries: a folder of a neutral name per process and
    place (``updown-entries-XXXXXXXX`` in one of ``STAGING_PLACES``, locked while the
    process lives; removed at exit, or by the next process to stage there when this
    one was killed), holding one numbered copy per entry folder, kept while its
    folder is.  A place that fills up is left as it is (running bots are bound to
    its copies) and the next with room taken."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pid = 0
        self.roots: list[tuple[str, int]] = []  # (folder, its lock's fd), newest last
        self.copies: dict[tuple[Any, ...], str] = {}
        self.count = 0

    def _open_root(self, size: int) -> str | None:
        """The staging folder to copy ``size`` more bytes to: the newest, else one
        made in the first place that shows a neutral path and has room; None if
        none does."""
        if self.pid != os.getpid():  # a forked child stages its own
            self.pid, self.roots, self.copies = os.getpid(), [], {}
        if self.roots and _room(self.roots[-1][0], size):
            return self.roots[-1][0]
        used = {os.path.dirname(r) for r, _ in self.roots}
        for place in STAGING_PLACES:
            if place in used or not _writable_dir(place) or \
                    mount_path(place) not in NEUTRAL or not _room(place, size):
                continue
            _sweep_staging(place)
            try:
                root = tempfile.mkdtemp(prefix=_STAGING_PREFIX, dir=place)
                fd = os.open(os.path.join(root, ".lock"), os.O_CREAT | os.O_RDWR | os.O_CLOEXEC,
                             0o600)
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue
            if not self.roots:
                atexit.register(self.remove)
            self.roots.append((root, fd))
            return root
        return None

    @staticmethod
    def _key(folder: str, hidden: Sequence[str]) -> tuple[Any, ...] | None:
        try:
            st = os.stat(folder)
        except OSError:
            return None
        return (folder, st.st_dev, st.st_ino, st.st_mtime_ns, tuple(hidden))

    def staged(self, folder: str, hidden: Sequence[str]) -> str | None:
        """The copy of ``folder`` staged already, if there is one (no walk)."""
        key = self._key(folder, hidden)
        with self.lock:
            return self.copies.get(key) if self.pid == os.getpid() and key else None

    def stage(self, folder: str, hidden: Sequence[str]) -> str | None:
        """The staged copy of ``folder`` (made now if it is not there yet), or None
        when no neutral place has room for it."""
        key = self._key(folder, hidden)
        if key is None:
            return None
        with self.lock:
            if self.pid == os.getpid() and key in self.copies:
                return self.copies[key]
            tree = entry_tree(folder, hidden, max_items=1 << 30, max_bytes=1 << 62)
            if tree is None:
                return None
            self._forget_gone()
            root = self._open_root(tree.size)
            if root is None:
                return None
            self.count += 1
            dest = os.path.join(root, str(self.count))
            try:
                _copy_tree(tree, dest)
            except OSError:
                shutil.rmtree(dest, ignore_errors=True)
                return None
            self.copies[key] = dest
            return dest

    def _forget_gone(self) -> None:
        """Remove the copies of folders that are gone (a checked submission's)."""
        for key, dest in list(self.copies.items()):
            try:
                st = os.stat(key[0])
                same = (st.st_dev, st.st_ino, st.st_mtime_ns) == key[1:4]
            except OSError:
                same = False
            if not same:
                shutil.rmtree(dest, ignore_errors=True)
                del self.copies[key]

    def remove(self) -> None:
        """Remove this process's staging folders (at exit)."""
        if self.pid == os.getpid():
            for root, fd in self.roots:
                shutil.rmtree(root, ignore_errors=True)
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.roots, self.copies = [], {}


def _room(place: str, size: int) -> bool:
    try:
        v = os.statvfs(place)
    except OSError:
        return False
    reserve = max(STAGING_RESERVE, v.f_blocks * v.f_frsize // 10)
    return v.f_bavail * v.f_frsize - size >= reserve


def _sweep_staging(place: str) -> None:
    """Remove the staging folders of processes that are gone (their lock is free)."""
    with contextlib.suppress(OSError):
        for name in os.listdir(place):
            if not name.startswith(_STAGING_PREFIX):
                continue
            d = os.path.join(place, name)
            try:
                fd = os.open(os.path.join(d, ".lock"), os.O_RDWR | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # its process is alive
            finally:
                os.close(fd)
            shutil.rmtree(d, ignore_errors=True)


def _copy_tree(tree: EntryTree, dest: str) -> None:
    """Write ``tree`` (paths inside ``BOT_DIR``) to ``dest``, each file and folder
    with its mode (folders' last, once they are filled)."""
    def at(inside: str) -> str:
        return dest + inside[len(BOT_DIR):]

    os.mkdir(dest, 0o700)
    for d, _ in tree.dirs:
        os.mkdir(at(d), 0o700)
    for host, d, mode in tree.files:
        shutil.copyfile(host, at(d), follow_symlinks=False)
        os.chmod(at(d), mode)
    for target, d in tree.links:
        os.symlink(target, at(d))
    for d, mode in reversed(tree.dirs):
        os.chmod(at(d), mode)
    os.chmod(dest, tree.mode)


_STAGING = _Staging()


def stage_entry(folder: str, hidden: Sequence[str] = ()) -> str | None:
    """A copy of the league entry ``folder`` (without ``hidden``) at a neutral path,
    made once per process and bound read-only at ``BOT_DIR`` by each start, so that
    the bot's mountinfo names ``/updown-entries-XXXXXXXX/N``, not the league's
    folder; None when no neutral place has room for it."""
    return _STAGING.stage(os.path.abspath(folder), tuple(hidden))


def unsandboxed(config: SandboxConfig | None = None) -> Sandbox:
    cfg = config or SandboxConfig(mode="off")
    return Sandbox(cfg, False, {"memory": "rlimit (per process)", "processes": "none",
                                "scratch": "none", "cpu": "affinity (can be widened)"})


#: Per cgroup controller: the limit it holds, how it is held with it and without it,
#: and the warning when it is not.
_LIMITS = (
    ("memory", "memory", "cgroup", "rlimit (per process)",
     "the memory limit holds per process, not for a bot's whole tree"),
    ("pids", "processes", "cgroup", "none", "the number of processes of a bot is NOT limited"),
    ("cpuset", "cpu", "cpuset", "affinity (can be widened)",
     "a bot can widen its CPU affinity beyond its worker's CPU"),
    ("cpu", "cpu share", "cgroup", "none",
     "a bot's processes together may take more than its seat's share of the CPU"),
)


def resolve(config: SandboxConfig) -> Sandbox:
    """The sandbox ``config`` gives on this machine.  ``mode = "on"`` without a
    working bubblewrap raises SandboxError naming what is missing; ``auto`` then
    runs without, with a warning saying why and how to fix it."""
    if config.mode == "off":
        return unsandboxed(config)
    machine = probe()
    if machine.problem is not None:
        if config.mode == "on":
            raise SandboxError(f"the sandbox is required (--sandbox on) but cannot be "
                               f"used: {machine.problem}")
        s = unsandboxed(config)
        return replace(s, warnings=(f"warning: bots run WITHOUT a sandbox: "
                                    f"{machine.problem}; or --sandbox off to silence this",))
    limits: dict[str, str] = {"scratch": "tmpfs",
                              "syscalls": "none" if machine.seccomp_problem else "seccomp"}
    warnings: list[str] = []
    if machine.keyring_problem:
        warnings.append(f"warning: bots share the referee's session keyring (the seccomp "
                        f"filter still denies them the keyring calls): "
                        f"{machine.keyring_problem}")
    if machine.seccomp_problem:
        warnings.append(f"warning: bots run WITHOUT the seccomp filter (keyrings, io_uring, "
                        f"bpf... are open to them): {machine.seccomp_problem}")
    for controller, limit, held, fallback, missing in _LIMITS:
        if controller in machine.cgroups:
            limits[limit] = held
        else:
            limits[limit] = fallback
            warnings.append(f"warning: {missing}: {machine.cgroup_problems.get(controller)}")
    if config.freeze_between_turns:
        if machine.freezer is not None:
            limits["freeze"] = "cgroup.freeze" if machine.freezer[0] == "2" else "freezer"
        else:
            limits["freeze"] = "none"
            warnings.append(f"warning: bots are NOT frozen between their turns (they can "
                            f"compute on the other seats' turns): {machine.freezer_problem}")
    return Sandbox(config, True, limits, tuple(warnings), machine=machine)


# --- what a bot ran into ---------------------------------------------------------------------

_PATH_IN = re.compile(r"""['"](/[^'"]+)['"]|(?:open|stat|access|scandir)\s+'?(/[^\s',]+)""")


def explain(lines: Sequence[str], config: SandboxConfig) -> list[str]:
    """What a sandboxed bot's stderr shows it ran into, in words, once per cause:
    "tried to write outside its scratch", "filled its scratch (64 MB)", "tried to
    read /home/me/model.bin, which the sandbox does not show" ..."""
    out: list[str] = []

    def say(text: str) -> None:
        if text not in out:
            out.append(text)

    for line in lines:
        low = line.lower()
        if "read-only file system" in low or "erofs" in low:
            say("tried to write outside its scratch: only /tmp (and $HOME, /tmp/home) is "
                "writable in the sandbox; its folder and the system are read-only")
        elif "no space left on device" in low or "enospc" in low:
            say(f"filled its scratch: /tmp holds at most {config.scratch_mb} MB "
                f"([sandbox] scratch_mb)")
        elif "memoryerror" in low or "cannot allocate memory" in low or \
                "out of memory" in low or "heap limit" in low or "oom" in low.split():
            say(f"ran out of memory under the {config.memory_mb} MB limit "
                f"([sandbox] memory_mb, --memory-mb)")
        elif ("resource temporarily unavailable" in low or "eagain" in low) and \
                ("fork" in low or "thread" in low or "spawn" in low):
            say(f"could not start another process or thread: the limit is "
                f"{config.processes} ([sandbox] processes)")
        elif "network is unreachable" in low or "enetunreach" in low:
            say("tried to use the network: a sandboxed bot has none (loopback only)")
        elif "no such file or directory" in low or "enoent" in low or \
                "permission denied" in low:
            m = _PATH_IN.search(line)
            path = (m.group(1) or m.group(2)) if m else None
            # Only a path the host has: a missing one is the bot's own mistake.
            if path and not path.startswith(("/proc", "/dev")) and os.path.exists(path):
                say(f"tried to use {path}, which the sandbox does not show (add it to "
                    f"[sandbox] read_only, or --allow-read, if the bot needs it, or keep "
                    f"it in the bot's folder)")
    return out


# --- the command inside ------------------------------------------------------------------------


@dataclass
class Prepared:
    """What starts one bot in the sandbox: ``bwrap`` and its options (given to bwrap
    through a pipe, ``--args FD``, so that the bot cannot read them in its pid 1's
    command line), the bot's own command (its program resolved to a real file), the
    files written into its view, and its cgroup (None where none can be made)."""

    bwrap: list[str]
    command: list[str]
    files: Mapping[str, str]
    cgroup: Cgroup | None
    finish: list[str] = field(default_factory=list)  # bwrap's last options
    seccomp: bytes | None = None  # the filter bwrap loads before the bot starts
    #: What runs bwrap (``prefix + [bwrap, ...]``): a new session keyring's joiner.
    prefix: tuple[str, ...] = ()
    #: The entry copied into the sandbox (``entry_options``), when it is not bound.
    entry: EntryTree | None = None


def absolute_args(command: Sequence[str], base: str) -> list[str]:
    """The command with every argument that names an existing file or folder
    relative to ``base`` made absolute (the bot starts in its folder instead)."""
    out = [command[0]]
    if os.sep in command[0] and not os.path.isabs(command[0]):
        out[0] = os.path.normpath(os.path.join(base, command[0]))
    for a in command[1:]:
        if a and not a.startswith("-") and not os.path.isabs(a) and \
                os.path.exists(os.path.join(base, a)):
            out.append(os.path.normpath(os.path.join(base, a)))
        else:
            out.append(a)
    return out


#: Programs that run a script named among their arguments.
_INTERPRETER = re.compile(r"(python|pypy|node|nodejs|perl|ruby|java|bash|sh|dash|zsh|lua|"
                          r"luajit|deno|bun|php|rscript|julia|env|uv|dotnet|mono|guile|"
                          r"racket|sbcl|escript|elixir|tclsh|wish)[\d.]*(-\w+)?", re.I)

#: Interpreter options after which no script comes (the code or module is given).
_NO_SCRIPT = frozenset(("-c", "-m", "-e", "--eval", "-p", "--print"))
#: Interpreter options whose value is the next word (not a script).
_VALUE_OPTIONS = frozenset(("-W", "-X", "-r", "--require", "--import", "-C", "--conditions",
                            "-cp", "-classpath", "--class-path"))


def script_index(argv: Sequence[str]) -> int | None:
    """Where the script an interpreter runs is in ``argv`` (``python3 -u bot.py``: 2;
    ``java -jar bot.jar``: 2; ``env X=1 python3 bot.py``: 3), None when the command
    names none (``python3 -c CODE ...``, ``python3 -m pkg``, not an interpreter)."""
    if not argv or not _INTERPRETER.fullmatch(os.path.basename(argv[0])):
        return None
    i = 1
    while i < len(argv):
        w = argv[i]
        if w == "-jar":
            return i + 1 if i + 1 < len(argv) else None
        if w in _NO_SCRIPT:
            return None
        if w == "--":
            return i + 1 if i + 1 < len(argv) else None
        if w in _VALUE_OPTIONS:
            i += 2
            continue
        if w.startswith("-"):
            i += 1
            continue
        if "=" in w and os.path.basename(argv[0]) == "env":
            i += 1
            continue
        if _INTERPRETER.fullmatch(os.path.basename(w)) and os.sep not in w:
            i += 1  # the program ``env`` or ``uv run`` runs
            continue
        if w == "run" and os.path.basename(argv[0]) == "uv":
            i += 1
            continue
        return i
    return None


def bot_folder(argv: Sequence[str], base: str) -> str:
    """A bot's folder, the one folder of its own the sandbox shows it: that of the
    program it runs (``./bot``) or of the script its interpreter runs (``python3
    bot.py``, ``java -jar bot.jar``), else its working directory ``base``.  No other
    argument counts (``python3 -c CODE /some/file`` names no script: ``base``)."""
    i = script_index(argv)
    if i is not None:
        return os.path.dirname(os.path.normpath(os.path.join(base, argv[i])))
    prog = argv[0]
    if os.sep in prog and not _INTERPRETER.fullmatch(os.path.basename(prog)):
        full = os.path.normpath(os.path.join(base, prog))
        if not _under(full, SYSTEM_DIRS):
            return os.path.dirname(full)
    return base


def _root_of(path: str) -> str:
    """The folder an interpreter lives in: above its ``bin`` (a prefix, a venv)."""
    d = os.path.dirname(path)
    return os.path.dirname(d) if os.path.basename(d) == "bin" else d


def _unshim(path: str) -> str:
    """A pyenv shim (a shell script that runs ``pyenv exec``) resolved to the real
    interpreter it would run; else ``path``."""
    if os.sep + "shims" + os.sep not in path:
        return path
    root = os.path.dirname(os.path.dirname(path))
    pyenv = os.path.join(root, "bin", "pyenv")
    if not os.path.exists(pyenv):
        pyenv = shutil.which("pyenv") or ""
    if not pyenv:
        return path
    try:
        done = subprocess.run([pyenv, "which", os.path.basename(path)], capture_output=True,
                              timeout=10, stdin=subprocess.DEVNULL, text=True)
    except (OSError, subprocess.TimeoutExpired):
        return path
    real = done.stdout.strip()
    return real if done.returncode == 0 and os.path.isfile(real) else path


@functools.lru_cache(maxsize=256)
def _program(exe: str, path_env: str) -> str | None:
    found = shutil.which(exe, path=path_env) if os.sep not in exe else exe
    return _unshim(os.path.abspath(found)) if found else None


def _shebang(path: str) -> list[str]:
    try:
        with open(path, "rb") as f:
            head = f.read(256)
    except OSError:
        return []
    if not head.startswith(b"#!"):
        return []
    return head[2:].split(b"\n")[0].decode("utf-8", "replace").split()


def _inside(path: str, folder: str) -> str | None:
    """``path`` as the bot sees it, when it lies in ``folder`` (mounted at
    ``BOT_DIR``); else None."""
    if path == folder:
        return BOT_DIR
    if path.startswith(folder.rstrip("/") + "/"):
        return BOT_DIR + path[len(folder.rstrip("/")):]
    return None


def _seen_in(value: str, folder: str) -> str:
    """An environment variable's value as the bot sees it: each of its paths (a
    ``:``-separated list too) that lies in its folder, under ``BOT_DIR``."""
    if folder not in value:
        return value
    return os.pathsep.join(_inside(p, folder) or p for p in value.split(os.pathsep))


@dataclass(frozen=True)
class View:
    """What a command shows its bot: ``folder`` (the host folder mounted at
    ``BOT_DIR``), ``argv`` as the bot runs it (paths in its folder as ``BOT_DIR/...``,
    the program resolved), ``binds``: the prefix of the interpreter the command
    names when it lives outside /usr (a venv, pyenv), ``path_dirs``: folders put
    first on the bot's PATH (the same interpreter inside as outside)."""

    folder: str
    argv: tuple[str, ...]
    binds: tuple[str, ...]
    path_dirs: tuple[str, ...]


def league_path(interpreters: Sequence[str]) -> str:
    """Where a league bot's program named without a path is looked up: the
    interpreters its league allows (their ``bin``), then the system's -- never the
    PATH of whoever runs the league."""
    dirs: list[str] = []
    for p in interpreters:
        d = os.path.join(p, "bin") if os.path.isdir(os.path.join(p, "bin")) else \
            p if os.path.isdir(p) else os.path.dirname(p)
        if d not in dirs:
            dirs.append(d)
    return ":".join([*dirs, SYSTEM_PATH])


def command_view(command: Sequence[str], base: str, folder: str | None = None,
                 path_env: str | None = None) -> View:
    """What ``command``, started in ``base``, shows its bot (see ``View``).  The
    bot's folder is ``folder`` when given (a league's entry), else ``bot_folder``;
    nothing else the command names is shown -- not the folder of another argument,
    not the interpreter of a ``#!`` line (inside, ``#!/usr/bin/env python3`` finds
    the command's own interpreter or the system's)."""
    argv = absolute_args(command, base)
    bot_dir = os.path.abspath(folder) if folder else bot_folder(argv, base)
    path_env = path_env or os.environ.get("PATH", os.defpath)
    out = list(argv)
    binds: list[str] = []
    path_dirs: list[str] = []
    mine = _inside(argv[0], bot_dir) if os.sep in argv[0] else None
    if mine is not None:
        out[0] = mine
    else:
        exe = _program(argv[0], path_env) or argv[0]
        out[0] = exe
        # The interpreter the command names (the organiser's; in a league, one the
        # league allows): its prefix when outside /usr, with its real file's.
        for p in (exe, os.path.realpath(exe)):
            if not os.path.isabs(p) or _under(p, SYSTEM_DIRS) or _inside(p, bot_dir):
                continue
            root = _root_of(p)
            if root not in binds:
                binds.append(root)
        d = os.path.dirname(exe)
        if os.path.isabs(exe) and not _under(d, SYSTEM_DIRS) and not _inside(d, bot_dir):
            path_dirs.append(d)
    for i, a in enumerate(argv[1:], 1):
        if os.path.isabs(a):
            seen = _inside(a, bot_dir)
            if seen is not None:
                out[i] = seen
    return View(bot_dir, tuple(out), tuple(binds), tuple(path_dirs))


def resolve_program(argv: Sequence[str], base: str) -> tuple[str, list[str], list[str]]:
    """The bot's program as a real file, the folders it needs visible (an interpreter
    outside /usr: its prefix), and the folders to put first on its PATH."""
    v = command_view(argv, base)
    return v.argv[0], list(v.binds), list(v.path_dirs)


# --- the fence of a league entry -----------------------------------------------------------


class FenceError(UsageError, ValueError):
    """A league entry's command names a path outside its entry: one line naming the
    argument."""


def _looks_like_path(word: str) -> bool:
    return bool(word) and not any(c.isspace() for c in word) and (
        "/" in word or word in (".", "..") or word.startswith("~"))


def check_fence(command: Sequence[str], entry: str, interpreters: Sequence[str] = (),
                read_only: Sequence[str] = ()) -> None:
    """Refuse (FenceError, one line naming the argument) a league entry's command
    that names anything outside ``entry``: its program, its script, any argument
    that looks like a path (also after ``--option=``), the ``#!`` interpreter of a
    program or script of the entry, each followed through symbolic links.  Allowed
    besides the entry: the system (``/usr`` and its links ``/bin``, ``/lib``...)
    and the ``interpreters`` and ``read_only`` paths the league's organiser lists.  A
    program named without a path is looked up as the sandbox will (``league_path``).
    The check runs at submission: the sandbox of every later game shows the entry
    and those paths only."""
    allowed = (*interpreters, *read_only)
    root = os.path.realpath(entry)
    ok_roots = [*SYSTEM_DIRS, *(os.path.abspath(a) for a in allowed),
                *(os.path.realpath(a) for a in allowed)]

    def fits(path: str) -> bool:
        real = os.path.realpath(path)
        if _under(real, (root,)):
            return True  # in the entry, whatever the lexical path
        return _under(os.path.normpath(path), ok_roots) and _under(real, ok_roots)

    def refuse(word: str, what: str) -> FenceError:
        return FenceError(
            f"the command's {what} {word!r} lies outside the bot's folder: a league bot "
            f"may name only files of its own submission, the system's interpreters (/usr) "
            f"and those the league allows ([sandbox] interpreters)")

    def at(word: str) -> str:
        w = os.path.expanduser(word) if word.startswith("~") else word
        return os.path.normpath(os.path.join(root, w))

    def shebang_ok(path: str, word: str) -> None:
        interp = _shebang(path) if os.path.isfile(path) else []
        if not interp:
            return
        prog = interp[0]
        if os.path.basename(prog) == "env":
            rest = [w for w in interp[1:] if not w.startswith("-") and "=" not in w]
            if rest and os.sep in rest[0] and not fits(rest[0]):
                raise refuse(rest[0], f"#! interpreter (of {word!r})")
        if not fits(prog):
            raise refuse(prog, f"#! interpreter (of {word!r})")

    if not command:
        raise FenceError("the command is empty")
    prog = command[0]
    if os.sep in prog or prog.startswith("~"):
        path = at(prog)
        if not fits(path):
            raise refuse(prog, "program")
        shebang_ok(path, prog)
    else:
        found = _program(prog, league_path(interpreters))
        if found is None:
            raise FenceError(f"the command's program {prog!r} is not among this league's "
                             f"interpreters nor the system's: "
                             f"name a system interpreter (python3, node, java...) or a file "
                             f"of the submission (./bot)")
        if not fits(found):
            raise refuse(prog, "program")
    skip = False
    script = script_index(command)
    for i, word in enumerate(command[1:], 1):
        if skip:
            skip = False
            continue
        if word in _NO_SCRIPT:
            skip = True  # code, not a path
            continue
        value = word.partition("=")[2] if word.startswith("-") and "=" in word else word
        if i == script or _looks_like_path(value) or \
                (value and os.path.lexists(os.path.join(root, value))):
            what = "script" if i == script else "argument"
            path = at(value)
            if not fits(path):
                raise refuse(word, what)
            if i == script:
                shebang_ok(path, word)


# --- cgroups ------------------------------------------------------------------------------------



class Cgroup:
    """One bot start's cgroup, in every hierarchy that holds one of our controllers
    (v1: one folder per controller; v2: one folder).  ``procs_files`` are the files
    the starting process writes its pid into (``/bin/sh`` does, before exec)."""

    def __init__(self, dirs: dict[str, tuple[str, str]], memory_mb: int) -> None:
        self.dirs = dirs  # controller -> (version, folder)
        self.memory_mb = memory_mb
        #: The freezer's file, open (``freeze``), when the cgroup has one.
        self._freeze_fd: int | None = None
        self._freeze_values = (b"", b"")
        #: The file that says whether the freeze is done (``wait_frozen``), open:
        #: v2's ``cgroup.events`` (its ``frozen`` key; poll() wakes when it changes),
        #: v1's ``freezer.state`` (FREEZING until done; no notification).
        self._state_fd: int | None = None
        self._poll: select.poll | None = None
        self.frozen = False
        if "freezer" in dirs:
            version, d = dirs["freezer"]
            name, self._freeze_values = (("cgroup.freeze", (b"0", b"1")) if version == "2"
                                         else ("freezer.state", (b"THAWED", b"FROZEN")))
            with contextlib.suppress(OSError):
                self._freeze_fd = os.open(os.path.join(d, name), os.O_WRONLY | os.O_CLOEXEC)
                self._state_fd = os.open(
                    os.path.join(d, "cgroup.events" if version == "2" else "freezer.state"),
                    os.O_RDONLY | os.O_CLOEXEC)
                if version == "2":
                    self._poll = select.poll()
                    # POLLPRI only: kernfs files always poll readable; POLLPRI (with
                    # POLLERR) says the file changed since it was last read.
                    self._poll.register(self._state_fd, select.POLLPRI)

    @classmethod
    def create(cls, parents: Mapping[str, tuple[str, str]], config: SandboxConfig) -> Cgroup | None:
        name = cgroup_name()
        dirs: dict[str, tuple[str, str]] = {}
        made: set[str] = set()
        try:
            for ctrl, (version, parent) in parents.items():
                d = os.path.join(parent, name)
                if d not in made:
                    os.mkdir(d)
                    made.add(d)
                dirs[ctrl] = (version, d)
                _limit(ctrl, version, parent, d, config)
        except OSError:
            for d in made:
                with contextlib.suppress(OSError):
                    os.rmdir(d)
            return None
        return cls(dirs, config.memory_mb)

    @property
    def freezes(self) -> bool:
        return self._freeze_fd is not None

    def freeze(self, frozen: bool) -> None:
        """Freeze every process of the cgroup (``frozen``), or thaw them.  A freeze is
        asked and not waited for (a task stops as it next leaves the kernel); a thaw
        is done when the write returns.  Nothing happens without a freezer, or once
        the cgroup is gone."""
        fd = self._freeze_fd
        if fd is None or frozen == self.frozen:
            return
        self.frozen = frozen
        with contextlib.suppress(OSError):
            os.pwrite(fd, self._freeze_values[frozen], 0)

    def _frozen_state(self) -> bool:
        fd = self._state_fd
        if fd is None:
            return False
        try:
            text = os.pread(fd, 256, 0)
        except OSError:  # the cgroup is gone (ENODEV): nothing of it runs
            return True
        if self._poll is not None:
            return b"frozen 1" in text
        return text.strip() == b"FROZEN"

    def cpu_ns(self) -> int | None:
        """Nanoseconds of CPU (user and system: time inside the kernel counts) the
        cgroup's processes have used so far, as the kernel counts it: cgroup v2's
        ``cpu.stat`` (``usage_usec``, in every cgroup, processes gone included); v1's
        ``cpuacct.usage`` where the cgroup is in a ``cpuacct`` hierarchy (``cpu`` and
        ``cpuacct`` mounted together), else the sum of its threads' ``schedstat`` (the
        freezer's ``tasks``; threads gone are not counted).  None where unknown (the
        cgroup is gone, or the kernel keeps no such count)."""
        if "freezer" not in self.dirs:
            return None
        version, d = self.dirs["freezer"]
        if version == "2":
            for line in (_read(os.path.join(d, "cpu.stat")) or "").splitlines():
                key, _, value = line.partition(" ")
                if key == "usage_usec" and value.strip().isdigit():
                    return int(value) * 1000
            return None
        for ctrl in ("cpuacct", "cpu"):
            if ctrl in self.dirs and (usage := _read(os.path.join(
                    self.dirs[ctrl][1], "cpuacct.usage"))) and usage.strip().isdigit():
                return int(usage)
        tids = (_read(os.path.join(d, "tasks")) or "").split()
        if not tids:
            return None
        total = 0
        for tid in tids:
            stat = (_read(f"/proc/{tid}/schedstat") or "").split()
            if stat and stat[0].isdigit():
                total += int(stat[0])
        return total

    def wait_frozen(self, cpu_limit: float, wall_limit: float) -> float | None:
        """After ``freeze(True)``: wait until every process of the cgroup is frozen;
        None once it is, else the CPU seconds its processes used while waiting.  A
        freeze takes effect as each task next leaves the kernel: a task sleeping (a
        bot waiting for its next request) stops within microseconds once it runs --
        on a busy machine only when the scheduler gives it a CPU, which may take
        hundreds of milliseconds; one kept busy in the kernel (``madvise`` populating
        gigabytes, a huge ``read``) only when that call returns, using CPU all along.
        So the wait is judged by what the cgroup does, not by the machine's load:
        it ends unfrozen only once the cgroup has used more than ``cpu_limit``
        seconds of CPU while waiting (``cpu_ns``, counted from the end of the quick
        wait below, about 1 ms after the freeze: the usual freeze reads nothing),
        or, as a last resort (no CPU count, or threads that escape v1's count by
        exiting), after ``wall_limit`` seconds.  The wait sleeps: after two
        ``sched_yield`` (a bot sharing the referee's CPU stops as soon as it runs),
        short naps (20 us, doubling to 1 ms: the usual freeze is done in tens of
        microseconds), then, with cgroup v2, poll() on ``cgroup.events``, which wakes
        when ``frozen`` changes (the kernel may delay that notice by up to 10 ms
        after the previous one: the poll is cut at 2 ms to read again); with v1,
        ``freezer.state`` is read every 1 ms.  None at once without a freezer (or
        once the cgroup is gone: nothing of it runs)."""
        if self._state_fd is None or not self.frozen:
            return None
        if self._frozen_state():  # (a cgroup left with no process reads as frozen)
            return None
        for _ in range(2):
            # The bot's tasks must run to stop: sharing this CPU, they run now.
            os.sched_yield()
            if self._frozen_state():
                return None
        deadline = time.monotonic() + wall_limit
        pause = 20e-6
        poll = self._poll
        start: int | None = None
        counting = False
        while True:
            left = deadline - time.monotonic()
            if pause < 1e-3 or poll is None:
                time.sleep(max(0.0, min(pause, left)))
                pause = min(pause * 2, 1e-3)
            else:
                with contextlib.suppress(InterruptedError):
                    poll.poll(max(0.0, min(left, 0.002)) * 1000.0)
            if self._frozen_state():
                return None
            used = 0.0
            if pause >= 1e-3:  # the quick wait (about 1 ms) failed: count its CPU
                now = self.cpu_ns()
                if not counting:
                    start, counting = now, True
                elif now is not None and start is not None:
                    used = (now - start) / 1e9
            if used > cpu_limit or time.monotonic() >= deadline:
                return None if self._frozen_state() else used

    def frozen_now(self) -> bool:
        """Is every process of the cgroup frozen now (the kernel's word: a freeze
        asked takes effect as each task next leaves the kernel)?"""
        if "freezer" not in self.dirs:
            return False
        version, d = self.dirs["freezer"]
        if version == "2":
            return "frozen 1" in (_read(os.path.join(d, "cgroup.events")) or "")
        return (_read(os.path.join(d, "freezer.state")) or "").strip() == "FROZEN"

    @property
    def procs_files(self) -> list[str]:
        return sorted({os.path.join(d, "cgroup.procs") for _, d in self.dirs.values()})

    def pids(self) -> set[int]:
        out: set[int] = set()
        for f in self.procs_files:
            for line in (_read(f) or "").split():
                with contextlib.suppress(ValueError):
                    out.add(int(line))
        return out

    def oom_killed(self) -> bool:
        """Did the kernel kill a process of this cgroup for going over its memory?"""
        if "memory" not in self.dirs:
            return False
        version, d = self.dirs["memory"]
        text = _read(os.path.join(d, "memory.events" if version == "2" else "memory.oom_control"))
        for line in (text or "").splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit() and int(value) > 0:
                return True
        if version == "1":
            fail = _read(os.path.join(d, "memory.failcnt"))
            return bool(fail and fail.isdigit() and int(fail) > 0 and text and
                        "under_oom 1" in text)
        return False

    def kill_all(self) -> None:
        self.freeze(False)  # a frozen task of cgroup v1 dies only once thawed
        for _ in range(5):
            left = self.pids()
            if not left:
                return
            for pid in left:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)

    def remove(self, wait: float = 1.0) -> None:
        """Remove the cgroup once its last process is gone (the kernel empties it
        just after the processes are reaped: up to ``wait`` seconds are given)."""
        deadline = time.monotonic() + wait
        while self.pids() and time.monotonic() < deadline:
            self.kill_all()
            time.sleep(0.005)
        if self._freeze_fd is not None:
            os.close(self._freeze_fd)
            self._freeze_fd = None
        if self._state_fd is not None:
            os.close(self._state_fd)
            self._state_fd = None
            self._poll = None
        for _, d in self.dirs.values():
            for _ in range(50):
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:  # EBUSY: still being emptied
                    if time.monotonic() >= deadline:
                        break
                    time.sleep(0.005)


def _write(path: str, value: str) -> None:
    with open(path, "w", encoding="ascii") as f:
        f.write(value)


def _limit(ctrl: str, version: str, parent: str, d: str, config: SandboxConfig) -> None:
    """Set ``ctrl``'s limit in the new cgroup ``d`` (raises OSError if it cannot be)."""
    if ctrl == "memory":
        limit = str(config.memory_mb << 20)
        if version == "2":
            _write(os.path.join(d, "memory.max"), limit)
            with contextlib.suppress(OSError):
                _write(os.path.join(d, "memory.swap.max"), "0")
        else:
            _write(os.path.join(d, "memory.limit_in_bytes"), limit)
            with contextlib.suppress(OSError):  # no swap accounting on this kernel
                _write(os.path.join(d, "memory.memsw.limit_in_bytes"), limit)
            with contextlib.suppress(OSError):
                _write(os.path.join(d, "memory.swappiness"), "0")
    elif ctrl == "pids":
        _write(os.path.join(d, "pids.max"), str(config.processes))
    elif ctrl in ("cpu", "freezer"):
        pass  # a new cgroup has the default weight, and is thawed
    elif ctrl == "cpuset":
        cpus = ",".join(map(str, sorted(os.sched_getaffinity(0))))
        _write(os.path.join(d, "cpuset.cpus"), cpus)
        if version == "1":
            mems = _read(os.path.join(parent, "cpuset.mems")) or "0"
            _write(os.path.join(d, "cpuset.mems"), mems)


def join_script(procs_files: Sequence[str], memory_kb: int | None) -> str:
    """The ``/bin/sh -c`` script that puts itself in the cgroup (and, without one,
    under an address-space limit) and then execs its arguments: no ``preexec_fn``
    in a threaded referee (see process.py)."""
    parts = [f'echo $$ > {shlex.quote(f)} || exit 126' for f in procs_files]
    if memory_kb:
        parts.append(f"ulimit -v {memory_kb} || exit 126")
    parts.append('exec "$@"')
    return " && ".join(parts)
