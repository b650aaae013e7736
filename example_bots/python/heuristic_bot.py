#!/usr/bin/env python3
"""A 3UP 3DOWN bot: the rule part of the referee's built-in HeuristicBot
(``decide_by_rule``), written against the protocol alone (the observation and the
legal decisions' texts).  The built-in adds an endgame search over the cards it
cannot see (``referee/bots/search.py``), which this port leaves out.

* Play the lowest number it can, with all its copies; a special card only when no
  number can be played, the plain Clear first (specials save a pick-up later).
* Take the optional draw before an extra action whenever it is offered.
* 3UP choice: lay the strongest three cards face up (Clears far above numbers), a
  pair of one number worth more than its two cards, but keep one special in hand
  when it was dealt two or more -- or, under ``choose_for_others``, give the weakest
  away.
* Otherwise turn a 3DOWN card, or pick up (when forced).
* ``four_of_a_colour``: swap a 3UP card for a stronger hand card, else keep.
"""

from __future__ import annotations

import sys
from typing import Any

import updown_bot
from updown_bot import SPECIAL_KINDS, Move, card_kind, card_value, read_move

PAIR_BONUS = 8  # a pair of one number among the 3UP cards
KEEP_ONE_SPECIAL = 40  # the cost of laying every dealt special face up


class HeuristicBot(updown_bot.Bot):
    name = "heuristic"
    version = "1.0"

    def decide(self, observation: dict[str, Any], legal: list[str]) -> int | str:
        moves = [read_move(t) for t in legal]
        first = moves[0].action
        if first == "3up":
            return self.choose_up(observation, moves)
        if first in ("swap", "keep"):
            return self.swap(moves)
        for m in moves:
            if m.action == "draw":
                return m.text  # the optional draw (last in the list) or the forced one
        plays = [m for m in moves if m.action == "play"]
        numbered = [m for m in plays if not m.special]
        if numbered:
            low = min(m.number for m in numbered)
            return max((m for m in numbered if m.number == low), key=lambda m: m.count).text
        if plays:
            return min(plays, key=lambda m: m.number).text  # C before C+1 before C+2
        for m in moves:
            if m.action == "down":
                return m.text
        return 0  # pickup (or decline, when that is all there is)

    @staticmethod
    def choose_up(observation: dict[str, Any], moves: list[Move]) -> str:
        give_away = "choose_for_others" in observation.get("variants", ())
        dealt_specials = sum(1 for c in observation.get("dealt", ())
                             if card_kind(c) in SPECIAL_KINDS)

        def score(m: Move) -> int:
            values = [card_value(c) for c in m.cards]
            s = sum(v + 30 if v > 10 else v for v in values)
            numbers = [v for v in values if v <= 10]
            s += PAIR_BONUS * (len(numbers) - len(set(numbers)))
            if dealt_specials >= 2 and len(values) - len(numbers) == dealt_specials:
                s -= KEEP_ONE_SPECIAL
            return -s if give_away else s

        return max(moves, key=score).text

    @staticmethod
    def swap(moves: list[Move]) -> str:
        best, gain = "keep", 0
        for m in moves:
            if m.action == "swap":
                up_card, hand_card = m.cards
                g = strength(hand_card) - strength(up_card)
                if g > gain:
                    best, gain = m.text, g
        return best


def strength(card: str) -> int:
    """How good a card is to keep for later: specials far above every number."""
    v = card_value(card)
    return v + 20 if v > 10 else v


if __name__ == "__main__":
    sys.exit(updown_bot.run(HeuristicBot()))
