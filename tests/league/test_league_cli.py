"""A season through the installed command: make a league, submit real bots (checked
in the sandbox), run, resubmit, read the standings, browse games and bots; refused
submissions and refused configuration changes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from referee.league.store import LeagueStore
from tests.league.conftest import Referee
from tests.league.leaguehelpers import EXAMPLE_BOTS, PER_DECISION, league_toml

pytestmark = pytest.mark.slow

BOTS = Path(__file__).resolve().parents[1] / "bots"


def test_submit_run_resubmit_and_standings(tmp_path: Path, referee: Referee,
                                           need_sandbox: None) -> None:
    league = tmp_path / "season"
    cfg = league_toml(tmp_path / "league.toml", seats=[2, 3], deals=1, seed=11)
    r = referee("league", "new", league, "--config", cfg)
    assert r.returncode == 0, r.stderr
    assert "seats [2, 3], 1 deals per lineup, seed 11" in r.stdout
    for name, cmd in (("heur", "python3 heuristic_bot.py"),
                      ("rand", "python3 random_bot.py --seed 1"),
                      ("rand2", "python3 random_bot.py --seed 2")):
        r = referee("league", "submit", league, name, EXAMPLE_BOTS, "--command", cmd)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "PASSED" in r.stdout and "sandbox: bubblewrap" in r.stdout
        assert f"accepted: {name} version 1" in r.stdout
    # immutable copy, read-only
    copy = league / "entries" / "heur" / "v1"
    assert (copy / "heuristic_bot.py").read_bytes() == (EXAMPLE_BOTS / "heuristic_bot.py").read_bytes()
    assert not (copy.stat().st_mode & 0o222)

    r = referee("league", "run", league, "--jobs", "2", "--quiet")
    assert r.returncode == 0, r.stderr
    assert "played 9 games" in r.stderr  # 3 pairs x 2 seatings + 1 trio x 3
    assert "test: 6 games, 2 seats" in r.stdout and "test: 3 games, 3 seats" in r.stdout

    r = referee("league", "submit", league, "heur", EXAMPLE_BOTS, "--command",
                "python3 heuristic_bot.py")
    assert r.returncode == 0 and "unchanged: heur version 1 is this bot already" in r.stdout
    r = referee("league", "submit", league, "rand", EXAMPLE_BOTS, "--command",
                "python3 random_bot.py --seed 3")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "accepted: rand version 2" in r.stdout and "version 1 retired" in r.stdout
    r = referee("league", "run", league, "--quiet")
    assert r.returncode == 0, r.stderr
    assert "played 7 games" in r.stderr  # rand@2's 2 pairs x 2 + 1 trio x 3

    r = referee("league", "standings", league, "--seats", "2", "--format", "json")
    st = json.loads(r.stdout)
    assert {row["bot"] for row in st["standings"]} == {"heur@1", "rand@2", "rand2@1"}
    assert st["played"] == st["scheduled"] == 6
    r = referee("league", "standings", league, "--history", "--seats", "2", "--format", "json")
    hist = json.loads(r.stdout)
    assert {row["bot"] for row in hist["standings"]} == {"heur@1", "rand@1", "rand@2", "rand2@1"}
    assert hist["played"] == 10
    r = referee("league", "standings", league, "--seats", "5")
    assert r.returncode == 1 and r.stderr.startswith("Error: the league plays no 5-seat games")

    r = referee("league", "games", league, "--bot", "rand", "--vs", "heur")
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert len(lines) == 2 * (2 + 3)  # rand@1 and rand@2: 2 seatings vs heur, 3 of the trio
    assert all("rand@" in x and "heur@1" in x for x in lines)
    # no game ends on a wall-clock stop any more (game clocks, RULES 5.4): a filter
    # that matches nothing, whatever a loaded machine did to the games
    r = referee("league", "games", league, "--ended", "time_limit")
    assert r.stdout == "" and "0 games" in r.stderr
    r = referee("league", "games", league, "--ended", "played_out")
    assert r.stdout and all(x.endswith("played_out") for x in r.stdout.splitlines())

    r = referee("league", "show", league, "rand")
    assert r.returncode == 0
    assert "v1  retired" in r.stdout and "v2  active" in r.stdout
    assert "rand@2 per opponent" in r.stdout and "vs heur@1" in r.stdout
    assert "stderr.log" in r.stdout
    r = referee("league", "verify", league)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "verified: 16 games re-run identically and match the database" in r.stdout
    # verify catches an edited seats row and a deleted games row (as tournament
    # verify does: the same check), and a missing record
    conn = sqlite3.connect(league / "league.sqlite")
    conn.execute("UPDATE seats SET place = 3 - place WHERE idx = 1")
    conn.execute("DELETE FROM seats WHERE idx = 2")
    conn.execute("DELETE FROM games WHERE idx = 2")
    conn.commit()
    conn.close()
    (league / "games" / "g000003.jsonl").unlink()
    r = referee("league", "verify", league)
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert lines[0].startswith("g000001: seat 0's row in table seats differs")
    assert any(x.startswith("g000003: its record games/g000003.jsonl is missing") for x in lines)
    assert any(x.startswith("g000002: games/g000002.jsonl has no row in the database")
               for x in lines)
    assert "Error: 3 of the 15 games in the database do not verify (listed above)" in r.stderr
    store = LeagueStore.open(league)
    try:
        assert [(e.name, e.version, e.active) for e in store.entries("rand")] == [
            ("rand", 1, False), ("rand", 2, True)]
    finally:
        store.close()


def test_a_bot_that_fails_the_check_is_refused_with_its_report(
        tmp_path: Path, referee: Referee, need_sandbox: None) -> None:
    league = tmp_path / "l"
    cfg = league_toml(tmp_path / "league.toml")
    assert referee("league", "new", league, "--config", cfg).returncode == 0
    r = referee("league", "submit", league, "crashy", BOTS, "--command", "python3 crash.py")
    assert r.returncode == 1
    assert "FAIL" in r.stdout and "crash" in r.stdout
    assert "refused: crashy did not pass check-bot" in r.stdout
    assert list((league / "entries").iterdir()) == []  # nothing kept
    store = LeagueStore.open(league)
    try:
        assert store.entries() == []
    finally:
        store.close()


def test_changing_rules_time_or_sandbox_is_refused_in_one_line(
        tmp_path: Path, referee: Referee) -> None:
    league = tmp_path / "l"
    cfg = league_toml(tmp_path / "league.toml", deals=2)
    assert referee("league", "new", league, "--config", cfg).returncode == 0
    edited = league_toml(tmp_path / "edited.toml", deals=1,
                         extra="[rules]\nturn_limit = 300\n[sandbox]\nmemory_mb = 256\n")
    r = referee("league", "new", league, "--config", edited)
    # one line and exit status 1, as README's "Exit status" and leagues/README say
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("Error: ") and "changes them" in lines[0]
    assert "rules.turn_limit: was 1000, now 300;" in lines[0]
    assert "sandbox.memory_mb: was 1024, now 256" in lines[0]
    assert f"time.per_decision: was {PER_DECISION}, now {PER_DECISION}" not in r.stderr
    assert "deals: was 2, now 1" in lines[0]
    assert len(r.stderr) < 800
    # more deals and another table size are taken
    raised = league_toml(tmp_path / "raised.toml", deals=4, seats=[2, 4])
    r = referee("league", "new", league, "--config", raised)
    assert r.returncode == 0, r.stderr
    assert "deals: 2 -> 4 (only the new deals are played)" in r.stdout
    assert "seats: [2] -> [2, 4]" in r.stdout
    off = league_toml(tmp_path / "off.toml", extra="[sandbox]\nmode = \"off\"\n")
    r = referee("league", "new", tmp_path / "other", "--config", off)
    assert r.returncode == 1 and "must be \"on\" or \"auto\"" in r.stderr


def test_check_bot_takes_a_league_file(tmp_path: Path, referee: Referee,
                                       need_sandbox: None) -> None:
    cfg = league_toml(tmp_path / "league.toml", extra="[sandbox]\nmode = \"auto\"\n"
                      "memory_mb = 300\n")
    r = referee("check-bot", "--config", cfg, "--cwd", EXAMPLE_BOTS, "python3 heuristic_bot.py")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "sandbox: bubblewrap; memory 300 MB" in r.stdout
    assert f"limit {PER_DECISION:.3f}s each" in r.stdout  # the league's per_decision
