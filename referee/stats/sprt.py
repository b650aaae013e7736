"""The generalised sequential probability ratio test (GSPRT) on duplicate sets, and
the fixed-sample figures (mean with its 95 % interval, Elo, LOS).

The unit of evidence is the **duplicate set**: every game of one deal (at 2 seats
NEW and OLD with the seats swapped; at k seats NEW and OLD each in the same seat
against the same field, in every seating of the deal).  Its games share the cards,
so they are not independent; the sets are.  Each set is reduced to one **set
score** ``x`` in [0, 1]:

    x = (1 + mean over the set's games of (s_NEW - s_OLD)) / 2

where ``s`` is a game's share of the opponents a bot finished ahead of (place
points / (k - 1): 1 for a win at 2 seats, 1/2 for a shared place).  At 2 seats this
is NEW's score in the pair of games (0, 1/4, ... 1: the pentanomial of fishtest,
with ``x`` the pair score / 2); equal bots have E[x] = 1/2 at any table size.

The test (fishtest's ``LLRcalc.LLR_logistic``, generalised from five values to any
finite set of values): H0 says E[x] = s0, H1 says E[x] = s1, with s = L(elo) =
1 / (1 + 10^(-elo/400)), the logistic Elo scale.  At 2 seats this *is* the Elo
difference of NEW over OLD (on pairs of games).  At k seats it is the Elo-equivalent
of the score difference against the field: ``elo = 400 log10(x / (1 - x))``, so 10
Elo means NEW beats about 1.4 % more of the field's seats than OLD does.  Under each
hypothesis the distribution of x is the maximum-likelihood one with that mean given
the observed frequencies (a multinomial over the values seen, Proposition 1.1 of
fishtest's support_MLE_multinomial), and

    LLR = N * sum_i p_i log(q1_i / q0_i)

Stop at LLR >= log((1 - beta) / alpha) (accept H1) or LLR <= log(beta / (1 -
alpha)) (accept H0): Wald's bounds.  As fishtest does, a value of the support that
has not been seen counts 1e-3 times (``regularize``); the support is the values seen
plus the extremes 0 and 1, so the constrained maximum always exists.

Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

#: What an SPRT accepted: H1 (NEW is better by elo1), H0 (it is not).
Verdict: TypeAlias = Literal["H0", "H1"]
#: The set scores a match reads: luck-adjusted or raw (``referee.play.luck``).
Scores: TypeAlias = Literal["adjusted", "raw"]
#: A JSON value (``MatchSummary.to_json``).
Json: TypeAlias = "None | bool | int | float | str | list[Json] | dict[str, Json]"

Z95 = 1.959964
#: The set scores of a pair of games at 2 seats: NEW scored 0, 1/2, 1, 3/2 or 2.
PENTANOMIAL = (0.0, 0.25, 0.5, 0.75, 1.0)
#: Weight of a value of the support that was not observed (fishtest's regularize).
EPSILON = 1e-3


def score_of_elo(elo: float) -> float:
    """The expected score of a logistic Elo difference."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def elo_of_score(score: float) -> float:
    """The logistic Elo difference of a score in (0, 1); +-inf at 0 and 1."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def _secular(a: Sequence[float], p: Sequence[float], start: float = 0.0) -> float:
    """The root x of sum_i p_i a_i / (1 + x a_i) = 0, with 1 + x a_i > 0 for all i
    (min a < 0 < max a).  The function is decreasing in x on that interval: Newton's
    method, kept inside the bracket by bisection."""
    lo, hi = -1.0 / max(a), -1.0 / min(a)
    eps = 1e-12 * (hi - lo)
    lo, hi = lo + eps, hi - eps
    x = start if lo < start < hi else 0.0
    for _ in range(200):
        f = 0.0
        df = 0.0
        for ai, pi in zip(a, p, strict=True):
            d = 1.0 + x * ai
            f += pi * ai / d
            df -= pi * ai * ai / (d * d)
        if f > 0:
            lo = x
        else:
            hi = x
        step = x - f / df if df < 0 else (lo + hi) / 2
        if not lo < step < hi:
            step = (lo + hi) / 2
        if abs(step - x) <= 1e-15 * max(1.0, abs(x)) or hi - lo <= 1e-15:
            return step
        x = step
    return x


def mle_expected(values: Sequence[float], probs: Sequence[float], s: float) -> list[float]:
    """The distribution on ``values`` with mean ``s`` closest in likelihood to the
    observed ``probs``: q_i = p_i / (1 + x (v_i - s))."""
    return _mle(values, probs, s)[0]


def _mle(values: Sequence[float], probs: Sequence[float], s: float,
         start: float = 0.0) -> tuple[list[float], float]:
    a = [v - s for v in values]
    x = _secular(a, probs, start)
    return [pi / (1.0 + x * ai) for ai, pi in zip(a, probs, strict=True)], x


def _support(counts: Mapping[float, float], s0: float, s1: float,
             extremes: bool = True) -> tuple[list[float], list[float]]:
    """The observed values plus 0 and 1, with counts; unseen ones count EPSILON.
    Without ``extremes``, 0 or 1 only when the values seen do not reach past s0 and
    s1 on that side (the constrained maximum needs a value on either side)."""
    values = set(counts)
    if extremes or not values or min(values) >= min(s0, s1):
        values.add(0.0)
    if extremes or max(values) <= max(s0, s1):
        values.add(1.0)
    ordered = sorted(values)
    return ordered, [counts.get(v, 0.0) or EPSILON for v in ordered]


def gsprt_llr(counts: Mapping[float, float], s0: float, s1: float,
              extremes: bool = True) -> float:
    """The generalised log-likelihood ratio of E[x] = s1 against E[x] = s0, given how
    often each value of x was observed (a value with count 0 is part of the support
    and counts EPSILON, as in fishtest; 0 and 1 are in the support unless
    ``extremes`` is False: ``bench/sprt.py --no-extremes`` measures the difference)."""
    return _llr(counts, s0, s1, extremes=extremes)[0]


def _llr(counts: Mapping[float, float], s0: float, s1: float,
         start: tuple[float, float] = (0.0, 0.0),
         extremes: bool = True) -> tuple[float, tuple[float, float]]:
    """The LLR, and the roots of the two secular equations (a good start for the
    next set's: they move little from one set to the next)."""
    values, weights = _support(counts, s0, s1, extremes)
    n = sum(weights)
    probs = [w / n for w in weights]
    q0, x0 = _mle(values, probs, s0, start[0])
    q1, x1 = _mle(values, probs, s1, start[1])
    llr = n * sum(p * (math.log(b) - math.log(a)) for p, a, b in zip(probs, q0, q1, strict=True))
    return llr, (x0, x1)


@dataclass(frozen=True)
class Sprt:
    """The test's parameters: H0 elo = elo0 against H1 elo = elo1 (logistic Elo of
    the set score, see the module docstring), with error rates alpha (accepting H1
    when H0 holds) and beta (accepting H0 when H1 holds)."""

    elo0: float = 0.0
    elo1: float = 10.0
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1 or not 0 < self.beta < 1 or self.alpha + self.beta >= 1:
            raise ValueError("alpha and beta must lie between 0 and 1 and add up to less "
                             f"than 1, not alpha={self.alpha}, beta={self.beta}")
        if not self.elo0 < self.elo1:
            raise ValueError(f"elo0 must be below elo1, not elo0={self.elo0}, elo1={self.elo1}")

    @property
    def lower(self) -> float:
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        return math.log((1 - self.beta) / self.alpha)

    @property
    def s0(self) -> float:
        return score_of_elo(self.elo0)

    @property
    def s1(self) -> float:
        return score_of_elo(self.elo1)

    @classmethod
    def parse(cls, text: str) -> Sprt:
        """``elo0=0,elo1=10,alpha=0.05,beta=0.05`` (any subset, any order)."""
        values: dict[str, float] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            key, sep, val = part.partition("=")
            key = key.strip()
            if not sep or key not in ("elo0", "elo1", "alpha", "beta"):
                raise ValueError(f"{part!r} is not one of elo0=, elo1=, alpha=, beta= "
                                 "(e.g. elo0=0,elo1=10,alpha=0.05,beta=0.05)")
            try:
                values[key] = float(val)
            except ValueError:
                raise ValueError(f"{key}={val.strip()!r} is not a number") from None
        return cls(**values)

    def to_dict(self) -> dict[str, float]:
        return {"elo0": self.elo0, "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta}


@dataclass
class SprtState:
    """The test after some sets: the frequencies of the set scores, the LLR and, once
    a bound is crossed, the verdict (the sets after it do not count)."""

    test: Sprt
    counts: dict[float, int] = field(default_factory=dict)
    sets: int = 0
    llr: float = 0.0
    verdict: Verdict | None = None  # "H1" (NEW is better), "H0" (it is not)
    extremes: bool = True  # 0 and 1 always in the support (see gsprt_llr)
    _roots: tuple[float, float] = (0.0, 0.0)

    @classmethod
    def over(cls, test: Sprt, support: Iterable[float] = (), extremes: bool = True) -> SprtState:
        """A fresh test whose support holds ``support`` from the start (at 2 seats the
        five pentanomial values, as fishtest has them)."""
        return cls(test, {round(v, 9): 0 for v in support}, extremes=extremes)

    def add(self, x: float) -> None:
        if self.verdict is not None:
            return
        key = round(x, 9)
        self.counts[key] = self.counts.get(key, 0) + 1
        self.sets += 1
        self.llr, self._roots = _llr(self.counts, self.test.s0, self.test.s1, self._roots,
                                     self.extremes)
        if self.llr >= self.test.upper:
            self.verdict = "H1"
        elif self.llr <= self.test.lower:
            self.verdict = "H0"


def run_sprt(test: Sprt, scores: Iterable[float], support: Iterable[float] = ()) -> SprtState:
    """The test over set scores taken in order, stopped at the first bound crossed."""
    state = SprtState.over(test, support)
    for x in scores:
        state.add(x)
        if state.verdict:
            break
    return state


def mean_interval(xs: Sequence[float]) -> tuple[float | None, float | None]:
    """Mean and half-width of its 95 % interval (normal approximation) over
    independent units; no interval below 2 units."""
    n = len(xs)
    if n == 0:
        return None, None
    m = sum(xs) / n
    if n < 2:
        return m, None
    var = sum((x - m) ** 2 for x in xs) / (n - 1)
    return m, Z95 * math.sqrt(var / n)


def los(mean: float, half_width: float | None, ref: float = 0.5) -> float | None:
    """Likelihood of superiority: P(true mean > ref) under the normal approximation."""
    if half_width is None:
        return None
    se = half_width / Z95
    if se == 0:
        return 1.0 if mean > ref else 0.0 if mean < ref else 0.5
    return 0.5 * (1.0 + math.erf((mean - ref) / se / math.sqrt(2.0)))


@dataclass(frozen=True)
class SetSummary:
    """One duplicate set, reduced: its number, set score x, mean place of OLD minus
    mean place of NEW (positive: NEW finished higher), its games, and its faults by
    NEW, OLD and the field's bots."""

    index: int
    score: float
    place_diff: float
    games: int
    faults_new: int = 0
    faults_old: int = 0
    faults_field: int = 0
    #: The raw set score, when ``score`` is luck-adjusted (``referee.play.luck``).
    raw: float | None = None

    @property
    def faulty(self) -> bool:
        return bool(self.faults_new or self.faults_old or self.faults_field)


def set_score(new_shares: Sequence[float], old_shares: Sequence[float]) -> float:
    """x of a set from each game's share of opponents beaten by NEW and by OLD."""
    diff = sum(new_shares) / len(new_shares) - sum(old_shares) / len(old_shares)
    return (1.0 + diff) / 2.0


@dataclass(frozen=True)
class SprtOutcome:
    """Where a sequential test stands: its parameters, the LLR, and the verdict once
    a bound is crossed (None: none yet)."""

    test: Sprt
    llr: float
    verdict: Verdict | None = None

    @property
    def lower(self) -> float:
        return self.test.lower

    @property
    def upper(self) -> float:
        return self.test.upper

    def to_json(self) -> dict[str, Json]:
        return {**self.test.to_dict(), "llr": _finite(self.llr), "lower": self.lower,
                "upper": self.upper, "verdict": self.verdict}


@dataclass(frozen=True)
class FaultCounts:
    """Faults over a match's sets, by whose: NEW's, OLD's, the field's bots'."""

    new: int = 0
    old: int = 0
    field: int = 0

    def to_json(self) -> dict[str, Json]:
        return {"new": self.new, "old": self.old, "field": self.field}


#: The pentanomial's five counts: sets where NEW scored 0, 1/2, 1, 3/2, 2 of 2 games.
Pentanomial: TypeAlias = tuple[int, int, int, int, int]


@dataclass(frozen=True)
class MatchSummary:
    """Every figure of a match (``summarize``; ``referee match`` prints it, ``--json``
    prints ``to_json``).  Over the sets the figures count: in set order, up to the
    SPRT's verdict; the sets played past it are ``sets_after_verdict``.  ``score`` is
    the mean set score (luck-adjusted or raw: ``scores``), ``elo`` its logistic Elo
    (+-inf when every set was won or lost) with its 95 % ``elo_interval``; the
    ``*_ci`` are half-widths of 95 % intervals (None below 2 sets); with adjusted
    scores ``raw_score`` is the raw one beside it.  ``pentanomial`` at 2 seats only
    (counted from raw scores); ``sprt`` only for a match stopped by a test."""

    seats: int
    sets: int
    games: int
    sets_after_verdict: int = 0
    score: float | None = None
    score_ci: float | None = None
    elo: float | None = None
    elo_interval: tuple[float, float] | None = None
    score_diff: float | None = None
    score_diff_ci: float | None = None
    place_diff: float | None = None
    place_diff_ci: float | None = None
    los: float | None = None
    scores: Scores = "raw"
    raw_score: float | None = None
    raw_score_ci: float | None = None
    pentanomial: Pentanomial | None = None
    faulty_sets: int = 0
    faults: FaultCounts = FaultCounts()
    sprt: SprtOutcome | None = None

    @property
    def verdict(self) -> Verdict | None:
        return self.sprt.verdict if self.sprt else None

    def to_json(self) -> dict[str, Json]:
        """The summary as JSON (what ``referee match --json`` prints, after the
        match's names): the keys and their order as they always were (a key without
        a value in this match is left out: ``elo``, ``score_diff``, ``place_diff``,
        ``los`` and their intervals before the first set, ``raw_score`` with raw
        scores, ``pentanomial`` beyond 2 seats, ``sprt`` without a test).  JSON has
        no infinity: an Elo of +-inf is null."""
        out: dict[str, Json] = {
            "seats": self.seats, "sets": self.sets, "games": self.games,
            "sets_after_verdict": self.sets_after_verdict,
            "score": self.score, "score_ci": self.score_ci,
        }
        if self.score is not None:
            out["elo"] = _finite(self.elo)
            if self.elo_interval is not None:
                out["elo_interval"] = [_finite(x) for x in self.elo_interval]
            out["score_diff"] = self.score_diff
            out["score_diff_ci"] = self.score_diff_ci
            out["place_diff"] = self.place_diff
            out["place_diff_ci"] = self.place_diff_ci
            out["los"] = self.los
        out["scores"] = self.scores
        if self.scores == "adjusted":
            out["raw_score"] = self.raw_score
            out["raw_score_ci"] = self.raw_score_ci
        if self.pentanomial is not None:
            out["pentanomial"] = list(self.pentanomial)
        out["faulty_sets"] = self.faulty_sets
        out["faults"] = self.faults.to_json()
        if self.sprt is not None:
            out["sprt"] = self.sprt.to_json()
        return out


def _finite(x: float | None) -> float | None:
    return x if x is None or math.isfinite(x) else None


def summarize(sets: Sequence[SetSummary], test: Sprt | None, seats: int) -> MatchSummary:
    """Every figure of a match over ``sets`` (in set order; an SPRT stops at its
    bound, and the sets after it are left out and counted apart).  Luck-adjusted set
    scores (``SetSummary.raw`` set) take any value: the test's support is then the
    values seen (and 0 and 1), and the raw scores' mean and pentanomial are given
    beside them."""
    adjusted = any(s.raw is not None for s in sets)
    support = PENTANOMIAL if seats == 2 and not adjusted else ()
    state = run_sprt(test, (s.score for s in sets), support) if test else None
    used = list(sets[: state.sets]) if state else list(sets)
    m, hw = mean_interval([s.score for s in used])
    elo = score_diff = score_diff_ci = pm = phw = sup = None
    interval: tuple[float, float] | None = None
    if m is not None:
        elo, score_diff = elo_of_score(m), 2 * m - 1
        if hw is not None:
            interval = (elo_of_score(m - hw), elo_of_score(m + hw))
            score_diff_ci = 2 * hw
        pm, phw = mean_interval([s.place_diff for s in used])
        sup = los(m, hw)
    rm = rhw = None
    if adjusted:
        rm, rhw = mean_interval([s.score if s.raw is None else s.raw for s in used])
    penta: Pentanomial | None = None
    if seats == 2:
        # The pentanomial: how many sets NEW scored 0, 1/2, 1, 3/2, 2 in (2 games).
        counts = [0] * 5
        for s in used:
            x = s.score if s.raw is None else s.raw
            if s.games == 2 and 0 <= round(x * 4) <= 4:
                counts[round(x * 4)] += 1
        penta = (counts[0], counts[1], counts[2], counts[3], counts[4])
    return MatchSummary(
        seats=seats, sets=len(used), games=sum(s.games for s in used),
        sets_after_verdict=len(sets) - len(used), score=m, score_ci=hw,
        scores="adjusted" if adjusted else "raw", raw_score=rm, raw_score_ci=rhw,
        pentanomial=penta, faulty_sets=sum(s.faulty for s in used),
        faults=FaultCounts(new=sum(s.faults_new for s in used),
                           old=sum(s.faults_old for s in used),
                           field=sum(s.faults_field for s in used)),
        elo=elo, elo_interval=interval, score_diff=score_diff, score_diff_ci=score_diff_ci,
        place_diff=pm, place_diff_ci=phw, los=sup,
        sprt=SprtOutcome(test, state.llr, state.verdict) if test and state else None)
