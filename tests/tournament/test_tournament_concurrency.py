"""Many games in flight per worker (``--concurrency``): the same tournament as one game
per worker at a time, through the command line and the worker processes, with
external bots (one instance per game in flight) and in-process ones."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.cli.main import main
from referee.play.runner import replay_check
from referee.tournament import load_config
from referee.tournament.executor import SerialExecutor
from referee.tournament.run import run_tournament, standings_of
from referee.tournament.standings import render
from tests.procs import scaled

HERE = Path(__file__).resolve().parent
BOTS = HERE.parent / "bots"

BODY = f"""
[tournament]
seats = 2
deals = 3
seed = 11
[time]
per_decision = {scaled(5.0)}
[[bots]]
name = "lowest"
builtin = "lowest"
[[bots]]
name = "first"
command = ["{sys.executable}", "{BOTS / 'first.py'}"]
[[bots]]
name = "first-text"
command = ["{sys.executable}", "{BOTS / 'first.py'}", "--text"]
"""


def records(out: Path) -> dict[str, list[str]]:
    """Each game's record lines without its wall times."""
    got = {}
    for f in sorted((out / "games").glob("*.jsonl")):
        lines = f.read_text().splitlines()
        assert replay_check(lines)[0]
        rows = [json.loads(x) for x in lines]
        for r in rows:
            r.pop("wall_time", None)
            r.pop("ms", None)
        got[f.name] = [json.dumps(r, sort_keys=True) for r in rows]
    return got


@pytest.mark.slow
def test_games_in_flight_give_the_tournament_played_one_at_a_time(tmp_path: Path) -> None:
    cfg_path = tmp_path / "t.toml"
    cfg_path.write_text(BODY)
    cfg = load_config(cfg_path)
    one = run_tournament(cfg, output_dir=tmp_path / "one", executor=SerialExecutor(),
                         quiet=True)
    r = CliRunner().invoke(main, ["tournament", "run", str(cfg_path), "-o",
                                  str(tmp_path / "many"), "--jobs", "1", "--concurrency", "6",
                                  "--format", "json", "-q"])
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["played"] == data["scheduled"] == one.played == 3 * 3 * 2
    assert not one.errors
    assert render(standings_of(tmp_path / "one"), "json") == \
        render(standings_of(tmp_path / "many"), "json")
    assert records(tmp_path / "one") == records(tmp_path / "many")
    # up to 6 games in flight: several instances of each external bot, each with its
    # own log
    logs = {p.name for p in (tmp_path / "many" / "logs" / "worker-0").iterdir()}
    assert "first.stderr.log" in logs and any(n.startswith("first.") and n[6].isdigit()
                                              for n in logs), logs


@pytest.mark.slow
def test_the_serial_executor_with_games_in_flight_plays_every_game(tmp_path: Path) -> None:
    cfg_path = tmp_path / "t.toml"
    cfg_path.write_text(BODY)
    cfg = load_config(cfg_path)
    many = run_tournament(cfg, output_dir=tmp_path / "many",
                          executor=SerialExecutor(concurrency=4), quiet=True)
    one = run_tournament(cfg, output_dir=tmp_path / "one", executor=SerialExecutor(),
                         quiet=True)
    assert many.played == one.played == 18 and not many.errors
    assert records(tmp_path / "one") == records(tmp_path / "many")


def test_concurrency_is_refused_with_the_dask_executor(tmp_path: Path) -> None:
    cfg_path = tmp_path / "t.toml"
    cfg_path.write_text(BODY)
    r = CliRunner().invoke(main, ["tournament", "run", str(cfg_path), "-o", str(tmp_path / "d"),
                                  "--executor", "dask", "--concurrency", "4", "-q"])
    assert r.exit_code != 0
    assert "--concurrency is for the process executor" in r.stderr


@pytest.mark.slow
def test_a_worker_that_dies_with_games_in_flight_loses_only_those(tmp_path: Path) -> None:
    # Games in flight die with their worker: each is reported as not played (and
    # played again on resume); the games not begun go to the replacement worker.
    cfg_path = tmp_path / "t.toml"
    cfg_path.write_text(f"""
[tournament]
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
    r = CliRunner().invoke(main, ["tournament", "run", str(cfg_path), "--jobs", "2",
                                  "--concurrency", "6", "--format", "json", "-q"])
    assert r.exit_code == 1, r.stderr
    data = json.loads(r.stdout)
    assert data["played"] == 4 and data["scheduled"] == 12  # heuristic-lowest only
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: 8 games could not be played")
    assert "died while playing it (exit code 3)" in last
