"""Tournaments through the real path: the ``referee tournament`` command, worker
processes, the SQLite store, game records; a run killed with SIGKILL and resumed;
misbehaving bots; external bots over stdio."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.cli.main import main
from referee.play.runner import replay_check
from tests.procs import Children, scaled

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
REFEREE = [sys.executable, "-m", "referee.cli.main"]


def write(tmp_path: Path, body: str, name: str = "t.toml") -> Path:
    p = tmp_path / name
    p.write_text(body)
    return p


def invoke(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args))
    if r.exception and not isinstance(r.exception, SystemExit):
        raise r.exception
    return r.exit_code, r.stdout, r.stderr


def db_rows(out: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(out / "tournament.sqlite")
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


BUILTINS = """
[[bots]]
name = "heuristic"
builtin = "heuristic"
[[bots]]
name = "lowest"
builtin = "lowest"
[[bots]]
name = "random"
builtin = "random"
"""


def test_round_robin_in_worker_processes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    counted = tmp_path / "counted"
    counted.mkdir()
    monkeypatch.setenv("COUNTED_DIR", str(counted))
    cfg = write(tmp_path, f"""
[tournament]
name = "rr"
seats = 3
deals = 4
output = "out"
{BUILTINS}
[[bots]]
name = "counted"
python = "{HERE / 'fakebots.py'}:Counted"
""")
    code, out, err = invoke("tournament", "run", str(cfg), "--jobs", "2", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    total = 4 * 4 * 3  # 4 lineups of 3 from 4 bots, 4 deals, 3 rotations
    assert data["played"] == data["scheduled"] == total
    assert sum(r["games"] for r in data["standings"]) == total * 3
    assert all(r["games"] == 3 * 4 * 3 for r in data["standings"])  # 3 lineups each
    # every game is in the database once, with its record beside it
    outdir = tmp_path / "out"
    rows = db_rows(outdir, "SELECT idx, record, seats, places FROM games ORDER BY idx")
    assert [r[0] for r in rows] == list(range(total))
    for _, record, _, places in rows[:: total // 6]:
        lines = (outdir / str(record)).read_text().splitlines()
        ok, why = replay_check(lines)
        assert ok, why
        assert json.loads(lines[-1])["places"] == json.loads(str(places))
    assert db_rows(outdir, "SELECT COUNT(*) FROM seats")[0][0] == total * 3
    # two workers, each keeping one bot object across its games, pinned to one CPU
    made = list(counted.iterdir())
    assert 1 <= len(made) <= 2
    assert {len(f.read_text().strip("{}").split(",")) for f in made} == {1}
    assert len({f.name.split("-")[0] for f in made}) == len(made)  # one per worker
    assert str(os.getpid()) not in {f.name.split("-")[0] for f in made}
    # standings are readable afterwards, from the folder or the configuration
    for where in (str(outdir), str(cfg)):
        code, text, _ = invoke("tournament", "standings", where, "--format", "markdown")
        assert code == 0 and "| rank" in text and "how often the row bot finished ahead" in text


def test_misbehaving_bots_fault_and_the_league_completes(tmp_path: Path) -> None:
    cfg = write(tmp_path, f"""
[tournament]
name = "rough"
seats = 2
deals = 3
output = "out"
[faults]
strike_limit = 2
{BUILTINS}
[[bots]]
name = "raiser"
python = "{HERE / 'fakebots.py'}:Raiser"
[[bots]]
name = "garbage"
python = "{HERE / 'fakebots.py'}:Garbage"
""")
    code, out, err = invoke("tournament", "run", str(cfg), "--jobs", "2", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["played"] == data["scheduled"] == 10 * 3 * 2
    rows = {r["bot"]: r for r in data["standings"]}
    raiser, garbage = rows["raiser"], rows["garbage"]
    assert raiser["games"] == 4 * 3 * 2
    # A crash forfeits; crashing in each of its first 3 games, it is stopped, and its
    # other games are forfeited without starting it (a game in flight may still crash).
    assert raiser["forfeits"] == raiser["games"]
    assert 3 <= raiser["crashes"] <= 4 and raiser["stopped"] == raiser["games"] - raiser["crashes"]
    assert "stopped raiser: it failed in each of its first 3 games" in err
    assert raiser["wins"] == 0 and raiser["rank"] == 5
    assert garbage["illegal"] > 0 and garbage["crashes"] == 0
    assert 0 < garbage["forfeits"] <= garbage["games"]  # three strikes forfeit
    for name in ("heuristic", "lowest", "random"):
        assert rows[name]["crashes"] == rows[name]["illegal"] == rows[name]["forfeits"] == 0
    # faults are shown as they happen, naming the bot and what it did
    assert "fault: g0" in err and "raiser (seat" in err and "the raiser bot fell over" in err
    assert "illegal" in err and "banana" in err
    # and they are in the game records
    outdir = tmp_path / "out"
    faults = db_rows(outdir, "SELECT SUM(faults) FROM seats WHERE bot = 'raiser'")[0][0]
    assert faults == raiser["crashes"] + raiser["stopped"]


def test_changed_configuration_is_refused(tmp_path: Path) -> None:
    body = '[tournament]\nseats = 2\ndeals = 1\nseed = 1\noutput = "out"\n' + BUILTINS
    cfg = write(tmp_path, body)
    code, _, err = invoke("tournament", "run", str(cfg), "-q", "--jobs", "1")
    assert code == 0, err
    write(tmp_path, body.replace("seed = 1", "seed = 5"))
    code, out, err = invoke("tournament", "run", str(cfg), "-q")
    assert code == 1
    assert err.strip().splitlines() == [
        f"Error: {tmp_path / 'out'} holds a tournament with another configuration (seed: was 1, "
        "now 5); run it with its original configuration to resume, or choose another output folder"]
    # another jobs count is not another tournament: it resumes and has nothing to play
    write(tmp_path, body.replace("deals = 1", "deals = 1\njobs = 2"))
    code, out, err = invoke("tournament", "run", str(cfg))
    # Said first, before anything else; a finished tournament has nothing to play.
    assert code == 0 and err.startswith("resumed: 6 of 6 games were already played; nothing "
                                        "left to play\n")
    assert "0/6" not in err and "6 games, 2 seats" in out


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        out += [int(x) for x in text]
    return out


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_sigkill_mid_run_then_resume_gives_the_uninterrupted_standings(
        tmp_path: Path, children: Children) -> None:
    body = f"""
[tournament]
name = "kill"
seats = 3
deals = 6
seed = 11
{BUILTINS}
[[bots]]
name = "heuristic2"
builtin = "heuristic"
"""
    cfg = write(tmp_path, body)
    total = 4 * 6 * 3  # 72: killed after 30, so that more than half is left to resume
    killed, whole = tmp_path / "killed", tmp_path / "whole"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = children.popen([*REFEREE, "tournament", "run", str(cfg), "-o", str(killed), "-q",
                           "--jobs", "2"], env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE)
    db = killed / "tournament.sqlite"
    deadline = time.monotonic() + scaled(60)
    done = 0
    while done < 30:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.monotonic() < deadline
        if db.exists():
            with contextlib.suppress(sqlite3.OperationalError):  # schema being created
                done = int(str(db_rows(killed, "SELECT COUNT(*) FROM games")[0][0]))
        time.sleep(0.02)
    workers = _children(proc.pid)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    if proc.stderr:
        proc.stderr.close()
    saved = db_rows(killed, "SELECT idx, finished, worker FROM games ORDER BY idx")
    assert 30 <= len(saved) < total
    # the workers die with the referee (no orphans)
    deadline = time.monotonic() + scaled(10)
    while any(_alive(w) for w in workers):
        assert time.monotonic() < deadline, "workers outlived the killed referee"
        time.sleep(0.05)
    # standings can be read from the interrupted tournament
    code, text, _ = invoke("tournament", "standings", str(killed))
    assert code == 0 and f"stopped at {len(saved)} of {total}: run it again" in text

    code, resumed, err = invoke("tournament", "run", str(cfg), "-o", str(killed), "--format", "json",
                                "--jobs", "2")
    assert code == 0, err
    assert err.startswith(f"resumed: {len(saved)} of {total} games were already played, "
                          f"{total - len(saved)} to go\n")
    code, uninterrupted, err = invoke("tournament", "run", str(cfg), "-o", str(whole), "--format",
                                      "json", "-q")
    assert code == 0, err
    assert json.loads(resumed) == json.loads(uninterrupted)
    assert json.loads(resumed)["played"] == total
    # nothing finished was played again, nothing dropped
    after = db_rows(killed, "SELECT idx, finished, worker FROM games ORDER BY idx")
    assert [r[0] for r in after] == list(range(total))
    assert {r[0]: r for r in after if r[0] in {s[0] for s in saved}} == {s[0]: s for s in saved}
    # the games themselves are the same games
    key = "SELECT idx, deal_seed, seats, places, points, how, turns, faults FROM games ORDER BY idx"
    assert db_rows(killed, key) == db_rows(whole, key)


def test_external_bots_from_example_bots_over_stdio_and_zmq(tmp_path: Path) -> None:
    cfg = write(tmp_path, f"""
[tournament]
name = "ext"
seats = 2
deals = 3
output = "out"
[time]
per_decision = {scaled(5.0)}
[[bots]]
name = "heuristic"
python = "{Path(__file__).resolve().parent / 'fakebots.py'}:HeuristicRule"
[[bots]]
name = "py-heuristic"
command = ["{sys.executable}", "heuristic_bot.py"]
cwd = "{REPO / 'example_bots' / 'python'}"
[[bots]]
name = "py-random"
command = ["{sys.executable}", "random_bot.py", "--seed", "3"]
cwd = "{REPO / 'example_bots' / 'python'}"
[[bots]]
name = "py-heuristic-zmq"
command = ["{sys.executable}", "heuristic_bot.py"]
transport = "zmq"
cwd = "{REPO / 'example_bots' / 'python'}"
""")
    code, out, err = invoke("tournament", "run", str(cfg), "--jobs", "2", "--format", "json", "-q")
    assert code == 0, err
    data = json.loads(out)
    assert data["played"] == data["scheduled"] == 6 * 3 * 2
    for r in data["standings"]:
        assert r["games"] == 18
        assert r["crashes"] == r["timeouts"] == r["illegal"] == r["protocol"] == r["forfeits"] == 0
    # an external bot plays exactly like the in-process bot it mirrors (the built-in
    # heuristic's rule part, without its endgame search): the duplicate games
    # between them split evenly
    assert data["head_to_head"]["heuristic"]["py-heuristic"] == {"score": 3.0, "games": 6,
                                                                 "significant": False}
    assert data["head_to_head"]["py-heuristic"]["py-heuristic-zmq"] == {
        "score": 3.0, "games": 6, "significant": False}
    # each worker keeps its own copy of each external bot, with its own log
    logs = tmp_path / "out" / "logs"
    folders = {p.name for p in logs.iterdir()}
    assert folders and folders <= {"worker-0", "worker-1"}
    assert {"py-heuristic.stderr.log", "py-heuristic-zmq.stderr.log"} <= {
        p.name for folder in folders for p in (logs / folder).iterdir()}


def test_a_worker_that_dies_is_replaced_and_its_games_are_retried(tmp_path: Path) -> None:
    cfg = write(tmp_path, f"""
[tournament]
name = "exit"
seats = 2
deals = 2
output = "out"
[[bots]]
name = "heuristic"
builtin = "heuristic"
[[bots]]
name = "lowest"
builtin = "lowest"
[[bots]]
name = "exiter"
python = "{HERE / 'fakebots.py'}:Exiter"
""")
    code, out, err = invoke("tournament", "run", str(cfg), "--jobs", "2", "--format", "json", "-q")
    assert code == 1
    data = json.loads(out)
    assert data["played"] == 4 and data["scheduled"] == 12  # heuristic-lowest only
    assert {r["bot"]: r["games"] for r in data["standings"]} == {
        "heuristic": 4, "lowest": 4, "exiter": 0}
    last = err.strip().splitlines()[-1]
    assert last.startswith("Error: 8 games could not be played (first: g0")
    assert "died while playing it (exit code 3)" in last and last.endswith("run again to retry them")
    # the games that could not be played are not in the store, so a new run retries them
    assert db_rows(tmp_path / "out", "SELECT COUNT(*) FROM games")[0][0] == 4


def test_schedule_command_lists_the_games(tmp_path: Path) -> None:
    cfg = write(tmp_path, "[tournament]\nseats = 2\ndeals = 2\n" + BUILTINS)
    code, out, _ = invoke("tournament", "schedule", str(cfg))
    lines = out.splitlines()
    # A header, the games in aligned columns, and the total.
    assert code == 0 and len(lines) == 2 + 12 + 2
    assert lines[0].split() == ["game", "deal", "seat", "0", "seat", "1"]
    assert lines[2].split()[:2] == ["g000000", "0"]
    col = lines[0].index("seat 1")  # every row's last column starts under its header
    assert all(line[col - 1] == " " and line[col] != " " for line in lines[2:14])
    assert lines[-1] == "12 games: 6 deals, 2 seatings per deal, 2 seats; bots: heuristic, lowest, random"
    code, out, _ = invoke("tournament", "schedule", str(cfg), "--json")
    rows = [json.loads(x) for x in out.splitlines()]
    assert [r["index"] for r in rows] == list(range(12))
    assert rows[0]["deal_seed"] == rows[1]["deal_seed"] and rows[0]["seats"] == rows[1]["seats"][::-1]


def test_a_changed_schedule_is_refused(tmp_path: Path) -> None:
    cfg = write(tmp_path, '[tournament]\nseats = 2\ndeals = 1\noutput = "out"\n' + BUILTINS)
    assert invoke("tournament", "run", str(cfg), "-q")[0] == 0
    conn = sqlite3.connect(tmp_path / "out" / "tournament.sqlite")
    conn.execute("UPDATE meta SET value = 'other' WHERE key = 'schedule'")
    conn.commit()
    conn.close()
    code, _, err = invoke("tournament", "run", str(cfg), "-q")
    assert code == 1 and "as scheduled by another version of the referee" in err


@pytest.mark.parametrize("sig, code, how", [(signal.SIGINT, 130, "interrupted"),
                                           (signal.SIGTERM, 143, "terminated")])
def test_ctrl_c_or_kill_stops_saves_and_resumes(tmp_path: Path, sig: int, code: int,
                                                how: str, children: Children) -> None:
    cfg = write(tmp_path, '[tournament]\nseats = 2\ndeals = 200\noutput = "out"\n' + BUILTINS)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = children.popen([*REFEREE, "tournament", "run", str(cfg), "--jobs", "2"], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = tmp_path / "out"
    deadline = time.monotonic() + scaled(60)
    done = 0
    while done < 10:
        assert proc.poll() is None and time.monotonic() < deadline
        if (out / "tournament.sqlite").exists():
            with contextlib.suppress(sqlite3.OperationalError):
                done = int(str(db_rows(out, "SELECT COUNT(*) FROM games")[0][0]))
        time.sleep(0.02)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=scaled(30))
    assert proc.returncode == code
    assert stderr.strip().splitlines()[-1] == (
        f"Error: {how}; the finished games are saved in {out}: run the same command "
        "again to resume")
    assert "Traceback" not in stderr and "leaked" not in stderr and stdout == ""
    saved = db_rows(out, "SELECT COUNT(*) FROM games")[0][0]
    assert isinstance(saved, int) and 10 <= saved < 1200


def test_a_tournament_being_run_is_not_run_twice(tmp_path: Path) -> None:
    import fcntl

    cfg = write(tmp_path, '[tournament]\nseats = 2\ndeals = 1\noutput = "out"\n' + BUILTINS)
    (tmp_path / "out").mkdir()
    with open(tmp_path / "out" / "lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a running referee does
        code, _, err = invoke("tournament", "run", str(cfg), "-q")
        assert code == 1 and "is in use by another referee running this tournament" in err
        # reading the standings meanwhile is fine
        assert invoke("tournament", "standings", str(tmp_path / "out"))[0] == 0
    assert invoke("tournament", "run", str(cfg), "-q")[0] == 0


def test_workers_that_cannot_start_stop_the_run_instead_of_respawning(tmp_path: Path) -> None:
    """A script that runs a tournament without an ``if __name__ == "__main__"``
    guard: every spawned worker dies while importing it.  The executor says so,
    once, rather than replacing dead workers for ever."""
    script = tmp_path / "unguarded.py"
    script.write_text(f"""
from pathlib import Path
from referee.tournament.config import parse_config
from referee.tournament.run import run_tournament
raw = {{"tournament": {{"deals": 2}}, "bots": [{{"name": "a", "builtin": "random"}},
                                           {{"name": "b", "builtin": "lowest"}}]}}
run_tournament(parse_config(raw), output_dir=Path({str(tmp_path / 'out')!r}), jobs=2, quiet=True)
""")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    r = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                       timeout=scaled(60))
    assert r.returncode != 0
    assert "ExecutionError: worker" in r.stderr and "died before its first game" in r.stderr


def test_the_executor_does_not_change_the_results(tmp_path: Path) -> None:
    """Scheduling and standings are independent of who plays the games: the serial
    executor (this process) and two worker processes give the same tournament."""
    from referee.tournament import load_config
    from referee.tournament.executor import SerialExecutor
    from referee.tournament.run import run_tournament, standings_of
    from referee.tournament.standings import render

    cfg = load_config(write(tmp_path, f"""
[tournament]
seats = 3
deals = 3
seed = 5
{BUILTINS}
[[bots]]
name = "garbage"
python = "{HERE / 'fakebots.py'}:Garbage"
"""))
    serial = run_tournament(cfg, output_dir=tmp_path / "serial", executor=SerialExecutor(),
                            quiet=True)
    pooled = run_tournament(cfg, output_dir=tmp_path / "pool", jobs=2, quiet=True)
    assert serial.played == pooled.played == 4 * 3 * 3 and not serial.errors
    a, b = standings_of(tmp_path / "serial"), standings_of(tmp_path / "pool")
    assert render(a, "json") == render(b, "json")
    assert sum(r.illegal for r in a.rows) > 0


def test_the_same_tournament_twice_with_two_workers_gives_the_same_results(
        tmp_path: Path) -> None:
    # Which games each worker (and so each copy of an external bot) plays depends on
    # timing; a bot seeded per game (the example random bot) plays each game the same
    # way whichever copy plays it, so the standings do not depend on the run.
    body = f"""
[tournament]
seats = 2
deals = 6
seed = 1
[[bots]]
name = "lowest"
builtin = "lowest"
[[bots]]
name = "random"
builtin = "random"
[[bots]]
name = "py-random"
command = ["{sys.executable}", "random_bot.py", "--seed", "5"]
cwd = "{REPO / 'example_bots' / 'python'}"
"""
    cfg = write(tmp_path, body)
    results = []
    for run in ("a", "b"):
        code, out, err = invoke("tournament", "run", str(cfg), "-o", str(tmp_path / run),
                                "--jobs", "2", "--format", "json", "-q")
        assert code == 0, err
        results.append(json.loads(out))
    assert results[0] == results[1]
    workers = {w for (w,) in db_rows(tmp_path / "a", "SELECT worker FROM games "
                                     "WHERE seats LIKE '%py-random%'")}
    assert workers == {0, 1}  # both copies of the bot played: the case that matters
