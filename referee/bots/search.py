"""Search over hidden information for the built-in ``heuristic`` bot.

Owns: rebuilding a game the seat *could* be in from its observation alone
(determinization: the cards it cannot see dealt at random, from the bot's own seeded
generator), and scoring each legal decision by playing such games to their end with
a fast rule policy for every seat (perfect-information Monte Carlo).

What a seat may know is its observation (RULES §6).  The cards it cannot see are the
deck less what the observation shows: its own hand, every 3UP card, the discard pile
and the cleared cards.  Those, and only those, are shuffled into the places the seat
cannot see into -- the other seats' hands, every 3DOWN slot (its own too) and the
draw pile -- in the numbers the observation gives.  Nothing of the real game's state
is read, so two games that differ only in cards the seat cannot see give the same
decision at the same seed (``tests/test_heuristic_search.py``).

The deck itself is not in the observation; its size is (every card is somewhere the
observation counts), and the size tells the deck: ``12 * colours`` cards for the
standard deck, ``24 * colours + 2`` for the alternative one (RULES §1).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from ..game.cards import CLEAR, COLOUR, KIND, TEXT, Card, build_deck
from ..game.config import GameConfig
from ..game.decisions import DOWN, DRAW, KEEP, PLAY, Decision
from ..game.phases import PLAYING
from ..game.state import Game

#: Rollouts are cut off after this many decisions (a game cycling through pick-ups),
#: and scored 0.
ROLLOUT_CAP = 150
#: A search stops drawing deals once its rollouts have made this many decisions
#: (counted, not timed, so that the decision depends on the seed alone): it bounds
#: the worst case, a pick-up cycle with full hands, to some tens of milliseconds.
STEP_BUDGET = 2000

_CONFIGS: dict[tuple[int, tuple[str, ...], str, int], GameConfig] = {}


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


def _deck_of(size: int) -> tuple[str, int] | None:
    """The deck (name, colours) of ``size`` cards, if there is one."""
    if size % 12 == 0 and 1 <= size // 12 <= 7:
        return "standard", size // 12
    if size % 24 == 2 and 1 <= size // 24 <= 7:
        return "alternative", size // 24
    return None


class Deal:
    """What a seat's observation fixes of the game it is in, worked out once per
    search: the cards it sees, where they are, and the pool of the cards it cannot
    see (``hidden``, in a fixed order).  ``game(order)`` deals an order of the pool
    into the places the seat cannot see into: each other seat's hand (after the
    cards known to be there), the 3DOWN slots, then the draw pile."""

    __slots__ = ("obs", "config", "n", "me", "hand", "ups", "pile", "out", "held",
                 "hidden", "draw_ok", "finished", "top", "colour_run", "run_colour")

    def __init__(self, obs: dict[str, Any], legal: Sequence[Decision],
                 config: GameConfig, free: dict[str, list[Card]],
                 known: Sequence[Sequence[str]]) -> None:
        n = self.n = obs["players"]
        seats = obs["seats"]
        me = self.me = obs["seat"]
        self.obs = obs
        self.config = config

        def take(texts: Sequence[str]) -> list[Card]:
            out = []
            for t in texts:
                ids = free.get(t)
                if not ids:  # more copies seen than the deck holds: not this deck
                    raise LookupError(t)
                out.append(ids.pop())
            return out

        self.hand = take(obs["hand"])
        self.ups = [take(s["up"]) for s in seats]  # in the observation's order
        self.pile = take(obs["pile"])
        self.out = take(obs["cleared"])
        # Cards the seat saw go into another seat's hand (a pick-up) and not leave it.
        self.held: list[list[Card]] = [[] for _ in range(n)]
        for s, texts in enumerate(known):
            if s != me and texts and s < n:
                self.held[s] = take(list(texts)[: seats[s]["hand"]])
        hidden = [c for ids in free.values() for c in ids]
        hidden.sort()  # the dict's order depends on what was seen; the deal must not
        self.hidden = hidden
        self.draw_ok = any(d.code == DRAW for d in legal) or "draw_once_per_clear" not in (
            config.variants)
        places = [(s["finished"], s["seat"]) for s in seats if s["finished"] is not None]
        self.finished = [s for _, s in sorted(places)]
        pile = self.pile
        self.top = KIND[pile[-1]] if pile else 0
        self.colour_run, self.run_colour = 0, -1
        for c in reversed(pile):
            if self.colour_run and COLOUR[c] != self.run_colour:
                break
            self.run_colour = COLOUR[c]
            self.colour_run += 1

    def game(self, order: Sequence[Card]) -> Game:
        """The game with the hidden cards dealt in ``order`` (a permutation of
        ``hidden``), the seat to move."""
        obs = self.obs
        seats = obs["seats"]
        n = self.n
        me = self.me
        it = iter(order)
        g = Game.__new__(Game)
        g.set_rules(self.config)
        g.n = n
        g.seed = 0
        g.rng = _UNUSED  # a Game draws from it only when it is made (the shuffle)
        g.deck = ()
        g.first_player = 0
        # The search's aim is to finish next of the seats still playing: the simulated
        # game ends there (whatever the variants say), which also keeps it short.
        g.play_out = False
        g.turn_limit = obs["turn"] + ROLLOUT_CAP  # a turn is one decision or more
        g.hands = [{} for _ in range(n)]
        g.hand_count = [0] * n
        g.down = []
        g.down_count = []
        held = self.held
        for s in range(n):
            info = seats[s]
            g._take(s, self.hand if s == me else
                    held[s] + [next(it) for _ in range(info["hand"] - len(held[s]))])
            slots = info["down"]
            g.down.append([next(it) if i in slots else None for i in range(3)])
            g.down_count.append(len(slots))
        g.up = [list(u) for u in self.ups]
        g.draw_pile = list(it)
        g.dealt = [()] * n
        g.choices = [None] * n
        g.pile = list(self.pile)
        g.top = self.top
        g.run = obs["pile_run"]
        g.colour_run, g.run_colour = self.colour_run, self.run_colour
        g.out = list(self.out)
        g.phase = PLAYING
        g.to_move = me
        g.direction = obs["direction"]
        g.turn = obs["turn"]
        g.pending = obs["pending_extra"]
        g.in_extra = obs["extra_action"]
        g.drawn = obs["drawn"]
        g.draw_ok = self.draw_ok
        g.granted = False
        g.finished = list(self.finished)
        g.place = [s["finished"] for s in seats]
        g.perm = tuple(obs["piles"]) if "piles" in obs else None
        g.events = []
        g._legal = None
        g._result = None
        g._setup_cache = [None] * n
        g._cleared = None
        return g


_UNUSED = random.Random(0)


def deal_of(obs: dict[str, Any], legal: Sequence[Decision],
            known: Sequence[Sequence[str]] = ()) -> Deal | None:
    """The ``Deal`` of ``obs`` (the seat to move being ``obs["seat"]``); None when the
    observation fits no known deck (then the caller does not search)."""
    n: int = obs["players"]
    seats = obs["seats"]
    size = (sum(s["hand"] + len(s["up"]) + len(s["down"]) for s in seats)
            + len(obs["pile"]) + obs["draw_pile"] + len(obs["cleared"]))
    deck = _deck_of(size)
    if deck is None:
        return None
    variants = tuple(obs["variants"])
    key = (n, variants, deck[0], deck[1])
    config = _CONFIGS.get(key)
    if config is None:
        config = _CONFIGS[key] = GameConfig(players=n, variants=frozenset(variants),
                                            deck=deck[0], colours=deck[1])
    # Card ids by text: a deck may hold two identical cards, whose ids differ only
    # in a copy number nobody can tell apart; any free id of the text will do.
    template = _FREE.get(deck)
    if template is None:
        template = _FREE[deck] = {}
        for c in build_deck(deck[0], deck[1]):
            template.setdefault(TEXT[c], []).append(c)
    free = {t: list(ids) for t, ids in template.items()}
    try:
        return Deal(obs, legal, config, free, known)
    except LookupError:
        return None


_FREE: dict[tuple[str, int], dict[str, list[Card]]] = {}


def determinize(obs: dict[str, Any], legal: Sequence[Decision], rng: random.Random,
                known: Sequence[Sequence[str]] = ()) -> Game | None:
    """A game consistent with ``obs`` (the seat to move being ``obs["seat"]``), the
    hidden cards dealt at random from ``rng``; None when the observation does not
    fit a known deck."""
    deal = deal_of(obs, legal, known)
    if deal is None:
        return None
    order = list(deal.hidden)
    rng.shuffle(order)
    return deal.game(order)


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
    deal = deal_of(obs, legal, known)
    if deal is None:
        return None
    wins = [0.0] * len(legal)
    spent = 0
    for _ in range(samples):
        if spent > STEP_BUDGET:
            break
        order = list(deal.hidden)
        rng.shuffle(order)
        for i, d in enumerate(legal):
            g = deal.game(order)
            sim = next((x for x in g.legal(me) if x.text == d.text), None)
            if sim is None:
                return None  # not the game the seat is in (cannot happen): no search
            g.apply(me, sim)
            won, steps = rollout(g, me, place)
            wins[i] += won
            spent += steps
    best = max(range(len(legal)), key=lambda i: (wins[i], -i))
    return legal[best]

