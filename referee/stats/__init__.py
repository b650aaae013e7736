"""Statistics for deciding between bots: sequential tests on duplicate sets
(``sprt``), balanced seat orders (``designs``), batch ratings (``ratings``) and
where an adaptive league plays next (``adaptive``).

Pure: no I/O, no clock, no global randomness (a bootstrap takes its seed from the
data it is given).  Imports nothing of the referee but itself, so that the
tournament layer, the benchmarks and the tests can all use it.
"""

from __future__ import annotations

from .designs import williams
from .ratings import BatchRatings, RatedGame, fit_plackett_luce, rate
from .sprt import (
    SetSummary,
    Sprt,
    SprtState,
    elo_of_score,
    gsprt_llr,
    los,
    mean_interval,
    score_of_elo,
)

__all__ = [
    "BatchRatings",
    "RatedGame",
    "SetSummary",
    "Sprt",
    "SprtState",
    "elo_of_score",
    "fit_plackett_luce",
    "gsprt_llr",
    "los",
    "mean_interval",
    "rate",
    "score_of_elo",
    "williams",
]
