"""Batch Plackett-Luce / Bradley-Terry ratings and their bootstrap intervals."""

from __future__ import annotations

import math
import random

import pytest

from referee.stats.ratings import (
    PRIOR,
    THETA_BOUND,
    RatedGame,
    _fit,
    _held_shares,
    _Tally,
    data_seed,
    fit_plackett_luce,
    rate,
)

ELO = 400 / math.log(10)


def _game(deal: int, *order: str) -> RatedGame:
    """A game whose finishing order is ``order``."""
    return RatedGame(deal, tuple(order), tuple(range(1, len(order) + 1)))


def test_bradley_terry_by_hand() -> None:
    # A beats B 3 times, B beats A once: g_A / g_B = 3, ratings +-200 log10 3
    games = [_game(i, "A", "B") for i in range(3)] + [_game(3, "B", "A")]
    r = fit_plackett_luce(games, ["A", "B"], prior=0.0)
    assert r["A"] == pytest.approx(200 * math.log10(3), abs=1e-6)  # 95.42
    assert r["B"] == pytest.approx(-200 * math.log10(3), abs=1e-6)
    # logistic Elo scale: the difference gives back the win rate
    assert 1 / (1 + 10 ** (-(r["A"] - r["B"]) / 400)) == pytest.approx(0.75)


def test_plackett_luce_by_hand() -> None:
    # Orders A>B>C and C>B>A.  By symmetry g_A = g_C = 1; the likelihood
    # b^2 / ((2 + b)^2 (1 + b)^2) is largest at b^2 = 2: g_B = sqrt 2.  Mean-0 Elo:
    # A = C = -400 log10(2) / 6, B = +400 log10(2) / 3.
    r = fit_plackett_luce([_game(0, "A", "B", "C"), _game(1, "C", "B", "A")], ["A", "B", "C"],
                          prior=0.0)
    assert r["A"] == pytest.approx(-400 * math.log10(2) / 6, abs=1e-6)
    assert r["C"] == pytest.approx(r["A"], abs=1e-9)
    assert r["B"] == pytest.approx(400 * math.log10(2) / 3, abs=1e-6)


def test_a_shared_place_is_half_a_win_each_way() -> None:
    tie = RatedGame(0, ("A", "B"), (1, 1))
    r = fit_plackett_luce([tie, _game(1, "A", "B")], ["A", "B"], prior=0.0)
    # 1.5 wins to 0.5: g_A / g_B = 3, as in the hand case above
    assert r["A"] - r["B"] == pytest.approx(400 * math.log10(3), abs=1e-6)


def test_the_prior_keeps_an_unbeaten_bot_finite() -> None:
    r = fit_plackett_luce([_game(i, "A", "B") for i in range(5)], ["A", "B"])
    assert math.isfinite(r["A"]) and math.isfinite(r["B"]) and r["A"] > 150 > 0 > r["B"]


def _mm(games: list[RatedGame], bots: list[str], prior: float) -> dict[str, float]:
    """Hunter's MM algorithm, written out independently: the reference for Newton."""
    g = dict.fromkeys(bots, 1.0)
    for _ in range(100000):
        old = g
        wins = dict.fromkeys(bots, prior)
        denom = {b: 2 * prior / (g[b] + 1) for b in bots}
        for game in games:
            order = [b for _, b in sorted(zip(game.places, game.bots, strict=True))]
            for i in range(len(order) - 1):
                wins[order[i]] += 1
                total = sum(g[b] for b in order[i:])
                for b in order[i:]:
                    denom[b] += 1 / total
        g = {b: wins[b] / denom[b] for b in bots}
        if max(abs(math.log(g[b] / old[b])) for b in bots) < 1e-12:
            break
    mean = sum(math.log(v) for v in g.values()) / len(g)
    return {b: ELO * (math.log(v) - mean) for b, v in g.items()}


def _random_games(n_deals: int, seed: int) -> list[RatedGame]:
    rng = random.Random(seed)
    strength = {"a": 3.0, "b": 2.0, "c": 1.0, "d": 1.0, "e": 0.5}
    games = []
    for deal in range(n_deals):
        lineup = rng.sample(sorted(strength), 3)
        for r in range(3):
            left, order = lineup[r:] + lineup[:r], []
            while left:  # draw a Plackett-Luce order
                pick = rng.choices(left, weights=[strength[b] for b in left])[0]
                order.append(pick)
                left = [b for b in left if b != pick]
            games.append(_game(deal, *order))
    return games


def test_newton_reaches_the_mm_maximum() -> None:
    games = _random_games(40, 1)
    bots = ["a", "b", "c", "d", "e"]
    ours = fit_plackett_luce(games, bots)
    ref = _mm(games, bots, 1.0)
    for b in bots:
        assert ours[b] == pytest.approx(ref[b], abs=1e-6)
    assert ours["a"] > ours["e"]


def test_batch_ratings_do_not_depend_on_the_order_of_the_games() -> None:
    games = _random_games(60, 2)
    bots = ["a", "b", "c", "d", "e"]
    first = rate(games, bots, resamples=50)
    shuffled = games[:]
    random.Random(9).shuffle(shuffled)
    again = rate(shuffled, bots, resamples=50)
    assert again == first  # ratings, intervals and bootstrap seed, exactly
    assert data_seed(shuffled) == data_seed(games)
    for b in bots:
        assert first.low[b] <= first.rating[b] <= first.high[b]
    # other games: another seed
    assert rate(games[:-3], bots, resamples=50).seed != first.seed


def test_bootstrap_intervals_narrow_with_more_deals() -> None:
    bots = ["a", "b", "c", "d", "e"]
    small = rate(_random_games(30, 3), bots, resamples=60)
    large = rate(_random_games(480, 3), bots, resamples=60)
    width = lambda r: r.high["a"] - r.low["a"]  # noqa: E731
    assert width(large) < width(small) / 2


# --- ratings fitted to luck-adjusted shares (scores="adjusted") -------------------------


def _shared(deal: int, bots: tuple[str, ...], places: tuple[int, ...],
            shares: tuple[float, ...] | None) -> RatedGame:
    return RatedGame(deal, bots, places, shares)


def test_adjusted_ratings_at_two_seats_are_bradley_terry_on_the_shares() -> None:
    # The raw shares: the same ratings as the finishing orders give.
    games = [_game(i, "A", "B") for i in range(3)] + [_game(3, "B", "A")]
    raw = fit_plackett_luce(games, ["A", "B"], prior=0.0)
    same = fit_plackett_luce(games, ["A", "B"], prior=0.0, scores="adjusted")
    assert same["A"] == pytest.approx(raw["A"], abs=1e-6)
    # Adjusted shares: A's wins are 0.6 + 0.7 + 0.8 + 0.4 = 2.5 of 4, so g_A / g_B =
    # 2.5 / 1.5, whatever the places say.
    shares = [(0.6, 0.4), (0.7, 0.3), (0.8, 0.2), (0.6, 0.4)]
    adj = [_shared(i, g.bots, g.places, s) for i, (g, s) in enumerate(zip(games, shares, strict=True))]
    r = fit_plackett_luce(adj, ["A", "B"], prior=0.0, scores="adjusted")
    assert r["A"] == pytest.approx(200 * math.log10(2.5 / 1.5), abs=1e-6)
    # ... and the finishing orders alone still give the raw figure.
    assert fit_plackett_luce(adj, ["A", "B"], prior=0.0)["A"] == pytest.approx(raw["A"])


def test_adjusted_ratings_at_four_seats_follow_the_shares_and_stay_finite() -> None:
    bots = ("A", "B", "C", "D")
    games = []
    for d in range(40):
        # the same finishing order every time; the adjusted shares rank C first, and
        # one stray share below 0 and one above 1 (luck can push them out of [0, 1])
        shares = (0.5, 0.4, 1.3, -0.2) if d % 2 else (0.6, 0.5, 0.7, 0.2)
        games.append(_shared(d, bots, (1, 2, 3, 4), shares))
    raw = rate(games, list(bots), resamples=30)
    adj = rate(games, list(bots), resamples=30, scores="adjusted")
    assert raw.scores == "raw" and adj.scores == "adjusted"
    assert raw.rating["A"] > raw.rating["B"] > raw.rating["C"] > raw.rating["D"]
    assert adj.rating["C"] > adj.rating["A"] > adj.rating["B"] > adj.rating["D"]
    for b in bots:
        assert math.isfinite(adj.rating[b]) and adj.low[b] <= adj.rating[b] <= adj.high[b]
    # a bot whose summed adjusted wins fall below 0 is held at 0: finite
    low = [_shared(d, ("A", "B"), (1, 2), (1.4, -0.4)) for d in range(5)]
    r = fit_plackett_luce(low, ["A", "B"], scores="adjusted")
    assert math.isfinite(r["A"]) and r["A"] > 0 > r["B"]
    with pytest.raises(ValueError, match="unknown scores"):
        fit_plackett_luce(low, ["A", "B"], scores="lucky")


def test_adjusted_ratings_do_not_depend_on_the_order_of_the_games() -> None:
    rng = random.Random(5)
    bots = ("A", "B", "C")
    games = [_shared(d, bots, (1, 2, 3), tuple(rng.uniform(-0.2, 1.2) for _ in bots))
             for d in range(30)]
    shuffled = list(games)
    rng.shuffle(shuffled)
    a = rate(games, list(bots), resamples=20, scores="adjusted")
    b = rate(shuffled, list(bots), resamples=20, scores="adjusted")
    assert a == b
    # the shares are part of the data: other shares, another bootstrap seed
    other = [_shared(g.deal, g.bots, g.places, None) for g in games]
    assert data_seed(other) != data_seed(games)


def test_adjusted_ratings_stay_finite_when_weak_bots_lose_with_good_luck() -> None:
    """Two weak bots whose adjusted shares against a strong one stray below 0 (they
    lost although their luck was good): summed over the games, they had fewer wins
    than their own games against each other hand out, the likelihood grew without
    bound as both sank together, and the fit ran away (a ZeroDivisionError in a
    chaos tournament's standings).  Held within 0 and 1 game by game, the fit is
    finite and orders the bots."""
    games = []
    for deal in range(10):
        games.append(RatedGame(deal, ("strong", "weak1"), (1, 2), (1.4, -0.4)))
        games.append(RatedGame(deal, ("weak2", "strong"), (2, 1), (-0.3, 1.3)))
    for deal in range(10, 14):
        games.append(RatedGame(deal, ("weak1", "weak2"), (1, 2), (0.6, 0.4)))
    r = fit_plackett_luce(games, ["strong", "weak1", "weak2"], scores="adjusted")
    assert all(math.isfinite(v) and abs(v) < 2000 for v in r.values()), r
    assert r["strong"] > r["weak1"] > r["weak2"], r


def test_held_shares_add_up_as_raw_shares_do() -> None:
    """A game's adjusted shares, held within 0 and 1, still add up to k / 2 (each
    game hands out as many wins as its pairs weigh), and stay in order."""
    rng = random.Random(5)
    for _ in range(500):
        k = rng.randint(2, 6)
        shares = [rng.uniform(-1.5, 2.5) for _ in range(k)]
        held = _held_shares(shares)
        assert all(0.0 <= h <= 1.0 for h in held)
        assert math.isclose(math.fsum(held), k / 2, abs_tol=1e-9), (shares, held)
        for x, y, hx, hy in zip(shares, shares[1:], held, held[1:], strict=False):
            assert (hx <= hy) if x <= y else (hx >= hy)


def test_a_fit_with_no_finite_maximum_stops_at_the_bound() -> None:
    """A resample of a chaos tournament's 4-seat games held two bots that shared a
    game and won nothing at all: the likelihood grows without bound as they sink
    together, the Newton system lost its pivots and the standings failed with a
    ZeroDivisionError in CI.  The fit now stops at the strengths' bound, finite,
    with the bots that won above those that did not; and no tally of random games
    breaks it."""
    tally = _Tally({"a": 0.0, "e": 0.0, "d": 0.2407, "b": 0.4245, "c": 0.0},
                   {frozenset({"e", "a"}): 1.0, frozenset({"b", "d"}): 1.0,
                    frozenset({"c", "a"}): 3.0})
    bots = ["a", "b", "c", "d", "e"]
    theta = _fit(tally, bots, PRIOR, tol=1e-8)
    assert all(math.isfinite(v) and abs(v) <= 2 * THETA_BOUND for v in theta.values())
    assert min(theta["b"], theta["d"]) > max(theta["a"], theta["c"])
    rng = random.Random(11)
    for _ in range(400):
        t = _Tally({}, {})
        for _ in range(rng.randint(1, 6)):
            k = rng.choice([2, 3, 4])
            g = rng.sample(bots, k)
            w = rng.choice([0.5, 1.0, 3.0])
            for i, b in enumerate(g):
                t.wins[b] = t.wins.get(b, 0.0) + w * (k - 1) * rng.choice([0.0, 1.0, rng.random()])
                for c in g[i + 1:]:
                    t.stages[frozenset((b, c))] = t.stages.get(frozenset((b, c)), 0.0) + w
        fitted = _fit(t, bots, PRIOR, tol=1e-8)
        assert all(math.isfinite(v) and abs(v) <= 2 * THETA_BOUND for v in fitted.values())
