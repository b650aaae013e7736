"""Shared pytest configuration: the suite's own signals and the ``children`` fixture
that owns the processes a test starts (tests/procs.py says why), ``league_server``
(a real ``league serve`` owned by the test), the ``--regen-golden`` option
(tests/golden/), and ``remote_bot``, the test bot started as a remote bot's author
would start it."""

from __future__ import annotations

import compileall
import contextlib
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import referee
from tests.league import servehelpers
from tests.procs import Children, own_signals

ZMQ_BOT = [sys.executable, str(Path(__file__).parent / "transport" / "zmq" / "zmq_bot.py")]


def pytest_configure(config: pytest.Config) -> None:
    """Before any test (in the controller and in every xdist worker): the children of
    this process start with SIGINT and SIGTERM at their defaults, even when the suite
    was started with them ignored (from a background job).  And once (in the
    controller): the package is byte-compiled, as Python itself does on a first
    import unless told not to (PYTHONDONTWRITEBYTECODE): the suite starts the
    referee, its workers and its built-in bots hundreds of times, and each start
    would otherwise compile every module it imports again."""
    own_signals()
    if not hasattr(config, "workerinput"):
        compileall.compile_dir(Path(referee.__file__).parent, quiet=1)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tests marked slow first, then the rest, each part in its own order (a stable
    sort; the same in every xdist worker): the quick tests come last and fill in
    while the long ones end, so that both workers finish together instead of one
    playing the last long test alone."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


@pytest.fixture
def children() -> Iterator[Children]:
    """Starts processes for a test (``children.popen(args, **kw)``, each in a session
    of its own) and kills every group still running when the test ends, also when it
    failed."""
    owner = Children()
    try:
        yield owner
    finally:
        owner.close()


@pytest.fixture
def league_server(children: Children) -> Iterator[Callable[..., servehelpers.Served]]:
    """``start(league, *args, keys=None)``: ``referee league serve LEAGUE ARGS`` on a
    loopback port, running once it says where it listens, its log read as it comes
    (``Served``; tests/league/servehelpers.py).  Each is stopped with a Ctrl-C when
    the test ends (or by ``Served.stop``), and killed with its group by ``children``
    if it does not stop, also when the test failed."""
    with contextlib.ExitStack() as stack:
        def start(league: Path, *args: str | Path,
                  keys: Path | None = None) -> servehelpers.Served:
            return stack.enter_context(
                servehelpers.league_server(children, league, *args, keys=keys))

        yield start


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
def remote_bot(tmp_path: Path,
               children: Children) -> Iterator[Callable[..., subprocess.Popen[bytes]]]:
    """``start(endpoint, name, env=None, *extra)``: tests/transport/zmq/zmq_bot.py connecting to
    ``endpoint`` with the hello name ``name``, as its author would start it -- no
    UPDOWN_ variable but those in ``env`` (its keys), its messages logged to
    ``tmp_path``, ``extra`` arguments for its misbehaviours.  It connects (and keeps
    trying) whether or not the referee listens yet.  Killed at the end of the test."""
    procs: list[subprocess.Popen[bytes]] = []  # counted, for the log files' names

    def start(endpoint: str, name: str, env: dict[str, str] | None = None,
              *extra: str) -> subprocess.Popen[bytes]:
        e = {k: v for k, v in os.environ.items() if not k.startswith("UPDOWN_")}
        e.update(env or {})
        p = children.popen([*ZMQ_BOT, "--connect", endpoint, "--name", name,
                            "--log", str(tmp_path / f"{name}-{len(procs)}.log"), *extra],
                           env=e, stderr=subprocess.DEVNULL)
        procs.append(p)
        return p

    yield start  # the children fixture kills them
