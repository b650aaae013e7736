"""``league run --watch``: one process for a whole season, taking a submission that
arrives while it is playing, playing only the new entry's games, and keeping the
finished games when it is stopped."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

from tests.league.conftest import Referee, env_for_subprocess, referee_command
from tests.league.leaguehelpers import EXAMPLE_BOTS, games_stored, league_toml, wait_for
from tests.procs import Children, scaled

pytestmark = pytest.mark.slow


def test_a_submission_arriving_while_watch_plays(tmp_path: Path, referee: Referee,
                                                 need_sandbox: None,
                                                 children: Children) -> None:
    league = tmp_path / "league"
    # 6 deals: the first pair's 12 games are still being played when the third bot,
    # checked in its own sandbox game, arrives
    cfg = league_toml(tmp_path / "league.toml", seats=[2], deals=6, seed=4)
    assert referee("league", "new", league, "--config", cfg).returncode == 0
    for name, cmd in (("heur", "python3 heuristic_bot.py"),
                      ("rand", "python3 random_bot.py --seed 1")):
        r = referee("league", "submit", league, name, EXAMPLE_BOTS, "--command", cmd)
        assert r.returncode == 0, r.stdout + r.stderr
    proc = children.popen([referee_command(), "league", "run", str(league), "--watch",
                           "--jobs", "1", "--quiet"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env_for_subprocess())
    try:
        wait_for("the first game", lambda: games_stored(league) >= 1)
        r = referee("league", "submit", league, "late", EXAMPLE_BOTS, "--command",
                    "python3 random_bot.py --seed 9")
        assert r.returncode == 0, r.stdout + r.stderr
        assert proc.poll() is None  # still watching
        # 3 pairs x 6 deals x 2 seatings
        # a safety net, not a bound: 72 sandboxed games on one worker took over
        # 240 s on a machine at load 20-28
        wait_for("every game of the grown field", lambda: games_stored(league) == 36,
                 timeout=900)
        st = json.loads(referee("league", "standings", league, "--seats", "2", "--format",
                                "json").stdout)
        assert {row["bot"]: row["games"] for row in st["standings"]} == {
            "heur@1": 24, "rand@1": 24, "late@1": 24}
        assert st["played"] == st["scheduled"] == 36
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=scaled(60))  # else killed by children
    # Ctrl-C is how a watch ends: with every game played, a clean stop (issue 23)
    assert proc.returncode == 0, err
    assert "stopped: every game is played" in err and "Error" not in err
    # the overall picture, a line per batch, and who arrived
    assert re.search(r"^new: late@1; \d+ games to play$", err, re.M), err
    assert any(x.startswith("batch: ") and " of 36 played; top: 2 seats: " in x
               for x in err.splitlines()), err
    assert games_stored(league) == 36
