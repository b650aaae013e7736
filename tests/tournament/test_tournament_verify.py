"""``referee tournament verify DIR [--repair]``: every row checked against its
record, every record re-run; an edited row, a deleted record and a truncated record
are each caught, and --repair rebuilds the database from the records."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.procs import scaled

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
REFEREE = [sys.executable, "-m", "referee.cli.main"]

LEAGUE = """
[tournament]
name = "v"
seats = 2
deals = 2
seed = 1
output = "out"
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


def referee(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*REFEREE, *args], capture_output=True, text=True, timeout=scaled(120),
                          cwd=REPO)


@pytest.fixture(scope="module")
def played_once(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The tournament, played once for the module (its folder: t.toml and out/)."""
    here = tmp_path_factory.mktemp("verify")
    (here / "t.toml").write_text(LEAGUE)
    r = referee("tournament", "run", str(here / "t.toml"), "--format", "json", "-q")
    assert r.returncode == 0, r.stderr
    return here, r.stdout


@pytest.fixture
def played(played_once: tuple[Path, str], tmp_path: Path) -> tuple[Path, Path, str]:
    """A copy of the played tournament of the test's own, to damage and repair:
    (its configuration, its output folder, its standings as JSON)."""
    here, standings = played_once
    shutil.copytree(here, tmp_path / "t")
    return tmp_path / "t" / "t.toml", tmp_path / "t" / "out", standings


def sql(out: Path, *statements: str) -> None:
    conn = sqlite3.connect(out / "tournament.sqlite")
    for s in statements:
        conn.execute(s)
    conn.commit()
    conn.close()


def test_a_clean_tournament_verifies(played: tuple[Path, Path, str]) -> None:
    _, out, _ = played
    r = referee("tournament", "verify", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == "verified 12 of 12 scheduled games: 12 agree with their records"


@pytest.mark.parametrize("edit, says", [
    ("UPDATE games SET places = '[9, 9]' WHERE idx = 1", "g000001: places: the database says [9, 9]"),
    ("UPDATE games SET points = '[99, 0]' WHERE idx = 1", "g000001: points: the database says [99, 0]"),
    ("UPDATE games SET how = 'turn_limit' WHERE idx = 2", "g000002: how the game ended: the database"),
    ("UPDATE games SET faults = '[{\"seat\": 0}]' WHERE idx = 3", "g000003: faults: the database"),
    ("UPDATE games SET seats = '[\"lowest\", \"lowest\"]' WHERE idx = 4", "g000004: seats:"),
    ("UPDATE games SET deal_seed = 7 WHERE idx = 5", "g000005: deal seed: the database says 7"),
    ("UPDATE seats SET place = 5 WHERE idx = 6 AND seat = 1", "g000006: seat 1's row in table seats"),
])
def test_an_edited_row_is_caught_and_repaired(played: tuple[Path, Path, str], edit: str,
                                              says: str) -> None:
    cfg, out, standings = played
    sql(out, edit)
    r = referee("tournament", "verify", str(out))
    assert r.returncode == 1
    assert says in r.stdout, r.stdout
    assert r.stderr.startswith("Error: ") and len(r.stderr.strip().splitlines()) == 1
    fixed = referee("tournament", "verify", str(out), "--repair")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "repaired: 12 games rebuilt from their records" in fixed.stdout
    assert referee("tournament", "verify", str(out)).returncode == 0
    again = referee("tournament", "standings", str(out), "--format", "json")
    assert json.loads(again.stdout)["standings"] == json.loads(standings)["standings"]


@pytest.mark.parametrize("damage", ["delete", "truncate", "edit"])
def test_a_bad_record_is_caught_and_its_game_played_again_after_repair(
        played: tuple[Path, Path, str], damage: str) -> None:
    cfg, out, standings = played
    rec = out / "games" / "g000007.jsonl"
    if damage == "delete":
        rec.unlink()
        says = "g000007: its record games/g000007.jsonl is missing"
    elif damage == "truncate":
        data = rec.read_bytes()
        rec.write_bytes(data[: len(data) // 2])
        says = "g000007: its record games/g000007.jsonl is truncated"
    else:
        lines = rec.read_text().splitlines()
        result = json.loads(lines[-1])
        result["points"] = list(reversed(result["points"]))
        result["places"] = list(reversed(result["places"]))
        lines[-1] = json.dumps(result)
        rec.write_text("\n".join(lines) + "\n")
        says = "g000007: its record games/g000007.jsonl does not re-run identically"
    r = referee("tournament", "verify", str(out))
    assert r.returncode == 1
    assert says in r.stdout, r.stdout
    fixed = referee("tournament", "verify", str(out), "--repair")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert "11 games rebuilt" in fixed.stdout and "g000007" in fixed.stdout
    resumed = referee("tournament", "run", str(cfg), "--format", "json", "-q")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout) == json.loads(standings)
    assert referee("tournament", "verify", str(out)).returncode == 0


def test_a_database_that_cannot_be_read_is_rebuilt_with_the_configuration(
        played: tuple[Path, Path, str]) -> None:
    cfg, out, standings = played
    db = out / "tournament.sqlite"
    for extra in ("-wal", "-shm"):
        Path(str(db) + extra).unlink(missing_ok=True)
    db.write_bytes(b"garbage" * 100)
    r = referee("tournament", "verify", str(out))
    assert r.returncode == 1 and r.stderr.startswith("Error: ") and "file is not a database" in r.stderr
    r = referee("tournament", "verify", str(out), "--repair")
    assert r.returncode == 1 and "--config" in r.stderr
    r = referee("tournament", "verify", str(out), "--repair", "--config", str(cfg))
    assert r.returncode == 0, r.stdout + r.stderr
    assert os.path.exists(str(db) + ".damaged")
    again = referee("tournament", "standings", str(out), "--format", "json")
    assert json.loads(again.stdout)["standings"] == json.loads(standings)["standings"]
