"""Chaos over ZeroMQ: real tournaments with bots that misbehave at random
(tests/bots/chaos_zmq.py) -- bots the referee launches (``transport = "zmq"``) and
remote bots that connect to the tournament on loopback, started (and started again
when they exit) as their author would -- checking the same promise as the stdio
chaos tests (tests/tournament/test_tournament_chaos.py, whose checks these share):
bad bot input never crashes the referee and never loses a result; every fault has
a documented kind and names the bot; forfeits follow the fault policy; standings
add up; a remote bot that lost its connection and connects again plays on; and
afterwards no process the referee started is left running and no ipc socket file
is left behind.  Tournaments run through the library with two worker processes;
a match runs through the installed ``referee play``.

Every chaos bot is seeded (``SEED``, CHAOS_TEST_SEED=N as for the stdio tests, and
one seed per bot).  A launched bot's games go the same way with the same seeds; a
remote bot's also depend on when it (re)connects.  Nothing here asserts how long
anything took.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.players.process import live_bots
from tests.procs import scaled
from tests.tournament import test_tournament_chaos as stdio_chaos  # the checks are shared

pytestmark = pytest.mark.slow

SEED = stdio_chaos.SEED
config = stdio_chaos.config
CHAOS = Path(__file__).resolve().parents[2] / "bots" / "chaos_zmq.py"

#: Misbehaviour mixes (see chaos_zmq.py): everything; mostly the bot's end (its
#: process or its connection); mostly frames that are no message; mostly noise the
#: referee must tolerate without a fault; a remote bot's: everything but what would
#: leave it gone for good, which is the author's business (children, a SIGSTOP, a
#: closed socket in a live process) -- it exits, or connects again, instead.
MIXES = {
    "all": "default",
    "deadly": "index=8,exit=1,orphan=1,close=1,reply_exit=1,freeze=0.3,spawn=0.5,slow=1,"
              "silent=1,reconnect=1,huge=0.3",
    "garbage": "index=4,notmsgpack=1,nonmap=1,fields=1,multipart=1,nested=1,huge=3,"
               "longtext=0.5,protocol=1,illegal=1,syntax=1,range=1,silent=0.5",
    "noisy": "index=6,text=3,stdout=2,duplicate=2,wrong_id=2,flood=1,spawn=0.5,slow=0.3,"
             "illegal=0.3",
    "remote": "default,orphan=0,spawn=0,freeze=0,close=0,reconnect=2,exit=1",
}


def chaos_bot(name: str, mix: str, seed: int, piddir: Path, startup: str = "hello"
              ) -> dict[str, Any]:
    """A launched chaos bot's [[bots]] table."""
    return {"name": name, "transport": "zmq",
            "command": [sys.executable, str(CHAOS), "--seed", str(seed), "--mix", MIXES[mix],
                        "--startup", startup, "--name", name],
            "env": {"CHAOS_PIDDIR": str(piddir)},
            # Unsandboxed: its notes of its processes go to the host's piddir (the
            # sandbox itself is attacked in tests/players/sandbox/).
            "sandbox": "off"}


@pytest.fixture
def piddir(tmp_path: Path) -> Iterator[Path]:
    """Where the launched chaos bots note their processes (as in the stdio chaos
    tests): none may be left running, nor any bot the referee did not end."""
    d = tmp_path / "pids"
    d.mkdir()
    before = set(map(id, live_bots()))
    yield d
    leaked = [b for b in live_bots() if id(b) not in before]
    for b in leaked:
        b.end(0.2)
    left = stdio_chaos.left_running(d)
    stdio_chaos.kill_left(d)
    assert not leaked, f"bots not ended: {[b.command for b in leaked]}"
    assert not left, f"processes left running (seed {SEED}): {left}"


@pytest.fixture
def tmpdir_short(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The temporary folder of the referee and its workers for the test (where the
    launched bots' ipc socket folders go): short, since an ipc path is at most 107
    bytes.  It must be empty afterwards."""
    d = Path(tempfile.mkdtemp(prefix="zchaos-"))
    monkeypatch.setenv("TMPDIR", str(d))
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    yield d
    left = sorted(str(p.relative_to(d)) for p in d.rglob("*"))
    shutil.rmtree(d, ignore_errors=True)
    assert not left, f"left in the temporary folder (seed {SEED}): {left}"


class Authors:
    """Remote chaos bots, each kept running as its author would: started again
    whenever it exits (at most ``MAX_STARTS`` times), until ``close``."""

    MAX_STARTS = 60

    def __init__(self, logs: Path, piddir: Path) -> None:
        self.logs = logs
        self.piddir = piddir
        self.stop = threading.Event()
        self.threads: list[threading.Thread] = []
        self.procs: list[subprocess.Popen[bytes]] = []
        self.lock = threading.Lock()

    def start(self, endpoint: str, name: str, mix: str, seed: int,
              startup: str = "default", routing_id: str | None = None) -> None:
        command = [sys.executable, str(CHAOS), "--connect", endpoint, "--seed", str(seed),
                   "--mix", MIXES[mix], "--startup", startup, "--name", name]
        if routing_id is not None:  # its own, the same at every start
            command += ["--routing-id", routing_id]
        env = {k: v for k, v in os.environ.items() if not k.startswith("UPDOWN_")}
        env["CHAOS_PIDDIR"] = str(self.piddir)
        t = threading.Thread(target=self._keep, args=(command, env, name), daemon=True)
        t.start()
        self.threads.append(t)

    def _keep(self, command: list[str], env: dict[str, str], name: str) -> None:
        with open(self.logs / f"{name}.stderr.log", "ab") as log:
            for _ in range(self.MAX_STARTS):
                with self.lock:
                    if self.stop.is_set():
                        return
                    p = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=log,
                                         start_new_session=True)
                    self.procs.append(p)
                while p.poll() is None:
                    if self.stop.wait(0.02):
                        return

    def close(self) -> None:
        with self.lock:
            self.stop.set()
        for p in self.procs:
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        for t in self.threads:
            t.join(5)


@pytest.fixture
def authors(tmp_path: Path) -> Iterator[Authors]:
    d = tmp_path / "remote-pids"
    d.mkdir()
    a = Authors(tmp_path, d)
    yield a
    a.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def remote_section(endpoint: str) -> dict[str, Any]:
    """Loopback without keys; a bot that lost its connection is waited for a few
    seconds (it is started again, or connects again, at once)."""
    return {"listen": endpoint, "wait": 20, "rewait": 10}


def check_remote(out: Path, names: set[str], why: str) -> None:
    """A remote bot that lost its connection (or was refused) and connected again
    played on: it was never waited for in vain."""
    faults = [f for (fj,) in stdio_chaos.rows(out / "tournament.sqlite",
                                              "SELECT faults FROM games")
              for f in json.loads(fj) if f["bot"] in names]
    missed = [f["detail"] for f in faults if "did not connect" in f["detail"]]
    assert not missed, f"{why}: a remote bot that came back was not taken: {missed[:3]}"
    assert any(f["kind"] == "crash" for f in faults), (
        f"{why}: no remote bot lost its connection: {faults}")


def test_zmq_chaos_tournament_two_seats(tmp_path: Path, piddir: Path,
                                        tmpdir_short: Path) -> None:
    bots = [chaos_bot("zchaos-all", "all", SEED + 20, piddir, startup="default"),
            chaos_bot("zchaos-deadly", "deadly", SEED + 21, piddir),
            chaos_bot("zchaos-garbage", "garbage", SEED + 22, piddir),
            {"name": "heuristic", "builtin": "heuristic"},
            {"name": "random", "builtin": "random"}]
    raw = config(seats=2, bots=bots, faults={"strike_limit": 3})
    kinds = stdio_chaos.run_library(tmp_path, piddir, raw, f"zmq, 2 seats, seed {SEED}")
    assert {"crash", "malformed", "oversized", "protocol", "illegal", "timeout"} <= set(kinds), (
        f"seed {SEED}: not every fault kind happened: {kinds}")


def test_zmq_chaos_tournament_four_seats(tmp_path: Path, piddir: Path,
                                         tmpdir_short: Path) -> None:
    bots = [chaos_bot("zchaos-all", "all", SEED + 23, piddir, startup="default"),
            chaos_bot("zchaos-noisy", "noisy", SEED + 24, piddir),
            chaos_bot("zchaos-deadly", "deadly", SEED + 25, piddir),
            {"name": "lowest", "builtin": "lowest"}]
    raw = config(seats=4, bots=bots, faults={"strike_limit": 1}, deals=2)
    stdio_chaos.run_library(tmp_path, piddir, raw, f"zmq, 4 seats, seed {SEED}")


def test_zmq_chaos_remote_bots_two_seats(tmp_path: Path, piddir: Path, tmpdir_short: Path,
                                         authors: Authors) -> None:
    endpoint = f"ipc://{tmpdir_short}/remote"
    authors.start(endpoint, "rchaos-a", "remote", SEED + 30, routing_id="rchaos-a")
    bots = [{"name": "rchaos-a", "remote": True},
            chaos_bot("zchaos-deadly", "deadly", SEED + 31, piddir),
            {"name": "heuristic", "builtin": "heuristic"},
            {"name": "random", "builtin": "random"}]
    raw = {**config(seats=2, bots=bots, faults={"strike_limit": 3}),
           "remote": remote_section(endpoint)}
    why = f"remote, 2 seats, seed {SEED}"
    stdio_chaos.run_library(tmp_path, piddir, raw, why)
    check_remote(tmp_path / "out", {"rchaos-a"}, why)


def test_zmq_chaos_remote_bots_four_seats(tmp_path: Path, piddir: Path, tmpdir_short: Path,
                                          authors: Authors) -> None:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    authors.start(endpoint, "rchaos-a", "remote", SEED + 32)
    authors.start(endpoint, "rchaos-b", "remote", SEED + 33, startup="hello",
                  routing_id="rchaos-b")
    bots = [{"name": "rchaos-a", "remote": True},
            {"name": "rchaos-b", "remote": True},
            chaos_bot("zchaos-garbage", "garbage", SEED + 34, piddir),
            {"name": "heuristic", "builtin": "heuristic"}]
    raw = {**config(seats=4, bots=bots, faults={"strike_limit": 2}, deals=2),
           "remote": remote_section(endpoint)}
    why = f"remote, 4 seats, seed {SEED}"
    stdio_chaos.run_library(tmp_path, piddir, raw, why)
    check_remote(tmp_path / "out", {"rchaos-a", "rchaos-b"}, why)


def test_zmq_chaos_games_over_referee_play(tmp_path: Path, piddir: Path, tmpdir_short: Path,
                                           authors: Authors) -> None:
    """The installed command, a match among launched (``zmq:COMMAND``) and remote
    (``remote:NAME``) chaos bots, with a transcript."""
    endpoint = f"ipc://{tmpdir_short}/play"
    # (its first hello must be good: referee play stops before the first game when a
    # remote bot does not start properly)
    authors.start(endpoint, "rchaos-p", "remote", SEED + 40, startup="hello")
    seats = [f"zchaos-{mix}=zmq:{sys.executable} {CHAOS} --seed {SEED + 41 + i} --mix "
             f"{MIXES[mix]} --startup {'default' if i == 0 else 'hello'} --name zchaos-{mix}"
             for i, mix in enumerate(("all", "deadly"))]
    transcript = tmp_path / "transcript.txt"
    p = stdio_chaos.run(
        "play", *seats, "remote:rchaos-p", "heuristic", "--games", "3", "--seed", str(SEED),
        "--listen", endpoint, "--wait", str(scaled(20)), "--move-time", "0.1", "--bank", "0.1",
        "--startup", str(scaled(10)), "--transcript", "--transcript-file", str(transcript),
        "--no-colour", "--json", "--record-dir", str(tmp_path / "records"),
        env={"CHAOS_PIDDIR": str(piddir)})
    why = f"referee play over ZeroMQ, seed {SEED}"
    assert p.returncode == 0, f"{why}: exit {p.returncode}: {p.stderr[-3000:]}"
    assert "Traceback" not in p.stderr, f"{why}: {p.stderr[-3000:]}"
    data = json.loads(p.stdout)
    lines = transcript.read_text().splitlines()
    assert len(data["games"]) == 3, why
    for game in data["games"]:
        where = f"{why}, game {game['game_id']}"
        names = game["bots"]
        for f in game["faults"]:
            stdio_chaos.check_fault(f, names, where)
            what = "CRASHED" if f["kind"] == "crash" else f"REJECTED {f['kind']}"
            line = (f"{what} at turn {f['turn']}: {f['detail']} "
                    f"[{f['action']}]")
            assert any(f" XX {f['bot']}" in x and x.endswith(line) for x in lines
                       ), f"{where}: no transcript line {line!r}"
        stdio_chaos.check_policy(game["faults"], game["forfeits"], game["places"], {}, where)
        ok, diff = stdio_chaos.replay_check(Path(game["record"]).read_text().splitlines())
        assert ok, f"{where}: {diff}"
    assert sum(len(g["faults"]) for g in data["games"]) > 0, why
    assert stdio_chaos.left_running(piddir) == [], f"{why}: processes left running"
