#!/usr/bin/env python3
"""A sensible 3UP 3DOWN bot: the referee's built-in HeuristicBot, written against the
protocol alone (the observation and the legal decisions' texts).

* 3UP choice: lay the three strongest cards face up (Clears and high numbers), keep
  the low ones in hand -- or, under ``choose_for_others``, give the weakest away.
* Play the lowest number it can, with all its copies; keep Clears for a big pile
  (six or more cards) that it could only beat with an 8 or more, or for when it is
  stuck, and then prefer the Clear granting the most extra actions.
* Otherwise turn a 3DOWN card, take the optional draw, or pick up (when forced).
* ``four_of_a_colour``: swap a 3UP card for a stronger hand card, else keep.
"""

from __future__ import annotations

import sys
from typing import Any

import updown_bot
from updown_bot import Move, card_value, read_move

BIG_PILE = 6


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
        plays = [m for m in moves if m.action == "play"]
        numbered = [m for m in plays if not m.special]
        specials = [m for m in plays if m.special]
        if numbered:
            low = min(m.number for m in numbered)
            best = max((m for m in numbered if m.number == low), key=lambda m: m.count)
            # A big pile is worth a Clear rather than climbing to a high number.
            if specials and low >= 8 and len(observation.get("pile", ())) >= BIG_PILE:
                return best_special(specials).text
            return best.text
        if specials:
            return best_special(specials).text
        for m in moves:
            if m.action in ("down", "draw"):
                return m.text
        return 0  # pickup, the only decision left

    @staticmethod
    def choose_up(observation: dict[str, Any], moves: list[Move]) -> str:
        give_away = "choose_for_others" in observation.get("variants", ())

        def score(m: Move) -> int:
            s = sum(strength(c) for c in m.cards)
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


def best_special(specials: list[Move]) -> Move:
    # Extra actions shed more cards: C+2 before C+1 before C.
    return max(specials, key=lambda m: m.number)


if __name__ == "__main__":
    sys.exit(updown_bot.run(HeuristicBot()))
