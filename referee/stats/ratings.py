"""Ratings fitted in one batch over every game: Plackett-Luce over finishing orders
(at 2 seats that is Bradley-Terry), with 95 % intervals from a bootstrap over deals.

Model: bot i has strength g_i > 0; a game's finishing order is drawn by picking the
winner among the seats with probability g_i / (sum of the g of the seats), then
second place among the rest in the same way, and so on (at 2 seats: P(i beats j) =
g_i / (g_i + g_j), Bradley-Terry).  A shared place counts as each of its orders
with equal weight (a tie of two is half a win each way).  The rating shown is
``400 log10 g``, shifted so that the bots' mean is 0: the logistic Elo scale, so at
2 seats a difference of 100 means the stronger bot wins 64 % of the games.

Fit: Newton's method on the log-strengths, damped so that no step lowers the
likelihood (the log-likelihood is concave).  Hunter's MM algorithm ("MM algorithms
for generalized Bradley-Terry models", Annals of Statistics 2004, section 5),

    g_i <- W_i / sum over the stages i took part in of 1 / (sum of g still in play)

reaches the same maximum (the tests check one against the other) but needs
hundreds of steps where Newton needs a handful.  A prior of one virtual win and one
virtual loss against a reference bot of strength 1 keeps every bot's maximum finite
(a bot that never won still gets a rating) and the fit unique.

The games are aggregated before fitting (how often each bot won a stage, how often
each set of bots was still in play), so the order of the games cannot matter: the
ratings are a function of the multiset of games.  The bootstrap draws deals with
replacement (every game of a duplicated deal goes together, as the standard errors
of the standings do) from a ``random.Random`` seeded with a digest of the games
themselves: the same games give the same intervals, in any order.

Luck-adjusted ratings (``rate(..., scores="adjusted")``).  A luck-adjusted game
(``referee.play.luck``) has no finishing order, only each seat's adjusted *share* of
opponents finished ahead of (an unbiased estimate of the raw share, less spread).  So
such games are fitted by the pairwise model on shares: every pair of seats at a game
of k seats is one Bradley-Terry comparison of weight 2/k (the k - 1 comparisons a
finishing order makes, as Plackett-Luce counts them), and a bot's wins are its
share times the k - 1 opponents, times 2/k -- at 2 seats exactly Bradley-Terry with
the adjusted share as the win, at more seats a composite (pairwise) likelihood.  A
game with no adjusted share (no record) counts its raw share.  A game's adjusted
shares are first shifted alike so that they add up to k/2, as raw shares do (the
shift is minus the mean of the seats' corrections, itself of mean 0: still
unbiased); else the wins would not add up to the comparisons and the fit would
have no maximum.  An adjusted share can
stray below 0 or above 1 in one game; a bot's summed wins are held within 0 and its
comparisons, so that the fit always has a finite maximum.  The same games with
their raw shares give, at 2 seats, exactly the raw ratings.

Pure: no I/O, no clock, no global randomness.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: Virtual wins and losses of every bot against a reference of strength 1.
PRIOR = 1.0
#: The log-strengths are kept within +-THETA_BOUND (+-5,212 Elo): where the data
#: hold no finite maximum (a group of bots handed fewer wins than the games among
#: them -- adjusted shares held at 0 can do it in a bootstrap resample), the fit
#: stops at the bound instead of running away.
THETA_BOUND = 30.0
RESAMPLES = 200
#: What a rating is fitted to: finishing orders, or luck-adjusted shares.
SCORE_KINDS = ("raw", "adjusted")


@dataclass(frozen=True)
class RatedGame:
    """One game's finishing order: ``places[i]`` is the place of ``bots[i]`` (1 is
    first; equal places are shared)."""

    deal: int
    bots: tuple[str, ...]
    places: tuple[int, ...]
    #: Each seat's luck-adjusted share (``referee.play.luck``), if known: what an
    #: adjusted rating is fitted to (else the share the places give).
    shares: tuple[float, ...] | None = None

    def share_of(self, i: int) -> float:
        """Seat ``i``'s share: adjusted if known, else from the places."""
        if self.shares is not None:
            return self.shares[i]
        mine = self.places[i]
        pts = sum(1.0 if p > mine else 0.5 if p == mine else 0.0
                  for j, p in enumerate(self.places) if j != i)
        return pts / (len(self.places) - 1)


@dataclass
class _Tally:
    """Sufficient statistics of a set of games: stage wins per bot and how often each
    set of bots was still in play at a stage (with fractional weights for ties)."""

    wins: dict[str, float]
    stages: dict[frozenset[str], float]

    def add(self, other: _Tally, times: int = 1) -> None:
        for b, w in other.wins.items():
            self.wins[b] = self.wins.get(b, 0.0) + times * w
        for r, c in other.stages.items():
            self.stages[r] = self.stages.get(r, 0.0) + times * c


def _orders(game: RatedGame) -> list[tuple[float, list[str]]]:
    """The finishing orders a game stands for, with weights adding up to 1."""
    groups: dict[int, list[str]] = defaultdict(list)
    for b, p in zip(game.bots, game.places, strict=True):
        groups[p].append(b)
    ordered = [sorted(groups[p]) for p in sorted(groups)]
    choices = [list(itertools.permutations(g)) for g in ordered]
    weight = 1.0 / math.prod(len(c) for c in choices)
    return [(weight, [b for part in combo for b in part]) for combo in itertools.product(*choices)]


def _key(g: RatedGame) -> tuple[int, tuple[str, ...], tuple[int, ...], tuple[float, ...]]:
    return (g.deal, g.bots, g.places, g.shares or ())


def _held_shares(shares: Sequence[float]) -> list[float]:
    """``shares`` shifted by one amount and held within 0 and 1 so that they add up
    to k / 2, as a game's raw shares do (the shift found by bisection: the held sum
    grows with it; 100 halvings reach the last bit)."""
    k = len(shares)
    target = k / 2
    lo, hi = -1.0 - max(shares), 1.0 - min(shares)  # held sums 0 and k

    def held(shift: float) -> list[float]:
        return [min(max(x + shift, 0.0), 1.0) for x in shares]

    for _ in range(100):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if math.fsum(held(mid)) < target:
            lo = mid
        else:
            hi = mid
    return held(hi)


def _tally(games: Iterable[RatedGame], scores: str = "raw") -> _Tally:
    """Sums taken in a canonical order of the games, so that not even the rounding
    of the sums depends on the order the games came in.  ``scores="adjusted"``: the
    pairwise comparisons on shares (the module's docstring)."""
    if scores not in SCORE_KINDS:
        raise ValueError(f"unknown scores {scores!r}: choose from {', '.join(SCORE_KINDS)}")
    t = _Tally({}, {})
    for g in sorted(games, key=_key):
        if scores == "adjusted":
            k = len(g.bots)
            if k < 2:
                continue
            w = 2.0 / k
            shares = [g.share_of(i) for i in range(k)]
            # Each share held within 0 and 1, game by game, and the game's shares
            # shifted together so that, held, they add up to k / 2 as raw shares do
            # (_held_shares): an adjusted share can stray below 0 (a seat's luck was
            # good and it still lost), and summed over games such shares left two
            # weak bots fewer wins than the games between them hand out -- then the
            # likelihood grows without bound as both sink together, and the fit ran
            # away (a tournament's standings failed with a ZeroDivisionError).  At 2
            # seats the pair still adds up to 1.
            for i, (b, held) in enumerate(zip(g.bots, _held_shares(shares), strict=True)):
                t.wins[b] = t.wins.get(b, 0.0) + w * (k - 1) * held
                for c in g.bots[i + 1:]:
                    pair = frozenset((b, c))
                    t.stages[pair] = t.stages.get(pair, 0.0) + w
            continue
        for w, order in _orders(g):
            for i in range(len(order) - 1):  # the last one left is not a choice
                t.wins[order[i]] = t.wins.get(order[i], 0.0) + w
                rest = frozenset(order[i:])
                t.stages[rest] = t.stages.get(rest, 0.0) + w
    return t


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """x with a x = b, a symmetric positive semi-definite (Gaussian elimination with
    partial pivoting).  A column with no pivot left (a direction in which the
    likelihood is flat to the last bit: strengths at the bound, where the logistic
    and the softmax saturate) gets no step, instead of a division by zero."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        piv = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[piv] = m[piv], m[c]
        if m[c][c] == 0.0:
            continue
        for r in range(c + 1, n):
            f = m[r][c] / m[c][c]
            if f:
                for j in range(c, n + 1):
                    m[r][j] -= f * m[c][j]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        if m[r][r] != 0.0:
            x[r] = (m[r][n] - sum(m[r][j] * x[j] for j in range(r + 1, n))) / m[r][r]
    return x


def _softplus(t: float) -> float:
    """log(1 + e^t), without overflow for a large t."""
    return t + math.log1p(math.exp(-t)) if t > 0 else math.log1p(math.exp(t))


def _logsumexp(values: Sequence[float]) -> float:
    """log(sum(e^v)), without overflow or underflow (a trial step of the line search
    may put the log-strengths anywhere)."""
    top = max(values)
    return top + math.log(math.fsum(math.exp(v - top) for v in values))


def _softmax(values: Sequence[float]) -> list[float]:
    top = max(values)
    e = [math.exp(v - top) for v in values]
    total = math.fsum(e)
    return [v / total for v in e]


def _loglik(theta: Sequence[float], wins: Sequence[float],
            stages: Sequence[tuple[list[int], float]], prior: float) -> float:
    ll = sum(w * t for w, t in zip(wins, theta, strict=True))
    for members, c in stages:
        ll -= c * _logsumexp([theta[i] for i in members])
    return ll + sum(prior * t - 2 * prior * _softplus(t) for t in theta)


def _fit(t: _Tally, bots: Sequence[str], prior: float, tol: float = 1e-10,
         max_iter: int = 100) -> dict[str, float]:
    """The maximum of the (prior-regularised) log-likelihood over the log-strengths
    theta = log g, by Newton's method (the log-likelihood is concave; the prior
    makes it strictly so); returns theta, mean 0 over ``bots``.  The MM update of
    the module docstring reaches the same maximum, more slowly."""
    n = len(bots)
    if n == 0:  # nobody to rate (a league right after `league new`)
        return {}
    index = {b: i for i, b in enumerate(bots)}
    # Held within 0 and the bot's comparisons (adjusted shares can stray out of
    # [0, 1]; finishing orders never do): the maximum is then finite.
    present = [0.0] * n
    for r, c in sorted(t.stages.items(), key=lambda rc: sorted(rc[0])):
        for b in r:
            if b in index:
                present[index[b]] += c
    wins = [min(max(t.wins.get(b, 0.0), 0.0), present[i]) for i, b in enumerate(bots)]
    # Every stage hands out its weight in wins (a finishing order's one choice; the
    # pairwise shares of a game add up to its pairs' weight): held to 0 and above, a
    # bot's adjusted wins no longer do, and wins beyond the stages' weight pull every
    # strength up together against only the prior (a near-flat direction, in which
    # Newton's steps ran away).  Scaled back to the stages' weight.
    total, won = math.fsum(t.stages.values()), math.fsum(wins)
    if won > total > 0:
        wins = [w * total / won for w in wins]
    # A set's members in the bots' order, not the set's (that follows the strings'
    # hashes, which change with PYTHONHASHSEED): every sum below is then taken in
    # one order, and its rounding too -- the same games give the same bytes.
    stages = [(sorted(index[b] for b in r), c) for r, c in t.stages.items()]
    theta = [0.0] * n
    ll = _loglik(theta, wins, stages, prior)
    for _ in range(max_iter):
        grad = [w + prior for w in wins]
        hess = [[0.0] * n for _ in range(n)]  # minus the Hessian
        for i in range(n):
            sig = 0.5 * (1.0 + math.tanh(theta[i] / 2))  # the logistic, never overflowing
            grad[i] -= 2 * prior * sig
            hess[i][i] += 2 * prior * sig * (1 - sig)
        for members, c in stages:
            pi = _softmax([theta[i] for i in members])
            for a, i in enumerate(members):
                grad[i] -= c * pi[a]
                hess[i][i] += c * pi[a]
                for b2, j in enumerate(members):
                    hess[i][j] -= c * pi[a] * pi[b2]
        if prior == 0:
            # Without the prior only differences are identified (the Hessian has the
            # null space of shifting every theta alike): adding 1/n to every entry
            # makes it invertible and the step's mean 0, without changing the step
            # along the differences (the gradient sums to 0).
            hess = [[v + 1.0 / n for v in row] for row in hess]
        step = _solve(hess, grad)
        scale = 1.0
        while True:  # damped: never step to a lower likelihood
            cand = [min(max(x + scale * d, -THETA_BOUND), THETA_BOUND)
                    for x, d in zip(theta, step, strict=True)]
            cll = _loglik(cand, wins, stages, prior)
            if cll >= ll - 1e-12 or scale < 1e-6:
                break
            scale /= 2
        if not cll >= ll - 1e-12:  # no step up the (concave) likelihood: at its top
            break
        moved = max(abs(c - x) for c, x in zip(cand, theta, strict=True))
        theta, ll = cand, cll
        if moved < tol:
            break
    mean = sum(theta) / n if n else 0.0
    return {b: theta[index[b]] - mean for b in bots}


def _elo(log_g: float) -> float:
    return 400.0 * log_g / math.log(10.0)


def fit_plackett_luce(games: Iterable[RatedGame], bots: Sequence[str],
                      prior: float = PRIOR, scores: str = "raw") -> dict[str, float]:
    """Each bot's rating (logistic Elo scale, mean 0) fitted to all ``games`` at once
    (``scores="adjusted"``: to their luck-adjusted shares, pairwise)."""
    logs = _fit(_tally(games, scores), bots, prior)
    return {b: _elo(v) for b, v in logs.items()}


@dataclass(frozen=True)
class BatchRatings:
    """Ratings and their 95 % bootstrap intervals (2.5th and 97.5th percentiles of
    the rating over ``resamples`` resamplings of the deals)."""

    rating: dict[str, float]
    low: dict[str, float]
    high: dict[str, float]
    resamples: int
    seed: int
    scores: str = "raw"  # what they were fitted to: SCORE_KINDS


def data_seed(games: Sequence[RatedGame]) -> int:
    """A seed that depends on the games and not on their order."""
    h = hashlib.sha256()
    for line in sorted(f"{g.deal}|{','.join(g.bots)}|{','.join(map(str, g.places))}"
                       + ("" if g.shares is None else "|" + ",".join(map(repr, g.shares)))
                       for g in games):
        h.update(line.encode())
        h.update(b"\n")
    return int.from_bytes(h.digest()[:8], "big")


def _percentile(xs: Sequence[float], q: float) -> float:
    s = sorted(xs)
    pos = q * (len(s) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def rate(games: Iterable[RatedGame], bots: Sequence[str], *, resamples: int = RESAMPLES,
         prior: float = PRIOR, scores: str = "raw") -> BatchRatings:
    """Batch ratings with bootstrap intervals over deals (deterministic for the same
    games, in whatever order they come); ``scores="adjusted"``: fitted to the games'
    luck-adjusted shares (the module's docstring)."""
    games = list(games)
    by_deal: dict[int, list[RatedGame]] = defaultdict(list)
    for g in games:
        by_deal[g.deal].append(g)
    deals = sorted(by_deal)
    tallies = [_tally(by_deal[d], scores) for d in deals]
    whole = _Tally({}, {})
    for t in tallies:
        whole.add(t)
    point = {b: _elo(v) for b, v in _fit(whole, bots, prior).items()}
    seed = data_seed(games)
    rng = random.Random(seed)
    samples: dict[str, list[float]] = {b: [] for b in bots}
    # Each deal's tally as positions in two flat lists (wins per bot, counts per set
    # in play), so that a resample is summed without dictionaries.
    bot_at = {b: i for i, b in enumerate(whole.wins)}
    stage_at = {r: i for i, r in enumerate(whole.stages)}
    flat = [([(bot_at[b], w) for b, w in t.wins.items()],
             [(stage_at[r], c) for r, c in t.stages.items()]) for t in tallies]
    win_keys, stage_keys = list(whole.wins), list(whole.stages)
    if len(deals) >= 2:
        for _ in range(resamples):
            picks = Counter(rng.choices(range(len(deals)), k=len(deals)))
            wins = [0.0] * len(win_keys)
            stages = [0.0] * len(stage_keys)
            for i, times in sorted(picks.items()):
                ws, ss = flat[i]
                for j, w in ws:
                    wins[j] += times * w
                for j, c in ss:
                    stages[j] += times * c
            t = _Tally({b: w for b, w in zip(win_keys, wins, strict=True) if w},
                       {r: c for r, c in zip(stage_keys, stages, strict=True) if c})
            for b, v in _fit(t, bots, prior, tol=1e-8).items():
                samples[b].append(_elo(v))
    if samples and all(samples.values()):
        low = {b: _percentile(v, 0.025) for b, v in samples.items()}
        high = {b: _percentile(v, 0.975) for b, v in samples.items()}
    else:
        low, high = dict(point), dict(point)
    return BatchRatings(point, low, high, resamples if len(deals) >= 2 else 0, seed, scores)
