"""Starting and ending bot processes, without the protocol."""

from __future__ import annotations

import os
import resource
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from referee.players.process import (
    BotStartError,
    StderrLog,
    alive,
    bot_tree,
    describe_exit,
    start_bot,
)
from tests.players.conftest import wait_gone
from tests.procs import Children, scaled

pytestmark = pytest.mark.slow

Pids = Callable[[], list[int]]


def read_all(fd: int) -> bytes:
    out = b""
    os.set_blocking(fd, True)
    while chunk := os.read(fd, 65536):
        out += chunk
    return out


def test_cwd_env_memory_limit_and_no_other_fds(tmp_path: Path, pidfile: Pids) -> None:
    code = ("import os, resource; print(os.getcwd(), os.environ['ONLY'], "
            "resource.getrlimit(resource.RLIMIT_AS)[0], sorted(os.listdir('/proc/self/fd')))")
    proc = start_bot([sys.executable, "-c", code], cwd=str(tmp_path),
                     env={"ONLY": "yes", "PATH": os.environ["PATH"]}, memory_mb=512)
    try:
        out = read_all(proc.stdout_fd).decode().split(" ", 3)
        assert out[:3] == [str(tmp_path), "yes", str(512 << 20)]
        assert out[3].strip() == "['0', '1', '2', '3']"  # its pipes, and listdir's own fd
        assert proc.wait(scaled(5.0)) == 0
    finally:
        proc.end()
        os.close(proc.stdin_fd)
        os.close(proc.stdout_fd)


def test_end_kills_the_whole_tree_even_when_term_is_ignored(pidfile: Pids) -> None:
    script = ("trap '' TERM; echo $$ >> $FAKEBOT_PIDFILE; "
              "sleep 600 & echo $! >> $FAKEBOT_PIDFILE; "
              "(trap '' TERM; sleep 600 & echo $! >> $FAKEBOT_PIDFILE; echo ready; wait) & "
              "wait")
    proc = start_bot(["sh", "-c", script], memory_mb=None)
    try:
        os.set_blocking(proc.stdout_fd, True)
        assert os.read(proc.stdout_fd, 6) == b"ready\n"
        tree = bot_tree(proc.pid)
        assert set(pidfile()) <= tree and len(tree) >= 4
        proc.end(grace=0.1)
        assert wait_gone(list(tree)) == []
        assert proc.returncode == -signal.SIGKILL
        assert describe_exit(proc.returncode or 0).startswith("killed by signal 9 (SIGKILL)")
        # 127 is the shell's "not found" only for a program not known to have run
        assert describe_exit(127) == "exited with code 127 (command not found?)"
        assert describe_exit(127, ran=True) == "exited with code 127"
    finally:
        proc.end()
        os.close(proc.stdin_fd)
        os.close(proc.stdout_fd)


def test_the_grace_ends_when_the_last_process_of_the_tree_exits(tmp_path: Path) -> None:
    # The leader exits on TERM at once; its child takes a while (forking meanwhile) and
    # then exits by itself: the grace waits for it (no SIGKILL cuts it short), and ends
    # with its exit, not at the grace's end.
    done = tmp_path / "done"
    script = ("trap 'exit 0' TERM; "
              f"(trap 'sleep 0.3; echo done > {done}; exit 0' TERM; echo ready; "
              "while :; do sleep 0.05; done) & wait")
    proc = start_bot(["sh", "-c", script], memory_mb=None)
    try:
        os.set_blocking(proc.stdout_fd, True)
        assert os.read(proc.stdout_fd, 6) == b"ready\n"
        tree = bot_tree(proc.pid)
        start = time.monotonic()
        proc.end(grace=scaled(20.0))
        assert time.monotonic() - start < scaled(10.0)  # not the grace
        assert done.read_text() == "done\n"
        assert wait_gone(list(tree)) == [] and proc.returncode == 0
    finally:
        proc.end()
        os.close(proc.stdin_fd)
        os.close(proc.stdout_fd)


def test_the_stderr_cap_holds_for_the_file_across_restarts(tmp_path: Path,
                                                          pidfile: Pids) -> None:
    """20 starts of a crashing bot append to one log: the cap is the file's, not each
    start's (it used to be per start: 20 games of a crashing bot made a 21 MB log)."""
    log = tmp_path / "err.log"
    code = "import sys\nsys.stderr.write('x' * 3000 + '\\n')\nsys.exit(1)"
    for _ in range(20):
        proc = start_bot([sys.executable, "-c", code], stderr_path=str(log), stderr_cap=10_000)
        try:
            assert proc.wait(scaled(5.0)) == 1
            proc.stderr.join(5.0)
        finally:
            proc.end()
            os.close(proc.stdin_fd)
            os.close(proc.stdout_fd)
    text = log.read_text()
    assert len(text) < 10_000 + 2_000  # the cap, plus one note per later start
    assert text.count("[referee: truncated") == 1
    assert text.count("bot started") == 4  # the starts that began under the cap


def test_stderr_is_capped_and_its_tail_kept(tmp_path: Path, pidfile: Pids) -> None:
    log = tmp_path / "err.log"
    code = "import sys\nfor i in range(5000): sys.stderr.write(f'line {i}\\n')\nsys.exit(4)"
    proc = start_bot([sys.executable, "-c", code], stderr_path=str(log), stderr_cap=1000)
    try:
        assert proc.wait(scaled(5.0)) == 4
        proc.stderr.join(5.0)
        text = log.read_text()
        first, second = text.split("\n")[:2]
        assert first.startswith("==== [referee ") and "bot started" in first
        assert second == "line 0"
        assert "[referee: truncated: this log is capped at 1000 bytes]" in text
        assert "more bytes of output dropped in this start" in text
        assert len(text) < 1200
        assert "exited with code 4; last stderr: line 4997 | line 4998 | line 4999" in \
            proc.exit_description()
    finally:
        proc.end()
        os.close(proc.stdin_fd)
        os.close(proc.stdout_fd)


@pytest.mark.parametrize("command, cwd, words", [
    ([], None, "empty"),
    (["no-such-bot-anywhere"], None, "was not found on the PATH"),
    (["./bot"], "/nonexistent-dir", "does not exist"),
    (["./missing.py"], "/", "is not an executable file"),
])
def test_start_errors_are_readable(command: list[str], cwd: str | None, words: str) -> None:
    with pytest.raises(BotStartError, match=words):
        start_bot(command, cwd=cwd)


def test_alive_is_false_for_zombies_and_missing_pids() -> None:
    assert alive(os.getpid())
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    try:
        while alive(pid):  # a zombie until reaped: not alive
            pass
    finally:
        os.waitpid(pid, 0)
    assert not alive(pid)
    assert resource.getrlimit(resource.RLIMIT_AS)  # the referee itself is not limited


def test_a_reused_leader_pid_is_never_taken_for_the_bot(pidfile: Pids) -> None:
    proc = start_bot(["sleep", "600"], memory_mb=None)
    try:
        assert proc.start_time is not None
        assert bot_tree(proc.pid, proc.start_time) == {proc.pid}
        # Another start time at the same pid: another process, not the bot.
        assert bot_tree(proc.pid, proc.start_time + 1) == set()
    finally:
        proc.end(0.1)
        os.close(proc.stdin_fd)
        os.close(proc.stdout_fd)
    assert not alive(proc.pid)


def test_a_library_that_starts_a_bot_installs_no_signal_handler(pidfile: Pids) -> None:
    """Signal handlers and exit hooks are the entry point's (referee.cli.main.main, a
    tournament worker): starting a bot changes no process-wide state."""
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP)
    proc = start_bot([sys.executable, "-c", "pass"])
    try:
        assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGHUP)) == before
    finally:
        proc.end()
        os.close(proc.stdin_fd)
        os.close(proc.stdout_fd)


def test_terminated_referee_ends_its_bots(tmp_path: Path, pidfile: Pids,
                                          children: Children) -> None:
    import subprocess
    import textwrap

    script = textwrap.dedent("""
        import sys, time
        from referee.players.process import install_exit_handlers, start_bot
        install_exit_handlers()  # as the referee's entry points do
        proc = start_bot(["sh", "-c", "trap '' TERM; echo $$ >> $FAKEBOT_PIDFILE; sleep 600"])
        print("started", flush=True)
        time.sleep(600)
    """)
    referee = children.popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    try:
        assert referee.stdout is not None
        assert referee.stdout.readline() == b"started\n"
        deadline = time.monotonic() + scaled(5)
        while not pidfile() and time.monotonic() < deadline:
            time.sleep(0.01)
        referee.terminate()
        assert referee.wait(scaled(10)) == 128 + signal.SIGTERM
    finally:
        referee.kill()
        referee.wait()
        if referee.stdout:
            referee.stdout.close()
    assert len(pidfile()) == 1 and wait_gone(pidfile()) == []


def test_a_failing_stderr_callback_never_stops_the_draining(tmp_path: Path,
                                                            pidfile: Pids) -> None:
    def broken(line: str) -> None:
        raise RuntimeError("transcript bug")

    code = "import sys\nfor i in range(20000): sys.stderr.write('x' * 99 + '\\n')\nprint('done')"
    proc = start_bot([sys.executable, "-c", code], stderr_path=str(tmp_path / "log"),
                     on_stderr=broken)
    try:
        assert proc.wait(scaled(10.0)) == 0  # 2 MB of stderr: it would block if nobody read
        assert read_all(proc.stdout_fd) == b"done\n"
    finally:
        proc.end()
        os.close(proc.stdin_fd)
        os.close(proc.stdout_fd)


def test_the_stderr_tail_has_what_is_still_in_the_pipe_when_the_bot_exits() -> None:
    # A crash fault quotes the bot's last stderr lines.  Under load, the reader thread
    # may not have drained the pipe when the fault is written (here it is held up
    # telling the first line): the tail is read with a bounded drain first.
    r, w = os.pipe()
    entered, release = threading.Event(), threading.Event()

    def on_line(line: str) -> None:
        if line == "starting":  # held up telling the first line only
            entered.set()
            release.wait(scaled(10))

    log = StderrLog(r, None, on_line=on_line)
    try:
        os.write(w, b"starting\n")
        assert entered.wait(scaled(10))
        os.write(w, b"Traceback (most recent call last):\nMemoryError\n")
        os.close(w)
        log.drain()
        assert log.tail().splitlines()[-1] == "MemoryError"
    finally:
        release.set()
        log.join(5)
