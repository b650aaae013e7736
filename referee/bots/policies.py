"""Reference policies: uniformly random, lowest-card, and a sensible heuristic.

Owns the in-process bots.  They read only what an external bot is sent: the
observation, the legal list and (``observe``) the seat's events, so the same logic can
be (and, for the heuristic's rule part, is, in ``example_bots/``) written as an
external bot.  The heuristic's endgame search is in ``search.py``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from ..game.cards import CLEAR, KIND, KIND_POINTS, TEXT
from ..game.decisions import CHOOSE_UP, DOWN, DRAW, HAND, KEEP, PICKUP, PLAY, SWAP, Decision
from .search import best_decision


class Bot:
    """An in-process bot: ``decide(observation, legal) -> one of legal``."""

    name = "bot"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def new_game(self, seed: int) -> None:
        """Reseed for a new game, so a bot's play depends only on the game's seed."""
        self.rng = random.Random(seed)

    def observe(self, events: Sequence[tuple[Any, ...]]) -> None:
        """The seat's events since its previous decision (filtered for the seat, RULES
        §6), given before ``decide``.  Most built-ins ignore them."""

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
    """The plain baseline: plays the lowest legal number with all its copies, a
    special card only when no number can be played (the plain Clear first), lays its
    three highest cards face up, and otherwise takes the first listed decision.  It
    is deterministic, and the yardstick of the heuristic (``bench/bots.py``)."""

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
    """The strongest built-in bot (``bench/bots.py`` measures it against ``lowest``).
    It plays like ``lowest`` -- the lowest legal number with all its copies, a special
    card only when no number can be played, the plain Clear first, since specials are
    what saves a seat from picking up later -- and differs where measurement showed
    it pays:

    * it takes the optional draw before an extra action whenever it is offered (a
      wider choice for the action, and the end-of-turn refill draws less);
    * it lays face up the strongest three cards counting a pair of one number as
      worth more than its two cards (a pair leaves the 3UP cards in one action),
      and keeps one special card in its hand when it was dealt two or more (it
      answers a high pile while the hand is played);
    * ``choose_for_others``: it gives the weakest cards away; ``four_of_a_colour``:
      it swaps a 3UP card for a stronger hand card, else keeps;
    * in the endgame -- the draw pile empty and a seat still playing down to
      ``SEARCH_CARDS`` cards or fewer -- it searches: ``SAMPLES`` deals of the cards
      it cannot see (``HEADS_UP_SAMPLES`` at 2 seats), consistent with what it has
      seen (``search.py``), each played
      to the end after each legal decision by the rule above for every seat; it
      takes the decision that finishes first most often (of the seats still
      playing; its rule's choice on a tie).  The cards it saw go into a hand
      (pick-ups) are remembered from its events (``observe``), and stay in that
      hand until it sees them played.  Its only randomness is its seeded
      generator, and the search's size is counted in simulated decisions, not
      timed (``search.STEP_BUDGET``), so that a seed gives one game.

    ``decide`` without the search is ``decide_by_rule``: the rule part, which
    ``example_bots/python/heuristic_bot.py`` ports to the protocol."""

    name = "heuristic"
    PAIR_BONUS = 8  # a pair of one number among the 3UP cards
    KEEP_ONE_SPECIAL = 40  # the cost of laying every dealt special face up
    SEARCH_CARDS = 6  # search once a seat still playing holds this many cards or fewer
    SAMPLES = 16  # deals of the hidden cards per searched decision, 3 seats or more
    HEADS_UP_SAMPLES = 8  # at 2 seats: less is hidden (62 % against lowest with 8)

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.known: list[list[str]] = []

    def new_game(self, seed: int) -> None:
        super().new_game(seed)
        self.known = []

    def observe(self, events: Sequence[tuple[Any, ...]]) -> None:
        """Remember the cards seen to go into each seat's hand, and forget those seen
        to leave it (a seat's own draws are private: filtered out for the others)."""
        known = self.known
        for e in events:
            kind = e[0]
            if kind not in ("pickup", "fail", "play", "swap"):
                continue
            seat = e[1]
            while len(known) <= seat:
                known.append([])
            mine = known[seat]
            if kind == "pickup":
                mine += [TEXT[c] for c in e[2]]
            elif kind == "fail":
                mine += [TEXT[c] for c in e[4]]  # the failed card itself is private
            elif kind == "play":
                if e[2] == HAND:
                    for c in e[3]:
                        if TEXT[c] in mine:
                            mine.remove(TEXT[c])
            else:  # swap: the 3UP card into the hand, the hand card onto the table
                if TEXT[e[3]] in mine:
                    mine.remove(TEXT[e[3]])
                mine.append(TEXT[e[2]])

    def decide(self, obs: dict[str, Any], legal: Sequence[Decision]) -> Decision:
        return self.decide_with(obs, legal, self.rng)

    def searches(self, obs: dict[str, Any], legal: Sequence[Decision]) -> bool:
        """Does ``decide`` search (and so use its random numbers) on this request?"""
        return (obs["draw_pile"] == 0 and obs["phase"] == "play" and len(legal) > 1
                and legal[0].code != CHOOSE_UP and any(d.code != DOWN for d in legal)
                and min(s["hand"] + len(s["up"]) + len(s["down"]) for s in obs["seats"]
                        if s["finished"] is None) <= self.SEARCH_CARDS)

    def decide_with(self, obs: dict[str, Any], legal: Sequence[Decision],
                    rng: random.Random) -> Decision:
        """``decide``, its random numbers drawn from ``rng``: the bot's own, or (the
        luck-adjusted scores, which sample its choices) another generator.  The bot's
        state (the cards it remembers) is read, not changed."""
        choice = self.decide_by_rule(obs, legal)
        if self.searches(obs, legal):
            samples = self.HEADS_UP_SAMPLES if obs["players"] == 2 else self.SAMPLES
            found = best_decision(obs, legal, rng, samples, choice, self.known)
            if found is not None:
                return found
        return choice

    def decide_by_rule(self, obs: dict[str, Any], legal: Sequence[Decision]) -> Decision:
        first = legal[0]
        if first.code == CHOOSE_UP:
            return self._choose_up(obs, legal)
        if first.code == SWAP or first.code == KEEP:
            return self._swap(legal)
        for d in legal:
            if d.code == DRAW:
                return d  # the optional draw (last in the list) or the forced one
        plays = [d for d in legal if d.code == PLAY]
        numbered = [d for d in plays if d.kind < CLEAR]
        if numbered:
            low = min(d.kind for d in numbered)
            return max((d for d in numbered if d.kind == low), key=lambda d: d.count)
        if plays:
            return min(plays, key=lambda d: d.kind)  # C before C+1 before C+2
        for d in legal:
            if d.code == DOWN:
                return d
        return first  # pickup (or decline, when that is all there is)

    @classmethod
    def _choose_up(cls, obs: dict[str, Any], legal: Sequence[Decision]) -> Decision:
        give_away = "choose_for_others" in obs["variants"]
        dealt_specials = sum(1 for c in obs.get("dealt", ()) if c.startswith("C"))

        def score(d: Decision) -> int:
            kinds = [KIND[c] for c in d.cards]
            s = sum(_up_value(k) for k in kinds)
            numbers = [k for k in kinds if k < CLEAR]
            s += cls.PAIR_BONUS * (len(numbers) - len(set(numbers)))
            specials = len(kinds) - len(numbers)
            if dealt_specials >= 2 and specials == dealt_specials:
                s -= cls.KEEP_ONE_SPECIAL
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


def _up_value(kind: int) -> int:
    """A card's worth among the 3UP cards: its number, specials far above."""
    return 30 + kind if kind >= CLEAR else kind


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
