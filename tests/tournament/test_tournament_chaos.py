"""Chaos: real tournaments and games with bots that misbehave at random
(tests/bots/chaos.py), checking the referee's promise end to end -- bad bot input
never crashes the referee and never loses a result; every fault is recorded with a
kind from the documented set and a message naming the bot; forfeits follow the fault
policy; the tournament goes on; and afterwards no process a bot started is left
running.

Every chaos bot is seeded (``SEED`` below, and one seed per bot): a bot's behaviour
in a game depends only on its seed and the game, so a failure reproduces with the
same seeds.  Time limits are short (0.1 s a decision) so that timeouts cost little;
nothing here asserts how long anything took.
"""

from __future__ import annotations

import io
import json
import os
import re
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from referee.play.runner import replay_check
from referee.players.process import alive, live_bots
from referee.protocol.messages import FAULT_ACTIONS, FAULT_KINDS
from referee.tournament.config import parse_config
from referee.tournament.driver import Progress
from referee.tournament.executor import ProcessExecutor
from referee.tournament.run import run_tournament, standings_of
from referee.tournament.schedule import schedule
from tests.procs import scaled

pytestmark = pytest.mark.slow

CHAOS = Path(__file__).resolve().parents[1] / "bots" / "chaos.py"
#: The installed command, next to this Python (as tests/cli/cli_helpers.py finds it).
REFEREE = str(Path(sys.executable).parent / "referee")

#: Every assertion message names it; CHAOS_TEST_SEED=N explores other games (and
#: reproduces a failure seen with seed N).
SEED = int(os.environ.get("CHAOS_TEST_SEED", "20240611"))

#: Misbehaviour mixes (see chaos.py): everything; mostly noise the referee must
#: tolerate without a fault; mostly the bot's end; mostly undecodable replies.
MIXES = {
    "all": "default",
    "noisy": "index=6,text=3,blank=2,stderr=2,split=2,duplicate=2,wrong_id=2,flood=1,"
             "trailing=1,spawn=0.5,slow=0.3,illegal=0.3",
    "deadly": "index=8,exit=1,orphan=1,close=1,close_stdin=1,reply_exit=1,freeze=0.3,"
              "spawn=0.5,slow=1,silent=1",
    "garbage": "index=4,json=1,utf8=1,nonobject=1,nested=1,fields=1,huge=1,longtext=1,"
               "protocol=1,illegal=1,syntax=1,range=1",
}
TIME = {"startup": 10.0, "per_decision": 0.1, "bank": 0.1}
BUILTIN = {"heuristic", "random", "lowest"}
#: A fault's detail is a readable line, whatever the bot sent: never its megabytes.
MAX_DETAIL = 2000


def chaos_bot(name: str, mix: str, seed: int, piddir: Path, startup: str = "hello"
              ) -> dict[str, Any]:
    """A chaos bot's [[bots]] table; ``startup``: its mix of misbehaviours in place
    of the hello ("default": each now and then)."""
    return {"name": name,
            "command": [sys.executable, str(CHAOS), "--seed", str(seed), "--mix", MIXES[mix],
                        "--startup", startup, "--name", name],
            "env": {"CHAOS_PIDDIR": str(piddir)},
            # Unsandboxed: its notes of its processes go to the host's piddir (the
            # sandbox itself is attacked in tests/players/sandbox/).
            "sandbox": "off"}


def config(*, seats: int, bots: list[dict[str, Any]], faults: dict[str, Any],
           deals: int = 1) -> dict[str, Any]:
    """A round-robin among ``bots`` (a parsed TOML document)."""
    return {"tournament": {"name": f"chaos-{seats}", "seats": seats, "deals": deals,
                           "seed": SEED, "output": "out"},
            # The chaos bots misbehave on purpose, some in every game: none is stopped
            # ([faults] stop_after), so that every game is played with each one started.
            "time": TIME, "faults": {"stop_after": 0, **faults}, "bots": bots}


def toml(raw: dict[str, Any]) -> str:
    """``config``'s document as a TOML file (JSON strings, numbers and lists of
    strings are TOML too)."""
    lines = []
    for section in ("tournament", "time", "faults"):
        lines += [f"[{section}]", *(f"{k} = {json.dumps(v)}" for k, v in raw[section].items())]
    for b in raw["bots"]:
        lines.append("[[bots]]")
        for k, v in b.items():
            text = ("{ " + ", ".join(f"{kk} = {json.dumps(vv)}" for kk, vv in v.items()) + " }"
                    if isinstance(v, dict) else json.dumps(v))
            lines.append(f"{k} = {text}")
    return "\n".join(lines) + "\n"


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The installed ``referee`` command."""
    assert os.access(REFEREE, os.X_OK), f"{REFEREE} is not installed: run make test"
    return subprocess.run([REFEREE, *args], capture_output=True, text=True, timeout=scaled(120),
                          env={**os.environ, **(env or {})})


def rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def left_running(piddir: Path, within: float = 5.0) -> list[str]:
    """The processes the chaos bots noted (themselves, their children) still alive
    after up to ``within`` seconds (orphans take a moment to be reaped)."""
    import time

    deadline = time.monotonic() + scaled(within)
    while True:
        left = [f"{p.name} ({p.read_text() or 'child'})" for p in piddir.iterdir()
                if p.name.isdigit() and alive(int(p.name))]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def kill_left(piddir: Path) -> None:
    """Never leave a process to the next test, even when this one failed."""
    for p in piddir.iterdir():
        if p.name.isdigit() and alive(int(p.name)):
            os.kill(int(p.name), 9)


def check_fault(f: dict[str, Any], seats: list[str], where: str) -> None:
    seat, bot, kind, detail = f["seat"], f["bot"], f["kind"], f["detail"]
    assert bot == seats[seat], f"{where}: fault of seat {seat} names {bot!r}"
    assert kind in FAULT_KINDS, f"{where}: fault kind {kind!r} is not documented: {f}"
    assert f["action"] in FAULT_ACTIONS, f"{where}: {f}"
    # The detail names the bot (or, for an illegal decision, its seat, as the message
    # the bot itself is sent does: PROTOCOL.md).
    assert bot in detail or (kind == "illegal" and detail.startswith(f"seat {seat}: ")), (
        f"{where}: the fault does not say whose it is: {f}")
    if kind == "crash":  # how the bot ended, or what it closed while it ran on
        assert "process still running" not in detail and "is not running" not in detail, (
            f"{where}: a crash that does not say what happened: {f}")
        assert "command not found" not in detail or "before its hello" in detail, (
            f"{where}: a bot that spoke cannot have been 'not found': {f}")
    assert 0 < len(detail) <= MAX_DETAIL, (
        f"{where}: a fault detail of {len(detail)} characters: {detail[:300]!r}")
    if bot in BUILTIN:  # a built-in bot can only be late (a loaded machine)
        assert kind == "timeout", f"{where}: a built-in bot faulted: {f}"


def check_policy(faults: list[dict[str, Any]], forfeits: list[int], places: list[int],
                 policy: dict[str, Any], where: str) -> None:
    """Forfeits follow the fault policy (PROTOCOL.md, Faults): a strike per fault, a
    forfeit on the fault over the limit (the first, under 'forfeit'), or at once on
    a fatal one (a crash, a timeout at start-up or of a bot that stopped reading, any
    start-up fault, a tenth message nobody asked for in a game); nothing after a forfeit but faults recorded after the game; a
    forfeited seat last, an earlier forfeit lower."""
    limit = 0 if policy.get("policy") == "forfeit" else policy.get("strike_limit", 3)
    strikes: Counter[int] = Counter()
    out: list[int] = []
    for f in faults:
        seat = f["seat"]
        if f["action"] == "recorded":  # after the game (end_game): no strike
            continue
        assert seat not in out, f"{where}: a fault after seat {seat} forfeited: {f}"
        strikes[seat] += 1
        if f["action"] == "forfeit":
            out.append(seat)
            if strikes[seat] <= limit:  # before the limit: only a fatal fault forfeits
                startup = f["turn"] == 0 and ("did not say hello properly" in f["detail"]
                                              or "this referee speaks" in f["detail"])
                strays = f["kind"] == "protocol" and "messages nobody asked for" in f["detail"]
                assert f["kind"] in ("crash", "timeout") or startup or strays, (
                    f"{where}: early forfeit: {f}")
        else:
            assert strikes[seat] <= limit, f"{where}: fault over the limit substituted: {f}"
            assert f["kind"] != "crash", f"{where}: a crash did not forfeit: {f}"
    assert forfeits == out, f"{where}: forfeits {forfeits}, faults say {out}"
    n = len(places)
    for i, seat in enumerate(forfeits):
        assert places[seat] == n - i, f"{where}: forfeits {forfeits} but places {places}"
    for seat in set(range(n)) - set(forfeits):
        assert places[seat] <= n - len(forfeits), f"{where}: places {places}"


def check_tournament(out: Path, raw: dict[str, Any], scheduled: int, why: str
                     ) -> Counter[str]:
    """Everything the store and the records hold of a finished chaos tournament;
    returns the fault kinds seen."""
    db = out / "tournament.sqlite"
    games = rows(db, "SELECT idx, game_id, seats, places, points, faults, forfeits, record "
                     "FROM games ORDER BY idx")
    assert [g[0] for g in games] == list(range(scheduled)), f"{why}: games missing"
    per_seat = {(i, s): (bot, place, points, n) for i, s, bot, place, points, n in
                rows(db, "SELECT idx, seat, bot, place, points, faults FROM seats")}
    kinds: Counter[str] = Counter()
    by_bot: dict[str, Counter[str]] = {}
    forfeited: Counter[str] = Counter()
    for idx, game_id, seats_j, places_j, points_j, faults_j, forfeits_j, record in games:
        where = f"{why}, game {game_id}"
        seats, places, points = json.loads(seats_j), json.loads(places_j), json.loads(points_j)
        faults, forfeits = json.loads(faults_j), json.loads(forfeits_j)
        lines = (out / record).read_text().splitlines()
        ok, diff = replay_check(lines)
        assert ok, f"{where}: the record does not re-run: {diff}"
        result = json.loads(lines[-1])
        assert result["type"] == "result" and result["places"] == places, where
        assert result["points"] == points and result["forfeits"] == forfeits, where
        assert [json.loads(x) for x in lines if '"type":"fault"' in x] == [
            {"type": "fault", **f} for f in faults], f"{where}: record and store differ"
        assert sorted(places)[0] == 1, where
        for seat, bot in enumerate(seats):
            n = sum(f["seat"] == seat for f in faults)
            assert per_seat[idx, seat] == (bot, places[seat], points[seat], n), where
        for f in faults:
            check_fault(f, seats, where)
            kinds[f["kind"]] += 1
            by_bot.setdefault(f["bot"], Counter())[f["kind"]] += 1
        check_policy(faults, forfeits, places, raw.get("faults", {}), where)
        for seat in forfeits:
            forfeited[seats[seat]] += 1
    # The standings add the same faults up.
    table = standings_of(out)
    assert table.played == table.scheduled == scheduled, why
    for r in table.rows:
        mine = by_bot.get(r.bot, Counter())
        assert (r.timeouts, r.crashes, r.illegal, r.malformed, r.oversized, r.protocol,
                r.forfeits) == (
            mine["timeout"], mine["crash"], mine["illegal"], mine["malformed"],
            mine["oversized"], mine["protocol"], forfeited[r.bot]), (
            f"{why}: standings of {r.bot}")
    return kinds


@pytest.fixture
def piddir(tmp_path: Path) -> Any:
    d = tmp_path / "pids"
    d.mkdir()
    before = set(map(id, live_bots()))
    yield d
    leaked = [b for b in live_bots() if id(b) not in before]
    for b in leaked:
        b.end(0.2)
    left = left_running(d)
    kill_left(d)
    assert not leaked, f"bots not ended: {[b.command for b in leaked]}"
    assert not left, f"processes left running (seed {SEED}): {left}"


def run_library(tmp_path: Path, piddir: Path, raw: dict[str, Any], why: str
                ) -> Counter[str]:
    """Run ``raw`` through the library with two worker processes; check it; return
    the fault kinds seen."""
    cfg = parse_config(raw, base_dir=str(tmp_path))
    out = tmp_path / "out"
    shown = io.StringIO()
    total = len(schedule(cfg))
    summary = run_tournament(cfg, output_dir=out, executor=ProcessExecutor(2),
                             progress=Progress(total, 0, stream=shown, tty=False))
    text = shown.getvalue()
    assert summary.errors == [], f"{why}: {summary.errors}"
    assert summary.played == summary.scheduled == total, why
    kinds = check_tournament(out, raw, total, why)
    # every fault was shown as it happened (all but those recorded after a game)
    stored = [f for (fj,) in rows(out / "tournament.sqlite", "SELECT faults FROM games")
              for f in json.loads(fj) if f["action"] != "recorded"]
    repeats = re.search(r"^(\d+) more faults? not shown \(the standings count every fault",
                        text, re.M)
    shown_faults = text.count("\nfault: ") + text.startswith("fault: ")
    assert shown_faults + (int(repeats.group(1)) if repeats else 0) == len(stored), why
    assert left_running(piddir) == [], f"{why}: processes left running"
    return kinds


def test_chaos_tournament_two_seats(tmp_path: Path, piddir: Path) -> None:
    bots = [chaos_bot("chaos-all", "all", SEED, piddir, startup="default"),
            chaos_bot("chaos-deadly", "deadly", SEED + 1, piddir),
            chaos_bot("chaos-garbage", "garbage", SEED + 2, piddir),
            {"name": "heuristic", "builtin": "heuristic"},
            {"name": "random", "builtin": "random"}]
    # Two deals: the draws depend on the game ids the bots are sent, and one deal's
    # 20 games do not reach every kind under every seed.
    raw = config(seats=2, bots=bots, faults={"strike_limit": 3}, deals=2)
    kinds = run_library(tmp_path, piddir, raw, f"2 seats, seed {SEED}")
    assert {"crash", "malformed", "oversized", "protocol", "illegal", "timeout"} <= set(kinds), (
        f"seed {SEED}: not every fault kind happened: {kinds}")


def test_chaos_tournament_four_seats(tmp_path: Path, piddir: Path) -> None:
    bots = [chaos_bot("chaos-all", "all", SEED + 3, piddir, startup="default"),
            chaos_bot("chaos-noisy", "noisy", SEED + 4, piddir),
            chaos_bot("chaos-deadly", "deadly", SEED + 5, piddir),
            chaos_bot("chaos-garbage", "garbage", SEED + 6, piddir),
            {"name": "lowest", "builtin": "lowest"}]
    raw = config(seats=4, bots=bots, faults={"strike_limit": 1})
    run_library(tmp_path, piddir, raw, f"4 seats, seed {SEED}")


def test_chaos_tournament_through_the_installed_command(tmp_path: Path, piddir: Path) -> None:
    bots = [chaos_bot("chaos-all", "all", SEED + 7, piddir, startup="default"),
            chaos_bot("chaos-deadly", "deadly", SEED + 8, piddir),
            {"name": "heuristic", "builtin": "heuristic"}]
    raw = config(seats=2, bots=bots, faults={"policy": "forfeit"}, deals=2)
    (tmp_path / "t.toml").write_text(toml(raw))
    p = run("tournament", "run", str(tmp_path / "t.toml"), "--jobs", "2", "--format", "json")
    why = f"referee tournament run, seed {SEED}"
    assert p.returncode == 0, f"{why}: exit {p.returncode}: {p.stderr[-3000:]}"
    assert "Traceback" not in p.stderr, f"{why}: {p.stderr[-3000:]}"
    data = json.loads(p.stdout)
    total = 3 * 2 * 2  # 3 pairs, 2 deals, both seatings
    assert data["played"] == data["scheduled"] == total, why
    check_tournament(tmp_path / "out", raw, total, why)
    records = sorted((tmp_path / "out" / "games").glob("*.jsonl"))
    assert len(records) == total
    for rec in records[:2]:
        r = run("replay", str(rec), "--check")
        assert r.returncode == 0, f"{why}: replay --check {rec.name}: {r.stdout}{r.stderr}"
    assert left_running(piddir) == [], f"{why}: processes left running"


def test_chaos_games_over_referee_play_with_a_transcript(tmp_path: Path, piddir: Path
                                                         ) -> None:
    seats = []
    for i, mix in enumerate(("all", "deadly", "garbage")):
        seats.append(f"chaos-{mix}=stdio:{sys.executable} {CHAOS} --seed {SEED + 10 + i} "
                     f"--mix {MIXES[mix]} --startup {'default' if i == 0 else 'hello'} "
                     f"--name chaos-{mix}")
    transcript = tmp_path / "transcript.txt"
    p = run("play", *seats, "heuristic", "--games", "2", "--seed", str(SEED),
            "--move-time", "0.1", "--bank", "0.1", "--startup", str(scaled(10)), "--transcript",
            "--transcript-file", str(transcript), "--no-colour", "--json",
            "--record-dir", str(tmp_path / "records"), env={"CHAOS_PIDDIR": str(piddir)})
    why = f"referee play, seed {SEED}"
    assert p.returncode == 0, f"{why}: exit {p.returncode}: {p.stderr[-3000:]}"
    assert "Traceback" not in p.stderr, why
    data = json.loads(p.stdout)
    lines = transcript.read_text().splitlines()
    assert len(data["games"]) == 2
    for game in data["games"]:
        where = f"{why}, game {game['game_id']}"
        names = game["bots"]
        for f in game["faults"]:
            check_fault(f, names, where)
            # the transcript names the bot and says what was rejected and why
            what = "CRASHED" if f["kind"] == "crash" else f"REJECTED {f['kind']}"
            line = (f"{what} at turn {f['turn']}: {f['detail']} "
                    f"[{f['action']}]")
            assert any(f" XX {f['bot']}" in x and x.endswith(line) for x in lines
                       ), f"{where}: no transcript line {line!r}"
        check_policy(game["faults"], game["forfeits"], game["places"], {}, where)
        ok, diff = replay_check(Path(game["record"]).read_text().splitlines())
        assert ok, f"{where}: {diff}"
    assert sum(len(g["faults"]) for g in data["games"]) > 0, why
    assert left_running(piddir) == [], f"{why}: processes left running"
