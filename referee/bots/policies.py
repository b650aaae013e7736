"""Reference policies: uniformly random, lowest-card, and a sensible heuristic.

Owns the in-process bots.  They read only the observation and the legal list, so the
same logic can be (and is, in ``example_bots/``) written as an external bot.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from ..game.cards import CLEAR, KIND, KIND_POINTS
from ..game.decisions import CHOOSE_UP, DOWN, DRAW, KEEP, PICKUP, PLAY, SWAP, Decision


class Bot:
    """An in-process bot: ``decide(observation, legal) -> one of legal``."""

    name = "bot"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def new_game(self, seed: int) -> None:
        """Reseed for a new game, so a bot's play depends only on the game's seed."""
        self.rng = random.Random(seed)

    def decide(self, obs: dict[str, Any], legal: Sequence[Decision]) -> Decision:
        raise NotImplementedError


class RandomBot(Bot):
    """Uniformly random among the legal decisions."""

    name = "random"

    def decide(self, obs: dict[str, Any], legal: Sequence[Decision]) -> Decision:
        return legal[int(self.rng.random() * len(legal))]


def _value(card: int) -> int:
    """How strong a card is to keep for later: specials above every number."""
    k = KIND[card]
    return 20 + k if k >= CLEAR else k


class LowestBot(Bot):
    """A plain baseline: plays the lowest legal number with all its copies, a special
    card only when no number can be played (the plain Clear first), lays its three
    highest cards face up, and otherwise takes the first listed decision.  It is
    deterministic, and close in strength to the heuristic, which differs from it in
    spending a Clear on a big pile and in preferring the Clears that grant actions:
    the pair ``bench/fairness.py`` compares."""

    name = "lowest"

    def decide(self, obs: dict[str, Any], legal: Sequence[Decision]) -> Decision:
        first = legal[0]
        if first.code == CHOOSE_UP:
            return max(legal, key=lambda d: sorted((_value(c) for c in d.cards), reverse=True))
        plays = [d for d in legal if d.code == PLAY]
        if plays:
            numbered = [d for d in plays if d.kind < CLEAR]
            if numbered:
                low = min(d.kind for d in numbered)
                return max((d for d in numbered if d.kind == low), key=lambda d: d.count)
            return min(plays, key=lambda d: d.kind)
        for code in (DOWN, DRAW, KEEP, PICKUP):
            for d in legal:
                if d.code == code:
                    return d
        return first


class HeuristicBot(Bot):
    """A sensible player (issue 2): plays the lowest legal number with all its copies,
    keeps Clear cards for big piles or for when it is stuck, and lays its high cards
    and Clears face up."""

    name = "heuristic"
    BIG_PILE = 6

    def decide(self, obs: dict[str, Any], legal: Sequence[Decision]) -> Decision:
        first = legal[0]
        if first.code == CHOOSE_UP:
            return self._choose_up(obs, legal)
        if first.code == SWAP or first.code == KEEP:
            return self._swap(legal)
        plays = [d for d in legal if d.code == PLAY]
        numbered = [d for d in plays if d.kind < CLEAR]
        specials = [d for d in plays if d.kind >= CLEAR]
        if numbered:
            low = min(d.kind for d in numbered)
            best = max((d for d in numbered if d.kind == low), key=lambda d: d.count)
            # A big pile is worth a Clear rather than climbing to a high number.
            if specials and low >= 8 and len(obs["pile"]) >= self.BIG_PILE:
                return self._best_special(specials)
            return best
        if specials:
            return self._best_special(specials)
        for d in legal:
            if d.code == DOWN or d.code == DRAW:
                return d
        return first  # pickup

    @staticmethod
    def _best_special(specials: list[Decision]) -> Decision:
        # Extra actions shed more cards: C+2 before C+1 before C.
        return max(specials, key=lambda d: d.kind)

    @staticmethod
    def _choose_up(obs: dict[str, Any], legal: Sequence[Decision]) -> Decision:
        give_away = "choose_for_others" in obs["variants"]

        def score(d: Decision) -> int:
            s = sum(_value(c) for c in d.cards)
            return -s if give_away else s

        return max(legal, key=score)

    @staticmethod
    def _swap(legal: Sequence[Decision]) -> Decision:
        best: Decision | None = None
        gain = 0
        for d in legal:
            if d.code == SWAP:
                g = _value(d.cards[1]) - _value(d.cards[0])
                if g > gain:
                    best, gain = d, g
        return best if best is not None else next(d for d in legal if d.code == KEEP)


BUILTIN_BOTS: dict[str, type[Bot]] = {
    "random": RandomBot,
    "lowest": LowestBot,
    "heuristic": HeuristicBot,
}


def make_bot(name: str, seed: int = 0) -> Bot:
    try:
        return BUILTIN_BOTS[name](seed)
    except KeyError:
        raise ValueError(
            f"unknown built-in bot {name!r}: choose from {', '.join(BUILTIN_BOTS)}"
        ) from None


_ = KIND_POINTS  # re-exported for bots that score hands
