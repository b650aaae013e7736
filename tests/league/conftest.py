"""Fixtures of the league tests: the installed command, and the sandbox a league
needs (outside CI, a machine without it skips the tests that play real bots; in CI
it fails)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from referee.players.sandbox import SandboxConfig, SandboxError, resolve
from tests.procs import scaled


def referee_command() -> str:
    """The installed ``referee`` script, next to the running interpreter."""
    found = shutil.which("referee", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail("the referee command is not installed next to this Python: run make test")
    return found


def env_for_subprocess() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    return env


@pytest.fixture
def need_sandbox() -> None:
    try:
        resolve(SandboxConfig(mode="on"))
    except SandboxError as e:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI needs the sandbox: {e}")
        pytest.skip(str(e))


Referee = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def referee(tmp_path: Path) -> Referee:
    """``referee(*args)``: the installed command, run to its end (text out and err)."""
    exe = referee_command()

    def run(*args: str | Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return subprocess.run([exe, *map(str, args)], capture_output=True, text=True,
                              env=env_for_subprocess(), timeout=scaled(timeout), cwd=tmp_path)

    return run


@pytest.fixture(scope="session")
def made_keys(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The keys of ``keys``, made once by the installed command (``referee keys``)."""
    k = tmp_path_factory.mktemp("keys")
    (k / "bots").mkdir(parents=True)

    def run(*args: str | Path) -> None:
        r = subprocess.run([referee_command(), *map(str, args)], capture_output=True,
                           text=True, env=env_for_subprocess(), timeout=scaled(300))
        assert r.returncode == 0, r.stdout + r.stderr

    run("keys", "server", "--out", k)
    for who in ("alice", "bob", "mallory"):
        run("keys", "new", who, "--out", k / "authors")
    for who in ("alice", "bob"):  # mallory's key is not the league's
        (k / "bots" / f"{who}.key").write_bytes((k / "authors" / f"{who}.key").read_bytes())
    return k


@pytest.fixture
def keys(tmp_path: Path, made_keys: Path) -> Path:
    """The league server's keys and three authors' (``keys/authors/NAME.key*``);
    the league admits alice and bob (``keys/bots``), not mallory.  A copy of the
    test's own (it may add or remove keys) of the keys made once a session."""
    k = tmp_path / "keys"
    shutil.copytree(made_keys, k)
    return k
