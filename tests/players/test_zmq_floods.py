"""A launched ZeroMQ bot (the direct ZMTP path) flooding the referee with what costs it
the most to read and the least to send (issue 21, the bot attacker's F0, F1, F2).

The ZMTP command allowance (``direct._COMMAND_BURST``) is lifted here, so the PINGs
keep coming: what is tested is that the clock holds *whatever* arrives -- the
allowance itself is tested against the real sandbox in
tests/players/sandbox/test_attacks.py.  The bot (tests/bots/attack_zmtp.py ``pings``)
floods on each request for far longer than the test waits (it is ended at the end):
before the fix a ``recv`` read its PINGs until the flood ended and then returned its
decision, charged nothing (``--concurrency``) or past its deadline (one game).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from referee.bots import make_bot
from referee.game import GameConfig
from referee.play.runner import (
    FaultPolicy,
    GameRecord,
    InProcessPlayer,
    TimeControl,
    game_steps,
    run_game,
)
from referee.players.concurrent import GameLoop
from referee.players.external import zmq_player
from referee.players.launcher import launch_zmq_bot
from referee.transport.base import TransportTimeout
from referee.transport.zmq import direct
from tests.procs import scaled

ATTACK = str(Path(__file__).resolve().parents[1] / "bots" / "attack_zmtp.py")
FLOOD = f"{scaled(120):g}"  # seconds of PINGs per request: longer than any test here
TC = TimeControl(startup=scaled(20.0), per_decision=scaled(0.3), bank=0.0)


@pytest.fixture
def no_allowance(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(direct, "_COMMAND_BURST", 1 << 40)


def _flooder(name: str = "flooder") -> Any:
    return zmq_player(name, [sys.executable, ATTACK, "pings", FLOOD], env=dict(os.environ),
                      time_control=TC, memory_mb=None)


def test_recv_gives_up_at_its_deadline_while_pings_keep_coming(no_allowance: None) -> None:
    """``recv(t)`` raises TransportTimeout at its deadline, and ``recv(0)`` at once, while
    the bot is still flooding (before: both read PINGs until the flood ended, then
    returned the decision the bot sent after it)."""
    bot = launch_zmq_bot([sys.executable, ATTACK, "pings", FLOOD], env=dict(os.environ))
    t = bot.transport
    try:
        assert t.recv(scaled(20))["type"] == "hello"
        t.send({"type": "request", "id": 1, "seat": 0, "observation": {}, "legal": ["a"],
                "events": [], "time_left": 0.2})
        before = t.received_bytes
        for wait in (scaled(0.3), 0.0, scaled(0.3), 0.0):
            with pytest.raises(TransportTimeout):
                t.recv(wait)
        assert t.received_bytes > before + 9 * 1000  # it was flooding all along
        assert bot.process.returncode is None  # and it still is
    finally:
        bot.close()


def _decisions(rec: GameRecord, seat: int) -> list[dict[str, Any]]:
    return [d for d in rec.decisions if d["seat"] == seat]


def _held_to_its_deadline(rec: GameRecord) -> None:
    """The flooder (seat 0) answered nothing in time: each of its turns is a timeout
    charged its whole ``time_left``, until it forfeits by its strikes."""
    mine = [f for f in rec.faults if f.seat == 0]
    assert mine and all(f.kind == "timeout" for f in mine), mine
    assert mine[-1].action == "forfeit", mine
    assert rec.result is not None and list(rec.result.forfeits) == [0]
    timed = _decisions(rec, 0)[: len(mine)]
    assert all(d.get("substituted") for d in timed), timed
    assert all(d["ms"] >= TC.per_decision * 1000 for d in timed), timed


def test_a_ping_flood_does_not_hold_the_deadline_of_one_game(no_allowance: None) -> None:
    p = _flooder()
    try:
        rec = run_game(GameConfig(players=2), 7, [p, InProcessPlayer(make_bot("lowest"))],
                       time_control=TC, policy=FaultPolicy("substitute", 3))
    finally:
        p.close()
    _held_to_its_deadline(rec)


def test_a_ping_flood_is_charged_with_games_in_flight(no_allowance: None) -> None:
    """Two games in one ``GameLoop`` (``--concurrency``): the flooder's and an honest
    ZeroMQ bot's.  The flooder is charged its whole ``time_left`` per turn and
    forfeits on its strikes (before: it answered after the flood, charged ~0 s, no
    fault); the honest bot's game is untouched."""
    honest = zmq_player("honest", [sys.executable, ATTACK, "honest", "0"],
                        env=dict(os.environ), time_control=TC, memory_mb=None)
    p = _flooder()
    got: dict[int, tuple[GameRecord | None, BaseException | None]] = {}
    loop = GameLoop()
    try:
        for g, seats in enumerate([[p, InProcessPlayer(make_bot("lowest"))],
                                   [honest, InProcessPlayer(make_bot("lowest"))]]):
            loop.start(game_steps(GameConfig(players=2), 7, seats, time_control=TC,
                                  policy=FaultPolicy("substitute", 3)),
                       lambda rec, err, g=g: got.__setitem__(g, (rec, err)))
        loop.run()
    finally:
        loop.close()
        p.close()
        honest.close()
    (flooded, e1), (calm, e2) = got[0], got[1]
    assert e1 is None and e2 is None and flooded is not None and calm is not None
    _held_to_its_deadline(flooded)
    assert calm.faults == [] and calm.result is not None


def test_a_ping_flood_loses_on_the_game_clock_with_games_in_flight(no_allowance: None) -> None:
    """With a game clock (``[time] game``) and games in flight, the flooder's turns
    are taken from its clock as they last: it loses on time (a forfeit) once two
    turns and a half of thinking are spent (before: charged ~0 s a decision, its
    clock never ran out)."""
    tc = TimeControl(startup=scaled(20.0), per_decision=scaled(0.3), bank=0.0,
                     game=scaled(0.75))
    p = zmq_player("flooder", [sys.executable, ATTACK, "pings", FLOOD], env=dict(os.environ),
                   time_control=tc, memory_mb=None)
    got: list[tuple[GameRecord | None, BaseException | None]] = []
    loop = GameLoop()
    try:
        for seed in (7, 8):  # the flooder's game, and one of two built-ins beside it
            seats = [p, InProcessPlayer(make_bot("lowest"))] if seed == 7 else \
                [InProcessPlayer(make_bot("lowest")), InProcessPlayer(make_bot("random"))]
            loop.start(game_steps(GameConfig(players=2), seed, seats, time_control=tc,
                                  policy=FaultPolicy("substitute", 100)),
                       lambda rec, err: got.append((rec, err)))
        loop.run()
    finally:
        loop.close()
        p.close()
    [rec] = [r for r, _ in got if r is not None and p.name in r.bots]
    mine = [f for f in rec.faults if f.seat == 0]
    assert [f.kind for f in mine] == ["timeout"] * len(mine) and len(mine) == 3, mine
    assert "game clock: lost on time" in mine[-1].detail and mine[-1].action == "forfeit", mine
    assert rec.result is not None and list(rec.result.forfeits) == [0]


def test_pings_before_the_hello_count_too() -> None:
    """A connection that floods PINGs before its READY and its hello (where nobody is
    asked anything yet) is refused at the allowance like any other: its socket is
    closed, and the wait for the bot says a connection was refused."""
    t = direct.DirectZmqTransport(token="t")
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        c.connect(t.path)
        ping = bytes([4, 7]) + b"\x04PING\x00\x00"
        c.sendall(direct._GREETING + ping * (direct._COMMAND_BURST + 50))
        with pytest.raises(TransportTimeout, match=r"\(1 connection\(s\) refused"):
            t.recv(scaled(0.5))
        assert t.impostors == 1
        c.settimeout(scaled(10))
        got = b""
        while data := c.recv(1 << 16):  # its greeting, READY and PONGs, then its end
            got += data
        assert got.startswith(direct._GREETING)
    finally:
        c.close()
        t.close()


EMFILE_SCRIPT = r"""
import json, os, resource, socket, sys, time
from referee.transport.base import TransportTimeout
from referee.transport.zmq.direct import DirectZmqTransport
wait = float(sys.argv[1])
t = DirectZmqTransport(token="t")
calls = [0]
read_all = t._read_all
def counted(*args):
    calls[0] += 1
    read_all(*args)
t._read_all = counted
client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
fds = sorted(int(x) for x in os.listdir("/proc/self/fd"))
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (fds[-1] + 1, hard))
filler = []
try:
    while True:  # every free descriptor under the limit taken: accept gets EMFILE
        filler.append(os.open("/dev/null", os.O_RDONLY))
except OSError:
    pass
client.connect(t.path)  # waits in the backlog; the listener stays readable
try:
    t.recv(wait)
    out = "message"
except TransportTimeout as e:
    out = str(e)
print(json.dumps({"out": out, "calls": calls[0]}))
"""


def test_out_of_descriptors_the_startup_wait_neither_spins_nor_outlasts_its_limit() -> None:
    """``accept`` failing with EMFILE (the referee out of descriptors: a connection
    waits in the backlog, the listener stays readable).  Before, the wait for the hello
    spun on it (57,000 failing reads in 3 s) and never timed out; now the listener is
    not looked at for 0.1 s after each failure, and the wait ends at its limit."""
    wait = scaled(1.0)
    out = subprocess.run([sys.executable, "-c", EMFILE_SCRIPT, str(wait)], capture_output=True,
                         text=True, timeout=scaled(60), check=True)
    got = json.loads(out.stdout)
    assert got["out"].startswith("no message within"), got
    # One look at the listener per pause (0.1 s), and a few more: before, thousands.
    assert got["calls"] <= wait / direct._ACCEPT_PAUSE + 5, got


def test_a_quiet_spell_banks_no_command_allowance() -> None:
    """The allowance is a bucket of 100 refilled at 100 a second and never past full
    (the bot attacker, round 2: averaged since the connection began, a long match
    banked it, and 3,895 PINGs after 40 s cost 1.41 CPU-s and no fault).  A
    connection sends 50 PINGs, is quiet for 2 s (worth 200 more on the old average),
    then sends 150 at once: the 101st of them is refused."""
    t = direct.DirectZmqTransport(token="t")
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ping = bytes([4, 7]) + b"\x04PING\x00\x00"
    pong = bytes([4, 5]) + b"\x04PONG"
    try:
        c.connect(t.path)
        c.sendall(direct._GREETING + ping * 50)
        c.settimeout(scaled(10))
        got = b""
        while got.count(pong) < 50:  # the first 50 read and answered
            with pytest.raises(TransportTimeout):
                t.recv(0.05)
            with contextlib.suppress(socket.timeout):
                c.settimeout(0.05)
                got += c.recv(1 << 16)
        assert t.impostors == 0
        time.sleep(2.0)  # the quiet spell: the point of the test
        c.sendall(ping * 150)
        with pytest.raises(TransportTimeout, match=r"\(1 connection\(s\) refused"):
            t.recv(scaled(0.5))
        assert t.impostors == 1
    finally:
        c.close()
        t.close()


def test_connections_closed_one_after_another_are_not_open_at_once() -> None:
    """Five connections made and closed one after another before the referee looked
    (the bot attacker, round 2: the fault said "5 connections open at once" of
    sequential ones).  The ones the bot closed are not counted as open: the start
    goes on (before: the endpoint was closed, 'made 5 connections open at once')."""
    t = direct.DirectZmqTransport(token="t")
    try:
        for _ in range(direct._MAX_PENDING + 1):
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            c.connect(t.path)
            c.sendall(direct._GREETING)
            c.close()
        with pytest.raises(TransportTimeout):  # not TransportClosed: no cut
            t.recv(scaled(0.3))
        assert t.connections == direct._MAX_PENDING + 1
    finally:
        t.close()
