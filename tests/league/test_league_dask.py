"""A league played on a real Dask LocalCluster (issue: beyond one machine): the
submitted bots are shipped to the workers and played there in the sandbox, with the
standings a process-pool run of the same league gives."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.league.conftest import Referee
from tests.league.leaguehelpers import EXAMPLE_BOTS, league_toml

pytestmark = pytest.mark.slow


def _league(tmp_path: Path, referee: Referee, name: str) -> Path:
    league = tmp_path / name
    cfg = league_toml(tmp_path / f"{name}.toml", seats=[2], deals=1, seed=9)
    assert referee("league", "new", league, "--config", cfg).returncode == 0
    for bot, cmd in (("heur", "python3 heuristic_bot.py"),
                     ("rand", "python3 random_bot.py --seed 1")):
        r = referee("league", "submit", league, bot, EXAMPLE_BOTS, "--command", cmd)
        assert r.returncode == 0, r.stdout + r.stderr
    return league


def test_a_league_on_a_local_dask_cluster_equals_the_process_pool(
        tmp_path: Path, referee: Referee, need_sandbox: None) -> None:
    on_dask = _league(tmp_path, referee, "dask")
    # the same league, played on the process pool: a copy of its folder (the same
    # secret, hence decks, and the same checked entries; a league's folder holds
    # only paths relative to itself)
    on_pool = Path(shutil.copytree(on_dask, tmp_path / "pool"))
    r = referee("league", "run", on_dask, "--executor", "dask", "--jobs", "2", "--quiet")
    assert r.returncode == 0, r.stderr
    assert "played 2 games" in r.stderr
    assert referee("league", "run", on_pool, "--jobs", "2", "--quiet").returncode == 0
    tables = [json.loads(referee("league", "standings", where, "--format", "json").stdout)
              for where in (on_dask, on_pool)]
    for t in tables:
        for st in t:
            st.pop("sandbox", None)
    assert tables[0] == tables[1]
    assert referee("league", "verify", on_dask).returncode == 0
    # played by the cluster's workers: the store names each game's worker HOST:PID
    con = sqlite3.connect(on_dask / "league.sqlite")
    workers = [w for (w,) in con.execute("SELECT worker FROM games")]
    con.close()
    assert len(workers) == 2 and all(":" in str(w) for w in workers), workers
    shutil.rmtree(on_pool)


def test_an_adaptive_league_on_dask_plays_the_schedule_of_the_process_pool(
        tmp_path: Path, referee: Referee, need_sandbox: None) -> None:
    """``schedule = "adaptive"``: which games come next depends on the results so
    far; the same league on a Dask cluster and on the process pool (the same
    secret) chooses the same lineups and plays the same games."""
    on_dask = tmp_path / "dask"
    cfg = league_toml(tmp_path / "dask.toml", seats=[2], deals=2, seed=9)
    cfg.write_text(cfg.read_text().replace("[time]", 'schedule = "adaptive"\ntop = 1\n[time]'))
    assert referee("league", "new", on_dask, "--config", cfg).returncode == 0
    for bot, cmd in (("heur", "python3 heuristic_bot.py"),
                     ("rand1", "python3 random_bot.py --seed 1"),
                     ("rand2", "python3 random_bot.py --seed 2")):
        r = referee("league", "submit", on_dask, bot, EXAMPLE_BOTS, "--command", cmd)
        assert r.returncode == 0, r.stdout + r.stderr
    # the same league (secret, entries) for the process pool: a copy of its folder
    on_pool = Path(shutil.copytree(on_dask, tmp_path / "pool"))
    leagues = [on_dask, on_pool]
    r = referee("league", "run", on_dask, "--executor", "dask", "--jobs", "2", "--quiet")
    assert r.returncode == 0, r.stderr
    assert referee("league", "run", on_pool, "--jobs", "2", "--quiet").returncode == 0
    plans = []
    for where in leagues:
        con = sqlite3.connect(where / "league.sqlite")
        plans.append([k for (k,) in con.execute("SELECT key FROM planned ORDER BY idx")])
        con.close()
    assert plans[0] == plans[1] and len(plans[0]) >= 6
    tables = [json.loads(referee("league", "standings", where, "--format", "json").stdout)
              for where in leagues]
    for t in tables:
        for st in t:
            st.pop("sandbox", None)
    assert tables[0] == tables[1]
    assert "top 1" in tables[0][0]["separation"]
