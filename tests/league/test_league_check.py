"""check-bot --config league.toml is the league's own check (issue 23, 2): a bot
that breaks only at the league's table size fails it, as `league submit` fails it,
with the same checks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import Referee
from .leaguehelpers import league_toml

# Plays index 0, except at a 3-seat table, where it leaves at once.
THREE_SEAT_QUITTER = """\
import json, sys
print(json.dumps({"type": "hello", "protocol": [1], "name": "quitter"}), flush=True)
for line in sys.stdin:
    m = json.loads(line)
    if m.get("type") == "new_game" and m.get("players") == 3:
        sys.exit(3)
    if m.get("type") == "request":
        print(json.dumps({"type": "decision", "id": m["id"], "decision": 0}), flush=True)
    if m.get("type") == "bye":
        break
"""


def _checks(text: str) -> tuple[int, int]:
    m = re.search(r"(\d+) of (\d+) checks passed", text)
    assert m, text
    return int(m.group(1)), int(m.group(2))


@pytest.mark.slow
def test_check_bot_with_a_league_file_is_the_leagues_check(
        tmp_path: Path, referee: Referee, need_sandbox: None) -> None:
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.py").write_text(THREE_SEAT_QUITTER)
    cfg = league_toml(tmp_path / "league.toml", seats=[2, 3])
    author = referee("check-bot", "python3 bot.py", "--cwd", bot, "--config", cfg)
    assert author.returncode == 1, author.stdout + author.stderr
    assert "3 players, the league's rules, as in the league" in author.stdout
    assert "the check of a submission to league 'test'" in author.stderr
    assert referee("league", "new", tmp_path / "l", "--config", cfg).returncode == 0
    league = referee("league", "submit", tmp_path / "l", "q", bot, "--command", "python3 bot.py")
    assert league.returncode == 1, league.stdout + league.stderr
    # the same checks, failed alike
    assert _checks(author.stdout)[1] == _checks(league.stdout)[1]
    assert _checks(author.stdout)[0] < _checks(author.stdout)[1]
