"""Where a league should play next: the arithmetic of the adaptive schedule.

Model.  Each duplicate set (every seating of one deal of one lineup) gives, for each
entry i of its lineup L, its score y_i: the mean over the set's games of the share of
opponents it finished ahead of (raw, or luck-adjusted: ``referee.stats.luck``).  The
model is linear in the entries' strengths theta,

    y_i - 1/2 = theta_i - mean of theta_j over the others j of L,

so that at 2 seats theta_i - theta_j is the expected score of i against j, less
one half.  It is fitted by least squares over every set with a small ridge prior
(``PRIOR`` virtual sets at a draw: an entry without games gets strength 0 and a wide
interval).  A lineup's scores add up to a constant, so its k errors are taken as
exchangeable with a fixed sum: the covariance of the strengths is then
``tau2 * (X'X + PRIOR I)^-1`` with ``tau2`` estimated from the residuals over
``sum(k - 1) - (entries - 1)`` degrees of freedom (plus a weak prior of its own, so
that a few sets cannot make it 0).  Unlike the standings' mean score, a strength is
corrected for whom an entry met: an adaptive schedule does not give every entry the
same opponents.  Under a round-robin the two rank alike.

Separation.  The top ``k`` are *separated at 95 %* when, for every entry i of the
top ``k`` and every entry j below, the 95 % interval of theta_i - theta_j (normal,
from the covariance above) lies above 0.  ``k = 0`` asks it of every pair of
neighbours in the ranking (the whole order).

Selection.  The pairs still to separate (top ``k`` against the rest, or the
neighbours) are weighted by how unresolved each is, ``phi(gap / se)`` (the normal
density: a pair whose gap is many standard errors wide weighs nothing).  A
candidate lineup's value is the weighted sum of the *relative shrink of the
intervals* of those pairs that one more set of it would bring (the covariance after
a set is a rank-(k-1) update, computed exactly).  A batch is chosen greedily, one
set at a time, each chosen set updating the covariance, so that a batch does not
play one lineup over and over.  Before that, the batch gives every entry its
minimum: a warm-up (``warmup`` sets each, lineups drawn at random from an explicit
seed) and a minimum share of the games (``min_share`` of what it would play under
a round-robin: k/n of the games).

Pure: no I/O, no clock, no global randomness (a warm-up draws from the seed it is
given); the same sets, in any order, give the same fit and the same choice.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

#: Virtual sets at a draw per entry (a ridge prior on the strengths).
PRIOR = 0.5
#: The weak prior of the residual variance: its value and its weight (in rows).
TAU2_PRIOR = 0.25
TAU2_WEIGHT = 4.0
Z95 = 1.959964
#: Candidate lineups scored per greedy step (the entries most involved in the
#: unresolved pairs are combined until this many lineups are on the list).
MAX_CANDIDATES = 150
#: Pairs weighed per step (the most unresolved).
MAX_PAIRS = 40


@dataclass(frozen=True)
class SetScore:
    """One duplicate set: its lineup and each entry's mean score over its games."""

    lineup: tuple[str, ...]
    scores: tuple[float, ...]


@dataclass(frozen=True)
class Strengths:
    """The fitted strengths of ``entries`` (sorted), their covariance
    (``tau2 * inv``), and how many sets they rest on."""

    entries: tuple[str, ...]
    theta: tuple[float, ...]
    inv: tuple[tuple[float, ...], ...]  # (X'X + PRIOR I)^-1
    tau2: float
    sets: int

    def index(self, e: str) -> int:
        return self.entries.index(e)

    def strength(self, e: str) -> float:
        return self.theta[self.index(e)]

    def ranking(self) -> list[str]:
        """Strongest first (equal strengths: by name)."""
        return sorted(self.entries, key=lambda e: (-self.strength(e), e))

    def gap(self, a: str, b: str) -> tuple[float, float]:
        """theta_a - theta_b and its standard error."""
        i, j = self.index(a), self.index(b)
        v = self.inv[i][i] + self.inv[j][j] - 2 * self.inv[i][j]
        return self.theta[i] - self.theta[j], math.sqrt(max(v, 0.0) * self.tau2)


def _row(lineup: Sequence[int]) -> list[list[tuple[int, float]]]:
    """The design rows of a set of lineup ``lineup`` (indices): one per seat."""
    k = len(lineup)
    other = -1.0 / (k - 1)
    return [[(i, 1.0 if i == s else other) for i in lineup] for s in lineup]


def invert(m: Sequence[Sequence[float]]) -> list[list[float]]:
    """The inverse of a symmetric positive definite matrix (Gauss-Jordan with partial
    pivoting)."""
    n = len(m)
    a = [list(map(float, row)) + [1.0 if i == j else 0.0 for j in range(n)]
         for i, row in enumerate(m)]
    for c in range(n):
        piv = max(range(c, n), key=lambda r: abs(a[r][c]))
        a[c], a[piv] = a[piv], a[c]
        p = a[c][c]
        row_c = [x / p for x in a[c]]
        a[c] = row_c
        for r in range(n):
            if r != c:
                f = a[r][c]
                if f:
                    ar = a[r]
                    for j in range(c, 2 * n):
                        ar[j] -= f * row_c[j]
    return [row[n:] for row in a]


def fit(sets: Iterable[SetScore], entries: Iterable[str], *, prior: float = PRIOR) -> Strengths:
    """The strengths of ``entries`` from the sets among them (a set with an entry not
    in ``entries`` is left out)."""
    names = tuple(sorted(set(entries)))
    at = {e: i for i, e in enumerate(names)}
    n = len(names)
    # Canonical order: the rounding of every sum does not depend on the sets' order.
    rows = sorted((tuple(s.lineup), tuple(s.scores)) for s in sets
                   if len(s.lineup) >= 2 and all(e in at for e in s.lineup))
    m = [[prior if i == j else 0.0 for j in range(n)] for i in range(n)]
    b = [0.0] * n
    design: list[tuple[list[tuple[int, float]], float]] = []
    played: set[int] = set()
    dof = 0.0
    for lineup, scores in rows:
        idx = [at[e] for e in lineup]
        played.update(idx)
        dof += len(idx) - 1
        for x, y in zip(_row(idx), scores, strict=True):
            y0 = y - 0.5
            design.append((x, y0))
            for i, xi in x:
                b[i] += xi * y0
                for j, xj in x:
                    m[i][j] += xi * xj
    inv = invert(m) if n else []
    theta = [math.fsum(inv[i][j] * b[j] for j in range(n)) for i in range(n)]
    rss = math.fsum((y0 - math.fsum(xi * theta[i] for i, xi in x)) ** 2 for x, y0 in design)
    dof = max(dof - max(len(played) - 1, 0), 0.0)
    tau2 = (rss + TAU2_WEIGHT * TAU2_PRIOR) / (dof + TAU2_WEIGHT)
    return Strengths(names, tuple(theta), tuple(tuple(r) for r in inv), tau2, len(rows))


# --- separation ----------------------------------------------------------------------


def pairs_to_separate(st: Strengths, top: int) -> list[tuple[str, str]]:
    """(higher, lower) pairs whose order decides the top ``top`` (0: every pair of
    neighbours in the ranking)."""
    order = st.ranking()
    if top <= 0 or top >= len(order):
        return list(itertools.pairwise(order))
    return [(a, b) for a in order[:top] for b in order[top:]]


@dataclass(frozen=True)
class Separation:
    """Whether the top ``top`` are separated at 95 %, and the least separated pair
    (its gap in standard errors: at least 1.96 when separated)."""

    top: int
    separated: bool
    closest: tuple[str, str] | None
    z: float | None

    def text(self) -> str:
        what = "the whole order" if self.top <= 0 else f"the top {self.top}"
        if self.closest is None:
            return f"{what}: too few entries to rank"
        a, b = self.closest
        if self.separated:
            return (f"{what} separated at 95 % (least separated: {a} above {b} by "
                    f"{self.z:.1f} standard errors)")
        return (f"{what} not yet separated at 95 % (least separated: {a} above {b} by "
                f"{self.z:.1f} standard errors, 1.96 needed)")


def separation(st: Strengths, top: int, z: float = Z95) -> Separation:
    """Are the top ``top`` separated at 95 % (see the module docstring)?"""
    pairs = pairs_to_separate(st, top)
    if not pairs or st.sets == 0:
        return Separation(top, False, pairs[0] if pairs else None, 0.0 if pairs else None)
    scored = [(d / se if se > 0 else math.inf, a, b)
              for a, b in pairs for d, se in [st.gap(a, b)]]
    zmin, a, b = min(scored, key=lambda t: (t[0], t[1], t[2]))
    return Separation(top, zmin >= z, (a, b), zmin)


# --- selection -----------------------------------------------------------------------


def _phi(x: float) -> float:
    return math.exp(-0.5 * x * x)


def _set_update(inv: list[list[float]], lineup: Sequence[int]) -> tuple[
        list[list[float]], list[list[float]]]:
    """For one more set of ``lineup``: (P A', S^-1) with A the set's design rows and
    S = I + A P A' (then P' = P - (P A') S^-1 (A P))."""
    k = len(lineup)
    a = [[1.0 if i == s else -1.0 / (k - 1) for i in range(k)] for s in range(k)]
    # P A' restricted to every row: column s = sum_t a[s][t] * P[:, lineup[t]]
    n = len(inv)
    pa = [[math.fsum(a[s][t] * inv[r][lineup[t]] for t in range(k)) for s in range(k)]
          for r in range(n)]
    s_mat = [[(1.0 if s == u else 0.0) + math.fsum(a[s][t] * pa[lineup[t]][u] for t in range(k))
              for u in range(k)] for s in range(k)]
    return pa, invert(s_mat)


def _shrink(inv: list[list[float]], lineup: Sequence[int], pairs: Sequence[tuple[int, int]],
            weights: Sequence[float], var: Sequence[float]) -> float:
    """The weighted relative shrink of the intervals of ``pairs`` (``var``: their
    variances now, unscaled) that one more set of ``lineup`` brings."""
    k = len(lineup)
    total = 0.0
    if k == 2:  # A = (1, -1; -1, 1): u' A' S^-1 A u = 2 h^2 / (1 + 2 q)
        a, b = lineup
        ra, rb = inv[a], inv[b]
        q = ra[a] + rb[b] - 2 * ra[b]
        f = 2.0 / (1.0 + 2.0 * q)
        for (i, j), w, v in zip(pairs, weights, var, strict=True):
            h = ra[i] - ra[j] - rb[i] + rb[j]
            total += w * (1.0 - math.sqrt(max(v - f * h * h, 0.0) / v))
        return total
    c = -1.0 / (k - 1)
    sub = [[inv[i][j] for j in lineup] for i in lineup]
    # S = I + A P_LL A', A = the set's design rows (a[s][t] = 1 if s == t else c)
    col = [sum(sub[t][u] for t in range(k)) for u in range(k)]
    ap = [[sub[s][u] + c * (col[u] - sub[s][u]) for u in range(k)] for s in range(k)]
    s_mat = []
    for s in range(k):
        row_sum = sum(ap[s])
        s_mat.append([(1.0 if s == u else 0.0) + ap[s][u] + c * (row_sum - ap[s][u])
                      for u in range(k)])
    s_inv = invert(s_mat)
    rows = [inv[li] for li in lineup]
    for (i, j), w, v in zip(pairs, weights, var, strict=True):
        u = [r[i] - r[j] for r in rows]
        su = sum(u)
        g = [u[s] + c * (su - u[s]) for s in range(k)]
        delta = 0.0
        for s in range(k):
            gs, si = g[s], s_inv[s]
            for t in range(k):
                delta += gs * si[t] * g[t]
        total += w * (1.0 - math.sqrt(max(v - delta, 0.0) / v))
    return total


def _apply(inv: list[list[float]], lineup: Sequence[int]) -> list[list[float]]:
    """P after one more set of ``lineup``: P - (P A') S^-1 (A P)."""
    pa, s_inv = _set_update(inv, lineup)
    k, n = len(lineup), len(inv)
    left = [[sum(pa[r][s] * s_inv[s][t] for s in range(k)) for t in range(k)]
            for r in range(n)]
    return [[inv[r][q] - sum(left[r][t] * pa[q][t] for t in range(k)) for q in range(n)]
            for r in range(n)]


def _weighted_pairs(st: Strengths, inv: list[list[float]], top: int
                    ) -> tuple[list[tuple[int, int]], list[float]]:
    out = []
    for a, b in pairs_to_separate(st, top):
        i, j = st.index(a), st.index(b)
        v = (inv[i][i] + inv[j][j] - 2 * inv[i][j]) * st.tau2
        d = st.theta[i] - st.theta[j]
        w = _phi(d / math.sqrt(v)) if v > 0 else 0.0
        out.append((w, i, j))
    out.sort(key=lambda t: (-t[0], t[1], t[2]))
    out = [t for t in out[:MAX_PAIRS] if t[0] > 1e-6]
    return [(i, j) for _, i, j in out], [w for w, _, _ in out]


def _candidates(pool: Sequence[int], table: int, must: int | None,
                allowed: Callable[[tuple[int, ...]], bool]) -> list[tuple[int, ...]]:
    """Lineups (sorted indices) of ``table`` entries from the head of ``pool`` (most
    involved first), with ``must`` in each if given: as many of the pool as keep
    the list within MAX_CANDIDATES."""
    rest = [p for p in pool if p != must]
    need = table - (1 if must is not None else 0)
    size = min(len(rest), need)
    while size < len(rest) and math.comb(size + 1, need) <= MAX_CANDIDATES:
        size += 1
    out = []
    for combo in itertools.combinations(rest[:size], need):
        lineup = tuple(sorted(combo + ((must,) if must is not None else ())))
        if allowed(lineup):
            out.append(lineup)
    return out


def deficits(counts: Mapping[str, int], entries: Sequence[str], table: int, per_set: int,
             *, min_share: float, warmup: int) -> dict[str, int]:
    """Sets each of ``entries`` needs to reach its minimum: ``warmup`` sets, and
    ``min_share`` of the games it would have played under a round-robin (k/n of the
    games played so far at this table size, ``counts``: games per entry)."""
    n = len(entries)
    if n < table:
        return {}
    games = sum(counts.get(e, 0) for e in entries) / table
    fair = games * table / n
    out = {}
    for e in sorted(entries):
        want = max(warmup * per_set, min_share * fair)
        short = want - counts.get(e, 0)
        if short > 1e-9:
            out[e] = math.ceil(short / per_set - 1e-9)
    return out


def choose(st: Strengths, table: int, sets: int, *, top: int,
           counts: Mapping[str, int] | None = None, per_set: int = 1,
           min_share: float = 0.0, warmup: int = 0, seed: int = 0,
           allowed: Callable[[tuple[str, ...]], bool] | None = None
           ) -> list[tuple[str, ...]]:
    """The next ``sets`` lineups (sorted tuples of entries) to play a set of, at a
    ``table``-seat table, among ``st.entries``: first the warm-up of entries with
    fewer than ``warmup`` sets (random lineups, from ``seed``), then one set for
    each set an entry is short of its minimum share (the most useful lineup holding
    it), then the most useful lineups (see the module docstring).  ``counts``: games
    each entry has played at this table size; ``per_set``: games in a set;
    ``allowed``: whether a lineup may be played (one author's entries apart)."""
    names = st.entries
    if len(names) < table or sets <= 0:
        return []
    ok = allowed or (lambda _: True)

    def ok_idx(lineup: tuple[int, ...]) -> bool:
        return ok(tuple(names[i] for i in lineup))

    counts = dict(counts or {})
    chosen: list[tuple[int, ...]] = []
    inv = [list(r) for r in st.inv]

    def take(lineup: tuple[int, ...]) -> None:
        nonlocal inv
        chosen.append(lineup)
        inv = _apply(inv, lineup)
        for i in lineup:
            counts[names[i]] = counts.get(names[i], 0) + per_set

    # The warm-up: entries with fewer than `warmup` sets, in random lineups.
    rng = random.Random(seed)
    while len(chosen) < sets:
        cold = [i for i, e in enumerate(names) if counts.get(e, 0) < warmup * per_set]
        if not cold:
            break
        rng.shuffle(cold)
        lineup = _fill(cold[0], cold[1:], list(range(len(names))), table, rng, ok_idx)
        if lineup is None:
            break
        take(lineup)
    # The minimum share.
    while len(chosen) < sets:
        short = deficits(counts, names, table, per_set, min_share=min_share, warmup=0)
        if not short:
            break
        e = max(short, key=lambda x: (short[x], -names.index(x)))  # most short, then name
        best = _best(st, inv, table, top, ok_idx, must=names.index(e))
        if best is None:
            break
        take(best)
    while len(chosen) < sets:
        best = _best(st, inv, table, top, ok_idx, must=None)
        if best is None:
            break
        take(best)
    return [tuple(names[i] for i in lineup) for lineup in chosen]


def _fill(first: int, cold: list[int], everyone: list[int], table: int, rng: random.Random,
          ok: Callable[[tuple[int, ...]], bool]) -> tuple[int, ...] | None:
    """A lineup holding ``first``, filled from ``cold`` first, then from anyone else
    at random; None if no allowed lineup holds it."""
    rest = [e for e in everyone if e != first and e not in cold]
    rng.shuffle(rest)
    lineup = [first]
    for o in [*cold, *rest]:
        if len(lineup) == table:
            break
        if o not in lineup and ok(tuple(sorted([*lineup, o]))):
            lineup.append(o)
    if len(lineup) == table:
        return tuple(sorted(lineup))
    for combo in itertools.combinations([o for o in everyone if o != first], table - 1):
        cand = tuple(sorted((first, *combo)))
        if ok(cand):
            return cand
    return None


def _best(st: Strengths, inv: list[list[float]], table: int, top: int,
          ok: Callable[[tuple[int, ...]], bool], must: int | None) -> tuple[int, ...] | None:
    pairs, weights = _weighted_pairs(st, inv, top)
    involve = [0.0] * len(st.entries)
    for (i, j), w in zip(pairs, weights, strict=True):
        involve[i] += w
        involve[j] += w
    # The least known first among the equally involved (then by name).
    pool = sorted(range(len(st.entries)), key=lambda i: (-involve[i], -inv[i][i], i))
    cands = _candidates(pool, table, must, ok)
    if not cands:
        return None
    if not pairs:  # nothing left to separate: spread the games (the least known)
        return min(cands, key=lambda c: (-sum(inv[i][i] for i in c), c))
    var = [inv[i][i] + inv[j][j] - 2 * inv[i][j] for i, j in pairs]
    scored = [(_shrink(inv, c, pairs, weights, var), c) for c in cands]
    return max(scored, key=lambda t: (t[0], [-i for i in t[1]]))[1]
