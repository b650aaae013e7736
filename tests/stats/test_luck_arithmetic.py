"""The arithmetic of luck-adjusted scores (``referee.stats.luck``)."""

from __future__ import annotations

import random

import pytest

from referee.stats.luck import correction, fit_linear, mean_se, unbiasedness


def test_a_correction_is_the_value_that_happened_minus_the_mean_of_the_possible_ones() -> None:
    # two seats; three outcomes, one twice as likely as each other
    got = correction([1.0, 0.0], [(2.0, [1.0, 0.0]), (1.0, [0.0, 1.0]), (1.0, [0.5, 0.5])])
    assert got == pytest.approx([1.0 - (2 + 0 + 0.5) / 4, 0.0 - (0 + 1 + 0.5) / 4])
    with pytest.raises(ValueError):
        correction([1.0], [])


def test_corrections_have_mean_zero_whatever_the_value_function() -> None:
    # outcome drawn uniformly from 5; V arbitrary: the mean correction over many draws is 0
    rng = random.Random(4)
    values = [[rng.uniform(-3, 3)] for _ in range(5)]
    outcomes = [(1.0, v) for v in values]
    draws = [correction(values[rng.randrange(5)], outcomes)[0] for _ in range(20000)]
    m = mean_se(draws)
    assert abs(m.mean) < 3 * m.se


def test_the_least_squares_fit_recovers_a_linear_rule() -> None:
    rng = random.Random(1)
    rows = [[1.0, rng.random(), rng.random()] for _ in range(500)]
    ys = [0.5 + 2 * x[1] - x[2] for x in rows]
    w = fit_linear(rows, ys, ridge=0.0)
    assert w == pytest.approx([0.5, 2.0, -1.0], abs=1e-9)
    # a feature that never varies does not make the system singular with a ridge
    w = fit_linear([[1.0, 0.0]] * 10, [1.0] * 10)
    assert w[0] == pytest.approx(1.0, abs=0.01) and w[1] == 0.0


def test_unbiasedness_accepts_a_mean_zero_correction_and_rejects_a_shifted_one() -> None:
    rng = random.Random(2)
    raw = [float(rng.random() < 0.5) for _ in range(2000)]
    good = [r - (r - 0.5) * 0.8 + rng.gauss(0, 0.01) for r in raw]  # less variance, same mean
    u = unbiasedness(raw, good)
    assert u.unbiased and u.variance_ratio < 0.1
    bad = [r + 0.05 for r in good]
    assert not unbiasedness(raw, bad).unbiased
