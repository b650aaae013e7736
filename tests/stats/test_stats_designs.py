"""The Williams design: balanced for seat and for the bot sitting just before."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import pytest

from referee.stats.designs import williams
from referee.tournament.config import parse_config, seatings_per_deal
from referee.tournament.schedule import schedule, seatings


@pytest.mark.parametrize("k", [2, 3, 4, 5, 6])
def test_williams_balances_seat_and_predecessor(k: int) -> None:
    rows = williams(k)
    assert len(rows) == (k if k % 2 == 0 else 2 * k)
    assert all(sorted(r) == list(range(k)) for r in rows)
    per = len(rows) // k  # times each player sits in each seat
    seat = Counter((r[j], j) for r in rows for j in range(k))
    assert len(seat) == k * k and set(seat.values()) == {per}
    # every ordered pair (a sits in seat j, b in seat j + 1) equally often
    before = Counter((r[j], r[j + 1]) for r in rows for j in range(k - 1))
    assert len(before) == k * (k - 1) and set(before.values()) == {len(rows) // k}
    # the wrap-around (seat k-1 before seat 0) cannot be balanced too: every pair is
    # a cyclic neighbour at least once, and at most once more than another pair
    cyclic = Counter((r[j], r[(j + 1) % k]) for r in rows for j in range(k))
    assert len(cyclic) == k * (k - 1) and max(cyclic.values()) - min(cyclic.values()) <= 1


def test_williams_3_is_every_order() -> None:
    assert sorted(williams(3)) == sorted(itertools.permutations(range(3)))


def test_williams_seatings_of_a_lineup() -> None:
    rng = random.Random(1)
    games = seatings(("a", "b", "c", "d"), "williams", rng)
    assert len(games) == 4 == seatings_per_deal("williams", 4)
    assert {g[0] for g in games} == set("abcd")
    assert len(Counter((g[j], g[j + 1]) for g in games for j in range(3))) == 12


def test_a_tournament_with_williams_seating() -> None:
    raw = {"tournament": {"seats": 5, "deals": 2, "seating": "williams", "seed": 1},
           "bots": [{"name": n, "builtin": "random"} for n in "abcde"]}
    cfg = parse_config(raw)
    games = schedule(cfg)
    assert len(games) == 2 * 10
    for deal in (0, 1):
        seats = [g.seats for g in games if g.deal == deal]
        assert len({g.deal_seed for g in games if g.deal == deal}) == 1
        assert set(Counter((s[j], j) for s in seats for j in range(5)).values()) == {2}
