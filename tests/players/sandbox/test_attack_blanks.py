"""The bot attacker's F4: blank lines are ignored and are no strays, so a sandboxed
stdio bot writing nothing but newlines on its turn made the referee read them one
line at a time for as long as it liked, with no fault (0.42 s of the referee's CPU
a second of flood)."""

from __future__ import annotations

import pytest

from referee.bots import make_bot
from referee.play.runner import FaultPolicy, InProcessPlayer
from tests.players.sandbox.conftest import Attack

pytestmark = pytest.mark.slow


def test_a_flood_of_blank_lines_is_a_fault_that_names_the_bot(attack: Attack) -> None:
    """Before each answer the bot writes 1 MB of blank lines: more than a message's
    limit of them between two messages is a 'malformed' fault naming the bot and what
    it sent, each flood a strike, and with three strikes the bot forfeits; the game is
    played out.  Before the fix the bot was never faulted and won on its answers."""
    blanks = attack.bot("attack_blanks.py", name="blanks")
    rec = attack.play([blanks, InProcessPlayer(make_bot("lowest"))], seed=5,
                      policy=FaultPolicy("substitute", 3))
    assert rec.result is not None and list(rec.result.forfeits) == [0], rec.faults
    mine = [f for f in rec.faults if f.seat == 0]
    assert [f.kind for f in mine] == ["malformed"] * len(mine) and len(mine) >= 3, mine
    assert mine[0].detail.startswith(
        "blanks replied to request 1 with "), mine[0].detail
    assert ("bytes of blank lines in a row: blank lines are ignored, but at most 8192 "
            "bytes of them between two messages") in mine[0].detail, mine[0].detail
    assert mine[-1].action == "forfeit"
    assert all(f.seat == 0 for f in rec.faults)  # nobody else is blamed
