"""A league's luck-adjusted scores by the value function its file names
(``[scores] value``), and ``referee luck rescore`` on a league (issue 25)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from click.testing import CliRunner

from referee.cli.main import main
from referee.league.config import load_league_config
from referee.league.results import standings
from referee.league.run import new_league, run_league
from referee.league.store import DB_NAME, LeagueStore
from referee.play.luck import SCORES, LuckSetting, file_luck
from referee.players.sandbox import unsandboxed
from tests.league.leaguehelpers import league_toml
from tests.league.test_league_adaptive import SECRET, BuiltinExecutor, builtin_bot, put


def _rows(league: Path) -> dict[int, list[list[float]]]:
    with sqlite3.connect(league / DB_NAME) as conn:
        return {i: json.loads(a) for i, a in conn.execute("SELECT idx, adjusted FROM luck")}


def _fresh(league: Path, setting: LuckSetting) -> dict[int, list[list[float]]]:
    store = LeagueStore.open(league)
    try:
        return {o.index: [[round(x, 6) for x in file_luck(league / o.record, setting.value_for(
                    [None] * len(o.seats))).adjusted(k)] for k in SCORES]
                for o in store.outcomes()}
    finally:
        store.close()


def test_a_league_scores_by_its_value_function_and_can_be_scored_again(
        tmp_path: Path) -> None:
    cfg = league_toml(tmp_path / "l.toml", deals=1, seed=7,
                      extra='\n[scores]\nvalue = "rollout"\nrollouts = 2\n')
    league = tmp_path / "l"
    new_league(league, load_league_config(cfg), cfg.read_text(), secret=SECRET)
    for name, bot in [("low", "lowest"), ("rnd", "random")]:
        put(league, name, builtin_bot(tmp_path / name, bot))
    run_league(league, executor=BuiltinExecutor(), sandbox=unsandboxed(), progress=False)
    assert [st.luck_value for st in standings(league)] == ["rollout x2, own choices"]
    assert len(_rows(league)) == 2

    r = CliRunner().invoke(main, ["luck", "rescore", str(league)])
    assert r.exit_code == 0, r.output
    assert "2 games scored again with the value function linear (was rollout x2, own choices)" in r.output
    assert _rows(league) == _fresh(league, LuckSetting())
    assert [st.luck_value for st in standings(league)] == ["linear"]
    # the league's file still says rollout: its next run scores the games by it again
    run_league(league, executor=BuiltinExecutor(), sandbox=unsandboxed(), progress=False)
    assert _rows(league) == _fresh(league, LuckSetting("rollout", 2))
    assert [st.luck_value for st in standings(league)] == ["rollout x2, own choices"]
