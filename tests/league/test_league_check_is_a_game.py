"""The submission check is a game like any other (issue 21, item 4): the check runs a
bot from the folder its league games run it from, with the same environment and
sandbox, under game ids and seat names of the league's kind; a bot that behaves only
while it is checked cannot tell, and one that faults in its games anyway is flagged
by ``league show``."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from referee.league.browse import show, stderr_of
from referee.league.config import load_league_config
from referee.league.run import new_league, play_pending, run_check, run_league, submit
from referee.league.store import LeagueStore
from referee.players.sandbox import unsandboxed
from tests.league.leaguehelpers import EXAMPLE_BOTS, FakeExecutor, fake_bot, make_league

# Writes what it can see of where it runs on stderr, once per game, and plays index 0.
SPY = r'''
import json, os, sys
import updown_bot

class Spy(updown_bot.Bot):
    def on_new_game(self, m):
        print("SPY " + json.dumps({
            "cwd": os.getcwd(), "env": dict(os.environ), "argv": sys.argv,
            "files": sorted(os.listdir(".")), "game_id": m["game_id"], "bots": m["bots"],
            "seat": m["seat"], "uid": os.getuid(),
            "mounts": open("/proc/self/mountinfo").read().count("incoming"),
            # the signals it starts with ignored or blocked (an attacker told its check
            # from its games by SIGINT, ignored in the workers)
            "signals": [line.split()[1] for line in open("/proc/self/status")
                        if line.startswith(("SigIgn", "SigBlk"))]}),
            file=sys.stderr, flush=True)

    def decide(self, observation, legal):
        return 0

sys.exit(updown_bot.run(Spy()))
'''

# The attack of issue 21: behave while checked (its folder is a staging folder), send
# illegal decisions in league games.
TWO_FACED = r'''
import os, sys
import updown_bot

class TwoFaced(updown_bot.Bot):
    def decide(self, observation, legal):
        return 0 if ".incoming-" in os.getcwd() else "play hand 99x9"

sys.exit(updown_bot.run(TwoFaced()))
'''


def bot_folder(where: Path, code: str) -> Path:
    where.mkdir(parents=True)
    shutil.copy(EXAMPLE_BOTS / "updown_bot.py", where / "updown_bot.py")
    (where / "bot.py").write_text(code)
    return where


def spied(lines: list[str]) -> list[dict[str, object]]:
    return [json.loads(line.split("SPY ", 1)[1]) for line in lines if "SPY " in line]


ALIAS = re.compile(r"t[0-9a-f]{12}")


@pytest.mark.slow
@pytest.mark.usefixtures("need_sandbox")
def test_the_check_runs_the_bot_as_its_league_games_do(tmp_path: Path) -> None:
    league = make_league(tmp_path / "l", seats=[2], deals=1, seed=11)
    r = submit(league, "other", EXAMPLE_BOTS, ["python3", "random_bot.py"],
               checker=lambda *a: (True, "(not checked here)"))
    assert r.accepted
    seen: list[str] = []

    def check(command, transport, folder, config, sandbox):  # type: ignore[no-untyped-def]
        assert folder == league / "entries" / "spy" / "v1"  # where its games run it
        return run_check(command, transport, folder, config, sandbox, entry="spy@1",
                         opponents=["other@1"], on_stderr=seen.append)

    r = submit(league, "spy", bot_folder(tmp_path / "spy", SPY), ["python3", "bot.py"],
               checker=check)
    assert r.accepted, r.report
    checked = spied(seen)
    # The first game of the check: the league's rules, a fresh process, as in a game.
    first = checked[0]
    assert ALIAS.fullmatch(str(first["game_id"]))
    assert first["bots"][first["seat"]] == "spy@1"  # type: ignore[index]
    assert "other@1" in first["bots"]  # type: ignore[operator]

    play_pending(league, jobs=1, progress=False)
    store = LeagueStore.open(league)
    try:
        ids = [o.game_id for o in store.outcomes() if "spy@1" in o.seats]
    finally:
        store.close()
    assert len(ids) == 2
    for gid in ids:
        text = stderr_of(league, "spy@1", gid)
        assert text is not None
        game = spied(text.splitlines())[0]
        assert ALIAS.fullmatch(str(game["game_id"]))
        assert game["bots"][game["seat"]] == "spy@1"  # type: ignore[index]
        for what in ("cwd", "env", "argv", "files", "uid", "mounts", "signals"):
            assert first[what] == game[what], what
        assert first["mounts"] == 0 and ".incoming" not in str(first["cwd"])


@pytest.mark.usefixtures("need_sandbox")
def test_a_bot_that_behaves_only_while_checked_is_refused(tmp_path: Path) -> None:
    league = make_league(tmp_path / "l", seats=[2], deals=1, seed=12)
    r = submit(league, "twofaced", bot_folder(tmp_path / "t", TWO_FACED),
               ["python3", "bot.py"])
    assert not r.accepted
    assert "illegal" in r.report
    assert not (league / "entries" / "twofaced").exists()


def test_league_show_flags_an_entry_that_faults_in_its_games(tmp_path: Path) -> None:
    league = make_league(tmp_path / "l", seats=[2], deals=2, seed=13)
    for name, strength in (("good", 2), ("bad", 0), ("fine", 1)):
        r = submit(league, name, fake_bot(tmp_path / name, strength), ["python3", "bot.py"],
                   sandbox=unsandboxed(), checker=lambda *a: (True, ""))
        assert r.accepted
    run_league(league, executor=FakeExecutor(), sandbox=unsandboxed(), progress=False)
    store = LeagueStore.open(league)
    try:
        bad = show(store, league, "bad")
        good = show(store, league, "good")
    finally:
        store.close()
    # FakeExecutor: a strength-0 bot times out in every game
    assert "! bad@1 faulted in 8 of 8 games (100%), more than the league's 10%" in bad
    assert "!" not in good.split("\n\n")[0]


def test_the_fault_alert_is_a_league_setting(tmp_path: Path) -> None:
    league = make_league(tmp_path / "l", seats=[2], deals=1, seed=13)
    text = (tmp_path / "l.toml").read_text().replace("deals = 1\n",
                                                     "deals = 1\nfault_alert = 100\n")
    (tmp_path / "l.toml").write_text(text)
    assert new_league(league, load_league_config(tmp_path / "l.toml"), text) == \
        ["fault_alert: 10.0 -> 100.0"]
    for name, strength in (("bad", 0), ("fine", 1)):
        submit(league, name, fake_bot(tmp_path / name, strength), ["python3", "bot.py"],
               sandbox=unsandboxed(), checker=lambda *a: (True, ""))
    run_league(league, executor=FakeExecutor(), sandbox=unsandboxed(), progress=False)
    store = LeagueStore.open(league)
    try:
        assert "faulted in" not in show(store, league, "bad")
    finally:
        store.close()
