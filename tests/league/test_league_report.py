"""The report of a league (issue: a report people want to look at): a site per table
size with the figures of 'league standings', kept up to date by 'league run
--report'."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.league.conftest import Referee
from tests.league.leaguehelpers import EXAMPLE_BOTS, league_toml

pytestmark = pytest.mark.slow


def test_league_run_writes_its_report_per_table_size(tmp_path: Path, referee: Referee,
                                                     need_sandbox: None) -> None:
    league = tmp_path / "season"
    cfg = league_toml(tmp_path / "league.toml", seats=[2, 3], deals=1, seed=5)
    assert referee("league", "new", league, "--config", cfg).returncode == 0
    for name, cmd in (("heur", "python3 heuristic_bot.py"),
                      ("rand", "python3 random_bot.py --seed 1"),
                      ("rand2", "python3 random_bot.py --seed 2")):
        r = referee("league", "submit", league, name, EXAMPLE_BOTS, "--command", cmd)
        assert r.returncode == 0, r.stdout + r.stderr
    site = tmp_path / "site"
    r = referee("league", "run", league, "--quiet", "--report", site)
    assert r.returncode == 0, r.stderr
    assert f"report: {site / 'index.html'}" in r.stderr
    index = (site / "index.html").read_text()
    assert '<a href="2-seats/index.html">' in index and '<a href="3-seats/index.html">' in index
    for k in (2, 3):
        st = json.loads(referee("league", "standings", league, "--seats", str(k),
                                "--format", "json").stdout)
        page = (site / f"{k}-seats" / "index.html").read_text()
        for row in st["standings"]:
            # each bot's figures, as 'league standings' gives them
            cell = re.search(r'data-field="games" data-value="(\d+)"[^>]*>\d+</td>',
                             page[page.index(f'data-bot="{row["bot"]}"'):])
            assert cell is not None and int(cell.group(1)) == row["games"]
        assert len(list((site / f"{k}-seats" / "games").glob("*.html"))) == st["played"]
    # 'referee report' on the league folder writes the same site
    other = tmp_path / "again"
    r = referee("report", league, "-o", other)
    assert r.returncode == 0, r.stderr
    assert sorted(p.relative_to(other).as_posix() for p in other.rglob("*.html")) == \
        sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html"))
