"""Shared pytest configuration: the ``--regen-golden`` option (tests/golden/), and
``remote_bot``, the test bot started as a remote bot's author would start it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ZMQ_BOT = [sys.executable, str(Path(__file__).parent / "zmq" / "zmq_bot.py")]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The test run is this program's entry point: no bot outlives it."""
    from referee.players.process import end_all

    end_all()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--regen-golden",
        action="store_true",
        default=False,
        help="rewrite the golden playthrough files under tests/golden/ instead of diffing",
    )


@pytest.fixture
def regen_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--regen-golden"))


@pytest.fixture
def remote_bot(tmp_path: Path) -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    """``start(endpoint, name, env=None, *extra)``: tests/transport/zmq/zmq_bot.py connecting to
    ``endpoint`` with the hello name ``name``, as its author would start it -- no
    UPDOWN_ variable but those in ``env`` (its keys), its messages logged to
    ``tmp_path``, ``extra`` arguments for its misbehaviours.  It connects (and keeps
    trying) whether or not the referee listens yet.  Killed at the end of the test."""
    procs: list[subprocess.Popen[bytes]] = []

    def start(endpoint: str, name: str, env: dict[str, str] | None = None,
              *extra: str) -> subprocess.Popen[bytes]:
        e = {k: v for k, v in os.environ.items() if not k.startswith("UPDOWN_")}
        e.update(env or {})
        p = subprocess.Popen([*ZMQ_BOT, "--connect", endpoint, "--name", name,
                              "--log", str(tmp_path / f"{name}-{len(procs)}.log"), *extra],
                             env=e, stderr=subprocess.DEVNULL)
        procs.append(p)
        return p

    yield start
    for p in procs:
        p.kill()
        p.wait()
