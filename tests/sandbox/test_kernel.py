"""The kernel fence (issue 26, item 2): every sandboxed bot runs under the seccomp
filter, so the keyrings, io_uring, bpf, userfaultfd... are closed to it; bwrap starts
with nothing of the referee's environment, and the bot's folder is mounted at a
neutral path: what it can read of its pid 1 and of its mounts names no path of the
referee's.  Tiny attacking bots (bots/) in the real sandbox."""

from __future__ import annotations

import ctypes
import os
import platform
from dataclasses import replace
from pathlib import Path

import pytest

from referee.players import sandbox as sandbox_module
from referee.players.process import start_bot
from referee.players.sandbox import MASKED_PROC, Sandbox, SandboxConfig, resolve
from tests.sandbox.conftest import REPO, bot_folder, run_bot, system_python

KEYCTL_JOIN_SESSION_KEYRING = 1
KEY_SPEC_SESSION_KEYRING = -3


def test_the_denied_system_calls_are_refused_inside(sandbox: Sandbox, tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "syscalls.py")
    ran = run_bot(sandbox, [system_python(), "syscalls.py"], folder)
    assert ran.code == 0, ran.log
    assert ran.said("SECCOMP") == ["2"], ran.log  # under a filter
    calls = dict(line.split(": ", 1) for line in ran.said("CALL"))
    assert calls["io_uring_setup"] == "ENOSYS", ran.log  # so runtimes fall back
    for name in ("bpf", "userfaultfd", "keyctl", "add_key", "request_key", "perf_event_open",
                 "unshare"):
        assert calls[name] == "EPERM", (name, ran.log)


def _own_session_keyring() -> None:
    """This test process (and the bots it starts) in a session keyring of its own,
    as a referee run by systemd or in a container is: the channel exists."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    keyctl = 250 if platform.machine() == "x86_64" else 219
    if libc.syscall(ctypes.c_long(keyctl), ctypes.c_long(KEYCTL_JOIN_SESSION_KEYRING),
                    ctypes.c_char_p(None)) < 0:
        pytest.fail(f"cannot join a session keyring: errno {ctypes.get_errno()}")


def _unsandboxed(command: list[str], cwd: Path) -> str:
    log = cwd.parent / "plain.log"
    proc = start_bot(command, cwd=str(cwd), stderr_path=str(log))
    try:
        assert proc.wait(30) == 0
    finally:
        proc.end()
    return log.read_text()


def test_two_bots_cannot_pass_data_through_the_keyring(sandbox: Sandbox,
                                                       tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "keyring.py")
    py = system_python()
    _own_session_keyring()
    # Without the sandbox, one process hands the next a hand through the keyring...
    _unsandboxed([py, "keyring.py", "put", "updown-hand", "AS-KH-QD"], folder)
    assert "KEY get: AS-KH-QD" in _unsandboxed([py, "keyring.py", "get", "updown-hand"], folder)
    # ... inside, neither the writer nor the reader gets anywhere, and the
    # organiser's key stays unread.
    put = run_bot(sandbox, [py, "keyring.py", "put", "updown-hand2", "2C-3D"], folder)
    got = run_bot(sandbox, [py, "keyring.py", "get", "updown-hand"], folder)
    assert put.said("KEY") == ["put: EPERM"], put.log
    assert got.said("KEY") == ["get: EPERM"], got.log
    assert "AS-KH-QD" not in got.log
    # Nor does /proc/keys list the keys of its user (the referee's user on the host).
    show = ["-c", "import sys\ntry: print('KEYS', open('/proc/keys').read().replace("
            "'\\n', ' | '), file=sys.stderr)\nexcept OSError as e: print('KEYS', e.strerror, "
            "file=sys.stderr)"]
    assert "updown-hand" in _unsandboxed([py, *show], folder)
    listed = run_bot(sandbox, [py, *show], folder)
    assert listed.said("KEYS") and "updown-hand" not in listed.log, listed.log


def test_each_bot_has_an_empty_session_keyring_of_its_own(sandbox: Sandbox,
                                                          tmp_path: Path) -> None:
    """Below the filter too: with the seccomp filter left out (as on a machine that
    cannot apply it), a bot finds nothing of the referee's session keyring, and what
    one bot puts in its keyring another does not find."""
    assert sandbox.machine is not None and sandbox.machine.keyring, sandbox.machine
    unfiltered = replace(sandbox, machine=replace(sandbox.machine, seccomp_problem="test"))
    folder = bot_folder(tmp_path, "keyring.py")
    py = system_python()
    _own_session_keyring()
    _unsandboxed([py, "keyring.py", "put", "updown-organiser", "s3cret"], folder)
    assert "KEY get: s3cret" in _unsandboxed([py, "keyring.py", "get", "updown-organiser"],
                                             folder)
    spy = run_bot(unfiltered, [py, "keyring.py", "get", "updown-organiser"], folder)
    put = run_bot(unfiltered, [py, "keyring.py", "put", "updown-pass", "AS-KH"], folder)
    got = run_bot(unfiltered, [py, "keyring.py", "get", "updown-pass"], folder)
    assert spy.said("KEY") == ["get: ENOKEY"], spy.log
    assert put.said("KEY") == ["put: ok"], put.log  # it has a keyring: its own
    assert got.said("KEY") == ["get: ENOKEY"], got.log


def test_pid_1_and_the_mounts_name_no_path_of_the_referees(sandbox: Sandbox,
                                                           tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "host.py")
    ran = run_bot(sandbox, [system_python(), "host.py"], folder)
    assert ran.code == 0, ran.log
    host = ran.said("HOST")
    text = "\n".join(host)
    assert "HOST" not in text and host, ran.log
    assert "cwd: /bot" in host
    pid1 = [line for line in host if line.startswith("/proc/1/")]
    assert pid1 and all(str(REPO) not in line and os.getcwd() not in line and
                        os.environ["PATH"] not in line for line in pid1), pid1
    # bwrap's own environment is empty (a shell's PWD=/ at most).
    environ = [line for line in host if line.startswith("/proc/1/environ")]
    assert all(line.split(": ", 1)[1].strip() in ("", "PWD=/") for line in environ), environ
    # The command line names the program as the bot sees it, in /bot.
    cmdline = [line for line in host if line.startswith("/proc/self/cmdline")]
    assert cmdline == ["/proc/self/cmdline: /usr/bin/python3 /bot/host.py "], cmdline
    mounts = [line for line in host if line.startswith("/proc/self/mountinfo")]
    assert any(" /bot ro," in line for line in mounts), mounts
    for line in mounts:
        assert str(REPO) not in line and os.getcwd() not in line, line
    for line in (*environ, *cmdline):
        assert str(tmp_path) not in line, line


def test_a_machine_that_cannot_apply_the_filter_says_so_in_one_line(
        sandbox: Sandbox, tmp_path: Path) -> None:
    """No libseccomp (or a kernel without seccomp): one warning line, the limits say
    "none", and bots start without the filter rather than not at all."""
    assert sandbox.machine is not None
    why = "libseccomp cannot be loaded (Unable to find libseccomp; ...)"
    broken = replace(sandbox.machine, seccomp_problem=why)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sandbox_module, "probe", lambda: broken)
        sb = resolve(SandboxConfig(mode="on"))
    lines = [w for w in sb.warnings if "seccomp" in w]
    assert len(lines) == 1 and "\n" not in lines[0] and why in lines[0], sb.warnings
    assert sb.limits["syscalls"] == "none" and "system calls (none)" in sb.summary()
    ran = run_bot(sb, [system_python(), "syscalls.py"], bot_folder(tmp_path, "syscalls.py"))
    assert ran.said("SECCOMP") == ["0"], ran.log


def test_the_hosts_kernel_files_in_proc_read_empty(sandbox: Sandbox, tmp_path: Path) -> None:
    """The host's kernel command line, boot id, configuration, timers, memory layout
    and kernel symbols: each reads empty (or not at all) inside the sandbox, where
    the host has them readable."""
    folder = bot_folder(tmp_path, "masked.py")
    here = [p for p in MASKED_PROC if os.path.exists(p)]
    assert "/proc/cmdline" in here
    ran = run_bot(sandbox, [system_python(), "masked.py", *here], folder)
    assert ran.code == 0, ran.log
    seen = dict(line.rsplit(" ", 1) for line in ran.said("MASKED"))
    assert set(seen) == set(here), ran.log
    assert all(int(n) <= 0 for n in seen.values()), seen
