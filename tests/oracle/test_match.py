"""match_scoring (RULES §9.4): a match's standings by the referee (`referee play
--games N -V match_scoring`: `series.standings`) against the oracle, which re-runs
every game of the match from its record and sums the penalty points itself."""

from __future__ import annotations

import pytest

from referee.bots import make_bot
from referee.game import GameConfig
from referee.play.runner import InProcessPlayer, run_game
from referee.play.series import standings
from tests.oracle.rules import Config, Game, match_standings


@pytest.mark.parametrize("players", [2, 3, 5])
def test_match_standings_by_total_points(players: int) -> None:
    config = GameConfig(players=players, variants=frozenset({"match_scoring"}), colours=5)
    names = [f"b{i}" for i in range(players)]
    games = 6
    records, seatings = [], []
    for g in range(games):
        seating = [(s + g) % players for s in range(players)]  # a match rotates the seats
        bots = [InProcessPlayer(make_bot("random", 100 * g + b)) for b in seating]
        records.append(run_game(config, 40 + g, bots, game_id=f"m{g}"))
        seatings.append(seating)
    # The oracle: every game re-run from its record; points credited to each bot.
    by_bot = []
    for record, seating in zip(records, seatings, strict=True):
        oracle = Game(Config(players, frozenset({"match_scoring"}), 5), record.deck,
                      record.first_player)
        for row in record.decisions:
            oracle.apply(row["seat"], row["decision"])
        _, _, points = oracle.result()
        by_bot.append([points[seating.index(b)] for b in range(players)])
    totals, places = match_standings(by_bot)
    table = standings(names, records, True, seatings)
    assert {r.bot: (r.total_points, r.place) for r in table} == {
        names[b]: (totals[b], places[b]) for b in range(players)}
    assert [r.place for r in table] == sorted(places)


def test_equal_totals_share_a_place() -> None:
    assert match_standings([[10, 0, 25, 3], [0, 10, 0, 7]]) == ([10, 10, 25, 10], [1, 1, 4, 1])
