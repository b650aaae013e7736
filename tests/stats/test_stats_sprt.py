"""The GSPRT and the fixed-sample figures (referee.stats.sprt)."""

from __future__ import annotations

import json
import math
import random

import pytest

from referee.stats.sprt import (
    PENTANOMIAL,
    FaultCounts,
    SetSummary,
    Sprt,
    elo_of_score,
    gsprt_llr,
    los,
    mean_interval,
    mle_expected,
    run_sprt,
    score_of_elo,
    summarize,
)


def _penta(results: list[int]) -> dict[float, float]:
    n = len(results)
    return {i / (n - 1): r for i, r in enumerate(results)}


# Reference figures: fishtest's server/fishtest/stats/LLRcalc.py, LLR_logistic(elo0,
# elo1, results) (scipy's brentq for the secular equation), run on these inputs.
FISHTEST = [
    (0, 10, [10, 20, 40, 25, 5], -0.43748623289102595),
    (0, 5, [1000, 3000, 5000, 3300, 1100], 8.059295347882328),
    (-3, 1, [0, 120, 300, 130, 0], 0.6666425487860139),  # unseen extremes: 1e-3 each
    (0, 10, [30, 70, 30], -0.11658770986327394),  # trinomial (single games)
]


@pytest.mark.parametrize(("elo0", "elo1", "results", "expected"), FISHTEST)
def test_llr_matches_fishtest(elo0: float, elo1: float, results: list[int],
                              expected: float) -> None:
    llr = gsprt_llr(_penta(results), score_of_elo(elo0), score_of_elo(elo1))
    assert llr == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_llr_of_two_values_is_the_binomial_ratio_by_hand() -> None:
    # Only 0 and 1 seen: the distribution with mean s is (1 - s, s), so the LLR is
    # n1 log(s1/s0) + n0 log((1-s1)/(1-s0)).  60 wins, 40 losses, s0 = 0.5, s1 = 0.6:
    # 60 log 1.2 + 40 log 0.8 = 10.939 - 8.926 = 2.0136
    llr = gsprt_llr({0.0: 40, 1.0: 60}, 0.5, 0.6)
    assert llr == pytest.approx(60 * math.log(1.2) + 40 * math.log(0.8), rel=1e-12)
    assert llr == pytest.approx(2.0136, abs=1e-4)


def test_mle_has_the_asked_mean_and_is_a_distribution() -> None:
    values = [0.0, 0.25, 0.5, 0.75, 1.0]
    probs = [0.1, 0.2, 0.4, 0.2, 0.1]
    for s in (0.3, 0.5, 0.514, 0.7):
        q = mle_expected(values, probs, s)
        assert sum(q) == pytest.approx(1.0, abs=1e-9)
        assert sum(v * p for v, p in zip(values, q, strict=True)) == pytest.approx(s, abs=1e-9)
        assert all(p > 0 for p in q)
    # the observed mean is its own MLE
    assert mle_expected(values, probs, 0.5) == pytest.approx(probs)


def test_wald_bounds() -> None:
    t = Sprt(0, 10, 0.05, 0.05)
    assert t.upper == pytest.approx(math.log(19)) and t.lower == pytest.approx(-math.log(19))
    t = Sprt(0, 5, 0.05, 0.10)
    assert t.upper == pytest.approx(math.log(0.9 / 0.05))
    assert t.lower == pytest.approx(math.log(0.1 / 0.95))


def test_sprt_parse_and_refusals() -> None:
    assert Sprt.parse("elo0=-1, elo1=4,alpha=0.1") == Sprt(-1, 4, 0.1, 0.05)
    assert Sprt.parse("") == Sprt()
    for bad, words in (("elo0=5,elo1=1", "below"), ("alpha=2", "alpha"), ("elo=3", "elo0="),
                       ("elo1=x", "not a number")):
        with pytest.raises(ValueError, match=words):
            Sprt.parse(bad)


def test_elo_and_score_are_inverse() -> None:
    for e in (-300, -10, 0, 7.5, 200):
        assert elo_of_score(score_of_elo(e)) == pytest.approx(e)
    assert score_of_elo(0) == 0.5
    assert elo_of_score(1.0) == math.inf and elo_of_score(0.0) == -math.inf


def test_sequential_test_decides_both_ways_on_simulated_pairs() -> None:
    rng = random.Random(3)
    strong = run_sprt(Sprt(0, 10), (rng.choice([0.25, 0.5, 0.75, 0.75, 1.0])
                                    for _ in range(100000)), PENTANOMIAL)
    assert strong.verdict == "H1" and strong.llr >= strong.test.upper
    even = run_sprt(Sprt(0, 10), (rng.choice([0.0, 0.25, 0.5, 0.75, 1.0])
                                  for _ in range(100000)), PENTANOMIAL)
    assert even.verdict == "H0" and even.llr <= even.test.lower
    # it stopped at the first crossing: one set fewer was still undecided
    again = run_sprt(Sprt(0, 10), [0.5] * (even.sets - 1), PENTANOMIAL)
    assert again.verdict is None or again.sets < even.sets


def test_mean_interval_and_los() -> None:
    m, hw = mean_interval([0.0, 1.0, 0.5, 0.5])
    # sd = sqrt(0.5 / 3) = 0.40825; se = 0.20412; 1.96 se = 0.40008
    assert m == 0.5 and hw == pytest.approx(0.40008, abs=1e-4)
    assert los(0.5, hw) == pytest.approx(0.5)
    # mean 0.55, se 0.025: z = 2, LOS = Phi(2) = 0.97725
    assert los(0.55, 1.959964 * 0.025) == pytest.approx(0.97725, abs=1e-5)
    assert mean_interval([]) == (None, None) and mean_interval([0.3]) == (0.3, None)


def test_summary_counts_pentanomial_faults_and_stops_at_the_verdict() -> None:
    sets = [SetSummary(i, 1.0 if i % 2 else 0.75, 0.5, 2, faults_new=int(i == 3))
            for i in range(400)]
    s = summarize(sets, Sprt(0, 10), 2)
    assert s.sprt is not None and s.verdict == s.sprt.verdict == "H1"
    assert s.sets + s.sets_after_verdict == 400 and s.sets < 400
    assert s.pentanomial is not None
    assert sum(s.pentanomial) == s.sets and s.pentanomial[0] == 0
    assert s.faulty_sets == 1 and s.faults == FaultCounts(new=1)
    assert s.elo is not None and s.elo_interval is not None
    assert s.elo_interval[0] < s.elo < s.elo_interval[1]
    fixed = summarize(sets, None, 2)
    assert fixed.sets == 400 and fixed.sprt is None and "sprt" not in fixed.to_json()
    assert fixed.score == pytest.approx(0.875) and fixed.score_diff == pytest.approx(0.75)


def test_summary_json_keeps_its_keys_in_order_and_has_no_infinity() -> None:
    """``referee match --json`` prints ``MatchSummary.to_json``: the keys (and their
    order) of the dict the summary was before it was typed, present under the same
    conditions; an Elo of +-inf (every set won) is null, as JSON has no infinity."""
    won = [SetSummary(i, 1.0, 1.0, 2) for i in range(3)]
    s = summarize(won, Sprt(0, 10), 2)
    assert s.elo == math.inf
    j = s.to_json()
    assert list(j) == ["seats", "sets", "games", "sets_after_verdict", "score", "score_ci",
                       "elo", "elo_interval", "score_diff", "score_diff_ci", "place_diff",
                       "place_diff_ci", "los", "scores", "pentanomial", "faulty_sets",
                       "faults", "sprt"]
    assert j["elo"] is None and j["elo_interval"] == [None, None]
    assert j["pentanomial"] == [0, 0, 0, 0, 3] and j["scores"] == "raw"
    assert j["faults"] == {"new": 0, "old": 0, "field": 0}
    sp = j["sprt"]
    assert isinstance(sp, dict) and list(sp) == ["elo0", "elo1", "alpha", "beta", "llr",
                                                 "lower", "upper", "verdict"]
    json.dumps(j, allow_nan=False)  # strict JSON
    # luck-adjusted at 4 seats, no test: raw_score beside the score, no pentanomial
    adj = summarize([SetSummary(i, 0.6 + 0.01 * i, 0.2, 8, raw=0.5) for i in range(4)],
                    None, 4)
    ja = adj.to_json()
    assert "pentanomial" not in ja and "sprt" not in ja and ja["scores"] == "adjusted"
    assert list(ja)[13:16] == ["scores", "raw_score", "raw_score_ci"]
    assert ja["raw_score"] == 0.5
    # no set yet: only the counts
    empty = summarize([], None, 2).to_json()
    assert "elo" not in empty and empty["score"] is None and empty["pentanomial"] == [0] * 5
