"""Fixtures of the fence tests: the real sandbox (bubblewrap, cgroups, the seccomp
filter; outside CI a machine without them skips, in CI it fails), the system's
Python for the attacking bots (a bot run by the system's interpreter sees nothing of
the referee's own installation), and a way to run one bot to its end and read what
it said."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from referee.players.process import start_bot
from referee.players.sandbox import Sandbox, SandboxConfig
from tests.players.sandbox.conftest import need_sandbox

BOTS = Path(__file__).resolve().parent / "bots"
REPO = Path(__file__).resolve().parents[2]


def system_python() -> str:
    """/usr/bin/python3 (Debian's): the attacking bots' interpreter."""
    if os.path.exists("/usr/bin/python3"):
        return "/usr/bin/python3"
    if os.environ.get("CI") == "true":
        pytest.fail("CI needs /usr/bin/python3 (apt-get install python3)")
    pytest.skip("no /usr/bin/python3")


@pytest.fixture
def sandbox() -> Sandbox:
    sb = need_sandbox(SandboxConfig(mode="on", scratch_mb=16))
    assert sb.limits["syscalls"] == "seccomp"
    return sb


@dataclass
class Ran:
    code: int | None
    log: str  # the bot's stderr

    def said(self, word: str) -> list[str]:
        return [line.split(" ", 1)[1] for line in self.log.splitlines()
                if line.startswith(word + " ")]


def run_bot(sandbox: Sandbox, command: list[str], cwd: Path, *, timeout: float = 30,
            env: dict[str, str] | None = None) -> Ran:
    """Start ``command`` in ``sandbox`` from ``cwd``, wait for it to exit, and
    return its exit code and stderr."""
    fd, name = tempfile.mkstemp(prefix="stderr-", suffix=".log", dir=cwd.parent)
    os.close(fd)
    log = Path(name)
    proc = start_bot(command, cwd=str(cwd), sandbox=sandbox, stderr_path=str(log),
                     env=env)
    try:
        code = proc.wait(timeout)
    finally:
        proc.end()
    return Ran(code, log.read_text(errors="replace"))


def bot_folder(tmp_path: Path, *names: str) -> Path:
    """A bot folder holding the attacking bots ``names`` (copied from bots/)."""
    folder = tmp_path / "bot"
    folder.mkdir(exist_ok=True)
    for n in names:
        shutil.copy(BOTS / n, folder / n)
    return folder
