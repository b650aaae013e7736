"""Every attack of a malicious entrant (issue: "Bots we did not write"), each by a
tiny bot in tests/bots/attack_*.py run in the real sandbox, and each must fail --
the bot says what it tried on its stderr, and the test checks the effect too.

A game against a bot that plays its first legal decision, or a real tournament
where the attack aims at the tournament itself.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import msgpack
import pytest
import zmq

from referee.bots import make_bot
from referee.game import Decision, GameConfig
from referee.play.runner import (
    DecisionRequest,
    FaultPolicy,
    GameRecord,
    InProcessPlayer,
    TimeControl,
    run_game,
)
from referee.players.external import ExternalPlayer, external_player
from referee.players.launcher import launch_zmq_bot
from referee.players.process import StderrLog
from referee.players.sandbox import Sandbox, SandboxConfig
from referee.tournament.config import parse_config
from referee.tournament.executor import Job, ProcessExecutor, SerialExecutor
from referee.tournament.run import run_tournament, standings_of
from referee.tournament.schedule import schedule
from tests.players.sandbox.conftest import BOTS, TC, Attack, need_sandbox
from tests.procs import REFEREE_WITH_PEAK_RSS, Children, peak_rss_mb, scaled

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[3]


def blocked(lines: list[str], expect: int | None = None) -> None:
    assert lines, "the attack bot said nothing (did it run?)"
    if expect is not None:
        assert len(lines) == expect, lines
    worked = [line for line in lines if ": SUCCEEDED:" in line]
    assert not worked, worked


def first_bot(attack: Attack) -> object:
    return attack.bot("first.py", name="first")


# --- what a bot can see ----------------------------------------------------------------


def test_a_bot_reads_nothing_of_the_referees(attack: Attack, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    (secret / "games").mkdir()
    (secret / "tournament.sqlite").write_bytes(b"SQLite format 3\0")
    (secret / "games" / "g000000.jsonl").write_text('{"deck": ["1r"]}\n')
    (secret / "referee.key_secret").write_text("curve secret\n")
    other = tmp_path / "other-bot"
    other.mkdir()
    (other / "bot.py").write_text("print('my secret strategy')\n")
    files = [secret / "tournament.sqlite", secret / "games" / "g000000.jsonl",
             secret / "referee.key_secret", other / "bot.py", REPO / "referee" / "runner.py",
             Path("/etc/shadow"), Path.home() / ".bash_history"]
    p = attack.bot("attack_spy.py", {"ATTACK_FILES": os.pathsep.join(map(str, files))})
    rec = attack.play([p, first_bot(attack)])
    assert [f.kind for f in rec.faults] == []
    blocked(attack.said("attack_spy"), expect=len(files) + 1)


def test_a_referee_folder_inside_a_bots_folder_is_covered(attack: Attack,
                                                          tmp_path: Path) -> None:
    """A tournament whose output lies inside a bot's folder: the bot sees its own
    files, not the output (the launcher covers the paths the referee hides)."""
    botdir = tmp_path / "botdir"
    out = botdir / "runs"
    out.mkdir(parents=True)
    (out / "tournament.sqlite").write_bytes(b"SQLite format 3\0")
    for f in ("attack_spy.py", "_attack.py"):
        shutil.copy(BOTS / f, botdir / f)
    sandbox = attack.sandbox.hide(str(out))
    own = botdir / "_attack.py"
    p = external_player("attack_spy", [sys.executable, str(botdir / "attack_spy.py")], None,
                        {"ATTACK_FILES": os.pathsep.join([str(out / "tournament.sqlite"),
                                                          str(own)])},
                        None, 512, str(attack.logs), sandbox=sandbox)
    attack.players.append(p)
    attack.play([p, first_bot(attack)])
    said = attack.said("attack_spy")
    # Paths in its folder reach it as it sees them, under /bot (the neutral path).
    assert "ATTACK read /bot/runs/tournament.sqlite: blocked: No such file or directory" in said
    assert any(line.startswith("ATTACK read /bot/_attack.py: SUCCEEDED") for line in said)


def test_a_bot_cannot_read_the_referees_memory_or_environment(
        attack: Attack, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UPDOWN_TEST_SECRET", "hunter2-in-the-referees-env")
    p = attack.bot("attack_ptrace.py", {"ATTACK_PIDS": str(os.getpid()),
                                        "ATTACK_SECRET": "hunter2-in-the-referees-env"[::-1]})
    attack.play([p, first_bot(attack)])
    blocked(attack.said("attack_ptrace"))


def test_nothing_of_the_referees_environment_is_passed_on(attack: Attack,
                                                         monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-for-bots")
    p = attack.bot("attack_ptrace.py", {"ATTACK_PIDS": "1",
                                        "ATTACK_SECRET": "not-for-bots"[::-1]})
    attack.play([p, first_bot(attack)])
    said = attack.said("attack_ptrace")
    assert any("/proc/1/environ" in line for line in said)
    blocked(said)


# --- what a bot can do to others ------------------------------------------------------


def test_a_bot_cannot_stop_or_kill_its_opponent_or_the_referee(attack: Attack) -> None:
    victim = first_bot(attack)
    victim.connect()  # type: ignore[attr-defined]
    pids = sorted(victim.conn.process.tree())  # type: ignore[attr-defined]
    assert pids
    p = attack.bot("attack_kill.py", {"ATTACK_PIDS": os.pathsep.join(
        map(str, [*pids, os.getpid()]))})
    rec = attack.play([p, victim])
    assert rec.faults == [], rec.faults  # the victim answered every request in time
    said = attack.said("attack_kill")
    blocked(said)
    assert any("see other processes: blocked" in line for line in said)


def test_a_launched_zeromq_bots_seat_cannot_be_taken(tmp_path: Path, sandbox: object) -> None:
    """Another program connects to a launched bot's endpoint before the bot does:
    it is refused, told why, and the launched bot takes its seat."""
    bot = launch_zmq_bot([sys.executable, str(REPO / "tests" / "transport" / "zmq" / "zmq_bot.py"),
                          "--name", "real", "--delay", "1"], name="real", sandbox=sandbox)
    ctx = zmq.Context()
    hijacker = ctx.socket(zmq.DEALER)
    hijacker.setsockopt(zmq.LINGER, 0)
    try:
        hijacker.connect(bot.transport.endpoint)
        hijacker.send(msgpack.packb({"type": "hello", "protocol": [1], "name": "real",
                                     "token": "guessed"}))
        hello = bot.transport.recv(30)
        assert hello["name"] == "real" and hello["token"] == bot.transport.token
        assert bot.transport.impostors == 1
        assert hijacker.poll(5000)
        told = msgpack.unpackb(hijacker.recv())
        assert told["type"] == "error" and "UPDOWN_TOKEN" in told["message"]
    finally:
        hijacker.close()
        ctx.term()
        bot.close()


def test_a_sandboxed_bot_cannot_reach_a_launched_bots_socket_or_the_network(
        attack: Attack) -> None:
    """From inside, no other bot's ipc folder is visible and no loopback port of the
    referee answers."""
    srv = __import__("socket").socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]
    code = ("import glob, socket, sys\n"
            "from _attack import play, report\n"
            "def go():\n"
            "    report('see zmq folders', bool(glob.glob('/tmp/updown-zmq-*')), '')\n"
            "    s = socket.socket()\n"
            "    try:\n"
            f"        s.connect(('127.0.0.1', {port})); report('connect', True, '')\n"
            "    except OSError as e:\n"
            "        report('connect', False, e.strerror)\n"
            "play(on_start=go)\n")
    folder = attack.tmp / "netbot"
    folder.mkdir()
    (folder / "net.py").write_text(code)
    shutil.copy(BOTS / "_attack.py", folder / "_attack.py")
    p = external_player("net", [sys.executable, str(folder / "net.py")], None, None,
                        None, 512, str(attack.logs), sandbox=attack.sandbox)
    attack.players.append(p)
    try:
        attack.play([p, first_bot(attack)])
    finally:
        srv.close()
    blocked(attack.said("net"), expect=2)


# --- limits -------------------------------------------------------------------------------


def test_scratch_fills_at_its_cap_and_nothing_else_is_writable(tmp_path: Path) -> None:
    sb = need_sandbox(SandboxConfig(mode="on", scratch_mb=8))
    a = Attack(tmp_path, sb)
    try:
        a.play([a.bot("attack_disk.py"), first_bot(a)])
        said = a.said("attack_disk")
    finally:
        a.close()
    blocked(said, expect=4)
    assert any("fill /tmp: blocked: No space left on device after" in s for s in said)
    mb = int(said[0].rsplit("after ", 1)[1].split()[0])
    assert mb <= 8
    assert not (BOTS / "planted.txt").exists()


def test_a_fork_loop_stops_at_the_process_limit(tmp_path: Path) -> None:
    sb = need_sandbox(SandboxConfig(mode="on", processes=32))
    a = Attack(tmp_path, sb)
    try:
        a.play([a.bot("attack_forkbomb.py", {"ATTACK_COUNT": "300"}), first_bot(a)])
        said = a.said("attack_forkbomb")
    finally:
        a.close()
    blocked(said, expect=1)
    count = int(said[0].rsplit("after ", 1)[1].split()[0])
    assert count < 32


def test_the_memory_limit_holds_for_the_whole_tree(tmp_path: Path) -> None:
    sb = need_sandbox(SandboxConfig(mode="on", memory_mb=256))
    a = Attack(tmp_path, sb)
    try:
        a.play([a.bot("attack_memory.py", {"ATTACK_MB": "150", "ATTACK_LIMIT": "256"},
                      memory_mb=256), first_bot(a)])
        said = a.said("attack_memory")
    finally:
        a.close()
    blocked(said, expect=1)
    assert "of 3 children hold 150 MB each" in said[0]


def test_a_bot_out_of_memory_is_told_so(tmp_path: Path) -> None:
    sb = need_sandbox(SandboxConfig(mode="on", memory_mb=128))
    a = Attack(tmp_path, sb)
    try:
        rec = a.play([a.bot("hog.py", memory_mb=128), first_bot(a)])
    finally:
        a.close()
    crash = [f for f in rec.faults if f.kind == "crash"]
    assert crash and "out of memory under the 128 MB limit of its sandbox" in crash[0].detail


def test_cpu_affinity_cannot_be_widened(attack: Attack) -> None:
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpus[-1]})  # as a tournament worker is pinned
    try:
        attack.play([attack.bot("attack_affinity.py"), first_bot(attack)])
    finally:
        os.sched_setaffinity(0, cpus)
    said = attack.said("attack_affinity")
    blocked(said)
    assert said[-1].endswith(f"before [{cpus[-1]}] after [{cpus[-1]}]")


# --- nothing left running -----------------------------------------------------------------


def _marked(mark: str) -> list[int]:
    found = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            with contextlib.suppress(OSError), open(f"/proc/{d}/cmdline", "rb") as f:
                if mark.encode() in f.read():
                    found.append(int(d))
    return found


def test_a_daemon_ends_with_its_bot(attack: Attack) -> None:
    mark = f"updown-daemon-{os.getpid()}-{time.monotonic_ns()}"
    p = attack.bot("attack_daemon.py", {"ATTACK_MARK": mark})
    attack.play([p, first_bot(attack)])
    assert _marked(mark), "the daemon did not start"
    attack.close()
    deadline = time.monotonic() + scaled(5)
    while _marked(mark) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _marked(mark) == []


def test_a_referee_killed_with_sigkill_leaves_no_bot_running(tmp_path: Path, sandbox: object,
                                                            children: Children) -> None:
    mark = f"updown-daemon-{os.getpid()}-{time.monotonic_ns()}"
    referee = shutil.which("referee", path=str(Path(sys.executable).parent))
    assert referee is not None
    bot = f"env ATTACK_MARK={mark} ATTACK_SLOW=0.2 {sys.executable} {BOTS / 'attack_daemon.py'}"
    proc = children.popen([referee, "play", "heuristic", bot, "--sandbox", "on", "--quiet"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + scaled(30)
        while not _marked(mark) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _marked(mark), "the daemon did not start"
        proc.kill()
        proc.wait(scaled(10))
        deadline = time.monotonic() + scaled(5)
        while _marked(mark) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _marked(mark) == []
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in _marked(mark):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


# --- attacks on a tournament --------------------------------------------------------------


def _tournament(tmp_path: Path, bots: list[dict[str, object]], *, seats: int = 2,
                deals: int = 2, sandbox: dict[str, object] | None = None
                ) -> tuple[object, Path]:
    raw = {"tournament": {"name": "attacked", "seats": seats, "deals": deals, "seed": 7,
                          "output": "out"},
           "time": {"startup": 20.0, "per_decision": 5.0, "bank": 20.0},
           "sandbox": {"mode": "on", **(sandbox or {})},
           "bots": bots}
    cfg = parse_config(raw, base_dir=str(tmp_path))
    return cfg, tmp_path / "out"


def _first(name: str) -> dict[str, object]:
    return {"name": name, "command": [sys.executable, str(BOTS / "first.py")]}


def _said(out: Path, name: str) -> list[str]:
    lines = []
    for log in (out / "logs").rglob(f"{name}*.stderr.log"):
        lines += [x for x in log.read_text(errors="replace").splitlines()
                  if x.startswith("ATTACK ")]
    return lines


def test_a_bot_cannot_forge_the_standings_or_wreck_the_database(tmp_path: Path,
                                                                sandbox: object) -> None:
    out = tmp_path / "out"
    files = [out / "tournament.sqlite", out / "tournament.sqlite-wal",
             out / "games" / "g000000.jsonl"]
    cfg, out = _tournament(tmp_path, [
        {"name": "forger", "command": [sys.executable, str(BOTS / "attack_forge.py")],
         "env": {"ATTACK_FILES": os.pathsep.join(map(str, files))}},
        _first("first"), {"name": "lowest", "builtin": "lowest"}])
    summary = run_tournament(cfg, output_dir=out, executor=ProcessExecutor(2), quiet=True)
    assert summary.errors == [] and summary.played == summary.scheduled
    assert _faults(out) == 0
    blocked(_said(out, "forger"))
    # The standings are the records' own results.
    con = sqlite3.connect(out / "tournament.sqlite")
    rows = con.execute("SELECT game_id, places FROM games").fetchall()
    con.close()
    assert len(rows) == summary.scheduled
    for game_id, places in rows:
        lines = (out / "games" / f"{game_id}.jsonl").read_text().splitlines()
        assert json.loads(lines[-1])["places"] == json.loads(places)
    st = standings_of(out)
    assert sum(r.games for r in st.rows) == 2 * summary.scheduled


def test_a_bot_cannot_kill_its_worker_to_undo_a_loss(tmp_path: Path, sandbox: object) -> None:
    cfg, out = _tournament(tmp_path, [
        {"name": "killer", "command": [sys.executable, str(BOTS / "attack_kill.py")],
         "env": {"ATTACK_PIDS": str(os.getpid())}},
        _first("first"), {"name": "lowest", "builtin": "lowest"}])
    summary = run_tournament(cfg, output_dir=out, executor=ProcessExecutor(2), quiet=True)
    assert summary.errors == [] and summary.played == summary.scheduled
    assert _faults(out) == 0
    said = _said(out, "killer")
    blocked(said)
    con = sqlite3.connect(out / "tournament.sqlite")
    workers = con.execute("SELECT COUNT(*) FROM games WHERE seats LIKE '%killer%'").fetchone()
    con.close()
    assert workers[0] == sum("killer" in g.seats for g in schedule(cfg))  # every game kept


def _remember(tmp_path: Path, bots: int = 4, **sandbox: object) -> tuple[object, Path]:
    # In the sandbox each instance's /tmp is its own; without, the host's is shared.
    shared = "/tmp/deals-seen.json" if sandbox.get("mode") != "off" else \
        str(tmp_path / "shared.json")
    return _tournament(tmp_path, [
        {"name": f"mem{i}", "command": [sys.executable, str(BOTS / "attack_remember.py")],
         "env": {"ATTACK_SHARED": shared}} for i in range(bots)],
        seats=4, deals=3, sandbox=dict(sandbox))


def _faults(out: Path) -> int:
    con = sqlite3.connect(out / "tournament.sqlite")
    try:
        return sum(len(json.loads(f)) for (f,) in con.execute("SELECT faults FROM games"))
    finally:
        con.close()


def test_no_bot_process_plays_two_seatings_of_one_deal(tmp_path: Path,
                                                      sandbox: object) -> None:
    cfg, out = _remember(tmp_path, bots=5)
    summary = run_tournament(cfg, output_dir=out, executor=ProcessExecutor(2), quiet=True)
    assert summary.errors == [] and summary.played == summary.scheduled == 5 * 3 * 4
    assert _faults(out) == 0
    said = _said(out, "mem")
    assert len(said) == 4 * summary.played  # every seat of every game fingerprinted it
    blocked(said)  # and not one deal was seen twice by one process


def test_the_deal_fingerprint_would_catch_a_reused_process(tmp_path: Path,
                                                          sandbox: object) -> None:
    """The control: without the isolation, the same bot fingerprints the same deal
    twice -- so the test above could fail."""
    cfg, out = _remember(tmp_path)
    games = schedule(cfg)
    (out / "games").mkdir(parents=True)
    from referee.players.sandbox import resolve

    job = Job(cfg, str(out), sandbox=resolve(cfg.sandbox), isolate_deals=False)
    reports: list[object] = []
    ProcessExecutor(1).run(job, games, reports.append)
    assert len(reports) == len(games), reports[:3]
    said = _said(out, "mem")
    twice = [x for x in said if ": SUCCEEDED: deal seen twice" in x]
    assert len(said) == 4 * len(games) and len(twice) == 4 * len(games) - 4 * 3


def test_instances_of_a_bot_share_no_scratch(tmp_path: Path, sandbox: object) -> None:
    """The second control: isolated processes without the sandbox share /tmp, where
    the fingerprints of other instances are seen; in the sandbox (first test) not."""
    cfg, out = _remember(tmp_path, mode="off")
    summary = run_tournament(cfg, output_dir=out, executor=ProcessExecutor(1), quiet=True)
    assert summary.errors == [] and _faults(out) == 0
    assert any(": SUCCEEDED: deal seen twice" in x for x in _said(out, "mem"))


@pytest.fixture(autouse=True)
def _no_leftovers() -> Iterator[None]:
    yield
    from referee.players.process import end_all

    end_all()


@pytest.mark.parametrize("transport", ["stdio", "zmq"])
def test_a_log_flood_between_its_turns_costs_only_the_flooder(tmp_path: Path, sandbox: Sandbox,
                                                              transport: str) -> None:
    """A sandboxed bot flooding its stderr -- a ZeroMQ one its stdout too, both only
    logs there -- (64 KiB blocks, as fast as it can) while the other seat is on the
    clock: once a log is at its cap, the referee reads nothing of it during the
    opponent's turns -- the reader is parked, the flooder blocked in ``write`` -- and
    drains it only on the flooder's own turns (and at its end).  The game finishes
    without a fault; each log is capped, with the count of what was dropped."""
    cap = 32768
    flooder = external_player("flood", [sys.executable, str(BOTS / "attack_flood.py")], None,
                              None, TC, sandbox.config.memory_mb, str(tmp_path / "logs"),
                              sandbox=sandbox, stderr_cap=cap, transport=transport)
    parked_turns = 0

    def logs() -> list[StderrLog]:
        assert flooder.conn is not None and flooder.conn.process is not None
        proc = flooder.conn.process
        return [proc.stderr] + ([proc.stdout_log] if proc.stdout_log is not None else [])

    class Opponent(InProcessPlayer):
        """A built-in bot that finds the flooder's readers parked, reading nothing,
        while it decides."""

        def decide(self, request: DecisionRequest) -> Decision | str:
            nonlocal parked_turns
            # It floods from its new_game on, at least a block (twice the cap) into
            # each pipe before any turn: the readers reach the cap and park.
            for log in logs():
                assert log.parked.wait(scaled(30)), "the flood was read on the opponent's turn"
            before = [log.kept + log.dropped for log in logs()]
            decision = super().decide(request)
            assert [log.kept + log.dropped for log in logs()] == before  # not a byte more
            parked_turns += 1
            return decision

    try:
        rec = run_game(GameConfig(players=2), 3, [flooder, Opponent(make_bot("heuristic"))],
                       time_control=TC)
        read = logs()
    finally:
        flooder.close()
    assert len(read) == (1 if transport == "stdio" else 2)
    for log in read:
        log.join(scaled(30))
        assert not log.thread.is_alive()
    assert rec.faults == [] and rec.result is not None  # the game finished, nobody faulted
    assert parked_turns == sum(1 for d in rec.decisions if d["seat"] == 1) > 0
    for log, kind in zip(read, ["stderr", "stdout"][:len(read)], strict=True):
        assert log.kept == cap and log.dropped > 0
        text = (tmp_path / "logs" / f"flood.{kind}.log").read_bytes()
        assert text.rstrip().endswith(f"[referee: {log.dropped} more bytes of output "
                                      f"dropped in this start]".encode())


@pytest.mark.parametrize("transport", ["stdio", "zmq"])
def test_messages_nobody_asked_for_cost_the_referee_nothing(tmp_path: Path, sandbox: Sandbox,
                                                            transport: str) -> None:
    """A sandboxed bot sending, before each answer, five 'decision's with ids never
    sent, each as costly to decode as the size limit lets it (a list of empty lists:
    at the old 1 MiB limit ~120 ms each, so a game cost the referee seconds of CPU):
    the tenth in a game is a fault naming it that forfeits the game (nothing more
    of it is read in that game), the game is played out, and the next game goes on
    with the same process (the strays it queued count there).
    The referee's CPU for its games stays near that of the same games without strays
    (the same bot, ATTACK_STRAYS=0).  Over stdio and the launched (direct ZMTP)
    ZeroMQ path."""
    notes: list[str] = []

    def games(strays: int) -> tuple[list[GameRecord], float, ExternalPlayer]:
        p = external_player("strays", [sys.executable, str(BOTS / "attack_strays.py")], None,
                            {"ATTACK_STRAYS": str(strays)}, TC, sandbox.config.memory_mb,
                            str(tmp_path / "logs"), sandbox=sandbox, transport=transport,
                            on_message=lambda d, _b, text, _t: notes.append(text)
                            if d == "note" and strays else None)
        recs = []
        cpu = 0.0
        try:
            for seed in (3, 4):
                p.prepare()  # its start (and restart) outside the measure
                # The referee's thread (the game, and reading the bot's messages),
                # not the process: other tests' threads may run in it meanwhile.
                t = time.thread_time()
                recs.append(run_game(GameConfig(players=2), seed,
                                     [p, InProcessPlayer(make_bot("lowest"))], time_control=TC))
                cpu += time.thread_time() - t
        finally:
            p.close()
        return recs, cpu, p

    # The objects of every earlier test in this worker are moved out of the collector's
    # way: the strays' new lists would set off its full passes over them (~50 ms in a
    # late xdist worker), a cost of this process's heap, not of a referee's.
    gc.collect()
    gc.freeze()
    try:
        normal, normal_cpu, _ = games(0)
        attacked, attack_cpu, p = games(5)
    finally:
        gc.unfreeze()
    assert [r.faults for r in normal] == [[], []]
    for rec in attacked:
        assert rec.result is not None and list(rec.result.forfeits) == [0]  # played out
        [fault] = rec.faults
        assert (fault.kind, fault.seat, fault.action) == ("protocol", 0, "forfeit")
        assert fault.detail.startswith("strays sent 10 messages nobody asked for in this game")
    assert p.starts == 1  # the same process for both games
    # Each game read exactly ten strays, the tenth forfeited it: nothing more read.
    assert sum(n.startswith("ignored: reply to request ") for n in notes) == 2 * 10
    # Ten strays of 8 KiB a game: ~0.1 ms each as JSON, ~15 us as msgpack (its
    # unknown field is skipped, nothing built): less than the game's own cost (~5 ms
    # against 'lowest'), so at most twice that (plus slack for a loaded machine's
    # caches).  Without the fix the referee spent seconds on them.
    assert attack_cpu < 2 * normal_cpu + 0.03, (attack_cpu, normal_cpu)


def _referee_play(children: Children, bot: list[str]) -> tuple[str, float]:
    """``referee play`` (a real process: the CLI, the sandbox) of the ZeroMQ bot
    ``bot`` against 'lowest': its output and the referee's own peak RSS (MB)."""
    need_sandbox(SandboxConfig(mode="on"))
    command = " ".join([sys.executable, str(BOTS / "attack_zmtp.py"), *bot])
    p = children.popen([*REFEREE_WITH_PEAK_RSS, "play", f"zmtp=zmq:{command}", "lowest",
                        "--seed", "7", "--sandbox", "on"], cwd=REPO, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    out, err = p.communicate(timeout=scaled(120))
    assert p.returncode == 0, (out, err)
    return out, peak_rss_mb(err)


@pytest.mark.parametrize("bot, what", [
    (["span", "64"], "a message of several parts (at least 2 so far, 8201 bytes with their "
                     "frame headers), over the limit of 8192 bytes (a message must be one "
                     "frame)"),
    (["span", "16", "2"], "a message of several parts (at least 2049 so far, 8196 bytes with "
                          "their frame headers), over the limit of 8192 bytes (a message "
                          "must be one frame)"),
    (["cmdbig", "200"], "a ZeroMQ command frame of 200000007 bytes, over the limit of 512 "
                        "bytes for a command frame"),
], ids=["parts-8k", "parts-2b", "command"])
def test_a_zeromq_message_or_command_without_end_costs_the_referee_nothing(
        children: Children, bot: list[str], what: str) -> None:
    """A launched ZeroMQ bot speaking ZMTP by hand (nothing buffered on its side)
    sends, on its first turn, one message whose parts never end (8 KiB parts; 2-byte
    ones, where each part's overhead counted most) or one PING command frame of
    200 MB.  Before, the referee kept every part until the message ended and read a
    command whole: its RSS grew by ~1.1x-14x what was sent.  Now what passes the
    limit is refused as it arrives, unread: a 'malformed' fault naming the bot and
    what it sent, its connection dropped (so it forfeits), the game played out, and
    the referee's peak RSS that of an honest game of the same bot."""
    honest, honest_mb = _referee_play(children, ["honest", "0"])
    assert "faults: none" in honest and "result:" in honest, honest
    out, peak_mb = _referee_play(children, bot)
    assert "result:" in out and "SUCCEEDED" not in out, out
    assert f"zmtp (seat 0) turn 0: malformed: zmtp replied to request 1 with {what}; the " \
           f"connection is dropped [substituted]" in out, out
    assert "attack_zmtp: " in out and ": failed: the referee dropped the connection" in out, out
    assert "[forfeit]" in out
    # A few MB of slack: the same games, but for what the attack cost.  Before the
    # fix: +70, +270 and +400 MB or more.
    assert peak_mb < honest_mb + 16, (peak_mb, honest_mb)


@pytest.mark.parametrize("transport", ["stdio", "zmq"])
def test_a_slow_honest_bot_is_held_to_its_strikes_not_the_stray_limit(
        tmp_path: Path, sandbox: Sandbox, transport: str) -> None:
    """Sandboxed, over both transports: a bot whose every fourth reply comes after its
    request timed out (tests/bots/slow_honest.py) plays the game out on the strikes
    the organiser allows (40): its late replies, one per timed-out request, are
    discarded but are no messages "nobody asked for" (the stray limit counts those
    in the referee's players, whatever the transport)."""
    notes: list[str] = []
    tc = TimeControl(startup=scaled(20.0), per_decision=scaled(0.15), bank=0.0)
    p = external_player("slow", [sys.executable, str(BOTS / "slow_honest.py")], None, None,
                        tc, sandbox.config.memory_mb, str(tmp_path / "logs"), sandbox=sandbox,
                        transport=transport,
                        on_message=lambda d, _b, text, _t: notes.append(text)
                        if d == "note" else None)
    try:
        rec = run_game(GameConfig(players=2), 7, [p, InProcessPlayer(make_bot("lowest"))],
                       time_control=tc, policy=FaultPolicy("substitute", 40))
    finally:
        p.close()
    mine = [f for f in rec.faults if f.seat == 0]
    assert rec.result is not None and list(rec.result.forfeits) == [], mine
    assert len(mine) >= 10 and all(f.kind == "timeout" for f in mine), mine
    assert sum(n.startswith("ignored: reply to request") for n in notes) >= 10


def test_a_zeromq_ping_flood_is_cut_at_its_allowance(children: Children) -> None:
    """A launched ZeroMQ bot sends 9-byte ZMTP PINGs as fast as it can on each of its
    turns (for a minute, reading the PONGs), thinking meanwhile.  Before, the referee
    read them for as long as they came: the deadline of a 1 s turn overrun by the
    whole flood, about 0.4 s of the referee's CPU per second of it, and, with games
    in flight, the flooder charged nothing for its time.  Now a connection may send
    100 command frames, then 100 a second: the 101st-odd is a 'malformed' fault
    naming the bot and what it sent, its connection dropped, and it forfeits (the
    game played out).  (The clock holding whatever arrives is
    tests/players/test_zmq_floods.py.)"""
    out, _ = _referee_play(children, ["pings", f"{scaled(60):g}"])
    assert "result:" in out and "SUCCEEDED" not in out, out
    assert "zmtp (seat 0) turn 0: malformed: zmtp replied to request 1 with " in out, out
    assert (" ZeroMQ command frames (PING, ...) faster than the limit of 100 at once and "
            "100 a second (" in out), out
    assert " in all); the connection is dropped [substituted]" in out, out
    assert "attack_zmtp: " in out and ": failed: the referee dropped the connection" in out, out
    assert "[forfeit]" in out


def test_a_launched_zeromq_bot_cannot_hold_the_referees_descriptors(children: Children) -> None:
    """Before its hello, a launched ZeroMQ bot connects 1,000 more times to its
    endpoint and keeps every connection.  Before, the referee accepted them all
    (2,013 descriptors for 2,000) and, out of descriptors, spun on accept() for good:
    the startup limit never fired, no fault, no result.  Now the fifth connection
    open at once closes the endpoint: a 'protocol' fault naming the bot, which
    forfeits, and the game is played out."""
    out, _ = _referee_play(children, ["conns", "1000"])
    assert "result:" in out and "SUCCEEDED" not in out, out
    assert ("zmtp (seat 0) turn 0: protocol: zmtp made 5 connections open at once to its "
            "endpoint ipc://") in out, out
    assert ("(a launched bot may have 4 open at once before its hello, and make 16 in all "
            "per start): the endpoint was closed (before its hello) [forfeit]") in out, out


def test_a_zeromq_ping_flood_is_cut_with_games_in_flight(tmp_path: Path, sandbox: object) -> None:
    """The flood of test_a_zeromq_ping_flood_is_cut_at_its_allowance in a sandboxed
    tournament with games in flight (one worker loop, ``--concurrency 4``, as
    ``league run`` plays too): before, the flooder thought 3 s a decision against 1 s
    + 2 s of bank and was charged 0.04 s a game, never faulted.  Now each of its
    games records the 'malformed' fault naming it at its first request, and it
    forfeits them; the games without it have no fault."""
    cfg, out = _tournament(tmp_path, [
        {"name": "pinger", "transport": "zmq",
         "command": [sys.executable, str(BOTS / "attack_zmtp.py"), "pings", f"{scaled(60):g}"]},
        _first("first"), {"name": "lowest", "builtin": "lowest"}], deals=1)
    summary = run_tournament(cfg, output_dir=out, executor=SerialExecutor(concurrency=4),
                             quiet=True)
    assert not summary.errors, summary.errors
    flooded = 0
    for path in sorted((out / "games").glob("*.jsonl")):
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        [game] = [r for r in rows if r["type"] == "game"]
        faults = [r for r in rows if r["type"] == "fault"]
        if "pinger" not in game["bots"]:
            assert faults == [], faults
            continue
        flooded += 1
        seat = game["bots"].index("pinger")
        assert faults and all(f["seat"] == seat for f in faults), faults
        assert faults[0]["kind"] == "malformed", faults
        assert faults[0]["detail"].startswith("pinger replied to request 1 with "), faults
        assert "ZeroMQ command frames (PING, ...)" in faults[0]["detail"], faults
        assert faults[-1]["action"] == "forfeit", faults
    assert flooded >= 2
