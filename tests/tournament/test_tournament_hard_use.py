"""Defects found by hard use: workers killed at any point, full disks, damaged
databases, records missing or cut short.  Each run goes through the real path
(worker processes, the SQLite file, the records on disk)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from referee.play.runner import Fault
from referee.tournament.config import load_config
from referee.tournament.executor import Job, ProcessExecutor, Report
from referee.tournament.outcome import GameOutcome
from referee.tournament.schedule import schedule
from tests.procs import scaled
from tests.tournament.fakebots import KillOnce

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
REFEREE = [sys.executable, "-m", "referee.cli.main"]

LEAGUE = """
[tournament]
name = "hard"
seats = 2
deals = {deals}
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


def config(tmp_path: Path, deals: int = 2, extra: str = "") -> Path:
    p = tmp_path / "t.toml"
    p.write_text(LEAGUE.format(deals=deals) + extra)
    return p


def referee(*args: str, timeout: float = 120, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*REFEREE, *args], capture_output=True, text=True, timeout=scaled(timeout),
                          cwd=REPO, env={**os.environ, **(env or {})})


def test_a_worker_that_dies_before_its_first_game_is_replaced(tmp_path: Path) -> None:
    cfg = load_config(config(tmp_path))
    games = schedule(cfg)
    records = KillOnce("games")
    records.marker = str(tmp_path / "killed")
    got: list[Report] = []
    ProcessExecutor(2).run(Job(cfg, str(tmp_path / "out"), records), games, got.append)
    assert os.path.exists(records.marker)  # a worker was killed before its first game
    assert sorted(r.index for r in got if isinstance(r, GameOutcome)) == [g.index for g in games]


def test_a_worker_killed_while_taking_its_next_game_hangs_nothing_and_loses_nothing(
        tmp_path: Path) -> None:
    path = config(tmp_path, deals=3, extra=f"""
[[bots]]
name = "waiter"
python = "{HERE / 'fakebots.py'}:KilledWhileWaiting"
""")
    marker = tmp_path / "killed"
    r = referee("tournament", "run", str(path), "--jobs", "2", "--format", "json", "-q",
                env={"KILL_MARKER": str(marker)})
    assert marker.exists()  # the worker was killed while waiting for its next game
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["played"] == data["scheduled"] == 36


def test_a_worker_killed_holding_a_lock_hangs_nothing(tmp_path: Path) -> None:
    # A worker of a shared queue took the queue's lock to take its next game; killed
    # then, it left the other workers waiting for ever (the run hung).
    path = config(tmp_path, deals=3, extra=f"""
[[bots]]
name = "locker"
python = "{HERE / 'fakebots.py'}:DiesHoldingLocks"
""")
    marker = tmp_path / "killed"
    r = referee("tournament", "run", str(path), "--jobs", "2", "--format", "json", "-q",
                env={"KILL_MARKER": str(marker)}, timeout=scaled(120))
    assert marker.exists()
    assert r.returncode == 1 and "died while playing it (exit code -9)" in r.stderr
    assert json.loads(r.stdout)["played"] == 35  # every game but the one it was playing
    again = referee("tournament", "run", str(path), "--jobs", "2", "--format", "json", "-q",
                    env={"KILL_MARKER": str(marker)}, timeout=scaled(120))
    assert again.returncode == 0 and json.loads(again.stdout)["played"] == 36


def _fill(path: Path) -> None:
    """Fill the file system holding ``path``."""
    with open(path, "wb") as f:
        try:
            while True:
                f.write(b"\0" * (1 << 16))
                f.flush()
        except OSError:
            pass


@pytest.fixture
def small_disk(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A 1 MiB tmpfs: a real full disk.  Needs root (the CI runs as root)."""
    where = tmp_path / "disk"
    where.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(where)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        if os.environ.get("CI") == "true":
            pytest.fail(f"cannot mount a tmpfs: {r.stderr}")
        pytest.skip(f"cannot mount a tmpfs (not root?): {r.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_full_disk_stops_the_run_with_one_error_and_it_resumes_later(
        tmp_path: Path, small_disk: Path) -> None:
    # 120 games: about 3 MB of records (25 KB a game), three times what the disk holds
    path = config(tmp_path, deals=20)
    out = small_disk / "out"
    first = referee("tournament", "run", str(path), "--output", str(out), "--jobs", "2", "-q")
    assert first.returncode != 0
    lines = first.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), first.stderr
    assert "No space left on device" in lines[0] or "full" in lines[0]
    assert str(out) in lines[0] and "run the same command again to resume" in lines[0]
    assert list((out / "games").glob("*.tmp")) == []
    kept = sqlite3.connect(out / "tournament.sqlite").execute(
        "SELECT COUNT(*) FROM games").fetchone()[0]
    assert 1 <= kept < 120
    # Room is made: the same command resumes, and nothing committed was lost.
    subprocess.run(["mount", "-o", "remount,size=64m", str(small_disk)], check=True)
    again = referee("tournament", "run", str(path), "--output", str(out), "--jobs", "2",
                    "--format", "json", "-q")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["played"] == 120
    assert referee("tournament", "verify", str(out)).returncode == 0


def test_a_failed_commit_is_one_error_and_keeps_what_was_committed(tmp_path: Path) -> None:
    # SQLite's own 'database or disk is full', from a page limit.
    from referee.errors import StorageError
    from referee.tournament.config import BotSpec, TournamentConfig
    from referee.tournament.kinds import TournamentSettings
    from referee.tournament.store import Store

    settings = TournamentSettings.of(TournamentConfig(bots=(BotSpec("a", builtin="random"),
                                                            BotSpec("b", builtin="random"))))
    store = Store.create_or_resume(tmp_path, settings, "t", 5000)
    outcome = GameOutcome(index=0, game_id="g000000", deal=0, deal_seed=1, seats=("a", "b"),
                          places=(1, 2), points=(0, 5), how="winner", turns=9,
                          faults=(Fault(seat=1, bot="b", kind="crash", detail="x" * 3000,
                                        turn=1, action="forfeit"),),
                          record="games/g0.jsonl")
    store.add(outcome)
    pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
    store.conn.execute(f"PRAGMA max_page_count={pages}")
    with pytest.raises(StorageError) as e:
        for i in range(1, 200):
            store.add(GameOutcome(**{**outcome.__dict__, "index": i, "game_id": f"g{i:06d}"}))
    assert "database or disk is full" in str(e.value) and str(tmp_path) in str(e.value)
    assert "run the same command again to resume" in str(e.value)
    n = store.count()
    store.close()
    again = Store.open_existing(tmp_path)
    assert again.count() == n >= 1
    again.close()


@pytest.fixture(scope="module")
def played_once(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The small tournament, played once for the module: (its folder, its standings
    as JSON)."""
    here = tmp_path_factory.mktemp("played")
    first = referee("tournament", "run", str(config(here)), "--format", "json", "-q")
    assert first.returncode == 0, first.stderr
    return here, first.stdout


@pytest.fixture
def played(played_once: tuple[Path, str], tmp_path: Path) -> tuple[Path, str]:
    """A copy of the played tournament in ``tmp_path``, the test's own to damage:
    (its configuration, its standings as JSON)."""
    here, standings = played_once
    shutil.copytree(here, tmp_path, dirs_exist_ok=True)
    return tmp_path / "t.toml", standings


@pytest.mark.parametrize("damage", ["garbage", "truncated", "directory"])
def test_a_damaged_database_is_one_error_line(tmp_path: Path, played: tuple[Path, str],
                                              damage: str) -> None:
    path, _ = played
    db = tmp_path / "out" / "tournament.sqlite"
    for extra in ("-wal", "-shm"):
        Path(str(db) + extra).unlink(missing_ok=True)
    if damage == "garbage":
        db.write_bytes(b"this is not a database\n" * 200)
    elif damage == "truncated":
        db.write_bytes(db.read_bytes()[:1500])
    else:
        db.unlink()
        db.mkdir()
    for args in (["run", str(path), "-q"], ["standings", str(tmp_path / "out")]):
        r = referee("tournament", *args)
        assert r.returncode != 0
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: "), (args, r.stderr)
        assert "Traceback" not in r.stderr


@pytest.mark.parametrize("how", ["missing", "truncated"])
def test_resume_plays_again_a_game_whose_record_is_missing_or_cut_short(
        tmp_path: Path, played: tuple[Path, str], how: str) -> None:
    path, standings = played
    rec = tmp_path / "out" / "games" / "g000003.jsonl"
    if how == "missing":
        rec.unlink()
    else:
        text = rec.read_bytes()
        rec.write_bytes(text[: len(text) * 2 // 3])
    again = referee("tournament", "run", str(path), "--format", "json")
    assert again.returncode == 0, again.stderr
    assert "g000003" in again.stderr and "missing or cut short" in again.stderr
    assert json.loads(again.stdout) == json.loads(standings)
    assert rec.read_bytes().endswith(b"\n")
    check = referee("replay", str(rec), "--check")
    assert check.returncode == 0, check.stderr
    shutil.rmtree(tmp_path / "out")
