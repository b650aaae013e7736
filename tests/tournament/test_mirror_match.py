"""Identical bots in identical positions choose identically (issue 25, item 4).

In a tournament (duplicate deals) an in-process bot draws its random numbers from the
deal and its seat, not from its name: two copies of the heuristic (which searches with
random deals of the hidden cards) under different names then play each seat of a deal
alike, and a mirror match under seat rotation comes out at exactly 0, game for game."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from referee.tournament.config import parse_config
from referee.tournament.executor import SerialExecutor
from referee.tournament.run import run_tournament
from referee.tournament.store import Store


def test_a_mirror_match_under_duplicate_deals_is_exactly_even(tmp_path: Path) -> None:
    raw = {"tournament": {"name": "mirror", "seats": 2, "deals": 6, "seed": 3,
                          "seating": "rotate"},
           "rules": {"variants": ["play_out"]},
           "bots": [{"name": "a", "builtin": "heuristic"}, {"name": "b", "builtin": "heuristic"}]}
    run_tournament(parse_config(raw), output_dir=tmp_path / "out", executor=SerialExecutor(),
                   quiet=True)
    store = Store.open_existing(tmp_path / "out")
    try:
        wins: dict[str, int] = defaultdict(int)
        games: dict[int, list[tuple[str, ...]]] = defaultdict(list)
        for o in store.outcomes():
            games[o.deal].append(o.places)
            for seat, place in enumerate(o.places):
                wins[o.seats[seat]] += place == 1
    finally:
        store.close()
    assert len(games) == 6 and all(len(g) == 2 for g in games.values())
    # each deal's two games are the same game with the names swapped: the seat's places agree
    assert all(g[0] == g[1] for g in games.values()), games
    assert wins["a"] == wins["b"] == 6


def test_a_four_seat_mirror_of_the_heuristic_is_exactly_even(tmp_path: Path) -> None:
    """Issue 25's failing case: four copies of the heuristic (which searches with random
    deals in the endgame) at 4 seats, every rotation of each deal: every rotation is
    the same game, so each copy wins each deal exactly once."""
    raw = {"tournament": {"name": "mirror4", "seats": 4, "deals": 2, "seed": 5,
                          "seating": "rotate"},
           "rules": {"variants": ["play_out"]},
           "bots": [{"name": n, "builtin": "heuristic"} for n in "abcd"]}
    run_tournament(parse_config(raw), output_dir=tmp_path / "out", executor=SerialExecutor(),
                   quiet=True)
    store = Store.open_existing(tmp_path / "out")
    try:
        wins: dict[str, int] = defaultdict(int)
        games: dict[int, list[tuple[int, ...]]] = defaultdict(list)
        for o in store.outcomes():
            games[o.deal].append(tuple(o.places))
            for seat, place in enumerate(o.places):
                wins[o.seats[seat]] += place == 1
    finally:
        store.close()
    assert len(games) == 2 and all(len(g) == 4 for g in games.values())
    assert all(len(set(g)) == 1 for g in games.values()), games
    assert dict(wins) == {"a": 2, "b": 2, "c": 2, "d": 2}
