"""Schedules: a pure, deterministic function from the configuration to the games,
with every combination present and seats balanced by duplicate deals."""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict
from typing import Any

from referee.tournament import GameSpec, schedule
from referee.tournament.config import parse_config


def config(bots: int = 4, **tournament: Any) -> Any:
    tournament.setdefault("seed", 1)
    raw = {"tournament": tournament,
           "bots": [{"name": f"b{i}", "builtin": "random"} for i in range(bots)]}
    return parse_config(raw)


def by_deal(games: list[GameSpec]) -> dict[int, list[GameSpec]]:
    out: dict[int, list[GameSpec]] = defaultdict(list)
    for g in games:
        out[g.deal].append(g)
    return out


def test_round_robin_has_every_combination_for_every_deal() -> None:
    c = config(5, seats=3, deals=4)
    games = schedule(c)
    assert len(games) == math.comb(5, 3) * 4 * 3
    assert [g.index for g in games] == list(range(len(games)))
    lineups = Counter(frozenset(g.seats) for g in games)
    assert set(lineups) == {frozenset(x) for x in itertools.combinations(c.bot_names, 3)}
    assert set(lineups.values()) == {4 * 3}


def test_each_deal_is_replayed_in_every_rotation_with_one_seed() -> None:
    games = schedule(config(5, seats=3, deals=4))
    deals = by_deal(games)
    assert len(deals) == math.comb(5, 3) * 4
    seeds = set()
    for gs in deals.values():
        assert len({g.deal_seed for g in gs}) == 1
        seeds.add(gs[0].deal_seed)
        first = gs[0].seats
        rotations = {first[i:] + first[:i] for i in range(3)}
        assert {g.seats for g in gs} == rotations
        for seat in range(3):  # every bot in every seat once per deal
            assert len({g.seats[seat] for g in gs}) == 3
    assert len(seeds) == len(deals)  # no two deals alike


def test_cyclic_order_is_drawn_per_deal_so_successors_vary() -> None:
    """Rotating one fixed order would always seat b1 right after b0; drawn orders
    put each bot after each other bot about equally often."""
    games = schedule(config(3, seats=3, deals=200))
    after: Counter[tuple[str, str]] = Counter()
    for g in games:
        for s in range(3):
            after[(g.seats[s], g.seats[(s + 1) % 3])] += 1
    assert len(after) == 6  # both cyclic orders occur
    assert max(after.values()) / min(after.values()) < 1.4


def test_all_seatings_option_plays_every_permutation() -> None:
    games = schedule(config(3, seats=3, deals=2, seating="all"))
    for gs in by_deal(games).values():
        assert sorted(g.seats for g in gs) == sorted(itertools.permutations(gs[0].seats))


def test_random_seating_is_one_game_per_deal() -> None:
    games = schedule(config(4, seats=2, deals=5, seating="random"))
    assert len(games) == 6 * 5
    assert all(len(gs) == 1 for gs in by_deal(games).values())


def test_two_seats_rotation_swaps_the_seats() -> None:
    for gs in by_deal(schedule(config(3, seats=2, deals=3))).values():
        a, b = (g.seats for g in gs)
        assert a == b[::-1]


def test_deal_major_order_keeps_an_early_stop_balanced() -> None:
    games = schedule(config(4, seats=2, deals=10))
    first_round = games[: 6 * 2]  # the first deal of every pairing
    assert len({frozenset(g.seats) for g in first_round}) == 6


def test_gauntlet_plays_challengers_against_the_field_only() -> None:
    games = schedule(config(5, seats=3, deals=2, format="gauntlet", challengers=["b0", "b1"]))
    lineups = {frozenset(g.seats) for g in games}
    field = ["b2", "b3", "b4"]
    expected = {frozenset((c, *rest)) for c in ("b0", "b1") for rest in itertools.combinations(field, 2)}
    assert lineups == expected
    assert not any({"b0", "b1"} <= set(g.seats) for g in games)


def test_balanced_schedule_properties() -> None:
    n, k, games_wanted = 9, 4, 4 * 90
    games = schedule(config(n, seats=k, format="balanced", games=games_wanted))
    assert len(games) == games_wanted
    per_bot = Counter(b for g in games for b in g.seats)
    assert len(per_bot) == n
    # 90 deals x 4 seats = 360 tables over 9 bots: 40 each, exactly
    assert set(per_bot.values()) == {games_wanted * k // n}
    met: Counter[tuple[str, str]] = Counter()
    for gs in by_deal(games).values():
        for a, b in itertools.combinations(sorted(gs[0].seats), 2):
            met[(a, b)] += 1
    assert len(met) == math.comb(n, 2)  # every pair meets
    mean = sum(met.values()) / len(met)
    assert max(met.values()) - min(met.values()) <= 3
    assert max(met.values()) <= mean + 2 and min(met.values()) >= mean - 2
    # seats still rotate within each deal
    for gs in by_deal(games).values():
        assert len(gs) == k and len({g.seats for g in gs}) == k


def test_balanced_uneven_split_stays_within_one_deal() -> None:
    games = schedule(config(7, seats=3, format="balanced", games=3 * 10))
    per_bot = Counter(b for g in games for b in g.seats)
    assert max(per_bot.values()) - min(per_bot.values()) == 3  # one deal of 3 games


def test_schedule_is_deterministic_and_depends_on_the_seed() -> None:
    for fmt in ({}, {"format": "balanced", "games": 60}, {"format": "gauntlet", "challengers": ["b0"]}):
        a = schedule(config(5, seats=3, seed=7, **fmt))
        b = schedule(config(5, seats=3, seed=7, **fmt))
        c = schedule(config(5, seats=3, seed=8, **fmt))
        assert a == b
        assert [g.deal_seed for g in a] != [g.deal_seed for g in c]
