"""Fixtures for protocol tests: fake bot commands and the check that no process a
test started is left running (pids recorded by the fake bots in a pid file)."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from referee.players.process import alive, live_bots
from tests.procs import scaled

BOTS = Path(__file__).resolve().parent.parent / "bots"


def bot_command(script: str, *args: str) -> list[str]:
    """The command of a fake bot in tests/bots/ (Python ones run by this Python)."""
    path = str(BOTS / script)
    if script.endswith(".py"):
        return [sys.executable, path, *args]
    return [path, *args]


def wait_gone(pids: list[int], within: float = 2.0) -> list[int]:
    """The pids still alive after up to ``within`` seconds (init reaps orphans)."""
    deadline = time.monotonic() + scaled(within)
    while True:
        left = [p for p in pids if alive(p)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.01)


@pytest.fixture
def pidfile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], list[int]]]:
    """Sets FAKEBOT_PIDFILE for the bots a test starts; yields a function reading the
    pids written so far.  After the test: every one of them must be gone."""
    path = tmp_path / "pids"
    path.touch()
    monkeypatch.setenv("FAKEBOT_PIDFILE", str(path))

    def read() -> list[int]:
        return [int(x) for x in path.read_text().split()]

    before = set(map(id, live_bots()))  # other tests may have left some: not ours
    yield read
    leaked = [b for b in live_bots() if id(b) not in before]
    for b in leaked:  # never leave a bot to the next test, even when this one failed
        b.end(0.2)
    assert not leaked, f"bots not ended by the test: {[b.command for b in leaked]}"
    left = wait_gone(read())
    for pid in left:
        os.kill(pid, 9)
    assert not left, f"processes left running: {left}"
