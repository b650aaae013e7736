"""The league file: its keys, its mistakes named by key, and what an edit changes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.league.config import (
    LeagueConfig,
    LeagueConfigError,
    changes,
    is_league_file,
    load_league_config,
    parse_league_config,
    read_league_config,
)
from referee.league.schedule import interleave, league_schedule
from referee.play.luck import LuckSetting


def test_every_key(tmp_path: Path) -> None:
    cfg = parse_league_config({
        "league": {"name": "s", "seats": [4, 2], "deals": 3, "seed": 9, "seating": "all",
                   "jobs": 2},
        "rules": {"turn_limit": 300}, "time": {"per_decision": 0.5},
        "faults": {"policy": "forfeit"}, "sandbox": {"memory_mb": 256},
        "limits": {"max_bytes": 1000, "max_files": 5, "max_file_bytes": 100, "max_depth": 4},
        "server": {"in_flight": 1, "submissions_per_hour": 3, "requests_per_hour": 60,
                   "queue": 7, "check_seconds": 30}})
    assert cfg.seats == (2, 4) and cfg.deals == 3 and cfg.seed == 9 and cfg.seating == "all"
    assert cfg.game.turn_limit == 300 and cfg.game_for(4).players == 4
    assert cfg.time.per_decision == 0.5 and cfg.faults.mode == "forfeit"
    assert cfg.sandbox.memory_mb == 256 and cfg.limits.max_files == 5
    assert cfg.limits.max_depth == 4
    assert (cfg.server.in_flight, cfg.server.submissions_per_hour, cfg.server.requests_per_hour,
            cfg.server.queue, cfg.server.check_seconds) == (1, 3, 60, 7, 30)


@pytest.mark.parametrize(("raw", "message"), [
    ({"league": {"seats": [2, 2]}}, "league.seats: must be a table size from 2 to 6"),
    ({"league": {"seats": 7}}, "league.seats"),
    ({"league": {"deals": 0}}, "league.deals: must be a whole number of 1 or more"),
    ({"league": {"deal": 3}}, "did you mean 'deals'?"),
    ({"limits": {"max_bytes": "big"}}, "limits.max_bytes"),
    ({"server": {"in_flight": 0}}, "server.in_flight: must be a whole number of 1 or more"),
    ({"server": {"check_second": 5}}, "did you mean 'check_seconds'?"),
    ({"rules": {"turn_limit": -1}}, "rules.turn_limit"),
    ({"bots": []}, "unknown key"),
])
def test_mistakes_are_named_by_key(raw: dict[str, object], message: str) -> None:
    with pytest.raises(LeagueConfigError, match=message.replace("?", r"\?").replace("(", r"\(")):
        parse_league_config(raw)


def test_a_seed_is_drawn_when_none_is_given(tmp_path: Path) -> None:
    p = tmp_path / "l.toml"
    p.write_text("[league]\nseats = 2\n")
    assert is_league_file(p)
    seeds = {load_league_config(p).seed for _ in range(3)}
    assert len(seeds) == 3
    t = tmp_path / "t.toml"
    t.write_text("[tournament]\nseats = 2\n")
    assert not is_league_file(t)


def test_a_game_clock_is_kept_with_the_league() -> None:
    # [time] game (each seat's game clock, RULES §5.4) is stored with the league and
    # read back; a league made before it (no "game" stored) reads without one.
    cfg = parse_league_config({"league": {"seed": 1}, "time": {"game": 60.0}})
    assert cfg.time.game == 60.0
    stored = cfg.to_json()
    assert stored["time"] == {"startup": 10.0, "per_decision": 1.0, "bank": 10.0, "game": 60.0}
    assert read_league_config(json.dumps(stored), "store").time.game == 60.0
    old = parse_league_config({"league": {"seed": 1}})
    assert "game" not in old.to_json()["time"]
    assert read_league_config(json.dumps(old.to_json()), "store").time.game is None
    assert "time.game: was null, now 60.0" in changes(old, cfg)[0]


def test_changes_refused_and_accepted() -> None:
    old = parse_league_config({"league": {"seed": 1, "deals": 4, "seats": [2, 3]}})
    new = parse_league_config({"league": {"seed": 2, "deals": 3, "seats": [3]},
                               "time": {"bank": 5.0}})
    refused, accepted = changes(old, new)
    assert "seed: was 1, now 2" in refused
    assert "time.bank: was 10.0, now 5.0" in refused
    assert any(r.startswith("deals: was 4, now 3") for r in refused)
    assert any(r.startswith("seats: was [2, 3], now [3]") for r in refused)
    more = parse_league_config({"league": {"seed": 1, "deals": 6, "seats": [2, 3, 4]}})
    refused, accepted = changes(old, more)
    assert refused == []
    assert accepted == ["deals: 4 -> 6 (only the new deals are played)",
                        "seats: [2, 3] -> [2, 3, 4]"]


def test_a_game_does_not_depend_on_the_rest_of_the_field() -> None:
    small = league_schedule(["a@1", "b@1"], [2], 2, seed=5)
    big = league_schedule(["a@1", "b@1", "c@1", "d@1"], [2, 3], 3, seed=5)
    assert set(small) <= set(big)
    # a new version (another bot) meets other decks: a deck is dealt to one lineup only
    again = league_schedule(["a@2", "b@1"], [2], 2, seed=5)
    assert {g.deal_seed for g in again}.isdisjoint({g.deal_seed for g in small})
    # every lineup has decks of its own; within a lineup, a deal is played in every seating
    k2 = [g for g in big if g.table == 2]
    assert len({g.deal_seed for g in k2}) == len(k2) // 2
    assert all(len({g.deal_seed for g in k2 if (g.lineup, g.deal) == (x.lineup, x.deal)}) == 1
               for x in k2)
    assert interleave(big, {}) != big and sorted(interleave(big, {}), key=big.index) == big


def test_the_scores_value_function_is_kept_and_may_change() -> None:
    """``[scores] value``: which V scores the league's games; kept by the store with
    the configuration, and a change is accepted (the games played are scored again
    by ``league run``: ``tournament.run.use_luck_setting``)."""
    old = parse_league_config({"league": {"seed": 1}})
    new = parse_league_config({"league": {"seed": 1},
                               "scores": {"value": "rollout", "rollouts": 8}})
    assert old.luck == LuckSetting() and new.luck == LuckSetting("rollout", 8)
    assert LeagueConfig.from_json(new.to_json(), "here").luck == new.luck
    stored = {k: v for k, v in old.to_json().items() if k != "luck_value"}  # an older league
    assert LeagueConfig.from_json(stored, "here").luck == LuckSetting()
    refused, accepted = changes(old, new)
    assert refused == []
    assert accepted == ["scores.value: linear -> rollout x8, own choices (the games played are scored again)"]
    with pytest.raises(LeagueConfigError, match="scores.value: must be one of linear, rollout"):
        parse_league_config({"scores": {"value": "exact"}})
