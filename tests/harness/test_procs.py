"""The suite's own harness (tests/procs.py): its children start with SIGINT and SIGTERM
at their defaults wherever the suite was started, and the ``children`` fixture leaves
no process behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.procs import Children, scaled

REPO = Path(__file__).resolve().parents[2]

# Started with SIGINT and SIGTERM ignored (as from a background job), this process
# starts a child and prints the signals that child ignores (its SigIgn mask).
PROBE = """
import subprocess, sys
from tests.procs import own_signals
if sys.argv[1] == "own":
    own_signals()
print(subprocess.run(["grep", "^SigIgn:", "/proc/self/status"], capture_output=True,
                     text=True, check=True).stdout.split()[1])
"""


def _ignored_by_grandchild(own: bool) -> set[int]:
    done = subprocess.run(
        ["sh", "-c", "trap '' INT TERM; exec \"$0\" -c \"$1\" \"$2\"", sys.executable, PROBE,
         "own" if own else "leave"], capture_output=True, text=True, cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=scaled(60))
    assert done.returncode == 0, done.stderr
    mask = int(done.stdout.strip(), 16)
    return {s for s in (signal.SIGINT, signal.SIGTERM) if mask & (1 << (s - 1))}


def test_children_of_a_suite_started_with_sigint_ignored_do_not_ignore_it() -> None:
    assert _ignored_by_grandchild(own=False) == {signal.SIGINT, signal.SIGTERM}  # the trap
    assert _ignored_by_grandchild(own=True) == set()


def test_this_suites_children_do_not_ignore_sigint(children: Children) -> None:
    p = children.popen(["grep", "^SigIgn:", "/proc/self/status"], stdout=subprocess.PIPE,
                       text=True)
    out, _ = p.communicate(timeout=scaled(30))
    mask = int(out.split()[1], 16)
    assert not mask & (1 << (signal.SIGINT - 1)) and not mask & (1 << (signal.SIGTERM - 1))


def test_children_kills_the_whole_group_of_what_it_started(tmp_path: Path) -> None:
    owner = Children()
    pidfile = tmp_path / "pid"
    # a process that ignores SIGTERM and leaves a grandchild in its group
    p = owner.popen(["sh", "-c", f"trap '' TERM; sleep 600 & echo $! > {pidfile}; wait"])
    while not pidfile.exists() or not pidfile.read_text().strip():
        assert p.poll() is None
        time.sleep(0.01)  # polling for another process's progress
    grandchild = int(pidfile.read_text())
    owner.close()
    assert p.returncode == -signal.SIGKILL
    deadline = time.monotonic() + scaled(10)
    while _state(grandchild) not in ("gone", "Z"):  # gone, or a zombie awaiting init
        assert time.monotonic() < deadline, f"{grandchild} outlived its group"
        time.sleep(0.01)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2]
    except FileNotFoundError:
        return "gone"
