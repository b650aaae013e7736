"""Protocol speed: decisions/s between two trivial stdio bots, against the pipe floor.

Measures, in one run and pinned to one CPU (referee and bots alike: a referee and a
bot on different CPUs pay ~65 us more per round trip, which measures the machine,
not the referee):

1. ``stdio``: complete 2-player games between two trivial bots speaking JSON lines
   (each answers index 0 at once), via ``stdio_player`` and ``run_game``.  Start-up
   and handshake are outside the timing.
2. ``floor``: the raw round trip of a Python pipe ping-pong between two processes
   with messages of the same average sizes as (1)'s requests and replies -- no
   JSON, no protocol, no game.  Nothing built on pipes in Python can beat it.
3. ``engine``: the same games played in-process (no protocol at all), for scale.
4. ``ideal``: a referee with no work of its own -- it writes the very request lines
   that (1) sent, recorded beforehand, to the same trivial bots and decodes their
   replies; no game, no observation, no protocol state, no clock.  It is the lower
   bound for *any* referee sending these messages to these bots, so
   ``4 x floor - ideal`` is what the target leaves for all of the referee's own work
   (rules engine, observation, events, encoding, checking, timing).
5. ``zmq``: the same games over ZeroMQ (``referee.players.external``:
   ``bench_game_zmq``): msgpack over ``ipc://``, the referee speaking ZMTP in the
   game's own thread (``transport/zmq/direct.py``), and ``libzmq``: the same through
   a libzmq ROUTER and its I/O thread, for comparison; each as a ratio to ``stdio``
   (target: <= 1.5), with the referee's CPU per decision.

Prints us per decision and the ratios of issue 24's targets: stdio / ideal (<= 2),
the referee's CPU / the trivial bots' CPU (<= 1), zmq / stdio (<= 1.5), the
sandbox's extra start-up (<= +15 ms) and per decision (<= +5 %); and the ratio
stdio / floor of issue 3 (<= 4).  The machine is shared and noisy: the best of
``--repeat`` runs is reported, each figure measured in the same rounds as those it
is compared with.

``--startup-only`` measures only the sandbox's extra start-up (rounds of plain and
sandboxed starts taking turns).  ``--ablate`` measures, in place, what the referee's observation and events cost it:
its CPU per stdio decision as it is and with each made free (replaced by a constant
one of the same size, built once), rounds interleaved -- the most that building
them incrementally or from pre-encoded fragments could save.

``--breakdown`` also times each piece of a decision's work on its own, in one
process with warm caches (so the pieces add up to less than the ``stdio`` figure,
where the referee and the bots take turns on one CPU and evict each other's
caches): the engine (legal list, applying the decision), the observation, the
seat's events, the request message, its encoding, the bot's parsing of it, and
the reply's decoding and checking; for ZeroMQ, the pieces that differ (msgpack and
the ZMTP frame, the bot's unpacking, the reply's decoding).  Then the referee's CPU
per decision built up layer by layer (``layers``: the engine; + events and
observation; + the protocol written inline; + the runner; the referee as it is),
against instant bots answering in its own process, so that no bot's run evicts its
caches: what each layer adds is what that layer costs.

    .venv/bin/python bench/protocol.py                 # default sizes
    .venv/bin/python bench/protocol.py --games 100 --repeat 3 --cpu 0
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import msgpack  # noqa: E402

from referee.game import Game, GameConfig  # noqa: E402
from referee.game.events import events_for  # noqa: E402
from referee.play.runner import InProcessPlayer, TimeControl, run_game  # noqa: E402
from referee.players.external import (  # noqa: E402
    ExternalPlayer,
    _event_dicts,
    _event_fragments,
    bench_game_zmq,
    stdio_player,
)
from referee.players.sandbox import (  # noqa: E402
    Cgroup,
    Sandbox,
    SandboxConfig,
    SandboxError,
    resolve,
)
from referee.protocol import BotSession  # noqa: E402
from referee.transport.stdio import StdioTransport, encode, fragment  # noqa: E402

TRIVIAL_BOT = r"""
import sys
try:
    from orjson import dumps, loads
except ImportError:
    from json import loads
    from json import dumps as _d
    def dumps(x): return _d(x).encode()
out = sys.stdout.buffer
out.write(dumps({"type": "hello", "protocol": [1], "name": "trivial"}) + b"\n"); out.flush()
for line in sys.stdin.buffer:
    msg = loads(line)
    t = msg["type"]
    if t == "request":
        out.write(dumps({"type": "decision", "id": msg["id"], "decision": 0}) + b"\n")
        out.flush()
    elif t == "bye":
        break
"""

ECHO = r"""
import os
req, rep = int(os.sys.argv[1]), int(os.sys.argv[2])
reply = b"r" * (rep - 1) + b"\n"
buf = b""
while True:
    chunk = os.read(0, 1 << 16)
    if not chunk:
        break
    buf += chunk
    while b"\n" in buf:
        _, _, buf = buf.partition(b"\n")
        os.write(1, reply)
"""

TC = TimeControl(startup=30.0, per_decision=10.0, bank=0.0)
#: The interpreter itself, not the virtual environment's link to it inside this
#: folder (the sandbox shows a bot's folder at a neutral path of its own).
PYTHON = os.path.realpath(sys.executable)


class First:
    name = "first"

    def new_game(self, seed: int) -> None:
        pass

    def decide(self, observation: dict[str, Any], legal: list[Any]) -> Any:
        return legal[0]


def _cpu_of(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def bench_stdio(games: int, seed: int, requests: list[tuple[int, bytes]] | None = None,
                sandbox: Sandbox | None = None,
                ) -> tuple[float, int, float, float, float, float]:
    """(seconds, decisions, mean request bytes, mean reply bytes, referee CPU seconds,
    bots' CPU seconds) of the timed games.  ``requests``, if given, receives every
    request line of one untimed game with the same seed as the first timed one, with
    the seat it went to (for ``bench_ideal``)."""
    sizes: dict[str, list[int]] = {"send": [], "recv": []}

    def measure(direction: str, bot: str, payload: Any, ts: float) -> None:
        if direction in sizes and isinstance(payload, dict) and payload["type"] in (
                "request", "decision"):
            line = encode(payload)
            sizes[direction].append(len(line))
            if requests is not None and direction == "send":
                requests.append((int(bot[1:]), line))

    cmd = [PYTHON, "-c", TRIVIAL_BOT]
    seats: list[ExternalPlayer] = [stdio_player(f"t{i}", cmd, time_control=TC, memory_mb=None,
                                              sandbox=sandbox) for i in range(2)]
    try:
        for p in seats:
            p.connect()
        # One sample game for the message sizes (and the request lines).
        seats[0].on_message = measure
        if requests is not None:
            seats[1].on_message = measure
        run_game(GameConfig(), seed, seats, time_control=TC)
        for p in seats:
            p.on_message = None
        pids = [p.conn.process.pid for p in seats if p.conn and p.conn.process]
        decisions = 0
        bots0 = sum(map(_cpu_of, pids))
        cpu0 = time.process_time()
        t0 = time.perf_counter()
        for g in range(games):
            rec = run_game(GameConfig(), seed + g, seats, game_id=f"b{g}", time_control=TC)
            if rec.faults:
                raise RuntimeError(f"bench game {g}: {rec.faults[0]}")
            decisions += len(rec.decisions)
        elapsed = time.perf_counter() - t0
        cpu = time.process_time() - cpu0
        bots = sum(map(_cpu_of, pids)) - bots0
    finally:
        for p in seats:
            p.close()
    return (elapsed, decisions, sum(sizes["send"]) / len(sizes["send"]),
            sum(sizes["recv"]) / len(sizes["recv"]), cpu, bots)


#: A bot that says hello and reads what it is sent, with no interpreter to start: the
#: sandbox's own start-up, without Python's (``--startup-bot sh``).
SH_BOT = ["/bin/sh", "-c", """echo '{"type":"hello","protocol":[1],"name":"sh"}'; """
          "exec cat >/dev/null"]


def bench_startup(sandbox: Sandbox | None, n: int, cmd: list[str] | None = None) -> float:
    """Median seconds from starting the trivial bot (or ``cmd``) to its hello being read
    (the handshake included), over ``n`` starts."""
    cmd = cmd or [PYTHON, "-c", TRIVIAL_BOT]
    times = []
    for _ in range(n):
        p = stdio_player("s", cmd, time_control=TC, memory_mb=None, sandbox=sandbox)
        t0 = time.perf_counter()
        p.connect()
        times.append(time.perf_counter() - t0)
        p.close()
    return statistics.median(times)


def bench_ideal(requests: list[tuple[int, bytes]], rounds: int) -> float:
    """Seconds per decision of a referee that does nothing but write ``requests`` (the
    recorded lines, each to the bot it went to) to two trivial bots and decode each
    reply: the lower bound for any referee exchanging these messages with these bots."""
    import orjson

    procs = [subprocess.Popen([sys.executable, "-c", TRIVIAL_BOT], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE) for _ in range(2)]
    bufs = [b"", b""]
    fds = [(p.stdin.fileno(), p.stdout.fileno()) for p in procs  # type: ignore[union-attr]
           ]

    def reply(seat: int) -> bytes:
        buf = bufs[seat]
        while b"\n" not in buf:
            buf += os.read(fds[seat][1], 1 << 16)
        line, _, bufs[seat] = buf.partition(b"\n")
        return line

    try:
        for seat in (0, 1):
            reply(seat)  # hello
        loads, write = orjson.loads, os.write
        best = float("inf")
        for r in range(rounds + 1):  # the first round warms up
            t0 = time.perf_counter()
            for seat, line in requests:
                write(fds[seat][0], line)
                if loads(reply(seat))["type"] != "decision":
                    raise RuntimeError("the trivial bot did not answer a request")
            if r:
                best = min(best, (time.perf_counter() - t0) / len(requests))
        return best
    finally:
        for p in procs:
            p.stdin.close()  # type: ignore[union-attr]
            p.wait()
            p.stdout.close()  # type: ignore[union-attr]


def bench_floor(n: int, req: int, rep: int) -> float:
    """Seconds per round trip of a raw pipe ping-pong with these message sizes."""
    proc = subprocess.Popen([sys.executable, "-c", ECHO, str(req), str(rep)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    wfd, rfd = proc.stdin.fileno(), proc.stdout.fileno()
    message = b"q" * (req - 1) + b"\n"
    try:
        def trip() -> None:
            os.write(wfd, message)
            got = b""
            while not got.endswith(b"\n"):
                got += os.read(rfd, 1 << 16)

        for _ in range(200):  # warm up
            trip()
        t0 = time.perf_counter()
        for _ in range(n):
            trip()
        return (time.perf_counter() - t0) / n
    finally:
        proc.stdin.close()
        proc.wait()
        proc.stdout.close()


def bench_engine(games: int, seed: int) -> tuple[float, int]:
    decisions = 0
    t0 = time.perf_counter()
    for g in range(games):
        rec = run_game(GameConfig(), seed + g, [InProcessPlayer(First(), "a"),
                                                InProcessPlayer(First(), "b")],
                       time_control=TC)
        decisions += len(rec.decisions)
    return time.perf_counter() - t0, decisions


def breakdown(games: int, seed: int, repeat: int) -> dict[str, float]:
    """Seconds per decision of each piece of the referee's (and the bot's) work,
    timed on its own over the same games as ``bench_stdio`` (best of ``repeat``)."""
    import orjson

    clock = time.perf_counter
    tick = min(_clock_cost(clock) for _ in range(5))  # in every interval timed below
    names = ("engine: legal + apply", "observation", "events (filter)", "events (as dicts)",
             "request message", "encode (orjson)", "bot: parse request (orjson)",
             "reply: decode + check")
    best: dict[str, float] = {}
    for _ in range(repeat):
        acc = [0.0] * len(names)
        n = 0
        session = BotSession(referee="bench", time={})
        session.receive({"type": "hello", "protocol": [1], "name": "bench"})
        session.welcome()
        for g in range(games):
            session.new_game(f"b{g}", 0, {}, ["a", "b"])
            game = Game(GameConfig(), seed + g)
            seen = [0] * game.n
            while not game.over:
                for seat in game.to_decide():
                    t0 = clock()
                    legal = game.legal(seat)
                    t1 = clock()
                    obs = game.observation(seat)
                    t2 = clock()
                    evs = events_for(game.events[seen[seat]:], seat)
                    seen[seat] = len(game.events)
                    t3 = clock()
                    dicts = _event_dicts(evs)
                    t4 = clock()
                    msg = session.request(seat, obs, [d.text for d in legal], dicts, 10.0)
                    t5 = clock()
                    line = encode(msg)
                    t6 = clock()
                    orjson.loads(line)
                    t7 = clock()
                    reply = b'{"type":"decision","id":%d,"decision":0}' % msg["id"]
                    t8 = clock()
                    session.take_decision(orjson.loads(reply))  # as ExternalPlayer does
                    t9 = clock()
                    game.apply(seat, legal[0])
                    t10 = clock()
                    for i, d in enumerate(((t1 - t0) + (t10 - t9), t2 - t1, t3 - t2, t4 - t3,
                                           t5 - t4, t6 - t5, t7 - t6, t9 - t8)):
                        acc[i] += d
                    n += 1
            session.game_over(how="winner", places=[1, 2], points=[0, 0], forfeits=[],
                              faults=[], events=[])
        for name, total in zip(names, acc, strict=True):
            v = total / n - tick * (2 if name.startswith("engine") else 1)
            best[name] = min(best.get(name, v), v)
    return best


class _InstantBot(StdioTransport):
    """A stdio transport to a bot that answers every request at once with index 0,
    written by the referee's own process into the pipe it reads (so no other process
    runs, and nothing else evicts the referee's caches): what is left is the
    referee's own work per decision, and the instant bot's one write."""

    def __init__(self, hello: bool = False) -> None:
        r, self.reply_fd = os.pipe()
        super().__init__(os.open(os.devnull, os.O_WRONLY), r)
        if hello:
            os.write(self.reply_fd, b'{"type":"hello","protocol":[1],"name":"instant"}\n')

    def send(self, message: dict[str, Any]) -> None:
        super().send(message)
        if message["type"] == "request":
            os.write(self.reply_fd, b'{"type":"decision","id":%d,"decision":0}\n'
                     % message["id"])

    def close(self) -> None:
        if not self._closed:
            os.close(self.reply_fd)
        super().close()


def layers(games: int, seed: int, rounds: int) -> dict[str, float]:
    """CPU seconds per decision of the referee's work built up layer by layer, each
    over the same games against instant bots in this process (``_InstantBot``; best
    of ``rounds``, the layers taking turns): what each layer adds is what it costs.

    1. the engine: legal list and applying the first decision;
    2. + the seat's events (filtered) and its observation;
    3. + the protocol, inline: the session's request, encoded, written, the reply
       polled for, read, decoded and checked (``BotSession``, ``StdioTransport``);
    4. + the runner: ``run_game`` (its generator, requests, time control, record)
       with a minimal player doing (3)'s protocol work;
    5. the referee as it is: ``run_game`` with ``ExternalPlayer``s over stdio."""
    from referee.players.external import ExternalPlayer
    from referee.players.launcher import Connection

    def engine() -> None:
        for g in range(games):
            game = Game(GameConfig(), seed + g)
            while not game.over:
                for seat in game.to_decide():
                    game.apply(seat, game.legal(seat)[0])

    def observed() -> None:
        for g in range(games):
            game = Game(GameConfig(), seed + g)
            seen = [0] * game.n
            while not game.over:
                for seat in game.to_decide():
                    legal = game.legal(seat)
                    events_for(game.events[seen[seat]:], seat)
                    seen[seat] = len(game.events)
                    game.observation(seat)
                    game.apply(seat, legal[0])

    def session_of() -> BotSession:
        session = BotSession(referee="bench", time={})
        session.receive({"type": "hello", "protocol": [1], "name": "instant"})
        session.welcome()
        return session

    def protocol(bot: _InstantBot) -> None:
        session = session_of()
        for g in range(games):
            session.new_game(f"b{g}", 0, {}, ["a", "b"])
            game = Game(GameConfig(), seed + g)
            seen = [0] * game.n
            while not game.over:
                for seat in game.to_decide():
                    legal = game.legal(seat)
                    evs = events_for(game.events[seen[seat]:], seat)
                    seen[seat] = len(game.events)
                    bot.send(session.request(seat, game.observation(seat),
                                             [d.text for d in legal],
                                             _event_fragments(evs, fragment), 10.0))
                    d = session.take_decision(bot.recv(10.0))
                    assert isinstance(d, int)
                    game.apply(seat, legal[d])
            session.game_over(how="winner", places=[1, 2], points=[0, 0], forfeits=[],
                              faults=[], events=[])

    class Minimal:
        """A Player doing (3)'s protocol work, and nothing more."""

        def __init__(self, name: str, bot: _InstantBot) -> None:
            self.name, self.bot, self.session = name, bot, session_of()

        def start_game(self, game_id: str, seat: int, config: GameConfig, seed: int) -> None:
            self.session.new_game(game_id, seat, {}, ["a", "b"])

        def decide(self, request: Any) -> Any:
            legal = request.legal
            self.bot.send(self.session.request(request.seat, request.observation,
                                               [d.text for d in legal],
                                               _event_fragments(request.events, fragment),
                                               request.time_left))
            d = self.session.take_decision(self.bot.recv(request.time_left))
            return legal[d]

        def end_game(self, game_id: str, result: Any, events: Any) -> None:
            self.session.game_over(how="winner", places=[1, 2], points=[0, 0], forfeits=[],
                                   faults=[], events=[])

    bots = [_InstantBot(hello=i >= 3) for i in range(5)]
    minimal = [Minimal(f"m{i}", bots[1 + i]) for i in range(2)]
    external = [ExternalPlayer(f"x{i}", lambda b=bots[3 + i]: Connection(b, None),
                               time_control=TC) for i in range(2)]
    for p in external:
        p.connect()

    def runner() -> None:
        for g in range(games):
            run_game(GameConfig(), seed + g, minimal, game_id=f"b{g}", time_control=TC)

    def referee() -> None:
        for g in range(games):
            rec = run_game(GameConfig(), seed + g, external, game_id=f"b{g}",
                           time_control=TC)
            if rec.faults:
                raise RuntimeError(f"bench game {g}: {rec.faults[0]}")

    decisions = sum(len(run_game(GameConfig(), seed + g, minimal, time_control=TC).decisions)
                    for g in range(games))
    steps: dict[str, Callable[[], None]] = {
        "engine: legal + apply": engine,
        "+ events (filter) + observation": observed,
        "+ protocol inline (message, encode, write, poll, read, decode, check)":
            lambda: protocol(bots[0]),
        "+ runner (run_game, a minimal player)": runner,
        "referee as it is (run_game, ExternalPlayer)": referee,
    }
    best = {name: float("inf") for name in steps}
    try:
        for _ in range(rounds):
            for name, step in steps.items():
                cpu0 = time.process_time()
                step()
                best[name] = min(best[name], (time.process_time() - cpu0) / decisions)
    finally:
        for p in external:
            p.close()
        for b in bots:
            b.close()
    return best


def ablation(games: int, seed: int, rounds: int) -> dict[str, list[tuple[float, float]]]:
    """(referee CPU, bots' CPU) seconds per stdio decision, one pair a round, as it is
    and with the observation, the seat's events, or both free: replaced by a
    constant one of the same size (a mid-game observation, a mid-game seat's list of
    event dicts), built once.  The variants take turns, round after round."""
    import referee.play.runner as runner_module
    import referee.players.external as external_module
    from referee.game.events import event_dict

    game = Game(GameConfig(), 3)
    seen = [0] * game.n
    obs: dict[str, Any] = {}
    dicts: list[dict[str, Any]] = []
    for _ in range(40):
        seat = game.to_decide()[0]
        legal = game.legal(seat)
        evs = events_for(game.events[seen[seat]:], seat)
        seen[seat] = len(game.events)
        obs, dicts = game.observation(seat), [event_dict(e) for e in evs]
        game.apply(seat, legal[0])
    # Patched where they are looked up: the game loop's observation method and events
    # filter, the request's event dicts.
    places = ((Game, "observation", lambda self, seat: obs),
              (runner_module, "events_for", lambda events, seat: []),
              (external_module, "_event_dicts", lambda events: dicts))
    real = [getattr(where, attr) for where, attr, _ in places]
    variants = {"as it is": (), "observation free": (0,), "events free": (1, 2),
                "both free": (0, 1, 2)}
    out: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    for _ in range(rounds):
        for name, free in variants.items():
            for i in free:
                setattr(places[i][0], places[i][1], places[i][2])
            try:
                secs, decisions, _, _, cpu, bots = bench_stdio(games, seed)
            finally:
                for (where, attr, _), original in zip(places, real, strict=True):
                    setattr(where, attr, original)
            out[name].append((cpu / decisions, bots / decisions))
    return out


def zmq_breakdown(games: int, seed: int, repeat: int) -> dict[str, float]:
    """The pieces of a ZeroMQ decision that differ from stdio's, each timed on its own
    over the same games (best of ``repeat``): the request as msgpack and as a ZMTP
    frame, the bot's unpacking of it, the reply's decoding."""
    from referee.transport.zmq.codec import decode_frame
    from referee.transport.zmq.direct import _frame

    clock = time.perf_counter
    tick = min(_clock_cost(clock) for _ in range(5))
    names = ("encode (msgpack + frame)", "bot: parse request (msgpack)",
             "reply: decode (msgpack)")
    best: dict[str, float] = {}
    for _ in range(repeat):
        acc = [0.0] * len(names)
        n = 0
        session = BotSession(referee="bench", time={})
        session.receive({"type": "hello", "protocol": [1], "name": "bench"})
        session.welcome()
        for g in range(games):
            session.new_game(f"b{g}", 0, {}, ["a", "b"])
            game = Game(GameConfig(), seed + g)
            seen = [0] * game.n
            while not game.over:
                for seat in game.to_decide():
                    legal = game.legal(seat)
                    evs = events_for(game.events[seen[seat]:], seat)
                    seen[seat] = len(game.events)
                    msg = session.request(seat, game.observation(seat),
                                          [d.text for d in legal], _event_dicts(evs), 10.0)
                    t0 = clock()
                    frame = _frame(msgpack.packb(msg, use_bin_type=True))
                    t1 = clock()
                    msgpack.unpackb(frame[2:] if frame[0] == 0 else frame[9:], raw=False)
                    t2 = clock()
                    reply = msgpack.packb({"type": "decision", "id": msg["id"], "decision": 0})
                    t3 = clock()
                    session.take_decision(decode_frame([reply], 1 << 20))
                    t4 = clock()
                    for i, d in enumerate((t1 - t0, t2 - t1, t4 - t3)):
                        acc[i] += d
                    n += 1
                    game.apply(seat, legal[0])
            session.game_over(how="winner", places=[1, 2], points=[0, 0], forfeits=[],
                              faults=[], events=[])
        for name, total in zip(names, acc, strict=True):
            v = total / n - tick
            best[name] = min(best.get(name, v), v)
    return best


def _clock_cost(clock: Any, n: int = 20000) -> float:
    """Seconds one call of ``clock`` takes (to take out of intervals timed with it)."""
    t0 = clock()
    for _ in range(n):
        clock()
    return (clock() - t0) / n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=60, help="games per run")
    ap.add_argument("--repeat", type=int, default=3, help="runs; the best is reported")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cpu", type=int, default=None, help="CPU to pin to (default: the "
                    "first allowed one)")
    ap.add_argument("--no-pin", action="store_true", help="do not pin to one CPU")
    ap.add_argument("--no-zmq", action="store_true", help="skip the ZeroMQ figure")
    ap.add_argument("--no-sandbox", action="store_true", help="skip the sandboxed figures")
    ap.add_argument("--starts", type=int, default=15,
                    help="bot starts timed for the start-up figure (each way)")
    ap.add_argument("--startup-only", action="store_true",
                    help="only measure the sandbox's extra start-up: --repeat rounds of "
                    "--starts plain then --starts sandboxed starts")
    ap.add_argument("--freeze", action="store_true",
                    help="only measure what freezing sandboxed bots between their turns "
                    "([sandbox] freeze_between_turns) costs per decision: --repeat rounds "
                    "of sandboxed, then sandboxed and frozen, games (and plain ones)")
    ap.add_argument("--startup-bot", choices=["python", "sh"], default="python",
                    help="--startup-only's bot: the trivial Python bot, or a shell line "
                    "saying hello (the sandbox's own start-up, without Python's)")
    ap.add_argument("--ablate", type=int, default=0, metavar="ROUNDS",
                    help="only measure the referee's CPU per decision as it is and with "
                    "its observation and events made free, ROUNDS rounds interleaved")
    ap.add_argument("--breakdown", action="store_true", help="also time each piece of a "
                    "decision's work on its own (warm caches)")
    args = ap.parse_args()

    if not args.no_pin and hasattr(os, "sched_setaffinity"):
        cpu = args.cpu if args.cpu is not None else min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})  # the bots inherit it
        print(f"pinned to CPU {cpu} (referee and bots)")
    if args.ablate:
        us = 1e6
        runs = ablation(args.games, args.seed, args.ablate)
        base = runs["as it is"]
        print(f"referee CPU per stdio decision, median of {args.ablate} interleaved rounds of "
              f"{args.games} games:")
        for name, pairs in runs.items():
            ref = statistics.median(r for r, _ in pairs)
            bots = statistics.median(b for _, b in pairs)
            saved = 1 - statistics.median(r / b0 for (r, _), (b0, _) in zip(pairs, base,
                                                                             strict=True))
            print(f"  {name:17s} referee {ref * us:6.1f} us, bots {bots * us:6.1f} us, "
                  f"referee / bots {ref / bots:4.2f}; saved vs as it is {saved * 100:+5.1f} %")
        return 0

    sandbox = None
    if not args.no_sandbox:
        try:
            sandbox = resolve(SandboxConfig(mode="on"))
        except SandboxError as e:
            print(f"sandbox: not measured: {e}")
    if args.freeze:
        if sandbox is None:
            return 1
        frozen = resolve(SandboxConfig(mode="on", freeze_between_turns=True))
        if frozen.warnings:
            print(f"freezing: not measured: {'; '.join(frozen.warnings)}")
            return 1
        runs: dict[str, list[tuple[float, float]]] = {
            "plain": [], "sandboxed": [], "frozen, no wait": [], "sandboxed + frozen": []}
        waiting = Cgroup.wait_frozen
        for _ in range(args.repeat):  # the four take turns: the same noise
            for name, sb in (("plain", None), ("sandboxed", sandbox),
                             ("frozen, no wait", frozen), ("sandboxed + frozen", frozen)):
                # "frozen, no wait": the freezer written, the next request sent without
                # waiting until the kernel says the bot is frozen (as before the wait):
                # what the wait itself costs an honest bot.
                Cgroup.wait_frozen = (  # type: ignore[method-assign]
                    (lambda self, cpu, wall: None) if name == "frozen, no wait" else waiting)
                try:
                    secs, dec, _, _, cpu, _ = bench_stdio(args.games, args.seed, sandbox=sb)
                finally:
                    Cgroup.wait_frozen = waiting  # type: ignore[method-assign]
                runs[name].append((secs / dec, cpu / dec))
        us = 1e6
        med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
               for k, v in runs.items()}
        print(f"per decision, median of {args.repeat} rounds of {args.games} games "
              f"(freezer: {frozen.limits['freeze']}):")
        for name, (wall, cpu) in med.items():
            print(f"  {name:20s} {wall * us:8.1f} us wall, referee CPU {cpu * us:6.1f} us")
        (bw, bc), (fw, fc), (pw, _) = (med["sandboxed"], med["sandboxed + frozen"],
                                        med["plain"])
        nw, nc = med["frozen, no wait"]
        print(f"waiting until frozen adds {(fw - nw) * us:+.1f} us wall "
              f"({(fw / nw - 1) * 100:+.1f} %) and {(fc - nc) * us:+.1f} us of the referee's "
              f"CPU per decision")
        print(f"freezing adds {(fw / bw - 1) * 100:+.1f} % wall and {(fc - bc) * us:+.1f} us "
              f"({(fc / bc - 1) * 100:+.1f} %) of the referee's CPU per decision to a "
              f"sandboxed one; sandboxed and frozen vs plain: {(fw / pw - 1) * 100:+.1f} % "
              f"wall (the sandbox's target: <= +5 % per decision)")
        return 0
    if args.startup_only:
        if sandbox is None:
            return 1
        rounds = []
        for _ in range(args.repeat):
            cmd = SH_BOT if args.startup_bot == "sh" else None
            rounds.append((bench_startup(None, args.starts, cmd),
                           bench_startup(sandbox, args.starts, cmd)))
        extra = statistics.median(b - p for p, b in rounds) * 1000
        print(f"start-up to hello ({args.startup_bot} bot), median of {args.starts} starts a "
              f"round, {args.repeat} rounds: "
              f"plain {statistics.median(p for p, _ in rounds) * 1000:.1f} ms, sandboxed "
              f"{statistics.median(b for _, b in rounds) * 1000:.1f} ms; extra (median of the "
              f"rounds' differences) {extra:+.1f} ms (target <= 15 ms: "
              f"{'met' if extra <= 15 else 'NOT met'}); rounds: "
              + ", ".join(f"{(b - p) * 1000:+.1f}" for p, b in rounds))
        return 0
    best_stdio = best_engine = best_floor = best_ideal = best_boxed = float("inf")
    start_plain = start_boxed = float("inf")
    decisions = 0
    req = rep = ref_cpu = bot_cpu = 0.0
    for _ in range(args.repeat):
        requests: list[tuple[int, bytes]] = []
        secs, decisions, req, rep, cpu, bots = bench_stdio(args.games, args.seed, requests)
        if secs / decisions < best_stdio:
            best_stdio = secs / decisions
            ref_cpu, bot_cpu = cpu / decisions, bots / decisions
        esecs, edec = bench_engine(args.games, args.seed)
        best_engine = min(best_engine, esecs / edec)
        best_floor = min(best_floor, bench_floor(max(2000, decisions // 2), round(req),
                                                 round(rep)))
        best_ideal = min(best_ideal, bench_ideal(
            requests, max(3, decisions // max(1, len(requests)) // 4)))
        if sandbox is not None:  # in the same round as the plain figure: same noise
            bsecs, bdec, *_ = bench_stdio(args.games, args.seed, sandbox=sandbox)
            best_boxed = min(best_boxed, bsecs / bdec)
            start_plain = min(start_plain, bench_startup(None, args.starts))
            start_boxed = min(start_boxed, bench_startup(sandbox, args.starts))
    us = 1e6
    print(f"games: {args.games} x 2 players, {decisions} decisions per run, "
          f"best of {args.repeat}")
    print(f"messages: request {req:.0f} B, reply {rep:.0f} B on average (JSON lines)")
    print(f"stdio : {best_stdio * us:8.1f} us/decision  {1 / best_stdio:9.0f} decisions/s")
    print(f"        of which CPU: referee {ref_cpu * us:.1f} us, bots {bot_cpu * us:.1f} us "
          f"(the rest: waiting, switching)")
    print(f"engine: {best_engine * us:8.1f} us/decision  {1 / best_engine:9.0f} decisions/s "
          f"(in-process, no protocol)")
    print(f"floor : {best_floor * us:8.1f} us/round trip (raw Python pipe ping-pong, same sizes)")
    ratio = best_stdio / best_floor
    print(f"ratio : stdio / floor = {ratio:.2f}  (target <= 4: {'met' if ratio <= 4 else 'NOT met'})")
    overhead = best_stdio - best_engine
    print(f"        protocol only (stdio - engine) = {overhead * us:.1f} us = "
          f"{overhead / best_floor:.2f} x the floor (the bot's own work included)")
    print(f"ideal : {best_ideal * us:8.1f} us/decision = {best_ideal / best_floor:.2f} x the "
          f"floor (the same request lines and bots, a referee with no work of its own)")
    print(f"        stdio / ideal = {best_stdio / best_ideal:.2f} (target <= 2: "
          f"{'met' if best_stdio / best_ideal <= 2 else 'NOT met'}); referee CPU / bots' CPU = "
          f"{ref_cpu / bot_cpu:.2f} (target <= 1: {'met' if ref_cpu <= bot_cpu else 'NOT met'})")
    budget = 4 * best_floor - best_ideal
    print(f"        the referee's own work: stdio - ideal = {(best_stdio - best_ideal) * us:.1f}"
          f" us; the target leaves it 4 x floor - ideal = {budget * us:.1f} us")

    if sandbox is not None:
        more = (best_boxed / best_stdio - 1) * 100
        print(f"sandbox: {best_boxed * us:8.1f} us/decision sandboxed (bubblewrap + cgroup), "
              f"{more:+.1f} % vs plain stdio (target <= 5 %: "
              f"{'met' if more <= 5 else 'NOT met'})")
        extra = (start_boxed - start_plain) * 1000
        print(f"start-up: {start_plain * 1000:.1f} ms plain, {start_boxed * 1000:.1f} ms "
              f"sandboxed, start to hello (median of {args.starts}, best of {args.repeat}): "
              f"{extra:+.1f} ms (target <= 15 ms: {'met' if extra <= 15 else 'NOT met'})")
    if args.breakdown:
        parts = breakdown(args.games, args.seed, args.repeat)
        print("pieces of one decision, each timed on its own (warm caches; best of "
              f"{args.repeat}):")
        for name, secs in parts.items():
            print(f"        {name:28s} {secs * us:6.2f} us")
        print(f"        {'sum':28s} {sum(parts.values()) * us:6.2f} us")
        print("the referee's CPU per decision built up layer by layer, against instant bots in "
              f"its own process (best of {args.repeat}; a layer's cost is what it adds):")
        prev = 0.0
        for name, secs in layers(args.games, args.seed, args.repeat).items():
            print(f"        {name:70s} {secs * us:6.2f} us  (+{(secs - prev) * us:5.2f})")
            prev = secs

    if not args.no_zmq:
        # Side by side with the stdio figure, round after round (the same noise).
        best_direct = best_libzmq = float("inf")
        cpu_direct = cpu_libzmq = 0.0
        for _ in range(args.repeat):
            for direct in (True, False):
                r = bench_game_zmq(args.games, seed=args.seed, direct=direct)
                per, cpu = r.seconds / r.decisions, r.cpu / r.decisions
                if direct and per < best_direct:
                    best_direct, cpu_direct = per, cpu
                elif not direct and per < best_libzmq:
                    best_libzmq, cpu_libzmq = per, cpu
        print(f"zmq   : {best_direct * us:8.1f} us/decision  {1 / best_direct:9.0f} decisions/s "
              f"(msgpack over ipc, ZMTP spoken by the game's thread) = "
              f"{best_direct / best_stdio:.2f} x stdio (target <= 1.5: "
              f"{'met' if best_direct / best_stdio <= 1.5 else 'NOT met'})")
        print(f"        referee CPU {cpu_direct * us:.1f} us/decision (the games only; stdio's: "
              f"{ref_cpu * us:.1f} us)")
        print(f"libzmq: {best_libzmq * us:8.1f} us/decision  {1 / best_libzmq:9.0f} decisions/s "
              f"(the same through a libzmq ROUTER and its I/O thread) = "
              f"{best_libzmq / best_stdio:.2f} x stdio; referee CPU {cpu_libzmq * us:.1f} us")
        if args.breakdown:
            for name, secs in zmq_breakdown(args.games, args.seed, args.repeat).items():
                print(f"        {name:28s} {secs * us:6.2f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
