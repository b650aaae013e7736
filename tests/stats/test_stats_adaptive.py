"""The adaptive schedule's arithmetic (``referee.stats.adaptive``): the fit of the
strengths and their intervals, the separation of the top, the choice of lineups."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from referee.stats.adaptive import (
    PRIOR,
    SetScore,
    _apply,
    _shrink,
    choose,
    deficits,
    fit,
    invert,
    separation,
)


def play(lineup: tuple[str, ...], strength: dict[str, float], rng: random.Random) -> SetScore:
    """A set of ``lineup``: each entry's share of opponents beaten, by performance
    (strength plus noise), averaged over the rotations of the seats."""
    k = len(lineup)
    luck = [rng.gauss(0, 0.5) for _ in range(k)]
    total = dict.fromkeys(lineup, 0.0)
    for r in range(k):
        seats = [lineup[(s + r) % k] for s in range(k)]
        perf = [strength[b] + luck[s] + rng.gauss(0, 1) for s, b in enumerate(seats)]
        for s, b in enumerate(seats):
            total[b] += sum(perf[s] > perf[t] for t in range(k) if t != s) / (k - 1)
    return SetScore(lineup, tuple(total[b] / k for b in lineup))


def field(n: int) -> tuple[list[str], dict[str, float]]:
    names = [f"e{i}" for i in range(n)]
    return names, {b: -0.4 * i for i, b in enumerate(names)}


def round_robin(names: list[str], strength: dict[str, float], k: int, rounds: int,
                seed: int = 1) -> list[SetScore]:
    rng = random.Random(seed)
    return [play(lineup, strength, rng) for _ in range(rounds)
            for lineup in itertools.combinations(names, k)]


def test_the_fit_finds_the_order_of_known_strengths() -> None:
    names, strength = field(5)
    st = fit(round_robin(names, strength, 2, 40), names)
    assert st.ranking() == names
    assert abs(sum(st.theta)) < 1e-9  # centred
    d, se = st.gap("e0", "e4")
    assert d > 0 and se > 0 and d / se > 5


def test_under_a_round_robin_the_strengths_rank_as_the_mean_scores() -> None:
    names, strength = field(6)
    sets = round_robin(names, strength, 3, 3)
    st = fit(sets, names)
    mean = {b: sum(s.scores[s.lineup.index(b)] for s in sets if b in s.lineup) for b in names}
    assert st.ranking() == sorted(names, key=lambda b: -mean[b])


def test_the_fit_does_not_depend_on_the_order_of_the_sets() -> None:
    names, strength = field(6)
    sets = round_robin(names, strength, 3, 2)
    shuffled = list(sets)
    random.Random(3).shuffle(shuffled)
    assert fit(sets, names) == fit(shuffled, list(reversed(names)))


def test_an_entry_without_games_is_unknown_not_placed() -> None:
    names, strength = field(4)
    st = fit(round_robin(names[:3], strength, 2, 20), names)
    assert st.strength("e3") == 0.0
    assert st.gap("e0", "e3")[1] > 3 * st.gap("e0", "e1")[1]
    assert not separation(st, 1).separated


def test_separation_of_a_clear_top_and_of_an_even_field() -> None:
    names, strength = field(6)
    st = fit(round_robin(names, strength, 2, 30), names)
    sep = separation(st, 3)
    assert sep.separated and sep.z is not None and sep.z >= 1.96
    assert sep.closest == ("e2", "e3")
    assert "separated at 95 %" in sep.text()
    even = dict.fromkeys(names, 0.0)
    st = fit(round_robin(names, even, 2, 10), names)
    sep = separation(st, 3)
    assert not sep.separated and "not yet separated" in sep.text()


def test_top_zero_asks_for_the_whole_order() -> None:
    names, strength = field(4)
    st = fit(round_robin(names, strength, 2, 60), names)
    assert separation(st, 0).closest in [(a, b) for a, b in itertools.pairwise(names)]


@pytest.mark.parametrize("k", [2, 3, 4, 5, 6])
def test_the_update_after_one_set_is_the_refit_information(k: int) -> None:
    """The covariance after one more set (a rank-(k-1) update) is the inverse of the
    information with the set's rows added, and the interval shrink computed from it
    is the one that follows."""
    n = 7
    rng = random.Random(k)
    m = [[PRIOR if i == j else 0.0 for j in range(n)] for i in range(n)]

    def add(lineup: tuple[int, ...]) -> None:
        for s in lineup:
            row = {i: 1.0 if i == s else -1.0 / (k - 1) for i in lineup}
            for i, xi in row.items():
                for j, xj in row.items():
                    m[i][j] += xi * xj

    for _ in range(12):
        add(tuple(sorted(rng.sample(range(n), k))))
    inv = invert(m)
    lineup = tuple(sorted(rng.sample(range(n), k)))
    after = _apply(inv, lineup)
    add(lineup)
    direct = invert(m)
    assert all(math.isclose(after[i][j], direct[i][j], rel_tol=1e-9, abs_tol=1e-12)
               for i in range(n) for j in range(n))
    pairs = [(0, 1), (2, 5), (lineup[0], lineup[-1])]
    var = [inv[i][i] + inv[j][j] - 2 * inv[i][j] for i, j in pairs]
    new = [direct[i][i] + direct[j][j] - 2 * direct[i][j] for i, j in pairs]
    expect = sum(1 - math.sqrt(b / a) for a, b in zip(var, new, strict=True))
    assert math.isclose(_shrink(inv, lineup, pairs, [1.0] * 3, var), expect, rel_tol=1e-9)


def test_the_choice_goes_where_the_top_is_uncertain() -> None:
    """Six entries, the top two clear, the third and fourth close: the next sets
    are spent on the boundary of the top 3, not on the bottom."""
    names = [f"e{i}" for i in range(6)]
    strength = {"e0": 2.0, "e1": 1.6, "e2": 0.25, "e3": 0.2, "e4": -1.5, "e5": -2.0}
    sets = round_robin(names, strength, 2, 6)
    st = fit(sets, names)
    counts = {b: sum(2 for s in sets if b in s.lineup) for b in names}
    chosen = choose(st, 2, 12, top=3, counts=counts, per_set=2)
    assert len(chosen) == 12
    boundary = sum(1 for lu in chosen if {"e2", "e3"} & set(lu))
    bottom = sum(1 for lu in chosen if set(lu) <= {"e4", "e5"})
    assert boundary >= 9 and bottom == 0, chosen


def test_an_entry_short_of_its_minimum_share_is_given_sets() -> None:
    names, strength = field(6)
    sets = [s for s in round_robin(names, strength, 2, 8) if "e5" not in s.lineup]
    sets += round_robin(names, strength, 2, 1, seed=9)[-5:]  # e5: one round only
    counts = {b: sum(2 for s in sets if b in s.lineup) for b in names}
    short = deficits(counts, names, 2, 2, min_share=0.5, warmup=0)
    assert list(short) == ["e5"] and short["e5"] > 3
    st = fit(sets, names)
    chosen = choose(st, 2, short["e5"] + 2, top=1, counts=counts, per_set=2, min_share=0.5)
    assert sum("e5" in lu for lu in chosen) >= short["e5"]
    # Without a minimum share it would play less: e5 is far below the top.
    free = choose(st, 2, short["e5"] + 2, top=1, counts=counts, per_set=2, min_share=0.0)
    assert sum("e5" in lu for lu in free) < short["e5"]


def test_the_warm_up_seats_every_new_entry_from_the_seed() -> None:
    names = [f"e{i}" for i in range(7)]
    st = fit([], names)
    a = choose(st, 3, 5, top=3, per_set=3, warmup=2, seed=11)
    assert a == choose(st, 3, 5, top=3, per_set=3, warmup=2, seed=11)
    assert {b for lu in a for b in lu} == set(names)
    assert all(len(set(lu)) == 3 and tuple(sorted(lu)) == lu for lu in a)
    assert any(choose(st, 3, 5, top=3, per_set=3, warmup=2, seed=s) != a for s in range(12, 20))


@pytest.mark.parametrize("k", [2, 3, 4, 5, 6])
def test_lineups_at_every_table_size_keep_authors_apart(k: int) -> None:
    names, strength = field(9)
    author = {b: "x" if b in ("e0", "e1") else b for b in names}
    rng = random.Random(k)
    sets = [play(tuple(sorted(rng.sample(names, k))), strength, rng) for _ in range(40)]
    sets = [s for s in sets if not {"e0", "e1"} <= set(s.lineup)]
    st = fit(sets, names)

    def apart(lineup: tuple[str, ...]) -> bool:
        return len({author[b] for b in lineup}) == len(lineup)

    counts = {b: sum(k for s in sets if b in s.lineup) for b in names}
    chosen = choose(st, k, 6, top=3, counts=counts, per_set=k, min_share=0.25, warmup=1,
                    seed=k, allowed=apart)
    assert len(chosen) == 6
    assert all(len(set(lu)) == k and apart(lu) and set(lu) <= set(names) for lu in chosen)


def test_the_same_results_give_the_same_choice() -> None:
    names, strength = field(8)
    sets = round_robin(names, strength, 2, 2)
    counts = {b: sum(2 for s in sets if b in s.lineup) for b in names}
    one = choose(fit(sets, names), 2, 6, top=3, counts=counts, per_set=2, seed=4)
    rev = list(reversed(sets))
    two = choose(fit(rev, names), 2, 6, top=3, counts=dict(reversed(counts.items())),
                 per_set=2, seed=4)
    assert one == two
