"""The league's live report stays true (issue 23): with `league run --watch --report`
the site is written as soon as the league goes idle (also when nothing was pending),
rewritten when a submission arrives and its games are played, says when and in what
state it was written, and a Ctrl-C with nothing left to play is a clean stop."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.league.conftest import (
    Referee,
    env_for_subprocess,
    need_sandbox,
    referee,
    referee_command,
)
from tests.league.leaguehelpers import EXAMPLE_BOTS, league_toml, wait_for
from tests.procs import Children, scaled
from tests.report.browser import watched_page

pytestmark = pytest.mark.slow
__all__ = ["need_sandbox", "referee"]  # the league tests' fixtures, used by name


def _page(site: Path) -> str:
    try:
        return (site / "2-seats" / "index.html").read_text()
    except OSError:
        return ""


def test_the_live_report_of_a_watching_league(tmp_path: Path, referee: Referee,
                                              need_sandbox: None, children: Children,
                                              browser: Any) -> None:
    league = tmp_path / "league"
    cfg = league_toml(tmp_path / "league.toml", seats=[2], deals=1, seed=4)
    assert referee("league", "new", league, "--config", cfg).returncode == 0
    site = tmp_path / "site"
    proc = children.popen([referee_command(), "league", "run", str(league), "--watch",
                           "--jobs", "1", "--quiet", "--report", str(site)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=env_for_subprocess())
    try:
        # nothing to play yet: the site is written all the same, and says why
        wait_for("the idle league's site", lambda: "waiting for submissions" in _page(site),
                 timeout=scaled(120))
        for name, cmd in (("heur", "python3 heuristic_bot.py"),
                          ("rand", "python3 random_bot.py --seed 1")):
            r = referee("league", "submit", "-q", league, name, EXAMPLE_BOTS, "--command", cmd)
            assert r.returncode == 0, r.stdout + r.stderr
        wait_for("the two entries' games in the report",
                 lambda: "2 of 2 games" in _page(site) and "waiting" in _page(site),
                 timeout=scaled(240))
        # a submission arrives: its name and the grown field's games, once played
        r = referee("league", "submit", "-q", league, "late", EXAMPLE_BOTS, "--command",
                    "python3 random_bot.py --seed 9")
        assert r.returncode == 0, r.stdout + r.stderr
        wait_for("the late entry's games in the report",
                 lambda: "late@1" in _page(site) and "6 of 6 games" in _page(site)
                 and "waiting" in _page(site), timeout=scaled(240))
        page, w = watched_page(browser)
        page.goto((site / "2-seats" / "index.html").resolve().as_uri())
        bots = page.eval_on_selector_all("#standings tr[data-bot]",
                                         "rs => rs.map(r => r.dataset.bot)")
        assert sorted(bots) == ["heur@1", "late@1", "rand@1"]
        games = page.eval_on_selector_all("#standings td[data-field=games]",
                                          "cs => cs.map(c => Number(c.dataset.value))")
        assert games == [4, 4, 4]  # 3 pairs x 1 deal x 2 seatings: 4 games each
        stamp = page.inner_text(".stamp")
        assert re.search(r"updated \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", stamp), stamp
        assert "all 6 games played; waiting for submissions" in stamp
        page.close()
        assert w.errors == []
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=scaled(60))  # else killed by children
    # Ctrl-C with nothing left to play: a clean stop, not an error
    assert proc.returncode == 0, err
    assert "Error" not in err
    assert "stopped" in _page(site)
