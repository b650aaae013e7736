"""The organiser's views of a league left running (issue 23): every entry at a
glance (`league show`), one game with every seat's stderr (`league game`), and
retiring an entry without a new version (`league withdraw`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import Referee
from .leaguehelpers import league_toml, talker_bot


@pytest.mark.slow
def test_show_game_and_withdraw(tmp_path: Path, referee: Referee, need_sandbox: None) -> None:
    league = tmp_path / "l"
    cfg = league_toml(tmp_path / "league.toml", deals=1)
    assert referee("league", "new", league, "--config", cfg).returncode == 0
    r = referee("league", "show", league)
    assert r.returncode == 0 and r.stdout.startswith("no entries yet")
    bot = talker_bot(tmp_path / "bot")
    for who in ("ann", "bob", "cy"):
        r = referee("league", "submit", "-q", league, who, bot,
                    "--command", f"python3 talk_bot.py {who.upper()}")
        assert r.returncode == 0, r.stdout + r.stderr
    assert referee("league", "run", league, "-q").returncode == 0
    r = referee("league", "show", league)
    lines = r.stdout.splitlines()
    assert [x.split()[0] for x in lines[:3]] == ["ann", "bob", "cy"]
    assert all(" active " in x and " 4 games " in x for x in lines[:3])  # 2 opponents x 2
    assert "3 entries, 0 games pending" in r.stdout

    # one game: its seats, and each seat's own stderr in that game
    r = referee("league", "games", league, "--bot", "ann", "--vs", "bob")
    gid = r.stdout.split()[0]
    r = referee("league", "game", league, gid)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"{gid}: 2 seats, deal 0")
    for who in ("ANN", "BOB"):
        assert f"STDERR-OF-{who} in " in r.stdout
    assert "STDERR-OF-CY" not in r.stdout
    r = referee("league", "game", league, "g999999")
    assert r.returncode == 1 and r.stderr.startswith("Error: the league has played no game")

    # withdraw: out of the standings and of the schedule, kept in the history
    r = referee("league", "withdraw", league, "cy")
    assert r.returncode == 0 and r.stdout.startswith("withdrawn: cy@1")
    r = referee("league", "withdraw", league, "cy")
    assert r.returncode == 1 and "no active entry 'cy'" in r.stderr
    table = json.loads(referee("league", "standings", league, "--format", "json",
                               "--seats", "2").stdout)
    assert {row["bot"] for row in table["standings"]} == {"ann@1", "bob@1"}
    hist = json.loads(referee("league", "standings", league, "--format", "json",
                              "--seats", "2", "--history").stdout)
    assert "cy@1" in {row["bot"] for row in hist["standings"]}
    r = referee("league", "show", league)
    assert any(x.startswith("cy") and " withdrawn " in x for x in r.stdout.splitlines())
    # a new submission brings it back, as its next version, with only its new games
    r = referee("league", "submit", "-q", league, "cy", bot, "--command", "python3 talk_bot.py CY2")
    assert r.returncode == 0 and "cy version 2" in r.stdout
    r = referee("league", "show", league)
    assert "4 games pending" in r.stdout
