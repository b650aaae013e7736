"""A forfeit never pays (RULES §5.4; issue 21, item 7): a bot that sends an illegal
decision at its first request under ``--faults forfeit`` does worse than if it had
played on (as a bot that always takes index 0, which is what the referee plays for
it), and worse than finishing last with every card it held; no other seat does
worse than in the game played out against that index-0 bot.  Under every scoring:
places (the default ``winner`` end, ``play_out``) and points (``match_scoring``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from referee.bots import BUILTIN_BOTS, make_bot
from referee.game import Decision, GameConfig
from referee.play.replay import parse_record, verify
from referee.play.runner import FaultPolicy, GameRecord, InProcessPlayer, run_game


class Forfeits:
    """An illegal decision at its first request: with ``--faults forfeit``, a forfeit."""

    name = "forfeits"

    def new_game(self, seed: int) -> None:
        pass

    def decide(self, obs: dict[str, Any], legal: Sequence[Decision]) -> str:
        return "play hand 99x9"


class IndexZero:
    """Plays on: always the first legal decision."""

    name = "index0"

    def new_game(self, seed: int) -> None:
        pass

    def decide(self, obs: dict[str, Any], legal: Sequence[Decision]) -> Decision:
        return legal[0]


VARIANTS = (frozenset(), frozenset({"play_out"}), frozenset({"match_scoring"}),
            frozenset({"match_scoring", "play_out"}))


def game(first: Any, builtin: str, n: int, seed: int, variants: frozenset[str]) -> GameRecord:
    players = [InProcessPlayer(first, "x"),
               *(InProcessPlayer(make_bot(builtin, seed + s), f"{builtin}{s}")
                 for s in range(1, n))]
    return run_game(GameConfig(players=n, variants=variants), seed, players,
                    policy=FaultPolicy("forfeit"))


CASES = [pytest.param(b, n, marks=[pytest.mark.slow] if b == "heuristic" and n > 3 else [])
         for b in sorted(BUILTIN_BOTS) for n in range(2, 7)]


@pytest.mark.slow
@pytest.mark.parametrize(("builtin", "n"), CASES)
def test_forfeiting_never_beats_playing_on(builtin: str, n: int) -> None:
    totals_forfeit = [0] * n
    totals_on = [0] * n
    for seed in range(1 if builtin == "heuristic" else 3):
        for variants in VARIANTS:
            f = game(Forfeits(), builtin, n, 100 * n + seed, variants)
            on = game(IndexZero(), builtin, n, 100 * n + seed, variants)
            rf, ro = f.ended, on.ended
            assert rf.forfeits == (0,) and ro.forfeits == ()
            held = rf.faults[0].held
            assert held is not None
            # the forfeiter: last, and more points than playing on or than all it held
            assert rf.places[0] == n >= ro.places[0]
            assert rf.points[0] > ro.points[0]
            assert rf.points[0] > held
            assert rf.points[0] > max(rf.points[1:])
            # everybody else: no worse than against the bot that played on
            for s in range(1, n):
                assert rf.places[s] <= ro.places[s], (s, rf, ro)
                assert rf.points[s] <= ro.points[s], (s, rf, ro)
            for s in range(n):
                totals_forfeit[s] += rf.points[s]
                totals_on[s] += ro.points[s]
            assert verify(parse_record(f.to_lines())) == (True, "")
    # a match scored in points: forfeiting every game loses more than playing on
    assert totals_forfeit[0] > totals_on[0]
    assert all(totals_forfeit[s] <= totals_on[s] for s in range(1, n))
