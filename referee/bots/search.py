"""Search over hidden information for the built-in ``heuristic`` bot.

Owns: scoring each legal decision by playing games the seat *could* be in to their
end with a fast rule policy for every seat (perfect-information Monte Carlo), the
cards it cannot see dealt at random from the bot's own seeded generator.

The engine builds those games (determinization): ``view_of`` (``game/view.py``)
reads from the observation alone (RULES §6) everything but where the cards the seat
cannot see lie -- the deck less its own hand, every 3UP card, the discard pile and
the cleared cards -- and ``Game.determinize`` deals one order of them into the
places the seat cannot see into: the other seats' hands, every 3DOWN slot (its own
too) and the draw pile, in the numbers the observation gives.  Nothing of the real
game's state is read, so two games that differ only in cards the seat cannot see
give the same decision at the same seed (``tests/builtin_bots/test_heuristic_search.py``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from ..game.cards import CLEAR, Card
from ..game.decisions import DOWN, DRAW, KEEP, PLAY, Decision
from ..game.state import Game
from ..game.view import View, view_of

#: Rollouts are cut off after this many decisions (a game cycling through pick-ups),
#: and scored 0.
ROLLOUT_CAP = 150
#: A search stops drawing deals once its rollouts have made this many decisions
#: (counted, not timed, so that the decision depends on the seed alone): it bounds
#: the worst case, a pick-up cycle with full hands, to some tens of milliseconds.
STEP_BUDGET = 2000


def rollout_policy(legal: Sequence[Decision]) -> Decision:
    """The heuristic's rule for plays, on the legal list alone: the optional draw
    when offered, else the lowest number with all its copies, else the plainest
    special card, else a 3DOWN card, else what is left (a pick-up, or keep)."""
    best: Decision | None = None
    special: Decision | None = None
    other: Decision | None = None
    for d in legal:
        code = d.code
        if code == PLAY:
            k = d.kind
            if k < CLEAR:
                if best is None or k < best.kind or (k == best.kind and d.count > best.count):
                    best = d
            elif special is None or k < special.kind:
                special = d
        elif code == DRAW:
            return d
        elif code in (DOWN, KEEP):
            if other is None:
                other = d
    if best is not None:
        return best
    if special is not None:
        return special
    return other if other is not None else legal[0]


def game_of(view: View, order: Sequence[Card]) -> Game:
    """The search's game: ``view`` with the hidden cards dealt in ``order``.  Its aim
    is to finish next of the seats still playing: the simulated game ends there
    (whatever the variants say), which also keeps it short; and it is cut off
    ``ROLLOUT_CAP`` turns on (a turn is one decision or more)."""
    return Game.determinize(view, order, play_out=False, turn_limit=view.turn + ROLLOUT_CAP)


def determinize(obs: dict[str, Any], legal: Sequence[Decision], rng: random.Random,
                known: Sequence[Sequence[str]] = ()) -> Game | None:
    """A game consistent with ``obs`` (the seat to move being ``obs["seat"]``), the
    hidden cards dealt at random from ``rng``; None when the observation does not
    fit a known deck."""
    view = view_of(obs, legal, known)
    if view is None:
        return None
    order = list(view.hidden)
    rng.shuffle(order)
    return game_of(view, order)


def rollout(game: Game, seat: int, place: int = 1) -> tuple[float, int]:
    """Play ``game`` to its end with ``rollout_policy`` for every seat: 1 if ``seat``
    takes ``place``, 0 otherwise (and 0 for a game cut off by ``ROLLOUT_CAP``); with
    the number of decisions made."""
    steps = 0
    while not game.over:
        if steps == ROLLOUT_CAP:
            return 0.0, steps
        s = game.to_move
        game.apply(s, rollout_policy(game.legal(s)))
        steps += 1
    result = game.result()
    assert result is not None
    if result.how == "turn_limit":
        return 0.0, steps
    return (1.0 if result.places[seat] == place else 0.0), steps


def best_decision(obs: dict[str, Any], legal: Sequence[Decision], rng: random.Random,
                  samples: int, default: Decision,
                  known: Sequence[Sequence[str]] = ()) -> Decision | None:
    """The legal decision that finishes next most often (of the seats still
    playing: first, when none has finished) over ``samples`` games consistent
    with ``obs`` (the same deals for every decision; fewer once ``STEP_BUDGET`` is
    spent), ties to ``default`` and then to the earliest listed; None when the
    observation fits no deck.  ``known``:
    by seat, cards known to be in that seat's hand (dealt to it in every sample)."""
    me: int = obs["seat"]
    # One candidate per way of playing (source, number, count): under
    # four_of_a_colour the plays naming their cards list every order of them.
    seen = {(default.code, default.src, default.kind, default.count)}
    candidates = [default]
    for d in legal:
        way = (d.code, d.src, d.kind, d.count)
        if way not in seen:
            seen.add(way)
            candidates.append(d)
    legal = candidates
    if len(legal) == 1:
        return default
    place = sum(1 for s in obs["seats"] if s["finished"] is not None) + 1
    view = view_of(obs, legal, known)
    if view is None:
        return None
    wins = [0.0] * len(legal)
    spent = 0
    for _ in range(samples):
        if spent > STEP_BUDGET:
            break
        order = list(view.hidden)
        rng.shuffle(order)
        for i, d in enumerate(legal):
            g = game_of(view, order)
            sim = next((x for x in g.legal(me) if x.text == d.text), None)
            if sim is None:
                return None  # not the game the seat is in (cannot happen): no search
            g.apply(me, sim)
            won, steps = rollout(g, me, place)
            wins[i] += won
            spent += steps
    best = max(range(len(legal)), key=lambda i: (wins[i], -i))
    return legal[best]

