"""Same input, same bytes: a tournament's standings (JSON and text), ratings and
report read from one unchanged folder are byte-identical across runs and across
``PYTHONHASHSEED``s (no sum taken in the order of a set of strings)."""

from __future__ import annotations

import filecmp
import os
import subprocess
import sys
from pathlib import Path

import pytest

from referee.stats.ratings import RatedGame, rate
from referee.tournament import load_config
from referee.tournament.executor import SerialExecutor
from referee.tournament.run import run_tournament
from tests.procs import scaled

REFEREE = [sys.executable, "-m", "referee.cli.main"]
REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def _referee(hash_seed: int, *args: str) -> bytes:
    env = {**os.environ, "PYTHONHASHSEED": str(hash_seed), "PYTHONPATH": str(REPO)}
    done = subprocess.run([*REFEREE, *args], capture_output=True, env=env, cwd=REPO,
                          timeout=scaled(300))
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four bots, three seats: ratings over sets of three bots still in play."""
    here = tmp_path_factory.mktemp("same-bytes")
    (here / "t.toml").write_text("""
[tournament]
seats = 3
deals = 6
seed = 5
output = "out"
[[bots]]
name = "h"
builtin = "heuristic"
[[bots]]
name = "r"
builtin = "random"
[[bots]]
name = "l"
builtin = "lowest"
[[bots]]
name = "z"
builtin = "random"
""")
    summary = run_tournament(load_config(here / "t.toml"), executor=SerialExecutor(),
                             quiet=True)
    assert summary.played == 72 and not summary.errors
    return here / "out"


@pytest.mark.parametrize("fmt", ["json", "plain"])
def test_standings_are_the_same_bytes_under_two_hash_seeds(played: Path, fmt: str) -> None:
    one = _referee(1, "tournament", "standings", str(played), "--format", fmt)
    two = _referee(2, "tournament", "standings", str(played), "--format", fmt)
    assert b"rating" in one
    assert one == two
    assert _referee(1, "tournament", "standings", str(played), "--format", fmt) == one


def test_the_report_is_the_same_bytes_under_two_hash_seeds(played: Path,
                                                           tmp_path: Path) -> None:
    for seed in (1, 2):
        _referee(seed, "report", str(played), "-o", str(tmp_path / f"report-{seed}"))
    a, b = tmp_path / "report-1", tmp_path / "report-2"
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert len(files) > 10
    assert sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file()) == files
    _, differ, errors = filecmp.cmpfiles(a, b, [str(f) for f in files], shallow=False)
    assert differ == [] and errors == []


def test_ratings_do_not_depend_on_the_order_of_the_games() -> None:
    """The same games in another order: the same floats, to the last bit (the sums
    are taken in one canonical order of the games, and of each set's members)."""
    names = ["alpha", "bravo", "charlie", "delta", "echo"]
    games = [RatedGame(d, tuple(names[(d + k) % 5] for k in range(3)),
                       ((d % 3) + 1, ((d + 1) % 3) + 1, ((d + 2) % 3) + 1)) for d in range(30)]
    a = rate(games, names, resamples=20)
    b = rate(list(reversed(games)), names, resamples=20)
    assert a == b
