"""Luck-adjusted scores stored with the outcome, a store made before them migrated,
and the standings ranked by them or by raw places (issue 25)."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.cli.main import main
from referee.play.luck import SCORES, LuckSetting, file_luck
from referee.stats.ratings import RatedGame, rate
from referee.tournament.config import TournamentConfigError, parse_config
from referee.tournament.executor import SerialExecutor
from referee.tournament.run import run_tournament, standings_of
from referee.tournament.standings import render
from referee.tournament.store import DB_NAME, Store

RAW = {"tournament": {"name": "t", "seats": 2, "deals": 3, "seed": 5},
       "rules": {"variants": ["play_out"]},
       "bots": [{"name": "a", "builtin": "lowest"}, {"name": "b", "builtin": "random"}]}


def _run(out: Path) -> None:
    run_tournament(parse_config(RAW), output_dir=out, executor=SerialExecutor(), quiet=True)


def _luck_rows(out: Path) -> dict[int, list[list[float]]]:
    with sqlite3.connect(out / DB_NAME) as conn:
        return {i: json.loads(a) for i, a in conn.execute("SELECT idx, adjusted FROM luck")}


def test_adjusted_scores_are_stored_and_an_old_store_gets_them_when_resumed(
        tmp_path: Path) -> None:
    out = tmp_path / "out"
    _run(out)
    stored = _luck_rows(out)
    assert len(stored) == 6 and all(len(v) == 3 and len(v[0]) == 2 for v in stored.values())
    # what a store made before adjusted scores looks like: no luck table
    with sqlite3.connect(out / DB_NAME) as conn:
        conn.execute("DROP TABLE luck")
    store = Store.open_existing(out)  # read-only: computed from the records
    try:
        again = {o.index: [list(x) for x in o.adjusted or ()] for o in store.outcomes()}
    finally:
        store.close()
    assert again == stored
    _run(out)  # resumed: the table is made and filled from the records
    assert _luck_rows(out) == stored


def test_standings_say_which_scores_rank_them(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _run(out)
    adjusted, raw = standings_of(out), standings_of(out, "raw")
    assert adjusted.scores == "adjusted" and raw.scores == "raw"
    text = render(adjusted, "plain")
    assert "ranked by luck-adjusted score" in text and "raw score % (95% CI)" in text
    assert "ranked by raw average place" in render(raw, "plain")
    for r in adjusted.rows:
        assert r.adj_score is not None and r.score is not None
    doc = json.loads(render(adjusted, "json"))
    assert doc["scores"] == "adjusted" and "adj_score" in doc["standings"][0]


def test_ratings_follow_the_scores(tmp_path: Path) -> None:
    """--scores adjusted: the rating is fitted to each game's luck-adjusted shares
    (``stats.ratings``); raw: to the finishing orders, as before."""
    out = tmp_path / "out"
    _run(out)
    store = Store.open_existing(out)
    try:
        outcomes = list(store.outcomes())
    finally:
        store.close()
    bots = ["a", "b"]
    orders = [RatedGame(o.deal, tuple(o.seats), tuple(o.places)) for o in outcomes]
    shares = [RatedGame(o.deal, tuple(o.seats), tuple(o.places), (o.adjusted or ((),))[0])
              for o in outcomes]
    assert all(g.shares is not None and len(g.shares) == 2 for g in shares)
    want_raw = rate(orders, bots)
    want_adj = rate(shares, bots, scores="adjusted")
    adjusted, raw = standings_of(out), standings_of(out, "raw")
    for st, want in ((adjusted, want_adj), (raw, want_raw)):
        for r in st.rows:
            assert r.rating == want.rating[r.bot]
            assert (r.rating_low, r.rating_high) == (want.low[r.bot], want.high[r.bot])
    # the adjusted shares are not the places: the two ratings differ
    assert {r.bot: r.rating for r in adjusted.rows} != {r.bot: r.rating for r in raw.rows}
    assert adjusted.rating_scores == "adjusted" and raw.rating_scores == "raw"
    assert json.loads(render(adjusted, "json"))["rating_scores"] == "adjusted"
    assert "rating is fitted to the adjusted shares" in render(adjusted, "plain")
    assert "rating is fitted to the finishing orders" in render(raw, "plain")


def _game_lucks(out: Path, setting: LuckSetting, builtins: dict[str, str]
                ) -> dict[int, list[list[float]]]:
    """Each stored game's adjusted scores computed afresh from its record by
    ``setting``'s value function, as the store keeps them."""
    store = Store.open_existing(out)
    try:
        got = {}
        for o in store.outcomes():
            luck = file_luck(out / o.record, setting.value_for([builtins[s] for s in o.seats]))
            got[o.index] = [[round(x, 6) for x in luck.adjusted(k)] for k in SCORES]
        return got
    finally:
        store.close()


def test_the_scores_setting_chooses_the_value_function_and_rescore_changes_it(
        tmp_path: Path) -> None:
    """``[scores] value = "rollout"``: the games are scored by rollouts (each built-in
    bot played by its own policy), the standings name it; ``referee luck rescore``
    scores them again with the linear V; running the tournament again brings its
    file's setting back."""
    out = tmp_path / "out"
    raw = {**RAW, "scores": {"value": "rollout", "rollouts": 3}}
    config = parse_config(raw)
    assert config.luck == LuckSetting("rollout", 3)
    run_tournament(config, output_dir=out, executor=SerialExecutor(), quiet=True)
    builtins = {"a": "lowest", "b": "random"}
    rollout = _game_lucks(out, LuckSetting("rollout", 3), builtins)
    linear = _game_lucks(out, LuckSetting(), builtins)
    assert _luck_rows(out) == rollout != linear
    st = standings_of(out)
    assert st.luck_value == "rollout x3, own choices"
    assert "value function: rollout x3, own choices" in render(st, "plain")
    assert json.loads(render(st, "json"))["luck_value"] == "rollout x3, own choices"

    r = CliRunner().invoke(main, ["luck", "rescore", str(out)])
    assert r.exit_code == 0, r.output
    assert "6 games scored again with the value function linear (was rollout x3, own choices)" in r.output
    assert _luck_rows(out) == linear
    assert standings_of(out).luck_value == "linear"

    r = CliRunner().invoke(main, ["luck", "rescore", str(out), "--value", "rollout",
                                  "--rollouts", "3"])
    assert r.exit_code == 0, r.output
    assert _luck_rows(out) == rollout
    _run(out)  # the file says linear (no [scores]): scored again by it
    assert _luck_rows(out) == linear and standings_of(out).luck_value == "linear"


def test_a_rescore_waits_for_no_running_tournament(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _run(out)
    holder = Store.open_existing(out)
    try:
        holder.lock()
        r = CliRunner().invoke(main, ["luck", "rescore", str(out), "--value", "rollout"])
        assert r.exit_code != 0 and "in use" in r.output
    finally:
        holder.close()


@pytest.mark.parametrize("scores, error", [
    ({"value": "perfect"}, "scores.value: must be one of linear, rollout"),
    ({"value": "rollout", "rollouts": 0}, "scores.rollouts: must be a whole number from 1"),
    ({"rollouts": 8}, 'scores.rollouts: counts only with value = "rollout"'),
    ({"values": "linear"}, "scores.values: unknown key; did you mean 'value'?"),
])
def test_a_wrong_scores_setting_is_refused_naming_the_key(scores: dict[str, object],
                                                          error: str) -> None:
    with pytest.raises(TournamentConfigError, match=re.escape(error)):
        parse_config({**RAW, "scores": scores})


def test_a_store_scored_by_rollouts_before_the_own_choices_were_corrected_is_scored_again(
        tmp_path: Path) -> None:
    """A store whose rollout scores were computed without the corrections at the
    built-in bots' own choices (its setting reads ``rollout x3``) is scored again, with
    them, when the tournament next runs: ``random``'s choices are corrected."""
    out = tmp_path / "out"
    config = parse_config({**RAW, "scores": {"value": "rollout", "rollouts": 3}})
    builtins = {"a": "lowest", "b": "random"}
    old = LuckSetting("rollout", 3, choices=False)
    run_tournament(config, output_dir=out, executor=SerialExecutor(), quiet=True)
    store = Store.create_or_resume_existing(out)
    try:
        store.rescore(old, lambda seats: [builtins[s] for s in seats])
        assert store.meta("luck_value") == "rollout x3"
    finally:
        store.close()
    assert _luck_rows(out) == _game_lucks(out, old, builtins)
    run_tournament(config, output_dir=out, executor=SerialExecutor(), quiet=True)
    assert _luck_rows(out) == _game_lucks(out, config.luck, builtins) != _game_lucks(
        out, old, builtins)
    assert standings_of(out).luck_value == "rollout x3, own choices"
