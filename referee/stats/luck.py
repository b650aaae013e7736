"""The arithmetic of luck-adjusted scores (control variates at chance events, as
AIVAT does for poker: Burch et al., AAAI 2018), of fitting their value function, and
of checking that they are unbiased.

At a chance event -- a card drawn, a 3DOWN card turned -- every possible outcome is
one of the cards no one has seen yet, each as likely as the others.  For a value
function V of the state (one value per seat), the event's **correction** for seat s is

    V_s(state after the event) - sum over outcomes o of p(o) V_s(state after o)

and a seat's **adjusted score** is its raw score minus the sum of its corrections.
Whatever V is, each correction has mean 0 given everything seen before the event, so
the adjusted score is an unbiased estimate of the raw one; the better V predicts the
final score, the more of the score's variance the corrections remove.  The states and
the outcomes are the engine's (``referee.play.luck``); here are only the numbers.

Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass

#: z for a two-sided 99 % interval.
Z99 = 2.5758293


def correction(actual: Sequence[float],
               outcomes: Sequence[tuple[float, Sequence[float]]]) -> list[float]:
    """Each seat's correction at one chance event: ``actual`` (V by seat after the
    event that happened) minus the mean of V after each possible outcome, ``outcomes``
    being (weight, V by seat) with weights proportional to the outcomes' chances."""
    total = sum(w for w, _ in outcomes)
    if total <= 0:
        raise ValueError("a chance event needs at least one possible outcome")
    out = []
    for s, a in enumerate(actual):
        out.append(a - sum(w * v[s] for w, v in outcomes) / total)
    return out


def dot(weights: Sequence[float], x: Sequence[float]) -> float:
    total: float = sum(map(operator.mul, weights, x))
    return total


def fit_linear(rows: Sequence[Sequence[float]], targets: Sequence[float],
               ridge: float = 1e-3) -> list[float]:
    """Least-squares weights w minimising sum (w . x - y)^2 + ridge * n * |w|^2 (the
    ridge keeps features that never vary from making the system singular).  Solved by
    Gaussian elimination on the normal equations: the models here have a few dozen
    features."""
    if not rows:
        raise ValueError("no rows to fit")
    k = len(rows[0])
    a = [[0.0] * k for _ in range(k)]
    b = [0.0] * k
    for x, y in zip(rows, targets, strict=True):
        for i, xi in enumerate(x):
            if xi:
                a[i] = [r + xi * xj for r, xj in zip(a[i], x, strict=True)]
                b[i] += xi * y
    lam = ridge * len(rows)
    for i in range(k):
        a[i][i] += lam
    # Gaussian elimination with partial pivoting.
    for col in range(k):
        piv = max(range(col, k), key=lambda r: abs(a[r][col]))
        a[col], a[piv] = a[piv], a[col]
        b[col], b[piv] = b[piv], b[col]
        p = a[col][col]
        for r in range(col + 1, k):
            f = a[r][col] / p
            if f:
                ar, ac = a[r], a[col]
                for j in range(col, k):
                    ar[j] -= f * ac[j]
                b[r] -= f * b[col]
    w = [0.0] * k
    for i in range(k - 1, -1, -1):
        w[i] = (b[i] - sum(a[i][j] * w[j] for j in range(i + 1, k))) / a[i][i]
    return w


@dataclass(frozen=True)
class MeanSe:
    """A mean with its standard error over ``n`` independent units."""

    mean: float
    se: float
    n: int

    @property
    def sd(self) -> float:
        return self.se * math.sqrt(self.n)


def mean_se(values: Sequence[float]) -> MeanSe:
    n = len(values)
    if n == 0:
        return MeanSe(math.nan, math.nan, 0)
    m = math.fsum(values) / n
    if n == 1:
        return MeanSe(m, math.nan, 1)
    var = math.fsum((x - m) ** 2 for x in values) / (n - 1)
    return MeanSe(m, math.sqrt(var / n), n)


@dataclass(frozen=True)
class Unbiasedness:
    """Adjusted against raw scores of the same units: ``difference`` is the mean of
    (adjusted - raw), i.e. minus the mean correction, with its standard error; the
    adjustment is consistent with unbiasedness when 0 lies within ``z`` standard
    errors (99 % by default)."""

    raw: MeanSe
    adjusted: MeanSe
    difference: MeanSe
    z: float

    @property
    def interval(self) -> tuple[float, float]:
        d = self.difference
        return d.mean - self.z * d.se, d.mean + self.z * d.se

    @property
    def unbiased(self) -> bool:
        lo, hi = self.interval
        return lo <= 0.0 <= hi

    @property
    def variance_ratio(self) -> float:
        """Variance of the adjusted scores over that of the raw ones (below 1: the
        adjustment removed variance)."""
        r = self.raw.sd ** 2
        return self.adjusted.sd ** 2 / r if r else math.nan


def unbiasedness(raw: Sequence[float], adjusted: Sequence[float], z: float = Z99) -> Unbiasedness:
    """Compare adjusted with raw scores unit by unit (units independent: games of
    independent deals, or one seat's score per game of fixed pairs)."""
    if len(raw) != len(adjusted):
        raise ValueError("raw and adjusted scores must be paired")
    return Unbiasedness(mean_se(raw), mean_se(adjusted),
                        mean_se([a - r for r, a in zip(raw, adjusted, strict=True)]), z)
