"""Growing is the same as starting over, with real bots through the installed
command: a league grown by submissions, a resubmission, raised deals and an
interrupted run ends with the games and standings of a fresh league of its final
field (the example bots are deterministic for a game: the random bot seeds itself
from the game id it is sent, which the league derives from the game itself)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.league.conftest import Referee
from tests.league.leaguehelpers import EXAMPLE_BOTS, league_toml

pytestmark = pytest.mark.slow


def submit(referee: Referee, league: Path, name: str, command: str) -> None:
    r = referee("league", "submit", league, name, EXAMPLE_BOTS, "--command", command)
    assert r.returncode == 0, r.stdout + r.stderr


def games_by_name(referee: Referee, league: Path) -> set[str]:
    out = referee("league", "games", league).stdout
    active = {row["bot"] for st in json.loads(
        referee("league", "standings", league, "--format", "json").stdout)
        for row in st["standings"]}
    rows = set()
    for line in out.splitlines():
        entries = re.findall(r"(\S+@\d+):\d", line)
        if set(entries) <= active:
            rows.add(re.sub(r"^g\d+\s+", "", re.sub(r"@\d+:", ":", line)))
    return rows


def table(referee: Referee, league: Path) -> list[tuple[object, ...]]:
    tables = json.loads(referee("league", "standings", league, "--format", "json").stdout)
    assert [st["seats"] for st in tables] == [2, 3]
    return [(st["seats"], r["bot"].split("@")[0], r["rank"], r["games"], r["wins"],
             r["avg_place"], round(r["rating"], 9)) for st in tables for r in st["standings"]]


def test_grown_with_real_bots_equals_fresh(tmp_path: Path, referee: Referee,
                                           need_sandbox: None) -> None:
    grown = tmp_path / "grown"
    cfg = league_toml(tmp_path / "g1.toml", seats=[2, 3], deals=1, seed=21)
    assert referee("league", "new", grown, "--config", cfg).returncode == 0
    submit(referee, grown, "heur", "python3 heuristic_bot.py")
    submit(referee, grown, "rand", "python3 random_bot.py --seed 1")
    r = referee("league", "run", grown, "--max-games", "1", "--quiet")  # stopped early
    assert r.returncode == 0 and "played 1 games" in r.stderr, r.stderr
    submit(referee, grown, "other", "python3 random_bot.py --seed 2")
    assert referee("league", "run", grown, "--quiet").returncode == 0
    submit(referee, grown, "rand", "python3 random_bot.py --seed 3")  # version 2
    cfg = league_toml(tmp_path / "g2.toml", seats=[2, 3], deals=2, seed=21)
    r = referee("league", "new", grown, "--config", cfg)
    assert r.returncode == 0 and "deals: 1 -> 2" in r.stdout
    assert referee("league", "run", grown, "--quiet").returncode == 0

    fresh = tmp_path / "fresh"
    # the same secret: the same decks for the same bots
    assert referee("league", "new", fresh, "--config", cfg, "--secret-from",
                   grown).returncode == 0
    submit(referee, fresh, "other", "python3 random_bot.py --seed 2")
    submit(referee, fresh, "rand", "python3 random_bot.py --seed 3")
    submit(referee, fresh, "heur", "python3 heuristic_bot.py")
    assert referee("league", "run", fresh, "--quiet", "--jobs", "2").returncode == 0

    fresh_games = games_by_name(referee, fresh)
    assert len(fresh_games) == 2 * (3 * 2 + 1 * 3)  # 2 deals: 3 pairs x 2 + 1 trio x 3
    assert games_by_name(referee, grown) == fresh_games
    assert table(referee, grown) == table(referee, fresh)
